// Arithmetic (docs/design/jit.md, "Guards and exits"): each case mirrors the fast path of
// its opcode in vm/interp.cpp (ARITH_FAST, FLOAT_FAST, BIT_FAST, the shifts, BNOT) and
// exits to it for everything else: coercions, metamethods, errors; but an instruction
// whose operand was never a number calls its metamethod (jit/lower_call.cpp arithMeta).
#include <llvm/IR/Intrinsics.h>

#include <cmath>

#include "jit/lowering.h"

namespace weft::jit::lowering {

// R[A] := x op y for two integers: wrapping, floor division and modulo as Lua's.
void Lowering::arithInts(int a, Value* x, Value* y, Op op, uint32_t pc) {
  switch (op) {
    case Op::ADD: case Op::ADDK: case Op::ADDI: storeI(a, b_.CreateAdd(x, y)); return;
    case Op::SUB: case Op::SUBK: storeI(a, b_.CreateSub(x, y)); return;
    case Op::MUL: case Op::MULK: storeI(a, b_.CreateMul(x, y)); return;
    case Op::BAND: case Op::BANDK: storeI(a, b_.CreateAnd(x, y)); return;
    case Op::BOR: case Op::BORK: storeI(a, b_.CreateOr(x, y)); return;
    case Op::BXOR: case Op::BXORK: storeI(a, b_.CreateXor(x, y)); return;
    case Op::MOD: case Op::MODK: case Op::IDIV: case Op::IDIVK: {
      bool mod = op == Op::MOD || op == Op::MODK;
      guard(b_.CreateICmpNE(y, b_.getInt64(0)), pc);  // the interpreter raises the error
      // y == -1 would trap in srem/sdiv at INT64_MIN: Lua's results are 0 and -x.
      Value* minus1 = b_.CreateICmpEQ(y, b_.getInt64(-1));
      Value* safeY = b_.CreateSelect(minus1, b_.getInt64(1), y);
      Value* q = b_.CreateSDiv(x, safeY);
      Value* r = b_.CreateSRem(x, safeY);
      Value* signsDiffer = b_.CreateICmpSLT(b_.CreateXor(r, safeY), b_.getInt64(0));
      Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, b_.getInt64(0)), signsDiffer);
      Value* res;
      if (mod) {
        res = b_.CreateSelect(adjust, b_.CreateAdd(r, safeY), r);
        res = b_.CreateSelect(minus1, b_.getInt64(0), res);
      } else {
        res = b_.CreateSelect(adjust, b_.CreateSub(q, b_.getInt64(1)), q);
        res = b_.CreateSelect(minus1, b_.CreateSub(b_.getInt64(0), x), res);
      }
      storeI(a, res);
      return;
    }
    default:
      exitHere(pc);
      return;
  }
}

// Float results of the arithmetic opcodes; nullptr when this tier leaves it to the
// interpreter (float modulo).
Value* Lowering::floatOp(Op op, Value* x, Value* y) {
  switch (op) {
    case Op::POW: case Op::POWK: return power(x, y);
    case Op::ADD: case Op::ADDK: case Op::ADDI: return b_.CreateFAdd(x, y);
    case Op::SUB: case Op::SUBK: return b_.CreateFSub(x, y);
    case Op::MUL: case Op::MULK: return b_.CreateFMul(x, y);
    case Op::DIV: case Op::DIVK: return b_.CreateFDiv(x, y);
    case Op::IDIV: case Op::IDIVK: {
      llvm::Function* floor =
          llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::experimental_constrained_floor, {b_.getDoubleTy()});
      return b_.CreateConstrainedFPCall(floor, {b_.CreateFDiv(x, y)});
    }
    default: return nullptr;
  }
}

// The interpreter's FPOW: a square is a product, any other power libm's pow (this
// process's, as the interpreter's is).
Value* Lowering::power(Value* x, Value* y) {
  BasicBlock* square = newBlock("pow_square");
  BasicBlock* other = newBlock("pow_call");
  BasicBlock* done = newBlock("pow_done");
  b_.CreateCondBr(b_.CreateFCmpOEQ(y, llvm::ConstantFP::get(b_.getDoubleTy(), 2.0)), square, other);
  b_.SetInsertPoint(square);
  Value* product = b_.CreateFMul(x, x);
  b_.CreateBr(done);
  b_.SetInsertPoint(other);
  double (*pow)(double, double) = std::pow;
  auto* fty = llvm::FunctionType::get(b_.getDoubleTy(), {b_.getDoubleTy(), b_.getDoubleTy()}, false);
  Value* called = b_.CreateCall(fty, hostPtr(reinterpret_cast<const void*>(pow)), {x, y});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  llvm::PHINode* result = b_.CreatePHI(b_.getDoubleTy(), 2);
  result->addIncoming(product, square);
  result->addIncoming(called, other);
  return result;
}

// vm/number.h shiftLeft: a shift by 64 or more either way is 0, a negative one shifts
// right (logically).
Value* Lowering::shiftLeft(Value* x, Value* n) {
  Value* inRange = b_.CreateICmpULT(b_.CreateAdd(n, b_.getInt64(63)), b_.getInt64(127));
  Value* left = b_.CreateShl(x, b_.CreateAnd(n, b_.getInt64(63)));
  Value* right = b_.CreateLShr(x, b_.CreateAnd(b_.CreateNeg(n), b_.getInt64(63)));
  Value* shifted = b_.CreateSelect(b_.CreateICmpSGE(n, b_.getInt64(0)), left, right);
  return b_.CreateSelect(inRange, shifted, b_.getInt64(0));
}

// SHL, SHR (BIT_FAST), SHRI and SHLI (sC << R[B]) of integers; a float operand (the
// interpreter converts an exact one), a string or a metamethod exits, a speculated guard
// where the feedback saw integers only. The MMBIN that follows is skipped.
void Lowering::shift(uint32_t pc, Instruction i, Op op) {
  int a = getA(i), rb = getB(i);
  bool yReg = op == Op::SHL || op == Op::SHR;
  Value* ints = isTag(tag(rb), kTagInt);
  if (yReg) ints = b_.CreateAnd(ints, isTag(tag(getC(i)), kTagInt));
  bool promised = seenX(pc) == kWeftJitSeenInt && (!yReg || seenY(pc) == kWeftJitSeenInt);
  if (promised) {
    speculate(ints, pc);
  } else {
    guard(ints, pc);
  }
  Value* x = op == Op::SHLI ? b_.getInt64(getSC(i)) : ival(rb);
  Value* n = nullptr;
  switch (op) {
    case Op::SHL: n = ival(getC(i)); break;
    case Op::SHR: n = b_.CreateSub(b_.getInt64(0), ival(getC(i))); break;  // INT64_MIN stays out of range
    case Op::SHRI: n = b_.getInt64(-int64_t(getSC(i))); break;
    default: n = ival(rb); break;  // SHLI
  }
  storeI(a, shiftLeft(x, n));
  b_.CreateBr(block(pc + 2));
}

// BNOT of an integer; anything else (an exact float, a metamethod) exits.
void Lowering::bitNot(uint32_t pc, Instruction i) {
  int rb = getB(i);
  guard(isTag(tag(rb), kTagInt), pc);
  storeI(getA(i), b_.CreateNot(ival(rb)));
  b_.CreateBr(block(pc + 1));
}

Value* Lowering::speculateOperand(int r, uint8_t seen, bool asFloat, uint32_t pc) {
  Value* t = tag(r);
  if (seen == kWeftJitSeenInt || seen == kWeftJitSeenFloat) {
    uint8_t want = seen == kWeftJitSeenInt ? kTagInt : kTagFloat;
    speculate(isTag(t, want), pc);
    b_.CreateStore(b_.getInt8(want), tagVar_[r]);
    if (want == kTagFloat) return fval(r);
    return asFloat ? b_.CreateSIToFP(ival(r), b_.getDoubleTy()) : ival(r);
  }
  speculate(b_.CreateOr(isTag(t, kTagInt), isTag(t, kTagFloat)), pc);
  return toF(t, r);
}

// Arithmetic whose operands were only ever numbers: integers alone give integer code,
// any float gives float code, with no path for the other kind. False (nothing emitted)
// when the feedback is missing or wider, or the tier has no code for the case.
bool Lowering::arithSpecialised(uint32_t pc, Instruction i, Op op) {
  constexpr uint8_t kNumber = kWeftJitSeenInt | kWeftJitSeenFloat;
  bool yReg = arithRegOperand(op);
  uint8_t sx = seenX(pc), sy = kWeftJitSeenInt;
  Value* yConstInt = nullptr;
  Value* yConstFlt = nullptr;
  if (op == Op::ADDI) {
    yConstInt = b_.getInt64(getSC(i));
    yConstFlt = llvm::ConstantFP::get(b_.getDoubleTy(), double(getSC(i)));
  } else if (!yReg) {
    const WeftJitConstant& k = req_.constants[getC(i)];
    sy = k.kind == kConstInt ? kWeftJitSeenInt : kWeftJitSeenFloat;
    yConstInt = b_.getInt64(k.integer);
    yConstFlt = llvm::ConstantFP::get(b_.getDoubleTy(), k.kind == kConstInt ? double(k.integer) : k.number);
  } else {
    sy = seenY(pc);
  }
  if (!sx || !sy || (sx & ~kNumber) || (sy & ~kNumber)) return false;
  bool floatOnly = op == Op::DIV || op == Op::DIVK || op == Op::POW || op == Op::POWK;
  bool ints = sx == kWeftJitSeenInt && sy == kWeftJitSeenInt && !floatOnly;
  // Float code only where the result is a float whichever number each operand is: an
  // operand that was always a float, or a division. (A mixed operand with an integer one
  // may give an integer: that is the generic code's.)
  bool floatResult = floatOnly || sx == kWeftJitSeenFloat || sy == kWeftJitSeenFloat;
  bool floatCode = op == Op::ADD || op == Op::ADDK || op == Op::ADDI || op == Op::SUB || op == Op::SUBK ||
                   op == Op::MUL || op == Op::MULK || floatOnly || op == Op::IDIV || op == Op::IDIVK;
  if (!ints && !(floatResult && floatCode)) return false;
  // Float code converts an operand seen as an integer anyway: it takes a float there
  // too, so a value that becomes one (a table of integers refilled with floats, as
  // spectralnorm's first vector) neither exits nor gets its function recompiled.
  if (!ints) {
    if (sx == kWeftJitSeenInt) sx = kNumber;
    if (sy == kWeftJitSeenInt) sy = kNumber;
  }
  int a = getA(i), rb = getB(i), rc = getC(i);
  Value* x = speculateOperand(rb, sx, !ints, pc);
  Value* y = yReg ? speculateOperand(rc, sy, !ints, pc) : ints ? yConstInt : yConstFlt;
  if (ints) {
    arithInts(a, x, y, op, pc);
  } else {
    storeF(a, floatOp(op, x, y));
  }
  b_.CreateBr(block(pc + 2));
  return true;
}

// ADD..BXOR, ADDI, the K forms: the metamethod where an operand was never a number,
// else specialised on feedback, else both integers, both numbers (floats), else exit.
// The MMBIN that follows is skipped, as the interpreter's fast path does.
void Lowering::arith(uint32_t pc, Instruction i, Op op) {
  if (req_.profile && weftJitArithOnOther(req_.profile[pc], arithRegOperand(op))) {
    arithMeta(pc, i);
    return;
  }
  if (op == Op::SHL || op == Op::SHR || op == Op::SHRI || op == Op::SHLI) {
    shift(pc, i, op);
    return;
  }
  if (arithSpecialised(pc, i, op)) return;
  int a = getA(i), rb = getB(i);
  BasicBlock* next = block(pc + 2);
  bool bitwise = op == Op::BAND || op == Op::BOR || op == Op::BXOR || op == Op::BANDK || op == Op::BORK ||
                 op == Op::BXORK;
  bool floatOnly = op == Op::DIV || op == Op::DIVK || op == Op::POW || op == Op::POWK;
  // The right operand: a register, an immediate or a constant.
  bool yReg = !(op == Op::ADDI || (op >= Op::ADDK && op <= Op::BXORK));
  Value* tx = tag(rb);
  Value* ty = nullptr;
  Value* yInt = nullptr;
  Value* yFlt = nullptr;
  bool yIsInt = false, yIsFloat = false;
  if (op == Op::ADDI) {
    yIsInt = true;
    yInt = b_.getInt64(getSC(i));
    yFlt = llvm::ConstantFP::get(b_.getDoubleTy(), double(getSC(i)));
  } else if (!yReg) {
    const WeftJitConstant& k = req_.constants[getC(i)];
    yIsInt = k.kind == kConstInt;
    yIsFloat = !yIsInt;
    yInt = b_.getInt64(k.integer);
    yFlt = llvm::ConstantFP::get(b_.getDoubleTy(), yIsInt ? double(k.integer) : k.number);
  } else {
    ty = tag(getC(i));
  }
  auto finish = [&] { b_.CreateBr(next); };
  auto floatPath = [&](Value* xIsNum, Value* yIsNum) {
    if (bitwise || ((op == Op::MOD || op == Op::MODK))) {
      exitHere(pc);
      return;
    }
    guard(b_.CreateAnd(xIsNum, yIsNum), pc);
    Value* x = toF(tx, rb);
    Value* y = yReg ? toF(ty, getC(i)) : yFlt;
    storeF(a, floatOp(op, x, y));
    finish();
  };
  Value* xInt = isTag(tx, kTagInt);
  Value* xNum = b_.CreateOr(xInt, isTag(tx, kTagFloat));
  if (yReg) {
    Value* yIntTag = isTag(ty, kTagInt);
    Value* yNum = b_.CreateOr(yIntTag, isTag(ty, kTagFloat));
    if (floatOnly) {
      floatPath(xNum, yNum);
      return;
    }
    cases(b_.CreateAnd(xInt, yIntTag),
          [&] { arithInts(a, ival(rb), ival(getC(i)), op, pc); finish(); },
          [&] { floatPath(xNum, yNum); });
    return;
  }
  if (floatOnly || yIsFloat) {
    floatPath(xNum, b_.getTrue());
    return;
  }
  (void)yIsInt;
  cases(xInt, [&] { arithInts(a, ival(rb), yInt, op, pc); finish(); }, [&] { floatPath(xNum, b_.getTrue()); });
}

}  // namespace weft::jit::lowering
