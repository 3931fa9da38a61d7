// Weft's binary chunk format (string.dump, luac-style precompiled files).
//
// Layout: the header "\x1bLua", version 0x54, format 0x57 ('W', so PUC Lua chunks and
// ours reject each other), the 6-byte LUAC_DATA check, the sizes of Instruction,
// int64 and double, a test integer 0x5678 and a test float 370.5; then the byte count
// of main upvalues and the main function. Integers in the body are LEB128 varints
// (signed ones zig-zag encoded); instructions are 4 bytes little endian.
//
// Invariants:
//  1. undumpChunk never crashes and never allocates more than a small multiple of the
//     input size: every length is checked against the bytes that remain.
//  2. Whatever undumpChunk returns has passed verifyProto(): a corrupt or hostile
//     chunk is an error value ("name: bad binary format (...)"), never executed.
//  3. Nesting of prototypes is limited (kMaxChunkNesting) so recursion stays shallow.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "frontend/proto.h"
#include "weft/status.h"

namespace weft::frontend {

inline constexpr char kChunkSignature[] = "\x1bLua";
inline constexpr uint8_t kChunkVersion = 0x54;
inline constexpr uint8_t kChunkFormat = 0x57;
inline constexpr int kMaxChunkNesting = 200;

// Serialises a tree. stripDebug drops line info, local names and upvalue names.
std::string dumpChunk(const ProtoData& proto, bool stripDebug);

// Loads a chunk produced by dumpChunk. chunkName names the chunk in error messages the
// way Lua does ("@f.luac" -> "f.luac"; a name starting with ESC -> "binary string").
Expected<std::unique_ptr<ProtoData>> undumpChunk(std::string_view bytes, std::string_view chunkName);

}  // namespace weft::frontend
