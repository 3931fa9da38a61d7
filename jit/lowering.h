// The lowering of one prototype (jit/lower.h), shared by the files that define it:
// jit/lower.cpp (control, arithmetic, comparisons, loops), jit/lower_table.cpp (table
// reads and stores inline) and jit/lower_call.cpp (calls and returns). Private to
// libweft_jit.so.
#pragma once

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/opcodes.h"
#include "jit/flow.h"
#include "jit/lower.h"
#include "jit/stale_reload.h"

namespace weft::jit::lowering {

using frontend::Op;
using namespace frontend;
using llvm::BasicBlock;
using llvm::Value;

// Tags of vm/value.h (Tag); the layout of a Value: payload at 0, tag byte at 8, 16 bytes.
// The VM's WeftJitLayout must agree (layoutAgrees), or the engine does not start.
constexpr uint8_t kTagNil = 0, kTagFalse = 1, kTagTrue = 2, kTagInt = 3, kTagFloat = 4;
constexpr uint8_t kTagLightNative = 6, kTagString = 16, kTagTable = 17, kTagLuaClosure = 18, kTagUserdata = 20;
constexpr uint64_t kValueSize = 16, kTagOffset = 8;
constexpr uint8_t kConstInt = 3, kConstFloat = 4, kConstRef = 5;
constexpr int kMaxRegs = int(RegSet().size());

class Lowering {
 public:
  // `defer`: calls of itself may pass deferred frames (docs/design/jit.md, "Deferred
  // frames"), which holds only if no instruction reads the frame array.
  Lowering(llvm::Module& m, const WeftJitRequest& req, const WeftJitHost& host, bool defer)
      : m_(m),
        ctx_(m.getContext()),
        b_(ctx_),
        req_(req),
        host_(host),
        tableScope_(makeTableScope(ctx_)),
        defer_(defer) {}

  LowerResult run(const std::string& name);
  // Whether deferred frames were asked for, and some instruction turned out to need the
  // frame array (a helper, a call of another function): the caller discards this
  // lowering's functions and lowers the prototype again without them.
  bool deferralFailed() const { return defer_ && frameUsed_; }
  bool defers() const { return defer_ && !frameUsed_; }
  void discard();

 private:
  // The entry switch and the loads of each entry's registers (jit/lower.cpp).
  void enterAt(const std::vector<uint8_t>& entryMap, BasicBlock* noEntry);
  static constexpr uint8_t kNoPrediction = 0xff, kConflict = 0xfe;
  uint8_t tagTestedAt(uint32_t pc, int r) const;
  uint8_t entryTag(uint32_t pc, int r, uint32_t* site) const;
  BasicBlock* speculateEntry(uint32_t pc, const RegSet& live);
  // Which instructions this tier compiles (the others exit at once).
  bool supported(uint32_t pc) const;
  bool constIsNumber(int k) const {
    return req_.constants[k].kind == kConstInt || req_.constants[k].kind == kConstFloat;
  }
  void lower(uint32_t pc);

  // The frame's slots, in memory.
  Value* slot(int r) { return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base_, uint64_t(r) * kValueSize); }
  Value* slotTag(int r) {
    return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base_, uint64_t(r) * kValueSize + kTagOffset);
  }
  // Lua registers as the code sees them: a payload and a tag variable per register
  // (allocas that LLVM turns into machine registers), loaded at entries; a write goes
  // through to the slot too, except a lazy register's, written back at exits and
  // before helpers (jit/flow.h).
  Value* tag(int r) { return b_.CreateLoad(b_.getInt8Ty(), tagVar_[r]); }
  Value* ival(int r) { return b_.CreateLoad(b_.getInt64Ty(), payVar_[r]); }
  Value* fval(int r) { return b_.CreateBitCast(ival(r), b_.getDoubleTy()); }
  void setReg(int r, Value* payload, Value* t) {
    b_.CreateStore(payload, payVar_[r]);
    b_.CreateStore(t, tagVar_[r]);
    if (!flow_.lazy[r]) {
      outsideTableScope(b_.CreateStore(payload, slot(r)));
      outsideTableScope(b_.CreateStore(t, slotTag(r)));
    }
  }
  // A payload whose tag the register already has.
  void setPayload(int r, Value* payload) {
    b_.CreateStore(payload, payVar_[r]);
    if (!flow_.lazy[r]) outsideTableScope(b_.CreateStore(payload, slot(r)));
  }
  void storeI(int r, Value* v) { setReg(r, v, b_.getInt8(kTagInt)); }
  void storeF(int r, Value* v) { setReg(r, b_.CreateBitCast(v, b_.getInt64Ty()), b_.getInt8(kTagFloat)); }
  void storeTagOnly(int r, uint8_t t) { setReg(r, b_.getInt64(0), b_.getInt8(t)); }
  void copy(int dst, int src) { setReg(dst, ival(src), tag(src)); }
  // Register r to its slot, and back.
  void spill(int r) {
    outsideTableScope(b_.CreateStore(ival(r), slot(r)));
    outsideTableScope(b_.CreateStore(tag(r), slotTag(r)));
  }
  void reload(int r) { setReg(r, b_.CreateLoad(b_.getInt64Ty(), slot(r)), b_.CreateLoad(b_.getInt8Ty(), slotTag(r))); }
  void spillAll(const RegSet& regs) {
    for (int r = 0; r < int(regs.size()); r++) {
      if (regs[r]) spill(r);
    }
  }
  Value* isTag(Value* t, uint8_t want) { return b_.CreateICmpEQ(t, b_.getInt8(want)); }
  Value* toF(Value* t, int r) {  // r is an integer or a float (the caller checked)
    return b_.CreateSelect(isTag(t, kTagInt), b_.CreateSIToFP(ival(r), b_.getDoubleTy()), fval(r));
  }
  Value* falsy(Value* t) { return b_.CreateICmpULE(t, b_.getInt8(kTagFalse)); }

  // The table reads' alias scope (docs/design/jit.md, "Inline table reads"): the loads
  // of a table's header, of its parts' headers and keys and of the constant slots are in
  // it; the frame's slot stores and the table-read helpers' calls are declared outside
  // it, so LLVM reuses such a load across them. Anything else (a store into a table, a
  // call, a poll's ordered flag loads) may still write what those loads read.
  static llvm::MDNode* makeTableScope(llvm::LLVMContext& ctx);
  template <typename I>
  I* inTableScope(I* inst) {
    inst->setMetadata(llvm::LLVMContext::MD_alias_scope, tableScope_);
    return inst;
  }
  template <typename I>
  I* outsideTableScope(I* inst) {
    inst->setMetadata(llvm::LLVMContext::MD_noalias, tableScope_);
    return inst;
  }

  // Control.
  BasicBlock* block(uint32_t pc) { return blocks_[pc]; }
  // The exit of instruction `pc` before it writes anything: writes back dirtyIn[pc].
  BasicBlock* exitBlock(uint32_t pc) { return exitWith(pc, kWeftJitExitInterpret, pc, flow_.dirtyIn[pc]); }
  // A block that writes back `dirty` and returns exitPc | kind << 32; one per (kind, site).
  BasicBlock* exitWith(uint32_t site, uint64_t kind, uint32_t exitPc, const RegSet& dirty);
  BasicBlock* newBlock(const char* name) { return BasicBlock::Create(ctx_, name, fn_); }
  void exitHere(uint32_t pc) { b_.CreateBr(exitBlock(pc)); }
  // A jump of instruction `site` to `target`; a backward one (from `from`) polls first
  // (budget, collection request, stress) and its exit writes back dirtyOut[site].
  // `wholeFrame`: the poll keeps every register (the interpreter's SAFEPOINT()), not only
  // the active locals (SAFEPOINT_LIVE(kLiveLocals)).
  void jumpTo(uint32_t site, uint32_t from, uint32_t target, bool wholeFrame = false);
  // Branches on `cond`: the case is lowered in its own block, else exits at pc.
  void guard(Value* cond, uint32_t pc) {
    BasicBlock* ok = newBlock("ok");
    b_.CreateCondBr(cond, ok, exitBlock(pc));
    b_.SetInsertPoint(ok);
  }
  void cases(Value* cond, const std::function<void()>& yes, const std::function<void()>& no) {
    BasicBlock* y = newBlock("y");
    BasicBlock* n = newBlock("n");
    b_.CreateCondBr(cond, y, n);
    b_.SetInsertPoint(y);
    yes();
    b_.SetInsertPoint(n);
    no();
  }

  // The VM's fast paths (WeftJitHelpers): a call that returns 0 exits at pc.
  Value* constSlot(int k) { return hostPtr(static_cast<const char*>(req_.constantSlots) + uint64_t(k) * kValueSize); }
  Value* funcSlot() { return b_.CreateConstGEP1_64(b_.getInt8Ty(), base_, -int64_t(kValueSize)); }
  Value* rk(Instruction i) { return getK(i) ? constSlot(getC(i)) : slot(getC(i)); }
  // Constant k as {payload, tag}; R[C] or K[C] likewise.
  std::pair<Value*, Value*> constValue(int k);
  std::pair<Value*, Value*> rkValue(Instruction i) {
    if (getK(i)) return constValue(getC(i));
    return {ival(getC(i)), tag(getC(i))};
  }
  // A helper that reads or pushes frames of the frame array (callNative, returnLua's
  // open return, tailCallee), which deferred frames are missing; the others take slot
  // pointers only and never collect (vm/interp.cpp jitHelpers).
  Value* frameHelper(const void* fn) {
    frameUsed_ = true;
    return hostPtr(fn);
  }
  // An address in the VM (a function, a flag, the State) as a constant pointer.
  Value* hostPtr(const void* p) {
    return b_.CreateIntToPtr(b_.getInt64(uint64_t(reinterpret_cast<uintptr_t>(p))), b_.getPtrTy());
  }
  // A call of a VM function that returns nothing (ThreadSanitizer's hooks, the barrier's
  // slow path and checks).
  void callHost(const void* fn, std::initializer_list<Value*> args);
  // Helpers read their register operands from the slots and write their result there.
  void spillOperands(uint32_t pc) { spillAll(flow_.pcs[pc].use); }
  // `counted`: a failure is a guard exit (with feedback), which marks the site. Returns
  // the helper's call.
  llvm::CallInst* helperCall(uint32_t pc, const void* fn, std::initializer_list<Value*> args, bool counted = true);
  Value* statePtr() { return hostPtr(host_.state); }

  // Instruction groups.
  // Type feedback (vm/jit_abi.h): the types seen at pc's first and second operand.
  // An instruction the interpreter profiles but never ran while profiling is cold: its
  // code is a guard exit (the VM widens the feedback there and counts it), which keeps
  // LLVM's input, and time, to the code that runs.
  // A FORLOOP whose loop got hot inside its first run was never profiled: its FORPREP's
  // feedback says what its step is.
  uint8_t feedback(uint32_t pc) const {
    if (!req_.profile) return 0;
    Instruction i = req_.code[pc];
    if (req_.profile[pc] || getOp(i) != Op::FORLOOP || pc < uint32_t(getBx(i))) return req_.profile[pc];
    return req_.profile[pc - getBx(i)];
  }
  bool cold(uint32_t pc) const {
    Op op = getOp(req_.code[pc]);
    bool profiled = isArith(op) || (op >= Op::EQ && op <= Op::GEI) || op == Op::FORPREP || op == Op::FORLOOP ||
                    op == Op::CALL || op == Op::TAILCALL || op == Op::TFORCALL || op == Op::GETTABLE || op == Op::GETI ||
                    op == Op::GETFIELD;
    return req_.profile && profiled && feedback(pc) == 0;
  }
  uint8_t seenX(uint32_t pc) const { return feedback(pc) & 7; }
  uint8_t seenY(uint32_t pc) const { return (feedback(pc) >> 4) & 7; }
  // A guard on a type the feedback promised: its exit is a kWeftJitExitGuard, which the
  // VM counts towards recompiling or blacklisting (docs/design/jit.md, "Type feedback").
  void speculate(Value* cond, uint32_t pc) {
    BasicBlock* ok = newBlock("spec");
    b_.CreateCondBr(cond, ok, exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc]));
    b_.SetInsertPoint(ok);
  }
  // Guards register r to the `seen` number types and returns its value (as a double
  // when `asFloat`); the tag variable is rewritten with the tag it now must have, so
  // LLVM drops the tests that follow on that path.
  Value* speculateOperand(int r, uint8_t seen, bool asFloat, uint32_t pc);
  bool arithSpecialised(uint32_t pc, Instruction i, Op op);
  // Fills loopHeader_ and innermost_; returns, by header pc, whether some path goes from
  // the header back to it through compiled instructions only.
  std::vector<uint8_t> loopsThatIterate(const std::vector<uint8_t>& compiled);
  bool compareSpecialised(uint32_t pc, Instruction i, Op op);
  bool comparedConstant(Instruction i, Op op, bool ints, Value** y);
  void arith(uint32_t pc, Instruction i, Op op);
  void arithInts(int a, Value* x, Value* y, Op op, uint32_t pc);
  Value* floatOp(Op op, Value* x, Value* y);
  Value* power(Value* x, Value* y);
  void shift(uint32_t pc, Instruction i, Op op);
  Value* shiftLeft(Value* x, Value* n);
  void bitNot(uint32_t pc, Instruction i);
  void compare(uint32_t pc, Instruction i, Op op);
  void condJump(uint32_t pc, Value* cond, bool k);
  void forPrep(uint32_t pc, Instruction i);
  void forLoop(uint32_t pc, Instruction i);
  // CALL: a known native computed in place (jit/lower_native.cpp), or a compiled call
  // of a Lua function; RETURN* into a Lua caller (docs/design/jit.md, "Compiled calls").
  bool callShape(uint32_t pc) const;
  bool luaCall(uint32_t pc) const;
  bool openArgs(uint32_t pc) const;
  Value* argCount(uint32_t pc, Instruction i);
  bool nativeFnCall(uint32_t pc) const;
  void reloadFrom(int a);
  // Around a call in a shared frame (docs/design/jit.md, "Shared frames"): reconciles
  // its written-back registers with their cells, before (where a captured register may
  // have been written since the last reconciliation) and after (if a cell changed).
  void syncShared(uint32_t pc);
  void syncSharedAfter(uint32_t next, bool reloadLive);
  bool callSyncs(uint32_t pc) const;
  void unsyncedWrites(const std::vector<uint8_t>& compiled);
  Value* stackIndex(Value* p);
  Value* openCount(uint32_t pc, int a);
  // A body compiled in place where the VM resolved the callee (jit/lower_inline.cpp),
  // else callOutOfLine.
  void call(uint32_t pc, Instruction i);
  void callOutOfLine(uint32_t pc, Instruction i);
  void callLua(uint32_t pc, Instruction i);
  // Inlined calls (jit/lower_inline.cpp): a value of a known type, an i64 (kTagInt) or
  // a double (kTagFloat); kTagNil for no value.
  struct Num {
    Value* v = nullptr;
    uint8_t kind = kTagNil;
  };
  const WeftJitInline* inlineAt(uint32_t pc) const;
  bool inlinable(const WeftJitInline& c, int nargs, int nresults) const;
  void inlineCall(uint32_t pc, Instruction i, const WeftJitInline& c);
  Num inlineBody(const WeftJitInline& c, int a, uint8_t kind);
  Value* numberAsFloat(const Num& x);
  Num numberArith(Op op, const Num& x, const Num& y);
  Num negate(const Num& x);
  // Any other native, through the callNative helper (docs/design/jit.md, "Native calls").
  void callNative(uint32_t pc, Instruction i);
  void nativeUnlessLua(uint32_t pc, Instruction i);
  // The two ways to the callee's code: inline (pushes its frame, adds its entry to
  // `entry` and branches to `run`, or branches to `slow`), and the helper.
  // A Lua callee in R[a] whose code a compiled call or tail call may run (calleeAt).
  struct Callee {
    Value* jit = nullptr;  // its JitCode (calleeAt), which may take a deferred frame
    Value* proto;
    Value* code;      // its bytecode, where its frame's pc starts
    Value* entry;     // its code's function
    Value* maxStack;  // i32
    Value* budget;    // the budget left, read once
    Value* ok;        // every check but the null pointers', which branch already
  };
  Callee calleeAt(int a, int nargs, Value* func, BasicBlock* slow);
  // A call of this prototype by itself (WeftJitRequest::uid): its callee known.
  bool selfCall(uint32_t pc) const;
  Callee selfCallee(int a, Value* func, BasicBlock* slow);
  Value* startChecks(Callee& c, Value* func);
  void pushFrameInline(uint32_t pc, Instruction i, BasicBlock* slow, BasicBlock* run, llvm::PHINode* entry);
  // The call of `entry` at R[a+1], the callee's frame pushed: goes on
  // after the call when it returned, else returns its exit (from every caller).
  void runPushed(uint32_t pc, Instruction i, Value* entry);
  void arithMeta(uint32_t pc, Instruction i);
  llvm::FunctionType* entryType();  // WeftJitEntry's
  Value* frameCountNow();
  Value* wantedResults();
  // A call of itself with a deferred frame (docs/design/jit.md, "Deferred frames").
  bool deferredCall(uint32_t pc) const { return defer_ && selfCall(pc) && luaCall(pc) && !openArgs(pc); }
  void callDeferred(uint32_t pc, Instruction i);
  void runDeferred(uint32_t pc, Instruction i, Value* entry, Value* budget, Value* count, Value* depth);
  // Writes this deferred frame into the frame array, saved at `savedPc`; `top`: it is the
  // thread's top frame (the exit is its own).
  void writeDeferredFrame(Value* savedPc, bool top);
  // The deferred frame's results: R[a]... to its function slot, nils up to the results
  // its caller wants; their count returned.
  void returnDeferred(int a, int n);
  Value* isDeferred() { return b_.CreateICmpNE(deferred_, b_.getInt64(0)); }
  // The code address of instruction pc, where a saved pc points.
  Value* codeAt(Value* pc);
  void tailCall(uint32_t pc, Instruction i);
  Value* topFrame(Value* frameCount);
  void callHelper(uint32_t pc, Instruction i, BasicBlock* run, llvm::PHINode* entry);
  void returnOp(uint32_t pc, Instruction i, Op op);
  void returnOpen(uint32_t pc, int a);
  // Known natives, `#` and generic `for` loops (jit/lower_native.cpp; docs/design/jit.md,
  // "Known natives"). nativesAt: the natives the code tests for at a CALL (or a TFORCALL,
  // `forCall`): the one its feedback saw, or without feedback every one that fits.
  std::vector<uint8_t> nativesAt(uint32_t pc, bool forCall = false) const;
  // Branches on R[A] being each of `ids` to `lower(id)`; `other` lowers the rest.
  void dispatchNatives(uint32_t pc, const std::vector<uint8_t>& ids, const std::function<void(uint8_t)>& lower,
                       const std::function<void()>& other);
  void nativeCall(uint32_t pc, Instruction i, uint8_t id);
  void roundNative(uint32_t pc, int a, bool floor);
  Value* stringLength(Value* str);
  void len(uint32_t pc, Instruction i);
  void close(uint32_t pc, Instruction i);
  void tforPrep(uint32_t pc, Instruction i);
  void tforCall(uint32_t pc, Instruction i);
  void ipairsStep(uint32_t pc, Instruction i);
  void nextStep(uint32_t pc, Instruction i);
  void tforLoop(uint32_t pc, Instruction i);
  // A field of the VM's own structs (a thread, a frame, a prototype) at `offset`.
  Value* loadAt(llvm::Type* type, Value* ptr, uint64_t offset);
  void storeAt(Value* v, Value* ptr, uint64_t offset);
  // By pc: whether some path of compiled instructions from pc reaches a compiled
  // return (where a compiled call's callee may start and a caller go on after a call).
  std::vector<uint8_t> reachesReturn(const std::vector<uint8_t>& compiled) const;

  // Inline table reads (docs/design/jit.md, "Inline table reads"), as the interpreter's
  // fast paths read a table another task may be changing (vm/table.h invariant 6).
  void tableRead(uint32_t pc, Instruction i, Op op);
  // The helper of a table read: its slow path (the caller branches on).
  void readHelper(uint32_t pc, Instruction i, Op op);
  Value* at(Value* ptr, uint64_t offset) { return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), ptr, offset); }
  // A field of a table or of a part that another task may write: one access of its
  // width (`order` as the VM's load of that field).
  Value* loadShared(llvm::Type* type, Value* ptr, llvm::AtomicOrdering order);
  // A field of a table, of one of its parts or of a node's key, or a closure's upvalue
  // pointer: unordered, in the table scope (jit/lower_table.cpp).
  Value* loadTableField(llvm::Type* type, Value* ptr);
  // A table slot as loadSlot reads it: one aligned 16-byte load; {payload, tag}.
  std::pair<Value*, Value*> loadTableSlot(Value* slotPtr);
  // R[A] := a value read from h's array part, or nil where no metatable can give
  // __index; a nil with a metatable goes to `slow` (the helper knows the absence cache).
  void readResult(uint32_t pc, int a, Value* h, Value* payload, Value* t, BasicBlock* slow);
  void arrayRead(uint32_t pc, int a, Value* h, Value* key, BasicBlock* slow);
  void fieldRead(uint32_t pc, int a, Value* h, int k, BasicBlock* slow);
  // The value slot of an integer key in h's array part or its node part, of an interned
  // key in its node part, or a branch to `slow`; the caller reads or stores it.
  Value* arraySlot(Value* h, Value* key, BasicBlock* slow);
  Value* intNodeSlot(Value* h, Value* key, BasicBlock* slow);
  Value* fieldSlot(uint32_t pc, Value* h, int k, BasicBlock* slow);
  Value* holdsField(Value* node, Value* key);
  // The table in upvalue `up`'s cell (GETTABUP, SETTABUP), or a branch to `slow`.
  Value* envTable(int up, BasicBlock* slow);

  // NEWTABLE and SETLIST of a fixed count, through their helpers (they allocate, and
  // never collect: the request waits for the next poll).
  void newTableOp(uint32_t pc, Instruction i);
  void setListOp(uint32_t pc, Instruction i);
  void concatOp(uint32_t pc, Instruction i);

  // SELF through the self helper: a method through a metatable's __index table (the
  // common case) needs the helper's lookup anyway.
  void selfOp(uint32_t pc, Instruction i);

  // Inline table stores (docs/design/jit.md, "Inline table stores"): a store into a
  // live slot as the interpreter's (table.h invariant 7), with the write barrier's test
  // inline and its slow path out of line (gc/heap.h writeBarrier).
  void tableWrite(uint32_t pc, Instruction i, Op op);
  // The helper of a table store, its slow path (SETTABUP has none: it exits).
  void writeHelper(uint32_t pc, Instruction i, Op op);
  // gc::writeBarrier for a store of {payload, tag} into slot `slotPtr` of table h.
  void tableBarrier(Value* h, Value* slotPtr, Value* payload, Value* t);
  // A table slot as storeSlot writes it: one aligned 16-byte store, the padding zero.
  void storeTableSlot(Value* slotPtr, Value* payload, Value* t);
  // The node of `key` in a node part, probing on from the node after `home`, or null:
  // one out-of-line function per module, called when the home node holds another key
  // (a loop at every field read made LLVM's time grow by half on nbody's advance).
  llvm::Function* probeFunction();
  llvm::Function* intNodeFunction();
  Value* intProbes(Value* part, Value* key, Value* home, Value* mask, BasicBlock* miss);
  llvm::Function* readOnlyFunction(llvm::FunctionType* type, const char* suffix);
  Value* nodeAt(Value* part, Value* idx);

  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  const WeftJitRequest& req_;
  const WeftJitHost& host_;
  llvm::MDNode* tableScope_;  // the list of the one scope (makeTableScope)
  llvm::Function* fn_ = nullptr;
  Value* calleeBase_ = nullptr;  // arithMeta's answer: its callee's base (an alloca)
  Value* base_ = nullptr;
  Value* budget_ = nullptr;
  Value* thread_ = nullptr;
  Value* deferred_ = nullptr;  // the entry's `deferred` (vm/jit_abi.h WeftJitEntry); 0: the frame is written
  bool defer_;                 // calls of itself may defer their frames
  bool frameUsed_ = false;     // something reads or pushes frames (frameHelper)
  // Whether the frame is shared (docs/design/jit.md, "Shared frames"): computed once at
  // entry (only an interpreted CLOSURE makes it so); false for a prototype whose closures
  // capture no register.
  Value* shared_ = nullptr;
  RegSet captured_;  // WeftJitRequest::captured
  // By pc: the captured registers some path from an entry or a reconciling call may have
  // written before (In) or after (Out) the instruction (unsyncedWrites).
  std::vector<RegSet> unsyncedIn_, unsyncedOut_;
  std::vector<BasicBlock*> blocks_;
  std::vector<BasicBlock*> exits_[5];  // by exit kind, then site
  Flow flow_;
  std::vector<uint8_t> loopHeader_;  // by pc: the target of a backward jump
  std::vector<int64_t> innermost_;   // by pc: the header of the smallest loop around it, or -1
  struct SharedExit {
    BasicBlock* block = nullptr;
    llvm::PHINode* result = nullptr;
  };
  std::map<std::string, SharedExit> sharedExits_;   // by the registers they write back
  std::vector<llvm::AllocaInst*> payVar_, tagVar_;  // by register, for the registers the code touches
  // Only for the fault "jit.reload-skip" (jit/stale_reload.h).
  std::unique_ptr<StaleReload> stale_;
  llvm::Function* probe_ = nullptr;
  llvm::Function* intNode_ = nullptr;
  bool startEntry_ = false;  // the entry map has an entry at 0 (calls of itself need it)
};

}  // namespace weft::jit::lowering
