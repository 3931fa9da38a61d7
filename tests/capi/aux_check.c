/* Argument checks and their messages: luaL_check* and luaL_opt*, argerror/typeerror (function names
   from calls, globals, methods, 'bad self'), checkoption, checkstack, checkany,
   luaL_error/luaL_where, checkversion, fileresult/execresult. */
#include <errno.h>

#include "capi_test.h"

static int checkInt(lua_State *L) {
  lua_Integer i = luaL_checkinteger(L, 1);
  lua_pushinteger(L, i * 2);
  return 1;
}

static int checkNum(lua_State *L) {
  lua_pushnumber(L, luaL_checknumber(L, 1) / 4);
  return 1;
}

static int checkStr(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  lua_pushfstring(L, "%s/%d", s, (int)len);
  return 1;
}

static int optAll(lua_State *L) {
  size_t len = 99;
  const char *s = luaL_optlstring(L, 1, "def", &len);
  lua_Integer i = luaL_optinteger(L, 2, -7);
  lua_Number n = luaL_optnumber(L, 3, 0.5);
  const char *s2 = luaL_optstring(L, 4, NULL);
  luaL_optlstring(L, 5, NULL, &len);
  lua_pushfstring(L, "%s %I %f %s %d", s, (LUAI_UACINT)i, (LUAI_UACNUMBER)n, s2 ? s2 : "(null)",
                  (int)len);
  return 1;
}

static int checkTable(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  lua_pushliteral(L, "table and any");
  return 1;
}

static int option(lua_State *L) {
  static const char *const modes[] = {"read", "write", "append", NULL};
  lua_pushinteger(L, luaL_checkoption(L, 1, "write", modes));
  lua_pushinteger(L, luaL_checkoption(L, 2, NULL, modes));
  return 2;
}

static int argCheck(lua_State *L) {
  luaL_argcheck(L, lua_gettop(L) == 2, 2, "two arguments please");
  luaL_argexpected(L, lua_isfunction(L, 1), 1, "function");
  lua_pushliteral(L, "passed");
  return 1;
}

static int selfCheck(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkinteger(L, 2);
  lua_pushliteral(L, "self ok");
  return 1;
}

static int typeError(lua_State *L) { return luaL_typeerror(L, 1, "widget"); }

static int stackCheck(lua_State *L) {
  int extra = (int)lua_tointeger(L, 1);
  const char *msg = lua_tostring(L, 2);
  luaL_checkstack(L, 100, NULL);
  lua_pushliteral(L, "100 fits");
  luaL_checkstack(L, extra, msg);
  return 1;
}

static int whereAt(lua_State *L) {
  luaL_where(L, (int)luaL_checkinteger(L, 1));
  return 1;
}

static int raise(lua_State *L) {
  return luaL_error(L, "%s has %d items (%f%%) at %p?", "list", 3, 1.5, (void *)NULL);
}

static int badVersion(lua_State *L) {
  luaL_checkversion_(L, 503, LUAL_NUMSIZES);
  return 0;
}

static int badSizes(lua_State *L) {
  luaL_checkversion_(L, LUA_VERSION_NUM, LUAL_NUMSIZES + 1);
  return 0;
}

static int goodVersion(lua_State *L) {
  luaL_checkversion(L);
  lua_pushliteral(L, "version ok");
  return 1;
}

static int fileResult(lua_State *L) {
  int ok = (int)lua_toboolean(L, 1);
  errno = ENOENT;
  return luaL_fileresult(L, ok, lua_tostring(L, 2));
}

static int execResult(lua_State *L) {
  errno = 0;
  return luaL_execresult(L, (int)luaL_checkinteger(L, 1));
}

static const luaL_Reg funcs[] = {
    {"checkInt", checkInt},     {"checkNum", checkNum},     {"checkStr", checkStr},
    {"optAll", optAll},         {"checkTable", checkTable}, {"option", option},
    {"argCheck", argCheck},     {"typeError", typeError},   {"stackCheck", stackCheck},
    {"whereAt", whereAt},       {"raise", raise},           {"badVersion", badVersion},
    {"badSizes", badSizes},     {"goodVersion", goodVersion}, {"fileResult", fileResult},
    {"execResult", execResult}, {"selfCheck", selfCheck}, {NULL, NULL}};

static const char *script =
    CAPI_TRY_LUA
    "try(checkInt, 21) try(checkInt, '21') try(checkInt, 2.0) try(checkInt, 2.5)\n"
    "try(checkInt, '2.5') try(checkInt, 'x') try(checkInt) try(checkInt, 2^63)\n"
    "try(checkInt, {}) try(checkInt, true) try(checkInt, io.stdout)\n"
    "try(checkNum, 10) try(checkNum, '0x10') try(checkNum, nil)\n"
    "try(checkStr, 'abc') try(checkStr, 12) try(checkStr, 1.5) try(checkStr, {})\n"
    "try(optAll) try(optAll, nil, nil, nil, nil, nil) try(optAll, 'x', 3, 4, 'y', 'zz')\n"
    "try(optAll, 1, '5', '6') try(optAll, 'x', 'bad') try(optAll, 'x', 1, {})\n"
    "try(optAll, 'x', 1.5)\n"
    "try(checkTable, {}, false) try(checkTable, {}) try(checkTable, 1, 2)\n"
    "try(option) try(option, 'read', 'append') try(option, nil, 'write')\n"
    "try(option, 'bogus', 'read') try(option, 'read', 'bogus') try(option, 'read', 7)\n"
    "try(argCheck, print, 1) try(argCheck, 1, 2) try(argCheck, print)\n"
    "local obj = {selfCheck = selfCheck}\n"
    "try(function() return obj:selfCheck(1) end)\n"
    "try(function() return obj:selfCheck('x') end)\n"
    "try(function() return obj.selfCheck(obj, 'x') end)\n"
    "try(function() return obj.selfCheck(5) end)\n"
    "try(function() local s = obj.selfCheck; return (s(5)) end)\n"
    "try(function() return obj.selfCheck(obj, 'x') end)\n"
    "local notSelf = {m = checkInt}\n"
    "try(function() return notSelf:m() end)\n"
    "try(function() return notSelf:m(1) end)\n"
    "try(function() return string.rep('x', -1, {}) end)\n"
    "try(function() return ('x'):rep({}) end)\n"
    "try(function() return math.floor('a') end)\n"
    "try(typeError, 1) try(typeError, nil) try(typeError, io.stdout)\n"
    "try(typeError, setmetatable({}, {__name = 'Thing'}))\n"
    "try(typeError, setmetatable({}, {__name = 42}))\n"
    "try(stackCheck, 10, 'unused') try(stackCheck, 1000000000, 'too many things')\n"
    "try(stackCheck, 1000000000)\n"
    "try(whereAt, 0) try(whereAt, 1) try(whereAt, 2) try(whereAt, 50)\n"
    "try(function() return whereAt(1) end)\n"
    "try(function() local x = whereAt(2) return x end)\n"
    "try(raise)\n"
    "try(function() raise() end)\n"
    "try(badVersion) try(badSizes) try(goodVersion)\n"
    "try(fileResult, true, 'f') try(fileResult, false, 'name.txt') try(fileResult, false)\n"
    "try(execResult, 0) try(execResult, 3 * 256) try(execResult, 9)\n"
    "try(execResult, -1)\n";

static int cArgError(lua_State *L) { return luaL_argerror(L, 3, "from C"); }

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_pushglobaltable(L);
  luaL_setfuncs(L, funcs, 0);
  lua_pop(L, 1);
  runLua(L, script);
  /* called directly from the host: no name, a C function outside any table */
  lua_pushcfunction(L, cArgError);
  showStatus(L, "argerror from host call", lua_pcall(L, 0, 0, 0));
  lua_pushcfunction(L, checkInt);
  lua_pushliteral(L, "nope");
  showStatus(L, "checkInt from host call", lua_pcall(L, 1, 0, 0));
  lua_close(L);
  return 0;
}
