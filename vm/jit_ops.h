// The opcodes compiled code never runs (docs/design/jit.md, "Guards and exits") and the
// open-result pairs it does run, shared
// by the compiler (jit/lower.cpp `supported`: it exits at them) and the VM's coarse test
// of what is worth compiling (vm/jit_loops.cpp `leavesCode`: a path stops at them), so the VM
// does not load LLVM for a loop that would leave compiled code every round.
#pragma once

#include "frontend/opcodes.h"

namespace weft::vm {

constexpr bool jitNeverCompiles(frontend::Op op) {
  using frontend::Op;
  switch (op) {
    case Op::LOADKX: case Op::TBC: case Op::CLOSURE: case Op::VARARG: case Op::VARARGPREP:
      return true;
    default:
      return false;
  }
}

// A CALL of open results (C = 0) whose results the instruction after it takes whole:
// a SETLIST or a RETURN (that closes nothing) of the values up to the top, or a CALL of
// open arguments (B = 0: `f(g(x))`); or a TAILCALL that closes nothing and the RETURN
// of the values up to the top after it, which runs when the callee is a native (the
// interpreter calls it in place, for all its results). Compiled code runs the pair
// (docs/design/jit.md, "Open results", "Native tail calls"); any other open call, and
// either instruction alone, it leaves to the interpreter.
constexpr bool jitOpenResultsTaken(frontend::Instruction call, frontend::Instruction next) {
  using frontend::Op;
  Op op = frontend::getOp(next);
  bool returnAll = op == Op::RETURN && frontend::getB(next) == 0 && !frontend::getK(next);
  if (frontend::getOp(call) == Op::TAILCALL) return !frontend::getK(call) && returnAll;
  bool openList = (op == Op::SETLIST || op == Op::CALL) && frontend::getB(next) == 0;
  return frontend::getOp(call) == Op::CALL && frontend::getC(call) == 0 && (returnAll || openList);
}

}  // namespace weft::vm
