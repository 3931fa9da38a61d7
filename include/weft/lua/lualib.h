/*
** lualib.h: Lua 5.4's standard libraries as C functions (reference manual section 6).
** Each luaopen_* pushes its library table (the base library pushes the global table);
** luaL_openlibs opens them all into a state, as lua.c does.
*/
#ifndef lualib_h
#define lualib_h

#include "lua.h"

/* Suffix of versioned environment variables (LUA_PATH_5_4, LUA_CPATH_5_4, LUA_INIT_5_4). */
#define LUA_VERSUFFIX "_" LUA_VERSION_MAJOR "_" LUA_VERSION_MINOR

LUAMOD_API int (luaopen_base)(lua_State *L);

#define LUA_COLIBNAME "coroutine"
LUAMOD_API int (luaopen_coroutine)(lua_State *L);

#define LUA_TABLIBNAME "table"
LUAMOD_API int (luaopen_table)(lua_State *L);

#define LUA_IOLIBNAME "io"
LUAMOD_API int (luaopen_io)(lua_State *L);

#define LUA_OSLIBNAME "os"
LUAMOD_API int (luaopen_os)(lua_State *L);

#define LUA_STRLIBNAME "string"
LUAMOD_API int (luaopen_string)(lua_State *L);

#define LUA_UTF8LIBNAME "utf8"
LUAMOD_API int (luaopen_utf8)(lua_State *L);

#define LUA_MATHLIBNAME "math"
LUAMOD_API int (luaopen_math)(lua_State *L);

#define LUA_DBLIBNAME "debug"
LUAMOD_API int (luaopen_debug)(lua_State *L);

#define LUA_LOADLIBNAME "package"
LUAMOD_API int (luaopen_package)(lua_State *L);

/* Opens every standard library into L (globals and package.loaded). */
LUALIB_API void (luaL_openlibs)(lua_State *L);

#endif
