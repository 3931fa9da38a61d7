// Register dataflow over one prototype's bytecode, for the lowering (jit/lower.cpp; docs/
// design/jit.md, "Registers between safepoints"). Compiled code writes most registers
// through to their slots as it computes them; the registers of loops (those a loop
// carries round, and every register a small loop writes) it keeps in machine registers
// (lazy) and writes back at each exit those it may have written since it was entered
// (dirty). It loads at each entry the registers whose slot value it may still read or
// write back (live).
//
// Invariants:
//  1. dirtyIn[pc] holds every lazy register that some path from an entry to pc may
//     have written: an exit at pc that stores dirtyIn[pc] leaves the frame exact, the
//     other registers being in their slots since their writes.
//  2. liveIn[pc] holds every register that some path from pc may read before writing it,
//     an exit's write-back counting as a read: loading liveIn[e] at entry e makes every
//     value the code reads or writes back the frame's.
//  3. `def` holds only registers written on every path out of an instruction that stays
//     in compiled code; a guard exit happens before its instruction writes anything.
#pragma once

#include <bitset>
#include <cstdint>
#include <vector>

#include "frontend/opcodes.h"
#include "vm/jit_abi.h"
#include "vm/jit_ops.h"

namespace weft::jit {

using RegSet = std::bitset<256>;

struct PcFlow {
  RegSet use;      // read by the instruction (operands, and operands a helper reads from their slots)
  RegSet def;      // written on every path that stays in the code
  RegSet mayDef;   // written on some path
  uint32_t succ[2] = {0, 0};
  uint8_t numSucc = 0;
  // May leave the code at this pc (a guard, a helper, an instruction not compiled), or
  // at a backward jump's poll after its own writes.
  bool exits = false;
};

struct Flow {
  std::vector<PcFlow> pcs;
  std::vector<RegSet> dirtyIn, dirtyOut, liveIn;
  RegSet touched;  // every register any instruction reads or writes
  RegSet lazy;     // kept in machine registers until an exit; the others are written through
};

// `compiled[pc]`: the lowering compiles the instruction (else it is an exit at pc).
Flow analyseFlow(const WeftJitRequest& req, const std::vector<uint8_t>& compiled);

inline bool isTest(frontend::Op op) {
  using frontend::Op;
  return (op >= Op::EQ && op <= Op::GEI) || op == Op::TEST || op == Op::TESTSET;
}
inline bool isArith(frontend::Op op) { return op >= frontend::Op::ADDI && op <= frontend::Op::SHR; }
// The arithmetic instructions whose right operand is a register (not an immediate or constant).
inline bool arithRegOperand(frontend::Op op) {
  using frontend::Op;
  return !(op == Op::ADDI || op == Op::SHRI || op == Op::SHLI || (op >= Op::ADDK && op <= Op::BXORK));
}

// 2 for an instruction whose second half follows it (a test's jump, an arithmetic
// instruction's MMBIN, an EXTRAARG), else 1.
inline uint32_t instructionLength(const WeftJitRequest& req, uint32_t pc) {
  using frontend::Op;
  frontend::Instruction i = req.code[pc];
  Op op = frontend::getOp(i);
  bool extra = op == Op::LOADKX || op == Op::NEWTABLE || (op == Op::SETLIST && frontend::getK(i));
  return isTest(op) || isArith(op) || extra ? 2 : 1;
}

// The target of the jump that follows a test at pc, or of a JMP at pc.
uint32_t jumpTarget(const WeftJitRequest& req, uint32_t jmpPc);

// Whether the TAILCALL at pc calls a native in compiled code, which goes on to the
// RETURN of its results after it (docs/design/jit.md, "Native tail calls"): the
// feedback saw natives (not known ones at a tail call: vm/jit.cpp calleeBits), or
// without feedback (eager mode) the callee may turn out to be one.
bool nativeTailCall(const WeftJitRequest& req, uint32_t pc);

}  // namespace weft::jit
