/* References: luaL_ref/luaL_unref in a table of one's own (numbers and reuse order) and
   in the registry (values survive collections), LUA_REFNIL and LUA_NOREF. */
#include "capi_test.h"

static void ownTable(lua_State *L) {
  int refs[10];
  lua_newtable(L);
  int t = lua_gettop(L);
  for (int i = 0; i < 10; i++) {
    lua_pushfstring(L, "value %d", i);
    refs[i] = luaL_ref(L, t);
  }
  printf("refs:");
  for (int i = 0; i < 10; i++) printf(" %d", refs[i]);
  printf("\n");
  lua_pushnil(L);
  printf("nil -> %d (REFNIL %d, NOREF %d)\n", luaL_ref(L, t), LUA_REFNIL, LUA_NOREF);
  luaL_unref(L, t, refs[3]);
  luaL_unref(L, t, refs[7]);
  luaL_unref(L, t, refs[5]);
  luaL_unref(L, t, LUA_NOREF);
  luaL_unref(L, t, LUA_REFNIL);
  printf("reused:");
  for (int i = 0; i < 4; i++) {
    lua_pushinteger(L, 100 + i);
    printf(" %d", luaL_ref(L, -2));
  }
  printf("\n");
  printf("values:");
  for (int i = 1; i <= 11; i++) {
    lua_rawgeti(L, t, i);
    printf(" [%s]", lua_tostring(L, -1) ? lua_tostring(L, -1) : "nil");
    lua_pop(L, 1);
  }
  printf("\n");
  /* a table that already has an array part: references go past its end */
  lua_newtable(L);
  for (int i = 1; i <= 3; i++) {
    lua_pushinteger(L, i);
    lua_rawseti(L, -2, i);
  }
  lua_pushliteral(L, "x");
  printf("after array: %d\n", luaL_ref(L, -2));
  lua_pop(L, 2);
}

static void registry(lua_State *L) {
  int refs[200];
  for (int i = 0; i < 200; i++) {
    lua_newtable(L);
    lua_pushinteger(L, i);
    lua_setfield(L, -2, "id");
    refs[i] = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_gc(L, LUA_GCCOLLECT);
  int ok = 1;
  for (int i = 0; i < 200; i++) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, refs[i]);
    lua_getfield(L, -1, "id");
    ok = ok && lua_tointeger(L, -1) == i;
    lua_pop(L, 2);
  }
  printf("registry refs distinct and alive: %d\n", ok);
  for (int i = 0; i < 200; i += 2) luaL_unref(L, LUA_REGISTRYINDEX, refs[i]);
  lua_gc(L, LUA_GCCOLLECT);
  int reused = 0;
  for (int i = 0; i < 100; i++) {
    lua_pushinteger(L, i);
    int r = luaL_ref(L, LUA_REGISTRYINDEX);
    reused += r <= refs[199] && r % 2 == refs[0] % 2;
  }
  printf("freed registry refs reused: %d of 100\n", reused);
  for (int i = 1; i < 200; i += 2) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, refs[i]);
    lua_getfield(L, -1, "id");
    ok = ok && lua_tointeger(L, -1) == i;
    lua_pop(L, 2);
  }
  printf("kept refs still alive: %d\n", ok);
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  lua_pushglobaltable(L);
  printf("globals untouched: %d\n", lua_rawequal(L, -1, -2));
  lua_pop(L, 2);
}

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  ownTable(L);
  registry(L);
  printf("final top %d\n", lua_gettop(L));
  lua_close(L);
  return 0;
}
