// The standard libraries as lua_CFunctions (lualib.h): each luaopen_* opens Weft's own
// library (vm/lib) into the State and pushes its table, as Lua's do. Weft's openers
// also set the global and package.loaded entries themselves, so luaL_requiref with
// glb == 0 still finds the global set (docs/embedding.md).
#include "lualib.h"
#include "runtime/capi/internal.h"
#include "runtime/capi/loadlib.h"
#include "runtime/capi/lock.h"
#include "vm/lib/libs.h"
#include "vm/string.h"
#include "vm/table.h"

using namespace weft;
using namespace weft::capi;

namespace {

int openAndPushMayGC(lua_State* L, Status (*opener)(vm::State&), const char* name) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  if (!opener(S).isOk()) raiseMemory(L);
  if (!name) {
    pushMayGC(L, vm::Value::table(S.globals));
    return 1;
  }
  vm::String* key = vm::newString(S, name);
  if (!key) raiseMemory(L);
  vm::Value lib = vm::tableGetStr(S.globals, key);
  if (lib.isNil()) {
    vm::Value loaded = vm::tableGetStr(S.registry, vm::newString(S, "_LOADED"));
    if (loaded.isTable()) lib = vm::tableGetStr(loaded.asTable(), key);
  }
  pushMayGC(L, lib);
  return 1;
}

}  // namespace

LUAMOD_API int luaopen_base(lua_State* L) { return openAndPushMayGC(L, vm::openBaseLib, nullptr); }
LUAMOD_API int luaopen_coroutine(lua_State* L) { return openAndPushMayGC(L, vm::openCoroutineLib, LUA_COLIBNAME); }
LUAMOD_API int luaopen_table(lua_State* L) { return openAndPushMayGC(L, vm::openTableLib, LUA_TABLIBNAME); }
LUAMOD_API int luaopen_io(lua_State* L) { return openAndPushMayGC(L, vm::openIoLib, LUA_IOLIBNAME); }
LUAMOD_API int luaopen_os(lua_State* L) { return openAndPushMayGC(L, vm::openOsLib, LUA_OSLIBNAME); }
LUAMOD_API int luaopen_string(lua_State* L) { return openAndPushMayGC(L, vm::openStringLib, LUA_STRLIBNAME); }
LUAMOD_API int luaopen_utf8(lua_State* L) { return openAndPushMayGC(L, vm::openUtf8Lib, LUA_UTF8LIBNAME); }
LUAMOD_API int luaopen_math(lua_State* L) { return openAndPushMayGC(L, vm::openMathLib, LUA_MATHLIBNAME); }
LUAMOD_API int luaopen_debug(lua_State* L) { return openAndPushMayGC(L, vm::openDebugLib, LUA_DBLIBNAME); }
// The VM's package library, then the C module loader (loadlib.cpp) into it.
LUAMOD_API int luaopen_package(lua_State* L) {
  openAndPushMayGC(L, vm::openPackageLib, LUA_LOADLIBNAME);
  lua_pushcfunction(L, openCLoader);
  lua_call(L, 0, 0);
  return 1;
}

LUALIB_API void luaL_openlibs(lua_State* L) {
  API_ENTRY(L);
  // The order of linit.c: package right after base, so the others register in it.
  static const lua_CFunction kOpeners[] = {luaopen_base, luaopen_package, luaopen_coroutine, luaopen_table,
                                           luaopen_io,   luaopen_os,      luaopen_string,    luaopen_math,
                                           luaopen_utf8, luaopen_debug};
  for (lua_CFunction f : kOpeners) {
    lua_pushcfunction(L, f);
    lua_call(L, 0, 1);
    lua_pop(L, 1);
  }
}
