/* Loading: luaL_loadfilex (a '#' first line, a UTF-8 BOM, both, a partial BOM, binary
   chunks with and without '#', modes, missing files and directories), luaL_loadbufferx,
   luaL_loadstring, luaL_dofile, luaL_dostring. Files are written in the current folder
   (compare.py runs each program in an empty temporary one). */
#include "capi_test.h"

static void writeFile(const char *name, const char *bytes, size_t n) {
  FILE *f = fopen(name, "wb");
  CHECK(f != NULL);
  CHECK(fwrite(bytes, 1, n, f) == n);
  fclose(f);
}

static void writeText(const char *name, const char *text) { writeFile(name, text, strlen(text)); }

/* Loads name with mode and runs it, printing what it returns or the error. */
static void loadAndRun(lua_State *L, const char *name, const char *mode) {
  int top = lua_gettop(L);
  int status = luaL_loadfilex(L, name, mode);
  printf("loadfilex(%s, %s) -> %d, top +%d\n", name ? name : "NULL", mode ? mode : "NULL",
         status, lua_gettop(L) - top);
  if (status != LUA_OK) {
    showStatus(L, "  load", status);
    return;
  }
  status = lua_pcall(L, 0, 1, 0);
  if (status != LUA_OK) {
    showStatus(L, "  run", status);
    return;
  }
  printf("  returned %s\n", luaL_tolstring(L, -1, NULL));
  lua_pop(L, 2);
}

typedef struct Bytes {
  char *data;
  size_t n;
} Bytes;

static int writer(lua_State *L, const void *p, size_t sz, void *ud) {
  Bytes *bytes = (Bytes *)ud;
  bytes->data = (char *)realloc(bytes->data, bytes->n + sz);
  CHECK(bytes->data != NULL);
  memcpy(bytes->data + bytes->n, p, sz);
  bytes->n += sz;
  return 0;
}

/* Pushes the dump of a function compiled from code as a string. */
static void pushDump(lua_State *L, const char *code) {
  Bytes bytes = {NULL, 0};
  CHECK(luaL_loadstring(L, code) == LUA_OK);
  CHECK(lua_dump(L, writer, &bytes, 0) == 0);
  lua_pop(L, 1);
  lua_pushlstring(L, bytes.data, bytes.n);
  free(bytes.data);
}

static void files(lua_State *L) {
  writeText("plain.lua", "local a = ... return 'plain ' .. tostring(a)");
  loadAndRun(L, "plain.lua", NULL);
  writeText("hash.lua", "#!/usr/bin/env lua\nreturn debug.getinfo(1, 'l').currentline");
  loadAndRun(L, "hash.lua", NULL);
  writeText("hashonly.lua", "# nothing but a comment");
  loadAndRun(L, "hashonly.lua", NULL);
  writeText("bom.lua", "\xEF\xBB\xBFreturn 'after bom ' .. debug.getinfo(1, 'l').currentline");
  loadAndRun(L, "bom.lua", NULL);
  writeText("bomhash.lua", "\xEF\xBB\xBF# comment\n\nreturn 'bom and hash ' .. debug.getinfo(1, 'l').currentline");
  loadAndRun(L, "bomhash.lua", NULL);
  writeText("partialbom.lua", "\xEF\xBBreturn 1");
  loadAndRun(L, "partialbom.lua", NULL);
  writeText("empty.lua", "");
  loadAndRun(L, "empty.lua", NULL);
  writeText("syntax.lua", "\n\nreturn +");
  loadAndRun(L, "syntax.lua", NULL);
  writeText("runtime.lua", "local t = nil\nreturn t.x");
  loadAndRun(L, "runtime.lua", NULL);
  loadAndRun(L, "plain.lua", "b");
  loadAndRun(L, "plain.lua", "t");
  loadAndRun(L, "plain.lua", "bt");
  loadAndRun(L, "does-not-exist.lua", NULL);
  loadAndRun(L, ".", NULL);

  /* a long file, read in many pieces */
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "local s = 0\n");
  for (int i = 0; i < 5000; i++) {
    lua_pushfstring(L, "s = s + %d -- padding padding padding padding\n", i);
    luaL_addvalue(&b);
  }
  luaL_addstring(&b, "return s");
  luaL_pushresult(&b);
  size_t len;
  const char *text = lua_tolstring(L, -1, &len);
  writeFile("long.lua", text, len);
  lua_pop(L, 1);
  loadAndRun(L, "long.lua", "t");

  pushDump(L, "return 'from binary', ...");
  text = lua_tolstring(L, -1, &len);
  writeFile("chunk.luac", text, len);
  loadAndRun(L, "chunk.luac", NULL);
  loadAndRun(L, "chunk.luac", "t");
  loadAndRun(L, "chunk.luac", "b");
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "#!/bin/weft\n");
  luaL_addlstring(&b, text, len);
  luaL_pushresult(&b);
  size_t hashLen;
  const char *hashText = lua_tolstring(L, -1, &hashLen);
  writeFile("hashchunk.luac", hashText, hashLen);
  lua_pop(L, 1);
  loadAndRun(L, "hashchunk.luac", NULL);
  writeFile("truncated.luac", lua_tostring(L, -1), len / 2);
  lua_pop(L, 1);
  loadAndRun(L, "truncated.luac", NULL);

  writeText("stdin.lua", "#!shebang\nreturn 'from ' .. debug.getinfo(1, 'S').source .. ' line ' .. debug.getinfo(1, 'l').currentline");
  CHECK(freopen("stdin.lua", "r", stdin) != NULL);
  loadAndRun(L, NULL, NULL);

  int status;
  writeText("dofile.lua", "x = (x or 0) + 1; return x");
  printf("dofile -> %d", luaL_dofile(L, "dofile.lua"));
  printf(" result %d\n", (int)lua_tointeger(L, -1));
  lua_pop(L, 1);
  status = luaL_dofile(L, "missing.lua");
  printf("dofile missing -> %d: %s\n", status, lua_tostring(L, -1));
  lua_pop(L, 1);
}

static void buffers(lua_State *L) {
  int status = luaL_loadbufferx(L, "return 1 + ...", 14, "=buffer", "t");
  printf("loadbufferx -> %d\n", status);
  lua_pushinteger(L, 41);
  lua_call(L, 1, 1);
  printf("  returned %d\n", (int)lua_tointeger(L, -1));
  lua_pop(L, 1);
  showStatus(L, "loadbufferx syntax", luaL_loadbufferx(L, "return return", 13, "@virtual.lua", NULL));
  showStatus(L, "loadbuffer named", luaL_loadbuffer(L, "x = = 1", 7, "chunkname"));
  showStatus(L, "loadbufferx mode b", luaL_loadbufferx(L, "return 1", 8, "=b", "b"));
  showStatus(L, "loadbuffer prefix", luaL_loadbuffer(L, "return 7 trailing garbage", 8, "=cut"));
  lua_call(L, 0, 1);
  printf("  prefix returned %d\n", (int)lua_tointeger(L, -1));
  lua_pop(L, 1);
  showStatus(L, "loadbuffer empty", luaL_loadbuffer(L, NULL, 0, "=empty"));
  lua_pop(L, 1);
  showStatus(L, "loadstring error", luaL_loadstring(L, "local x = "));
  showStatus(L, "loadstring long name",
             luaL_loadstring(L, "-- a long first line that will not fit in a short source name\nerror('boom')"));
  showStatus(L, "  run", lua_pcall(L, 0, 0, 0));

  pushDump(L, "return 'dumped'");
  size_t len;
  const char *bin = lua_tolstring(L, -1, &len);
  showStatus(L, "binary buffer mode t", luaL_loadbufferx(L, bin, len, "=bin", "t"));
  showStatus(L, "binary buffer", luaL_loadbufferx(L, bin, len, "=bin", NULL));
  lua_call(L, 0, 1);
  printf("  returned %s\n", lua_tostring(L, -1));
  lua_pop(L, 2);

  printf("dostring -> %d\n", luaL_dostring(L, "y = 10"));
  status = luaL_dostring(L, "error('dostring failed')");
  printf("dostring error -> %d: %s\n", status, lua_tostring(L, -1));
  lua_pop(L, 1);
}

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  files(L);
  buffers(L);
  printf("final top %d\n", lua_gettop(L));
  lua_close(L);
  return 0;
}
