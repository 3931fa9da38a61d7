/* luaL_Stream and LUA_FILEHANDLE, as C modules use them (lfs.lock, luaposix's fdopen):
   the io library's handles are userdata whose payload starts with a luaL_Stream, found
   with luaL_checkudata(L, i, LUA_FILEHANDLE); a module can make a handle of its own that
   the io library's methods accept, closing it through its closef. */
#include "capi_test.h"

static int writeThrough(lua_State *L) {
  luaL_Stream *s = (luaL_Stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
  const char *text = luaL_checkstring(L, 2);
  if (s->closef == NULL) return luaL_error(L, "attempt to use a closed file");
  fputs(text, s->f);
  fflush(s->f);
  lua_pushboolean(L, 1);
  return 1;
}

static int closedByModule(lua_State *L) {
  luaL_Stream *s = (luaL_Stream *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
  int res = fclose(s->f);
  return luaL_fileresult(L, res == 0, NULL);
}

static int openHandle(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  luaL_Stream *s = (luaL_Stream *)lua_newuserdatauv(L, sizeof(luaL_Stream), 0);
  s->closef = NULL;
  luaL_setmetatable(L, LUA_FILEHANDLE);
  s->f = fopen(name, "w+");
  if (s->f == NULL) return luaL_fileresult(L, 0, name);
  s->closef = closedByModule;
  return 1;
}

static const char *script =
    "print(pcall(writeThrough, io.stdout, 'through the stream of io.stdout\\n'))\n"
    "local f = assert(io.open('made-by-io.txt', 'w'))\n"
    "print(writeThrough(f, 'written by C\\n'))\n"
    "f:write('written by Lua\\n') f:close()\n"
    "print(pcall(writeThrough, f, 'after close'))\n"
    "print(pcall(writeThrough, {}, 'x'))\n"
    "for line in io.lines('made-by-io.txt') do print('read back: ' .. line) end\n"
    "local h = openHandle('made-by-module.txt')\n"
    "print(io.type(h), tostring(h):match('^file %('))\n"
    "h:write('line one\\n', 2, '\\n') h:seek('set') print(h:read('l'), h:read('n'))\n"
    "print(h:close()) print(io.type(h))\n"
    "print(pcall(h.write, h, 'x'))\n";

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_register(L, "writeThrough", writeThrough);
  lua_register(L, "openHandle", openHandle);
  runLua(L, script);
  lua_close(L);
  return 0;
}
