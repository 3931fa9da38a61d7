/* Stack manipulation (manual 4.1-4.3): indices, top, rotate, copy, insert/remove/replace,
   checkstack, xmove, absindex and pseudo-indices. */
#include "common.h"

int main(void) {
  lua_State *L = new_state();
  printf("version %d\n", (int)lua_version(L));
  printf("empty top %d\n", lua_gettop(L));
  for (int i = 1; i <= 5; i++) lua_pushinteger(L, i * 10);
  show_stack(L, "pushed");
  printf("absindex(-1)=%d absindex(-5)=%d absindex(2)=%d registry=%d\n", lua_absindex(L, -1), lua_absindex(L, -5),
         lua_absindex(L, 2), lua_absindex(L, LUA_REGISTRYINDEX) == LUA_REGISTRYINDEX);
  lua_rotate(L, 2, 1);
  show_stack(L, "rotate(2,1)");
  lua_rotate(L, 2, -1);
  show_stack(L, "rotate(2,-1)");
  lua_rotate(L, 1, 3);
  show_stack(L, "rotate(1,3)");
  lua_insert(L, 1);
  show_stack(L, "insert(1)");
  lua_remove(L, 2);
  show_stack(L, "remove(2)");
  lua_pushstring(L, "x");
  lua_replace(L, 1);
  show_stack(L, "replace(1)");
  lua_copy(L, 1, 3);
  show_stack(L, "copy(1,3)");
  lua_pushvalue(L, -2);
  show_stack(L, "pushvalue(-2)");
  lua_settop(L, 7);
  show_stack(L, "settop(7)");
  lua_settop(L, -3);
  show_stack(L, "settop(-3)");
  lua_pop(L, 2);
  show_stack(L, "pop(2)");
  printf("type(10)=%s isnone(10)=%d isnoneornil(10)=%d\n", lua_typename(L, lua_type(L, 10)), lua_isnone(L, 10),
         lua_isnoneornil(L, 10));
  printf("checkstack(100)=%d checkstack(5000)=%d\n", lua_checkstack(L, 100), lua_checkstack(L, 5000));
  for (int i = 0; i < 4000; i++) lua_pushinteger(L, i);
  printf("after 4000 pushes top=%d last=%lld\n", lua_gettop(L), (long long)lua_tointeger(L, -1));
  lua_settop(L, 0);
  printf("checkstack(huge)=%d\n", lua_checkstack(L, 2000000));

  lua_State *T = lua_newthread(L);
  lua_pushinteger(L, 1);
  lua_pushstring(L, "two");
  lua_pushboolean(L, 1);
  lua_xmove(L, T, 2);
  show_stack(L, "L after xmove");
  show_stack(T, "T after xmove");
  lua_xmove(T, L, 1);
  show_stack(L, "L after xmove back");
  show_stack(T, "T after xmove back");
  lua_settop(L, 0);

  lua_pushglobaltable(L);
  lua_getfield(L, -1, "print");
  printf("global print is %s\n", lua_typename(L, lua_type(L, -1)));
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  printf("registry globals == pushglobaltable: %d\n", lua_rawequal(L, -1, -3));
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  printf("registry main thread is %s, tothread==L %d\n", lua_typename(L, lua_type(L, -1)), lua_tothread(L, -1) == L);
  printf("pushthread main=%d\n", lua_pushthread(L));
  printf("pushthread T=%d\n", lua_pushthread(T));
  lua_settop(L, 0);
  /* The extra space belongs to the host. */
  *(int *)lua_getextraspace(L) = 42;
  lua_State *T2 = lua_newthread(L);
  printf("extraspace main=%d new thread copy=%d\n", *(int *)lua_getextraspace(L), *(int *)lua_getextraspace(T2));
  lua_close(L);
  printf("closed\n");
  return 0;
}
