// libFuzzer entry point for string.format: fuzzer-chosen format strings and arguments
// (edge integers, inf/nan/-0.0, raw float bits, strings with control bytes) go through
// the real library function. Invariant 7 of DEVELOPERS.md: a bad format is a Lua error,
// never a crash or a sanitizer report. Where the manual defines the output exactly, the
// check function verifies it:
//  - "%q" of a number or a string reads back through load() as the same value (same
//    subtype; floats bit for bit, NaN as a NaN, -0.0 keeps its sign);
//  - "%s" of a string is that string; "%d" of an integer is what tostring gives;
//  - "%a" of a finite float reads back through tonumber() as the same float.
//
// Input: a length byte, that many format bytes, then up to 8 values (fuzz_host.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_host.h"

namespace {

constexpr const char* kHarness = R"(
local format, load, pcall, type, mtype, tonumber, tostring =
  string.format, load, pcall, type, math.type, tonumber, tostring

local function sameNumber(a, b)
  if mtype(a) ~= mtype(b) then return false end
  if a ~= a then return b ~= b end
  return a == b and (a ~= 0 or 1 / a == 1 / b)
end

local function checkQuoted(s, v)
  local f, err = load("return " .. s, "=q", "t")
  if not f then return "%q output does not load: " .. err end
  local ok, back = pcall(f)
  if not ok then return "%q output fails to run: " .. tostring(back) end
  if type(v) == "string" then
    if back ~= v then return "%q string does not round trip" end
  elseif not sameNumber(v, back) then
    return "%q of " .. format("%.17g", v) .. " reads back as " .. tostring(back)
  end
end

function check(fmt, ...)
  local ok, s = pcall(format, fmt, ...)
  if not ok then return nil end
  if type(s) ~= "string" then return "string.format returned a " .. type(s) end
  local v = ...
  local t = type(v)
  if fmt == "%q" and (t == "number" or t == "string") then return checkQuoted(s, v) end
  if fmt == "%s" and t == "string" and s ~= v then return "%s changed a string" end
  if fmt == "%d" and mtype(v) == "integer" and s ~= tostring(v) then
    return "%d of an integer differs from tostring: " .. s
  end
  if fmt == "%a" and mtype(v) == "float" and v == v and v - v == 0 then
    if not sameNumber(tonumber(s), v) then return "%a does not read back: " .. s end
  end
end
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Bytes in(std::string_view(reinterpret_cast<const char*>(data), size));
  auto state = weft::fuzz::freshState();
  weft::vm::HostStack host(*state);
  weft::fuzz::runTrusted(host, kHarness);

  std::string_view format = in.take(in.byte());
  if (host.pushGlobal("check") && host.pushString(format)) {
    int nargs = weft::fuzz::pushFuzzValues(host, in, 8);
    weft::fuzz::callCheck(host, nargs + 1);
  }
  host.setTop(0);
  host.closeMayGC();
  return 0;
}
