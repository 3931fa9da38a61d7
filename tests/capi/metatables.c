/* Metatables (manual 4.6): get/setmetatable on tables, userdata and types, metamethods
   seen through the non-raw API (__index, __newindex, __len, __eq, __lt, __concat,
   __call, __close), __gc run at lua_close. */
#include "common.h"

static int index_mm(lua_State *L) {
  lua_pushfstring(L, "idx:%s", lua_tostring(L, 2));
  return 1;
}

static int newindex_mm(lua_State *L) {
  printf("__newindex %s = ", lua_tostring(L, 2));
  show_value(L, 3);
  printf("\n");
  return 0;
}

static int len_mm(lua_State *L) {
  lua_pushinteger(L, 77);
  return 1;
}

static int gc_mm(lua_State *L) {
  printf("__gc of a %s\n", lua_typename(L, lua_type(L, 1)));
  return 0;
}

static int close_mm(lua_State *L) {
  printf("__close with error ");
  show_value(L, 2);
  printf("\n");
  return 0;
}

/* A slot marked with lua_toclose closes when the C function returns. */
static int tbc_func(lua_State *L) {
  lua_newtable(L);
  lua_newtable(L);
  lua_pushcfunction(L, close_mm);
  lua_setfield(L, -2, "__close");
  lua_setmetatable(L, -2);
  lua_toclose(L, -1);
  lua_pushstring(L, "result");
  return 1;
}

static int call_mm(lua_State *L) {
  lua_pushinteger(L, lua_gettop(L));
  return 1;
}

int main(void) {
  lua_State *L = new_state();
  lua_newtable(L);              /* 1: object */
  lua_newtable(L);              /* 2: metatable */
  lua_pushcfunction(L, index_mm);
  lua_setfield(L, 2, "__index");
  lua_pushcfunction(L, newindex_mm);
  lua_setfield(L, 2, "__newindex");
  lua_pushcfunction(L, len_mm);
  lua_setfield(L, 2, "__len");
  lua_pushcfunction(L, call_mm);
  lua_setfield(L, 2, "__call");
  lua_pushvalue(L, 2);
  printf("setmetatable=%d\n", lua_setmetatable(L, 1));
  printf("getmetatable=%d same=%d\n", lua_getmetatable(L, 1), lua_rawequal(L, -1, 2));
  lua_pop(L, 1);
  lua_getfield(L, 1, "foo");
  show_stack(L, "__index");
  lua_pop(L, 1);
  printf("rawget sees nil: %d\n", (lua_pushstring(L, "foo"), lua_rawget(L, 1)) == LUA_TNIL);
  lua_pop(L, 1);
  lua_pushinteger(L, 5);
  lua_setfield(L, 1, "bar");
  lua_len(L, 1);
  show_stack(L, "__len");
  printf("rawlen=%llu\n", (unsigned long long)lua_rawlen(L, 1));
  lua_settop(L, 2);
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 1);
  lua_pushinteger(L, 2);
  lua_call(L, 2, 1);
  show_stack(L, "__call");
  lua_settop(L, 2);
  /* Metatable of a basic type (numbers). */
  lua_pushinteger(L, 1);
  lua_newtable(L);
  lua_pushcfunction(L, index_mm);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  run(L, "print('number method:', (5).anything)");
  lua_pushinteger(L, 1);
  lua_pushnil(L);
  lua_setmetatable(L, -2);
  printf("number metatable removed: %d\n", lua_getmetatable(L, -1) == 0);
  lua_settop(L, 0);
  /* __eq / __lt / __concat written in Lua, used from C. */
  run(L, "mt = {__eq = function(a, b) return a.v == b.v end, __lt = function(a, b) return a.v < b.v end,"
         "      __le = function(a, b) return a.v <= b.v end, __concat = function(a, b) return 'cat' end}"
         "a = setmetatable({v = 1}, mt) b = setmetatable({v = 1}, mt) c = setmetatable({v = 2}, mt)");
  lua_getglobal(L, "a");
  lua_getglobal(L, "b");
  lua_getglobal(L, "c");
  printf("a==b %d raw %d a<c %d c<=a %d\n", lua_compare(L, 1, 2, LUA_OPEQ), lua_rawequal(L, 1, 2),
         lua_compare(L, 1, 3, LUA_OPLT), lua_compare(L, 3, 1, LUA_OPLE));
  lua_concat(L, 2);
  show_stack(L, "__concat");
  lua_settop(L, 0);
  /* An error inside a metamethod called through the API is caught by pcall. */
  run(L, "local t = setmetatable({}, {__index = function() error('boom') end}) return t.x");
  /* __close via lua_toclose and lua_closeslot. */
  lua_newtable(L);
  lua_newtable(L);
  lua_pushcfunction(L, close_mm);
  lua_setfield(L, -2, "__close");
  lua_setmetatable(L, -2);
  lua_toclose(L, -1);
  lua_pushinteger(L, 1);
  lua_closeslot(L, 1);
  show_stack(L, "after closeslot");
  lua_settop(L, 0);
  lua_newtable(L);
  lua_newtable(L);
  lua_pushcfunction(L, close_mm);
  lua_setfield(L, -2, "__close");
  lua_setmetatable(L, -2);
  lua_toclose(L, -1);
  lua_settop(L, 0);
  printf("settop closed it\n");
  lua_register(L, "tbc_func", tbc_func);
  run(L, "print('tbc result:', tbc_func())");
  /* __gc at close. */
  lua_newtable(L);
  lua_newtable(L);
  lua_pushcfunction(L, gc_mm);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setglobal(L, "keep");
  lua_close(L);
  printf("closed\n");
  return 0;
}
