// Debug information for messages: variable descriptions ("local 'x'", "global 'f'"),
// function names as call sites name them, current lines, and tracebacks in lua5.4's
// format. Everything here reads frames and prototypes only; nothing collects.
#pragma once

#include <cstdint>
#include <string>

#include "vm/thread.h"

namespace weft::vm {

// Where an operand of the running instruction came from, for error messages.
struct VarRef {
  enum Kind : uint8_t { None, Register, Upvalue } kind = None;
  uint16_t index = 0;
  static VarRef none() { return {}; }
  static VarRef reg(int r) { return {Register, uint16_t(r)}; }
  static VarRef upval(int u) { return {Upvalue, uint16_t(u)}; }
};

// " (local 'x')", " (global 'f')", ... for the operand of the top Lua frame's current
// instruction, or "" when nothing is known.
std::string varInfo(ThreadData* t, VarRef ref);

// " (local 'f')", " (metamethod 'add')", ... for the value that the top Lua frame's
// current instruction calls, named as the instruction names it (a CALL its callee, an
// arithmetic instruction its metamethod), or "" when the top frame is a native's.
std::string callInfo(ThreadData* t);

// The current line of a Lua frame (-1 for natives and for stripped functions).
int currentLine(ThreadData* t, const CallFrame& f);
// getinfo's 'r': the values frame `frameIdx` transfers while its call or return hook
// runs (the frame above it is the hook's), as {first local index, count}; else {0, 0}.
struct Transfer {
  int first = 0;
  int count = 0;
};
Transfer hookTransfer(const ThreadData* t, int frameIdx);
int currentPc(const CallFrame& f, const Proto* p);
Proto* frameProto(ThreadData* t, const CallFrame& f);

// Name of the function of frame `frameIndex` as its caller names it: returns the kind
// ("global", "local", "method", "field", "upvalue", "metamethod", "for iterator", "")
// and sets `name`.
const char* frameFunctionName(ThreadData* t, uint32_t frameIndex, std::string& name);
// A global name for a function value ("string.rep", "print") found in package.loaded,
// or empty.
std::string globalFunctionName(State& S, const Value& fn);

// Index of the frame `level` levels below the top (level 0: the top frame), skipping
// protected marker frames; -1 when there is no such level.
int frameAtLevel(ThreadData* t, int level);

// Name of the n-th local active at `pc` (1-based), as Lua numbers them; nullptr if none.
// Names live in the prototype's debug information (stable while it lives).
const char* activeLocalName(const Proto* p, int64_t n, int pc);
// Name of local `n` of frame `frameIdx` and its stack index, like lua_getlocal: named
// locals, negative n for varargs, then any other slot of the frame as a temporary.
const char* frameLocal(ThreadData* t, int frameIdx, int64_t n, uint32_t& index);
// lua5.4's traceback text ("stack traceback:\n\t..."), starting at `level`.
std::string traceback(State& S, ThreadData* t, std::string_view message, int level, bool hasMessage);

}  // namespace weft::vm
