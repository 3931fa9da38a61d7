// The compiler's entry point: Lua 5.4 source text to a ProtoData tree.
#pragma once

#include <memory>
#include <string_view>

#include "frontend/proto.h"
#include "weft/status.h"

namespace weft::frontend {

// Compiles a main chunk. chunkName is the source name as Lua has it ("@file.lua",
// "=stdin", or the text itself for strings); error messages use its short form.
// On a syntax error the Error carries kSyntaxError and Lua's message, e.g.
// "input:3: 'end' expected (to close 'function' at line 1) near <eof>".
// The main function is vararg and has one upvalue, _ENV.
Expected<std::unique_ptr<ProtoData>> compile(std::string_view source, std::string_view chunkName);

// Lua's short source name ("input" for "@input", a quoted prefix for strings), at most
// kIdSize-1 bytes, as used in messages and tracebacks.
inline constexpr size_t kIdSize = 60;
std::string shortSourceName(std::string_view chunkName);

}  // namespace weft::frontend
