// The opcodes compiled code never runs (docs/design/jit.md, "Guards and exits"), shared
// by the compiler (jit/lower.cpp `supported`: it exits at them) and the VM's coarse test
// of what is worth compiling (vm/jit.cpp `leavesCode`: a path stops at them), so the VM
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

}  // namespace weft::vm
