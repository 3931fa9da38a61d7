// Calls and returns (docs/design/jit.md, "Compiled calls"): known natives computed in
// place (jit/lower_native.cpp), and a CALL of a Lua function whose code has an entry at
// its start, which pushes the callee's frame as the interpreter's OP_CALL does and calls
// that code on this machine stack; RETURN into a Lua caller pops it. The common case is inline, from the VM's
// layout (vm/jit.cpp, jitLayout); the rest goes to the helpers callLua and returnLua,
// and what they refuse exits to the interpreter.
#include "jit/lowering.h"
#include "vm/jit_ops.h"

namespace weft::jit::lowering {

// Fixed arguments or the open results of the call before, and fixed results or open ones
// the next instruction takes whole (vm/jit_ops.h jitOpenResultsTaken).
bool Lowering::callShape(uint32_t pc) const {
  Instruction i = req_.code[pc];
  bool results = getC(i) != 0 || (pc + 1 < req_.codeSize && vm::jitOpenResultsTaken(i, req_.code[pc + 1]));
  return (getB(i) != 0 || openArgs(pc)) && results && getA(i) + std::max(getB(i), getC(i)) < kMaxRegs;
}

// A CALL whose arguments are the open results of the CALL before it, up to the thread's
// top (B = 0): `f(g(x))`.
bool Lowering::openArgs(uint32_t pc) const {
  Instruction i = req_.code[pc];
  return getOp(i) == Op::CALL && getB(i) == 0 && pc > 0 && vm::jitOpenResultsTaken(req_.code[pc - 1], i);
}

// The argument count of the call at pc: B - 1, or for open arguments the values from
// R[A+1] up to the thread's top.
Value* Lowering::argCount(uint32_t pc, Instruction i) {
  return openArgs(pc) ? openCount(pc, getA(i) + 1) : b_.getInt32(getB(i) - 1);
}

// A call of callShape, where the feedback saw Lua functions only.
bool Lowering::luaCall(uint32_t pc) const {
  return callShape(pc) && (!req_.profile || req_.profile[pc] == kWeftJitSeenLuaFunction || req_.profile[pc] == 0);
}

// A call of callShape, where the feedback saw natives (neither known ones nor pcall and
// xpcall) only.
bool Lowering::nativeFnCall(uint32_t pc) const {
  return callShape(pc) && req_.profile && req_.profile[pc] == kWeftJitSeenNativeFn;
}

// After a call of open results: every register from R[a] the code touches, from its
// slot. The results are there, and above them what the callee left; the variables held
// values from before the call, which an exit's write-back would put over the results.
void Lowering::reloadFrom(int a) {
  for (int r = a; r < kMaxRegs; r++) {
    if (payVar_[r]) reload(r);
  }
}

// Whether every compiled path of the call at pc reconciles: a CALL neither inlined nor
// dispatching known natives (callLua, callNative), a TAILCALL (of a native: callNative;
// of a Lua function it does not come back).
bool Lowering::callSyncs(uint32_t pc) const {
  Instruction i = req_.code[pc];
  if (getOp(i) == Op::TAILCALL) return true;
  if (getOp(i) != Op::CALL || !nativesAt(pc).empty()) return false;
  const WeftJitInline* callee = inlineAt(pc);
  return !(callee && inlinable(*callee, getB(i) - 1, getC(i) - 1));
}

// A forward pass over the compiled instructions: a reconciling call clears the set,
// every instruction adds the captured registers it may write; the interpreter
// reconciles at every entry (vm/interp.cpp jitEnter), so entries start empty.
void Lowering::unsyncedWrites(const std::vector<uint8_t>& compiled) {
  uint32_t n = req_.codeSize;
  unsyncedIn_.assign(n + 1, RegSet());
  unsyncedOut_.assign(n + 1, RegSet());
  if (captured_.none()) return;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t pc = 0; pc < n; pc++) {
      if (!compiled[pc]) continue;
      const PcFlow& f = flow_.pcs[pc];
      RegSet out = (callSyncs(pc) ? RegSet() : unsyncedIn_[pc]) | ((f.def | f.mayDef) & captured_);
      if (out != unsyncedOut_[pc]) {
        unsyncedOut_[pc] = out;
        changed = true;
      }
      for (uint8_t k = 0; k < f.numSucc; k++) {
        RegSet& in = unsyncedIn_[f.succ[k]];
        if ((in | out) != in) {
          in |= out;
          changed = true;
        }
      }
    }
  }
}

void Lowering::syncShared(uint32_t pc) {
  if (!req_.captured || (unsyncedIn_[pc] & captured_).none()) return;
  BasicBlock* sync = newBlock("sync_shared");
  BasicBlock* synced = newBlock("synced");
  b_.CreateCondBr(shared_, sync, synced);
  b_.SetInsertPoint(sync);
  callHost(reinterpret_cast<const void*>(host_.helpers.syncShared), {thread_, base_});
  b_.CreateBr(synced);
  b_.SetInsertPoint(synced);
}

// The frame's writes went out before the call, so only a cell the call wrote (a closure
// it ran, another task) has anything to bring in: the count tells (vm/thread.h). The
// registers live at `next` are loaded again here if `reloadLive`, else by the caller.
void Lowering::syncSharedAfter(uint32_t next, bool reloadLive) {
  if (!req_.captured) return;
  const WeftJitLayout& l = host_.layout;
  BasicBlock* sync = newBlock("sync_shared");
  BasicBlock* synced = newBlock("synced");
  Value* writes = loadShared(b_.getInt64Ty(), at(thread_, l.threadCellWrites), llvm::AtomicOrdering::Acquire);
  Value* seen = b_.CreateLoad(b_.getInt64Ty(), at(thread_, l.threadSeenCellWrites));
  b_.CreateCondBr(b_.CreateAnd(shared_, b_.CreateICmpNE(writes, seen)), sync, synced);
  b_.SetInsertPoint(sync);
  callHost(reinterpret_cast<const void*>(host_.helpers.syncShared), {thread_, base_});
  const RegSet& live = flow_.liveIn[next];
  for (int r = 0; r < kMaxRegs && reloadLive; r++) {
    if (live[r] && payVar_[r]) reload(r);
  }
  b_.CreateBr(synced);
  b_.SetInsertPoint(synced);
}

// The stack index of slot `p` of this thread's stack.
Value* Lowering::stackIndex(Value* p) {
  Value* stack = loadAt(b_.getPtrTy(), thread_, host_.layout.threadStack);
  Value* bytes = b_.CreateSub(b_.CreatePtrToInt(p, b_.getInt64Ty()), b_.CreatePtrToInt(stack, b_.getInt64Ty()));
  return b_.CreateTrunc(b_.CreateLShr(bytes, b_.getInt64(4)), b_.getInt32Ty());
}

// How many values an open call left from R[a] (up to the thread's top); an exit where
// the top is below R[a] (a hostile binary chunk: the interpreter raises).
Value* Lowering::openCount(uint32_t pc, int a) {
  Value* n = b_.CreateSub(loadAt(b_.getInt32Ty(), thread_, host_.layout.threadTop), stackIndex(slot(a)));
  guard(b_.CreateICmpSGE(n, b_.getInt32(0)), pc);
  return n;
}

// A known native where the feedback saw one (or, without feedback, any that fits),
// else a native through the callNative helper, else a compiled call.
void Lowering::callOutOfLine(uint32_t pc, Instruction i) {
  if (deferredCall(pc)) {  // the VM found this function in R[A]: no native to test for
    callDeferred(pc, i);
    return;
  }
  std::vector<uint8_t> natives = nativesAt(pc);
  auto other = [&] {
    if (nativeFnCall(pc)) {
      callNative(pc, i);
    } else if (luaCall(pc)) {  // no feedback (eager mode): a Lua function, too
      callLua(pc, i);
    } else {
      b_.CreateBr(exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc]));
    }
  };
  if (natives.empty()) {
    other();
    return;
  }
  dispatchNatives(
      pc, natives, [&](uint8_t id) { nativeCall(pc, i, id); }, other);
}

// Eager mode (no feedback): a callee that is no Lua function goes to callNative; the
// code goes on for a Lua function.
void Lowering::nativeUnlessLua(uint32_t pc, Instruction i) {
  BasicBlock* lua = newBlock("callee_lua");
  BasicBlock* other = newBlock("callee_native");
  b_.CreateCondBr(isTag(tag(getA(i)), kTagLuaClosure), lua, other);
  b_.SetInsertPoint(other);
  callNative(pc, i);
  b_.SetInsertPoint(lua);
}

// The frame is written back first: the native may read it (debug), collect, grow the
// stack, yield or raise. After kWeftJitNativeDone the registers the code reads from here
// are loaded again, which a native's debug.setlocal may have changed; the other answers
// leave (docs/design/jit.md, "Native calls"). A TAILCALL's native is called in place
// for all its results, which the RETURN after it returns, as op_TAILCALL does.
void Lowering::callNative(uint32_t pc, Instruction i) {
  int nresults = getOp(i) == Op::TAILCALL ? -1 : getC(i) - 1;
  spillAll(flow_.dirtyIn[pc]);
  syncShared(pc);
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i32 = b_.getInt32Ty();
  auto* fty = llvm::FunctionType::get(i32, {ptr, ptr, ptr, i32, i32, i32}, false);
  Value* r = b_.CreateCall(
      fty, frameHelper(reinterpret_cast<const void*>(host_.helpers.callNative)),
      {statePtr(), thread_, slot(getA(i)), argCount(pc, i), b_.getInt32(uint32_t(nresults)), b_.getInt32(pc)});
  BasicBlock* done = newBlock("native_done");
  BasicBlock* resume = newBlock("native_resume");
  BasicBlock* failed = newBlock("native_status");
  // Refused (another kind of callee, a hook): with feedback a guard exit, which marks the
  // site for the next version. A nest too deep here is no matter of the site: an exit.
  BasicBlock* refused = req_.profile ? exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc]) : exitBlock(pc);
  llvm::SwitchInst* sw = b_.CreateSwitch(r, failed, 4);
  sw->addCase(b_.getInt32(kWeftJitNativeDone), done);
  sw->addCase(b_.getInt32(kWeftJitNativeResume), resume);
  sw->addCase(b_.getInt32(kWeftJitNativeRefused), refused);
  sw->addCase(b_.getInt32(kWeftJitNativeDeep), exitBlock(pc));
  // The frame is exact (written back, the results in their slots): nothing to write.
  b_.SetInsertPoint(resume);
  b_.CreateRet(b_.getInt64(kWeftJitExitResume << 32));
  b_.SetInsertPoint(failed);
  Value* code = b_.CreateZExt(b_.CreateSub(r, b_.getInt32(kWeftJitNativeStatus)), b_.getInt64Ty());
  b_.CreateRet(b_.CreateOr(code, b_.getInt64(kWeftJitExitStatus << 32)));
  b_.SetInsertPoint(done);
  syncSharedAfter(pc + 1, false);  // the registers are loaded next
  const RegSet& live = flow_.liveIn[pc + 1];
  for (int r2 = 0; r2 < kMaxRegs; r2++) {
    if (live[r2] && payVar_[r2]) reload(r2);
  }
  if (nresults < 0) reloadFrom(getA(i));
  b_.CreateBr(block(pc + 1));
}

// &thread->frames[frameCount - 1]: the running frame.
Value* Lowering::topFrame(Value* frameCount) {
  const WeftJitLayout& l = host_.layout;
  Value* frames = loadAt(b_.getPtrTy(), thread_, l.threadFrames);
  Value* index = b_.CreateZExt(b_.CreateSub(frameCount, b_.getInt32(1)), b_.getInt64Ty());
  return b_.CreateGEP(b_.getInt8Ty(), frames, b_.CreateMul(index, b_.getInt64(l.frameSize)));
}

Value* Lowering::loadAt(llvm::Type* type, Value* ptr, uint64_t offset) { return b_.CreateLoad(type, at(ptr, offset)); }
void Lowering::storeAt(Value* v, Value* ptr, uint64_t offset) { b_.CreateStore(v, at(ptr, offset)); }

// The frame is made exact first: the callee may leave compiled code, and the
// interpreter then finishes it and this frame from its saved pc. The callee's return
// has moved the results into R[A]...; any other exit of the callee, or of a frame it
// called, returns from every compiled caller at once, marked kWeftJitExitInCallee.
void Lowering::callLua(uint32_t pc, Instruction i) {
  frameUsed_ = true;
  if (req_.profile) {
    speculate(isTag(tag(getA(i)), kTagLuaClosure), pc);
  } else {
    nativeUnlessLua(pc, i);
  }
  spillAll(flow_.dirtyIn[pc]);
  syncShared(pc);
  BasicBlock* slow = newBlock("call_slow");
  BasicBlock* run = newBlock("call");
  llvm::PHINode* entry;
  {
    llvm::IRBuilderBase::InsertPointGuard keep(b_);
    b_.SetInsertPoint(run);
    entry = b_.CreatePHI(b_.getPtrTy(), 2);
  }
  pushFrameInline(pc, i, slow, run, entry);
  b_.SetInsertPoint(slow);
  callHelper(pc, i, run, entry);
  b_.SetInsertPoint(run);
  runPushed(pc, i, entry);
}

llvm::FunctionType* Lowering::entryType() {
  llvm::Type* ptr = b_.getPtrTy();
  return llvm::FunctionType::get(b_.getInt64Ty(), {ptr, ptr, b_.getInt32Ty(), ptr, b_.getInt64Ty()}, false);
}

void Lowering::runPushed(uint32_t pc, Instruction i, Value* entry) {
  int a = getA(i), nresults = getC(i) - 1;
  Value* r = b_.CreateCall(entryType(), entry,
                           {at(base_, uint64_t(a + 1) * kValueSize), budget_, b_.getInt32(0), thread_, b_.getInt64(0)});
  BasicBlock* back = newBlock("returned");
  BasicBlock* out = newBlock("callee_exit");
  Value* kind = b_.CreateLShr(r, b_.getInt64(32));
  b_.CreateCondBr(b_.CreateICmpEQ(kind, b_.getInt64(kWeftJitExitReturned)), back, out);
  b_.SetInsertPoint(out);
  b_.CreateRet(b_.CreateOr(r, b_.getInt64(kWeftJitExitInCallee << 32)));
  b_.SetInsertPoint(back);
  for (int r2 = a; r2 < a + nresults; r2++) reload(r2);
  if (nresults < 0) reloadFrom(a);
  syncSharedAfter(pc + 1, true);
  b_.CreateBr(block(pc + 1));
}

// Arithmetic on an operand that was never a number (docs/design/jit.md, "Metamethod
// arithmetic"): the arithMeta helper pushes the Lua metamethod's frame, its code runs as
// a compiled call's (runPushed), and its return stores the result in R[A]. Where the
// helper refuses, an exit at the instruction, which the interpreter runs.
void Lowering::arithMeta(uint32_t pc, Instruction i) {
  spillAll(flow_.dirtyIn[pc]);
  syncShared(pc);
  llvm::Type* ptr = b_.getPtrTy();
  if (!calleeBase_) {
    llvm::IRBuilder<> start(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    calleeBase_ = start.CreateAlloca(ptr);
  }
  auto* helperTy = llvm::FunctionType::get(ptr, {ptr, ptr, ptr, b_.getInt32Ty(), ptr}, false);
  Value* entry = b_.CreateCall(helperTy, frameHelper(reinterpret_cast<const void*>(host_.helpers.arithMeta)),
                               {statePtr(), thread_, budget_, b_.getInt32(pc), calleeBase_});
  BasicBlock* run = newBlock("meta_call");
  b_.CreateCondBr(b_.CreateIsNull(entry), exitBlock(pc), run);
  b_.SetInsertPoint(run);
  Value* r = b_.CreateCall(entryType(), entry,
                           {b_.CreateLoad(ptr, calleeBase_), budget_, b_.getInt32(0), thread_, b_.getInt64(0)});
  BasicBlock* back = newBlock("meta_returned");
  BasicBlock* out = newBlock("meta_exit");
  b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateLShr(r, b_.getInt64(32)), b_.getInt64(kWeftJitExitReturned)), back, out);
  b_.SetInsertPoint(out);
  b_.CreateRet(b_.CreateOr(r, b_.getInt64(kWeftJitExitInCallee << 32)));
  b_.SetInsertPoint(back);
  reload(getA(i));
  syncSharedAfter(pc + 2, true);
  b_.CreateBr(block(pc + 2));
}

// The frame count as if every deferred frame were written: this frame's index + 1.
Value* Lowering::frameCountNow() {
  Value* written = loadAt(b_.getInt32Ty(), thread_, host_.layout.threadFrameCount);
  if (!defer_) return written;
  Value* index = b_.CreateTrunc(deferred_, b_.getInt32Ty());
  return b_.CreateSelect(isDeferred(), b_.CreateAdd(index, b_.getInt32(1)), written);
}

// A call of itself (selfCall) in a function that takes deferred frames passes the callee
// one, from this frame whether written or deferred (docs/design/jit.md, "Deferred
// frames"), after the pushed call's checks (runDeferred). Anything the checks refuse:
// from a deferred frame an exit at the call (writing this frame), from a written one the
// callLua helper.
void Lowering::callDeferred(uint32_t pc, Instruction i) {
  const WeftJitLayout& l = host_.layout;
  int a = getA(i);
  // Without feedback (eager mode) another kind of callee exits: the interpreter calls it.
  if (req_.profile) {
    speculate(isTag(tag(a), kTagLuaClosure), pc);
  } else {
    guard(isTag(tag(a), kTagLuaClosure), pc);
  }
  spillAll(flow_.dirtyIn[pc]);
  BasicBlock* other = newBlock("call_other");
  BasicBlock* slow = newBlock("call_slow");
  Value* func = stackIndex(slot(a));
  Callee callee = selfCallee(a, func, other);
  Value* count = frameCountNow();
  Value* depth =
      b_.CreateSelect(isDeferred(), b_.CreateTrunc(b_.CreateLShr(deferred_, b_.getInt64(48)), b_.getInt8Ty()),
                      loadAt(b_.getInt8Ty(), thread_, l.threadJitDepth));
  Value* ok = b_.CreateAnd(callee.ok, b_.CreateICmpULT(depth, b_.getInt8(uint8_t(l.maxJitDepth))));
  ok = b_.CreateAnd(ok, b_.CreateICmpULT(count, loadAt(b_.getInt32Ty(), thread_, l.threadFrameCap)));
  ok = b_.CreateAnd(ok, b_.CreateICmpULT(count, b_.getInt32(l.maxCallDepth)));
  BasicBlock* go = newBlock("call_deferred");
  b_.CreateCondBr(ok, go, slow);
  b_.SetInsertPoint(go);
  runDeferred(pc, i, fn_, callee.budget, count, depth);
  // Refused: a written frame calls as any compiled call does; a deferred one cannot push
  // a frame above the ones not written, and exits. Another function in R[A] is a guard's
  // exit there (with feedback), which marks the site: the next version calls as usual.
  BasicBlock* helped = newBlock("call_helped");
  b_.SetInsertPoint(other);
  BasicBlock* otherExit = req_.profile ? exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc]) : exitBlock(pc);
  b_.CreateCondBr(isDeferred(), otherExit, helped);
  b_.SetInsertPoint(slow);
  b_.CreateCondBr(isDeferred(), exitBlock(pc), helped);
  b_.SetInsertPoint(helped);
  BasicBlock* run = newBlock("call");
  llvm::PHINode* entry;
  {
    llvm::IRBuilderBase::InsertPointGuard keep(b_);
    b_.SetInsertPoint(run);
    entry = b_.CreatePHI(b_.getPtrTy(), 1);
  }
  callHelper(pc, i, run, entry);
  b_.SetInsertPoint(run);
  runPushed(pc, i, entry);
}

// The call of `entry` with the callee's frame deferred at index `count` (the frame count
// as if every deferred frame were written), at nest depth `depth` + 1, the caller's checks
// passed with `budget` left. When the callee left its code, its frame and every one above
// are written, and this one writes its own (a deferred one) or its saved pc before it
// leaves too.
void Lowering::runDeferred(uint32_t pc, Instruction i, Value* entry, Value* budget, Value* count, Value* depth) {
  int a = getA(i), wanted = getC(i) - 1;
  b_.CreateStore(b_.CreateSub(budget, b_.getInt32(1)), budget_);
  Value* info = b_.CreateOr(b_.CreateZExt(count, b_.getInt64Ty()), b_.getInt64(uint64_t(uint16_t(wanted)) << 32));
  info = b_.CreateOr(info, b_.CreateShl(b_.CreateZExt(b_.CreateAdd(depth, b_.getInt8(1)), b_.getInt64Ty()), 48));
  Value* r = b_.CreateCall(entryType(), entry, {slot(a + 1), budget_, b_.getInt32(0), thread_, info});
  BasicBlock* back = newBlock("returned");
  BasicBlock* out = newBlock("callee_exit");
  b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateLShr(r, b_.getInt64(32)), b_.getInt64(kWeftJitExitReturned)), back, out);
  b_.SetInsertPoint(out);
  Value* resume = codeAt(b_.getInt32(pc + 1));
  BasicBlock* written = newBlock("frame_written");
  BasicBlock* leave = newBlock("leave");
  if (defer_) {
    BasicBlock* write = newBlock("write_frame");
    b_.CreateCondBr(isDeferred(), write, written);
    b_.SetInsertPoint(write);
    writeDeferredFrame(resume, false);
    b_.CreateBr(leave);
  } else {
    b_.CreateBr(written);
  }
  b_.SetInsertPoint(written);
  storeAt(resume, topFrame(count), host_.layout.framePc);
  b_.CreateBr(leave);
  b_.SetInsertPoint(leave);
  b_.CreateRet(b_.CreateOr(r, b_.getInt64(kWeftJitExitInCallee << 32)));
  b_.SetInsertPoint(back);
  for (int r2 = a; r2 < a + wanted; r2++) reload(r2);
  if (wanted < 0) {  // open results end at the thread's top, as the next instruction reads them
    Value* n = b_.CreateTrunc(r, b_.getInt32Ty());
    storeAt(b_.CreateAdd(stackIndex(slot(a)), n), thread_, host_.layout.threadTop);
    reloadFrom(a);
  }
  syncSharedAfter(pc + 1, true);
  b_.CreateBr(block(pc + 1));
}

Value* Lowering::codeAt(Value* pc) {
  return b_.CreateGEP(b_.getInt32Ty(), hostPtr(req_.codeAddress), b_.CreateZExt(pc, b_.getInt64Ty()));
}

// A deferred frame as setupLuaFrameMayGC writes it: this prototype's function at the slot
// below base, no varargs (it was entered at a call entry), the results its caller wants.
void Lowering::writeDeferredFrame(Value* savedPc, bool top) {
  const WeftJitLayout& l = host_.layout;
  llvm::Type* i16 = b_.getInt16Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  Value* index = b_.CreateTrunc(deferred_, i32);
  Value* frames = loadAt(b_.getPtrTy(), thread_, l.threadFrames);
  Value* f = b_.CreateGEP(b_.getInt8Ty(), frames,
                          b_.CreateMul(b_.CreateZExt(index, b_.getInt64Ty()), b_.getInt64(l.frameSize)));
  Value* base = stackIndex(base_);
  storeAt(savedPc, f, l.framePc);
  storeAt(b_.CreateSub(base, b_.getInt32(1)), f, l.frameFunc);
  storeAt(base, f, l.frameBase);
  storeAt(b_.CreateAdd(base, b_.getInt32(req_.maxStackSize)), f, l.frameTop);
  storeAt(wantedResults(), f, l.frameNresults);
  storeAt(b_.getInt16(l.frameLua), f, l.frameFlags);
  storeAt(llvm::ConstantInt::get(i16, 0), f, l.frameErrStatus);
  storeAt(b_.getInt32(0), f, l.frameVarargDelta);
  storeAt(b_.getInt32(0), f, l.frameExtra);
  // The thread's top stays: below this frame's top (the collector's extent, vm/thread.cpp
  // liveTop), or the end of the results an open call left for the instruction after it.
  if (top) storeAt(b_.CreateAdd(index, b_.getInt32(1)), thread_, l.threadFrameCount);
}

// What a compiled call and a compiled tail call both need of the callee (jitCallLua's
// common case, vm/interp.cpp): its code's callEntry (vm/jit.h: an entry at its start,
// fixed parameters), at most `nargs` parameters, no hook set, room in the stack for a frame at
// stack index `func`, and a start whose poll would not fire (budget, collection
// requests; under --gc-stress it always does). Branches to `slow` on a null code or
// callEntry; the rest is `ready.ok`, which the caller tests with its own conditions.
Lowering::Callee Lowering::calleeAt(int a, int nargs, Value* func, BasicBlock* slow) {
  const WeftJitLayout& l = host_.layout;
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i8 = b_.getInt8Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  auto next = [&](Value* ok, const char* name) {
    BasicBlock* bb = newBlock(name);
    b_.CreateCondBr(ok, bb, slow);
    b_.SetInsertPoint(bb);
  };
  Callee c;
  c.proto = loadAt(ptr, b_.CreateIntToPtr(ival(a), ptr), l.closureProto);
  c.jit = loadShared(ptr, at(c.proto, l.protoJit), llvm::AtomicOrdering::Acquire);
  next(b_.CreateIsNotNull(c.jit), "call_code");
  c.entry = loadShared(ptr, at(c.jit, l.codeCallEntry), llvm::AtomicOrdering::Acquire);
  next(b_.CreateIsNotNull(c.entry), "call_entry");
  c.code = loadAt(ptr, c.proto, l.protoCode);
  c.maxStack = b_.CreateZExt(loadAt(i8, c.proto, l.protoMaxStackSize), i32);
  Value* params = b_.CreateICmpULE(loadAt(i8, c.proto, l.protoNumParams), b_.getInt8(uint8_t(nargs)));
  c.ok = b_.CreateAnd(params, startChecks(c, func));
  return c;
}

// This prototype calling itself (the VM resolved the callee to it: WeftJitRequest::uid),
// where it takes fixed parameters, no more than `nargs`, and has a start entry: the
// callee's uid tested, its code is this function and its shape the request's. Compiled
// code calls whatever version of itself is running; an older one is alive while it runs
// (invariant 5), and the interpreter enters the newest at the next call it makes.
bool Lowering::selfCall(uint32_t pc) const {
  const WeftJitInline* callee = inlineAt(pc);
  Instruction i = req_.code[pc];
  return !host_.stress && callee && callee->uid == req_.uid && !req_.isVararg && startEntry_ &&
         req_.numParams <= getB(i) - 1 && callShape(pc);
}

Lowering::Callee Lowering::selfCallee(int a, Value* func, BasicBlock* slow) {
  const WeftJitLayout& l = host_.layout;
  Callee c;
  c.proto = loadAt(b_.getPtrTy(), b_.CreateIntToPtr(ival(a), b_.getPtrTy()), l.closureProto);
  BasicBlock* self = newBlock("call_self");
  b_.CreateCondBr(b_.CreateICmpEQ(loadAt(b_.getInt64Ty(), c.proto, l.protoUid), b_.getInt64(req_.uid)), self, slow);
  b_.SetInsertPoint(self);
  c.entry = fn_;
  c.code = hostPtr(req_.codeAddress);
  c.maxStack = b_.getInt32(req_.maxStackSize);
  c.ok = startChecks(c, func);
  return c;
}

// What any callee's start needs: no hook set, room in the stack for its frame at stack
// index `func`, and a start whose poll would not fire (budget, collection requests).
Value* Lowering::startChecks(Callee& c, Value* func) {
  const WeftJitLayout& l = host_.layout;
  llvm::Type* i8 = b_.getInt8Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  Value* t = thread_;
  c.budget = b_.CreateLoad(i32, budget_);
  Value* ok = b_.CreateICmpEQ(loadAt(i8, t, l.threadHookMask), b_.getInt8(0));
  Value* need = b_.CreateAdd(b_.CreateZExt(func, b_.getInt64Ty()),
                             b_.CreateZExt(b_.CreateAdd(c.maxStack, b_.getInt32(1 + l.extraStack)), b_.getInt64Ty()));
  ok = b_.CreateAnd(ok, b_.CreateICmpULE(need, b_.CreateZExt(loadAt(i32, t, l.threadStackSize), b_.getInt64Ty())));
  ok = b_.CreateAnd(ok, b_.CreateICmpSGE(c.budget, b_.getInt32(1)));
  for (const void* flag : {host_.gcRequested, host_.gcStopRequested}) {
    llvm::LoadInst* ld = b_.CreateLoad(i8, hostPtr(flag));
    ld->setAtomic(llvm::AtomicOrdering::Monotonic);
    ok = b_.CreateAnd(ok, b_.CreateICmpEQ(ld, b_.getInt8(0)));
  }
  return ok;
}

// jitCallLua's common case (calleeAt), with room for one more frame in the frame array,
// under maxCallDepth and in the nest: the caller's pc is saved and the callee's frame
// pushed; else `slow`.
void Lowering::pushFrameInline(uint32_t pc, Instruction i, BasicBlock* slow, BasicBlock* run, llvm::PHINode* entry) {
  const WeftJitLayout& l = host_.layout;
  if (host_.stress || openArgs(pc)) {  // open arguments: the callLua helper counts them
    b_.CreateBr(slow);
    return;
  }
  int a = getA(i), nargs = getB(i) - 1;
  llvm::Type* i16 = b_.getInt16Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  Value* t = thread_;
  Value* func = stackIndex(slot(a));
  Callee callee = selfCall(pc) ? selfCallee(a, func, slow) : calleeAt(a, nargs, func, slow);
  Value* frameCount = loadAt(i32, t, l.threadFrameCount);
  Value* depth = loadAt(b_.getInt8Ty(), t, l.threadJitDepth);
  Value* ok = b_.CreateAnd(callee.ok, b_.CreateICmpULT(depth, b_.getInt8(uint8_t(l.maxJitDepth))));
  ok = b_.CreateAnd(ok, b_.CreateICmpULT(frameCount, loadAt(i32, t, l.threadFrameCap)));
  ok = b_.CreateAnd(ok, b_.CreateICmpULT(frameCount, b_.getInt32(l.maxCallDepth)));
  BasicBlock* push = newBlock("call_push");
  if (callee.jit) {
    // A callee whose code takes a deferred frame gets one (docs/design/jit.md, "Deferred
    // frames"): this frame is written, so the callee's index is the frame count.
    Value* deferEntry = loadShared(b_.getPtrTy(), at(callee.jit, l.codeDeferEntry), llvm::AtomicOrdering::Acquire);
    BasicBlock* checked = newBlock("call_checked");
    BasicBlock* deferred = newBlock("call_deferred");
    b_.CreateCondBr(ok, checked, slow);
    b_.SetInsertPoint(checked);
    b_.CreateCondBr(b_.CreateIsNotNull(deferEntry), deferred, push);
    b_.SetInsertPoint(deferred);
    runDeferred(pc, i, deferEntry, callee.budget, frameCount, depth);
  } else {
    b_.CreateCondBr(ok, push, slow);
  }
  b_.SetInsertPoint(push);
  b_.CreateStore(b_.CreateSub(callee.budget, b_.getInt32(1)), budget_);
  Value* caller = topFrame(frameCount);
  storeAt(hostPtr(static_cast<const uint32_t*>(req_.codeAddress) + pc + 1), caller, l.framePc);
  Value* f = at(caller, l.frameSize);
  Value* base = b_.CreateAdd(func, b_.getInt32(1));
  storeAt(callee.code, f, l.framePc);
  storeAt(func, f, l.frameFunc);
  storeAt(base, f, l.frameBase);
  storeAt(b_.CreateAdd(base, callee.maxStack), f, l.frameTop);
  storeAt(b_.getInt32(uint32_t(getC(i) - 1)), f, l.frameNresults);
  storeAt(b_.getInt16(l.frameLua), f, l.frameFlags);
  storeAt(llvm::ConstantInt::get(i16, 0), f, l.frameErrStatus);
  storeAt(b_.getInt32(0), f, l.frameVarargDelta);
  storeAt(b_.getInt32(0), f, l.frameExtra);
  storeAt(b_.CreateAdd(frameCount, b_.getInt32(1)), t, l.threadFrameCount);
  storeAt(b_.CreateAdd(base, b_.getInt32(uint32_t(nargs))), t, l.threadTop);
  storeAt(b_.CreateAdd(depth, b_.getInt8(1)), t, l.threadJitDepth);
  entry->addIncoming(callee.entry, b_.GetInsertBlock());
  b_.CreateBr(run);
}

// TAILCALL of fixed arguments that closes nothing, from a frame whose function is where
// its base says (no varargs moved it), of a Lua function calleeAt finds ready: op_TAILCALL
// in place; of a native, callNative. The callee and its arguments move down to this frame's function slot, the
// frame becomes the callee's (flags kept, marked kFrameTail), and its code runs from its
// start in this machine frame (a musttail call), returning whatever it returns: a
// compiled caller sees its callee return or exit as before, and the interpreter, which
// finds another function in the frame it entered, takes the exit in that one
// (vm/interp.cpp jitEnter). Anything else exits, and the interpreter makes the call.
void Lowering::tailCall(uint32_t pc, Instruction i) {
  const WeftJitLayout& l = host_.layout;
  frameUsed_ = true;
  int a = getA(i), nargs = getB(i) - 1;
  bool native = nativeTailCall(req_, pc);
  if (req_.profile && native) {
    callNative(pc, i);
    return;
  }
  if (req_.profile) {
    speculate(isTag(tag(a), kTagLuaClosure), pc);
  } else if (native) {
    nativeUnlessLua(pc, i);
  } else {
    guard(isTag(tag(a), kTagLuaClosure), pc);
  }
  spillAll(flow_.dirtyIn[pc]);
  // The interpreter makes the call; with feedback, a callee that will never have code
  // there is a guard exit, which marks the site, so the next version leaves the tail call
  // to the interpreter and does not enter the function for it.
  BasicBlock* slow = exitBlock(pc);
  if (req_.profile) {
    llvm::IRBuilderBase::InsertPointGuard keep(b_);
    slow = newBlock("tail_slow");
    b_.SetInsertPoint(slow);
    llvm::Type* ptr = b_.getPtrTy();
    auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr}, false);
    Value* never =
        b_.CreateCall(fty, frameHelper(reinterpret_cast<const void*>(host_.helpers.tailCallee)), {statePtr(), slot(a)});
    b_.CreateCondBr(b_.CreateICmpNE(never, b_.getInt32(0)), exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc]),
                    exitBlock(pc));
  }
  if (host_.stress) {
    b_.CreateBr(slow);
    return;
  }
  llvm::Type* i16 = b_.getInt16Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  Value* t = thread_;
  Value* f = topFrame(loadAt(i32, t, l.threadFrameCount));
  Value* func = loadAt(i32, f, l.frameFunc);
  Callee callee = calleeAt(a, nargs, func, slow);
  Value* ok = b_.CreateAnd(callee.ok, b_.CreateICmpEQ(loadAt(i32, f, l.frameVarargDelta), b_.getInt32(0)));
  BasicBlock* replace = newBlock("tail_replace");
  b_.CreateCondBr(ok, replace, slow);
  b_.SetInsertPoint(replace);
  b_.CreateStore(b_.CreateSub(callee.budget, b_.getInt32(1)), budget_);
  // The function slot is just below the base: the callee and its arguments move down.
  for (int j = 0; j <= nargs; j++) {
    storeAt(ival(a + j), base_, uint64_t(int64_t(j - 1) * int64_t(kValueSize)));
    storeAt(tag(a + j), base_, uint64_t(int64_t(j - 1) * int64_t(kValueSize) + int64_t(kTagOffset)));
  }
  Value* base = b_.CreateAdd(func, b_.getInt32(1));
  storeAt(callee.code, f, l.framePc);
  storeAt(b_.CreateAdd(base, callee.maxStack), f, l.frameTop);
  storeAt(b_.CreateOr(loadAt(i16, f, l.frameFlags), b_.getInt16(l.frameTail)), f, l.frameFlags);
  storeAt(llvm::ConstantInt::get(i16, 0), f, l.frameErrStatus);
  storeAt(b_.getInt32(0), f, l.frameExtra);
  storeAt(b_.CreateAdd(base, b_.getInt32(uint32_t(nargs))), t, l.threadTop);
  llvm::CallInst* call =
      b_.CreateCall(entryType(), callee.entry, {base_, budget_, b_.getInt32(0), thread_, b_.getInt64(0)});
  call->setTailCallKind(llvm::CallInst::TCK_MustTail);
  b_.CreateRet(call);
}

// jitCallLua: the whole call, or null (the interpreter makes it) or kWeftJitCallNever
// (likewise; with feedback a guard exit, which marks the site for the next version).
void Lowering::callHelper(uint32_t pc, Instruction i, BasicBlock* run, llvm::PHINode* entry) {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i32 = b_.getInt32Ty();
  auto* helperTy = llvm::FunctionType::get(ptr, {ptr, ptr, ptr, ptr, i32, i32, i32}, false);
  Value* fn = b_.CreateCall(
      helperTy, hostPtr(reinterpret_cast<const void*>(host_.helpers.callLua)),
      {statePtr(), thread_, budget_, slot(getA(i)), argCount(pc, i), b_.getInt32(getC(i) - 1), b_.getInt32(pc)});
  Value* bits = b_.CreatePtrToInt(fn, b_.getInt64Ty());
  BasicBlock* some = newBlock("callee");
  b_.CreateCondBr(b_.CreateICmpEQ(bits, b_.getInt64(0)), exitBlock(pc), some);
  b_.SetInsertPoint(some);
  BasicBlock* never = req_.profile ? exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc]) : exitBlock(pc);
  BasicBlock* go = newBlock("call_helped");
  b_.CreateCondBr(b_.CreateICmpEQ(bits, b_.getInt64(uint64_t(uintptr_t(kWeftJitCallNever)))), never, go);
  b_.SetInsertPoint(go);
  entry->addIncoming(fn, go);
  b_.CreateBr(run);
}

// RETURN, RETURN0, RETURN1 into a Lua caller that wants as many results as there are:
// the results go to the callee's function slot and on (below this frame's base) and
// the frame is popped, as doReturn does; anything else to jitReturnLua, whose refusal
// exits. A RETURN with k (the function has a to-be-closed variable or captured locals)
// returns so only where nothing above its base is open (the `closes` helper, as CLOSE);
// otherwise the interpreter closes and returns.
void Lowering::returnOp(uint32_t pc, Instruction i, Op op) {
  const WeftJitLayout& l = host_.layout;
  int a = getA(i);
  if (op == Op::RETURN && getK(i)) {
    auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy()}, false);
    Value* none = b_.CreateCall(fty, hostPtr(reinterpret_cast<const void*>(host_.helpers.closes)), {thread_, slot(0)});
    BasicBlock* nothingOpen = newBlock("return_nothing_open");
    b_.CreateCondBr(b_.CreateICmpNE(none, b_.getInt32(0)), nothingOpen, exitBlock(pc));
    b_.SetInsertPoint(nothingOpen);
  }
  if (op == Op::RETURN && getB(i) == 0) {
    returnOpen(pc, a);
    return;
  }
  int n = op == Op::RETURN0 ? 0 : op == Op::RETURN1 ? 1 : getB(i) - 1;
  if (defer_) {
    BasicBlock* deferred = newBlock("return_deferred");
    BasicBlock* written = newBlock("return_written");
    b_.CreateCondBr(isDeferred(), deferred, written);
    b_.SetInsertPoint(deferred);
    returnDeferred(a, n);
    b_.SetInsertPoint(written);
  }
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i16 = b_.getInt16Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  Value* t = thread_;
  Value* frameCount = loadAt(i32, t, l.threadFrameCount);
  Value* f = topFrame(frameCount);
  // The caller's frame, or this one when there is none (then the count fails the test).
  Value* twoOrMore = b_.CreateICmpUGE(frameCount, b_.getInt32(2));
  Value* callerFlags = loadAt(i16, b_.CreateSelect(twoOrMore, at(f, -int64_t(l.frameSize)), f), l.frameFlags);
  Value* ok =
      b_.CreateAnd(twoOrMore, b_.CreateICmpNE(b_.CreateAnd(callerFlags, b_.getInt16(l.frameLua)), b_.getInt16(0)));
  Value* flags = loadAt(i16, f, l.frameFlags);
  ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(flags, b_.getInt16(l.frameNoCompiledReturn)), b_.getInt16(0)));
  Value* hooks = loadAt(b_.getInt8Ty(), t, l.threadHookMask);
  ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(hooks, b_.getInt8(l.hookReturn)), b_.getInt8(0)));
  Value* wanted = loadAt(i32, f, l.frameNresults);  // -1: all of them (a call of open results)
  ok = b_.CreateAnd(ok, b_.CreateOr(b_.CreateICmpEQ(wanted, b_.getInt32(uint32_t(n))),
                                    b_.CreateICmpEQ(wanted, b_.getInt32(uint32_t(-1)))));
  BasicBlock* fast = newBlock("return_fast");
  BasicBlock* slow = newBlock("return_slow");
  BasicBlock* done = newBlock("returned");
  b_.CreateCondBr(ok, fast, slow);
  b_.SetInsertPoint(fast);
  Value* dest = b_.CreateSub(loadAt(i32, f, l.frameFunc), loadAt(i32, f, l.frameVarargDelta));
  Value* below = b_.CreateZExt(b_.CreateSub(loadAt(i32, f, l.frameBase), dest), b_.getInt64Ty());
  Value* dst = b_.CreateGEP(b_.getInt8Ty(), base_, b_.CreateNeg(b_.CreateMul(below, b_.getInt64(kValueSize))));
  for (int j = 0; j < n; j++) {
    storeAt(ival(a + j), dst, uint64_t(j) * kValueSize);
    storeAt(tag(a + j), dst, uint64_t(j) * kValueSize + kTagOffset);
  }
  storeAt(b_.CreateAdd(dest, b_.getInt32(uint32_t(n))), t, l.threadTop);
  storeAt(b_.CreateSub(frameCount, b_.getInt32(1)), t, l.threadFrameCount);
  Value* depth = loadAt(b_.getInt8Ty(), t, l.threadJitDepth);
  Value* nested = b_.CreateICmpNE(depth, b_.getInt8(0));
  storeAt(b_.CreateSub(depth, b_.CreateZExt(nested, b_.getInt8Ty())), t, l.threadJitDepth);
  b_.CreateBr(done);
  b_.SetInsertPoint(slow);
  for (int r = a; r < a + n; r++) spill(r);
  auto* helperTy = llvm::FunctionType::get(i32, {ptr, ptr, ptr, i32}, false);
  Value* helped = b_.CreateCall(helperTy, hostPtr(reinterpret_cast<const void*>(host_.helpers.returnLua)),
                                {statePtr(), thread_, slot(a), b_.getInt32(uint32_t(n))});
  b_.CreateCondBr(b_.CreateICmpNE(helped, b_.getInt32(0)), done, exitBlock(pc));
  b_.SetInsertPoint(done);
  b_.CreateRet(b_.getInt64(kWeftJitExitReturned << 32));
}

// The results wanted by a deferred frame's caller (WeftJitEntry's `deferred`; -1: all).
Value* Lowering::wantedResults() {
  Value* bits = b_.CreateTrunc(b_.CreateLShr(deferred_, b_.getInt64(32)), b_.getInt16Ty());
  return b_.CreateSExt(bits, b_.getInt32Ty());
}

// As moveResults into a Lua caller (runDeferred), whose frame, written or not, is below:
// nothing to pop. The count goes back with kWeftJitExitReturned, for a caller that wants
// them all (-1 never fills).
void Lowering::returnDeferred(int a, int n) {
  Value* dst = funcSlot();
  for (int j = 0; j < n; j++) {
    storeAt(ival(a + j), dst, uint64_t(j) * kValueSize);
    storeAt(tag(a + j), dst, uint64_t(j) * kValueSize + kTagOffset);
  }
  Value* wanted = wantedResults();
  BasicBlock* from = b_.GetInsertBlock();
  BasicBlock* fill = newBlock("fill_nil");
  BasicBlock* done = newBlock("returned_deferred");
  b_.CreateCondBr(b_.CreateICmpSGT(wanted, b_.getInt32(n)), fill, done);
  b_.SetInsertPoint(fill);
  llvm::PHINode* j = b_.CreatePHI(b_.getInt32Ty(), 2);
  j->addIncoming(b_.getInt32(n), from);
  Value* v =
      b_.CreateGEP(b_.getInt8Ty(), dst, b_.CreateMul(b_.CreateZExt(j, b_.getInt64Ty()), b_.getInt64(kValueSize)));
  storeAt(b_.getInt64(0), v, 0);
  storeAt(b_.getInt8(kTagNil), v, kTagOffset);
  Value* next = b_.CreateAdd(j, b_.getInt32(1));
  j->addIncoming(next, fill);
  b_.CreateCondBr(b_.CreateICmpSLT(next, wanted), fill, done);
  b_.SetInsertPoint(done);
  b_.CreateRet(b_.getInt64(kWeftJitExitReturned << 32 | uint64_t(n)));
}

// RETURN of the values an open call left (vm/jit_ops.h jitOpenResultsTaken): in their
// slots since the call, so jitReturnLua moves them; its refusal exits.
void Lowering::returnOpen(uint32_t pc, int a) {
  Value* n = openCount(pc, a);
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i32 = b_.getInt32Ty();
  auto* helperTy = llvm::FunctionType::get(i32, {ptr, ptr, ptr, i32}, false);
  Value* helped = b_.CreateCall(helperTy, frameHelper(reinterpret_cast<const void*>(host_.helpers.returnLua)),
                                {statePtr(), thread_, slot(a), n});
  BasicBlock* done = newBlock("returned");
  b_.CreateCondBr(b_.CreateICmpNE(helped, b_.getInt32(0)), done, exitBlock(pc));
  b_.SetInsertPoint(done);
  b_.CreateRet(b_.getInt64(kWeftJitExitReturned << 32));
}

std::vector<uint8_t> Lowering::reachesReturn(const std::vector<uint8_t>& compiled) const {
  uint32_t n = req_.codeSize;
  std::vector<uint8_t> reaches(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t pc = n; pc-- > 0;) {
      if (!compiled[pc] || reaches[pc]) continue;
      Op op = getOp(req_.code[pc]);
      bool r = op == Op::RETURN || op == Op::RETURN0 || op == Op::RETURN1 || op == Op::TAILCALL;
      const PcFlow& f = flow_.pcs[pc];
      for (uint8_t s = 0; s < f.numSucc; s++) r = r || reaches[f.succ[s]];
      if (r) reaches[pc] = changed = true;
    }
  }
  return reaches;
}

}  // namespace weft::jit::lowering
