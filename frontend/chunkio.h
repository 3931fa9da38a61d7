// Binary chunks in Lua 5.4's format: what `luac5.4` writes and PUC Lua's string.dump
// returns, so chunks move both ways between Weft and lua5.4 (docs/design/bytecode.md).
//
// Layout (sizes as on every 64-bit little-endian host PUC Lua is built for):
//   header   "\x1bLua", version 0x54, format 0, LUAC_DATA "\x19\x93\r\n\x1a\n", the
//            sizes 4, 8, 8 of Instruction, lua_Integer and lua_Number, the integer
//            0x5678 and the float 370.5 (8 bytes each, little endian)
//   byte     number of upvalues of the main function
//   function source, linedefined, lastlinedefined, numparams, is_vararg, maxstacksize,
//            code, constants (tag byte: nil 0x00, false 0x01, true 0x11, integer 0x03,
//            float 0x13, short string 0x04, long string 0x14), upvalues (instack, idx,
//            kind), nested functions, then debug information: relative line bytes,
//            absolute line entries, local variables, upvalue names
// Counts and ints are "sizes": 7 bits a byte, most significant group first, the last
// byte marked by 0x80. A string is size 0 (none) or length+1 then its bytes. A nested
// function with its parent's source, and every function of a stripped chunk, has none.
// Lines are signed deltas from the previous instruction's line (from linedefined for
// the first); -128 marks an instruction whose line is an absolute (pc, line) entry,
// written when the delta does not fit or every 128 instructions, as luac does.
//
// Invariants:
//  1. undumpChunk never crashes and never allocates more than a small multiple of the
//     input size: every count is checked against the bytes that remain.
//  2. Whatever undumpChunk returns has passed verifyProto(): a corrupt or hostile
//     chunk is an error value ("name: bad binary format (...)"), never executed.
//     What ProtoData needs that the format lacks (an absolute line per instruction,
//     well-formed kinds) is derived on load and checked there.
//  3. Nesting of prototypes is limited (kMaxChunkNesting) so recursion stays shallow.
//  4. dumpChunk(compile(s)) is byte for byte what lua5.4's string.dump gives for s
//     wherever Weft's listing equals `luac5.4 -l -l` (tests/lua/chunk_luac.lua).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "frontend/proto.h"
#include "weft/status.h"

namespace weft::frontend {

inline constexpr char kChunkSignature[] = "\x1bLua";
inline constexpr uint8_t kChunkVersion = 0x54;
inline constexpr uint8_t kChunkFormat = 0;  // LUAC_FORMAT: the official format
inline constexpr int kMaxChunkNesting = 200;

// Serialises a tree. stripDebug drops sources, lines, local names and upvalue names.
std::string dumpChunk(const ProtoData& proto, bool stripDebug);

// Loads a chunk in Lua 5.4's format. chunkName names the chunk in error messages the
// way Lua does ("@f.luac" -> "f.luac"; a name starting with ESC -> "binary string").
// Bytes after the main function are ignored, as Lua ignores them.
Expected<std::unique_ptr<ProtoData>> undumpChunk(std::string_view bytes, std::string_view chunkName);

}  // namespace weft::frontend
