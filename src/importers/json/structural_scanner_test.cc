#include "importers/json/structural_scanner.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace chokepoint::importers::json {
namespace {

// The scanners read up to 63 bytes past the data: keep them in the same allocation.
struct Padded {
  explicit Padded(std::string s) : len(s.size()), bytes(std::move(s)) { bytes.append(kScanPadding, 'x'); }
  const char* data() const { return bytes.data(); }
  size_t len;
  std::string bytes;
};

ScanResult container(const std::string& s, size_t begin = 0) {
  Padded p(s);
  ScanResult simd = find_container_end(p.data(), p.len, begin);
  ScanResult scalar = find_container_end_scalar(p.data(), p.len, begin);
  EXPECT_EQ(simd.kind, scalar.kind) << s;
  if (simd.kind != ScanResult::kNeedMore) {
    EXPECT_EQ(simd.pos, scalar.pos) << s;
  }
  return simd;
}

TEST(StructuralScanner, FindsTheMatchingBrace) {
  const std::string ev = R"({"name": "a}b{c]", "args": {"x": [1, {"y": "}"}]}})";
  ScanResult r = container(ev + ",\n  {\"next\": 1}");
  ASSERT_EQ(r.kind, ScanResult::kComplete);
  EXPECT_EQ(r.pos, ev.size());
}

TEST(StructuralScanner, EscapesAcrossBlockBoundaries) {
  // Put runs of backslashes before a quote at every offset around the 64-byte block edge:
  // an even run leaves the quote closing the string, an odd run escapes it.
  for (size_t pad = 40; pad < 140; ++pad) {
    for (int run = 0; run < 6; ++run) {
      std::string name(pad, 'a');
      name += std::string(static_cast<size_t>(run), '\\');
      std::string s = "{\"name\": \"" + name + "\"";
      if (run % 2) s += "}\"";  // the escaped quote is text; this brace is inside the string
      s += "}";
      std::string doc = s + ", {}";
      ScanResult r = container(doc);
      ASSERT_EQ(r.kind, ScanResult::kComplete) << pad << " " << run;
      EXPECT_EQ(r.pos, s.size()) << pad << " " << run;
    }
  }
}

TEST(StructuralScanner, NeedsMoreWhenCut) {
  const std::string ev = R"({"name": "kernel", "args": {"grid": [1, 2, 3]}})";
  for (size_t cut = 1; cut < ev.size(); ++cut) {
    EXPECT_EQ(container(ev.substr(0, cut)).kind, ScanResult::kNeedMore) << cut;
  }
}

TEST(StructuralScanner, ControlCharacterInStringIsCorrupt) {
  // Pretty-printed Kineto with an unescaped quote in a name: the quote flips the string
  // state, so the newline at the end of the line is seen inside a string.
  const std::string bad = "{\n  \"name\": \"say \"hi\", \"ph\": \"X\",\n  \"pid\": 1\n}";
  ScanResult r = container(bad);
  ASSERT_EQ(r.kind, ScanResult::kCorrupt);
  EXPECT_EQ(bad[r.pos], '\n');
  EXPECT_EQ(container("{\"a\": \"tab\there\"}").kind, ScanResult::kCorrupt);
  EXPECT_EQ(container("{\"a\":\n\t1}").kind, ScanResult::kComplete);  // whitespace outside
}

TEST(StructuralScanner, SimdMatchesScalarOnRandomInput) {
  std::mt19937 rng(12345);
  const char alphabet[] = "{}[]\"\\\\ab ,:\n\t";
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s = "{";
    const size_t n = rng() % 300;
    for (size_t i = 0; i < n; ++i) s += alphabet[rng() % (sizeof(alphabet) - 1)];
    container(s);  // compares both
  }
}

TEST(StructuralScanner, ValuesAndResync) {
  Padded p(R"("str\"ing", 123 , N/A])");
  EXPECT_EQ(find_value_end(p.data(), p.len, 0).pos, 10u);
  EXPECT_EQ(find_value_end(p.data(), p.len, 12).pos, 15u);
  EXPECT_EQ(find_value_end(p.data(), p.len, 18).pos, 21u);

  Padded q("garbage \"}\" x }  ,\n {\"ok\": 1}]");
  ScanResult r = find_resync_point(q.data(), q.len, 0);
  ASSERT_EQ(r.kind, ScanResult::kComplete);
  EXPECT_EQ(q.data()[r.pos], '{');
  Padded end("bad\"} \n ]");
  r = find_resync_point(end.data(), end.len, 0);
  ASSERT_EQ(r.kind, ScanResult::kComplete);
  EXPECT_EQ(end.data()[r.pos], ']');
  Padded cut("bad } ,  ");
  r = find_resync_point(cut.data(), cut.len, 0);
  ASSERT_EQ(r.kind, ScanResult::kNeedMore);
  EXPECT_EQ(r.pos, 4u);  // keep from the '}' that may start the pattern
}

}  // namespace
}  // namespace chokepoint::importers::json
