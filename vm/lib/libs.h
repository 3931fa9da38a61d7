// Openers of the standard libraries (manual §6). Each creates its library table, sets
// the global and package.loaded entry, and returns kMemoryError if allocation fails.
#pragma once

#include <cstdio>

#include "vm/api.h"
#include "vm/state.h"
#include "weft/status.h"

namespace weft::vm {

Status openBaseLib(State& state);       // lib/base.cpp: _G, print, pcall, load, ...
Status openCoroutineLib(State& state);  // lib/coroutine.cpp
Status openPackageLib(State& state);    // lib/package.cpp: require, package.*
Status openStringLib(State& state);     // lib/string.cpp (+ the string metatable)
Status openTableLib(State& state);      // lib/table.cpp
Status openMathLib(State& state);       // lib/math.cpp
Status openUtf8Lib(State& state);       // lib/utf8.cpp
Status openOsLib(State& state);         // lib/os.cpp
Status openIoLib(State& state);         // lib/io.cpp
Status openDebugLib(State& state);      // lib/debug.cpp

// Whether reading or writing `f` may wait on the operating system (a terminal, a pipe, a
// socket; not a regular file): such calls are blocking jobs (vm/api.h runBlockingMayGC)
// or run between enterOsWait and leaveOsWait (lib/io.cpp).
bool streamMayWait(FILE* f);
// The same for the process's standard output, asked of the system once (print).
bool stdoutMayWait();
// luaL_execresult: the results of os.execute and of a pipe's close for a wait status
// (lib/io.cpp).
NativeResult execResultOf(CallContext& cx, int stat);

// The natives compiled code computes itself at a call site that only ever called them
// (vm/jit_abi.h WeftJitNative; docs/design/jit.md, "Known natives"): each library's
// function of `id`, or null where `id` is not one of that library's.
NativeFn mathKnownNative(uint8_t id);
NativeFn stringKnownNative(uint8_t id);
NativeFn baseKnownNative(uint8_t id);

// collectgarbage("step", kb) and lua_gc(LUA_GCSTEP, kb) (docs/design/gc-step.md), made
// by code running on `t`: `cycleEnded` is set when this step finished a cycle.
Status gcStepMayGC(State& S, ThreadData* t, int64_t kb, bool& cycleEnded);

}  // namespace weft::vm
