// libFuzzer entry point for the whole VM: loads arbitrary bytes (source text or a binary
// chunk) into a fresh standard State and runs whatever loads. Invariant 7 of DEVELOPERS.md:
// whatever the bytes, the run ends in a result or a Lua error, never in a crash, a
// sanitizer report or a fatal collector status.
//
// Protocol per input:
//  1. A fresh state with a 32 MiB heap limit, so allocation bombs end in "not enough memory".
//  2. A prelude removes what reaches outside the process or ends it (io, os.exit,
//     os.execute, os.remove, os.rename, os.tmpname, dofile, loadfile, require, package),
//     silences print, hides debug.sethook, and arms an instruction budget: a count hook,
//     installed in the main thread and in every coroutine the input creates, charges a
//     shared counter; past the budget it errors at every instruction, so neither pcall
//     nor a loop of coroutines outlives it.
//  3. The input runs under pcall; its result does not matter, only how it ends. Then the
//     state closes (finalizers run, still under the budget).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "vm/host.h"

namespace {

using weft::Status;
using weft::StatusCode;

constexpr size_t kHeapLimit = size_t{32} << 20;

// The sandbox prelude. `period` (instructions between hook calls) bounds what a coroutine
// that ends between two calls runs uncharged; `budget` is the instructions of one input.
constexpr const char* kSandbox = R"(
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

std::unique_ptr<weft::vm::State> freshState() {
  weft::vm::StateOptions options;
  options.gc.heapLimit = kHeapLimit;
  return weft::vm::newStandardState(options);
}

// Runs `code`, trusted harness code.
bool runTrusted(weft::vm::HostStack& host, const char* code) {
  return host.loadMayGC(code, "=harness").isOk() && host.pcallMayGC(0, 0, false).isOk();
}

void failIfFatal(Status status) {
  if (status.code() == StatusCode::kFatal) {
    std::fprintf(stderr, "fuzz_run: fatal VM status (invariant 5 tripped)\n");
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  auto state = freshState();
  if (!state) std::abort();
  weft::vm::HostStack host(*state);
  if (!runTrusted(host, kSandbox)) std::abort();
  host.setTop(0);

  Status status = host.loadMayGC(input, "=fuzz");
  failIfFatal(status);
  if (status.isOk()) failIfFatal(host.pcallMayGC(0, 0, false));
  host.setTop(0);
  host.closeMayGC();
  return 0;
}
