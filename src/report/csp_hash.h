// The Content-Security-Policy source of an inline <script> or <style>: "'sha256-BASE64'"
// of its exact text (CSP Level 2, "hash-source"). The HTML reports allow their own script
// and style by hash instead of 'unsafe-inline', so nothing injected into a page can run.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace chokepoint::report {

// SHA-256 (FIPS 180-4) of `data`.
std::array<uint8_t, 32> sha256(std::string_view data);

// Standard base64 (RFC 4648, with padding).
std::string base64(const uint8_t* data, size_t n);

// "'sha256-...'" for `inline_text`, the bytes between the element's tags.
std::string csp_hash_source(std::string_view inline_text);

}  // namespace chokepoint::report
