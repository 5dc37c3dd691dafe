// Status and Result<T>: error values for library code (no exceptions across modules,
// no exit()). A Status is ok or carries an error code and a message; Result<T> holds a T
// or a Status. Callers decide by the code (the CLI's exit status, whether a message
// already names its file), never by the words of the message.
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace chokepoint {

// What kind of failure a Status reports. Add a code when a caller must act differently
// on it; the message says the rest.
enum class ErrorCode : uint8_t {
  kOk = 0,       // no error (the code of an ok Status)
  kFailed,       // a failure with no finer code
  kUsage,        // the arguments are wrong: the same call can never work
  kInput,        // the input is not what it should be (format, content, a recording mixed with traces)
  kNotFound,     // a named thing (process, command, profile) does not exist
  kIo,           // reading or writing a named file failed; the message names the file ("cannot read 'F': ...")
  kUnsupported,  // valid, but not something this version or machine handles
  kCannotRun,    // a command to launch could not be started (exec failed)
  kInternal,     // a broken invariant of chokepoint itself
};

// "usage", "input", ...: for messages and tests.
const char* error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string message) { return Status(ErrorCode::kFailed, std::move(message)); }
  static Status Error(ErrorCode code, std::string message) {
    return Status(code == ErrorCode::kOk ? ErrorCode::kFailed : code, std::move(message));
  }

  bool ok() const { return !message_.has_value(); }
  ErrorCode code() const { return code_; }
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }
  // The same error with `prefix` before its message (context added on the way up).
  Status prefixed(const std::string& prefix) const { return ok() ? *this : Status(code_, prefix + *message_); }

 private:
  Status(ErrorCode code, std::string m) : code_(code), message_(std::move(m)) {}
  ErrorCode code_ = ErrorCode::kOk;
  std::optional<std::string> message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "a Result made from a Status must hold an error");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  // The value of a Result that is ok(); asking an error for its value is a bug (asserted).
  T& value() & {
    assert(value_.has_value());
    return *value_;
  }
  const T& value() const& {
    assert(value_.has_value());
    return *value_;
  }
  T&& value() && {
    assert(value_.has_value());
    return std::move(*value_);
  }
  T* operator->() {
    assert(value_.has_value());
    return &*value_;
  }
  const T* operator->() const {
    assert(value_.has_value());
    return &*value_;
  }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace chokepoint
