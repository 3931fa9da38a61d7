// Known natives computed in place, `#`, and generic `for` loops over ipairs and next
// (docs/design/jit.md, "Known natives"). A site whose feedback saw one known native
// (vm/jit_abi.h WeftJitNative) checks that R[A] is still that function and computes its
// result as the native would; eager mode, without feedback, tests every native that
// fits the call's shape. Arguments the fast path does not take (a string to coerce, a
// float and an integer to compare, a byte out of range, an error to raise) exit to the
// interpreter at the instruction, which calls the native: its errors and messages stay
// the library's.
#include <llvm/IR/Intrinsics.h>

#include "jit/lowering.h"

namespace weft::jit::lowering {

std::vector<uint8_t> Lowering::nativesAt(uint32_t pc, bool forCall) const {
  Instruction i = req_.code[pc];
  int nargs = forCall ? 2 : getB(i) - 1, nresults = forCall ? getC(i) : getC(i) - 1;
  if (!forCall && (getB(i) == 0 || getC(i) == 0)) return {};
  std::vector<uint8_t> ids;
  for (uint8_t id = 1; id < kWeftJitNativeCount; id++) {
    if (!host_.natives[id] || !weftJitNativeFits(id, nargs, nresults, forCall)) continue;
    if (!req_.profile || req_.profile[pc] == weftJitSeenNative(id)) ids.push_back(id);
  }
  return ids;
}

void Lowering::dispatchNatives(uint32_t pc, const std::vector<uint8_t>& ids, const std::function<void(uint8_t)>& lower,
                               const std::function<void()>& other) {
  int a = getA(req_.code[pc]);
  Value* isNative = isTag(tag(a), kTagLightNative);
  for (uint8_t id : ids) {
    Value* fn = b_.getInt64(uint64_t(reinterpret_cast<uintptr_t>(host_.natives[id])));
    cases(
        b_.CreateAnd(isNative, b_.CreateICmpEQ(ival(a), fn)), [&] { lower(id); }, [] {});
  }
  other();
}

void Lowering::nativeCall(uint32_t pc, Instruction i, uint8_t id) {
  int a = getA(i), nresults = getC(i) - 1;
  Value* t1 = tag(a + 1);
  auto number = [&](Value* t) { return b_.CreateOr(isTag(t, kTagInt), isTag(t, kTagFloat)); };
  switch (id) {
    case kWeftJitNativeSqrt: {
      guard(number(t1), pc);
      llvm::Function* f =
          llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::experimental_constrained_sqrt, {b_.getDoubleTy()});
      storeF(a, b_.CreateConstrainedFPCall(f, {toF(t1, a + 1)}));
      break;
    }
    case kWeftJitNativeFloor:
    case kWeftJitNativeCeil:
      roundNative(pc, a, id == kWeftJitNativeFloor);
      return;
    case kWeftJitNativeAbs: {
      guard(number(t1), pc);
      Value* x = ival(a + 1);
      Value* negated = b_.CreateSub(b_.getInt64(0), x);  // wraps at math.mininteger, as Lua's
      Value* intAbs = b_.CreateSelect(b_.CreateICmpSLT(x, b_.getInt64(0)), negated, x);
      Value* floatAbs = b_.CreateAnd(x, b_.getInt64(INT64_MAX));  // the sign bit cleared: fabs
      setReg(a, b_.CreateSelect(isTag(t1, kTagInt), intAbs, floatAbs), t1);
      break;
    }
    case kWeftJitNativeMin:
    case kWeftJitNativeMax: {
      // lua's loop: the later argument wins where it is less (min), or where the earlier
      // is less than it (max); operands of one number kind only, the rest compare mixed.
      Value* t2 = tag(a + 2);
      guard(b_.CreateAnd(b_.CreateICmpEQ(t1, t2), number(t1)), pc);
      Value* x = ival(a + 1);
      Value* y = ival(a + 2);
      bool max = id == kWeftJitNativeMax;
      Value* intLess = max ? b_.CreateICmpSLT(x, y) : b_.CreateICmpSLT(y, x);
      Value* fx = b_.CreateBitCast(x, b_.getDoubleTy());
      Value* fy = b_.CreateBitCast(y, b_.getDoubleTy());
      Value* fltLess = max ? b_.CreateFCmpOLT(fx, fy) : b_.CreateFCmpOLT(fy, fx);
      Value* second = b_.CreateSelect(isTag(t1, kTagInt), intLess, fltLess);
      setReg(a, b_.CreateSelect(second, y, x), t1);
      break;
    }
    case kWeftJitNativeStrLen:
      guard(isTag(t1, kTagString), pc);
      storeI(a, stringLength(ival(a + 1)));
      break;
    case kWeftJitNativeByte: {
      guard(isTag(t1, kTagString), pc);
      Value* s = b_.CreateIntToPtr(ival(a + 1), b_.getPtrTy());
      Value* pos = b_.getInt64(1);
      if (getB(i) == 3) {
        guard(isTag(tag(a + 2), kTagInt), pc);
        pos = ival(a + 2);
      }
      // A position outside 1..#s (relative from the end, or no byte) is the library's.
      Value* idx = b_.CreateSub(pos, b_.getInt64(1));
      guard(b_.CreateICmpULT(idx, stringLength(ival(a + 1))), pc);
      Value* byte =
          b_.CreateLoad(b_.getInt8Ty(), b_.CreateInBoundsGEP(b_.getInt8Ty(), at(s, host_.layout.stringData), idx));
      storeI(a, b_.CreateZExt(byte, b_.getInt64Ty()));
      break;
    }
    case kWeftJitNativeIpairs:
    case kWeftJitNativePairs: {
      // The loop's three values (baseIpairs, basePairs); pairs of a table with a
      // metatable may have __pairs: the interpreter's.
      bool ipairs = id == kWeftJitNativeIpairs;
      if (!ipairs) {
        guard(isTag(t1, kTagTable), pc);
        Value* h = b_.CreateIntToPtr(ival(a + 1), b_.getPtrTy());
        Value* mt = loadShared(b_.getPtrTy(), at(h, host_.layout.tableMetatable), llvm::AtomicOrdering::Acquire);
        guard(b_.CreateIsNull(mt), pc);
      }
      uint8_t iterator = ipairs ? kWeftJitNativeIpairsAux : kWeftJitNativeNext;
      if (nresults > 1) copy(a + 1, a + 1);
      if (nresults > 2) {
        if (ipairs) {
          storeI(a + 2, b_.getInt64(0));
        } else {
          storeTagOnly(a + 2, kTagNil);
        }
      }
      setReg(a, b_.getInt64(uint64_t(reinterpret_cast<uintptr_t>(host_.natives[iterator]))),
             b_.getInt8(kTagLightNative));
      for (int r = a + 3; r < a + nresults; r++) storeTagOnly(r, kTagNil);
      b_.CreateBr(block(pc + 1));
      return;
    }
    default:
      exitHere(pc);
      return;
  }
  for (int r = a + 1; r < a + nresults; r++) storeTagOnly(r, kTagNil);
  b_.CreateBr(block(pc + 1));
}

// math.floor and math.ceil: an integer as it is; a float rounded, an integer where it
// fits (intIfFits in vm/lib/math.cpp), else the float.
void Lowering::roundNative(uint32_t pc, int a, bool floor) {
  Instruction i = req_.code[pc];
  Value* t1 = tag(a + 1);
  guard(b_.CreateOr(isTag(t1, kTagInt), isTag(t1, kTagFloat)), pc);
  auto done = [&] {
    for (int r = a + 1; r < a + getC(i) - 1; r++) storeTagOnly(r, kTagNil);
    b_.CreateBr(block(pc + 1));
  };
  cases(
      isTag(t1, kTagInt),
      [&] {
        copy(a, a + 1);
        done();
      },
      [&] {
        auto which =
            floor ? llvm::Intrinsic::experimental_constrained_floor : llvm::Intrinsic::experimental_constrained_ceil;
        llvm::Function* f = llvm::Intrinsic::getDeclaration(&m_, which, {b_.getDoubleTy()});
        Value* r = b_.CreateConstrainedFPCall(f, {fval(a + 1)});
        // -2^63 <= r < 2^63 (false for a NaN), as lua_numbertointeger tests.
        Value* low = llvm::ConstantFP::get(b_.getDoubleTy(), -9223372036854775808.0);
        Value* high = llvm::ConstantFP::get(b_.getDoubleTy(), 9223372036854775808.0);
        Value* fits = b_.CreateAnd(b_.CreateFCmpOGE(r, low), b_.CreateFCmpOLT(r, high));
        cases(
            fits,
            [&] {
              storeI(a, b_.CreateFPToSI(r, b_.getInt64Ty()));
              done();
            },
            [&] {
              storeF(a, r);
              done();
            });
      });
}

Value* Lowering::stringLength(Value* str) {
  return b_.CreateLoad(b_.getInt64Ty(), at(b_.CreateIntToPtr(str, b_.getPtrTy()), host_.layout.stringLength));
}

void Lowering::len(uint32_t pc, Instruction i) {
  int a = getA(i), rb = getB(i);
  Value* t = tag(rb);
  cases(
      isTag(t, kTagString),
      [&] {
        storeI(a, stringLength(ival(rb)));
        b_.CreateBr(block(pc + 1));
      },
      [&] {
        guard(isTag(t, kTagTable), pc);
        helperCall(pc, reinterpret_cast<const void*>(host_.helpers.len), {statePtr(), slot(a), slot(rb)}, false);
        b_.CreateBr(block(pc + 1));
      });
}

// CLOSE where nothing is open at or above R[A] (the helper looks): generic `for` loops
// end with one, whose closing value TFORPREP found false. Else the interpreter closes.
void Lowering::close(uint32_t pc, Instruction i) {
  auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy()}, false);
  Value* none =
      b_.CreateCall(fty, hostPtr(reinterpret_cast<const void*>(host_.helpers.closes)), {thread_, slot(getA(i))});
  guard(b_.CreateICmpNE(none, b_.getInt32(0)), pc);
  b_.CreateBr(block(pc + 1));
}

// TFORPREP: a closing value (R[A+3]) that is nil or false closes nothing; any other is
// the interpreter's (markTbcMayGC).
void Lowering::tforPrep(uint32_t pc, Instruction i) {
  guard(falsy(tag(getA(i) + 3)), pc);
  b_.CreateBr(block(pc + 1 + getBx(i)));
}

void Lowering::tforCall(uint32_t pc, Instruction i) {
  auto other = [&] {
    if (req_.profile) {
      b_.CreateBr(exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc]));
    } else {
      exitHere(pc);
    }
  };
  dispatchNatives(
      pc, nativesAt(pc, true),
      [&](uint8_t id) {
        if (id == kWeftJitNativeIpairsAux) {
          ipairsStep(pc, i);
        } else {
          nextStep(pc, i);
        }
      },
      other);
}

// ipairsAux: R[A+2] + 1 as the key; its value from the array part inline, else from
// the helper's raw read (the hash part), where no __index applies; the value nil ends
// the loop (R[A+4] nil). With __index the interpreter calls the iterator.
void Lowering::ipairsStep(uint32_t pc, Instruction i) {
  int a = getA(i);
  guard(b_.CreateAnd(isTag(tag(a + 1), kTagTable), isTag(tag(a + 2), kTagInt)), pc);
  Value* h = b_.CreateIntToPtr(ival(a + 1), b_.getPtrTy());
  Value* key = b_.CreateAdd(ival(a + 2), b_.getInt64(1));
  BasicBlock* slow = newBlock("ipairs_slow");
  BasicBlock* got = newBlock("ipairs_value");
  auto [payload, t] = loadTableSlot(arraySlot(h, key, slow));
  BasicBlock* fromArray = b_.GetInsertBlock();
  b_.CreateBr(got);
  b_.SetInsertPoint(slow);
  spillAll(flow_.pcs[pc].use);
  auto* fty =
      llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy(), b_.getInt64Ty()}, false);
  Value* ok = b_.CreateCall(fty, hostPtr(reinterpret_cast<const void*>(host_.helpers.getInt)),
                            {statePtr(), slot(a + 5), slot(a + 1), key});
  guard(b_.CreateICmpNE(ok, b_.getInt32(0)), pc);
  Value* slowPayload = b_.CreateLoad(b_.getInt64Ty(), slot(a + 5));
  Value* slowTag = b_.CreateLoad(b_.getInt8Ty(), slotTag(a + 5));
  BasicBlock* fromHelper = b_.GetInsertBlock();
  b_.CreateBr(got);
  b_.SetInsertPoint(got);
  llvm::PHINode* vp = b_.CreatePHI(b_.getInt64Ty(), 2);
  llvm::PHINode* vt = b_.CreatePHI(b_.getInt8Ty(), 2);
  vp->addIncoming(payload, fromArray);
  vt->addIncoming(t, fromArray);
  vp->addIncoming(slowPayload, fromHelper);
  vt->addIncoming(slowTag, fromHelper);
  BasicBlock* end = newBlock("ipairs_end");
  BasicBlock* more = newBlock("ipairs_more");
  b_.CreateCondBr(isTag(vt, kTagNil), end, more);
  b_.SetInsertPoint(end);
  // A nil with a metatable may still be __index's.
  Value* mt = loadShared(b_.getPtrTy(), at(h, host_.layout.tableMetatable), llvm::AtomicOrdering::Acquire);
  guard(b_.CreateIsNull(mt), pc);
  storeTagOnly(a + 4, kTagNil);
  storeTagOnly(a + 5, kTagNil);
  b_.CreateBr(block(pc + 1));
  b_.SetInsertPoint(more);
  storeI(a + 4, key);
  setReg(a + 5, vp, vt);
  for (int r = a + 6; r < a + 4 + getC(i); r++) storeTagOnly(r, kTagNil);
  b_.CreateBr(block(pc + 1));
}

// next: the helper steps the table (vm/interp.cpp jitNext) and writes R[A+4], R[A+5].
void Lowering::nextStep(uint32_t pc, Instruction i) {
  int a = getA(i);
  helperCall(pc, reinterpret_cast<const void*>(host_.helpers.next), {statePtr(), slot(a)}, false);
  for (int r = a + 6; r < a + 4 + getC(i); r++) storeTagOnly(r, kTagNil);
  b_.CreateBr(block(pc + 1));
}

// TFORLOOP: a non-nil first variable goes round (polling, as FORLOOP).
void Lowering::tforLoop(uint32_t pc, Instruction i) {
  int a = getA(i);
  uint32_t target = pc + 1 - uint32_t(getBx(i));
  cases(
      isTag(tag(a + 4), kTagNil), [&] { b_.CreateBr(block(pc + 1)); },
      [&] {
        copy(a + 2, a + 4);
        jumpTo(pc, pc, target);
      });
}

}  // namespace weft::jit::lowering
