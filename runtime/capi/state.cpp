// States and threads of the C API: lua_newstate, lua_close, lua_newthread, lua_version.
#include "runtime/capi/capi.h"

const char lua_ident[] = "$LuaVersion: " LUA_RELEASE " $";

LUA_API lua_Number lua_version(lua_State*) { return LUA_VERSION_NUM; }
