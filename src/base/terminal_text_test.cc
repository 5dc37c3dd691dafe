#include "base/terminal_text.h"

#include <gtest/gtest.h>

namespace chokepoint {
namespace {

TEST(EscapeControls, LeavesPrintableUtf8Alone) {
  const std::string s = "ampere_bf16_s16816gemm · 12.5 GB/s — µs █ 日本 🔴 void f<float>(int*)";
  EXPECT_EQ(escape_controls(s), s);
  EXPECT_FALSE(has_controls(s));
  EXPECT_EQ(escape_controls(""), "");
}

TEST(EscapeControls, EscapesC0AndDel) {
  EXPECT_EQ(escape_controls("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
  EXPECT_EQ(escape_controls("\x1b]52;c;aGk=\x07"), "\\x1b]52;c;aGk=\\x07");
  EXPECT_EQ(escape_controls("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(escape_controls("line\nnext\ttab\r"), "line\\x0anext\\x09tab\\x0d");
  EXPECT_EQ(escape_controls(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(escape_controls("del\x7f"), "del\\x7f");
  EXPECT_TRUE(has_controls("\n"));
}

TEST(EscapeControls, EscapesC1AsCodePointsAndAsRawBytes) {
  EXPECT_EQ(escape_controls("csi\xc2\x9b"
                            "2J"),
            "csi\\u009b2J");                                         // U+009B encoded
  EXPECT_EQ(escape_controls("\xc2\x80\xc2\x9f"), "\\u0080\\u009f");  // both ends of C1
  EXPECT_EQ(escape_controls("raw\x9b"
                            "2J"),
            "raw\\x9b2J");                             // a lone byte: invalid UTF-8
  EXPECT_EQ(escape_controls("\xc2\xa0"), "\xc2\xa0");  // U+00A0 is printable
}

// Issue 13: a kernel named "evil\u202e)x(lanigiro" shows as "evil" + its tail reversed
// ("Trojan Source", CVE-2021-42574); every bidi and line-breaking format character is escaped.
TEST(EscapeControls, EscapesBidiAndLineSeparators) {
  EXPECT_EQ(escape_controls("gemm\xe2\x80\xae"
                            "lanigiro"),
            "gemm\\u202elanigiro");                                                         // U+202E RLO
  EXPECT_EQ(escape_controls("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");               // LRI .. PDI
  EXPECT_EQ(escape_controls("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c"), "\\u200e\\u200f\\u061c");  // marks
  EXPECT_EQ(escape_controls("a\xe2\x80\xa8"
                            "b"),
            "a\\u2028b");                                                                // line separator
  EXPECT_EQ(escape_controls("\xe2\x80\x94 \xe2\x80\xa2"), "\xe2\x80\x94 \xe2\x80\xa2");  // em dash, bullet kept
  EXPECT_TRUE(has_controls("x\xe2\x80\xae"));
}

// Issue 13: the live panel cut its lines by bytes, and "GPU0 · util" cut inside the
// two-byte "·" printed half a character.
TEST(CutToColumns, NeverSplitsACharacter) {
  EXPECT_EQ(cut_to_columns("GPU0 \xc2\xb7 util", 6), "GPU0 \xc2\xb7");
  EXPECT_EQ(cut_to_columns("GPU0 \xc2\xb7 util", 5), "GPU0 ");
  EXPECT_EQ(cut_to_columns("\xe2\x96\x88\xe2\x96\x88\xe2\x96\x88", 2), "\xe2\x96\x88\xe2\x96\x88");  // bar blocks
  EXPECT_EQ(cut_to_columns("\xe6\xbc\xa2\xe5\xad\x97", 3), "\xe6\xbc\xa2");  // CJK: two columns each
  EXPECT_EQ(cut_to_columns("short", 80), "short");
  EXPECT_EQ(display_columns("a\xc2\xb7\xe6\xbc\xa2"), 4u);
}

TEST(EscapeControls, EscapesInvalidUtf8ByteByByte) {
  EXPECT_EQ(escape_controls("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(escape_controls("\xc0\x9b"), "\\xc0\\x9b");                    // overlong ESC-like form
  EXPECT_EQ(escape_controls("\xe2\x82"), "\\xe2\\x82");                    // truncated
  EXPECT_EQ(escape_controls("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(escape_controls("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(escape_controls("ok\xe2\x82"
                            "x"),
            "ok\\xe2\\x82x");
}

TEST(EscapeControls, ResultHasNoControlByte) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  all += "\xc2\x85\xc2\x9b";
  const std::string out = escape_controls(all);
  EXPECT_FALSE(has_controls(out));
  for (unsigned char c : out) {
    EXPECT_TRUE(c >= 0x20 && c < 0x7f) << static_cast<int>(c);  // every input byte was ASCII or escaped
  }
}

}  // namespace
}  // namespace chokepoint
