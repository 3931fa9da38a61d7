/* Calls and errors (manual 4.5-4.6): lua_call/lua_pcall with results and message
   handlers, lua_error with any value, errors raised by the API itself, errors crossing
   C and Lua frames several times, C functions with upvalues, deep recursion through C,
   and continuations (lua_callk, lua_pcallk, lua_yieldk). */
#include "common.h"

static int add(lua_State *L) {
  lua_Integer s = 0;
  for (int i = 1; i <= lua_gettop(L); i++) s += lua_tointeger(L, i);
  lua_pushinteger(L, s);
  lua_pushstring(L, "second");
  return 2;
}

static int fail_string(lua_State *L) {
  lua_pushstring(L, "failed in C");
  return lua_error(L);
}

static int fail_table(lua_State *L) {
  lua_newtable(L);
  lua_pushinteger(L, 42);
  lua_setfield(L, -2, "code");
  return lua_error(L);
}

static int fail_api(lua_State *L) {
  lua_pushinteger(L, 1);
  lua_getfield(L, -1, "x"); /* indexing a number: a Lua error raised by the API */
  return 0;
}

static int counter(lua_State *L) {
  lua_Integer n = lua_tointeger(L, lua_upvalueindex(1)) + 1;
  lua_pushinteger(L, n);
  lua_copy(L, -1, lua_upvalueindex(1));
  printf("upvalue 2 is %s, upvalue 3 is %s\n", lua_tostring(L, lua_upvalueindex(2)),
         lua_typename(L, lua_type(L, lua_upvalueindex(3))));
  return 1;
}

static int handler(lua_State *L) {
  lua_pushfstring(L, "handled<%s>", lua_tostring(L, 1));
  return 1;
}

/* C -> Lua -> C recursion: each level calls back into Lua. */
static int recurse(lua_State *L) {
  lua_Integer n = lua_tointeger(L, 1);
  if (n == 0) {
    lua_pushinteger(L, 0);
    return 1;
  }
  lua_getglobal(L, "down");
  lua_pushinteger(L, n - 1);
  lua_call(L, 1, 1);
  lua_pushinteger(L, lua_tointeger(L, -1) + 1);
  return 1;
}

/* Continuations. */
static int finish_call(lua_State *L, int status, lua_KContext ctx) {
  printf("finish_call status=%d ctx=%ld top=%d\n", status, (long)ctx, lua_gettop(L));
  lua_pushstring(L, "k");
  return lua_gettop(L);
}

static int callk_user(lua_State *L) {
  lua_settop(L, 1);
  lua_callk(L, 0, LUA_MULTRET, 7, finish_call);
  return finish_call(L, LUA_OK, 7);
}

static int finish_pcall(lua_State *L, int status, lua_KContext ctx) {
  printf("finish_pcall status=%d ctx=%ld top=%d top value=", status, (long)ctx, lua_gettop(L));
  show_value(L, -1);
  printf("\n");
  lua_pushboolean(L, status == LUA_OK || status == LUA_YIELD);
  return 1;
}

static int pcallk_user(lua_State *L) {
  lua_pushvalue(L, 1);
  int st = lua_pcallk(L, 0, 1, 0, 8, finish_pcall);
  return finish_pcall(L, st, 8);
}

static int finish_yield(lua_State *L, int status, lua_KContext ctx) {
  printf("finish_yield status=%d ctx=%ld args:", status, (long)ctx);
  for (int i = 1; i <= lua_gettop(L); i++) {
    printf(" ");
    show_value(L, i);
  }
  printf("\n");
  lua_pushstring(L, "after yield");
  return 1;
}

static int yielder(lua_State *L) {
  lua_pushinteger(L, 100);
  return lua_yieldk(L, 1, 9, finish_yield);
}

static int plain_yielder(lua_State *L) { return lua_yield(L, lua_gettop(L)); }

int main(void) {
  lua_State *L = new_state();
  lua_pushcfunction(L, add);
  lua_pushinteger(L, 1);
  lua_pushinteger(L, 2);
  lua_pushinteger(L, 3);
  lua_call(L, 3, LUA_MULTRET);
  show_stack(L, "call multret");
  lua_settop(L, 0);
  lua_pushcfunction(L, add);
  lua_call(L, 0, 3);
  show_stack(L, "call 3 results");
  lua_settop(L, 0);

  pcall_and_show(L, fail_string, 0, "pcall string error: ");
  lua_pushcfunction(L, fail_table);
  printf("pcall table error: %d ", lua_pcall(L, 0, 0, 0));
  lua_getfield(L, -1, "code");
  show_stack(L, "");
  lua_settop(L, 0);
  lua_pushcfunction(L, fail_api);
  printf("pcall API error: %d ", lua_pcall(L, 0, 0, 0));
  show_stack(L, "");
  lua_settop(L, 0);
  lua_pushcfunction(L, handler);
  lua_pushcfunction(L, fail_string);
  printf("pcall with handler: %d ", lua_pcall(L, 0, 0, 1));
  show_stack(L, "");
  lua_settop(L, 0);
  /* A handler that errors gives LUA_ERRERR. */
  run(L, "bad = function() error('in handler') end");
  lua_getglobal(L, "bad");
  lua_pushcfunction(L, fail_string);
  printf("pcall with failing handler: %d\n", lua_pcall(L, 0, 0, 1));
  lua_settop(L, 0);

  lua_pushcfunction(L, fail_string);
  lua_setglobal(L, "fail_string");
  lua_pushcfunction(L, fail_table);
  lua_setglobal(L, "fail_table");
  run(L, "print(pcall(fail_string)) local ok, e = pcall(fail_table) print(ok, type(e), e.code)"
         "print(select('#', pcall(error)))"
         "print(pcall(function() local x <close> = nil; fail_string() end))");

  lua_pushinteger(L, 10);
  lua_pushstring(L, "up2");
  lua_pushcclosure(L, counter, 2);
  lua_setglobal(L, "counter");
  run(L, "print(counter(), counter(), counter())");

  lua_pushcfunction(L, recurse);
  lua_setglobal(L, "down");
  run(L, "print('recursion through C:', down(50))");
  run(L, "local ok, e = pcall(down, 100000) print('deep recursion:', ok, (string.gsub(tostring(e), '^.-: ', '')))");

  lua_pushcfunction(L, callk_user);
  lua_setglobal(L, "callk_user");
  lua_pushcfunction(L, pcallk_user);
  lua_setglobal(L, "pcallk_user");
  lua_pushcfunction(L, yielder);
  lua_setglobal(L, "yielder");
  lua_pushcfunction(L, plain_yielder);
  lua_setglobal(L, "plain_yielder");
  run(L, "print('callk no yield:', callk_user(function() return 1, 2 end))");
  run(L, "local co = coroutine.wrap(function(...) return callk_user(function() return coroutine.yield('y1') end) end)"
         "print('callk yield 1:', co()) print('callk yield 2:', co('r1', 'r2'))");
  run(L, "print('pcallk no yield:', pcallk_user(function() return 'ok' end))");
  run(L, "print('pcallk error:', pcallk_user(function() error('E', 0) end))");
  run(L, "local co = coroutine.wrap(function() return pcallk_user(function() coroutine.yield('y') error('late', 0) end) end)"
         "print('pcallk yield:', co()) print('pcallk after yield error:', co())");
  run(L, "local co = coroutine.wrap(function() return 'end', yielder() end)"
         "print('yieldk:', co()) print('yieldk resumed:', co('a', 'b'))");
  run(L, "local co = coroutine.wrap(function(...) return 'back', plain_yielder(...) end)"
         "print('yield:', co(1, 2)) print('yield resumed:', co('x'))");
  run(L, "print('yield outside coroutine:', pcall(yielder))");
  run(L, "local co = coroutine.wrap(function() return table.sort({3, 2, 1}, function(a, b) yielder() return a < b end) end)"
         "print('yield across sort:', pcall(co))");
  lua_close(L);
  return 0;
}
