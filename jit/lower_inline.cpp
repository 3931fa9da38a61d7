// Calls compiled in place (docs/design/jit.md, "Inlined calls"). A CALL whose callee the
// VM found at the request (vm/jit.cpp resolveInlines) and whose body is straight numeric
// code (moves, number loads, + - * / ^ and unary minus on numbers, then one return) runs
// that body on the caller's registers, behind tests at the call: R[A] is a Lua function
// whose prototype has the resolved uid, every argument is a number, no hook is set and a
// frame would fit under maxCallDepth. Past them the body cannot fail, allocate, collect
// or be seen (no error, no hook, no safepoint), so it needs no frame: it computes what
// the interpreter's call would have, and the result lands in R[A]. A call the tests
// refuse is the ordinary compiled call.
#include <bitset>

#include "jit/lowering.h"

namespace weft::jit::lowering {

const WeftJitInline* Lowering::inlineAt(uint32_t pc) const {
  for (uint32_t k = 0; k < req_.inlineCount; k++) {
    if (req_.inlines[k].pc == pc) return &req_.inlines[k];
  }
  return nullptr;
}

// Whether the body is one the lowering below computes for `nargs` numbers and the call
// wants at most one result: each instruction reads only registers that hold numbers by
// then (the parameters, or what an earlier one wrote), and the first return ends it.
bool Lowering::inlinable(const WeftJitInline& c, int nargs, int nresults) const {
  if (c.isVararg || nargs < c.numParams || nresults < 0 || nresults > 1) return false;
  std::bitset<256> number;
  for (int r = 0; r < c.numParams; r++) number.set(r);
  auto numK = [&](int k) {
    return uint32_t(k) < c.numConstants && (c.constants[k].kind == kConstInt || c.constants[k].kind == kConstFloat);
  };
  // An arithmetic instruction's MMBIN follows it; the fast path skips it.
  auto mmbin = [&](uint32_t pc) {
    if (pc + 1 >= c.codeSize) return false;
    Op next = getOp(c.code[pc + 1]);
    return next == Op::MMBIN || next == Op::MMBINI || next == Op::MMBINK;
  };
  for (uint32_t pc = 0; pc < c.codeSize; pc++) {
    Instruction i = c.code[pc];
    int a = getA(i);
    switch (Op op = getOp(i)) {
      case Op::MOVE: case Op::UNM:
        if (!number[getB(i)]) return false;
        break;
      case Op::LOADI: case Op::LOADF:
        break;
      case Op::LOADK:
        if (!numK(getBx(i))) return false;
        break;
      case Op::ADD: case Op::SUB: case Op::MUL: case Op::DIV: case Op::POW:
      case Op::ADDK: case Op::SUBK: case Op::MULK: case Op::DIVK: case Op::POWK: case Op::ADDI: {
        bool right = op == Op::ADDI || (op >= Op::ADDK && op <= Op::DIVK ? numK(getC(i)) : number[getC(i)]);
        if (!number[getB(i)] || !right || !mmbin(pc)) return false;
        pc++;
        break;
      }
      case Op::RETURN1:
        return number[a];
      case Op::RETURN:
        return !getK(i) && (getB(i) == 1 || (getB(i) == 2 && number[a]));
      case Op::RETURN0:
        return true;
      default:
        return false;
    }
    number.set(a);
  }
  return false;
}

void Lowering::call(uint32_t pc, Instruction i) {
  const WeftJitInline* callee = inlineAt(pc);
  if (callee && inlinable(*callee, getB(i) - 1, getC(i) - 1)) {
    inlineCall(pc, i, *callee);
  } else {
    callOutOfLine(pc, i);
  }
}

// The tests at the call, then the body on the caller's registers: one copy for integer
// arguments and one for float ones, whose arithmetic is then known at each instruction
// (mixed arguments, or anything the tests refuse, take callOutOfLine).
void Lowering::inlineCall(uint32_t pc, Instruction i, const WeftJitInline& c) {
  const WeftJitLayout& l = host_.layout;
  int a = getA(i);
  BasicBlock* miss = newBlock("inline_miss");
  BasicBlock* closure = newBlock("inline_closure");
  b_.CreateCondBr(isTag(tag(a), kTagLuaClosure), closure, miss);
  b_.SetInsertPoint(closure);
  Value* proto = loadAt(b_.getPtrTy(), b_.CreateIntToPtr(ival(a), b_.getPtrTy()), l.closureProto);
  Value* ok = b_.CreateICmpEQ(loadAt(b_.getInt64Ty(), proto, l.protoUid), b_.getInt64(c.uid));
  ok = b_.CreateAnd(ok, b_.CreateICmpEQ(loadAt(b_.getInt8Ty(), thread_, l.threadHookMask), b_.getInt8(0)));
  ok = b_.CreateAnd(ok, b_.CreateICmpULT(frameCountNow(), b_.getInt32(l.maxCallDepth)));
  Value* ints = b_.getTrue();
  Value* floats = b_.getTrue();
  for (int k = 0; k < c.numParams; k++) {
    ints = b_.CreateAnd(ints, isTag(tag(a + 1 + k), kTagInt));
    floats = b_.CreateAnd(floats, isTag(tag(a + 1 + k), kTagFloat));
  }
  BasicBlock* tested = newBlock("inline_tested");
  b_.CreateCondBr(ok, tested, miss);
  b_.SetInsertPoint(tested);
  auto copy = [&](uint8_t kind) {
    Num result = inlineBody(c, a, kind);
    if (getC(i) == 2) {
      setReg(a, result.kind == kTagFloat ? b_.CreateBitCast(result.v, b_.getInt64Ty()) : result.v,
             b_.getInt8(result.kind));
    }
    b_.CreateBr(block(pc + 1));
  };
  if (c.numParams == 0) {
    copy(kTagInt);
  } else {
    BasicBlock* other = newBlock("inline_floats");
    cases(ints, [&] { copy(kTagInt); }, [&] { b_.CreateCondBr(floats, other, miss); });
    b_.SetInsertPoint(other);
    copy(kTagFloat);
  }
  b_.SetInsertPoint(miss);
  callOutOfLine(pc, i);
}

// The body inlinable() accepted, its registers SSA values, the parameters of type
// `kind`; returns what it returns (nil for none).
Lowering::Num Lowering::inlineBody(const WeftJitInline& c, int a, uint8_t kind) {
  std::vector<Num> regs(256);
  for (int k = 0; k < c.numParams; k++) {
    regs[k] = {kind == kTagFloat ? fval(a + 1 + k) : ival(a + 1 + k), kind};
  }
  auto constant = [&](int k) -> Num {
    const WeftJitConstant& kc = c.constants[k];
    if (kc.kind == kConstInt) return {b_.getInt64(kc.integer), kTagInt};
    return {llvm::ConstantFP::get(b_.getDoubleTy(), kc.number), kTagFloat};
  };
  Num nil{b_.getInt64(0), kTagNil};
  for (uint32_t pc = 0; pc < c.codeSize; pc++) {
    Instruction i = c.code[pc];
    int ra = getA(i);
    switch (Op op = getOp(i)) {
      case Op::MOVE: regs[ra] = regs[getB(i)]; break;
      case Op::LOADI: regs[ra] = {b_.getInt64(getSBx(i)), kTagInt}; break;
      case Op::LOADF: regs[ra] = {llvm::ConstantFP::get(b_.getDoubleTy(), double(getSBx(i))), kTagFloat}; break;
      case Op::LOADK: regs[ra] = constant(getBx(i)); break;
      case Op::UNM: regs[ra] = negate(regs[getB(i)]); break;
      case Op::ADDI:
        regs[ra] = numberArith(Op::ADD, regs[getB(i)], {b_.getInt64(getSC(i)), kTagInt});
        pc++;
        break;
      case Op::ADDK: case Op::SUBK: case Op::MULK: case Op::DIVK: case Op::POWK:
        regs[ra] = numberArith(op, regs[getB(i)], constant(getC(i)));
        pc++;
        break;
      case Op::ADD: case Op::SUB: case Op::MUL: case Op::DIV: case Op::POW:
        regs[ra] = numberArith(op, regs[getB(i)], regs[getC(i)]);
        pc++;
        break;
      case Op::RETURN1: return regs[ra];
      case Op::RETURN: return getB(i) == 2 ? regs[ra] : nil;
      default: return nil;  // RETURN0
    }
  }
  return nil;
}

// A number as a double: an integer constant converted here, exactly as the conversion
// at run time would (the constrained conversion is one LLVM does not fold).
Value* Lowering::numberAsFloat(const Num& x) {
  if (x.kind == kTagFloat) return x.v;
  if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(x.v)) {
    return llvm::ConstantFP::get(b_.getDoubleTy(), double(k->getSExtValue()));
  }
  return b_.CreateSIToFP(x.v, b_.getDoubleTy());
}

// Lua's x op y for two numbers, as the interpreter's ARITH_FAST and FLOAT_FAST: two
// integers wrap (+ - *); anything else is the float operation on the operands converted.
Lowering::Num Lowering::numberArith(Op op, const Num& x, const Num& y) {
  bool intCase = op == Op::ADD || op == Op::ADDK || op == Op::SUB || op == Op::SUBK || op == Op::MUL || op == Op::MULK;
  if (intCase && x.kind == kTagInt && y.kind == kTagInt) {
    Value* r = op == Op::ADD || op == Op::ADDK   ? b_.CreateAdd(x.v, y.v)
               : op == Op::SUB || op == Op::SUBK ? b_.CreateSub(x.v, y.v)
                                                 : b_.CreateMul(x.v, y.v);
    return {r, kTagInt};
  }
  return {floatOp(op, numberAsFloat(x), numberAsFloat(y)), kTagFloat};
}

Lowering::Num Lowering::negate(const Num& x) {
  if (x.kind == kTagInt) return {b_.CreateSub(b_.getInt64(0), x.v), kTagInt};
  return {b_.CreateFNeg(x.v), kTagFloat};
}

}  // namespace weft::jit::lowering
