// lua.hpp: the Lua 5.4 C API for C++ code (C linkage for every declaration).
extern "C" {
#include "lua.h"
#include "lualib.h"
#include "lauxlib.h"
}
