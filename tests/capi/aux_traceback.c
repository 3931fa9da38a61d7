/* luaL_traceback: levels, a message or none, elision of deep stacks (10 levels, then
   "...\t(skipping N levels)", then the last 11), names (global, field, method, local,
   upvalue, main chunk, C functions, tail calls), and another thread's stack. */
#include "capi_test.h"

static int traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  int level = (int)luaL_optinteger(L, 2, 1);
  luaL_traceback(L, L, msg, level);
  return 1;
}

static int threadTraceback(lua_State *L) {
  lua_State *co = lua_tothread(L, 1);
  luaL_argexpected(L, co != NULL, 1, "thread");
  luaL_traceback(L, co, lua_tostring(L, 2), (int)luaL_optinteger(L, 3, 0));
  return 1;
}

static int callBack(lua_State *L) {
  lua_settop(L, 1);
  lua_call(L, 0, 1);
  return 1;
}

static const char *script =
    "local function show(s) print((s:gsub('0x%x+', 'ADDR'))) end\n"
    "show(traceback('plain'))\n"
    "show(traceback(nil, 0))\n"
    "show(traceback('level 2', 2))\n"
    "show(traceback('level 99', 99))\n"
    "local function rec(n, m) if n == 0 then return traceback('deep ' .. m) end\n"
    "  return (rec(n - 1, m)) end\n"
    "for _, depth in ipairs{5, 18, 19, 20, 21, 22, 40} do show(rec(depth, depth)) end\n"
    "local function tail(n) if n == 0 then return traceback('tail') end return tail(n - 1) end\n"
    "show(tail(3))\n"
    "local obj = {}\n"
    "function obj:method() return traceback('method') end\n"
    "function obj.field() return (obj:method()) end\n"
    "function globalFn() return (obj.field()) end\n"
    "show(globalFn())\n"
    "show(callBack(function() return traceback('through C') end))\n"
    "show(select(2, pcall(function() return traceback('in pcall') end)))\n"
    "show(string.gsub('x', 'x', function() return traceback('in gsub') end))\n"
    "local co = coroutine.create(function(a)\n"
    "  local function inner() coroutine.yield(1) end\n"
    "  inner() return 0 end)\n"
    "coroutine.resume(co)\n"
    "show(threadTraceback(co, 'suspended'))\n"
    "show(threadTraceback(co, nil, 1))\n"
    "coroutine.resume(co)\n"
    "show(threadTraceback(co, 'dead'))\n"
    "show(threadTraceback(coroutine.create(print), 'fresh'))\n"
    "local errco = coroutine.create(function() local x = nil; return x.y end)\n"
    "print(coroutine.resume(errco))\n"
    "show(threadTraceback(errco, 'after error'))\n"
    "show(debug.traceback('debug.traceback', 1))\n"
    "local deepco = coroutine.wrap(function() return rec(30, 'in coroutine') end)\n"
    "show(deepco())\n";

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_register(L, "traceback", traceback);
  lua_register(L, "threadTraceback", threadTraceback);
  lua_register(L, "callBack", callBack);
  runLua(L, script);
  /* from the host, with no Lua function running */
  luaL_traceback(L, L, "host", 0);
  printf("%s\n", lua_tostring(L, -1));
  luaL_traceback(L, L, NULL, 1);
  printf("%s\n", lua_tostring(L, -1));
  lua_pop(L, 2);
  lua_close(L);
  return 0;
}
