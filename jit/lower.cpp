// Bytecode to LLVM IR for the first tier's subset (jit/lower.h). Each case mirrors the
// fast path of its opcode in vm/interp.cpp and exits to it for everything else; table
// accesses are in jit/lower_table.cpp, calls and returns in jit/lower_call.cpp,
// arithmetic in jit/lower_arith.cpp.
#include "jit/lower.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>

#include "jit/lowering.h"
#include "vm/jit_ops.h"

namespace weft::jit {
namespace lowering {

bool Lowering::supported(uint32_t pc) const {
  Instruction i = req_.code[pc];
  Op op = getOp(i);
  int a = getA(i);
  if (vm::jitNeverCompiles(op)) return false;
  bool helper = (op >= Op::GETUPVAL && op <= Op::SETFIELD) && op != Op::SETUPVAL;
  if (helper && req_.profile && (req_.profile[pc] & kWeftJitSeenOther)) return false;  // its fast path failed
  switch (op) {
    case Op::LOADNIL:
      return getA(i) + getB(i) < kMaxRegs;
    case Op::MOVE: case Op::LOADI: case Op::LOADF: case Op::LOADFALSE: case Op::LFALSESKIP:
    case Op::LOADTRUE: case Op::ADDI: case Op::ADD: case Op::SUB: case Op::MUL:
    case Op::DIV: case Op::MOD: case Op::IDIV: case Op::BAND: case Op::BOR: case Op::BXOR:
    case Op::UNM: case Op::NOT: case Op::JMP: case Op::EQ: case Op::LT: case Op::LE: case Op::EQI:
    case Op::LTI: case Op::LEI: case Op::GTI: case Op::GEI: case Op::TEST: case Op::TESTSET:
    case Op::POW: case Op::SHL: case Op::SHR: case Op::SHRI: case Op::SHLI: case Op::BNOT:
      return true;
    case Op::FORPREP: case Op::FORLOOP:
      return getA(i) + 3 < kMaxRegs;
    case Op::LOADK:
      return getBx(i) < int(req_.numConstants);
    case Op::ADDK: case Op::SUBK: case Op::MULK: case Op::DIVK: case Op::MODK: case Op::IDIVK: case Op::POWK:
      return constIsNumber(getC(i));
    case Op::BANDK: case Op::BORK: case Op::BXORK:
      return req_.constants[getC(i)].kind == kConstInt;
    case Op::EQK:  // a number, nil, a boolean or an interned string
      return req_.constants[getB(i)].kind != kConstRef || req_.constants[getB(i)].shortString;
    case Op::GETUPVAL: case Op::GETTABLE: case Op::GETI:
      return true;
    case Op::CALL:
      return !nativesAt(pc).empty() || luaCall(pc) || nativeFnCall(pc);
    case Op::LEN: case Op::CLOSE:
      return true;
    case Op::SETUPVAL:
      return true;
    case Op::NEWTABLE:  // and its EXTRAARG
      return pc + 1 < req_.codeSize;
    case Op::CONCAT:
      return a + getB(i) <= kMaxRegs;
    case Op::SETLIST:  // a fixed count, or an open call's results
      return (getB(i) != 0 || (pc > 0 && vm::jitOpenResultsTaken(req_.code[pc - 1], i))) && a + getB(i) < kMaxRegs &&
             (!getK(i) || pc + 1 < req_.codeSize);
    case Op::SELF:
      return getA(i) + 1 < kMaxRegs && (!getK(i) || getC(i) < int(req_.numConstants));
    case Op::TFORPREP:
      return getA(i) + 3 < kMaxRegs;
    case Op::TFORCALL:
      return getA(i) + 4 + std::max(getC(i), 2) <= kMaxRegs && !nativesAt(pc, true).empty();
    case Op::TFORLOOP:
      return getA(i) + 4 < kMaxRegs;
    case Op::RETURN0: case Op::RETURN1:
      return true;
    case Op::TAILCALL:  // of fixed arguments, closing nothing, where the feedback saw Lua functions or natives
      return getB(i) != 0 && !getK(i) && a + getB(i) <= kMaxRegs &&
             (!req_.profile || req_.profile[pc] == kWeftJitSeenLuaFunction || nativeTailCall(req_, pc));
    case Op::RETURN:  // a fixed list, or an open call's results (k: where nothing is open, jit/lower_call.cpp)
      return (getB(i) != 0 || (pc > 0 && vm::jitOpenResultsTaken(req_.code[pc - 1], i))) &&
             getA(i) + getB(i) - 1 < kMaxRegs;
    case Op::GETTABUP: case Op::GETFIELD:
      return getC(i) < int(req_.numConstants);
    case Op::SETTABLE: case Op::SETI:
      return !getK(i) || getC(i) < int(req_.numConstants);
    case Op::SETFIELD:
      return getB(i) < int(req_.numConstants) && (!getK(i) || getC(i) < int(req_.numConstants));
    case Op::SETTABUP:  // inline only: there is no helper for the rest
      return getB(i) < int(req_.numConstants) && req_.constants[getB(i)].kind == kConstRef &&
             req_.constants[getB(i)].shortString && (!getK(i) || getC(i) < int(req_.numConstants));
    default:
      return false;
  }
}

BasicBlock* Lowering::exitWith(uint32_t site, uint64_t kind, uint32_t exitPc, const RegSet& dirty) {
  BasicBlock*& bb = exits_[kind][site];
  if (bb) return bb;
  // Sites with the same registers to write back share that code (inside a loop most
  // do): it is most of the function, and LLVM's time grows with it.
  SharedExit& shared = sharedExits_[dirty.to_string()];
  if (!shared.block) {
    llvm::IRBuilderBase::InsertPointGuard keep(b_);
    shared.block = BasicBlock::Create(ctx_, "write_back", fn_);
    b_.SetInsertPoint(shared.block);
    shared.result = b_.CreatePHI(b_.getInt64Ty(), 4);
    spillAll(dirty);
    if (defer_) {  // a deferred frame is written before the interpreter takes it
      BasicBlock* write = BasicBlock::Create(ctx_, "write_frame", fn_);
      BasicBlock* leave = BasicBlock::Create(ctx_, "leave", fn_);
      b_.CreateCondBr(isDeferred(), write, leave);
      b_.SetInsertPoint(write);
      writeDeferredFrame(codeAt(b_.CreateTrunc(shared.result, b_.getInt32Ty())), true);
      b_.CreateBr(leave);
      b_.SetInsertPoint(leave);
    }
    b_.CreateRet(shared.result);
  }
  bb = BasicBlock::Create(ctx_, kind != kWeftJitExitInterpret ? "poll_exit" : "exit", fn_);
  llvm::BranchInst::Create(shared.block, bb);
  shared.result->addIncoming(b_.getInt64(uint64_t(exitPc) | (kind << 32)), bb);
  return bb;
}

llvm::CallInst* Lowering::helperCall(uint32_t pc, const void* fn, std::initializer_list<Value*> args, bool counted) {
  std::vector<llvm::Type*> types;
  for (Value* a : args) types.push_back(a->getType());
  auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), types, false);
  Value* callee = hostPtr(fn);
  spillOperands(pc);
  llvm::CallInst* ok = b_.CreateCall(fty, callee, args);
  // With feedback a failure counts as a guard's: the VM marks the site, and the next
  // version leaves it to the interpreter (a store of a new key every round).
  if (req_.profile && counted) {
    speculate(b_.CreateICmpNE(ok, b_.getInt32(0)), pc);
  } else {
    guard(b_.CreateICmpNE(ok, b_.getInt32(0)), pc);
  }
  const RegSet& def = flow_.pcs[pc].def;
  for (int r = 0; r < int(def.size()); r++) {
    if (def[r]) reload(r);
  }
  return ok;
}

llvm::MDNode* Lowering::makeTableScope(llvm::LLVMContext& ctx) {
  llvm::MDBuilder mb(ctx);
  llvm::MDNode* domain = mb.createAnonymousAliasScopeDomain("weft.tables");
  return llvm::MDNode::get(ctx, {mb.createAnonymousAliasScope(domain, "table reads")});
}

std::pair<Value*, Value*> Lowering::constValue(int k) {
  const WeftJitConstant& c = req_.constants[k];
  if (c.kind == kConstInt) return {b_.getInt64(c.integer), b_.getInt8(kTagInt)};
  if (c.kind == kConstFloat) {
    return {b_.CreateBitCast(llvm::ConstantFP::get(b_.getDoubleTy(), c.number), b_.getInt64Ty()),
            b_.getInt8(kTagFloat)};
  }
  if (c.kind == kConstRef) {
    // Read at run time from the constant array, which the collector updates.
    Value* p = constSlot(k);
    return {b_.CreateLoad(b_.getInt64Ty(), p), b_.CreateLoad(b_.getInt8Ty(), at(p, kTagOffset))};
  }
  return {b_.getInt64(0), b_.getInt8(c.kind)};  // nil, false, true: the constant kinds are the tags
}

void Lowering::jumpTo(uint32_t site, uint32_t from, uint32_t target, bool wholeFrame) {
  if (target > from) {
    b_.CreateBr(block(target));
    return;
  }
  // The interpreter's SAFEPOINT_LIVE: --budget < 0, either request flag, or stress.
  Value* left = b_.CreateSub(b_.CreateLoad(b_.getInt32Ty(), budget_), b_.getInt32(1));
  b_.CreateStore(left, budget_);
  Value* fire = b_.CreateICmpSLT(left, b_.getInt32(0));
  for (const void* flag : {host_.gcRequested, host_.gcStopRequested}) {
    Value* addr = hostPtr(flag);
    llvm::LoadInst* ld = b_.CreateLoad(b_.getInt8Ty(), addr);
    ld->setAtomic(llvm::AtomicOrdering::Monotonic);
    fire = b_.CreateOr(fire, b_.CreateICmpNE(ld, b_.getInt8(0)));
  }
  if (req_.captured) {
    // A shared frame: cells written since its last reconciliation come in at once, and
    // its own writes to captured registers, if it may have made some since, go out at
    // least every kSharedSyncInterval back-edges (counted by the budget); the poll fires,
    // and the interpreter reconciles before it enters again.
    const WeftJitLayout& l = host_.layout;
    Value* writes = loadShared(b_.getInt64Ty(), at(thread_, l.threadCellWrites), llvm::AtomicOrdering::Acquire);
    Value* seen = b_.CreateLoad(b_.getInt64Ty(), at(thread_, l.threadSeenCellWrites));
    Value* due = b_.CreateICmpNE(writes, seen);
    if (unsyncedOut_[site].any()) {
      Value* periodic = b_.CreateICmpEQ(b_.CreateAnd(left, b_.getInt32(l.sharedSyncMask)), b_.getInt32(0));
      due = b_.CreateOr(due, periodic);
    }
    fire = b_.CreateOr(fire, b_.CreateAnd(shared_, due));
  }
  if (host_.stress) fire = b_.getTrue();
  uint64_t kind = wholeFrame ? kWeftJitExitSafepointFrame : kWeftJitExitSafepoint;
  BasicBlock* exit = exitWith(site, kind, target, flow_.dirtyOut[site]);
  if (stale_) {
    llvm::IRBuilderBase::InsertPointGuard keepInsertPoint(b_);
    BasicBlock* keep = newBlock("keep_stale");
    b_.SetInsertPoint(keep);
    stale_->keep(b_, target, flow_.liveIn[target], payVar_, tagVar_);
    b_.CreateBr(exit);
    exit = keep;
  }
  b_.CreateCondBr(fire, exit, block(target));
}

// A test's outcome: when `cond` differs from k the jump that follows is skipped.
void Lowering::condJump(uint32_t pc, Value* cond, bool k) {
  Instruction jmp = req_.code[pc + 1];
  uint32_t target = uint32_t(int64_t(pc) + 2 + getSJ(jmp));
  BasicBlock* take = newBlock("take");
  Value* c = k ? cond : b_.CreateNot(cond);
  b_.CreateCondBr(c, take, block(pc + 2));
  b_.SetInsertPoint(take);
  jumpTo(pc, pc + 1, target);
}

// The constant operand of a comparison as the kind its feedback names: an immediate, or
// a numeric constant of EQK (false for another kind, or a float constant of integer code).
bool Lowering::comparedConstant(Instruction i, Op op, bool ints, Value** y) {
  if (op != Op::EQK) {
    int im = getSB(i);
    *y = ints ? static_cast<Value*>(b_.getInt64(im)) : llvm::ConstantFP::get(b_.getDoubleTy(), double(im));
    return true;
  }
  const WeftJitConstant& kc = req_.constants[getB(i)];
  if (kc.kind != (ints ? kConstInt : kConstFloat)) return false;
  *y = ints ? static_cast<Value*>(b_.getInt64(kc.integer)) : llvm::ConstantFP::get(b_.getDoubleTy(), kc.number);
  return true;
}

// Comparisons whose operands were only integers, or only floats: one tag guard, then the
// machine comparison (fannkuch's `k ~= 0` tested both kinds every round without them).
bool Lowering::compareSpecialised(uint32_t pc, Instruction i, Op op) {
  uint8_t sx = seenX(pc);
  bool constant = op >= Op::EQK && op <= Op::GEI;
  if (!constant && op != Op::EQ && op != Op::LT && op != Op::LE) return false;
  uint8_t sy = constant ? sx : seenY(pc);
  bool ints = sx == kWeftJitSeenInt && sy == kWeftJitSeenInt;
  bool floats = sx == kWeftJitSeenFloat && sy == kWeftJitSeenFloat;
  if (!ints && !floats) return false;
  Value* y = nullptr;
  if (constant && !comparedConstant(i, op, ints, &y)) return false;
  Value* x = speculateOperand(getA(i), sx, false, pc);
  if (!constant) y = speculateOperand(getB(i), sy, false, pc);
  Value* cond;
  switch (op) {
    case Op::EQ:
    case Op::EQK:
    case Op::EQI:
      cond = ints ? b_.CreateICmpEQ(x, y) : b_.CreateFCmpOEQ(x, y);
      break;
    case Op::LT:
    case Op::LTI:
      cond = ints ? b_.CreateICmpSLT(x, y) : b_.CreateFCmpOLT(x, y);
      break;
    case Op::LE:
    case Op::LEI:
      cond = ints ? b_.CreateICmpSLE(x, y) : b_.CreateFCmpOLE(x, y);
      break;
    case Op::GTI:
      cond = ints ? b_.CreateICmpSGT(x, y) : b_.CreateFCmpOGT(x, y);
      break;
    default:
      cond = ints ? b_.CreateICmpSGE(x, y) : b_.CreateFCmpOGE(x, y);
      break;
  }
  condJump(pc, cond, getK(i));
  return true;
}

void Lowering::compare(uint32_t pc, Instruction i, Op op) {
  if (compareSpecialised(pc, i, op)) return;
  int a = getA(i);
  bool k = getK(i);
  Value* ta = tag(a);
  Value* aInt = isTag(ta, kTagInt);
  Value* aFlt = isTag(ta, kTagFloat);
  if (op >= Op::EQI && op <= Op::GEI) {
    int im = getSB(i);
    auto icmp = [&](Value* x) -> Value* {
      Value* y = b_.getInt64(im);
      switch (op) {
        case Op::EQI: return b_.CreateICmpEQ(x, y);
        case Op::LTI: return b_.CreateICmpSLT(x, y);
        case Op::LEI: return b_.CreateICmpSLE(x, y);
        case Op::GTI: return b_.CreateICmpSGT(x, y);
        default: return b_.CreateICmpSGE(x, y);
      }
    };
    auto fcmp = [&](Value* x) -> Value* {
      Value* y = llvm::ConstantFP::get(b_.getDoubleTy(), double(im));
      switch (op) {
        case Op::EQI: return b_.CreateFCmpOEQ(x, y);
        case Op::LTI: return b_.CreateFCmpOLT(x, y);
        case Op::LEI: return b_.CreateFCmpOLE(x, y);
        case Op::GTI: return b_.CreateFCmpOGT(x, y);
        default: return b_.CreateFCmpOGE(x, y);
      }
    };
    if (op != Op::EQI) guard(b_.CreateOr(aInt, aFlt), pc);  // else __lt/__le or an error
    Value* cond = b_.CreateSelect(aInt, icmp(ival(a)), b_.CreateSelect(aFlt, fcmp(fval(a)), b_.getFalse()));
    condJump(pc, cond, k);
    return;
  }
  if (op == Op::EQK) {
    const WeftJitConstant& kc = req_.constants[getB(i)];
    Value* cond;
    if (kc.kind == kConstInt) {
      guard(b_.CreateNot(aFlt), pc);  // a float against an integer: the interpreter's exact rule
      cond = b_.CreateAnd(aInt, b_.CreateICmpEQ(ival(a), b_.getInt64(kc.integer)));
    } else if (kc.kind == kConstFloat) {
      guard(b_.CreateNot(aInt), pc);
      cond = b_.CreateAnd(aFlt, b_.CreateFCmpOEQ(fval(a), llvm::ConstantFP::get(b_.getDoubleTy(), kc.number)));
    } else if (kc.kind == kConstRef) {
      // An interned string is equal to a string only if it is the same one (equal short
      // strings are one string); the constant is read at run time, as the collector moves it.
      cond = b_.CreateAnd(isTag(ta, kTagString), b_.CreateICmpEQ(ival(a), constValue(getB(i)).first));
    } else {
      cond = isTag(ta, kc.kind);  // nil, false, true: the constant kinds are the tags
    }
    condJump(pc, cond, k);
    return;
  }
  int rb = getB(i);
  Value* tb = tag(rb);
  Value* bInt = isTag(tb, kTagInt);
  Value* bFlt = isTag(tb, kTagFloat);
  Value* bothInt = b_.CreateAnd(aInt, bInt);
  Value* bothFlt = b_.CreateAnd(aFlt, bFlt);
  if (op == Op::EQ) {
    // Mixed numbers, strings, tables and userdata need the interpreter (exact
    // comparison, string contents, __eq); any other pair is equal iff tag and payload are.
    Value* sameTag = b_.CreateICmpEQ(ta, tb);
    Value* mixed = b_.CreateOr(b_.CreateAnd(aInt, bFlt), b_.CreateAnd(aFlt, bInt));
    Value* hard = b_.CreateAnd(sameTag, b_.CreateOr(b_.CreateOr(isTag(ta, kTagString), isTag(ta, kTagTable)),
                                                    isTag(ta, kTagUserdata)));
    Value* samePayload = b_.CreateICmpEQ(ival(a), ival(rb));
    Value* hardUnequal = b_.CreateAnd(hard, b_.CreateNot(samePayload));
    guard(b_.CreateNot(b_.CreateOr(mixed, hardUnequal)), pc);
    Value* fltEq = b_.CreateFCmpOEQ(fval(a), fval(rb));
    Value* cond = b_.CreateSelect(bothFlt, fltEq, b_.CreateAnd(sameTag, samePayload));
    condJump(pc, cond, k);
    return;
  }
  guard(b_.CreateOr(bothInt, bothFlt), pc);
  Value* ic = op == Op::LT ? b_.CreateICmpSLT(ival(a), ival(rb)) : b_.CreateICmpSLE(ival(a), ival(rb));
  Value* fc = op == Op::LT ? b_.CreateFCmpOLT(fval(a), fval(rb)) : b_.CreateFCmpOLE(fval(a), fval(rb));
  condJump(pc, b_.CreateSelect(bothInt, ic, fc), k);
}

// FORPREP: integer loops (integer init, step and limit) count iterations as the
// interpreter does; float loops need three floats. Anything else (a float limit of an
// integer loop, strings, a zero step) is the interpreter's.
void Lowering::forPrep(uint32_t pc, Instruction i) {
  int a = getA(i);
  BasicBlock* skip = block(pc + getBx(i) + 2);
  BasicBlock* body = block(pc + 1);
  Value* t0 = tag(a);
  Value* t1 = tag(a + 1);
  Value* t2 = tag(a + 2);
  Value* allInt = b_.CreateAnd(b_.CreateAnd(isTag(t0, kTagInt), isTag(t1, kTagInt)), isTag(t2, kTagInt));
  Value* allFlt = b_.CreateAnd(b_.CreateAnd(isTag(t0, kTagFloat), isTag(t1, kTagFloat)), isTag(t2, kTagFloat));
  auto knownTags = [&](uint8_t t) {
    for (int r = a; r < a + 3; r++) b_.CreateStore(b_.getInt8(t), tagVar_[r]);
  };
  auto intLoop = [&] {
        knownTags(kTagInt);
        Value* init = ival(a);
        Value* lim = ival(a + 1);
        Value* step = ival(a + 2);
        guard(b_.CreateICmpNE(step, b_.getInt64(0)), pc);
        Value* up = b_.CreateICmpSGT(step, b_.getInt64(0));
        Value* skipIt = b_.CreateSelect(up, b_.CreateICmpSGT(init, lim), b_.CreateICmpSLT(init, lim));
        BasicBlock* run = newBlock("for_run");
        b_.CreateCondBr(skipIt, skip, run);
        b_.SetInsertPoint(run);
        Value* upCount = b_.CreateUDiv(b_.CreateSub(lim, init), step);
        Value* downDen = b_.CreateAdd(b_.CreateSub(b_.getInt64(0), b_.CreateAdd(step, b_.getInt64(1))), b_.getInt64(1));
        Value* downCount = b_.CreateUDiv(b_.CreateSub(init, lim), downDen);
        setPayload(a + 1, b_.CreateSelect(up, upCount, downCount));
        storeI(a + 3, init);
        b_.CreateBr(body);
  };
  auto floatLoop = [&] {
        knownTags(kTagFloat);
        Value* init = fval(a);
        Value* lim = fval(a + 1);
        Value* step = fval(a + 2);
        Value* zero = llvm::ConstantFP::get(b_.getDoubleTy(), 0.0);
        guard(b_.CreateFCmpUNE(step, zero), pc);
        Value* skipIt = b_.CreateSelect(b_.CreateFCmpOGT(step, zero), b_.CreateFCmpOLT(lim, init), b_.CreateFCmpOLT(init, lim));
        BasicBlock* run = newBlock("for_frun");
        b_.CreateCondBr(skipIt, skip, run);
        b_.SetInsertPoint(run);
        storeF(a + 3, init);
        b_.CreateBr(body);
  };
  // Feedback of one kind: the other kind is a guard exit; else both, and any other
  // operands are the interpreter's.
  uint8_t seen = seenX(pc);
  auto miss = [&] { b_.CreateBr(exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc])); };
  if (seen == kWeftJitSeenInt) {
    cases(allInt, intLoop, miss);
  } else if (seen == kWeftJitSeenFloat) {
    cases(allFlt, floatLoop, miss);
  } else {
    cases(allInt, intLoop, [&] {
      guard(allFlt, pc);
      floatLoop();
    });
  }
}

void Lowering::forLoop(uint32_t pc, Instruction i) {
  int a = getA(i);
  uint32_t target = pc + 1 - uint32_t(getBx(i));
  BasicBlock* done = block(pc + 1);
  auto intStep = [&] {
        Value* count = ival(a + 1);
        BasicBlock* again = newBlock("for_again");
        b_.CreateCondBr(b_.CreateICmpUGT(count, b_.getInt64(0)), again, done);
        b_.SetInsertPoint(again);
        Value* idx = b_.CreateAdd(ival(a), ival(a + 2));
        setPayload(a + 1, b_.CreateSub(count, b_.getInt64(1)));
        setPayload(a, idx);
        storeI(a + 3, idx);
        jumpTo(pc, pc, target);
  };
  auto floatStep = [&] {
        Value* step = fval(a + 2);
        Value* lim = fval(a + 1);
        Value* idx = b_.CreateFAdd(fval(a), step);
        Value* zero = llvm::ConstantFP::get(b_.getDoubleTy(), 0.0);
        Value* cont = b_.CreateSelect(b_.CreateFCmpOGT(step, zero), b_.CreateFCmpOLE(idx, lim), b_.CreateFCmpOLE(lim, idx));
        BasicBlock* again = newBlock("for_fagain");
        b_.CreateCondBr(cont, again, done);
        b_.SetInsertPoint(again);
        setPayload(a, b_.CreateBitCast(idx, b_.getInt64Ty()));
        storeF(a + 3, idx);
        jumpTo(pc, pc, target);
  };
  // FORPREP made the step an integer exactly when the loop counts; feedback of one kind
  // makes the other a guard exit.
  uint8_t seen = seenX(pc);
  auto miss = [&] { b_.CreateBr(exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc])); };
  Value* intTag = isTag(tag(a + 2), kTagInt);
  if (seen == kWeftJitSeenInt) {
    cases(intTag, intStep, miss);
  } else if (seen == kWeftJitSeenFloat) {
    cases(intTag, miss, floatStep);
  } else {
    cases(intTag, intStep, floatStep);
  }
}

void Lowering::lower(uint32_t pc) {
  Instruction i = req_.code[pc];
  Op op = getOp(i);
  int a = getA(i);
  if (!supported(pc)) {
    exitHere(pc);
    return;
  }
  if (cold(pc)) {
    b_.CreateBr(exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc]));
    return;
  }
  switch (op) {
    case Op::MOVE: copy(a, getB(i)); break;
    case Op::LOADI: storeI(a, b_.getInt64(getSBx(i))); break;
    case Op::LOADF: storeF(a, llvm::ConstantFP::get(b_.getDoubleTy(), double(getSBx(i)))); break;
    case Op::LOADK: {
      auto [payload, t] = constValue(getBx(i));
      setReg(a, payload, t);
      break;
    }
    case Op::LOADFALSE: storeTagOnly(a, kTagFalse); break;
    case Op::LFALSESKIP:
      storeTagOnly(a, kTagFalse);
      b_.CreateBr(block(pc + 2));
      return;
    case Op::LOADTRUE: storeTagOnly(a, kTagTrue); break;
    case Op::LOADNIL:
      for (int r = a; r <= a + getB(i); r++) storeTagOnly(r, kTagNil);
      break;
    case Op::UNM: {
      int rb = getB(i);
      Value* t = tag(rb);
      guard(b_.CreateOr(isTag(t, kTagInt), isTag(t, kTagFloat)), pc);
      cases(isTag(t, kTagInt), [&] { storeI(a, b_.CreateSub(b_.getInt64(0), ival(rb))); b_.CreateBr(block(pc + 1)); },
            [&] { storeF(a, b_.CreateFNeg(fval(rb))); b_.CreateBr(block(pc + 1)); });
      return;
    }
    case Op::BNOT: bitNot(pc, i); return;
    case Op::NOT: {
      Value* f = falsy(tag(getB(i)));
      setReg(a, b_.getInt64(0), b_.CreateSelect(f, b_.getInt8(kTagTrue), b_.getInt8(kTagFalse)));
      break;
    }
    case Op::JMP:
      jumpTo(pc, pc, jumpTarget(req_, pc));
      return;
    case Op::TEST:
      condJump(pc, b_.CreateNot(falsy(tag(a))), getK(i));
      return;
    case Op::TESTSET: {
      // if falsy(R[B]) == k: skip the jump; else R[A] := R[B] and jump.
      int rb = getB(i);
      Value* f = falsy(tag(rb));
      Value* skip = getK(i) ? f : b_.CreateNot(f);
      BasicBlock* take = newBlock("testset_take");
      b_.CreateCondBr(skip, block(pc + 2), take);
      b_.SetInsertPoint(take);
      copy(a, rb);
      jumpTo(pc, pc + 1, jumpTarget(req_, pc + 1), true);
      return;
    }
    case Op::EQ: case Op::LT: case Op::LE: case Op::EQK: case Op::EQI: case Op::LTI: case Op::LEI:
    case Op::GTI: case Op::GEI:
      compare(pc, i, op);
      return;
    case Op::GETUPVAL: {  // the cell with one 16-byte load, as envTable reads it (the interpreter's loadSlotChecked)
      Value* cl = b_.CreateIntToPtr(b_.CreateLoad(b_.getInt64Ty(), funcSlot()), b_.getPtrTy());
      Value* up = loadShared(b_.getPtrTy(), at(cl, host_.layout.closureUpvalues + uint64_t(getB(i)) * sizeof(void*)),
                             llvm::AtomicOrdering::Unordered);
      auto [payload, t] = loadTableSlot(at(up, host_.layout.upvalueCell));
      setReg(a, payload, t);
      break;
    }
    case Op::GETTABUP: case Op::GETTABLE: case Op::GETI: case Op::GETFIELD:
      tableRead(pc, i, op);
      return;
    case Op::SETTABUP:
    case Op::SETTABLE:
    case Op::SETI:
    case Op::SETFIELD:
      tableWrite(pc, i, op);
      return;
    case Op::CALL:
      call(pc, i);
      return;
    case Op::RETURN: case Op::RETURN0: case Op::RETURN1:
      returnOp(pc, i, op);
      return;
    case Op::TAILCALL: tailCall(pc, i); return;
    case Op::FORPREP: forPrep(pc, i); return;
    case Op::FORLOOP: forLoop(pc, i); return;
    case Op::LEN: len(pc, i); return;
    case Op::SELF: selfOp(pc, i); return;
    case Op::SETUPVAL:  // storeUpvalue in the helper: the barrier, an open upvalue's owner
      spill(a);
      callHost(reinterpret_cast<const void*>(host_.helpers.setUpval),
               {thread_, funcSlot(), b_.getInt32(getB(i)), slot(a)});
      break;
    case Op::CLOSE: close(pc, i); return;
    case Op::NEWTABLE: newTableOp(pc, i); return;
    case Op::CONCAT: concatOp(pc, i); return;
    case Op::SETLIST: setListOp(pc, i); return;
    case Op::TFORPREP: tforPrep(pc, i); return;
    case Op::TFORCALL: tforCall(pc, i); return;
    case Op::TFORLOOP: tforLoop(pc, i); return;
    default:
      if (isArith(op)) {
        arith(pc, i, op);
        return;
      }
      exitHere(pc);
      return;
  }
  b_.CreateBr(block(pc + 1));
}

std::vector<uint8_t> Lowering::loopsThatIterate(const std::vector<uint8_t>& compiled) {
  uint32_t n = req_.codeSize;
  loopHeader_.assign(n, 0);
  innermost_.assign(n, -1);
  std::vector<int64_t> span(n, INT64_MAX);  // the innermost loop's length, by pc
  std::vector<uint8_t> iterates(n + 1, 0);
  for (uint32_t latch = 0; latch < n; latch++) {
    Instruction i = req_.code[latch];
    int64_t h = -1;
    if (getOp(i) == Op::JMP && getSJ(i) < 0) h = int64_t(latch) + 1 + getSJ(i);
    if (getOp(i) == Op::FORLOOP || getOp(i) == Op::TFORLOOP) h = int64_t(latch) + 1 - getBx(i);
    if (h < 0) continue;
    uint32_t header = uint32_t(h);
    loopHeader_[header] = 1;
    for (uint32_t q = header; q <= latch; q++) {
      if (int64_t(latch - header) < span[q]) {
        span[q] = latch - header;
        innermost_[q] = header;
      }
    }
    // A backward jump of a test is the JMP after it: the test's successors hold it.
    std::vector<uint8_t> seen(n, 0);
    std::vector<uint32_t> work;
    if (compiled[header]) work.push_back(header);
    while (!work.empty() && !iterates[header]) {
      uint32_t pc = work.back();
      work.pop_back();
      const PcFlow& f = flow_.pcs[pc];
      for (uint8_t s = 0; s < f.numSucc; s++) {
        uint32_t to = f.succ[s];
        if (to == header) iterates[header] = 1;
        if (to > header && to <= latch && compiled[to] && !seen[to]) {
          seen[to] = 1;
          work.push_back(to);
        }
      }
    }
  }
  return iterates;
}

// The tag the code built from feedback at `pc` tests register r for, where it reads r:
// kNoPrediction where the code takes any tag there (or another, or none was seen).
uint8_t Lowering::tagTestedAt(uint32_t pc, int r) const {
  Instruction i = req_.code[pc];
  Op op = getOp(i);
  auto asTag = [](uint8_t seen) {
    return seen == kWeftJitSeenInt ? kTagInt : seen == kWeftJitSeenFloat ? kTagFloat : kNoPrediction;
  };
  uint8_t x = kNoPrediction, y = kNoPrediction;
  int xr = -1, yr = -1;
  if (isArith(op)) {
    xr = getB(i);
    x = asTag(seenX(pc));
    if (arithRegOperand(op)) yr = getC(i), y = asTag(seenY(pc));
  } else if (op == Op::EQ || op == Op::LT || op == Op::LE) {
    xr = getA(i), x = asTag(seenX(pc));
    yr = getB(i), y = asTag(seenY(pc));
  } else if (op >= Op::EQK && op <= Op::GEI) {
    xr = getA(i), x = asTag(seenX(pc));
  } else if (op == Op::FORLOOP) {
    xr = getA(i) + 2, x = asTag(seenX(pc));  // the step; FORPREP made the others its kind
  } else if (op == Op::GETTABLE || op == Op::GETI || op == Op::GETFIELD) {
    xr = getB(i), x = (feedback(pc) & 0xf) == kWeftJitSeenTable ? kTagTable : kNoPrediction;
    if (op == Op::GETTABLE) yr = getC(i), y = asTag(seenY(pc));
  }
  if (xr == r && yr == r) return x == y ? x : kConflict;
  return xr == r ? x : yr == r ? y : kNoPrediction;
}

// What an entry at `pc` may take as register r's tag: the one every read on the paths
// from pc that tests r (before r is written) was built for, or kNoPrediction; `site` is
// the first such read. A read that tests nothing (a move, a call's argument) constrains
// nothing.
uint8_t Lowering::entryTag(uint32_t pc, int r, uint32_t* site) const {
  constexpr uint32_t kMaxVisits = 512;  // a bound on the search in large functions
  std::vector<uint8_t> seen(req_.codeSize, 0);
  std::vector<uint32_t> work{pc};
  seen[pc] = 1;
  uint8_t found = kNoPrediction;
  for (uint32_t visits = 0; !work.empty(); visits++) {
    if (visits == kMaxVisits) return kNoPrediction;
    uint32_t at = work.back();
    work.pop_back();
    const PcFlow& f = flow_.pcs[at];
    if (f.use[r]) {
      uint8_t t = tagTestedAt(at, r);
      if (t == kConflict || (t != kNoPrediction && found != kNoPrediction && t != found)) return kNoPrediction;
      if (t != kNoPrediction && found == kNoPrediction) found = t, *site = at;
    }
    if (f.def[r] || f.mayDef[r]) continue;
    for (uint8_t k = 0; k < f.numSucc; k++) {
      uint32_t to = f.succ[k];
      if (to < req_.codeSize && !seen[to]) {
        seen[to] = 1;
        work.push_back(to);
      }
    }
  }
  return found;
}

// The block an entry at `pc` goes to from the shared entry block: there the registers
// whose tags the code tests take the tags its reads were built for, or the entry returns
// kWeftJitExitEntryGuard (nothing ran) with the first read's pc, whose feedback the VM
// widens with the frame's types; the next version (WeftJitRequest::noEntryTests) tests
// no entry.
// With the tags known at a loop header, LLVM folds the header's tag phis and drops the
// tests in the loop (docs/design/jit.md, "Entry speculation").
BasicBlock* Lowering::speculateEntry(uint32_t pc, const RegSet& live) {
  if (!req_.profile || req_.noEntryTests) return blocks_[pc];
  BasicBlock* spec = nullptr;
  for (int r = 0; r < kMaxRegs; r++) {
    if (!live[r]) continue;
    uint32_t site = 0;
    uint8_t want = entryTag(pc, r, &site);
    if (want == kNoPrediction) continue;
    if (!spec) {
      spec = newBlock("enter_spec");
      b_.SetInsertPoint(spec);
    }
    BasicBlock* ok = newBlock("entry_tag");
    BasicBlock* fail = newBlock("entry_miss");
    b_.CreateCondBr(isTag(tag(r), want), ok, fail);
    b_.SetInsertPoint(fail);
    b_.CreateRet(b_.getInt64(uint64_t(site) | (kWeftJitExitEntryGuard << 32)));
    b_.SetInsertPoint(ok);
    b_.CreateStore(b_.getInt8(want), tagVar_[r]);
  }
  if (!spec) return blocks_[pc];
  b_.CreateBr(blocks_[pc]);
  return spec;
}

// The switch on the entry index. An entry loads what the code may read or write back
// from there (jit/flow.h): the start alone, where compiled calls come in every call, and
// every other entry together, in one block that loads what any of them needs (loading a
// register another entry needs costs a load; a block per entry cost LLVM a quarter of
// fannkuch's instructions).
void Lowering::enterAt(const std::vector<uint8_t>& entryMap, BasicBlock* noEntry) {
  llvm::SwitchInst* sw = b_.CreateSwitch(fn_->getArg(2), noEntry);
  auto load = [&](const RegSet& live) {
    for (int r = 0; r < kMaxRegs; r++) {
      if (live[r]) reload(r);
    }
  };
  RegSet others;
  BasicBlock* shared = nullptr;
  for (uint32_t pc = 0; pc < req_.codeSize; pc++) {
    if (!entryMap[pc]) continue;
    if (pc != 0 && !stale_) {
      if (!shared) shared = newBlock("enter_any");
      others |= flow_.liveIn[pc];
      sw->addCase(b_.getInt32(pc), shared);
      continue;
    }
    BasicBlock* enter = newBlock("enter");
    sw->addCase(b_.getInt32(pc), enter);
    b_.SetInsertPoint(enter);
    load(flow_.liveIn[pc]);
    if (stale_) stale_->skipReload(b_, pc, flow_.liveIn[pc], payVar_);
    b_.CreateBr(blocks_[pc]);
  }
  if (!shared) return;
  b_.SetInsertPoint(shared);
  load(others);
  llvm::SwitchInst* to = b_.CreateSwitch(fn_->getArg(2), noEntry);
  for (uint32_t pc = 1; pc < req_.codeSize; pc++) {
    if (entryMap[pc]) to->addCase(b_.getInt32(pc), speculateEntry(pc, flow_.liveIn[pc]));
  }
}

void Lowering::discard() {
  llvm::Function* made[] = {fn_, probe_, intNode_};
  for (llvm::Function* f : made) {
    if (f) f->dropAllReferences();
  }
  for (llvm::Function* f : made) {
    if (f) f->eraseFromParent();
  }
  fn_ = probe_ = intNode_ = nullptr;
}

LowerResult Lowering::run(const std::string& name) {
  LowerResult out;
  uint32_t n = req_.codeSize;
  if (n == 0) return out;
  // Which instructions are their own dispatch points (not the second half of a pair).
  std::vector<uint8_t> pairTail(n + 1, 0);
  for (uint32_t pc = 0; pc + 1 < n; pc++) pairTail[pc + 1] = instructionLength(req_, pc) == 2;
  std::vector<uint8_t> compiled(n, 0);
  for (uint32_t pc = 0; pc < n; pc++) compiled[pc] = supported(pc) && !cold(pc);
  flow_ = analyseFlow(req_, compiled);
  for (int r = 0; r < kMaxRegs && req_.captured; r++) captured_[r] = (req_.captured[r / 8] >> (r % 8)) & 1;
  unsyncedWrites(compiled);
  std::vector<uint8_t> iterates = loopsThatIterate(compiled);
  std::vector<uint8_t> toReturn = reachesReturn(compiled);
  // An entry pays a call and an exit: worth it only where compiled code runs on, inside
  // a loop that can go round in compiled code (bench/run.py --jit: entries in loop-free
  // functions made fib and spectralnorm's call-heavy code twice as slow; entries in
  // loops that call on every round kept spectralnorm 1.2x slower), at a run of at least
  // two compiled instructions or a branch. And only where a run starts: a loop header, a
  // FORPREP, or after an instruction the tier leaves to the interpreter (a call); after
  // an exit the interpreter comes back at the next of these. More entries made LLVM's
  // time grow with their count (enterAt).
  out.entryMap.assign(n, 0);
  bool any = false;
  for (uint32_t pc = 0; pc < n; pc++) {
    if (!compiled[pc] || pairTail[pc]) continue;
    out.compiledOps++;
    Op op = getOp(req_.code[pc]);
    uint32_t next = pc + instructionLength(req_, pc);
    bool branch = op == Op::JMP || op == Op::FORLOOP || op == Op::FORPREP || isTest(op);
    // A call may return to the interpreter (its callee left compiled code), which comes
    // back after it.
    bool afterCall = pc > 0 && getOp(req_.code[pc - 1]) == Op::CALL;
    bool runStarts = op == Op::FORPREP || loopHeader_[pc] || pc == 0 || afterCall ||
                     (pc > 0 && !compiled[pc - 1] && !pairTail[pc - 1]);
    // A FORPREP enters the loop it starts; anything else the innermost loop around it,
    // or (at the start and after a call) runs to a compiled return. Not after a call
    // inside a loop whose rounds all leave compiled code: that run goes round to the
    // exit far more often than out to the return (bench/cd.lua's `frame`, whose loop
    // calls a function the VM rejected: an entry and an exit every round).
    bool worth = op == Op::FORPREP ? iterates[pc + 1] : innermost_[pc] >= 0 && iterates[uint32_t(innermost_[pc])];
    bool tail = pc == 0 || (afterCall && innermost_[pc] < 0);
    worth = worth || (tail && toReturn[pc]);
    // A function that only returns (`function() end`) has its start for compiled calls:
    // without one they left compiled code at the call, every time.
    bool onlyReturns = pc == 0 && (op == Op::RETURN0 || op == Op::RETURN1 || op == Op::RETURN);
    if (runStarts && worth && (branch || onlyReturns || (next < n && compiled[next]))) {
      out.entryMap[pc] = 1;
      any = true;
    }
  }
  if (!any) return out;
  // A start that serves only compiled callers: no loop goes round in the code and it
  // makes no compiled call, so an entry from the interpreter's own call would cost more
  // than it saves (pcall.lua's `add`, called through pcall: an entry and an exit at its
  // return every call made it 1.37x slower).
  bool callsOrLoops = std::any_of(iterates.begin(), iterates.end(), [](uint8_t v) { return v != 0; });
  for (uint32_t pc = 0; pc < n && !callsOrLoops; pc++) {
    Op op = getOp(req_.code[pc]);
    bool luaTail = op == Op::TAILCALL && !(req_.profile && nativeTailCall(req_, pc));
    callsOrLoops = compiled[pc] && ((op == Op::CALL && luaCall(pc)) || luaTail);
  }
  if (out.entryMap[0] && !callsOrLoops) out.entryMap[0] = kWeftJitEntryForCalls;
  startEntry_ = out.entryMap[0] != 0;

  // Deferred frames pay where calls are most of the work: a function that calls itself,
  // or one whose loops all leave compiled code; never in a shared frame.
  bool callsItself = false;
  for (uint32_t pc = 0; pc < n; pc++) callsItself = callsItself || (compiled[pc] && deferredCall(pc));
  bool loops = std::any_of(iterates.begin(), iterates.end(), [](uint8_t v) { return v != 0; });
  defer_ = defer_ && (callsItself || !loops) && !req_.captured && !req_.faultSkipReload && !host_.stress;
  fn_ = llvm::Function::Create(entryType(), llvm::Function::ExternalLinkage, name, m_);
  // The stack and the budget are touched by this thread only and never alias each other.
  fn_->addParamAttr(0, llvm::Attribute::NoAlias);
  fn_->addParamAttr(1, llvm::Attribute::NoAlias);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  // Float operations are constrained (dynamic rounding): LLVM folds only exact results,
  // so a NaN made at run time is the hardware's (its sign shows in tostring), as the
  // interpreter's is; a folded one would be APFloat's positive NaN.
  fn_->addFnAttr(llvm::Attribute::StrictFP);
  b_.setIsFPConstrained(true);
  b_.setDefaultConstrainedRounding(llvm::RoundingMode::Dynamic);
  b_.setDefaultConstrainedExcept(llvm::fp::ebIgnore);
  base_ = fn_->getArg(0);
  budget_ = fn_->getArg(1);
  thread_ = fn_->getArg(3);
  deferred_ = fn_->getArg(4);
  BasicBlock* entry = BasicBlock::Create(ctx_, "entry", fn_);
  BasicBlock* noEntry = BasicBlock::Create(ctx_, "no_entry", fn_);
  blocks_.resize(n + 2);
  for (uint32_t pc = 0; pc < n; pc++) blocks_[pc] = BasicBlock::Create(ctx_, "pc", fn_);
  // Falling off the end cannot happen in verified code; exit there anyway.
  blocks_[n] = blocks_[n + 1] = noEntry;
  for (auto& e : exits_) e.assign(n + 2, nullptr);
  b_.SetInsertPoint(noEntry);
  b_.CreateRet(b_.getInt64(kWeftJitExitNoEntry << 32));
  b_.SetInsertPoint(entry);
  payVar_.assign(kMaxRegs, nullptr);
  tagVar_.assign(kMaxRegs, nullptr);
  for (int r = 0; r < kMaxRegs; r++) {
    if (!flow_.touched[r]) continue;
    payVar_[r] = b_.CreateAlloca(b_.getInt64Ty());
    tagVar_[r] = b_.CreateAlloca(b_.getInt8Ty());
  }
  if (req_.faultSkipReload) stale_ = std::make_unique<StaleReload>(m_);
  shared_ = b_.getFalse();
  if (req_.captured) {
    Value* openTop = b_.CreateLoad(b_.getInt32Ty(), at(thread_, host_.layout.threadOpenTop));
    shared_ = b_.CreateICmpUGT(openTop, stackIndex(base_));
  }
  enterAt(out.entryMap, noEntry);
  for (uint32_t pc = 0; pc < n; pc++) {
    b_.SetInsertPoint(blocks_[pc]);
    lower(pc);
  }
  out.fn = fn_;
  return out;
}

}  // namespace lowering

bool layoutAgrees(const WeftJitLayout& l) {
  using namespace lowering;
  return l.valueSize == kValueSize && l.valueTag == kTagOffset && l.tagNil == kTagNil && l.tagInt == kTagInt &&
         l.tagString == kTagString && l.tagTable == kTagTable && l.tagLuaClosure == kTagLuaClosure;
}

LowerResult lowerPrototype(llvm::Module& module, const std::string& name, const WeftJitRequest& request,
                           const WeftJitHost& host) {
  {
    lowering::Lowering deferring(module, request, host, true);
    LowerResult out = deferring.run(name);
    out.defersFrames = deferring.defers();
    if (!deferring.deferralFailed()) return out;
    deferring.discard();
  }
  lowering::Lowering l(module, request, host, false);
  return l.run(name);
}

}  // namespace weft::jit
