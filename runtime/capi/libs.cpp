// The standard libraries as lua_CFunctions (lualib.h): each luaopen_* opens Weft's own
// library (vm/lib) into the State and pushes its table, as Lua's do. Weft's openers
// set the global and the package.loaded entry themselves; luaopen_* puts the global back
// as it was (as Lua's, which set none: luaL_requiref's glb decides), and leaves the
// loaded entry, which luaL_requiref sets anyway.
#include "lauxlib.h"
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
  if (!name) {
    if (!opener(S).isOk()) raiseMemory(L);
    pushMayGC(L, vm::Value::table(S.globals));
    return 1;
  }
  vm::String* key = vm::newString(S, name);
  if (!key) raiseMemory(L);
  pushMayGC(L, vm::tableGetStr(S.globals, key));  // a stack slot: the opener may collect
  if (!opener(S).isOk()) raiseMemory(L);
  key = vm::newString(S, name);
  if (!key) raiseMemory(L);
  vm::Value lib = vm::tableGetStr(S.globals, key);
  if (lib.isNil()) {
    vm::Value loaded = vm::tableGetStr(S.registry, vm::newString(S, "_LOADED"));
    if (loaded.isTable()) lib = vm::tableGetStr(loaded.asTable(), key);
  }
  pushMayGC(L, lib);
  lua_pushvalue(L, -2);
  lua_setglobal(L, name);
  lua_remove(L, -2);
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
  static const luaL_Reg kOpeners[] = {{LUA_GNAME, luaopen_base},          {LUA_LOADLIBNAME, luaopen_package},
                                       {LUA_COLIBNAME, luaopen_coroutine},  {LUA_TABLIBNAME, luaopen_table},
                                       {LUA_IOLIBNAME, luaopen_io},         {LUA_OSLIBNAME, luaopen_os},
                                       {LUA_STRLIBNAME, luaopen_string},    {LUA_MATHLIBNAME, luaopen_math},
                                       {LUA_UTF8LIBNAME, luaopen_utf8},     {LUA_DBLIBNAME, luaopen_debug}};
  for (const luaL_Reg& lib : kOpeners) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }
}
