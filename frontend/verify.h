// Structural validation of a ProtoData tree, so that code from an untrusted binary
// chunk can never make the interpreter read or write outside a frame, a constant
// table or the code array. undumpChunk() runs it on everything it loads.
//
// What it checks, for every function of the tree (proto.h invariants 1-3, opcodes.h
// invariants 1-3, and the conventions the interpreter relies on):
//  1. code.size() == lineinfo.size(), the code is not empty and ends in a return.
//  2. Every register an instruction names (including ranges such as CALL's arguments
//     and results, CONCAT, LOADNIL, the FORPREP/TFORPREP blocks) is < maxStackSize;
//     every constant, upvalue and prototype index is in range and of the right type.
//  3. Jumps land inside the code and never on an EXTRAARG; FORPREP/FORLOOP and
//     TFORPREP/TFORCALL/TFORLOOP pair up; tests are followed by JMP, arithmetic by
//     MMBIN*, LOADKX/NEWTABLE/SETLIST(k) by EXTRAARG.
//  4. "To top" operands (B == 0 of CALL, TAILCALL, RETURN, SETLIST) directly follow an
//     open CALL/VARARG (C == 0), and an open result is always consumed that way.
//  5. Vararg conventions: VARARGPREP first iff the function is vararg; RETURN/TAILCALL
//     carry C = numParams+1 in vararg functions and 0 otherwise; RETURN0/RETURN1 only in
//     functions that neither are vararg nor need to close variables.
//  6. Nested upvalue descriptors name registers or upvalues that exist in the parent.
#pragma once

#include <optional>
#include <string>

#include "frontend/proto.h"

namespace weft::frontend {

// nullopt when the tree is valid, otherwise a short description of the first problem.
std::optional<std::string> verifyProto(const ProtoData& proto);

}  // namespace weft::frontend
