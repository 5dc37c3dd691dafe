// HTTP/1.1 request heads and response heads for `chokepoint serve`'s own server
// (http_server.h): a parser of the request line and headers with hard caps, and the
// writer of a response's status line and headers. No I/O, no allocation that grows with
// the input beyond the capped head.
//
// The parser is strict where a lax reading could be abused (a body the server would have
// to skip, a header smuggled through a bare CR) and lenient where RFC 9112 allows it
// (empty lines before a request, LF without CR, obs-text in values).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chokepoint::serve {

struct HeadLimits {
  size_t max_head_bytes = 8 * 1024;  // request line + headers + the empty line
  size_t max_header_lines = 64;
};

struct RequestHead {
  std::string method;  // as sent, case-sensitive ("GET", "HEAD", "get" is another method)
  std::string path;    // the target without its query ("/metrics"); absolute-form reduced to its path
  bool http10 = false;
  bool close = false;     // the connection ends after the answer: Connection: close, or HTTP/1.0 without keep-alive
  bool has_body = false;  // Content-Length > 0 or any Transfer-Encoding: refused, never read
};

enum class ParseState : unsigned char { kIncomplete, kComplete, kError };

struct ParsedHead {
  ParseState state = ParseState::kIncomplete;
  size_t bytes = 0;        // kComplete: the head's length in the buffer (empty lines before it included)
  RequestHead head;        // kComplete
  int error_status = 0;    // kError: 400, 414, 431 or 505
  const char* error = "";  // kError: why, for the response body
};

// Looks for one request head at the start of `buffer`. kIncomplete while the head may
// still end within the caps; kError as soon as it cannot be a valid one.
ParsedHead parse_request_head(std::string_view buffer, const HeadLimits& limits);

// "OK", "Not Found", ...; "" for a status this server does not send.
const char* reason_phrase(int status);

struct ResponseHead {
  int status = 200;
  std::string content_type;
  size_t content_length = 0;
  // More fields (Allow).
  std::vector<std::pair<std::string, std::string>> headers;
  bool close = false;       // adds Connection: close
  bool keep_alive = false;  // adds Connection: keep-alive (an HTTP/1.0 client that asked for it)
};

// The status line, the fields and the empty line, appended to `out`.
void append_response_head(const ResponseHead& head, std::string* out);

}  // namespace chokepoint::serve
