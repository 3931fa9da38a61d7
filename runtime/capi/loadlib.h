// The C module loader (loadlib.cpp): what the package library gains once a State has the
// C API. Written over the public C API only, as a C module would be.
#pragma once

#include "lua.h"
#include "vm/state.h"

namespace weft::capi {

// A lua_CFunction: into registry._LOADED.package (nothing if it is not open) puts
// package.loadlib, package.cpath (LUA_CPATH_5_4 / LUA_CPATH with ";;" for the default,
// unless registry.LUA_NOENV), and the C and Croot searchers at package.searchers[3] and
// [4]; creates registry._CLIBS (the open libraries, closed by its __gc when the State
// closes). luaopen_package calls it; returns no values.
int openCLoader(lua_State* L);

// The C API and the loader for a State opened by vm::newStandardState (the weft CLI).
// false on memory exhaustion.
bool attachCLoaderMayGC(vm::State& state);

}  // namespace weft::capi
