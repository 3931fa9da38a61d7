/* Every push, to and is function (manual 4.4): conversions, in-place number-to-string,
   lua_stringtonumber, lua_pushfstring's format subset, rawlen, light userdata and C
   functions as values. */
#include "common.h"

static int cf(lua_State *L) { return 0; }
static int cg(lua_State *L) { return 0; }

static void is_line(lua_State *L, int i) {
  printf("  [%d] type=%s number=%d string=%d integer=%d cfunction=%d userdata=%d function=%d bool=%d\n", i,
         lua_typename(L, lua_type(L, i)), lua_isnumber(L, i), lua_isstring(L, i), lua_isinteger(L, i),
         lua_iscfunction(L, i), lua_isuserdata(L, i), lua_isfunction(L, i), lua_isboolean(L, i));
}

int main(void) {
  lua_State *L = new_state();
  int x = 0;
  lua_pushnil(L);
  lua_pushboolean(L, 0);
  lua_pushboolean(L, 7);
  lua_pushinteger(L, -42);
  lua_pushnumber(L, 3.5);
  lua_pushnumber(L, 2.0);
  lua_pushstring(L, "12");
  lua_pushstring(L, "0x10");
  lua_pushstring(L, " 3.25 ");
  lua_pushstring(L, "abc");
  lua_pushlstring(L, "a\0b", 3);
  lua_pushlightuserdata(L, &x);
  lua_pushcfunction(L, cf);
  lua_newtable(L);
  lua_newuserdatauv(L, 4, 0);
  show_stack(L, "values");
  for (int i = 1; i <= lua_gettop(L); i++) is_line(L, i);
  for (int i = 1; i <= lua_gettop(L); i++) {
    int isnum, isint;
    lua_Number n = lua_tonumberx(L, i, &isnum);
    lua_Integer k = lua_tointegerx(L, i, &isint);
    printf("  [%d] tonumber=%.14g(%d) tointeger=%lld(%d) toboolean=%d rawlen=%llu\n", i, isnum ? n : 0.0, isnum,
           (long long)k, isint, lua_toboolean(L, i), (unsigned long long)lua_rawlen(L, i));
  }
  printf("touserdata light ok=%d tocfunction ok=%d other=%d\n", lua_touserdata(L, 12) == &x,
         lua_tocfunction(L, 13) == cf, lua_tocfunction(L, 4) == NULL);
  printf("tolstring(nil)=%s\n", lua_tolstring(L, 1, NULL) == NULL ? "NULL" : "?");
  /* Numbers convert in place. */
  size_t len;
  const char *s = lua_tolstring(L, 4, &len);
  printf("tolstring(-42)=%s len=%zu now type=%s\n", s, len, lua_typename(L, lua_type(L, 4)));
  s = lua_tostring(L, 5);
  printf("tostring(3.5)=%s tostring(2.0)=%s\n", s, lua_tostring(L, 6));
  show_stack(L, "after conversions");
  lua_settop(L, 0);

  /* Light C functions are equal by pointer, closures are not. */
  lua_pushcfunction(L, cf);
  lua_pushcfunction(L, cf);
  lua_pushcfunction(L, cg);
  printf("cf==cf %d cf==cg %d\n", lua_rawequal(L, 1, 2), lua_rawequal(L, 1, 3));
  lua_pushinteger(L, 1);
  lua_pushcclosure(L, cf, 1);
  lua_pushinteger(L, 1);
  lua_pushcclosure(L, cf, 1);
  printf("closure==closure %d tocfunction(closure)==cf %d iscfunction %d\n", lua_rawequal(L, 4, 5),
         lua_tocfunction(L, 4) == cf, lua_iscfunction(L, 4));
  lua_settop(L, 0);

  const char *cases[] = {"10", "0x1p4", "  7  ", "1e2", "abc", "", "9223372036854775808", "-0", "1 2", NULL};
  for (int i = 0; cases[i]; i++) {
    size_t r = lua_stringtonumber(L, cases[i]);
    printf("stringtonumber(\"%s\")=%zu", cases[i], r);
    if (r) {
      printf(" -> ");
      show_value(L, -1);
      lua_pop(L, 1);
    }
    printf("\n");
  }
  printf("top after stringtonumber %d\n", lua_gettop(L));

  s = lua_pushfstring(L, "%s|%d|%I|%f|%c|%%|%U|%U|%s", "str", -7, (lua_Integer)1234567890123LL, 2.5, 'Z', 0x41,
                      0x20AC, (const char *)NULL);
  printf("fstring: %s\n", s);
  printf("fstring %%f of 1.0: %s\n", lua_pushfstring(L, "%f", 1.0));
  printf("fstring long: %zu\n", strlen(lua_pushfstring(L, "%s%s%s%s", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                                            "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                                                            "ccccccccccccccccccccccccccccccccccccccccccccccccccccc",
                                                            "ddddddddddddddddddddddddddddddddddddddddddddddddddddd")));
  printf("pushliteral returns: %s\n", lua_pushliteral(L, "lit"));
  printf("pushstring(NULL) is nil: %d\n", (lua_pushstring(L, NULL), lua_isnil(L, -1)));
  lua_settop(L, 0);

  /* Arithmetic, comparison, concat, len. */
  lua_pushinteger(L, 7);
  lua_pushinteger(L, 2);
  const char *ops[] = {"add", "sub", "mul", "mod", "pow", "div", "idiv", "band", "bor", "bxor", "shl", "shr", "unm", "bnot"};
  for (int op = LUA_OPADD; op <= LUA_OPBNOT; op++) {
    lua_pushvalue(L, 1);
    if (op < LUA_OPUNM) lua_pushvalue(L, 2);
    lua_arith(L, op);
    printf("arith %s: ", ops[op]);
    show_value(L, -1);
    printf("\n");
    lua_pop(L, 1);
  }
  printf("compare 7<2 %d 2<7 %d 7<=7 %d eq %d\n", lua_compare(L, 1, 2, LUA_OPLT), lua_compare(L, 2, 1, LUA_OPLT),
         lua_compare(L, 1, 1, LUA_OPLE), lua_compare(L, 1, 2, LUA_OPEQ));
  printf("compare with none %d\n", lua_compare(L, 1, 10, LUA_OPEQ));
  lua_pushstring(L, "a");
  lua_pushinteger(L, 1);
  lua_pushnumber(L, 2.5);
  lua_concat(L, 3);
  show_stack(L, "concat 3");
  lua_concat(L, 0);
  show_stack(L, "concat 0");
  lua_len(L, 3);
  show_stack(L, "len");
  lua_settop(L, 0);
  /* A standard library function is a C function: lua_tocfunction gives one that can be
     called directly and pushed back as the same value. */
  lua_getglobal(L, "tostring");
  lua_CFunction builtin = lua_tocfunction(L, 1);
  printf("tocfunction(tostring) ok=%d iscfunction=%d\n", builtin != NULL, lua_iscfunction(L, 1));
  lua_pushcfunction(L, builtin);
  printf("pushed back rawequal=%d\n", lua_rawequal(L, 1, 2));
  lua_settop(L, 0);
  lua_pushinteger(L, 42);
  int results = builtin(L);
  printf("called directly: %d result(s), top %s\n", results, lua_tostring(L, -1));
  lua_close(L);
  return 0;
}
