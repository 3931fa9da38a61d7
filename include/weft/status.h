// Errors are values in vm, gc, jit and runtime: nothing is thrown across a task switch,
// a JIT frame or the public API. A Status says what kind of outcome a call had; the
// Lua error value itself (any Lua value) lives in the running thread's error slot, where
// the collector can see it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace weft {

enum class StatusCode : uint8_t {
  kOk = 0,
  kYield,          // a coroutine or task suspends; not an error
  kRuntimeError,   // a Lua error; its value is in the thread's error slot
  kSyntaxError,    // compile error; message in the error slot (vm) or in Error (frontend)
  kMemoryError,    // allocation failed or the heap limit was reached
  kErrorInHandler, // an error while running an xpcall message handler
  kFatal,          // a collector transition failed: the runtime must close (invariant 5)
};

class [[nodiscard]] Status {
 public:
  constexpr Status() = default;
  constexpr explicit Status(StatusCode code) : code_(code) {}
  static constexpr Status ok() { return Status(); }
  constexpr bool isOk() const { return code_ == StatusCode::kOk; }
  constexpr bool isError() const { return code_ != StatusCode::kOk && code_ != StatusCode::kYield; }
  constexpr StatusCode code() const { return code_; }
  constexpr bool operator==(const Status&) const = default;

 private:
  StatusCode code_ = StatusCode::kOk;
};

// An error outside the VM (the frontend, the CLI, host set-up, the C++ API): a code and
// a message; the C++ API (weft.hpp) adds the traceback of a Lua error.
struct Error {
  Error() = default;
  Error(StatusCode c, std::string m, std::string tb = {}) : code(c), message(std::move(m)), traceback(std::move(tb)) {}
  StatusCode code = StatusCode::kRuntimeError;
  std::string message;
  std::string traceback;  // of a Lua runtime error, when known
};

// Either a T or an Error.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}
  bool hasValue() const { return v_.index() == 0; }
  explicit operator bool() const { return hasValue(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Success with nothing to return, or an Error.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), failed_(true) {}
  bool hasValue() const { return !failed_; }
  explicit operator bool() const { return hasValue(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

}  // namespace weft

// Checks an invariant in every build type (release builds keep them). On failure the
// process reports the invariant and aborts: these guard memory safety, not user input.
#define WEFT_CHECK(cond, what)                                          \
  do {                                                                  \
    if (!(cond)) [[unlikely]] ::weft::checkFailed(#cond, what, __FILE__, __LINE__); \
  } while (0)

namespace weft {
[[noreturn]] inline void checkFailed(const char* cond, const char* what, const char* file, int line) {
  std::fprintf(stderr, "weft: invariant violated: %s (%s) at %s:%d\n", what, cond, file, line);
  std::abort();
}
}  // namespace weft
