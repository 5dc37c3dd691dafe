#include "serve/http_message.h"

#include <algorithm>
#include <cstring>

namespace chokepoint::serve {
namespace {

ParsedHead failed(int status, const char* why) {
  ParsedHead p;
  p.state = ParseState::kError;
  p.error_status = status;
  p.error = why;
  return p;
}

// RFC 9110 5.6.2 tchar.
bool is_tchar(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return is_tchar(static_cast<unsigned char>(c)); });
}

// A field value's bytes: HTAB, SP, VCHAR and obs-text (RFC 9110 5.5); no other control.
bool is_field_value(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c == '\t' || (c >= 0x20 && c != 0x7f);
  });
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return (x >= 'A' && x <= 'Z' ? x + 32 : x) == (y >= 'A' && y <= 'Z' ? y + 32 : y);
         });
}

// Where the head ends: its request line starts at *start (after the empty lines a client
// may send between requests) and the head ends after the first empty line. The whole
// head, leading empty lines included, must fit in max_head_bytes, so the scan never
// looks past it and a flood of bytes without an empty line is refused at the cap.
ParsedHead find_head(std::string_view buffer, const HeadLimits& limits, size_t* start) {
  const std::string_view window = buffer.substr(0, limits.max_head_bytes);
  size_t pos = 0;
  while (pos < window.size()) {
    if (window[pos] == '\n') {
      ++pos;
    } else if (window[pos] == '\r' && pos + 1 < window.size() && window[pos + 1] == '\n') {
      pos += 2;
    } else {
      break;
    }
  }
  *start = pos;
  size_t lines = 0;
  while (true) {
    const size_t nl = window.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (buffer.size() < limits.max_head_bytes) return ParsedHead{};
      return lines == 0 ? failed(414, "the request line is longer than the head's cap")
                        : failed(431, "the request head is longer than its cap");
    }
    const size_t len = nl - pos;
    if (len == 0 || (len == 1 && window[pos] == '\r')) {
      ParsedHead p;
      p.state = ParseState::kComplete;
      p.bytes = nl + 1;
      return p;
    }
    if (++lines > limits.max_header_lines + 1) return failed(431, "too many header lines");
    pos = nl + 1;
  }
}

// METHOD SP request-target SP HTTP-version (RFC 9112 3).
ParsedHead parse_request_line(std::string_view line, RequestHead* head) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return failed(400, "the request line is not METHOD TARGET VERSION");
  }
  const std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method)) return failed(400, "the method is not a token");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' || version[5] < '0' ||
      version[5] > '9' || version[7] < '0' || version[7] > '9') {
    return failed(400, "the version is not HTTP/x.y");
  }
  if (version[5] != '1') return failed(505, "only HTTP/1.0 and HTTP/1.1 are served");
  if (target.empty() || !std::all_of(target.begin(), target.end(), [](char c) { return c > 0x20 && c < 0x7f; })) {
    return failed(400, "the target is not printable ASCII");
  }
  // Absolute-form (a client talking to a proxy): the path is what follows the authority.
  if (const size_t scheme = target.find("://"); target.front() != '/' && scheme != std::string_view::npos) {
    const size_t slash = target.find('/', scheme + 3);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  if (target.front() != '/' && target != "*") return failed(400, "the target is not a path");
  head->method = std::string(method);
  head->path = std::string(target.substr(0, target.find('?')));
  head->http10 = version[7] == '0';
  return ParsedHead{};
}

struct FieldsSeen {
  bool close = false, keep_alive = false, body = false;
  std::string_view content_length;
};

// One header field; only those that change how the request is answered are kept.
ParsedHead parse_field(std::string_view line, FieldsSeen* seen) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return failed(400, "a header line without ':'");
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = trim_ows(line.substr(colon + 1));
  // A space before the colon or a folded line (obs-fold) is how requests are smuggled
  // past a proxy that reads them otherwise: refused (RFC 9112 5.1, 5.2).
  if (!is_token(name)) return failed(400, "a header name is not a token");
  if (!is_field_value(value)) return failed(400, "a header value holds a control character");
  if (iequals(name, "content-length")) {
    if (value.empty() || value.find_first_not_of("0123456789") != std::string_view::npos) {
      return failed(400, "Content-Length is not a number");
    }
    if (!seen->content_length.empty() && seen->content_length != value) {
      return failed(400, "two different Content-Length");
    }
    seen->content_length = value;
    if (value.find_first_not_of('0') != std::string_view::npos) seen->body = true;
  } else if (iequals(name, "transfer-encoding")) {
    seen->body = true;
  } else if (iequals(name, "connection")) {
    std::string_view rest = value;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view option = trim_ows(rest.substr(0, comma));
      if (iequals(option, "close")) seen->close = true;
      if (iequals(option, "keep-alive")) seen->keep_alive = true;
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  return ParsedHead{};
}

// The head's lines, each without its LF and the CR before it; a CR anywhere else is refused.
ParsedHead next_line(std::string_view* rest, std::string_view* line) {
  const size_t nl = rest->find('\n');
  *line = rest->substr(0, nl);
  rest->remove_prefix(nl == std::string_view::npos ? rest->size() : nl + 1);
  if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
  if (line->find('\r') != std::string_view::npos || line->find('\0') != std::string_view::npos) {
    return failed(400, "a bare CR or NUL in the head");
  }
  return ParsedHead{};
}

}  // namespace

ParsedHead parse_request_head(std::string_view buffer, const HeadLimits& limits) {
  size_t start = 0;
  ParsedHead found = find_head(buffer, limits, &start);
  if (found.state != ParseState::kComplete) return found;
  std::string_view rest = buffer.substr(start, found.bytes - start);
  std::string_view line;
  if (ParsedHead p = next_line(&rest, &line); p.state == ParseState::kError) return p;
  if (ParsedHead p = parse_request_line(line, &found.head); p.state == ParseState::kError) return p;
  FieldsSeen seen;
  while (!rest.empty()) {
    if (ParsedHead p = next_line(&rest, &line); p.state == ParseState::kError) return p;
    if (line.empty()) break;  // the empty line that ends the head
    if (ParsedHead p = parse_field(line, &seen); p.state == ParseState::kError) return p;
  }
  found.head.has_body = seen.body;
  found.head.close = seen.close || (found.head.http10 && !seen.keep_alive);
  return found;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 505: return "HTTP Version Not Supported";
    default: return "";
  }
}

void append_response_head(const ResponseHead& head, std::string* out) {
  out->append("HTTP/1.1 ").append(std::to_string(head.status)).append(" ").append(reason_phrase(head.status));
  out->append("\r\n");
  if (!head.content_type.empty()) out->append("Content-Type: ").append(head.content_type).append("\r\n");
  out->append("Content-Length: ").append(std::to_string(head.content_length)).append("\r\n");
  for (const auto& [name, value] : head.headers) out->append(name).append(": ").append(value).append("\r\n");
  if (head.close) {
    out->append("Connection: close\r\n");
  } else if (head.keep_alive) {
    out->append("Connection: keep-alive\r\n");
  }
  out->append("\r\n");
}

}  // namespace chokepoint::serve
