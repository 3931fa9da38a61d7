// Shared by the C API tests: runs a chunk on a fresh State with the C API and a task
// runtime, after the test registered its C functions.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "lua.h"
#include "runtime/capi/capi.h"
#include "runtime/runtime.h"
#include "vm/host.h"

namespace weft::capi::test {

// "ok", or the chunk's error message ("no state", "no runtime", "setup failed" when it
// did not get that far). `setup` registers the test's functions on the main lua_State.
inline std::string runChunk(const std::string& chunk, unsigned workers, const std::function<bool(lua_State*)>& setup) {
  std::unique_ptr<vm::State> state = vm::newStandardState({});
  if (!state || !attachCApi(*state)) return "no state";
  runtime::RuntimeOptions options;
  options.workers = workers;
  auto rt = runtime::Runtime::start(*state, options);
  if (!rt.hasValue()) return "no runtime";
  if (!setup(luaStateOf(state->mainThread->data))) return "setup failed";
  vm::HostStack h(*state);
  std::string result = "ok";
  if (!h.loadMayGC(chunk, "=test").isOk() || !h.pcallMayGC(0, 0, true).isOk()) {
    if (!h.toStringMayGC(-1, result).isOk()) result = "unprintable error";
  }
  h.setTop(0);
  if (!(*rt)->finishMayGC().isOk() && result == "ok") result = "runtime failed";
  h.closeMayGC();  // finalizers of C modules (lpeg frees its patterns' code in __gc)
  return result;
}

}  // namespace weft::capi::test
