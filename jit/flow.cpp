// Register dataflow for the lowering (jit/flow.h). Each case lists what the lowering of
// that instruction (jit/lower.cpp, jit/lower_table.cpp) reads and writes; the two must
// change together.
#include "jit/flow.h"

#include <algorithm>

namespace weft::jit {
namespace {

using frontend::Op;
using namespace frontend;

PcFlow flowOf(const WeftJitRequest& req, uint32_t pc, bool compiled) {
  PcFlow f;
  Instruction i = req.code[pc];
  Op op = getOp(i);
  int a = getA(i);
  auto next = [&](uint32_t s) { f.succ[f.numSucc++] = s; };
  if (!compiled) {
    f.exits = true;
    return f;
  }
  switch (op) {
    case Op::MOVE: case Op::UNM: case Op::NOT: case Op::BNOT:
      f.use.set(getB(i));
      f.def.set(a);
      f.exits = op == Op::UNM || op == Op::BNOT;
      next(pc + 1);
      break;
    case Op::LOADI: case Op::LOADF: case Op::LOADK: case Op::LOADFALSE: case Op::LOADTRUE:
      f.def.set(a);
      next(pc + 1);
      break;
    case Op::LFALSESKIP:
      f.def.set(a);
      next(pc + 2);
      break;
    case Op::LOADNIL:
      for (int r = a; r <= a + getB(i); r++) f.def.set(r);
      next(pc + 1);
      break;
    case Op::JMP:
      next(jumpTarget(req, pc));
      f.exits = f.succ[0] <= pc;  // a backward jump polls
      break;
    case Op::GETUPVAL: case Op::GETTABUP:
      f.def.set(a);
      f.exits = true;
      next(pc + 1);
      break;
    case Op::GETTABLE:
      f.use.set(getC(i));
      [[fallthrough]];
    case Op::GETI: case Op::GETFIELD:
      f.use.set(getB(i));
      f.def.set(a);
      f.exits = true;
      next(pc + 1);
      break;
    case Op::SETTABUP:
    case Op::SETTABLE:
    case Op::SETI:
    case Op::SETFIELD:
      if (op != Op::SETTABUP) f.use.set(a);  // SETTABUP's A is an upvalue
      if (op == Op::SETTABLE) f.use.set(getB(i));
      if (!getK(i)) f.use.set(getC(i));
      f.exits = true;
      next(pc + 1);
      break;
    case Op::LEN:
      f.use.set(getB(i));
      f.def.set(a);
      f.exits = true;
      next(pc + 1);
      break;
    case Op::SETUPVAL:  // the setUpval helper reads R[A] from its slot; it cannot fail
      f.use.set(a);
      next(pc + 1);
      break;
    case Op::SELF:  // the self helper (jit/lower_table.cpp)
      f.use.set(getB(i));
      if (!getK(i)) f.use.set(getC(i));
      f.def.set(a).set(a + 1);
      f.exits = true;
      next(pc + 1);
      break;
    case Op::CONCAT:  // the concat helper (jit/lower_table.cpp)
      for (int r = a; r < a + getB(i); r++) f.use.set(r);
      f.def.set(a);
      f.exits = true;
      next(pc + 1);
      break;
    case Op::NEWTABLE:  // the newTable helper (jit/lower_table.cpp)
      f.def.set(a);
      f.exits = true;
      next(pc + 2);
      break;
    case Op::SETLIST:  // of a fixed count, the setList helper
      for (int r = a; r <= a + getB(i); r++) f.use.set(r);
      f.exits = true;
      next(pc + instructionLength(req, pc));
      break;
    case Op::CLOSE:  // only where nothing is open (jit/lower_native.cpp)
      f.exits = true;
      next(pc + 1);
      break;
    case Op::TFORPREP:
      f.use.set(a + 3);
      f.exits = true;
      next(pc + 1 + getBx(i));
      break;
    case Op::TFORCALL:  // ipairs' iterator or next (jit/lower_native.cpp): both loop variables at least
      f.use.set(a).set(a + 1).set(a + 2);
      for (int r = a + 4; r < a + 4 + std::max(getC(i), 2); r++) f.def.set(r);
      f.exits = true;
      next(pc + 1);
      break;
    case Op::TFORLOOP:
      f.use.set(a + 4);
      f.mayDef.set(a + 2);
      f.exits = true;  // its back-edge polls
      next(pc + 1 - getBx(i));
      next(pc + 1);
      break;
    case Op::CALL:  // a known native computed in place, or a compiled call (jit/lower_call.cpp)
      f.use.set(a);  // open arguments (B = 0) are in their slots: the call before left them there
      for (int r = a; r < a + getB(i); r++) f.use.set(r);
      for (int r = a; r < a + getC(i) - 1; r++) f.def.set(r);
      f.exits = true;
      next(pc + 1);
      break;
    case Op::RETURN: case Op::RETURN1:
      for (int r = a; r < a + (op == Op::RETURN1 ? 1 : getB(i) - 1); r++) f.use.set(r);
      f.exits = true;
      break;
    case Op::TAILCALL:  // of a Lua function: the frame becomes the callee's; a native's goes on (jit/lower_call.cpp)
      for (int r = a; r < a + getB(i); r++) f.use.set(r);
      f.exits = true;
      if (nativeTailCall(req, pc)) next(pc + 1);
      break;
    case Op::FORPREP:
      f.use.set(a).set(a + 1).set(a + 2);
      f.mayDef.set(a + 1).set(a + 3);
      f.exits = true;
      next(pc + 1);
      next(pc + getBx(i) + 2);
      break;
    case Op::FORLOOP:
      f.use.set(a).set(a + 1).set(a + 2);
      f.mayDef.set(a).set(a + 1).set(a + 3);
      f.exits = true;  // its back-edge polls
      next(pc + 1 - getBx(i));
      next(pc + 1);
      break;
    default:
      if (isTest(op)) {
        f.exits = true;
        if (op == Op::TESTSET) {
          f.use.set(getB(i));
          f.mayDef.set(a);
        } else {
          f.use.set(a);
          if (op == Op::EQ || op == Op::LT || op == Op::LE) f.use.set(getB(i));
        }
        next(pc + 2);
        next(jumpTarget(req, pc + 1));
      } else if (isArith(op)) {
        f.use.set(getB(i));
        if (arithRegOperand(op)) f.use.set(getC(i));
        f.def.set(a);
        f.exits = true;
        next(pc + 2);
      } else {
        f.exits = true;
      }
      break;
  }
  return f;
}

// By pc, the registers some path from pc reads before writing them. With `writeBacks`,
// an exit at pc writes back (reads) dirtyIn[pc]; a poll at a backward jump writes back
// dirtyOut[pc], whose part beyond dirtyIn that path has just written.
std::vector<RegSet> readBeforeWritten(const Flow& fl, bool writeBacks) {
  std::vector<RegSet> in(fl.pcs.size());
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t pc = fl.pcs.size(); pc-- > 0;) {
      const PcFlow& f = fl.pcs[pc];
      RegSet out;
      for (uint8_t s = 0; s < f.numSucc; s++) out |= in[f.succ[s]];
      RegSet read = f.use | (out & ~f.def);
      if (writeBacks && f.exits) read |= fl.dirtyIn[pc];
      if (read != in[pc]) {
        in[pc] = read;
        changed = true;
      }
    }
  }
  return in;
}

// A loop of at most this many written registers keeps them all in machine registers.
constexpr size_t kLazyLoopRegisters = 12;

// Flow::lazy: the registers a loop carries (read at its header before written, and
// written in it), and every register a small loop writes.
RegSet lazyRegisters(const Flow& fl, uint32_t n) {
  std::vector<RegSet> readIn = readBeforeWritten(fl, false);
  RegSet lazy;
  for (uint32_t pc = 0; pc < n; pc++) {
    const PcFlow& f = fl.pcs[pc];
    for (uint8_t s = 0; s < f.numSucc; s++) {
      uint32_t header = f.succ[s];
      if (header > pc) continue;
      RegSet written;
      for (uint32_t q = header; q <= pc; q++) written |= fl.pcs[q].def | fl.pcs[q].mayDef;
      lazy |= written.count() <= kLazyLoopRegisters ? written : readIn[header] & written;
    }
  }
  return lazy;
}

}  // namespace

uint32_t jumpTarget(const WeftJitRequest& req, uint32_t jmpPc) {
  return uint32_t(int64_t(jmpPc) + 1 + getSJ(req.code[jmpPc]));
}

bool nativeTailCall(const WeftJitRequest& req, uint32_t pc) {
  return pc + 1 < req.codeSize && vm::jitOpenResultsTaken(req.code[pc], req.code[pc + 1]) &&
         (!req.profile || req.profile[pc] == kWeftJitSeenNativeFn);
}

Flow analyseFlow(const WeftJitRequest& req, const std::vector<uint8_t>& compiled) {
  uint32_t n = req.codeSize;
  Flow fl;
  fl.pcs.resize(n);
  for (uint32_t pc = 0; pc < n; pc++) {
    fl.pcs[pc] = flowOf(req, pc, compiled[pc]);
    PcFlow& f = fl.pcs[pc];
    // Successors past the end (verified code has none) are dropped: they exit.
    uint8_t kept = 0;
    for (uint8_t s = 0; s < f.numSucc; s++) {
      if (f.succ[s] < n) f.succ[kept++] = f.succ[s];
    }
    f.numSucc = kept;
    fl.touched |= f.use | f.def | f.mayDef;
  }
  fl.lazy = lazyRegisters(fl, n);
  // Forward: what may have been written since any entry (entries start clean), of the
  // lazy registers (the others are in their slots from their writes on).
  fl.dirtyIn.assign(n, RegSet());
  fl.dirtyOut.assign(n, RegSet());
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t pc = 0; pc < n; pc++) {
      const PcFlow& f = fl.pcs[pc];
      fl.dirtyOut[pc] = fl.dirtyIn[pc] | ((f.def | f.mayDef) & fl.lazy);
      for (uint8_t s = 0; s < f.numSucc; s++) {
        RegSet merged = fl.dirtyIn[f.succ[s]] | fl.dirtyOut[pc];
        if (merged != fl.dirtyIn[f.succ[s]]) {
          fl.dirtyIn[f.succ[s]] = merged;
          changed = true;
        }
      }
    }
  }
  // Backward: what may be read (a write-back included) before it is written.
  fl.liveIn = readBeforeWritten(fl, true);
  return fl;
}

}  // namespace weft::jit
