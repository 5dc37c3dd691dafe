#include "report/csp_hash.h"

#include <gtest/gtest.h>

#include <string>

namespace chokepoint::report {
namespace {

std::string hex(const std::array<uint8_t, 32>& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) s += std::string{kHex[b >> 4], kHex[b & 15]};
  return s;
}

// FIPS 180-4's examples (one block, two blocks) and the empty string; a 1,000,000-byte
// input crosses many blocks.
TEST(CspHash, Sha256OfTheStandardVectors) {
  EXPECT_EQ(hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(sha256(std::string(1000000, 'a'))), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(CspHash, Base64WithPadding) {
  const std::string s = "foobar";
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  EXPECT_EQ(base64(p, 0), "");
  EXPECT_EQ(base64(p, 1), "Zg==");
  EXPECT_EQ(base64(p, 2), "Zm8=");
  EXPECT_EQ(base64(p, 3), "Zm9v");
  EXPECT_EQ(base64(p, 6), "Zm9vYmFy");
}

// The value the CSP specification's own example gives for alert('Hello, world.');
TEST(CspHash, HashSourceOfTheSpecExample) {
  EXPECT_EQ(csp_hash_source("alert('Hello, world.');"), "'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='");
}

}  // namespace
}  // namespace chokepoint::report
