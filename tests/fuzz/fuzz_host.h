// What the libFuzzer targets that drive a whole VM share: a fresh standard state with a
// heap limit, the sandbox prelude with its instruction budget, trusted harness code, and
// a decoder that turns fuzz bytes into Lua values.
//
// Protocol for a target:
//  1. freshState() per input (nothing leaks between inputs), a HostStack on it.
//  2. Optionally runTrusted(host, kSandbox) (untrusted code will run), then
//     runTrusted(host, harness) to define the target's global check functions.
//  3. Push a check function and decoded values, pcall it. A check returns nil when all
//     is well and a message when a property the manual defines was violated: the
//     target then calls violation(), which aborts so libFuzzer keeps the input.
//  4. failIfFatal() on every status: invariant 5 (fatal collector status) aborts too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "vm/host.h"

namespace weft::fuzz {

inline constexpr size_t kHeapLimit = size_t{32} << 20;

// The sandbox prelude. `period` (instructions between hook calls) bounds what a coroutine
// that ends between two calls runs uncharged; `budget` is the instructions of one input.
// It removes what reaches outside the process or ends it, silences print, hides
// debug.sethook, and arms a count hook in the main thread and in every coroutine the
// input creates; past the budget the hook errors at every instruction, so neither
// pcall nor a loop of coroutines outlives it.
inline constexpr const char* kSandbox = R"(
local sethook, error, type = debug.sethook, error, type
io, dofile, loadfile, require, package = nil, nil, nil, nil, nil
os.exit, os.execute, os.remove, os.rename, os.tmpname = nil, nil, nil, nil, nil
print = function() end
debug.sethook = nil
local period, budget, spent = 100, 100000, 0
local function charge()
  spent = spent + period
  if spent >= budget then
    sethook(charge, "", 1)
    error("instruction budget exhausted", 0)
  end
end
local function armed(f)
  if type(f) ~= "function" then return f end
  return function(...)
    sethook(charge, "", period)
    return f(...)
  end
end
local create, wrap = coroutine.create, coroutine.wrap
coroutine.create = function(f) return create(armed(f)) end
coroutine.wrap = function(f) return wrap(armed(f)) end
sethook(charge, "", period)
)";

inline std::unique_ptr<vm::State> freshState() {
  vm::StateOptions options;
  options.gc.heapLimit = kHeapLimit;
  auto state = vm::newStandardState(options);
  if (!state) std::abort();
  return state;
}

[[noreturn]] inline void harnessFailed(vm::HostStack& host) {
  std::string message;
  if (host.top() > 0 && host.at(-1).isString()) message = host.at(-1).asString()->view();
  std::fprintf(stderr, "fuzz harness code failed: %s\n", message.c_str());
  std::abort();
}

// `code` as a binary chunk, compiled and dumped (string.dump) at its first use in this
// process: compiling the sandbox prelude took two thirds of the CPU time of a small
// fuzz_run input (ASan and coverage make the lexer slow), loading its dump a fraction of
// that. Keyed by the pointer: harness code is a string literal.
inline const std::string& compiledTrusted(vm::HostStack& host, const char* code) {
  static std::unordered_map<const char*, std::string> cache;
  auto it = cache.find(code);
  if (it != cache.end()) return it->second;
  if (!host.loadMayGC("return string.dump(assert(load(..., '=harness', 't')))", "=dumper", "t").isOk() ||
      !host.pushString(code) || !host.pcallMayGC(1, 1, false).isOk() || !host.at(-1).isString())
    harnessFailed(host);
  std::string bytes(host.at(-1).asString()->view());
  host.setTop(0);
  return cache.emplace(code, std::move(bytes)).first->second;
}

// Runs `code`, trusted harness code; it must load and run.
inline void runTrusted(vm::HostStack& host, const char* code) {
  const std::string& chunk = compiledTrusted(host, code);
  if (!host.loadMayGC(chunk, "=harness", "b").isOk() || !host.pcallMayGC(0, 0, false).isOk())
    harnessFailed(host);
  host.setTop(0);
}

inline void failIfFatal(Status status) {
  if (status.code() == StatusCode::kFatal) {
    std::fprintf(stderr, "fuzz: fatal VM status (invariant 5 tripped)\n");
    std::abort();
  }
}

[[noreturn]] inline void violation(std::string_view what) {
  std::fprintf(stderr, "fuzz: property violated: %.*s\n", int(what.size()), what.data());
  std::abort();
}

// Calls the global check function `name` with the `nargs` values on top of the stack.
// It returns nil or a violation message (which aborts). An error escaping the check is
// acceptable only as memory exhaustion: checks catch every library error themselves.
inline void callCheck(vm::HostStack& host, int nargs) {
  Status status = host.pcallMayGC(nargs, 1, false);
  failIfFatal(status);
  if (status.code() == StatusCode::kMemoryError) return;
  vm::Value result = host.at(-1);
  if (!status.isOk()) {
    std::string message = result.isString() ? std::string(result.asString()->view()) : "?";
    if (message.find("not enough memory") != std::string::npos) return;
    violation("check raised: " + message);
  }
  if (result.isString()) violation(result.asString()->view());
  if (!result.isNil()) violation("check returned a non-string");
}

// Reads fuzz bytes front to back; an exhausted input reads as zeros.
class Bytes {
 public:
  explicit Bytes(std::string_view data) : data_(data) {}
  bool empty() const { return data_.empty(); }
  uint8_t byte() {
    if (data_.empty()) return 0;
    uint8_t b = uint8_t(data_[0]);
    data_.remove_prefix(1);
    return b;
  }
  std::string_view take(size_t n) {
    std::string_view part = data_.substr(0, n);
    data_.remove_prefix(part.size());
    return part;
  }
  uint64_t word() {
    uint64_t w = 0;
    for (int i = 0; i < 8; i++) w |= uint64_t(byte()) << (8 * i);
    return w;
  }
  std::string_view rest() { return take(data_.size()); }

 private:
  std::string_view data_;
};

// Pushes one value decoded from `in`: a tag byte picks the kind, a payload follows.
//   0 integer from a table of edge values   1 raw 64-bit integer (little endian)
//   2 float from a table of edge values     3 raw 64-bit float bits
//   4 string: a length byte, then the bytes 5 small integer: one signed byte
//   6 nil, false or true                    7 string from a table of edge strings
inline bool pushFuzzValue(vm::HostStack& host, Bytes& in) {
  using L = std::numeric_limits<int64_t>;
  using D = std::numeric_limits<double>;
  static constexpr int64_t kInts[] = {
      0, 1, -1, 2, 7, 8, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769,
      65535, 65536, (int64_t{1} << 31) - 1, int64_t{1} << 31, -(int64_t{1} << 31),
      -(int64_t{1} << 31) - 1, (int64_t{1} << 32) - 1, int64_t{1} << 32, int64_t{1} << 53,
      (int64_t{1} << 53) + 1, L::max(), L::min(), L::max() - 1, L::min() + 1, 1000000};
  static const double kFloats[] = {
      0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 1.0 / 3, 1e308, -1e308, D::min(), D::denorm_min(),
      D::infinity(), -D::infinity(), D::quiet_NaN(), -D::quiet_NaN(), 9007199254740992.0,
      9223372036854775808.0, -9223372036854775808.0, 18446744073709551616.0, 1e15, 1e16,
      123.456, 3.4028234663852886e38, 1e-320, 255.5, -2.5, 1e100};
  static constexpr std::string_view kStrings[] = {
      "", std::string_view("\0", 1), "10", "0x10", " 3 ", "1e2", "-0", "0x7fffffffffffffff",
      "9223372036854775808", "inf", "nan", "\xff\xfe\x80", std::string_view("a\0b", 3),
      "\r\n\t\\\"'", "\x1b" "Lua", "%", "%%d", "\xc3\xa9", "1.5", "-9223372036854775808"};
  switch (in.byte() % 8) {
    case 0: host.pushInteger(kInts[in.byte() % std::size(kInts)]); return true;
    case 1: host.pushInteger(int64_t(in.word())); return true;
    case 2: host.pushNumber(kFloats[in.byte() % std::size(kFloats)]); return true;
    case 3: {
      uint64_t bits = in.word();
      double d;
      std::memcpy(&d, &bits, sizeof d);
      host.pushNumber(d);
      return true;
    }
    case 4: return host.pushString(in.take(in.byte()));
    case 5: host.pushInteger(int8_t(in.byte())); return true;
    case 6: {
      uint8_t b = in.byte() % 3;
      if (b == 0) host.pushNil();
      else host.pushBoolean(b == 2);
      return true;
    }
    default: return host.pushString(kStrings[in.byte() % std::size(kStrings)]);
  }
}

// Pushes up to `max` decoded values (until the input runs out); returns how many.
inline int pushFuzzValues(vm::HostStack& host, Bytes& in, int max) {
  int n = 0;
  while (n < max && !in.empty()) {
    if (!pushFuzzValue(host, in)) break;
    n++;
  }
  return n;
}

}  // namespace weft::fuzz
