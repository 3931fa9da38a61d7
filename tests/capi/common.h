/* Shared helpers of the C API tests (tests/capi/). Each test is one C program that prints
   what it observes; ctest compares its output built against Weft with its output built
   against Debian's liblua5.4 (the oracle). Only lua.h and lualib.h are used, so the same
   text compiles against both. */
#ifndef WEFT_CAPI_TEST_COMMON_H
#define WEFT_CAPI_TEST_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua.h"
#include "lualib.h"

static inline void *test_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

static inline int test_panic(lua_State *L) {
  printf("PANIC: %s\n", lua_tostring(L, -1));
  fflush(stdout);
  exit(3);
  return 0;
}

static inline lua_State *new_state(void) {
  lua_State *L = lua_newstate(test_alloc, NULL);
  lua_atpanic(L, test_panic);
  luaL_openlibs(L);
  return L;
}

/* One value, as the tests print it (never an address). */
static inline void show_value(lua_State *L, int i) {
  switch (lua_type(L, i)) {
    case LUA_TNONE: printf("none"); break;
    case LUA_TNIL: printf("nil"); break;
    case LUA_TBOOLEAN: printf(lua_toboolean(L, i) ? "true" : "false"); break;
    case LUA_TNUMBER:
      if (lua_isinteger(L, i)) printf("%lld", (long long)lua_tointeger(L, i));
      else printf("%.14g", lua_tonumber(L, i));
      break;
    case LUA_TSTRING: {
      size_t n;
      const char *s = lua_tolstring(L, i, &n);
      printf("\"%.*s\"", (int)n, s);
      break;
    }
    default: printf("%s", lua_typename(L, lua_type(L, i))); break;
  }
}

static inline void show_stack(lua_State *L, const char *label) {
  int n = lua_gettop(L);
  printf("%s [%d]:", label, n);
  for (int i = 1; i <= n; i++) {
    printf(" ");
    show_value(L, i);
  }
  printf("\n");
}

/* Calls f (no arguments) under lua_pcall, prints label, the status and the stack, and
   empties the stack. */
static inline void pcall_and_show(lua_State *L, lua_CFunction f, int nresults, const char *label) {
  lua_pushcfunction(L, f);
  printf("%s%d ", label, lua_pcall(L, 0, nresults, 0));
  show_stack(L, "");
  lua_settop(L, 0);
}

struct string_reader {
  const char *s;
  size_t n;
};

static inline const char *read_string(lua_State *L, void *ud, size_t *size) {
  struct string_reader *r = (struct string_reader *)ud;
  (void)L;
  if (r->n == 0) return NULL;
  *size = r->n;
  r->n = 0;
  return r->s;
}

static inline int load_string(lua_State *L, const char *code, const char *name) {
  struct string_reader r = {code, strlen(code)};
  return lua_load(L, read_string, &r, name, "t");
}

/* Runs a chunk, printing an error if there is one. */
static inline void run(lua_State *L, const char *code) {
  int st = load_string(L, code, "=chunk");
  if (st == LUA_OK) st = lua_pcall(L, 0, 0, 0);
  if (st != LUA_OK) {
    printf("error %d: %s\n", st, lua_tostring(L, -1));
    lua_pop(L, 1);
  }
}

#endif
