// libFuzzer entry point for binary chunks: load() in mode "b" of mutated string.dump
// output (seeds: weft's own dumps of varied functions, stripped and not). Invariant 7
// of DEVELOPERS.md: a corrupt chunk is a "bad binary format" error, never a crash.
// Whatever loads has passed the verifier; the check function dumps it again (with and
// without debug information) and the dump must load; then the function runs in the
// sandbox fuzz_run uses (32 MiB heap, instruction budget) and may end any way but
// fatally.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_host.h"

namespace {

constexpr const char* kHarness = R"(
local dump, load, pcall, tostring = string.dump, load, pcall, tostring
function check(f)
  for _, strip in ipairs({false, true}) do
    local ok, bytes = pcall(dump, f, strip)
    if ok then
      local g, err = load(bytes, "=redump", "b")
      if not g and not tostring(err):find("not enough memory", 1, true) then
        return "a loaded chunk dumps to bytes that do not load: " .. tostring(err)
      end
    end
  end
end
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto state = weft::fuzz::freshState();
  weft::vm::HostStack host(*state);
  weft::fuzz::runTrusted(host, kHarness);
  weft::fuzz::runTrusted(host, weft::fuzz::kSandbox);

  weft::Status status = host.loadMayGC(input, "=fuzz", "b");
  weft::fuzz::failIfFatal(status);
  if (status.isOk() && host.pushGlobal("check")) {
    host.pushValue(1);
    weft::fuzz::callCheck(host, 1);
    host.setTop(1);
    weft::fuzz::failIfFatal(host.pcallMayGC(0, 0, false));
  }
  host.setTop(0);
  host.closeMayGC();
  return 0;
}
