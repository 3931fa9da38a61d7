// The string library (manual §6.4) and helpers shared by the standard-library files
// this engineer owns (string, table, math, utf8, os, io, package).
//
// Protocol: natives build results in a leased scratch buffer (BufferLease) and allocate
// the Lua string once at the end, so a loop of string.format or gsub calls does no heap
// churn beyond its results. Leases nest (a __tostring called by format may itself call
// format): each lease takes its own buffer from a small per-thread pool.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vm/api.h"

namespace weft::vm {

// A reusable std::string from a per-thread pool; cleared on lease, returned on scope exit.
class BufferLease {
 public:
  BufferLease();
  ~BufferLease();
  BufferLease(const BufferLease&) = delete;
  BufferLease& operator=(const BufferLease&) = delete;
  std::string& get() { return *buf_; }

 private:
  std::string* buf_;
};

// Pushes a new string and returns it as the single result (memory error on exhaustion).
NativeResult returnString(CallContext& cx, std::string_view s);
// Pushes one string value; false on exhaustion (cx's pending result is then set).
bool pushString(CallContext& cx, std::string_view s);
// Pushes `v` (false: stack overflow already reported through *outcome).
bool pushValue(CallContext& cx, const Value& v, NativeResult& outcome);
// Pushes nil, message and (when errnum != 0) errnum: the luaL_fileresult failure form.
NativeResult failResult(CallContext& cx, std::string_view message, int errnum);
// luaL_fileresult: true on success, otherwise nil, "fname: strerror(errno)", errno.
NativeResult fileResult(CallContext& cx, bool ok, const char* fname);

// Lua's relative string positions (manual §6.4): negative counts from the end.
// posrelatI: start positions clamp to 1; getendpos: end positions clamp to len.
size_t startPosition(int64_t pos, size_t len);
size_t endPosition(int64_t pos, size_t len);

// Largest string string.rep, table.concat and friends build, as in Lua 5.4 (INT_MAX):
// larger requests fail with "resulting string too large" before allocating.
inline constexpr size_t kMaxLibString = 0x7fffffff;

// Whether a scratch buffer may grow to `bytes`: within kMaxLibString and the heap limit
// (the result must fit the heap anyway), so a huge result fails with a memory error
// before the C++ heap is asked for it.
bool bufferMayGrow(CallContext& cx, size_t bytes);

// The string library's natives that other files register (string.format lives in
// strformat.cpp, pack/unpack/packsize in strpack.cpp, the pattern functions in
// string.cpp).
NativeResult strFormat(CallContext& cx);
NativeResult strPack(CallContext& cx);
NativeResult strUnpack(CallContext& cx);
NativeResult strPackSize(CallContext& cx);

}  // namespace weft::vm
