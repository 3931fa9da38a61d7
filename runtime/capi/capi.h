// The C API layer's internal interface (runtime/capi/): how lua.h's lua_State and C
// functions map onto the VM. The design is docs/design/c-api.md.
//
// Invariants:
//  1. A lua_State* is an address inside a thread's off-heap vm::ThreadData (stable while
//     the Thread object moves): just past its extraSpace, which holds LUA_EXTRASPACE.
//  2. A lua_CFunction is a Lua function: without upvalues a vm::Tag::LightCFunction value
//     (equal by pointer, as in Lua), with upvalues a vm::NativeClosure whose `cfunction`
//     holds it; either is run by the trampoline (callCFunction) that catches its errors.
//  3. No C++ object with a destructor is live in a lua_* function where it may raise (a
//     raise leaves by longjmp to the trampoline).
#pragma once

#include "lua.h"
#include "vm/state.h"
#include "vm/thread.h"

namespace weft::capi {

static_assert(LUA_EXTRASPACE <= vm::kThreadExtraSpace);
static_assert(LUA_REGISTRYINDEX == -int(vm::kMaxStackSlots) - 1000);

static_assert(offsetof(vm::ThreadData, extraSpace) == 0);

inline lua_State* luaStateOf(vm::ThreadData* t) {
  return reinterpret_cast<lua_State*>(t->extraSpace + vm::kThreadExtraSpace);
}
inline vm::ThreadData* threadOf(lua_State* L) {
  return reinterpret_cast<vm::ThreadData*>(reinterpret_cast<char*>(L) - vm::kThreadExtraSpace);
}
inline vm::State& stateOf(lua_State* L) { return *threadOf(L)->state; }

// Makes `state` ready for the C API (its per-State data, State::callLightC); idempotent.
// false on memory exhaustion. lua_newstate does it; so does the weft CLI before it lets
// scripts load C modules.
bool attachCApi(vm::State& state);

// The Lua value of a C function without upvalues (lua_pushcfunction pushes it).
inline vm::Value cFunctionValue(lua_CFunction f) {
  vm::Value v;
  v.u.p = reinterpret_cast<void*>(f);
  v.tag = vm::Tag::LightCFunction;
  return v;
}

}  // namespace weft::capi
