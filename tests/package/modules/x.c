/* Test module x (tests/package/cmodules.lua): luaopen_x, luaopen_x_inner for the Croot
   searcher (require "x.inner" finds x.so), and x_plain for package.loadlib. */
#include "lauxlib.h"
#include "lua.h"

static int twice(lua_State *L) {
  lua_pushinteger(L, 2 * luaL_checkinteger(L, 1));
  return 1;
}

static int fail(lua_State *L) {
  return luaL_error(L, "x.fail: %s", luaL_checkstring(L, 1));
}

int luaopen_x(lua_State *L) {
  static const luaL_Reg fns[] = {{"twice", twice}, {"fail", fail}, {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_pushinteger(L, 42);
  lua_setfield(L, -2, "answer");
  lua_pushvalue(L, 2); /* the loader data: the file name */
  lua_setfield(L, -2, "file");
  return 1;
}

int luaopen_x_inner(lua_State *L) {
  lua_pushstring(L, "x.inner");
  return 1;
}

int x_plain(lua_State *L) {
  lua_pushstring(L, "x_plain called");
  return 1;
}
