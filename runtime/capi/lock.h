// C code and many workers (docs/design/c-api.md, "Threads"). C modules are written for one
// thread, so while tasks run in parallel (vm::State::tablesShared):
//  - each C library (shared object, or the executable) has a lock, held while one of its
//    functions runs and released while that function calls back into Lua (lua_callk,
//    lua_pcallk); waiting for it is a long OS wait (the worker is handed on);
//  - C code runs detached from the collector, as a blocking native does (a kShort OS
//    wait), so a C function that blocks delays no collection; every lua_* function that
//    touches the heap attaches for its own duration (API_ENTRY).
// Before any task runs in parallel, all of this is skipped: a flag test per call.
//
// The bookkeeping is per OS thread (thread_local): a C function runs on one OS thread from
// its trampoline's entry to its exit (a yield leaves through the trampoline too).
#pragma once

#include "lua.h"
#include "vm/state.h"

namespace weft::capi {

struct LibraryLock;

// The trampoline: takes the lock of the library holding `code` and detaches, when tasks
// run in parallel. Returns what leaveLibrary undoes (nullptr: nothing was done).
LibraryLock* enterLibrary(vm::State& S, void* code);
void leaveLibrary(vm::State& S, LibraryLock* lock);
// Around a call back into Lua: the running C function's library lock is released and
// taken again (nullptr: none held).
LibraryLock* releaseLibrary(vm::State& S);
void reacquireLibrary(vm::State& S, LibraryLock* lock);

// API_ENTRY(L): attaches the calling OS thread for the rest of the lua_* function when
// its C code runs detached. A cleanup variable, not a destructor: a raise leaves by
// longjmp to the trampoline, which is attached already, so skipping it is right.
struct ApiToken {
  vm::State* detachAgain;
};
ApiToken apiEnter(lua_State* L);
void apiLeave(ApiToken* token);
extern thread_local constinit bool tlsDetachedForC;

}  // namespace weft::capi

// The cleanup attribute wants an unqualified name.
inline void weftCapiApiLeave(weft::capi::ApiToken* token) {
  if (token->detachAgain) weft::capi::apiLeave(token);
}

#define API_ENTRY(L)                                                                             \
  [[maybe_unused]] ::weft::capi::ApiToken apiToken_ __attribute__((cleanup(weftCapiApiLeave))) = \
      ::weft::capi::tlsDetachedForC ? ::weft::capi::apiEnter(L) : ::weft::capi::ApiToken{nullptr}
