// libFuzzer entry point for the whole VM: loads arbitrary bytes (source text or a binary
// chunk) into a fresh standard State and runs whatever loads. Invariant 7 of DEVELOPERS.md:
// whatever the bytes, the run ends in a result or a Lua error, never in a crash, a
// sanitizer report or a fatal collector status.
//
// Protocol per input:
//  1. A fresh state with a 32 MiB heap limit, so allocation bombs end in "not enough memory".
//  2. The sandbox prelude (fuzz_host.h) removes what reaches outside the process or ends
//     it (io, os.exit, os.execute, os.remove, os.rename, os.tmpname, dofile, loadfile,
//     require, package), silences print, hides debug.sethook, and arms an instruction
//     budget: a count hook, installed in the main thread and in every coroutine the input
//     creates, charges a shared counter; past the budget it errors at every instruction,
//     so neither pcall nor a loop of coroutines outlives it.
//  3. The input runs under pcall; its result does not matter, only how it ends. Then the
//     state closes (finalizers run, still under the budget).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_host.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);

  auto state = weft::fuzz::freshState();
  weft::vm::HostStack host(*state);
  weft::fuzz::runTrusted(host, weft::fuzz::kSandbox);

  weft::Status status = host.loadMayGC(input, "=fuzz");
  weft::fuzz::failIfFatal(status);
  if (status.isOk()) weft::fuzz::failIfFatal(host.pcallMayGC(0, 0, false));
  host.setTop(0);
  host.closeMayGC();
  return 0;
}
