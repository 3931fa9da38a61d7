/* Coroutines driven from C (manual 4.6 lua_resume/lua_newthread): resuming Lua and C
   bodies, yields with values, errors, lua_status, lua_isyieldable, lua_xmove between
   threads, resetting a thread and resuming a dead one. */
#include "common.h"

static int c_body(lua_State *L) {
  printf("c_body got %d args, yieldable=%d\n", lua_gettop(L), lua_isyieldable(L));
  lua_pushinteger(L, lua_gettop(L));
  return lua_yield(L, 1);
}

static int is_yieldable(lua_State *L) {
  lua_pushboolean(L, lua_isyieldable(L));
  return 1;
}

static void resume_and_show(lua_State *L, lua_State *co, int nargs, const char *label) {
  int nres = -1;
  int st = lua_resume(co, L, nargs, &nres);
  if (st > LUA_YIELD) {
    /* On an error only the error object on top is specified. */
    printf("%s: status=%d lua_status=%d error: ", label, st, lua_status(co));
    show_value(co, -1);
    printf("\n");
    return;
  }
  printf("%s: status=%d nres=%d lua_status=%d top=%d values:", label, st, nres, lua_status(co), lua_gettop(co));
  for (int i = lua_gettop(co) - nres + 1; i <= lua_gettop(co); i++) {
    printf(" ");
    show_value(co, i);
  }
  printf("\n");
  lua_pop(co, nres);
}

int main(void) {
  lua_State *L = new_state();
  printf("main yieldable=%d status=%d\n", lua_isyieldable(L), lua_status(L));
  run(L, "function gen(a, b) local x = coroutine.yield(a + b) local y, z = coroutine.yield(x * 2) return 'done', y, z end");
  lua_State *co = lua_newthread(L);
  printf("new thread status=%d top=%d\n", lua_status(co), lua_gettop(co));
  lua_getglobal(co, "gen");
  lua_pushinteger(co, 3);
  lua_pushinteger(co, 4);
  resume_and_show(L, co, 2, "first");
  lua_pushinteger(co, 10);
  resume_and_show(L, co, 1, "second");
  lua_pushstring(co, "p");
  lua_pushstring(co, "q");
  resume_and_show(L, co, 2, "third");
  resume_and_show(L, co, 0, "dead");
  lua_settop(co, 0);
  lua_settop(L, 0);

  /* A C function as the body. */
  co = lua_newthread(L);
  lua_pushcfunction(co, c_body);
  lua_pushstring(co, "a");
  lua_pushstring(co, "b");
  resume_and_show(L, co, 2, "c body");
  resume_and_show(L, co, 0, "c body resumed");
  lua_settop(L, 0);

  /* Errors inside the coroutine. */
  run(L, "function failing(x) coroutine.yield(x) error('oops ' .. x) end");
  co = lua_newthread(L);
  lua_getglobal(co, "failing");
  lua_pushinteger(co, 5);
  resume_and_show(L, co, 1, "before error");
  resume_and_show(L, co, 0, "error");
  printf("status after error=%d\n", lua_status(co));
  lua_settop(L, 0);

  /* A Lua coroutine that sees C's isyieldable. */
  lua_pushcfunction(L, is_yieldable);
  lua_setglobal(L, "is_yieldable");
  run(L, "print('in coroutine:', coroutine.wrap(function() return is_yieldable() end)(), 'outside:', is_yieldable())");

  /* Closing a suspended coroutine with pending to-be-closed variables. */
  run(L, "function closing() local v <close> = setmetatable({}, {__close = function() print('closed v') end})"
         " coroutine.yield(1) end");
  co = lua_newthread(L);
  lua_getglobal(co, "closing");
  resume_and_show(L, co, 0, "closing");
  lua_pop(co, lua_gettop(co));
  printf("resetthread=%d status=%d\n", lua_resetthread(co), lua_status(co));
  lua_settop(L, 0);

  /* Many coroutines, resumed in turns, with values moved between them. */
  run(L, "function counter(n) for i = 1, n do coroutine.yield(i) end return 'end' end");
  lua_State *cs[4];
  for (int i = 0; i < 4; i++) {
    cs[i] = lua_newthread(L);
    lua_getglobal(cs[i], "counter");
    lua_pushinteger(cs[i], i + 2);
  }
  long long sum = 0;
  for (int round = 0; round < 6; round++) {
    for (int i = 0; i < 4; i++) {
      int nres;
      int nargs = round == 0 ? 1 : 0;
      if (lua_status(cs[i]) != LUA_YIELD && round > 0) continue;
      int st = lua_resume(cs[i], L, nargs, &nres);
      if (st == LUA_YIELD) sum += lua_tointeger(cs[i], -1);
      else printf("coroutine %d finished with %s\n", i, lua_tostring(cs[i], -1));
      lua_pop(cs[i], nres);
    }
  }
  printf("sum of yields %lld\n", sum);
  lua_close(L);
  return 0;
}
