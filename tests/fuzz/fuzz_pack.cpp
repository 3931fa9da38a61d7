// libFuzzer entry point for string.pack, string.unpack and string.packsize with
// fuzzer-chosen formats and values. Invariant 7 of DEVELOPERS.md: a bad format, a bad
// value or short data is a Lua error, never a crash or a sanitizer report. When pack
// succeeds, the check function verifies what the manual defines:
//  - packsize (when the format has a fixed size) equals the length of the result;
//  - unpack of the result with the same format succeeds, consumes all of it, and gives
//    one value per value the format consumed, each as Lua defines it: integers exactly
//    (pack refuses overflow), floats as the number converted to double (or to float
//    for 'f'), strings as given ('c' pads with zeros), numbers given for strings as
//    their tostring;
//  - packing the unpacked values again gives the same bytes.
// Independently, unpack runs on the first value as raw data at the second value as
// position, and on the input's tail: errors only.
//
// Input: a length byte, that many format bytes, then up to 8 values (fuzz_host.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_host.h"

namespace {

constexpr const char* kHarness = R"(
local pack, unpack, packsize = string.pack, string.unpack, string.packsize
local pcall, select, type, mtype, tonumber, tostring, tpack, tunpack =
  pcall, select, type, math.type, tonumber, tostring, table.pack, table.unpack

local function sameFloat(a, b) return a == b or (a ~= a and b ~= b) end

-- How a value given to pack comes back from unpack.
local function matches(v, w)
  if type(w) == "string" then
    local s = type(v) == "number" and tostring(v) or v
    if type(s) ~= "string" then return false end
    return w == s or (#w > #s and w:sub(1, #s) == s and w:find("^%z*$", #s + 1) ~= nil)
  end
  local x = tonumber(v)
  if x == nil then return false end
  if mtype(w) == "integer" then return x == w end
  if mtype(w) == "float" then
    return sameFloat(w, x + 0.0) or sameFloat(w, (unpack("f", pack("f", x))))
  end
  return false
end

local function roundTrip(fmt, data, ...)
  local fixed, size = pcall(packsize, fmt)
  if fixed and size ~= #data then
    return "packsize " .. tostring(size) .. " but pack gave " .. #data .. " bytes"
  end
  local got = tpack(pcall(unpack, fmt, data))
  if not got[1] then return "unpack of pack's result failed: " .. tostring(got[2]) end
  local m = got.n - 2
  if got[got.n] ~= #data + 1 then return "unpack stopped at " .. tostring(got[got.n]) end
  if m > select("#", ...) then return "unpack gave more values than pack took" end
  for i = 1, m do
    if not matches((select(i, ...)), got[i + 1]) then
      return "value " .. i .. " came back as " .. tostring(got[i + 1])
    end
  end
  local ok, again = pcall(pack, fmt, tunpack(got, 2, m + 1))
  if not ok then return "packing the unpacked values failed: " .. tostring(again) end
  if again ~= data then return "packing the unpacked values gave other bytes" end
end

function check(fmt, tail, ...)
  pcall(packsize, fmt)
  pcall(unpack, fmt, ...)
  pcall(unpack, fmt, tail)
  local ok, data = pcall(pack, fmt, ...)
  if not ok then return nil end
  if type(data) ~= "string" then return "string.pack returned a " .. type(data) end
  return roundTrip(fmt, data, ...)
end
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  weft::fuzz::Bytes in(input);
  auto state = weft::fuzz::freshState();
  weft::vm::HostStack host(*state);
  weft::fuzz::runTrusted(host, kHarness);

  std::string_view format = in.take(in.byte());
  std::string_view tail = input.substr(input.size() - std::min<size_t>(input.size(), 32));
  if (host.pushGlobal("check") && host.pushString(format) && host.pushString(tail)) {
    int nargs = weft::fuzz::pushFuzzValues(host, in, 8);
    weft::fuzz::callCheck(host, nargs + 2);
  }
  host.setTop(0);
  host.closeMayGC();
  return 0;
}
