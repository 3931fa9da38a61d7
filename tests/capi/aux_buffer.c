/* luaL_Buffer: small and large contents, growth, nesting under the stack discipline,
   addvalue, buffinitsize/pushresultsize, prepbuffer, buffsub, gsub/addgsub, and errors
   while a buffer holds a box (its block is freed by __close; ASan checks the leak). */
#include "capi_test.h"

static unsigned long checksum(const char *s, size_t n) {
  unsigned long h = 5381;
  for (size_t i = 0; i < n; i++) h = h * 33 + (unsigned char)s[i];
  return h;
}

static void showTop(lua_State *L, const char *what) {
  size_t n;
  const char *s = lua_tolstring(L, -1, &n);
  if (n <= 60)
    printf("%s: [%s] len %zu\n", what, s, n);
  else
    printf("%s: len %zu sum %lu head [%.20s] tail [%s]\n", what, n, checksum(s, n), s,
           s + n - 20);
  lua_pop(L, 1);
}

static void smallBuffers(lua_State *L) {
  luaL_Buffer b;
  int top = lua_gettop(L);
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "hello");
  luaL_addchar(&b, ',');
  luaL_addchar(&b, ' ');
  luaL_addlstring(&b, "world!!!", 5);
  luaL_addlstring(&b, NULL, 0);
  printf("bufflen %zu\n", luaL_bufflen(&b));
  CHECK(memcmp(luaL_buffaddr(&b), "hello, world", 12) == 0);
  luaL_buffsub(&b, 1);
  lua_pushinteger(L, 42);
  luaL_addvalue(&b);
  lua_pushnumber(L, 2.5);
  luaL_addvalue(&b);
  lua_pushliteral(L, "");
  luaL_addvalue(&b);
  luaL_pushresult(&b);
  CHECK(lua_gettop(L) == top + 1);
  showTop(L, "small");

  luaL_buffinit(L, &b);
  luaL_pushresult(&b);
  showTop(L, "empty");

  char *p = luaL_buffinitsize(L, &b, 10);
  memcpy(p, "0123456789", 10);
  luaL_pushresultsize(&b, 10);
  showTop(L, "initsize");

  luaL_buffinit(L, &b);
  p = luaL_prepbuffer(&b);
  memcpy(p, "prep", 4);
  luaL_addsize(&b, 4);
  luaL_pushresult(&b);
  showTop(L, "prepbuffer");
  CHECK(lua_gettop(L) == top);
}

/* Grows past LUAL_BUFFERSIZE one character at a time, then by big pieces. */
static void largeBuffers(lua_State *L) {
  luaL_Buffer b;
  int top = lua_gettop(L);
  luaL_buffinit(L, &b);
  for (int i = 0; i < 3 * LUAL_BUFFERSIZE + 7; i++) luaL_addchar(&b, 'a' + i % 26);
  luaL_pushresult(&b);
  showTop(L, "chars");

  luaL_buffinit(L, &b);
  char piece[1000];
  for (int i = 0; i < 1000; i++) piece[i] = (char)('0' + i % 10);
  for (int i = 0; i < 1000; i++) {
    luaL_addlstring(&b, piece, (size_t)(i % 1000) + 1);
    if (i % 100 == 0) {
      lua_pushfstring(L, "<%d>", i);
      luaL_addvalue(&b);
    }
  }
  luaL_pushresult(&b);
  showTop(L, "pieces");

  size_t big = (size_t)3 << 20;
  char *p = luaL_buffinitsize(L, &b, big);
  for (size_t i = 0; i < big; i++) p[i] = (char)('A' + i % 23);
  luaL_pushresultsize(&b, big);
  showTop(L, "initsize big");

  /* addvalue of a value bigger than what is left, right after growth */
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '[');
  lua_pushstring(L, luaL_gsub(L, "x", "x", "y"));
  lua_remove(L, -2);
  luaL_addvalue(&b);
  for (int i = 0; i < 5; i++) {
    luaL_Buffer piece2;
    luaL_buffinit(L, &piece2);
    for (int j = 0; j < 700 * (i + 1); j++) luaL_addchar(&piece2, (char)('a' + (i + j) % 26));
    luaL_pushresult(&piece2);
    luaL_addvalue(&b);
  }
  luaL_addchar(&b, ']');
  luaL_pushresult(&b);
  showTop(L, "addvalue big");
  CHECK(lua_gettop(L) == top);
}

/* A buffer inside another's lifetime: the inner one is begun and finished above the
   outer one's slot. Two levels, both growing into boxes. */
static void nestedBuffers(lua_State *L) {
  luaL_Buffer outer;
  int top = lua_gettop(L);
  luaL_buffinit(L, &outer);
  for (int round = 0; round < 4; round++) {
    luaL_Buffer inner;
    luaL_buffinit(L, &inner);
    for (int i = 0; i < 600 * round + 5; i++) {
      luaL_Buffer innermost;
      luaL_buffinit(L, &innermost);
      luaL_addchar(&innermost, (char)('a' + round));
      luaL_addchar(&innermost, (char)('0' + i % 10));
      luaL_pushresult(&innermost);
      luaL_addvalue(&inner);
    }
    luaL_pushresult(&inner);
    luaL_addvalue(&outer);
    luaL_addchar(&outer, '|');
  }
  luaL_pushresult(&outer);
  showTop(L, "nested");
  CHECK(lua_gettop(L) == top);
}

static void gsubs(lua_State *L) {
  printf("gsub: [%s]\n", luaL_gsub(L, "a.b.c..d", ".", "::"));
  printf("gsub none: [%s]\n", luaL_gsub(L, "abc", "x", "y"));
  printf("gsub all: [%s]\n", luaL_gsub(L, "xxxx", "xx", ""));
  printf("gsub edge: [%s]\n", luaL_gsub(L, "%s-%s", "%s", "LONGER REPLACEMENT"));
  lua_pop(L, 4);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "path=");
  luaL_addgsub(&b, "./?.lua;./?/init.lua", "?", "mod/name");
  luaL_pushresult(&b);
  showTop(L, "addgsub");
  /* a replacement long enough to box the buffer */
  char rep[3000];
  memset(rep, 'r', sizeof rep - 1);
  rep[sizeof rep - 1] = '\0';
  luaL_gsub(L, "?-?-?", "?", rep);
  showTop(L, "gsub big");
}

/* Raises after the buffer has boxed its bytes, and after it has not. */
static int failingBuild(lua_State *L) {
  luaL_Buffer b;
  int big = (int)lua_tointeger(L, 1);
  luaL_buffinit(L, &b);
  for (int i = 0; i < big; i++) luaL_addchar(&b, 'z');
  lua_pushinteger(L, big);
  return luaL_error(L, "failed after %d chars", big);
}

/* A C function that builds a big string under a Lua caller that collects. */
static int buildWhileCollecting(lua_State *L) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; i < 50; i++) {
    lua_getglobal(L, "produce");
    lua_pushinteger(L, i);
    lua_call(L, 1, 1);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return 1;
}

static int tooLarge(lua_State *L) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, 'x');
  luaL_prepbuffsize(&b, (size_t)-1);
  return 0;
}

static void errorsAndCollection(lua_State *L) {
  int top = lua_gettop(L);
  lua_pushcfunction(L, tooLarge);
  showStatus(L, "too large", lua_pcall(L, 0, 0, 0));
  for (int size = 10; size <= 100000; size *= 100) {
    lua_pushcfunction(L, failingBuild);
    lua_pushinteger(L, size);
    showStatus(L, "failing build", lua_pcall(L, 1, 0, 0));
  }
  CHECK(lua_gettop(L) == top);
  runLua(L, "function produce(i) collectgarbage() return string.rep(tostring(i), 100) end");
  lua_pushcfunction(L, buildWhileCollecting);
  showStatus(L, "build while collecting", lua_pcall(L, 0, 1, 0));
  showTop(L, "collected build");
  lua_gc(L, LUA_GCCOLLECT);
  CHECK(lua_gettop(L) == top);
}

int main(void) {
  lua_State *L = luaL_newstate();
  CHECK(L != NULL);
  luaL_openlibs(L);
  printf("LUAL_BUFFERSIZE %d sizeof(luaL_Buffer) %zu\n", (int)LUAL_BUFFERSIZE, sizeof(luaL_Buffer));
  smallBuffers(L);
  largeBuffers(L);
  nestedBuffers(L);
  gsubs(L);
  errorsAndCollection(L);
  lua_close(L);
  return 0;
}
