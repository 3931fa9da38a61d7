/*
** Helpers shared by the C API test programs (tests/capi/CMakeLists.txt). A program prints
** what the oracle (Debian's liblua5.4) and Weft must agree on, and exits 0; a failed
** CHECK prints the failing condition and exits 1.
*/
#ifndef weft_capi_test_h
#define weft_capi_test_h

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      printf("CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                            \
    }                                                                     \
  } while (0)

/* Prints a protected call's status and, on error, its message (popped). */
static inline void showStatus(lua_State *L, const char *what, int status) {
  if (status == LUA_OK) {
    printf("%s: ok\n", what);
  } else {
    const char *msg = lua_tostring(L, -1);
    printf("%s: status %d: %s\n", what, status, msg ? msg : "(not a string)");
    lua_pop(L, 1);
  }
}

/* Lua source the test scripts start with: try(f, ...) prints what pcall(f, ...) returns,
   joined by " | ". */
#define CAPI_TRY_LUA                                \
  "local function try(f, ...)\n"                   \
  "  local r = table.pack(pcall(f, ...))\n"        \
  "  for i = 1, r.n do r[i] = tostring(r[i]) end\n" \
  "  print(table.concat(r, ' | ', 1, r.n))\n"      \
  "end\n"

/* Runs a chunk of Lua source; prints its error if it fails. */
static inline void runLua(lua_State *L, const char *code) {
  int status = luaL_loadbuffer(L, code, strlen(code), "=test");
  if (status == LUA_OK) status = lua_pcall(L, 0, 0, 0);
  if (status != LUA_OK) showStatus(L, code, status);
}

#endif
