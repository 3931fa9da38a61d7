/*
** The C module loader in a luaL_openlibs state of a host linked against the shared
** library (for Weft, libweft.so; tests/capi/CMakeLists.txt): Debian's lua-lpeg,
** lua-cjson and lua-filesystem, found on the default package.cpath, resolve the C API
** against it, and package.loadlib and require report failures as Lua does.
*/
#include "capi_test.h"

int main(void) {
  lua_State *L = luaL_newstate();
  CHECK(L != NULL);
  luaL_openlibs(L);
  runLua(L, "print(package.cpath)");
  runLua(L, "print(type(package.loadlib), #package.searchers)");
  runLua(L, "local lfs, file = require 'lfs' print(file, lfs.attributes('/', 'mode'))");
  runLua(L, "local cjson = require 'cjson' print(cjson.encode(cjson.decode('[1,\"two\",{\"three\":3}]')))");
  runLua(L, "local lpeg = require 'lpeg' print(lpeg.match(lpeg.C(lpeg.R'az'^1) * ' ' * lpeg.Cp(), 'hello world'))");
  runLua(L, "print(package.loadlib('/nonexistent/lib.so', '*'))");
  runLua(L, "print(pcall(require, 'lfs.nothing'))");
  lua_close(L);
  return 0;
}
