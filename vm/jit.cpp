// The compile queue, its thread and the lazily loaded compiler module (vm/jit.h).
#include "vm/jit.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "gc/fault.h"
#include "vm/debug.h"
#include "vm/interp.h"
#include "vm/jit_loops.h"
#include "vm/jit_ops.h"
#include "vm/jit_perf_map.h"
#include "vm/lib/libs.h"
#include "vm/meta.h"
#include "vm/state.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

namespace {
// A callee resolveInlines found, with its own copy of what WeftJitInline shows.
struct InlineCallee {
  uint32_t pc;
  uint64_t uid;
  std::vector<uint32_t> code;
  std::vector<WeftJitConstant> constants;
  uint8_t numParams, isVararg;
};
}  // namespace

struct JitTier::Job {
  JitCode* code;
  std::vector<uint32_t> bytecode;
  std::vector<WeftJitConstant> constants;
  const void* constantSlots;
  std::vector<uint8_t> profile;  // empty: no feedback
  const Instruction* codeAddress;  // the Proto's own code (off-heap, stable)
  uint8_t numParams, maxStackSize, isVararg;
  bool faultSkipReload;  // WEFT_FAULT "jit.reload-skip": the compiled code breaks the reload rule
  bool noEntryTests;     // JitCode::noEntryTests
  bool faultSlow;        // WEFT_FAULT "jit.compile-slow": the compilation takes kFaultSlowCompile longer
  std::vector<InlineCallee> inlines;  // resolveInlines
  uint64_t uid;
  std::vector<uint8_t> captured;  // capturedRegisters: empty, or 32 bytes
};

namespace {

// How much longer a compilation takes under WEFT_FAULT "jit.compile-slow": far longer
// than a script that waited for it could hide (tests/cli/jit_exit.py).
constexpr std::chrono::seconds kFaultSlowCompile{30};

// The module, loaded once per process and never unloaded (LLVM's static state is not
// meant to be torn down). Touched by compile threads under gModuleMu.
std::mutex gModuleMu;
const WeftJitModule* gModule = nullptr;
std::string gModuleError;
std::atomic<bool> gModuleLoaded{false};

std::string dirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// WEFT_JIT_MODULE, else beside the file holding this code (libweft.so or the weft
// executable), in ../lib from there (an installed bin/weft), or ../jit (the build tree).
std::vector<std::string> moduleCandidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("WEFT_JIT_MODULE"); env && *env) paths.emplace_back(env);
  Dl_info info{};
  char resolved[PATH_MAX];
  if (dladdr(reinterpret_cast<void*>(&moduleCandidates), &info) && info.dli_fname &&
      realpath(info.dli_fname, resolved)) {
    std::string dir = dirOf(resolved);
    paths.push_back(dir + "/" + kWeftJitModuleFile);
    paths.push_back(dir + "/../lib/" + kWeftJitModuleFile);
    paths.push_back(dir + "/../jit/" + kWeftJitModuleFile);
  }
  return paths;
}

const WeftJitModule* loadModule(std::string& error) {
  std::lock_guard lock(gModuleMu);
  if (gModule || !gModuleError.empty()) {
    error = gModuleError;
    return gModule;
  }
  std::string tried;
  for (const std::string& path : moduleCandidates()) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += "\n  " + path + ": " + dlerror();
      continue;
    }
    auto fn = reinterpret_cast<WeftJitModuleFn>(dlsym(handle, kWeftJitModuleSymbol));
    const WeftJitModule* m = fn ? fn(kWeftJitAbiVersion) : nullptr;
    if (!m) {
      tried += "\n  " + path + ": not a compiler module of this version";
      continue;
    }
    gModule = m;
    gModuleLoaded.store(true, std::memory_order_release);
    return m;
  }
  gModuleError = "cannot load " + std::string(kWeftJitModuleFile) + ":" + tried;
  error = gModuleError;
  return nullptr;
}

WeftJitConstant snapshotConstant(const Value& v) {
  WeftJitConstant c{};
  switch (v.tag) {
    case Tag::Nil: c.kind = 0; break;
    case Tag::False: c.kind = 1; break;
    case Tag::True: c.kind = 2; break;
    case Tag::Int: c.kind = 3; c.integer = v.u.i; break;
    case Tag::Float: c.kind = 4; c.number = v.u.n; break;
    default:
      c.kind = 5;
      // An interned key: compiled field reads probe for it by pointer (table.h,
      // tableShortStrSlot) from this hash, which the string keeps when it moves.
      if (v.isString() && v.asString()->isShort()) {
        c.shortString = 1;
        c.hash = v.asString()->header.hash;
      }
      break;
  }
  return c;
}

// The layout compiled code reads inline (vm/jit_abi.h, WeftJitLayout), from the one
// definition of each struct. The module's own constants for tags and the Value shape are
// checked against it when the engine starts (jit/lower.h, layoutAgrees).
WeftJitLayout jitLayout() {
  static_assert(sizeof(Node) == 2 * sizeof(Value) && offsetof(Node, value) % alignof(Value) == 0);
  static_assert(offsetof(ValueArray, data) % alignof(Value) == 0 && offsetof(NodeArray, nodes) % alignof(Value) == 0);
  static_assert(offsetof(Upvalue, cell) % alignof(Value) == 0 && sizeof(Upvalue*) == 8);
  WeftJitLayout l{};
  l.valueSize = sizeof(Value);
  l.valueTag = offsetof(Value, tag);
  l.tableMetatable = offsetof(Table, metatable);
  l.tableArray = offsetof(Table, array);
  l.tableNodes = offsetof(Table, nodes);
  l.tableArraySize = offsetof(Table, arraySize);
  l.arrayCapacity = offsetof(ValueArray, capacity);
  l.arrayData = offsetof(ValueArray, data);
  l.nodesCapacity = offsetof(NodeArray, capacity);
  l.nodesData = offsetof(NodeArray, nodes);
  l.nodeSize = sizeof(Node);
  l.nodeKey = offsetof(Node, key);
  l.nodeValue = offsetof(Node, value);
  l.closureUpvalues = offsetof(LuaClosure, upvalues);
  l.upvalueCell = offsetof(Upvalue, cell);
  static_assert(sizeof(String::length) == 8);
  l.stringLength = offsetof(String, length);
  l.stringData = offsetof(String, data);
  l.tagNil = uint8_t(Tag::Nil);
  l.tagInt = uint8_t(Tag::Int);
  l.tagString = uint8_t(Tag::String);
  l.tagTable = uint8_t(Tag::Table);
  l.tagLuaClosure = uint8_t(Tag::LuaClosure);
  // Stores (table.h invariant 7, gc/heap.h writeBarrier): the sequence word and the
  // metamethod-absence cache as the interpreter's store writes them, and the barrier's
  // test for a table holder, which is carded.
  static_assert(sizeof(Table::sync) == 4 && sizeof(gc::ObjectHeader::aux) == 2 &&
                sizeof(gc::ObjectHeader::gcBits) == 1);
  static_assert(offsetof(Table, header) == 0, "a Table* is its gc::Object*");
  l.tableSync = offsetof(Table, sync);
  l.objectAux = offsetof(gc::ObjectHeader, aux);
  l.objectGcBits = offsetof(gc::ObjectHeader, gcBits);
  l.tagFirstHeap = uint8_t(Tag::kFirstHeap);
  l.barrierHolderMask = gc::kBarrierCardedHolderMask;
  l.gcBitOld = gc::kBitOld;
  // Calls: the widths the lowering reads and writes (jit/lower_call.cpp).
  static_assert(sizeof(ThreadData::stackSize) == 4 && sizeof(ThreadData::top) == 4 &&
                sizeof(ThreadData::frameCap) == 4 && sizeof(ThreadData::frameCount) == 4 &&
                sizeof(ThreadData::hookMask) == 1 && sizeof(ThreadData::jitDepth) == 1);
  static_assert(sizeof(CallFrame::func) == 4 && sizeof(CallFrame::nresults) == 4 && sizeof(CallFrame::flags) == 2 &&
                sizeof(CallFrame::errStatus) == 2 && sizeof(CallFrame::varargDelta) == 4 &&
                sizeof(CallFrame::extra) == 4 && sizeof(Proto::numParams) == 1 && sizeof(Proto::maxStackSize) == 1);
  static_assert(kJitMaxCallDepth < 256, "ThreadData::jitDepth is a byte");
  l.threadStack = offsetof(ThreadData, stack);
  l.threadStackSize = offsetof(ThreadData, stackSize);
  l.threadTop = offsetof(ThreadData, top);
  l.threadFrames = offsetof(ThreadData, frames);
  l.threadFrameCap = offsetof(ThreadData, frameCap);
  l.threadFrameCount = offsetof(ThreadData, frameCount);
  l.threadHookMask = offsetof(ThreadData, hookMask);
  l.threadJitDepth = offsetof(ThreadData, jitDepth);
  static_assert(sizeof(ThreadData::openTop) == 4 && sizeof(ThreadData::cellWrites) == 8 &&
                sizeof(ThreadData::seenCellWrites) == 8);
  l.threadOpenTop = offsetof(ThreadData, openTop);
  l.threadCellWrites = offsetof(ThreadData, cellWrites);
  l.threadSeenCellWrites = offsetof(ThreadData, seenCellWrites);
  l.sharedSyncMask = kSharedSyncInterval - 1;
  l.frameSize = sizeof(CallFrame);
  l.framePc = offsetof(CallFrame, pc);
  l.frameFunc = offsetof(CallFrame, func);
  l.frameBase = offsetof(CallFrame, base);
  l.frameTop = offsetof(CallFrame, top);
  l.frameNresults = offsetof(CallFrame, nresults);
  l.frameFlags = offsetof(CallFrame, flags);
  l.frameErrStatus = offsetof(CallFrame, errStatus);
  l.frameVarargDelta = offsetof(CallFrame, varargDelta);
  l.frameExtra = offsetof(CallFrame, extra);
  l.closureProto = offsetof(LuaClosure, proto);
  l.protoCode = offsetof(Proto, code);
  l.protoNumParams = offsetof(Proto, numParams);
  l.protoMaxStackSize = offsetof(Proto, maxStackSize);
  l.protoJit = offsetof(Proto, jit);
  l.protoUid = offsetof(Proto, uid);
  // JitCode is no standard-layout class: its entry fields are a base's, found by a cast.
  static const JitCode probe;
  auto* probeBase = reinterpret_cast<const char*>(static_cast<const JitCodeEntry*>(&probe));
  uint32_t baseOffset = uint32_t(probeBase - reinterpret_cast<const char*>(&probe));
  l.codeCallEntry = baseOffset + offsetof(JitCodeEntry, callEntry);
  l.codeDeferEntry = baseOffset + offsetof(JitCodeEntry, deferEntry);
  l.frameLua = kFrameLua;
  l.frameNoCompiledReturn = kFrameEntry | kFrameFinishOp;
  l.frameTail = kFrameTail;
  l.hookReturn = kHookMaskReturn;
  l.extraStack = kExtraStack;
  l.maxJitDepth = kJitMaxCallDepth;
  return l;
}

// The slow path and the checks of a table store's barrier compiled inline
// (WeftJitHost::barrierSlow, barrierCheck): what writeBarrier calls for storeValue.
void jitBarrierSlow(void* table, void* field) {
  tableRememberYoung(static_cast<Table*>(table), static_cast<const Value*>(field));
}
void jitBarrierCheck(void* holder, void* value) {
  gc::writeBarrierSlow(static_cast<gc::Object*>(holder), static_cast<gc::Object*>(value));
}

#if defined(__SANITIZE_THREAD__)
// Compiled code's slot reads and writes, made visible as loadSlot's and storeSlot's are
// (vm/value.h).
void jitSlotObserved(const void* slot) { slotObserved(*static_cast<const Value*>(slot)); }
void jitSlotPublished(const void* slot) { slotPublished(*static_cast<const Value*>(slot)); }
#endif

std::string protoName(const Proto* p) {
  std::string src = p->data->source;
  if (!src.empty() && (src[0] == '@' || src[0] == '=')) src.erase(0, 1);
  if (src.size() > 60) src = "..." + src.substr(src.size() - 57);
  return src + ":" + std::to_string(p->data->lineDefined);
}

// The registers of p that a closure it makes captures (a bit per register: vm/jit_abi.h
// WeftJitRequest::captured), or none: only then may open upvalues refer to a frame of p
// (a shared frame, docs/design/values.md), and its code reconciles them where the
// interpreter would (docs/design/jit.md, "Shared frames").
std::vector<uint8_t> capturedRegisters(const Proto* p) {
  std::vector<uint8_t> bits;
  for (const auto& child : p->data->protos) {
    for (const frontend::UpvalueDesc& uv : child->upvalues) {
      if (!uv.inStack) continue;
      bits.resize(32);
      bits[uv.index / 8] |= uint8_t(1u << (uv.index % 8));
    }
  }
  return bits;
}

// WeftJitHost::natives: each known native's function, by id.
const std::array<NativeFn, kWeftJitNativeCount>& knownNatives() {
  static const std::array<NativeFn, kWeftJitNativeCount> natives = [] {
    std::array<NativeFn, kWeftJitNativeCount> fns{};
    for (uint8_t id = 1; id < kWeftJitNativeCount; id++) {
      fns[id] = mathKnownNative(id);
      if (!fns[id]) fns[id] = stringKnownNative(id);
      if (!fns[id]) fns[id] = baseKnownNative(id);
    }
    return fns;
  }();
  return natives;
}

// The feedback of a call of `fn` (CALL, TFORCALL: vm/jit_abi.h).
uint8_t calleeBits(const Value& fn, int nargs, int nresults, bool forCall) {
  if (fn.isLuaClosure()) return kWeftJitSeenLuaFunction;
  // Natives other than the known ones, at a CALL: the callNative helper's (not pcall
  // and xpcall, which the interpreter runs as marker frames).
  uint8_t native = forCall ? kWeftJitSeenOther : kWeftJitSeenNativeFn;
  if (fn.tag == Tag::NativeClosure) return native;
  if (fn.tag != Tag::LightNative || fn.u.fn == basePcall || fn.u.fn == baseXpcall) return kWeftJitSeenOther;
  const auto& natives = knownNatives();
  for (uint8_t id = 1; id < kWeftJitNativeCount; id++) {
    if (fn.u.fn == natives[id] && weftJitNativeFits(id, nargs, nresults, forCall)) return weftJitSeenNative(id);
  }
  return native;
}

uint8_t typeBit(const Value& v) {
  return v.tag == Tag::Int ? kWeftJitSeenInt : v.tag == Tag::Float ? kWeftJitSeenFloat : kWeftJitSeenOther;
}

// The function's name as the call site of t's top frame, a frame of p, gives it (a
// traceback's), "main chunk", or none.
std::string callSiteName(const Proto* p, ThreadData* t) {
  if (p->data->lineDefined == 0) return "main chunk";
  std::string name;
  if (t->frameCount == 0 || !frameFunctionName(t, t->frameCount - 1, name)) return {};
  return name;
}

// Notes in the hint byte of field site pc (vm/jit_abi.h, WeftJitRequest::slotHints)
// where a collision put the key, past its home node; 0 where it was at home or absent.
// Relaxed and racy between workers, as the feedback: the last seen wins.
void noteFieldSlot(const Proto* p, uint8_t* prof, uint32_t pc, const Value& obj, int k) {
  const Value& key = p->constants[k];
  if (!obj.isTable() || !key.isString() || !key.asString()->isShort()) return;
  const Table* t = obj.asTable();
  const NodeArray* part = tableNodePart(t);
  const Value* slot = tableShortStrSlot(t, key.asString());
  uint8_t hint = 0;
  if (part && slot) {
    auto* node = reinterpret_cast<const Node*>(reinterpret_cast<const char*>(slot) - offsetof(Node, value));
    uint32_t index = uint32_t(node - part->nodes);
    uint32_t home = key.asString()->header.hash & (part->capacity - 1);
    if (index != home && index < kWeftJitSlotHintLimit) hint = uint8_t(index + 1);
  }
  if (__atomic_load_n(&prof[p->codeSize + pc], __ATOMIC_RELAXED) != hint) {
    __atomic_store_n(&prof[p->codeSize + pc], hint, __ATOMIC_RELAXED);
  }
}

}  // namespace

void jitProfileRecord(Proto* p, uint32_t pc, const Value* base, bool atGuardExit) {
  using frontend::Op;
  uint8_t* prof = __atomic_load_n(&p->jitProfile, __ATOMIC_ACQUIRE);
  if (!prof || pc >= p->codeSize) return;
  frontend::Instruction i = p->code[pc];
  Op op = frontend::getOp(i);
  int a = frontend::getA(i), b = frontend::getB(i), c = frontend::getC(i);
  if (!atGuardExit && op == Op::GETFIELD) noteFieldSlot(p, prof, pc, base[b], c);
  if (!atGuardExit && op == Op::SETFIELD) {
    noteFieldSlot(p, prof, pc, base[a], b);
    return;
  }
  uint8_t bits;
  if (op >= Op::ADDI && op <= Op::SHR) {
    bool regC = !(op == Op::ADDI || op == Op::SHRI || op == Op::SHLI || (op >= Op::ADDK && op <= Op::BXORK));
    bits = uint8_t(typeBit(base[b]) | (regC ? typeBit(base[c]) << 4 : 0));
  } else if (op == Op::EQ || op == Op::LT || op == Op::LE) {
    bits = uint8_t(typeBit(base[a]) | typeBit(base[b]) << 4);
  } else if (op >= Op::EQK && op <= Op::GEI) {
    bits = typeBit(base[a]);
  } else if (op == Op::FORPREP) {
    bits = uint8_t(typeBit(base[a]) | typeBit(base[a + 1]) | typeBit(base[a + 2]));
  } else if (op == Op::FORLOOP) {
    bits = typeBit(base[a + 2]);
  } else if ((op == Op::GETTABLE || op == Op::GETI || op == Op::GETFIELD) &&
             !(atGuardExit && __atomic_load_n(&prof[pc], __ATOMIC_RELAXED))) {
    // Profiled, or a cold site's exit: what the interpreter sees here.
    bits = base[b].isTable() ? kWeftJitSeenTable : kWeftJitSeenOther;
    if (op == Op::GETTABLE) bits = uint8_t(bits | typeBit(base[c]) << 4);
  } else if ((op >= Op::GETUPVAL && op <= Op::SETFIELD) && op != Op::SETUPVAL) {
    // At a guard exit of a site that ran compiled: the helper's fast path failed (or a
    // table read's speculated table was none, or SETTABUP's inline store could not).
    bits = kWeftJitSeenOther;
  } else if (op == Op::CALL || op == Op::TAILCALL || op == Op::TFORCALL) {
    bool forCall = op == Op::TFORCALL;
    // A tail call wants every result (its C is the caller's parameter count).
    bits = calleeBits(base[a], forCall ? 2 : b - 1, forCall ? c : op == Op::TAILCALL ? -1 : c - 1, forCall);
    // A guard exit of a compiled call (not a cold site's): not a Lua function, or one
    // that never has code to enter; of a known native: another callee.
    uint8_t had = __atomic_load_n(&prof[pc], __ATOMIC_RELAXED);
    if (atGuardExit && had) bits = kWeftJitSeenOther;
    // One kind of callee per site: two make it the interpreter's.
    if (had && had != bits) bits = kWeftJitSeenOther;
  } else {
    return;
  }
  // Relaxed and racy between workers, as the counters: a lost bit costs one more guard exit.
  uint8_t old = __atomic_load_n(&prof[pc], __ATOMIC_RELAXED);
  if ((old | bits) != old) __atomic_store_n(&prof[pc], uint8_t(old | bits), __ATOMIC_RELAXED);
}

thread_local constinit uint32_t tlsColdBackEdges = 0;

void jitProfileYield(Proto* p, uint32_t pc) {
  uint8_t* prof = __atomic_load_n(&p->jitProfile, __ATOMIC_ACQUIRE);
  if (!prof || pc >= p->codeSize || !jitProfilingNow(p)) return;
  __atomic_store_n(&prof[pc], kWeftJitSeenOther, __ATOMIC_RELAXED);  // racy as jitProfileRecord
}

JitTier::JitTier(State& state, const JitOptions& options) : state_(state), options_(options) {
  // The environment reaches embedders too, who profile their host with perf.
  if (const char* env = std::getenv("WEFT_PERF_MAP"); env && std::strcmp(env, "1") == 0) options_.perfMap = true;
}

JitTier::~JitTier() {
  std::vector<std::unique_ptr<Job>> dropped;
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    for (auto& job : queue_) dropped.push_back(std::move(job));
    queue_.clear();
  }
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& job : dropped) {
    job->code->state.store(JitCode::kRejected, std::memory_order_release);
    finishJob(job->code);
  }
  for (JitCode* code : garbage_) releaseNow(code);
  garbage_.clear();
  if (engine_ && gModule) gModule->destroy(engine_);
}

bool JitTier::moduleLoaded() { return gModuleLoaded.load(std::memory_order_acquire); }

namespace {

// The value instruction `load` of p puts in its register when it is GETUPVAL of an
// upvalue of `cl`, or GETTABUP of a field of the table such an upvalue holds (a global:
// `_ENV.name`), as it is now; nil for anything else. A raw read: an `__index` is not
// followed (the code's uid test catches whatever the register holds at run time).
Value calleeLoadedBy(const Proto* p, const LuaClosure* cl, frontend::Instruction load) {
  using namespace frontend;
  Op op = getOp(load);
  if ((op != Op::GETUPVAL && op != Op::GETTABUP) || uint32_t(getB(load)) >= cl->numUpvalues) return Value::nil();
  Value v = loadSlotChecked(cl->upvalues[getB(load)]->cell);
  if (op == Op::GETUPVAL) return v;
  if (!v.isTable() || uint32_t(getC(load)) >= p->numConstants || !p->constants[getC(load)].isString()) {
    return Value::nil();
  }
  return tableGetStr(v.asTable(), p->constants[getC(load)].asString());
}

// The Lua function a CALL at pc calls when one of the kJitInlineLookBack instructions
// before it loads its register from an upvalue of `cl` or a global (calleeLoadedBy), or
// null.
const LuaClosure* loadedCallee(const Proto* p, const LuaClosure* cl, uint32_t pc) {
  using namespace frontend;
  uint32_t a = getA(p->code[pc]);
  uint32_t from = pc > kJitInlineLookBack ? pc - kJitInlineLookBack : 0;
  for (uint32_t k = pc; k-- > from;) {
    Instruction load = p->code[k];
    if (uint32_t(getA(load)) != a) continue;
    Value fn = calleeLoadedBy(p, cl, load);
    return fn.isLuaClosure() ? fn.asLuaClosure() : nullptr;
  }
  return nullptr;
}

// The callee of each CALL of fixed arguments in p whose function register was last
// loaded from an upvalue of `cl`, or from a global, holding a small Lua function, or p
// itself: the module may compile its body in place (jit/lower_inline.cpp), or call
// itself directly. The code tests the callee's uid, so a later value of the upvalue or
// the global, or another closure of p, only fails that test.
void resolveInlines(const Proto* p, const LuaClosure* cl, std::vector<InlineCallee>& out) {
  using namespace frontend;
  for (uint32_t pc = 0; pc < p->codeSize; pc++) {
    Instruction i = p->code[pc];
    if (getOp(i) != Op::CALL || getB(i) == 0) continue;
    const LuaClosure* fn = loadedCallee(p, cl, pc);
    if (!fn) continue;
    const Proto* q = fn->proto;
    if (q == p) {
      out.push_back({pc, q->uid, {}, {}, q->numParams, q->isVararg});
      continue;
    }
    if (q->codeSize > kJitInlineMaxCode) continue;
    InlineCallee callee{pc, q->uid, {q->code, q->code + q->codeSize}, {}, q->numParams, q->isVararg};
    for (uint32_t c = 0; c < q->numConstants; c++) callee.constants.push_back(snapshotConstant(q->constants[c]));
    out.push_back(std::move(callee));
  }
}

// The job's feedback says "other" at a CALL that saw Lua functions where the function
// it loads will have no code to call (rejected by the VM's coarse test, or blacklisted):
// the compiler leaves that call to the interpreter, as the next version would after the
// call's guard exits (bench/cd.lua compiled `frame` three times, for two calls of
// functions rejected before it was queued). The prototype's own feedback is unchanged:
// a later version looks again.
void markCallsWithoutCode(const Proto* p, const LuaClosure* cl, std::vector<uint8_t>& profile) {
  using namespace frontend;
  for (uint32_t pc = 0; pc < p->codeSize; pc++) {
    if (getOp(p->code[pc]) != Op::CALL || profile[pc] != kWeftJitSeenLuaFunction) continue;
    const LuaClosure* fn = loadedCallee(p, cl, pc);
    const JitCode* code = fn && fn->proto != p ? __atomic_load_n(&fn->proto->jit, __ATOMIC_ACQUIRE) : nullptr;
    uint8_t state = code ? code->state.load(std::memory_order_relaxed) : uint8_t(JitCode::kQueued);
    if (state == JitCode::kRejected || state == JitCode::kBlacklisted) profile[pc] = kWeftJitSeenOther;
  }
}

}  // namespace

std::unique_ptr<JitTier::Job> JitTier::snapshot(Proto* p, JitCode* code, const LuaClosure* cl) {
  auto job = std::make_unique<Job>();
  code->tier = this;
  code->name = protoName(p);
  code->siteExits.assign(p->codeSize, 0);
  if (options_.stats) {
    code->plainExits.assign(p->codeSize, 0);
    for (uint32_t pc = 0; pc < p->codeSize; pc++) code->ops.push_back(uint8_t(frontend::getOp(p->code[pc])));
  }
  code->loopless = !mayIterate(p);
  job->code = code;
  job->bytecode.assign(p->code, p->code + p->codeSize);
  job->constants.reserve(p->numConstants);
  for (uint32_t i = 0; i < p->numConstants; i++) job->constants.push_back(snapshotConstant(p->constants[i]));
  job->constantSlots = p->constants;
  job->codeAddress = p->code;
  if (const uint8_t* prof = __atomic_load_n(&p->jitProfile, __ATOMIC_ACQUIRE)) {
    job->profile.resize(2 * size_t(p->codeSize));
    for (size_t i = 0; i < job->profile.size(); i++) job->profile[i] = __atomic_load_n(&prof[i], __ATOMIC_RELAXED);
  }
  job->numParams = p->numParams;
  job->maxStackSize = p->maxStackSize;
  job->isVararg = p->isVararg;
  job->uid = p->uid;
  job->captured = capturedRegisters(p);
  // Counted per request, so "jit.reload-skip:n" picks the n-th code compiled.
  job->faultSkipReload = gc::fault::hit("jit.reload-skip");
  job->noEntryTests = code->noEntryTests;
  job->faultSlow = gc::fault::hit("jit.compile-slow");
  if (cl) {
    resolveInlines(p, cl, job->inlines);
    if (!job->profile.empty()) markCallsWithoutCode(p, cl, job->profile);
  }
  if (!job->profile.empty()) {
    code->coldSites.assign(p->codeSize, false);
    for (uint32_t pc = 0; pc < p->codeSize; pc++) {
      code->coldSites[pc] = jitProfiled(frontend::getOp(p->code[pc])) && job->profile[pc] == 0;
    }
  }
  return job;
}

void JitTier::enqueue(std::unique_ptr<Job> job, bool first) {
  {
    std::lock_guard lock(mu_);
    if (stop_) {
      job->code->state.store(JitCode::kRejected, std::memory_order_release);
      job->code->refs.fetch_sub(1, std::memory_order_acq_rel);
      return;
    }
    queuedInstructions_ += job->bytecode.size();
    if (first) {
      queue_.push_front(std::move(job));
    } else {
      queue_.push_back(std::move(job));
    }
    if (!thread_.joinable()) thread_ = std::thread([this] { threadMain(); });
  }
  work_.notify_one();
}

void JitTier::request(Proto* p, bool wait, ThreadData* t) {
  if (__atomic_load_n(&p->jit, __ATOMIC_ACQUIRE)) {
    if (!wait) return;
  } else {
    bool worth = worthCompiling(p);
    if (!worth || (options_.mode != JitMode::kEager && (onlyForCalls(p) || calledUnentered(p, t)))) {
      // Rejected without loading LLVM for it (binarytrees, format and strings loaded
      // LLVM only for the compiler to find nothing), or deferred until a compiled call
      // wants it (gsub.lua loaded LLVM for a small function only the interpreter called;
      // cd.lua compiled three arithmetic metamethods no code ever entered).
      installIdle(p, t, worth ? JitCode::kDeferred : JitCode::kRejected);
      return;
    }
    auto* code = new JitCode();
    const LuaClosure* cl = t ? t->stack[t->frame().func].asLuaClosure() : nullptr;
    auto job = snapshot(p, code, cl && cl->proto == p ? cl : nullptr);
    if (options_.perfMap) {
      code->perfName = perfMapName(callSiteName(p, t).c_str(), p->data->source, int(p->data->lineDefined));
    }
    JitCode* expected = nullptr;
    if (!__atomic_compare_exchange_n(&p->jit, &expected, code, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      delete code;  // another worker queued it first
      if (!wait) return;
    } else {
      enqueue(std::move(job));
    }
  }
  if (wait) {
    JitCode* code = __atomic_load_n(&p->jit, __ATOMIC_ACQUIRE);
    std::unique_lock lock(mu_);
    done_.wait(lock, [&] { return stop_ || code->state.load(std::memory_order_acquire) != JitCode::kQueued; });
  }
}

void JitTier::installIdle(Proto* p, ThreadData* t, JitCode::State state, const LoopLeft* window) {
  auto* code = new JitCode();
  code->tier = this;
  code->refs.store(1, std::memory_order_relaxed);
  code->state.store(state, std::memory_order_relaxed);
  if (window) startLoopWindow(*code, *window);
  if (state != JitCode::kRejected && options_.perfMap) {
    code->perfName = perfMapName(callSiteName(p, t).c_str(), p->data->source, int(p->data->lineDefined));
  }
  JitCode* none = nullptr;
  if (!__atomic_compare_exchange_n(&p->jit, &none, code, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    delete code;  // another worker's came first
    return;
  }
  std::lock_guard lock(mu_);
  if (state == JitCode::kRejected) rejected_++;
  if (state == JitCode::kWaiting) waited_++;
}

void JitTier::requestLoop(const LuaClosure* cl, ThreadData* t, uint32_t header, const Value* base) {
  Proto* p = cl->proto;
  if (options_.mode != JitMode::kOn || !options_.skipShortLoops || p->data->lineDefined != 0 ||
      __atomic_load_n(&p->jitCalls, __ATOMIC_RELAXED) > 1 || !worthCompiling(p)) {
    request(p, false, t);
    return;
  }
  LoopLeft left = outermostLoopLeft(p, header, base);
  installIdle(p, t, JitCode::kWaiting, &left);  // measured from here (vm/jit_loops.cpp)
}

void JitTier::requestForCall(const LuaClosure* cl, JitCode* code) {
  uint8_t state = code->state.load(std::memory_order_relaxed);
  if (state != JitCode::kDeferred && state != JitCode::kWaiting) return;
  // First in the queue: compiled code waits for it at every call (its exits there), and
  // a function without loops compiles quickly.
  queueAfter(cl, code, true);
}

void JitTier::queueAfter(const LuaClosure* cl, JitCode* code, bool first) {
  Proto* p = cl->proto;
  auto* next = new JitCode();
  next->previous = code;  // owned, as a replaced code is (invariant 4)
  next->coldRounds = code->coldRounds;
  auto job = snapshot(p, next, cl);
  next->perfName = code->perfName;
  JitCode* expected = code;
  if (!__atomic_compare_exchange_n(&p->jit, &expected, next, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    next->previous = nullptr;
    delete next;  // another worker came first
    return;
  }
  enqueue(std::move(job), first);
}

bool JitTier::ensureProfile(Proto* p) {
  if (__atomic_load_n(&p->jitProfile, __ATOMIC_ACQUIRE)) return true;
  auto* fresh = new (std::nothrow) uint8_t[2 * size_t(p->codeSize)]();
  if (!fresh) return false;
  uint8_t* expected = nullptr;
  if (!__atomic_compare_exchange_n(&p->jitProfile, &expected, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    delete[] fresh;  // another worker's came first
  }
  return true;
}

void JitTier::guardExit(const LuaClosure* cl, JitCode* code, uint32_t pc, const Value* base) {
  // A cold site's exit is no failed guard: it profiles what runs there as the
  // interpreter does. As a failed guard, the second exit at a cold call of a Lua
  // function marked the site kWeftJitSeenOther, and the next version left every call
  // there to the interpreter (bench/methods.lua's acc:scale(0)).
  bool cold = pc < code->coldSites.size() && code->coldSites[pc];
  jitProfileRecord(cl->proto, pc, base, !cold);
  if (cold && !code->coldExited.load(std::memory_order_relaxed)) code->coldExited.store(1, std::memory_order_relaxed);
  if (pc < code->siteExits.size()) jitCount(code->siteExits[pc]);
  if (code->guardExits.fetch_add(1, std::memory_order_relaxed) + 1 != kJitGuardExitLimit) return;
  replace(cl, code, false);
}

bool JitTier::coldLoop(const LuaClosure* cl, JitCode* code, uint32_t header, const Value* base) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  Proto* p = cl->proto;
  if (options_.mode != JitMode::kOn) return false;
  uint8_t state = code->state.load(kRelaxed);
  if (state == JitCode::kWaiting) return waitingLoop(cl, code, header, base);
  if (code->coldRounds >= kJitMaxColdRounds) return false;
  if (state != JitCode::kReady && state != JitCode::kRejected && state != JitCode::kDeferred) return false;
  uint32_t n = __atomic_load_n(&code->coldBackEdges, __ATOMIC_RELAXED);  // jitColdLoopCounts's
  if (!code->reprofiling.load(kRelaxed)) {
    if ((n & (kJitColdLoopLimit - 1)) != 0) return false;
    uint32_t unseen = unseenInLoop(p, header);
    if (unseen == 0) return false;
    code->coldHeader.store(header, kRelaxed);
    code->coldUnseen.store(unseen, kRelaxed);
    code->coldStart.store(n, kRelaxed);
    code->reprofiling.store(1, kRelaxed);
    nextQuietEpoch();
    return true;
  }
  if (int64_t(n) - code->coldStart.load(kRelaxed) < kJitColdLoopLimit) return true;  // a lost count may step back
  // Done, once: compile again if the loop's feedback grew and the VM's coarse test finds
  // that the loop itself may now go round compiled; else it stays interpreted.
  uint8_t profiling = 1;
  if (!code->reprofiling.compare_exchange_strong(profiling, 0, kRelaxed)) return false;
  uint32_t cold = code->coldHeader.load(kRelaxed);
  if (unseenInLoop(p, cold) < code->coldUnseen.load(kRelaxed) && loopMayIterate(p, cold, loopLatch(p, cold))) {
    // A deferred prototype (its loops looked as if they could not go round compiled
    // when it was first asked for) has no code yet: this is its first compilation.
    if (state == JitCode::kDeferred)
      queueAfter(cl, code, false);
    else
      replace(cl, code, true);
  }
  return false;
}

Value arithMetamethod(State& S, const Proto* p, uint32_t pc, const Value* base, Value& x, Value& y) {
  using frontend::Op;
  x = y = Value::nil();
  if (pc + 1 >= p->codeSize) return Value::nil();
  frontend::Instruction mm = p->code[pc + 1];
  Op op = frontend::getOp(mm);
  if (op != Op::MMBIN && op != Op::MMBINI && op != Op::MMBINK) return Value::nil();
  x = base[frontend::getA(mm)];
  y = op == Op::MMBIN    ? base[frontend::getB(mm)]
      : op == Op::MMBINI ? Value::integer(frontend::getSB(mm))
                         : p->constants[frontend::getB(mm)];
  if (op != Op::MMBIN && frontend::getK(mm)) std::swap(x, y);
  auto strNum = [](const Value& v) { return v.isNumber() || v.isString(); };
  if (strNum(x) && strNum(y)) return Value::nil();
  return binaryMetamethod(S, x, y, metaOfEvent(frontend::MetaEvent(frontend::getC(mm))));
}

bool finishesArith(const CallFrame& caller) {
  frontend::Op op = frontend::getOp(caller.pc[-1]);
  return op == frontend::Op::MMBIN || op == frontend::Op::MMBINI || op == frontend::Op::MMBINK;
}

bool JitTier::callsQueuedCode(State& S, const Proto* p, const Instruction* pc, const Value* base) {
  frontend::Op op = frontend::getOp(*pc);
  Value callee = Value::nil();
  if (op == frontend::Op::CALL || op == frontend::Op::TAILCALL) {
    callee = base[frontend::getA(*pc)];
  } else if (op >= frontend::Op::ADDI && op <= frontend::Op::SHR) {
    Value x, y;
    callee = arithMetamethod(S, p, uint32_t(pc - p->code), base, x, y);
  }
  if (!callee.isLuaClosure()) return false;
  const JitCode* code = __atomic_load_n(&callee.asLuaClosure()->proto->jit, __ATOMIC_ACQUIRE);
  return code && code->state.load(std::memory_order_relaxed) == JitCode::kQueued;
}

void JitTier::waitForCallee(Proto* p, JitCode* code) {
  uint16_t epoch = quietEpoch();
  code->calleeWait.store(epoch, std::memory_order_relaxed);
  // A frame that profiles (cold loops, cold exits) still needs its frame changes.
  if (!code->profilesFrames()) __atomic_store_n(&p->jitQuiet, epoch, __ATOMIC_RELAXED);
}

void JitTier::nextQuietEpoch() {
  // Release, and read-modify-write so that racing movers each take an epoch: a frame
  // change that reads an epoch sees every change stored before it moved there.
  uint16_t epoch = quietEpoch_.load(std::memory_order_relaxed);
  while (!quietEpoch_.compare_exchange_weak(epoch, epoch == 0xffff ? 1 : epoch + 1, std::memory_order_acq_rel,
                                            std::memory_order_relaxed)) {
  }
}

void JitTier::replace(const LuaClosure* cl, JitCode* code, bool cold) {
  Proto* p = cl->proto;
  // Replaced once, by the worker that reached the limit; the old code stays alive
  // behind the new (invariant 4).
  auto* next = new JitCode();
  next->previous = code;
  next->version = uint8_t(code->version + (cold ? 0 : 1));
  next->coldRounds = uint8_t(code->coldRounds + (cold ? 1 : 0));
  next->noEntryTests = code->noEntryTests || code->entryTestFailed.load(std::memory_order_relaxed);
  std::unique_ptr<Job> job;
  if (next->version >= kJitMaxVersions) {
    next->tier = this;
    next->name = code->name;
    next->refs.store(1, std::memory_order_relaxed);
    next->state.store(JitCode::kBlacklisted, std::memory_order_relaxed);
  } else {
    job = snapshot(p, next, cl);
    next->perfName = code->perfName;
  }
  JitCode* expected = code;
  if (!__atomic_compare_exchange_n(&p->jit, &expected, next, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    delete next;
    return;
  }
  {
    std::lock_guard lock(mu_);
    (job ? recompiled_ : blacklisted_)++;
  }
  if (job) enqueue(std::move(job));
}

void JitTier::dropProtoRef(JitCode* code) {
  if (code->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;  // its job still runs
  bool compiled = false;
  for (JitCode* c = code; c; c = c->previous) compiled |= c->handle != nullptr;
  if (!compiled || !code->tier) {
    releaseNow(code);
    return;
  }
  {
    std::lock_guard lock(mu_);
    garbage_.push_back(code);
  }
  work_.notify_one();
}

// Frees code and the versions it replaced; module resources only on the compile thread
// or at the tier's end (every caller but dropProtoRef's code-less chains).
void JitTier::releaseNow(JitCode* code) {
  while (code) {
    JitCode* previous = code->previous;
    if (code->handle) {
      {
        std::lock_guard lock(mu_);
        live_.erase(std::remove(live_.begin(), live_.end(), code), live_.end());
        retiredEntries_ += __atomic_load_n(&code->entries, __ATOMIC_RELAXED);
        retiredExits_ += __atomic_load_n(&code->exits, __ATOMIC_RELAXED);
      }
      if (engine_ && gModule) gModule->release(engine_, code->handle);
    }
    delete code;
    code = previous;
  }
}

// The job's reference goes; if the Proto died meanwhile the code goes with it.
void JitTier::finishJob(JitCode* code) {
  if (code->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    releaseNow(code);
    return;
  }
  if (code->handle) {
    std::lock_guard lock(mu_);
    live_.push_back(code);
  }
}

bool JitTier::ensureEngine() {
  if (engine_) return true;
  if (unavailable_) return false;
  std::string error;
  const WeftJitModule* m = loadModule(error);
  if (m) {
    gc::Heap& heap = state_.heap();
    WeftJitHost host{};
    host.gcRequested = heap.requestFlagForJit();
    host.gcStopRequested = heap.stopFlagForJit();
    host.stress = uint8_t(heap.config().stress != gc::StressMode::kNone);
    host.state = &state_;
    host.helpers = jitHelpers();
    host.layout = jitLayout();
    for (uint8_t id = 1; id < kWeftJitNativeCount; id++) {
      host.natives[id] = reinterpret_cast<const void*>(knownNatives()[id]);
    }
    host.layout.maxCallDepth = state_.options().maxCallDepth;
    host.barrierSlow = jitBarrierSlow;
    host.barrierCheck = jitBarrierCheck;
    host.barrierChecks = &gc::gBarrierSlow;
    host.intModuli = tableIntModuli();
    host.intReciprocals = tableIntReciprocals();
    host.intSpread = kTableIntSpread;
#if defined(__SANITIZE_THREAD__)
    host.slotObserved = jitSlotObserved;
    host.slotPublished = jitSlotPublished;
#endif
    char buf[256] = {};
    engine_ = m->create(&host, buf, sizeof buf);
    if (!engine_) error = std::string("cannot start the compiler: ") + buf;
  }
  if (!engine_) {
    unavailable_ = true;
    if (options_.reportUnavailable) {
      std::fprintf(stderr, "weft: JIT unavailable (%s); running interpreted\n", error.c_str());
      std::fflush(stderr);
    }
  }
  return engine_ != nullptr;
}

void JitTier::compileJob(Job& job) {
  JitCode* code = job.code;
  if (code->refs.load(std::memory_order_acquire) == 1) {  // its Proto died while queued
    code->state.store(JitCode::kRejected, std::memory_order_release);
    return;
  }
  if (!ensureEngine()) {
    code->state.store(JitCode::kFailed, std::memory_order_release);
    return;
  }
  std::vector<WeftJitInline> inlines;
  for (const InlineCallee& c : job.inlines) {
    inlines.push_back({c.pc, c.uid, c.code.data(), uint32_t(c.code.size()), uint32_t(c.constants.size()),
                       c.constants.data(), c.numParams, c.isVararg});
  }
  WeftJitRequest req{job.bytecode.data(),
                     uint32_t(job.bytecode.size()),
                     uint32_t(job.constants.size()),
                     job.constants.data(),
                     job.constantSlots,
                     job.numParams,
                     job.maxStackSize,
                     job.isVararg,
                     code->name.c_str(),
                     job.profile.empty() ? nullptr : job.profile.data(),
                     uint8_t(job.faultSkipReload),
                     job.codeAddress,
                     inlines.data(),
                     uint32_t(inlines.size()),
                     job.uid,
                     job.captured.empty() ? nullptr : job.captured.data(),
                     job.profile.empty() ? nullptr : job.profile.data() + job.bytecode.size(),
                     uint8_t(job.noEntryTests)};
  WeftJitResult res{};
  auto start = std::chrono::steady_clock::now();
  if (job.faultSlow) std::this_thread::sleep_for(kFaultSlowCompile);
  int rc = gModule->compile(engine_, &req, &res);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  // Before the entry is published: perf may sample the code from its first run on.
  if (rc == kWeftJitOk && options_.perfMap) writePerfMap(code, res);
  std::lock_guard lock(mu_);
  compileMs_ += ms;
  compiledInstructions_ += job.bytecode.size();
  if (rc == kWeftJitOk) {
    compiled_++;
    code->handle = res.handle;
    code->compileMs = ms;
    code->compiledOps = res.compiledOps;
    code->defersFrames = res.defersFrames != 0;
    code->entryMap = res.entryMap;
    WeftJitEntry callEntry = res.entryMap[0] && !job.isVararg ? res.entry : nullptr;
    __atomic_store_n(&code->callEntry, callEntry, __ATOMIC_RELEASE);
    __atomic_store_n(&code->deferEntry, res.defersFrames ? callEntry : nullptr, __ATOMIC_RELEASE);
    __atomic_store_n(&code->entry, res.entry, __ATOMIC_RELEASE);
    code->state.store(JitCode::kReady, std::memory_order_release);
    nextQuietEpoch();
  } else if (rc == kWeftJitRejected) {
    rejected_++;
    code->state.store(JitCode::kRejected, std::memory_order_release);
    nextQuietEpoch();  // its callers' frames, quiet while it was queued
  } else {
    failed_++;
    code->state.store(JitCode::kFailed, std::memory_order_release);
    nextQuietEpoch();
    if (failed_ == 1) std::fprintf(stderr, "weft: JIT: %s: %s\n", code->name.c_str(), res.error);
  }
}

void JitTier::writePerfMap(const JitCode* code, const WeftJitResult& res) {
  if (perfMapFailed_) return;
  Expected<void> written = perfMapWrite(reinterpret_cast<const void*>(res.entry), res.codeSize, code->perfName);
  if (written) return;
  perfMapFailed_ = true;
  std::fprintf(stderr, "weft: JIT: perf map: %s\n", written.error().message.c_str());
  std::fflush(stderr);
}

void JitTier::threadMain() {
  std::unique_lock lock(mu_);
  for (;;) {
    idle_ = true;
    work_.wait(lock, [&] { return stop_ || !queue_.empty() || !garbage_.empty(); });
    idle_ = false;
    if (!garbage_.empty()) {
      std::vector<JitCode*> batch;
      batch.swap(garbage_);
      lock.unlock();
      for (JitCode* code : batch) releaseNow(code);
      lock.lock();
      done_.notify_all();
      continue;
    }
    if (stop_) return;
    std::unique_ptr<Job> job = std::move(queue_.front());
    queue_.pop_front();
    queuedInstructions_ -= job->bytecode.size();
    lock.unlock();
    compileJob(*job);
    finishJob(job->code);
    lock.lock();
    done_.notify_all();
  }
}

bool JitTier::compiling() {
  std::lock_guard lock(mu_);
  return !idle_ || !queue_.empty();
}

uint32_t JitTier::liveCodeForTesting() {
  std::unique_lock lock(mu_);
  done_.wait(lock, [&] { return stop_ || (queue_.empty() && garbage_.empty() && idle_); });
  return engine_ && gModule ? gModule->liveCode(engine_) : 0;
}

std::string JitTier::statsReport() {
  std::lock_guard lock(mu_);
  uint64_t entries = retiredEntries_, exits = retiredExits_, safepoints = 0, deferring = 0;
  std::vector<const JitCode*> byExits(live_.begin(), live_.end());
  for (const JitCode* c : live_) {
    deferring += c->defersFrames;
    entries += __atomic_load_n(&c->entries, __ATOMIC_RELAXED);
    exits += __atomic_load_n(&c->exits, __ATOMIC_RELAXED);
    safepoints += __atomic_load_n(&c->safepointExits, __ATOMIC_RELAXED);
  }
  char line[512];
  std::string out;
  std::snprintf(line, sizeof line,
                "jit: %llu functions compiled, %llu rejected, %llu failed, %llu recompiled, %llu blacklisted, "
                "%llu waited for a long loop; compile time %.1f ms (%.2f ms each); %llu take deferred frames\n"
                "jit: %llu entries, %llu exits to the interpreter (%llu at safepoints); module %s\n",
                (unsigned long long)compiled_, (unsigned long long)rejected_, (unsigned long long)failed_,
                (unsigned long long)recompiled_, (unsigned long long)blacklisted_, (unsigned long long)waited_,
                compileMs_, compiled_ ? compileMs_ / double(compiled_) : 0.0, (unsigned long long)deferring,
                (unsigned long long)entries, (unsigned long long)exits, (unsigned long long)safepoints,
                moduleLoaded() ? "loaded" : "not loaded");
  out += line;
  std::sort(byExits.begin(), byExits.end(), [](const JitCode* a, const JitCode* b) { return a->exits > b->exits; });
  for (size_t i = 0; i < byExits.size() && i < 10; i++) {
    const JitCode* c = byExits[i];
    std::snprintf(line, sizeof line, "jit:   %-40s %6u ops %7.2f ms %10llu entries %10llu exits%s\n", c->name.c_str(),
                  c->compiledOps, c->compileMs, (unsigned long long)c->entries, (unsigned long long)c->exits,
                  c->defersFrames ? ", deferred frames" : "");
    out += line;
  }
  // The ten sites with most exits of a kind (a member of JitCode: counts by pc), and the
  // instruction there when the code kept the opcodes.
  struct Site {
    uint32_t count;
    const JitCode* code;
    uint32_t pc;
  };
  auto listSites = [&](std::vector<uint32_t> JitCode::*counts, const char* kind) {
    std::vector<Site> sites;
    for (const JitCode* c : live_) {
      for (uint32_t pc = 0; pc < (c->*counts).size(); pc++) {
        uint32_t n = __atomic_load_n(&(c->*counts)[pc], __ATOMIC_RELAXED);
        if (n) sites.push_back({n, c, pc});
      }
    }
    std::sort(sites.begin(), sites.end(), [](const Site& a, const Site& b) { return a.count > b.count; });
    for (size_t i = 0; i < sites.size() && i < 10; i++) {
      const Site& site = sites[i];
      const char* op = site.pc < site.code->ops.size() ? frontend::kOpNames[site.code->ops[site.pc]] : "";
      std::snprintf(line, sizeof line, "jit:   %s %-40s pc %-5u (version %u) %10u%s%s\n", kind, site.code->name.c_str(),
                    site.pc + 1, unsigned(site.code->version), site.count, *op ? " " : "", op);
      out += line;
    }
  };
  listSites(&JitCode::siteExits, "guard exits");
  listSites(&JitCode::plainExits, "other exits");
  return out;
}

}  // namespace weft::vm
