/* Metatables and modules: newmetatable/setmetatable/getmetatable, checkudata/testudata
   and their messages, getmetafield/callmeta, tolstring (every type, __tostring, __name),
   len, setfuncs with upvalues and placeholders, newlib, getsubtable, requiref. */
#include "capi_test.h"

typedef struct Point {
  int x, y;
} Point;

static int newPoint(lua_State *L) {
  Point *p = (Point *)lua_newuserdatauv(L, sizeof(Point), 1);
  p->x = (int)luaL_checkinteger(L, 1);
  p->y = (int)luaL_checkinteger(L, 2);
  luaL_setmetatable(L, "Point");
  return 1;
}

static int pointSum(lua_State *L) {
  Point *p = (Point *)luaL_checkudata(L, 1, "Point");
  lua_pushinteger(L, p->x + p->y);
  return 1;
}

static int pointToString(lua_State *L) {
  Point *p = (Point *)luaL_checkudata(L, 1, "Point");
  lua_pushfstring(L, "Point(%d, %d)", p->x, p->y);
  return 1;
}

static int isPoint(lua_State *L) {
  lua_pushboolean(L, luaL_testudata(L, 1, "Point") != NULL);
  return 1;
}

static int toLString(lua_State *L) {
  size_t len;
  const char *s = luaL_tolstring(L, 1, &len);
  /* addresses differ between runs: keep what precedes them */
  const char *colon = strstr(s, ": 0x");
  if (colon == NULL) colon = strstr(s, ": (nil)");
  if (colon != NULL) {
    lua_pushfstring(L, "%s (%s, address hidden)", lua_pushlstring(L, s, (size_t)(colon - s)),
                    colon[2] == '0' ? "pointer" : "null");
    return 1;
  }
  lua_pushfstring(L, "%s (len %d)", s, (int)len);
  return 1;
}

static int metaField(lua_State *L) {
  int type = luaL_getmetafield(L, 1, luaL_checkstring(L, 2));
  lua_pushstring(L, lua_typename(L, type));
  if (type != LUA_TNIL) lua_insert(L, -2);
  return type == LUA_TNIL ? 1 : 2;
}

static int callMeta(lua_State *L) {
  int top = lua_gettop(L);
  int called = luaL_callmeta(L, 1, luaL_checkstring(L, 2));
  lua_pushboolean(L, called);
  return lua_gettop(L) - top;
}

static int len(lua_State *L) {
  lua_pushinteger(L, luaL_len(L, 1));
  return 1;
}

static int counter(lua_State *L) {
  lua_Integer n = lua_tointeger(L, lua_upvalueindex(1)) + 1;
  lua_pushinteger(L, n);
  lua_copy(L, -1, lua_upvalueindex(1));
  lua_pushvalue(L, lua_upvalueindex(2));
  return 2;
}

static int openCounters(lua_State *L) {
  static const luaL_Reg fns[] = {{"a", counter}, {"b", counter}, {"placeholder", NULL}, {NULL, NULL}};
  luaL_newlib(L, fns);
  lua_pushinteger(L, 100);
  lua_pushliteral(L, "shared?");
  luaL_setfuncs(L, fns, 2);
  printf("openCounters called with %s\n", lua_tostring(L, 1));
  return 1;
}

static int openOther(lua_State *L) {
  printf("openOther called with %s\n", lua_tostring(L, 1));
  lua_pushinteger(L, 7);
  return 1;
}

static const luaL_Reg globals[] = {{"newPoint", newPoint}, {"pointSum", pointSum},
                                   {"isPoint", isPoint},   {"toLString", toLString},
                                   {"metaField", metaField}, {"callMeta", callMeta},
                                   {"len", len},           {NULL, NULL}};

static const char *script =
    CAPI_TRY_LUA
    "local p = newPoint(3, 4)\n"
    "try(pointSum, p) try(pointSum, 5) try(pointSum, io.stdout) try(pointSum)\n"
    "try(pointSum, newproxy and newproxy() or setmetatable({}, {__name = 'Other'}))\n"
    "try(function() return p:sum() end)\n"
    "try(isPoint, p) try(isPoint, io.stdout) try(isPoint, {}) try(isPoint, 1)\n"
    "print(toLString(p))\n"
    "for _, v in ipairs{1, -0.0, 1e100, 2^63, -2^53, 1/0, -1/0, 3.25, 'str', true, false,\n"
    "    math.mininteger, 0.1, 100.0} do print(toLString(v)) end\n"
    "print(toLString(nil)) print(toLString()) print(toLString({})) print(toLString(print))\n"
    "print(toLString(setmetatable({}, {__name = 'Named'})))\n"
    "print(toLString(setmetatable({}, {__name = 12})))\n"
    "print(toLString(setmetatable({}, {__tostring = function() return 'custom' end})))\n"
    "print(toLString(setmetatable({}, {__tostring = function() return 42 end})))\n"
    "try(toLString, setmetatable({}, {__tostring = function() return {} end}))\n"
    "try(toLString, setmetatable({}, {__tostring = function() error('inside') end}))\n"
    "print(toLString(coroutine.create(print)))\n"
    "print((toLString(io.stdout):gsub('0x%x+', 'ADDR')))\n"
    "print(metaField(p, '__name')) print(type(select(2, metaField(p, '__index'))))\n"
    "print(metaField(p, 'missing')) print(metaField({}, '__name'))\n"
    "print(metaField('s', '__index') == 'table')\n"
    "print(callMeta(p, '__tostring')) print(callMeta(p, 'missing')) print(callMeta(1, 'x'))\n"
    "try(len, {1, 2, 3}) try(len, 'abcd') try(len, setmetatable({}, {__len = function() return 9 end}))\n"
    "try(len, setmetatable({}, {__len = function() return 2.5 end}))\n"
    "try(len, setmetatable({}, {__len = function() return '12' end}))\n"
    "try(len, 5)\n";

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  int top = lua_gettop(L);

  printf("newmetatable %d", luaL_newmetatable(L, "Point"));
  lua_getfield(L, -1, "__name");
  printf(" __name %s", lua_tostring(L, -1));
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushcfunction(L, pointSum);
  lua_setfield(L, -2, "sum");
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, pointToString);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
  printf(" again %d", luaL_newmetatable(L, "Point"));
  printf(" same %d\n", lua_rawequal(L, -1, (luaL_getmetatable(L, "Point"), -2)));
  lua_pop(L, 2);
  printf("getmetatable missing -> %s\n", lua_typename(L, luaL_getmetatable(L, "Nope")));
  lua_pop(L, 1);
  CHECK(lua_gettop(L) == top);

  lua_pushglobaltable(L);
  luaL_setfuncs(L, globals, 0);
  lua_pop(L, 1);
  runLua(L, script);

  /* getsubtable: an existing table, a new one, a non-table field replaced */
  lua_newtable(L);
  printf("getsubtable new %d", luaL_getsubtable(L, -1, "sub"));
  lua_pushinteger(L, 1);
  lua_setfield(L, -2, "marker");
  lua_pop(L, 1);
  printf(" existing %d", luaL_getsubtable(L, -1, "sub"));
  lua_getfield(L, -1, "marker");
  printf(" marker %d", (int)lua_tointeger(L, -1));
  lua_pop(L, 2);
  lua_pushliteral(L, "not a table");
  lua_setfield(L, -2, "sub");
  printf(" replaced %d", luaL_getsubtable(L, -1, "sub"));
  lua_getfield(L, -1, "marker");
  printf(" marker %s\n", lua_typename(L, lua_type(L, -1)));
  lua_pop(L, 3);
  CHECK(lua_gettop(L) == top);

  /* requiref: opened once, set as global on request, found in package.loaded */
  luaL_requiref(L, "counters", openCounters, 1);
  lua_pop(L, 1);
  luaL_requiref(L, "counters", openCounters, 0);
  lua_pop(L, 1);
  luaL_requiref(L, "other", openOther, 0);
  printf("other -> %d\n", (int)lua_tointeger(L, -1));
  lua_pop(L, 1);
  CHECK(lua_gettop(L) == top);
  runLua(L,
         "print(counters.a()) print(counters.a()) print(counters.b()) print(counters.placeholder)\n"
         "print(package.loaded.counters == counters, package.loaded.other, other)\n"
         "print(require('counters') == counters, require('other'))\n"
         "local n = 0 for k in pairs(counters) do n = n + 1 end print('fields', n)\n");
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  printf("_LOADED is package.loaded: %d\n", lua_rawequal(L, -1, -3));
  lua_pop(L, 3);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  printf("_PRELOAD is package.preload: %d\n", lua_rawequal(L, -1, -3));
  lua_pop(L, 3);
  CHECK(lua_gettop(L) == top);
  lua_close(L);
  return 0;
}
