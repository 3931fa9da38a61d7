// Table reads and stores compiled inline (docs/design/jit.md, "Inline table reads" and
// "Inline table stores"): the interpreter's fast paths (vm/table.h) in IR, following the
// protocol of readers and writers of a table other tasks may share (table.h invariants 6
// and 7), and the write barrier's test from the layout the VM exports (gc/heap.h).
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/MDBuilder.h>

#include "jit/lowering.h"

namespace weft::jit::lowering {

// The helpers of table reads run no Lua code, never collect and write only their result
// slot (and metamethod-absence caches, which compiled code does not read): outside the
// table scope (lowering.h).
void Lowering::readHelper(uint32_t pc, Instruction i, Op op) {
  int a = getA(i), rb = getB(i);
  auto call = [&](const void* fn, std::initializer_list<Value*> args) { outsideTableScope(helperCall(pc, fn, args)); };
  if (op == Op::GETTABUP) {
    call(reinterpret_cast<const void*>(host_.helpers.getTabUp),
         {statePtr(), slot(a), funcSlot(), b_.getInt32(rb), constSlot(getC(i))});
  } else if (op == Op::GETTABLE) {
    call(reinterpret_cast<const void*>(host_.helpers.getTable), {statePtr(), slot(a), slot(rb), slot(getC(i))});
  } else if (op == Op::GETI) {
    call(reinterpret_cast<const void*>(host_.helpers.getInt), {statePtr(), slot(a), slot(rb), b_.getInt64(getC(i))});
  } else {
    call(reinterpret_cast<const void*>(host_.helpers.getTable), {statePtr(), slot(a), slot(rb), constSlot(getC(i))});
  }
}

Value* Lowering::loadShared(llvm::Type* type, Value* ptr, llvm::AtomicOrdering order) {
  llvm::LoadInst* ld = b_.CreateAlignedLoad(type, ptr, llvm::Align(m_.getDataLayout().getTypeStoreSize(type)));
  ld->setAtomic(order);
  return ld;
}

// Unordered: a part is read through the pointer loaded, and x86-64 keeps loads in order,
// so the part's contents are those its publisher wrote before it (the release of
// vm/table.h invariant 6), as with the interpreter's acquire; unordered, LLVM may reuse
// the load until something in the table scope's complement runs (docs/design/jit.md,
// "Inline table reads").
Value* Lowering::loadTableField(llvm::Type* type, Value* ptr) {
  return inTableScope(llvm::cast<llvm::LoadInst>(loadShared(type, ptr, llvm::AtomicOrdering::Unordered)));
}

std::pair<Value*, Value*> Lowering::loadTableSlot(Value* slotPtr) {
  // Asm, as loadSlot's: LLVM could split a vector load whose halves are extracted into
  // two loads, which a racing store could tear (vm/value.h invariant 4).
  auto* vec = llvm::FixedVectorType::get(b_.getInt64Ty(), 2);
  auto* fty = llvm::FunctionType::get(vec, {b_.getPtrTy()}, false);
  llvm::CallInst* bits = b_.CreateCall(fty, llvm::InlineAsm::get(fty, "movdqa $1, $0", "=x,*m", false), {slotPtr});
  bits->addParamAttr(0, llvm::Attribute::get(ctx_, llvm::Attribute::ElementType, vec));
  bits->setOnlyReadsMemory();
  bits->setDoesNotThrow();
  if (host_.slotObserved) callHost(reinterpret_cast<const void*>(host_.slotObserved), {slotPtr});
  Value* payload = b_.CreateExtractElement(bits, uint64_t(0));
  Value* t = b_.CreateTrunc(b_.CreateExtractElement(bits, uint64_t(1)), b_.getInt8Ty());
  return {payload, t};
}

void Lowering::readResult(uint32_t pc, int a, Value* h, Value* payload, Value* t, BasicBlock* slow) {
  BasicBlock* hit = newBlock("read_hit");
  BasicBlock* nil = newBlock("read_nil");
  b_.CreateCondBr(isTag(t, kTagNil), nil, hit);
  b_.SetInsertPoint(nil);
  Value* mt = loadTableField(b_.getPtrTy(), at(h, host_.layout.tableMetatable));
  b_.CreateCondBr(b_.CreateIsNull(mt), hit, slow);
  b_.SetInsertPoint(hit);
  setReg(a, payload, t);
  b_.CreateBr(block(pc + 1));
}

// tableIntSlot: tableArraySlot's part loaded once, the index checked against arraySize
// and against the part's own capacity; a key outside it is looked for in the node part
// (intNodeSlot).
Value* Lowering::arraySlot(Value* h, Value* key, BasicBlock* slow) {
  const WeftJitLayout& l = host_.layout;
  Value* part = loadTableField(b_.getPtrTy(), at(h, l.tableArray));
  Value* size = loadTableField(b_.getInt32Ty(), at(h, l.tableArraySize));
  Value* idx = b_.CreateSub(key, b_.getInt64(1));
  BasicBlock* inPart = newBlock("array_in");
  BasicBlock* inCap = newBlock("array_slot");
  BasicBlock* nodes = newBlock("int_node");
  BasicBlock* found = newBlock("int_found");
  b_.CreateCondBr(b_.CreateAnd(b_.CreateICmpULT(idx, b_.CreateZExt(size, b_.getInt64Ty())), b_.CreateIsNotNull(part)),
                  inPart, nodes);
  b_.SetInsertPoint(inPart);
  Value* cap = loadTableField(b_.getInt32Ty(), at(part, l.arrayCapacity));
  b_.CreateCondBr(b_.CreateICmpULT(idx, b_.CreateZExt(cap, b_.getInt64Ty())), inCap, nodes);
  b_.SetInsertPoint(inCap);
  Value* offset = b_.CreateAdd(b_.getInt64(l.arrayData), b_.CreateMul(idx, b_.getInt64(l.valueSize)));
  Value* inArray = b_.CreateInBoundsGEP(b_.getInt8Ty(), part, offset);
  b_.CreateBr(found);
  b_.SetInsertPoint(nodes);
  Value* inNodes = intNodeSlot(h, key, slow);
  BasicBlock* fromNodes = b_.GetInsertBlock();
  b_.CreateBr(found);
  b_.SetInsertPoint(found);
  llvm::PHINode* slot = b_.CreatePHI(b_.getPtrTy(), 2);
  slot->addIncoming(inArray, inCap);
  slot->addIncoming(inNodes, fromNodes);
  return slot;
}

// An integer key outside the array part: intNodeFunction's two probes, else `slow`. A
// constant 0 (`t[0]`: GETI, SETI) has home 0 in every part (0 mod p is 0), so its probes
// are made in place: fannkuch's perm[0] spent a fifth of its compiled time in the call
// and the modulo.
Value* Lowering::intNodeSlot(Value* h, Value* key, BasicBlock* slow) {
  Value* part = loadTableField(b_.getPtrTy(), at(h, host_.layout.tableNodes));
  BasicBlock* probe = newBlock("int_home");
  b_.CreateCondBr(b_.CreateIsNull(part), slow, probe);
  b_.SetInsertPoint(probe);
  if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(key); k && k->isZero()) {
    Value* cap = loadTableField(b_.getInt32Ty(), at(part, host_.layout.nodesCapacity));
    return intProbes(part, key, b_.getInt32(0), b_.CreateSub(cap, b_.getInt32(1)), slow);
  }
  BasicBlock* found = newBlock("int_node_found");
  Value* slot = b_.CreateCall(intNodeFunction(), {part, key});
  b_.CreateCondBr(b_.CreateIsNull(slot), slow, found);
  b_.SetInsertPoint(found);
  return slot;
}

// findIntNode's first two probes of `part` for `key`: its home and the node after it,
// where nearly every integer key of a node part is. Goes on with the key's value slot,
// or branches to `miss` (an absent key, or one further on: the helper's).
Value* Lowering::intProbes(Value* part, Value* key, Value* home, Value* mask, BasicBlock* miss) {
  const WeftJitLayout& l = host_.layout;
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Function* f = b_.GetInsertBlock()->getParent();
  BasicBlock* next = BasicBlock::Create(ctx_, "int_next", f);
  BasicBlock* hit = BasicBlock::Create(ctx_, "int_hit", f);
  auto holds = [&](Value* node) {
    Value* payload = loadTableField(i64, at(node, l.nodeKey));
    Value* t = loadTableField(b_.getInt8Ty(), at(node, l.nodeKey + l.valueTag));
    return b_.CreateAnd(b_.CreateICmpEQ(payload, key), isTag(t, kTagInt));
  };
  Value* first = nodeAt(part, home);
  BasicBlock* atHome = b_.GetInsertBlock();
  b_.CreateCondBr(holds(first), hit, next);
  b_.SetInsertPoint(next);
  Value* second = nodeAt(part, b_.CreateAnd(b_.CreateAdd(home, b_.getInt32(1)), mask));
  b_.CreateCondBr(holds(second), hit, miss);
  b_.SetInsertPoint(hit);
  llvm::PHINode* match = b_.CreatePHI(b_.getPtrTy(), 2);
  match->addIncoming(first, atHome);
  match->addIncoming(second, next);
  return at(match, l.nodeValue);
}

// ptr intNode(ptr part, i64 key): intProbes from the key's home (vm/table.cpp intHome,
// the part's own capacity choosing the modulus): the key's value slot, or null. One
// out-of-line function per module, as probeFunction: inline at every read, it made
// nbody's compile 40% longer.
llvm::Function* Lowering::intNodeFunction() {
  if (intNode_) return intNode_;
  const WeftJitLayout& l = host_.layout;
  llvm::IRBuilderBase::InsertPointGuard keep(b_);
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* i128 = b_.getInt128Ty();
  intNode_ = readOnlyFunction(llvm::FunctionType::get(b_.getPtrTy(), {b_.getPtrTy(), i64}, false), "_int_node");
  Value* part = intNode_->getArg(0);
  Value* key = intNode_->getArg(1);
  BasicBlock* entry = BasicBlock::Create(ctx_, "entry", intNode_);
  BasicBlock* reduce = BasicBlock::Create(ctx_, "reduce", intNode_);
  BasicBlock* probe = BasicBlock::Create(ctx_, "probe", intNode_);
  BasicBlock* miss = BasicBlock::Create(ctx_, "miss", intNode_);
  b_.SetInsertPoint(entry);
  Value* cap = loadShared(b_.getInt32Ty(), at(part, l.nodesCapacity), llvm::AtomicOrdering::Monotonic);
  Value* mask = b_.CreateSub(cap, b_.getInt32(1));
  // A key 0 (the first index of a loop from 0) skips the modulo's chain of loads and
  // multiplies: its home is 0.
  b_.CreateCondBr(b_.CreateICmpEQ(key, b_.getInt64(0)), probe, reduce);
  b_.SetInsertPoint(reduce);
  Value* bits = b_.CreateZExt(b_.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, cap, b_.getTrue()), i64);
  Value* moduli = hostPtr(host_.intModuli);
  Value* p = b_.CreateZExt(b_.CreateLoad(b_.getInt32Ty(), b_.CreateGEP(b_.getInt32Ty(), moduli, bits)), i64);
  Value* recip = b_.CreateLoad(i64, b_.CreateGEP(i64, hostPtr(host_.intReciprocals), bits));
  Value* q = b_.CreateTrunc(b_.CreateLShr(b_.CreateMul(b_.CreateZExt(key, i128), b_.CreateZExt(recip, i128)), 64), i64);
  Value* r = b_.CreateSub(key, b_.CreateMul(q, p));
  r = b_.CreateSelect(b_.CreateICmpUGE(r, p), b_.CreateSub(r, p), r);
  Value* reduced = b_.CreateAnd(b_.CreateMul(b_.CreateTrunc(r, b_.getInt32Ty()), b_.getInt32(host_.intSpread)), mask);
  b_.CreateBr(probe);
  b_.SetInsertPoint(probe);
  llvm::PHINode* home = b_.CreatePHI(b_.getInt32Ty(), 2);
  home->addIncoming(b_.getInt32(0), entry);
  home->addIncoming(reduced, reduce);
  b_.CreateRet(intProbes(part, key, home, mask, miss));
  b_.SetInsertPoint(miss);
  b_.CreateRet(llvm::ConstantPointerNull::get(b_.getPtrTy()));
  return intNode_;
}

void Lowering::arrayRead(uint32_t pc, int a, Value* h, Value* key, BasicBlock* slow) {
  auto [payload, t] = loadTableSlot(arraySlot(h, key, slow));
  readResult(pc, a, h, payload, t, slow);
}

// tableShortStrSlot: the node part loaded once, its own capacity for the mask, linear
// probing from the key's hash; key fields are compared (a torn key matches nothing), and
// a nil key ends the chain. The key string is read from the constant slot, which the
// collector updates when it moves the string. The node of the site's slot hint, then the
// home node are tested inline, the rest of the chain out of line; a field that is absent goes to `slow`, and so does a
// nil one at each caller (the helper applies the metatable rule), which keeps each access a few blocks long: LLVM's
// time grows with them (nbody's advance, 25 field reads: 510 ms before inline reads, 620 to 880 with a probe loop and
// the nil cases inline at every read, on the loaded two-core machine).
Value* Lowering::fieldSlot(uint32_t pc, Value* h, int k, BasicBlock* slow) {
  const WeftJitLayout& l = host_.layout;
  Value* part = loadTableField(b_.getPtrTy(), at(h, l.tableNodes));
  BasicBlock* start = newBlock("field_start");
  BasicBlock* far = newBlock("field_far");
  BasicBlock* found = newBlock("field_found");
  b_.CreateCondBr(b_.CreateIsNull(part), slow, start);
  b_.SetInsertPoint(start);
  Value* cap = loadTableField(b_.getInt32Ty(), at(part, l.nodesCapacity));
  Value* mask = b_.CreateSub(cap, b_.getInt32(1));
  Value* key = inTableScope(b_.CreateLoad(b_.getInt64Ty(), constSlot(k)));
  llvm::PHINode* match = llvm::PHINode::Create(b_.getPtrTy(), 3);
  if (uint8_t hint = req_.slotHints ? req_.slotHints[pc] : 0) {
    // Where a collision put the key in the tables the interpreter saw (vm/jit_abi.h).
    Value* hinted = nodeAt(part, b_.CreateAnd(b_.getInt32(hint - 1u), mask));
    BasicBlock* home = newBlock("field_home");
    b_.CreateCondBr(holdsField(hinted, key), found, home);
    match->addIncoming(hinted, b_.GetInsertBlock());
    b_.SetInsertPoint(home);
  }
  Value* home = b_.CreateAnd(b_.getInt32(req_.constants[k].hash), mask);
  Value* node = nodeAt(part, home);
  b_.CreateCondBr(holdsField(node, key), found, far);
  match->addIncoming(node, b_.GetInsertBlock());
  b_.SetInsertPoint(far);
  Value* farNode = b_.CreateCall(probeFunction(), {part, key, home, mask});
  b_.CreateCondBr(b_.CreateIsNull(farNode), slow, found);
  match->addIncoming(farNode, far);
  b_.SetInsertPoint(found);
  b_.Insert(match);
  return at(match, l.nodeValue);
}

// Whether `node` holds the interned string `key` (its fields compared, never followed).
Value* Lowering::holdsField(Value* node, Value* key) {
  const WeftJitLayout& l = host_.layout;
  Value* keyPayload = loadTableField(b_.getInt64Ty(), at(node, l.nodeKey));
  Value* keyTag = loadTableField(b_.getInt8Ty(), at(node, l.nodeKey + l.valueTag));
  return b_.CreateAnd(b_.CreateICmpEQ(keyPayload, key), isTag(keyTag, kTagString));
}

void Lowering::fieldRead(uint32_t pc, int a, Value* h, int k, BasicBlock* slow) {
  auto [payload, t] = loadTableSlot(fieldSlot(pc, h, k, slow));
  BasicBlock* hit = newBlock("field_hit");
  b_.CreateCondBr(isTag(t, kTagNil), slow, hit);
  b_.SetInsertPoint(hit);
  setReg(a, payload, t);
  b_.CreateBr(block(pc + 1));
}

Value* Lowering::nodeAt(Value* part, Value* idx) {
  const WeftJitLayout& l = host_.layout;
  Value* offset = b_.CreateAdd(b_.getInt64(l.nodesData),
                               b_.CreateMul(b_.CreateZExt(idx, b_.getInt64Ty()), b_.getInt64(l.nodeSize)));
  return b_.CreateInBoundsGEP(b_.getInt8Ty(), part, offset);
}

// An out-of-line function of the module beside fn_, named fn_'s name and `suffix`:
// internal, never inlined, reading memory only.
llvm::Function* Lowering::readOnlyFunction(llvm::FunctionType* type, const char* suffix) {
  auto* f = llvm::Function::Create(type, llvm::Function::InternalLinkage, fn_->getName() + suffix, m_);
  f->addFnAttr(llvm::Attribute::NoInline);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr(llvm::Attribute::StrictFP);  // as its caller's (no float operations here)
  f->setOnlyReadsMemory();
  return f;
}

// ptr probe(ptr part, i64 key, i32 home, i32 mask): the nodes after `home`, as
// tableShortStrSlot visits them (capacity nodes in all, counting home); null at a nil
// key or when none matches.
llvm::Function* Lowering::probeFunction() {
  if (probe_) return probe_;
  const WeftJitLayout& l = host_.layout;
  llvm::IRBuilderBase::InsertPointGuard keep(b_);
  auto* fty =
      llvm::FunctionType::get(b_.getPtrTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt32Ty(), b_.getInt32Ty()}, false);
  probe_ = readOnlyFunction(fty, "_probe");
  Value* part = probe_->getArg(0);
  Value* key = probe_->getArg(1);
  Value* home = probe_->getArg(2);
  Value* mask = probe_->getArg(3);
  BasicBlock* entry = BasicBlock::Create(ctx_, "entry", probe_);
  BasicBlock* loop = BasicBlock::Create(ctx_, "probe", probe_);
  BasicBlock* other = BasicBlock::Create(ctx_, "other", probe_);
  BasicBlock* step = BasicBlock::Create(ctx_, "step", probe_);
  BasicBlock* hit = BasicBlock::Create(ctx_, "hit", probe_);
  BasicBlock* miss = BasicBlock::Create(ctx_, "miss", probe_);
  b_.SetInsertPoint(entry);
  Value* first = b_.CreateAnd(b_.CreateAdd(home, b_.getInt32(1)), mask);
  b_.CreateCondBr(b_.CreateICmpULE(b_.getInt32(1), mask), loop, miss);
  b_.SetInsertPoint(loop);
  llvm::PHINode* idx = b_.CreatePHI(b_.getInt32Ty(), 2);
  llvm::PHINode* n = b_.CreatePHI(b_.getInt32Ty(), 2);
  idx->addIncoming(first, entry);
  n->addIncoming(b_.getInt32(1), entry);
  Value* node = nodeAt(part, idx);
  Value* keyPayload = loadShared(b_.getInt64Ty(), at(node, l.nodeKey), llvm::AtomicOrdering::Unordered);
  Value* keyTag = loadShared(b_.getInt8Ty(), at(node, l.nodeKey + l.valueTag), llvm::AtomicOrdering::Unordered);
  b_.CreateCondBr(b_.CreateAnd(b_.CreateICmpEQ(keyPayload, key), isTag(keyTag, kTagString)), hit, other);
  b_.SetInsertPoint(other);
  b_.CreateCondBr(isTag(keyTag, kTagNil), miss, step);
  b_.SetInsertPoint(step);
  Value* tried = b_.CreateAdd(n, b_.getInt32(1));
  idx->addIncoming(b_.CreateAnd(b_.CreateAdd(idx, b_.getInt32(1)), mask), step);
  n->addIncoming(tried, step);
  b_.CreateCondBr(b_.CreateICmpULE(tried, mask), loop, miss);
  b_.SetInsertPoint(hit);
  b_.CreateRet(node);
  b_.SetInsertPoint(miss);
  b_.CreateRet(llvm::ConstantPointerNull::get(b_.getPtrTy()));
  return probe_;
}

// The upvalue's cell as jitGetTabUp reads it (one 16-byte load, loadSlotChecked's
// value): the closure from the frame's function slot, its upvalue, the cell; a cell that
// holds no table goes to `slow`.
Value* Lowering::envTable(int up, BasicBlock* slow) {
  const WeftJitLayout& l = host_.layout;
  Value* cl = b_.CreateIntToPtr(b_.CreateLoad(b_.getInt64Ty(), funcSlot()), b_.getPtrTy());
  Value* upval = loadTableField(b_.getPtrTy(), at(cl, l.closureUpvalues + uint64_t(up) * sizeof(void*)));
  auto [env, envTag] = loadTableSlot(at(upval, l.upvalueCell));
  BasicBlock* isTable = newBlock("env_table");
  b_.CreateCondBr(isTag(envTag, kTagTable), isTable, slow);
  b_.SetInsertPoint(isTable);
  return b_.CreateIntToPtr(env, b_.getPtrTy());
}

// GETTABLE with an integer key, GETI, GETFIELD and GETTABUP of an interned string: the
// interpreter's fast path inline (no call, no write-back of the operands); anything else
// (another key, a key outside the part read, a nil where a metatable may have __index, a
// non-table without feedback) calls the helper, whose failure exits. With feedback the
// operand was only ever a table: a guard exit otherwise, and the register's tag is
// known after it, so LLVM drops the tests of later reads of that table.
void Lowering::tableRead(uint32_t pc, Instruction i, Op op) {
  int a = getA(i), rb = getB(i);
  bool keyed = op == Op::GETFIELD || op == Op::GETTABUP;
  const WeftJitConstant* k = keyed ? &req_.constants[getC(i)] : nullptr;
  bool inlineInt = op == Op::GETI || (op == Op::GETTABLE && (!req_.profile || (seenY(pc) & kWeftJitSeenInt)));
  bool inlineStr = k && k->kind == kConstRef && k->shortString;
  BasicBlock* slow = newBlock("read_slow");
  if (op == Op::GETTABUP && inlineStr) {
    fieldRead(pc, a, envTable(rb, slow), getC(i), slow);
  } else if (op != Op::GETTABUP && (inlineInt || inlineStr)) {
    Value* isTable = isTag(tag(rb), kTagTable);
    if (req_.profile) {
      speculate(isTable, pc);
      b_.CreateStore(b_.getInt8(kTagTable), tagVar_[rb]);
    } else {
      BasicBlock* ok = newBlock("is_table");
      b_.CreateCondBr(isTable, ok, slow);
      b_.SetInsertPoint(ok);
    }
    Value* h = b_.CreateIntToPtr(ival(rb), b_.getPtrTy());
    if (inlineStr) {
      fieldRead(pc, a, h, getC(i), slow);
    } else if (op == Op::GETI) {
      arrayRead(pc, a, h, b_.getInt64(getC(i)), slow);
    } else {
      BasicBlock* intKey = newBlock("int_key");
      b_.CreateCondBr(isTag(tag(getC(i)), kTagInt), intKey, slow);
      b_.SetInsertPoint(intKey);
      arrayRead(pc, a, h, ival(getC(i)), slow);
    }
  } else {
    b_.CreateBr(slow);
  }
  b_.SetInsertPoint(slow);
  readHelper(pc, i, op);
  b_.CreateBr(block(pc + 1));
}

// The sizes as OP_NEWTABLE decodes them: B is log2(hash size) + 1 (a larger B than the
// compiler's 32 is a hint ignored), C the array size, with EXTRAARG's high part under k.
void Lowering::newTableOp(uint32_t pc, Instruction i) {
  uint32_t hash = getB(i), array = getC(i);
  if (hash > 0) hash = hash <= 32 ? 1u << (hash - 1) : 0;
  if (getK(i)) array += uint32_t(getAx(req_.code[pc + 1])) * (kMaxArgC + 1);
  helperCall(pc, reinterpret_cast<const void*>(host_.helpers.newTable),
             {statePtr(), slot(getA(i)), b_.getInt32(array), b_.getInt32(hash)}, false);
  b_.CreateBr(block(pc + 2));
}

// Strings and numbers only (the helper's); __concat, errors and a refused allocation
// exit, and the interpreter runs the instruction.
void Lowering::concatOp(uint32_t pc, Instruction i) {
  helperCall(pc, reinterpret_cast<const void*>(host_.helpers.concat),
             {statePtr(), thread_, slot(getA(i)), b_.getInt32(getB(i))}, false);
  b_.CreateBr(block(pc + 1));
}

// A fixed count, or the values an open call left (B = 0: vm/jit_ops.h jitOpenResultsTaken).
void Lowering::setListOp(uint32_t pc, Instruction i) {
  uint32_t last = getC(i);
  if (getK(i)) last += uint32_t(getAx(req_.code[pc + 1])) * (kMaxArgC + 1);
  Value* n = getB(i) != 0 ? b_.getInt32(getB(i)) : openCount(pc, getA(i) + 1);
  helperCall(pc, reinterpret_cast<const void*>(host_.helpers.setList),
             {statePtr(), slot(getA(i)), n, b_.getInt32(last)}, false);
  b_.CreateBr(block(pc + instructionLength(req_, pc)));
}

// The helper reads R[B] and the key from their slots and writes R[A] and R[A+1].
void Lowering::selfOp(uint32_t pc, Instruction i) {
  helperCall(pc, reinterpret_cast<const void*>(host_.helpers.self), {statePtr(), slot(getA(i)), slot(getB(i)), rk(i)},
             false);
  b_.CreateBr(block(pc + 1));
}

void Lowering::callHost(const void* fn, std::initializer_list<Value*> args) {
  std::vector<llvm::Type*> types;
  for (Value* a : args) types.push_back(a->getType());
  b_.CreateCall(llvm::FunctionType::get(b_.getVoidTy(), types, false), hostPtr(fn), args);
}

void Lowering::writeHelper(uint32_t pc, Instruction i, Op op) {
  int a = getA(i);
  if (op == Op::SETTABUP) {
    // With feedback a guard exit, as a helper's failure: the VM marks the site, and the
    // next version leaves it to the interpreter.
    b_.CreateBr(req_.profile ? exitWith(pc, kWeftJitExitGuard, pc, flow_.dirtyIn[pc]) : exitBlock(pc));
    return;
  }
  if (op == Op::SETI) {
    helperCall(pc, reinterpret_cast<const void*>(host_.helpers.setInt),
               {statePtr(), slot(a), b_.getInt64(getB(i)), rk(i)});
  } else {
    Value* key = op == Op::SETTABLE ? slot(getB(i)) : constSlot(getB(i));
    helperCall(pc, reinterpret_cast<const void*>(host_.helpers.setTable), {statePtr(), slot(a), key, rk(i)});
  }
  b_.CreateBr(block(pc + 1));
}

void Lowering::tableBarrier(Value* h, Value* slotPtr, Value* payload, Value* t) {
  const WeftJitLayout& l = host_.layout;
  llvm::MDNode* rare = llvm::MDBuilder(ctx_).createUnlikelyBranchWeights();
  BasicBlock* ref = newBlock("barrier_ref");
  BasicBlock* old = newBlock("barrier_old");
  BasicBlock* young = newBlock("barrier_young");
  BasicBlock* checks = newBlock("barrier_checks");
  BasicBlock* verify = newBlock("barrier_verify");
  BasicBlock* done = newBlock("barrier_done");
  // storeValue: only references reach the barrier.
  b_.CreateCondBr(b_.CreateICmpUGE(t, b_.getInt8(l.tagFirstHeap)), ref, done);
  b_.SetInsertPoint(ref);
  // A table's barrier is carded: an old holder, remembered or not, looks at the value.
  Value* bits = loadShared(b_.getInt8Ty(), at(h, l.objectGcBits), llvm::AtomicOrdering::Monotonic);
  Value* holderOld = b_.CreateICmpEQ(b_.CreateAnd(bits, b_.getInt8(l.barrierHolderMask)), b_.getInt8(l.gcBitOld));
  b_.CreateCondBr(holderOld, old, checks, rare);
  b_.SetInsertPoint(old);
  Value* obj = b_.CreateIntToPtr(payload, b_.getPtrTy());
  Value* valueBits = loadShared(b_.getInt8Ty(), at(obj, l.objectGcBits), llvm::AtomicOrdering::Monotonic);
  b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateAnd(valueBits, b_.getInt8(l.gcBitOld)), b_.getInt8(0)), young, checks);
  b_.SetInsertPoint(young);
  callHost(reinterpret_cast<const void*>(host_.barrierSlow), {h, slotPtr});
  b_.CreateBr(checks);
  b_.SetInsertPoint(checks);
  Value* checking = loadShared(b_.getInt8Ty(), hostPtr(host_.barrierChecks), llvm::AtomicOrdering::Monotonic);
  b_.CreateCondBr(b_.CreateICmpNE(checking, b_.getInt8(0)), verify, done, rare);
  b_.SetInsertPoint(verify);
  callHost(reinterpret_cast<const void*>(host_.barrierCheck), {h, b_.CreateIntToPtr(payload, b_.getPtrTy())});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void Lowering::storeTableSlot(Value* slotPtr, Value* payload, Value* t) {
  if (host_.slotPublished) callHost(reinterpret_cast<const void*>(host_.slotPublished), {slotPtr});
  // Asm, as storeSlot's: one 16-byte store that LLVM cannot split in two.
  auto* vec = llvm::FixedVectorType::get(b_.getInt64Ty(), 2);
  Value* bits = b_.CreateInsertElement(llvm::PoisonValue::get(vec), payload, uint64_t(0));
  bits = b_.CreateInsertElement(bits, b_.CreateZExt(t, b_.getInt64Ty()), uint64_t(1));
  auto* fty = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), vec}, false);
  llvm::CallInst* store =
      b_.CreateCall(fty, llvm::InlineAsm::get(fty, "movdqa $1, $0", "=*m,x,~{memory}", true), {slotPtr, bits});
  store->addParamAttr(0, llvm::Attribute::get(ctx_, llvm::Attribute::ElementType, vec));
  store->setDoesNotThrow();
}

// SETI and SETTABLE with an integer key into the array part, SETFIELD and SETTABUP of an
// interned key: a non-nil value into a slot whose value is not nil, as the interpreter's
// fast path (a live slot: __newindex cannot apply, whatever the metatable). The sequence
// word is read before the part (table.h invariant 7), the barrier runs before the one
// 16-byte store, and a field store clears the metamethod-absence cache (tableTouched;
// an integer key names no metamethod, as SETI's fast path knows). If the word changed, a
// claim may have copied the slot before the store reached it: the code exits and the
// interpreter stores again, as the helper's 0 makes it. Anything else (a nil value, a
// nil or absent slot, a key outside the array part, a long-string key, a non-table) is
// the helper's: it stores into a live slot (nil too) and leaves the rest, new keys and
// __newindex, to the interpreter at an exit.
void Lowering::tableWrite(uint32_t pc, Instruction i, Op op) {
  const WeftJitLayout& l = host_.layout;
  int a = getA(i);
  bool field = op == Op::SETFIELD || op == Op::SETTABUP;
  const WeftJitConstant* k = field ? &req_.constants[getB(i)] : nullptr;
  bool nilValue = getK(i) && req_.constants[getC(i)].kind == kTagNil;
  BasicBlock* slow = newBlock("write_slow");
  if ((!field || (k->kind == kConstRef && k->shortString)) && !nilValue) {
    Value* h;
    if (op == Op::SETTABUP) {
      h = envTable(a, slow);
    } else {
      BasicBlock* isTable = newBlock("is_table");
      b_.CreateCondBr(isTag(tag(a), kTagTable), isTable, slow);
      b_.SetInsertPoint(isTable);
      h = b_.CreateIntToPtr(ival(a), b_.getPtrTy());
    }
    if (op == Op::SETTABLE) {
      BasicBlock* intKey = newBlock("int_key");
      b_.CreateCondBr(isTag(tag(getB(i)), kTagInt), intKey, slow);
      b_.SetInsertPoint(intKey);
    }
    auto [payload, t] = rkValue(i);
    BasicBlock* nonNil = newBlock("write_value");
    b_.CreateCondBr(isTag(t, kTagNil), slow, nonNil);
    b_.SetInsertPoint(nonNil);
    Value* begun =
        b_.CreateAnd(loadShared(b_.getInt32Ty(), at(h, l.tableSync), llvm::AtomicOrdering::Acquire), b_.getInt32(~1u));
    Value* slotPtr = field ? fieldSlot(pc, h, getB(i), slow)
                           : arraySlot(h, op == Op::SETI ? b_.getInt64(getB(i)) : ival(getB(i)), slow);
    BasicBlock* live = newBlock("write_live");
    Value* oldTag = loadShared(b_.getInt8Ty(), at(slotPtr, l.valueTag), llvm::AtomicOrdering::Monotonic);
    b_.CreateCondBr(isTag(oldTag, kTagNil), slow, live);
    b_.SetInsertPoint(live);
    tableBarrier(h, slotPtr, payload, t);
    storeTableSlot(slotPtr, payload, t);
    if (field) {
      llvm::StoreInst* touched = b_.CreateAlignedStore(b_.getInt16(0), at(h, l.objectAux), llvm::Align(2));
      touched->setAtomic(llvm::AtomicOrdering::Monotonic);
    }
    // tableWriteHeld: a compiler fence keeps the check after the store.
    b_.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent, llvm::SyncScope::SingleThread);
    Value* now = loadShared(b_.getInt32Ty(), at(h, l.tableSync), llvm::AtomicOrdering::Acquire);
    b_.CreateCondBr(b_.CreateICmpEQ(now, begun), block(pc + 1), exitBlock(pc));
  } else {
    b_.CreateBr(slow);
  }
  b_.SetInsertPoint(slow);
  writeHelper(pc, i, op);
}

}  // namespace weft::jit::lowering
