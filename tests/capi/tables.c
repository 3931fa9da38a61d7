/* Tables (manual 4.6): get/set with and without metamethods, integer and field keys,
   raw access (rawget/rawset/rawgeti/rawseti/rawgetp/rawsetp), next, createtable, globals,
   the registry. */
#include "common.h"

static int key_a, key_b;

int main(void) {
  lua_State *L = new_state();
  lua_createtable(L, 4, 4);
  for (int i = 1; i <= 5; i++) {
    lua_pushinteger(L, i * i);
    lua_rawseti(L, 1, i);
  }
  lua_pushstring(L, "v");
  lua_setfield(L, 1, "k");
  lua_pushstring(L, "key");
  lua_pushnumber(L, 1.5);
  lua_settable(L, 1);
  lua_pushinteger(L, 99);
  lua_seti(L, 1, 10);
  printf("geti(3) type=%d ", lua_geti(L, 1, 3));
  show_value(L, -1);
  printf(" getfield(k) type=%d ", lua_getfield(L, 1, "k"));
  show_value(L, -1);
  lua_pushstring(L, "key");
  printf(" gettable(key) type=%d ", lua_gettable(L, 1));
  show_value(L, -1);
  printf(" getfield(missing) type=%d\n", lua_getfield(L, 1, "missing"));
  lua_settop(L, 1);
  printf("rawlen=%llu\n", (unsigned long long)lua_rawlen(L, 1));
  lua_pushinteger(L, 2.0 == 2.0 ? 2 : 0);
  printf("rawget(2) type=%d ", lua_rawget(L, 1));
  show_value(L, -1);
  printf("\n");
  lua_pop(L, 1);
  /* Float keys with integer values are the same key. */
  lua_pushnumber(L, 3.0);
  lua_rawget(L, 1);
  printf("t[3.0]=");
  show_value(L, -1);
  printf("\n");
  lua_pop(L, 1);
  /* Light userdata keys. */
  lua_pushstring(L, "A");
  lua_rawsetp(L, 1, &key_a);
  lua_pushstring(L, "B");
  lua_rawsetp(L, 1, &key_b);
  lua_rawgetp(L, 1, &key_a);
  lua_rawgetp(L, 1, &key_b);
  show_stack(L, "rawgetp");
  lua_settop(L, 1);
  /* Traversal: count keys by type (order is unspecified). */
  int counts[LUA_NUMTYPES] = {0};
  long long isum = 0;
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    counts[lua_type(L, -2)]++;
    if (lua_isinteger(L, -1)) isum += lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  printf("next: number keys %d string keys %d lightuserdata keys %d int sum %lld top %d\n", counts[LUA_TNUMBER],
         counts[LUA_TSTRING], counts[LUA_TLIGHTUSERDATA], isum, lua_gettop(L));
  /* Globals. */
  lua_pushinteger(L, 123);
  lua_setglobal(L, "g");
  printf("getglobal(g) type=%d ", lua_getglobal(L, "g"));
  show_value(L, -1);
  printf("\n");
  lua_pop(L, 1);
  run(L, "print('from Lua, g =', g)");
  /* Registry use, as references do. */
  lua_pushstring(L, "stored");
  lua_setfield(L, LUA_REGISTRYINDEX, "my.key");
  lua_getfield(L, LUA_REGISTRYINDEX, "my.key");
  show_stack(L, "registry");
  lua_settop(L, 0);
  lua_close(L);
  return 0;
}
