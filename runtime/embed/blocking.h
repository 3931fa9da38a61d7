// Runtime::blockingFunction's C side (blocking.cpp), used by weft.cpp.
#pragma once

#include "weft/lua/lua.h"

namespace weft::embed {

// Pushes a C closure calling the Runtime::BlockingFn at light userdata 1, which it moves
// from (a C function run under weft.cpp's protect: it may raise "not enough memory").
int newBlockingFunctionOp(lua_State* L);

}  // namespace weft::embed
