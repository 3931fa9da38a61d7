// The interpreter loop: one function that runs Lua frames of a thread with computed-goto
// dispatch over frontend/opcodes.h. Lua-to-Lua calls, returns and tail calls, pcall
// markers and metamethod frames never grow the C++ stack.
//
// Register conventions of the loop: `pc`, `base` (t->stack + frame base) and `k` (the
// prototype's constants, off-heap and stable) live in locals. `base` is re-derived after
// anything that may reallocate the stack (calls, slow paths); the closure is re-read
// from the frame's function slot after every safepoint (docs/design/safepoints.md).
#include "vm/interp.h"

#include <cmath>
#include <cstring>

#include "frontend/opcodes.h"
#include "vm/debug.h"
#include "vm/jit.h"
#include "vm/meta.h"
#include "vm/number.h"
#include "vm/string.h"
#include "vm/table.h"
#include "vm/thread.h"

namespace weft::vm {

using namespace frontend;

namespace {

// Stores field by field: a Value returned in registers and copied whole would be
// spilled in two halves and reloaded as one 16-byte word (a store-forwarding stall).
inline void setValue(Value* dst, const Value& v) {
  dst->u.i = v.u.i;
  dst->tag = v.tag;
}

inline int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
inline int64_t wrapSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
inline int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

inline bool toFloatFast(const Value& v, double& out) {
  if (v.tag == Tag::Float) { out = v.u.n; return true; }
  if (v.tag == Tag::Int) { out = double(v.u.i); return true; }
  return false;
}
inline bool toIntFast(const Value& v, int64_t& out) {
  if (v.tag == Tag::Int) { out = v.u.i; return true; }
  if (v.tag == Tag::Float) return floatToInteger(v.u.n, out);
  return false;
}

// Integer for-loop limit (manual §3.3.5): true when the loop must not run.
bool forLimit(const Value& lim, int64_t init, int64_t step, int64_t& out, bool& bad) {
  bad = false;
  if (!toInteger(lim, out, step < 0 ? FloatToInt::Ceil : FloatToInt::Floor)) {
    double f;
    if (!toNumber(lim, f)) { bad = true; return true; }
    if (f > 0) {
      if (step < 0) return true;
      out = INT64_MAX;
    } else {
      if (step > 0) return true;
      out = INT64_MIN;
    }
  }
  return step > 0 ? init > out : init < out;
}

Status forErrorMayGC(State& S, ThreadData* t, const Value& v, const char* what) {
  return runtimeErrorMayGC(S, t, "bad 'for' %s (number expected, got %s)", what, typeNameWithMeta(S, v).c_str());
}

// OP_FORPREP: true when the loop is skipped.
Status forPrepMayGC(State& S, ThreadData* t, Value* ra, bool& skip) {
  Value& init = ra[0];
  Value& limit = ra[1];
  Value& step = ra[2];
  if (init.isInt() && step.isInt()) {
    int64_t i0 = init.u.i, st = step.u.i, lim;
    if (st == 0) return runtimeErrorMayGC(S, t, "'for' step is zero");
    bool bad;
    skip = forLimit(limit, i0, st, lim, bad);
    if (bad) return forErrorMayGC(S, t, limit, "limit");
    if (skip) return Status::ok();
    uint64_t count = st > 0 ? (uint64_t(lim) - uint64_t(i0)) / uint64_t(st)
                            : (uint64_t(i0) - uint64_t(lim)) / (uint64_t(-(st + 1)) + 1u);
    ra[1] = Value::integer(int64_t(count));
    ra[3] = Value::integer(i0);
    return Status::ok();
  }
  double fi, fl, fs;
  if (!toNumber(limit, fl)) return forErrorMayGC(S, t, limit, "limit");
  if (!toNumber(step, fs)) return forErrorMayGC(S, t, step, "step");
  if (!toNumber(init, fi)) return forErrorMayGC(S, t, init, "initial value");
  if (fs == 0) return runtimeErrorMayGC(S, t, "'for' step is zero");
  skip = fs > 0 ? fl < fi : fi < fl;
  if (skip) return Status::ok();
  ra[0] = Value::number(fi);
  ra[1] = Value::number(fl);
  ra[2] = Value::number(fs);
  ra[3] = Value::number(fi);
  return Status::ok();
}

// Makes R[A] a to-be-closed variable (OP_TBC).
Status markTbcMayGC(State& S, ThreadData* t, uint32_t index) {
  Value v = t->stack[index];
  if (v.isFalsy()) return Status::ok();
  if (metamethodOf(S, v, Meta::Close).isNil()) {
    CallFrame& f = t->frame();
    Proto* p = frameProto(t, f);
    int pc = currentPc(f, p);
    const char* name = "?";
    int reg = int(index - f.base);
    int n = 0;
    for (const auto& lv : p->data->locals) {
      if (lv.startPc > pc) break;
      if (pc < lv.endPc) {
        if (n == reg) { name = lv.name.c_str(); break; }
        n++;
      }
    }
    return runtimeErrorMayGC(S, t, "variable '%s' got a non-closable value", name);
  }
  if (!t->pushTbc(index)) return memoryErrorStatus(S, t);
  return Status::ok();
}

Status newClosure(State& S, ThreadData* t, CallFrame* f, Proto* p, uint32_t dest) {
  uint32_t n = p->numUpvalues;
  auto* c = reinterpret_cast<LuaClosure*>(S.mutator().allocate(uint8_t(Kind::LuaClosure), luaClosureSize(n)));
  if (!c) return memoryErrorStatus(S, t);
  c->proto = p;
  c->numUpvalues = n;
  LuaClosure* enclosing = t->stack[f->func].asLuaClosure();
  const auto& descs = p->data->upvalues;
  for (uint32_t i = 0; i < n; i++) {
    Upvalue* uv;
    if (descs[i].inStack) {
      uv = findUpvalue(S, t, f->base + descs[i].index);
      if (!uv) return memoryErrorStatus(S, t);
    } else {
      uv = enclosing->upvalues[descs[i].index];
    }
    c->upvalues[i] = uv;
  }
  t->stack[dest] = Value::luaClosure(c);
  return Status::ok();
}

// n == 0: the items run up to the top an open call or vararg left. The verifier proves
// the instruction's shape, not the values it meets: a hostile binary chunk can still aim
// SETLIST at a register holding no table, or leave the top below it, so both are errors.
Status setListMayGC(State& S, ThreadData* t, uint32_t ra, uint32_t n, uint32_t last) {
  if (!t->stack[ra].isTable() || (n == 0 && t->top <= ra)) {
    return runtimeErrorMayGC(S, t, "bad binary chunk (SETLIST without its table)");
  }
  if (n == 0) n = t->top - ra - 1;
  Table* h = t->stack[ra].asTable();
  if (!tableSetList(S, h, int64_t(last), &t->stack[ra + 1], n).isOk()) return memoryErrorStatus(S, t);
  return Status::ok();
}

Status varargPrepMayGC(State& S, ThreadData* t, CallFrame* f, Proto* p) {
  uint32_t nfix = p->numParams;
  uint32_t actual = t->top - f->func - 1;
  uint32_t nextra = actual > nfix ? actual - nfix : 0;
  uint32_t newFunc = t->top;
  if (!ensureStackSlots(t, uint64_t(newFunc) + 1 + nfix + p->maxStackSize + kExtraStack)) return stackOverflowMayGC(S, t);
  Value* s = t->stack;
  s[newFunc] = s[f->func];
  for (uint32_t i = 1; i <= nfix; i++) {
    s[newFunc + i] = s[f->func + i];
    s[f->func + i] = Value::nil();
  }
  f->varargDelta = nextra + nfix + 1;
  f->func = newFunc;
  f->base = newFunc + 1;
  f->top = f->base + p->maxStackSize;
  t->top = f->top;
  return Status::ok();
}

Status varArgMayGC(State& S, ThreadData* t, CallFrame* f, Proto* p, uint32_t ra, int wanted) {
  uint32_t nfix = p->numParams;
  uint32_t nextra = f->varargDelta ? f->varargDelta - nfix - 1 : 0;
  uint32_t from = f->func - nextra;
  if (wanted < 0) {
    wanted = int(nextra);
    if (!ensureStackSlots(t, uint64_t(ra) + nextra + kExtraStack)) return stackOverflowMayGC(S, t);
    t->top = ra + nextra;
  }
  Value* s = t->stack;
  for (int j = 0; j < wanted; j++) s[ra + j] = uint32_t(j) < nextra ? s[from + j] : Value::nil();
  return Status::ok();
}

// A nil to point at: field reads hand out slots, and a missing key reads as this.
constexpr Value kNilValue{};

// Whether h's metatable is known to lack `event` (the absence cache in header.aux). A
// false answer only means "not known": the slow path looks and fills the cache.
inline bool lacksMeta(const Table* h, Meta event) {
  const Table* mt = tableMetatable(h);
  return !mt || metaKnownAbsent(mt, int(event));
}

// Slow half of fieldFast: one level of `__index` being a table, the shape of method
// lookup. Never calls anything; nullptr when a metamethod or a deeper chain decides.
[[gnu::noinline]] const Value* fieldViaMetaTable(State& S, const Table* h, const String* key) {
  Value idx = metaField(S, tableMetatable(h), Meta::Index);
  if (idx.isNil()) return &kNilValue;
  if (!idx.isTable()) return nullptr;
  const Table* ih = idx.asTable();
  const Value* v = tableStrSlot(ih, key);
  if (v && !v->isNil()) return v;  // the caller reads it with loadSlotChecked
  return lacksMeta(ih, Meta::Index) ? &kNilValue : nullptr;
}

// h[key] for a string key without calling anything (GETFIELD, GETTABUP, SELF): the raw
// slot, else nil when no __index can apply, else one level of __index tables. nullptr:
// the slow path decides. The slot is read at once (no allocation in between), with
// loadSlotChecked: a racing task may store into it meanwhile, even nil.
inline const Value* fieldFast(State& S, const Table* h, const String* key) {
  const Value* v = tableStrSlot(h, key);
  if (v && !v->isNil()) [[likely]] return v;
  if (lacksMeta(h, Meta::Index)) return &kNilValue;
  return fieldViaMetaTable(S, h, key);
}

// A method of a string or userdata receiver (`s:lower()`, `ch:recv()`, `f:read()`;
// SELF): the metatable's `__index` when that is a table whose raw field is set, which
// then decides the lookup alone. Never calls anything; nullptr: the slow path decides
// (no metatable, a function `__index`, a missing method) and raises what it must.
inline const Value* methodViaMetatable(State& S, const Table* mt, const String* key) {
  if (!mt) return nullptr;
  const Value* slot = tableShortStrSlot(mt, S.metaNames[int(Meta::Index)]);
  if (!slot) return nullptr;
  Value idx = loadSlotChecked(*slot);  // a racing setter must not tear the table reference
  if (!idx.isTable()) return nullptr;
  const Value* v = tableStrSlot(idx.asTable(), key);
  return v && !v->isNil() ? v : nullptr;
}

inline const Value* methodFast(State& S, const Value& receiver, const String* key) {
  if (receiver.isString()) return methodViaMetatable(S, S.typeMetatables[int(BasicType::String)], key);
  if (receiver.isUserdata()) return methodViaMetatable(S, receiver.asUserdata()->metatable, key);
  return nullptr;
}

// Value slot of an existing key with a non-nil value for a string key (SETFIELD,
// SETTABUP), or nullptr.
inline Value* liveStrSlot(Table* h, const String* key) {
  const Value* v = tableStrSlot(h, key);
  return v && !v->isNil() ? const_cast<Value*>(v) : nullptr;
}

// Index of the instruction a Lua frame is executing (its pc is already past it).
inline uint32_t pcIndex(const CallFrame& f, const Proto* p) { return uint32_t(f.pc - p->code) - 1; }

// Line 0 is a stripped chunk's (it has no lines): hooks get nil for it, as in Lua.
inline int lineAt(const Proto* p, uint32_t pc) {
  const auto& lines = p->data->lineinfo;
  if (pc >= lines.size()) return p->data->lineDefined;
  return lines[pc] > 0 ? lines[pc] : -1;
}

// Hooks on, at a frame change (startFrame/reload): a function that starts gets its call
// hook (a vararg one from VARARGPREP, once its frame is adjusted) and line tracking
// starts at its first instruction; a frame that continues after a call or a slow path
// resumes line tracking at its current instruction (Lua's oldpc).
Status hookFrameMayGC(State& S, ThreadData* t) {
  if (t->inHook()) return Status::ok();
  const CallFrame& f = t->frame();
  const Proto* p = frameProto(t, f);
  if (f.pc != p->code) {
    t->rare->hookOldPc = pcIndex(f, p);
    return Status::ok();
  }
  t->rare->hookOldPc = 0;
  if (p->isVararg || !(t->hookMask & kHookMaskCall)) return Status::ok();
  return runHookMayGC(S, t, (f.flags & kFrameTail) ? "tail call" : "call", -1, 1, p->numParams);
}

// The native an interpreted OP_CALL called yielded: its caller is the topmost Lua frame
// (the native's own may be above it), re-read since the call may have collected.
void jitCallYielded(ThreadData* t) {
  for (uint32_t idx = t->frameCount; idx-- > 0;) {
    const CallFrame& f = t->frames[idx];
    if (!(f.flags & kFrameLua)) continue;
    Proto* p = t->stack[f.func].asLuaClosure()->proto;
    jitProfileYield(p, uint32_t(f.pc - 1 - p->code));
    return;
  }
}

// Count and line hooks before an instruction (Lua 5.4): the count hook every hookCount
// instructions, then the line hook when the instruction starts a new line or control
// jumped backwards. The top frame's pc is already past the instruction. As in lua5.4,
// instructions of a running hook count too (the hook itself is not called then).
// A C hook yielded before the top frame's instruction (pc is past it): the instruction
// runs after the resume, without the hook (thread.h, hookYieldable).
Status hookYield(ThreadData* t) {
  t->frame().pc--;
  t->rare->hookYielded = true;
  t->resumeCount = 0;
  return Status(StatusCode::kYield);
}

Status traceMayGC(State& S, ThreadData* t) {
  bool countFires = (t->hookMask & kHookMaskCount) && --t->rare->hookCounter <= 0;
  if (countFires) t->rare->hookCounter = t->rare->hookCount;
  if (t->rare->hookSkipOnce) {  // the instruction a hook yielded before: it counts, nothing runs
    t->rare->hookSkipOnce = false;
    t->rare->hookOldPc = pcIndex(t->frame(), frameProto(t, t->frame()));  // as the line hook left it
    return Status::ok();
  }
  if (countFires) {
    if (Status st = runHookMayGC(S, t, "count", -1); !st.isOk()) {
      if (st.code() != StatusCode::kYield) return st;
      t->rare->hookCounter = 1;  // as Lua: the resumed instruction counts down to zero again
      return hookYield(t);
    }
  }
  if (!(t->hookMask & kHookMaskLine) || t->rare->inHook) return Status::ok();
  const CallFrame& f = t->frame();  // re-read: the count hook may have moved everything
  const Proto* p = frameProto(t, f);
  uint32_t npc = pcIndex(f, p);
  uint32_t old = t->rare->hookOldPc < p->codeSize ? t->rare->hookOldPc : 0;
  t->rare->hookOldPc = npc;
  if (npc > old && lineAt(p, npc) == lineAt(p, old)) return Status::ok();
  Status st = runHookMayGC(S, t, "line", lineAt(p, npc));
  return st.code() == StatusCode::kYield ? hookYield(t) : st;
}

// Whether instructions must visit traceMayGC: a count hook (counting even inside the
// hook), or a line hook outside it.
inline bool tracing(const ThreadData* t) {
  return (t->hookMask & kHookMaskCount) || ((t->hookMask & kHookMaskLine) && !t->rare->inHook);
}

// VARARGPREP with hooks on: the call hook of a vararg function, after the adjustment;
// the next instruction then counts as a new line.
Status varargHookMayGC(State& S, ThreadData* t) {
  if (t->inHook()) return Status::ok();
  t->rare->hookOldPc = 1;
  if (!(t->hookMask & kHookMaskCall)) return Status::ok();
  const CallFrame& f = t->frame();
  return runHookMayGC(S, t, (f.flags & kFrameTail) ? "tail call" : "call", -1, 1, frameProto(t, f)->numParams);
}

}  // namespace

// Frame setup shared by OP_CALL and the native entry points.
[[gnu::always_inline]] static inline Status setupLuaFrameMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t flags) {
  Proto* p = t->stack[func].asLuaClosure()->proto;
  uint32_t nargs = t->top - func - 1;
  uint32_t limit = S.options().maxCallDepth + (t->inErrorHandler ? 250 : 0);
  if (t->frameCount >= limit) [[unlikely]] return stackOverflowMayGC(S, t);
  uint64_t need = uint64_t(func) + 1 + p->maxStackSize + kExtraStack;
  if (p->isVararg) need += nargs + 1 + p->numParams;
  if (need > t->stackSize) [[unlikely]] {
    if (!ensureStackSlots(t, need)) return stackOverflowMayGC(S, t);
  }
  Value* s = t->stack;
  for (uint32_t j = nargs; j < p->numParams; j++) s[func + 1 + j] = Value::nil();
  if (nargs < p->numParams) t->top = func + 1 + p->numParams;
  CallFrame* f = pushFrame(t);
  if (!f) [[unlikely]] return memoryErrorStatus(S, t);
  f->func = func;
  f->base = func + 1;
  f->top = func + 1 + p->maxStackSize;
  f->pc = p->code;
  f->nresults = nresults;
  f->flags = kFrameLua | flags;
  return Status::ok();
}

Status pushLuaFrameMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t flags) {
  return setupLuaFrameMayGC(S, t, func, nresults, flags);
}

// Reconciles the registers of a frame that open upvalues refer to with their cells
// (docs/design/values.md): where frames change (entered, re-entered after a call or a
// slow path, a closure captured a register), before anything that may run Lua code or
// let another task in, and at loop back-edges. The count is read before the cells
// (acquire pairs with storeUpvalue's release), so a store it misses changes it again.
static void syncSharedFrame(ThreadData* t, uint32_t base) {
  t->seenCellWrites = __atomic_load_n(&t->cellWrites, __ATOMIC_ACQUIRE);
  syncOpenUpvalues(t, base);
  t->syncCountdown = kSharedSyncInterval;
}

// At a loop back-edge of a shared frame: cells another task or a finished call stored
// into come in at once; the frame's own writes go out every kSharedSyncInterval-th
// back-edge (and at every call, slow path and safepoint before that).
[[gnu::always_inline]] static inline void sharedBackEdge(ThreadData* t, uint32_t base) {
  uint64_t writes = __atomic_load_n(&t->cellWrites, __ATOMIC_ACQUIRE);
  if ((writes != t->seenCellWrites) | (--t->syncCountdown == 0)) syncSharedFrame(t, base);
}

// Opcodes a shared frame stops at (sharedInstruction): loop back-edges, and calls.
constexpr bool sharedLoop(Op op) { return op == Op::JMP || op == Op::FORLOOP || op == Op::TFORLOOP; }
constexpr bool sharedStop(Op op) {
  return sharedLoop(op) || op == Op::CALL || op == Op::TAILCALL || op == Op::TFORCALL;
}

Status executeMayGC(State& S, ThreadData* t) {
  static void* const kLabels[] = {
#define WEFT_LABEL(name, fmt, desc) &&op_##name,
      WEFT_OPCODES(WEFT_LABEL)
#undef WEFT_LABEL
  };
  static_assert(sizeof(kLabels) / sizeof(kLabels[0]) == kNumOpcodes);
  // In a frame whose registers open upvalues refer to, dispatch goes through this table:
  // calls and loop back-edges reach one stub that reconciles, then jumps to the handler;
  // every other opcode runs as usual (slow paths and safepoints reconcile themselves).
#define WEFT_SHARED_LABEL(name, fmt, desc) sharedStop(Op::name) ? &&sharedInstruction : &&op_##name,
  static void* const kSharedLabels[] = {WEFT_OPCODES(WEFT_SHARED_LABEL)};
#undef WEFT_SHARED_LABEL
  // With line or count hooks on, dispatch goes through this table: every instruction
  // visits traceStep first, and the fast path pays nothing for hooks.
  static void* const kTraceLabels[] = {
#define WEFT_TRACE_LABEL(name, fmt, desc) &&traceStep,
      WEFT_OPCODES(WEFT_TRACE_LABEL)
#undef WEFT_TRACE_LABEL
  };
  // While a prototype waits for compiled code (JIT on), its frames dispatch through this
  // table: the instructions the compiler specialises record their operand types first
  // (jitProfileStep). The fast paths pay nothing for type feedback.
#define WEFT_PROFILE_LABEL(name, fmt, desc) jitProfileVisits(Op::name) ? &&jitProfileStep : &&op_##name,
  static void* const kProfileLabels[] = {WEFT_OPCODES(WEFT_PROFILE_LABEL)};
#undef WEFT_PROFILE_LABEL
  // Both: a shared frame of a prototype waiting for code (sharedInstruction profiles the
  // calls it reconciles before).
#define WEFT_SHARED_PROFILE_LABEL(name, fmt, desc) \
  sharedStop(Op::name) ? &&sharedInstruction : jitProfileVisits(Op::name) ? &&jitProfileStep : &&op_##name,
  static void* const kSharedProfileLabels[] = {WEFT_OPCODES(WEFT_SHARED_PROFILE_LABEL)};
#undef WEFT_SHARED_PROFILE_LABEL

  gc::Heap& heap = S.heap();
  const bool stress = heap.config().stress != gc::StressMode::kNone;
  JitTier* const jit = S.jit();  // null with the JIT off: one test per frame change and back-edge
  CallFrame* f;
  LuaClosure* cl;
  const Value* k;
  Value* base;
  const Instruction* pc;
  Instruction i;
  Status status;
  uint32_t retSrc = 0, retCount = 0;
  void* const* dispatch = kLabels;

#define LOADFRAME()                                   \
  do {                                                \
    f = &t->frames[t->frameCount - 1];                \
    cl = t->stack[f->func].asLuaClosure();            \
    k = cl->proto->constants;                         \
    base = t->stack + f->base;                        \
    pc = f->pc;                                       \
  } while (0)
#define SAVEPC() (f->pc = pc)
#define DISPATCH()                 \
  do {                             \
    i = *pc++;                     \
    goto* dispatch[i & 0x7f];      \
  } while (0)
#define RA() (base + getA(i))
#define RB() (base + getB(i))
#define RC() (base + getC(i))
#define KB() (k + getB(i))
#define KC() (k + getC(i))
#define RKC() (getK(i) ? k + getC(i) : base + getC(i))
#define IDX(p) uint32_t((p) - t->stack)
// Whether open upvalues refer to registers of the running frame (sharedFrame).
#define SHARED() (t->openTop > f->base)
// Before anything that may run Lua code or let another task in (a metamethod, a
// finalizer, a hook, a message handler, a preemption): the frame's writes to captured
// locals reach their cells.
#define SYNC_SHARED()                                            \
  do {                                                           \
    if (SHARED()) [[unlikely]] syncSharedFrame(t, f->base);      \
  } while (0)
// A slow path that may call a metamethod, raise, or reallocate the stack.
#define SLOW(expr)                                  \
  do {                                              \
    SAVEPC();                                       \
    SYNC_SHARED();                                  \
    status = (expr);                                \
    if (!status.isOk()) [[unlikely]] goto onError;  \
    goto reload;                                    \
  } while (0)
// `live`: the registers the collector keeps (interp.h, kLiveFrame).
#define SAFEPOINT_LIVE(live)                                         \
  do {                                                               \
    if ((--t->budget < 0) | heap.collectionRequested() | stress) [[unlikely]] { \
      SAVEPC();                                                      \
      SYNC_SHARED();                                                 \
      status = loopSafepointMayGC(S, t, (live));                     \
      if (!status.isOk()) goto onError;                              \
      LOADFRAME();                                                   \
      SYNC_SHARED();                                                 \
    }                                                                \
  } while (0)
#define SAFEPOINT() SAFEPOINT_LIVE(kLiveFrame)
// At a loop back-edge, after its safepoint: hotness, and entry into compiled code.
#define JIT_BACKEDGE()                      \
  do {                                      \
    if (jit) [[unlikely]] goto jitBackEdge; \
  } while (0)

  if (!(t->frame().flags & kFrameLua)) {
    // Resuming a coroutine suspended in a native: an error the resume raises there, or
    // the native's results (the values the resume passed, or its continuation's).
    if (t->resumeStatus != StatusCode::kOk) [[unlikely]] {
      status = Status(t->resumeStatus);
      t->resumeStatus = StatusCode::kOk;
      goto onError;
    }
    goto unroll;
  }

startFrame:
  LOADFRAME();
  SAFEPOINT_LIVE(kLiveResumed);
  if (t->hookMask) [[unlikely]] goto hookedFrame;
  if (SHARED()) [[unlikely]] goto sharedFrame;
  dispatch = kLabels;
  if (jit) [[unlikely]] goto jitFrame;
  DISPATCH();

reload:
  LOADFRAME();
  if (t->hookMask) [[unlikely]] goto hookedFrame;
  if (SHARED()) [[unlikely]] goto sharedFrame;
  dispatch = kLabels;
  if (jit) [[unlikely]] goto jitFrame;
  DISPATCH();

// Slow path: the JIT is on and a frame starts or continues (docs/design/jit.md). A
// function's start charges its hotness (eager mode: compiles it first); code installed
// on the prototype is entered at pc when pc has an entry.
jitFrame: {
  Proto* p = cl->proto;
  // Every call and return of every frame comes here. Most find nothing to do: a
  // prototype queued, rejected or deferred, whose code has no entry and does not profile
  // (docs/design/jit.md, "Quiet frames"), is known by one compare.
  uint16_t epoch = jit->quietEpoch();
  if (__atomic_load_n(&p->jitQuiet, __ATOMIC_RELAXED) == epoch) [[likely]]
    DISPATCH();
  // A shared frame comes from sharedFrame, with its own table (docs/design/jit.md,
  // "Shared frames").
  void* const* profiling = dispatch == kSharedLabels ? kSharedProfileLabels : kProfileLabels;
  if (const JitCode* c = __atomic_load_n(&p->jit, __ATOMIC_ACQUIRE)) [[likely]] {
    bool reprofiling = c->profilesFrames();
    if (reprofiling) [[unlikely]]
      dispatch = profiling;  // cold loops, cold exits
    if (!__atomic_load_n(&c->entry, __ATOMIC_ACQUIRE)) {
      // A metamethod deferred before the arithmetic that calls it had code: that code
      // calls it now (vm/jit_loops.cpp arithCallerHasCode).
      if (pc == p->code && c->state.load(std::memory_order_relaxed) == JitCode::kDeferred &&
          (t->frame().flags & kFrameFinishOp) && arithCallerHasCode(t)) [[unlikely]]
        jit->requestForCall(cl, const_cast<JitCode*>(c));
      if (!reprofiling) __atomic_store_n(&p->jitQuiet, epoch, __ATOMIC_RELAXED);
      DISPATCH();
    }
    if (c->entryMap[pc - p->code] != 1) DISPATCH();  // kWeftJitEntryForCalls: compiled callers only
    // A frame that goes on at a return (after a call that returned or yielded) would
    // enter only to return, as the interpreter does, or to leave at once where the
    // interpreter handles the return (docs/design/jit.md "Compiled tail calls"):
    // bench/tasks/skynet.lua's tasks, resumed after their last send, entered and left
    // 825,000 times.
    if (Op op = getOp(*pc); op == Op::RETURN0 || op == Op::RETURN1 || op == Op::RETURN) DISPATCH();
    // A frame whose return compiled code leaves to the interpreter (a metamethod's, a
    // native's callback, a task's first: docs/design/jit.md "Compiled tail calls") is
    // not entered at its start: without a loop it would only enter and exit, and with
    // one its loops enter at their back-edges, while a call that returns before any
    // (bench/tasks/skynet.lua's leaves) stays interpreted. Eager mode enters those with
    // a loop, so that tests run their code compiled from the start.
    if (pc == p->code && (f->flags & (kFrameEntry | kFrameFinishOp)) &&
        (c->loopless || jit->options().mode != JitMode::kEager))
      DISPATCH();
    goto jitEnter;
  }
  if (pc == p->code) {  // not queued yet: hotness and feedback
    if (jit->options().mode == JitMode::kEager) {
      jit->request(p, true, t);  // never collects: p stays put
    } else {
      jitCharge(*jit, p, t);
    }
  }
  if (jit->profile(p)) dispatch = profiling;
  if (!jitEntersAt(p, uint32_t(pc - p->code))) DISPATCH();
  goto jitEnter;
}

// Slow path: a loop back-edge with the JIT on (after its safepoint): hotness, then entry
// at the loop header when the code has one and no hook is on.
jitBackEdge: {
  // A shared frame's back-edge reconciled first (sharedInstruction): its code loads the
  // registers as they are now (docs/design/jit.md, "Shared frames").
  Proto* p = cl->proto;
  // One load of p's code decides (a loop of a rejected prototype comes here every round:
  // three loads and a call of the tier made a call-heavy loop 5% slower than --jit=off).
  JitCode* code = __atomic_load_n(&p->jit, __ATOMIC_ACQUIRE);
  if (!code) {  // not queued yet (jitProfilingNow): hotness
    if (jit->options().mode != JitMode::kEager) jitChargeLoop(*jit, cl, t, uint32_t(pc - p->code), base);
    DISPATCH();
  }
  if (__atomic_load_n(&code->entry, __ATOMIC_ACQUIRE) && code->entryMap[pc - p->code] == 1 &&
      dispatch != kTraceLabels && code->calleeWait.load(std::memory_order_relaxed) != jit->quietEpoch()) {
    goto jitEnter;
  }
  // A loop the code does not enter (queued, rejected or cold code: most rounds of such a
  // loop come here, so the common case is short): counted, and profiled again while it
  // is a cold loop.
  if (!jitColdLoopCounts(code)) [[likely]] {
    if (dispatch == kProfileLabels) dispatch = kLabels;
    if (dispatch == kSharedProfileLabels) dispatch = kSharedLabels;
    DISPATCH();
  }
  if (dispatch == kTraceLabels) DISPATCH();  // hooks
  bool shared = dispatch == kSharedLabels || dispatch == kSharedProfileLabels;
  void* const* plain = shared ? kSharedLabels : kLabels;
  bool profile = jit->coldLoop(cl, code, uint32_t(pc - p->code), base);
  dispatch = profile ? (shared ? kSharedProfileLabels : kProfileLabels) : plain;
  DISPATCH();
}

// Runs compiled code from pc. It leaves the frame exact at the exit pc: after a poll that
// fired, the loop safepoint runs here and the code goes on; otherwise the interpreter
// runs on from the exit with its plain dispatch, and comes back at the next entry it
// meets at a loop back-edge (jitBackEdge) or a frame change (jitFrame: after a call).
jitEnter: {
  Proto* p = cl->proto;
  // Null when another worker replaced the code since this one found an entry.
  JitCode* code = jitReady(p);
  if (!code) [[unlikely]] DISPATCH();
  // The code's calls reconcile a shared frame only after captured registers it wrote:
  // what the interpreter wrote goes out here (docs/design/jit.md, "Shared frames").
  SYNC_SHARED();
  t->jitDepth = 0;
  uint64_t r = code->entry(base, &t->budget, uint32_t(pc - p->code), t, 0);
  uint64_t kind = r >> 32;
  if (kind == kWeftJitExitReturned) {  // the entered frame returned to its caller
    if (jit->options().stats) [[unlikely]] jitCount(code->entries);
    goto reload;
  }
  if (kind == kWeftJitExitNoEntry) [[unlikely]] DISPATCH();
  if (kind == kWeftJitExitEntryGuard) [[unlikely]] {
    code->entryTestFailed.store(1, std::memory_order_relaxed);
    jit->guardExit(cl, code, uint32_t(r), base);
    DISPATCH();
  }
  // A native compiled code called (in the entered frame or a callee's) failed, yielded or
  // returned where the code could not go on: as after the interpreter's own call.
  if ((kind & ~kWeftJitExitInCallee) == kWeftJitExitStatus) [[unlikely]] {
    status = Status(StatusCode(uint32_t(r)));
    goto onError;
  }
  if ((kind & ~kWeftJitExitInCallee) == kWeftJitExitResume) [[unlikely]]
    goto reload;
  // The exit is in the top frame: the innermost one a compiled call pushed (docs/design/
  // jit.md, "Compiled calls"; the frames below it wait for their calls to return), or
  // one a compiled tail call put in the entered frame's place ("Compiled tail calls").
  bool inCallee = kind & kWeftJitExitInCallee;
  kind &= ~kWeftJitExitInCallee;
  Proto* enteredProto = p;
  JitCode* entered = code;
  LOADFRAME();
  if (inCallee || cl->proto != p) {
    p = cl->proto;
    code = jitReady(p);
    if (!code) [[unlikely]] {
      pc = p->code + uint32_t(r);
      dispatch = kLabels;
      DISPATCH();
    }
  }
  pc = p->code + uint32_t(r);
  bool safepoint = kind == kWeftJitExitSafepoint || kind == kWeftJitExitSafepointFrame;
  if (jit->options().stats) [[unlikely]] {
    jitCount(code->entries);
    jitCount(safepoint ? code->safepointExits : code->exits);
    if (kind == kWeftJitExitInterpret && uint32_t(r) < code->plainExits.size()) jitCount(code->plainExits[uint32_t(r)]);
  }
  if (kind == kWeftJitExitGuard) [[unlikely]] jit->guardExit(cl, code, uint32_t(r), base);
  if (safepoint) {
    // A shared frame's poll also fires to reconcile (docs/design/jit.md, "Shared frames").
    SAVEPC();
    SYNC_SHARED();
    status = loopSafepointMayGC(S, t, kind == kWeftJitExitSafepoint ? kLiveLocals : kLiveFrame);
    if (!status.isOk()) goto onError;
    LOADFRAME();
    SYNC_SHARED();
    if (t->hookMask) [[unlikely]] goto hookedFrame;
    goto jitEnter;
  }
  dispatch = SHARED() ? kSharedLabels : kLabels;
  if (code->profilesFrames()) [[unlikely]]
    dispatch = SHARED() ? kSharedProfileLabels : kProfileLabels;
  // Left at a call whose callee's code is queued: entered again at once, the code would
  // leave there again, a round trip per call or round until the callee's code is ready
  // (docs/design/jit.md, "Quiet frames").
  if (kind == kWeftJitExitInterpret && JitTier::callsQueuedCode(S, p, pc, base)) [[unlikely]] {
    jit->waitForCallee(p, code);
    if (entered != code) jit->waitForCallee(enteredProto, entered);
  }
  // The exit's instruction runs interpreted, a FORPREP too (not back into the code).
  i = *pc++;
  if (getOp(i) == Op::FORPREP) goto forPrepInterpreted;
  goto* dispatch[i & 0x7f];
}

// Slow path: an instruction the compiler specialises, in a frame being profiled.
jitProfileStep:
  jitProfileRecord(cl->proto, uint32_t(pc - 1 - cl->proto->code), base);
  goto* kLabels[i & 0x7f];

// Slow path: hooks are on (every frame change comes here to pick the dispatch table).
hookedFrame:
  SAVEPC();
  status = hookFrameMayGC(S, t);
  if (!status.isOk()) goto onError;
  LOADFRAME();
  dispatch = tracing(t) ? kTraceLabels : kLabels;
  if (SHARED()) goto sharedFrame;
  DISPATCH();

// Slow path: open upvalues refer to registers of this frame (entered, re-entered after
// a call, or a closure just captured one). Registers and cells are reconciled now and
// then at every boundary where a closure could run or another task look (syncSharedFrame),
// so closures of any task, which use only the cells, and this frame, which uses only the
// registers, see each other's writes.
sharedFrame:
  syncSharedFrame(t, f->base);
  if (dispatch == kTraceLabels) DISPATCH();
  dispatch = kSharedLabels;
  // With the JIT on: profiled while the prototype waits, entered after a call.
  if (jit) [[unlikely]]
    goto jitFrame;
  DISPATCH();

// Slow path: a call or a loop back-edge of a shared frame. A callee may be a closure
// that reads a captured local: everything goes out first.
sharedInstruction:
  if (sharedLoop(Op(i & 0x7f))) sharedBackEdge(t, f->base);
  else syncSharedFrame(t, f->base);
  if (dispatch == kSharedProfileLabels && jitProfileVisits(Op(i & 0x7f))) goto jitProfileStep;
  goto* kLabels[i & 0x7f];

// Slow path: line or count hooks, before the instruction `i` (pc is past it). Lua runs
// no hook for a vararg function's VARARGPREP; that instruction calls the call hook.
traceStep:
  if (!tracing(t)) {
    dispatch = SHARED() ? kSharedLabels : kLabels;
  } else if (getOp(i) != Op::VARARGPREP) {
    // A hook's closures see the frame's writes to captured locals, and it theirs.
    SYNC_SHARED();
    SAVEPC();
    status = traceMayGC(S, t);
    if (!status.isOk()) goto onError;
    LOADFRAME();
    SYNC_SHARED();
  }
  goto* (SHARED() ? kSharedLabels : kLabels)[i & 0x7f];

op_MOVE:
  *RA() = *RB();
  DISPATCH();
op_LOADI:
  *RA() = Value::integer(getSBx(i));
  DISPATCH();
op_LOADF:
  *RA() = Value::number(double(getSBx(i)));
  DISPATCH();
op_LOADK:
  *RA() = k[getBx(i)];
  DISPATCH();
op_LOADKX:
  *RA() = k[getAx(*pc)];
  pc++;
  DISPATCH();
op_LOADFALSE:
  *RA() = Value::boolean(false);
  DISPATCH();
op_LFALSESKIP:
  *RA() = Value::boolean(false);
  pc++;
  DISPATCH();
op_LOADTRUE:
  *RA() = Value::boolean(true);
  DISPATCH();
op_LOADNIL: {
  Value* ra = RA();
  for (int b = getB(i); b >= 0; b--) *ra++ = Value::nil();
  DISPATCH();
}
op_GETUPVAL:
  setValue(RA(), loadSlotChecked(cl->upvalues[getB(i)]->cell));
  DISPATCH();
op_SETUPVAL:
  storeUpvalue(t, cl->upvalues[getB(i)], *RA());
  DISPATCH();
op_GETTABUP: {
  Value up = loadSlotChecked(cl->upvalues[getB(i)]->cell);
  const Value* key = KC();
  if (up.isTable()) [[likely]] {
    if (const Value* v = fieldFast(S, up.asTable(), key->asString())) [[likely]] {
      setValue(RA(), loadSlotChecked(*v));
      DISPATCH();
    }
  }
  SLOW(indexLoopMayGC(S, t, up, *key, VarRef::upval(getB(i)), IDX(RA())));
}
op_GETTABLE: {
  Value* rb = RB();
  Value* rc = RC();
  if (rb->isTable()) [[likely]] {
    Table* h = rb->asTable();
    if (rc->isInt()) {
      const Value* slot = tableIntSlot(h, rc->u.i);
      Value v = slot ? loadSlot(*slot) : Value::nil();
      if (!v.isNil() || lacksMeta(h, Meta::Index)) {
        *RA() = v;
        DISPATCH();
      }
    } else if (rc->isString()) {
      if (const Value* v = fieldFast(S, h, rc->asString())) {
        setValue(RA(), loadSlotChecked(*v));
        DISPATCH();
      }
    } else if (Value v = tableGet(h, *rc); !v.isNil() || lacksMeta(h, Meta::Index)) {
      setValue(RA(), v);
      DISPATCH();
    }
  }
  SLOW(indexLoopMayGC(S, t, *rb, *rc, VarRef::reg(getB(i)), IDX(RA())));
}
op_GETI: {
  Value* rb = RB();
  if (rb->isTable()) [[likely]] {
    Table* h = rb->asTable();
    if (const Value* slot = tableArraySlot(h, getC(i))) {
      Value v = loadSlot(*slot);
      if (!v.isNil()) {
        *RA() = v;
        DISPATCH();
      }
    }
    Value v = tableGetInt(h, getC(i));
    if (!v.isNil() || lacksMeta(h, Meta::Index)) {
      setValue(RA(), v);
      DISPATCH();
    }
  }
  SLOW(indexLoopMayGC(S, t, *rb, Value::integer(getC(i)), VarRef::reg(getB(i)), IDX(RA())));
}
op_GETFIELD: {
  Value* rb = RB();
  const Value* key = KC();
  if (rb->isTable()) [[likely]] {
    if (const Value* v = fieldFast(S, rb->asTable(), key->asString())) [[likely]] {
      setValue(RA(), loadSlotChecked(*v));
      DISPATCH();
    }
  }
  SLOW(indexLoopMayGC(S, t, *rb, *key, VarRef::reg(getB(i)), IDX(RA())));
}
op_SETTABUP: {
  Value up = loadSlotChecked(cl->upvalues[getA(i)]->cell);
  const Value* key = KB();
  const Value* rc = RKC();
  if (up.isTable()) [[likely]] {
    Table* h = up.asTable();
    uint32_t seq = tableWriteBegin(h);  // table.h invariant 7, as in every store below
    if (Value* slot = liveStrSlot(h, key->asString())) [[likely]] {
      storeValue(h, *slot, *rc);
      tableTouched(h);
      if (tableWriteHeld(h, seq)) [[likely]] DISPATCH();
    }
  }
  SLOW(newIndexLoopMayGC(S, t, up, *key, *rc, VarRef::upval(getA(i))));
}
op_SETTABLE: {
  Value* ra = RA();
  Value* rb = RB();
  const Value* rc = RKC();
  if (ra->isTable()) [[likely]] {
    Table* h = ra->asTable();
    uint32_t seq = tableWriteBegin(h);
    if (rb->isInt()) {
      if (const Value* slot = tableArraySlot(h, rb->u.i); slot && !slot->isNil()) {
        storeValue(h, *const_cast<Value*>(slot), *rc);
        tableTouched(h);
        if (tableWriteHeld(h, seq)) [[likely]] DISPATCH();
        SLOW(newIndexLoopMayGC(S, t, *ra, *rb, *rc, VarRef::reg(getA(i))));
      }
      // Without __newindex, one probe of the hash part finds the key or inserts it.
      if (lacksMeta(h, Meta::NewIndex)) {
        if (tableSetInt(S, h, rb->u.i, *rc).isOk()) DISPATCH();
        SLOW(newIndexLoopMayGC(S, t, *ra, *rb, *rc, VarRef::reg(getA(i))));
      }
      if (const Value* slot = tableHashIntSlot(h, rb->u.i); slot && !slot->isNil()) {
        storeValue(h, *const_cast<Value*>(slot), *rc);
        tableTouched(h);
        if (tableWriteHeld(h, seq)) [[likely]] DISPATCH();
        SLOW(newIndexLoopMayGC(S, t, *ra, *rb, *rc, VarRef::reg(getA(i))));
      }
    } else if (Value* slot = tableFindSlot(h, *rb)) {
      storeValue(h, *slot, *rc);
      tableTouched(h);
      if (tableWriteHeld(h, seq)) [[likely]] DISPATCH();
      SLOW(newIndexLoopMayGC(S, t, *ra, *rb, *rc, VarRef::reg(getA(i))));
    }
    // A new key: a raw insert allocates but never collects, so nothing needs reloading.
    if (lacksMeta(h, Meta::NewIndex) && tableSet(S, h, *rb, *rc).isOk()) DISPATCH();
  }
  SLOW(newIndexLoopMayGC(S, t, *ra, *rb, *rc, VarRef::reg(getA(i))));
}
op_SETI: {
  Value* ra = RA();
  const Value* rc = RKC();
  if (ra->isTable()) [[likely]] {
    Table* h = ra->asTable();
    uint32_t seq = tableWriteBegin(h);
    if (const Value* slot = tableArraySlot(h, getB(i)); slot && !slot->isNil()) {
      storeValue(h, *const_cast<Value*>(slot), *rc);
      if (tableWriteHeld(h, seq)) [[likely]] DISPATCH();
      SLOW(newIndexLoopMayGC(S, t, *ra, Value::integer(getB(i)), *rc, VarRef::reg(getA(i))));
    }
    if (lacksMeta(h, Meta::NewIndex) && tableSetInt(S, h, getB(i), *rc).isOk()) DISPATCH();
  }
  SLOW(newIndexLoopMayGC(S, t, *ra, Value::integer(getB(i)), *rc, VarRef::reg(getA(i))));
}
op_SETFIELD: {
  Value* ra = RA();
  const Value* key = KB();
  const Value* rc = RKC();
  if (ra->isTable()) [[likely]] {
    Table* h = ra->asTable();
    uint32_t seq = tableWriteBegin(h);
    if (Value* slot = liveStrSlot(h, key->asString())) [[likely]] {
      storeValue(h, *slot, *rc);
      tableTouched(h);
      if (tableWriteHeld(h, seq)) [[likely]] DISPATCH();
      SLOW(newIndexLoopMayGC(S, t, *ra, *key, *rc, VarRef::reg(getA(i))));
    }
    if (lacksMeta(h, Meta::NewIndex) && tableSetStr(S, h, key->asString(), *rc).isOk()) DISPATCH();
  }
  SLOW(newIndexLoopMayGC(S, t, *ra, *key, *rc, VarRef::reg(getA(i))));
}
op_NEWTABLE: {
  uint32_t b = getB(i);
  uint32_t c = getC(i);
  // B is log2(hash size) + 1, at most 32 from the compiler; a corrupt binary chunk's
  // larger B is a hint like any other, ignored rather than shifted past 31 bits.
  if (b > 0) b = b <= 32 ? 1u << (b - 1) : 0;
  if (getK(i)) c += uint32_t(getAx(*pc)) * (kMaxArgC + 1);
  pc++;
  Table* h = newTable(S, c, b);
  if (!h) SLOW(memoryErrorStatus(S, t));
  *RA() = Value::table(h);
  SAFEPOINT_LIVE(IDX(RA()) + 1);
  DISPATCH();
}
op_SELF: {
  Value* ra = RA();
  Value* rb = RB();
  const Value* key = RKC();
  ra[1] = *rb;
  if (rb->isTable() && key->isString()) [[likely]] {
    if (const Value* v = fieldFast(S, rb->asTable(), key->asString())) [[likely]] {
      setValue(ra, loadSlotChecked(*v));
      DISPATCH();
    }
  } else if (key->isString()) {
    if (const Value* v = methodFast(S, *rb, key->asString())) {
      setValue(ra, loadSlotChecked(*v));
      DISPATCH();
    }
  }
  SLOW(indexLoopMayGC(S, t, *rb, *key, VarRef::reg(getB(i)), IDX(ra)));
}

#define ARITH_FAST(iop, fop)                                      \
  do {                                                            \
    const Value* x = RB();                                        \
    if (x->isInt() && y->isInt()) {                               \
      *RA() = Value::integer(iop(x->u.i, y->u.i));                \
      pc++;                                                       \
    } else if (double a, b; toFloatFast(*x, a) && toFloatFast(*y, b)) { \
      *RA() = Value::number(fop(a, b));                           \
      pc++;                                                       \
    }                                                             \
    DISPATCH();                                                   \
  } while (0)
#define FLOAT_FAST(fop)                                           \
  do {                                                            \
    const Value* x = RB();                                        \
    if (double a, b; toFloatFast(*x, a) && toFloatFast(*y, b)) {  \
      *RA() = Value::number(fop(a, b));                           \
      pc++;                                                       \
    }                                                             \
    DISPATCH();                                                   \
  } while (0)
#define BIT_FAST(op)                                              \
  do {                                                            \
    const Value* x = RB();                                        \
    if (int64_t a, b; toIntFast(*x, a) && toIntFast(*y, b)) {     \
      *RA() = Value::integer(op);                                 \
      pc++;                                                       \
    }                                                             \
    DISPATCH();                                                   \
  } while (0)
#define FADD(a, b) ((a) + (b))
#define FSUB(a, b) ((a) - (b))
#define FMUL(a, b) ((a) * (b))
#define FDIV(a, b) ((a) / (b))
#define FPOW(a, b) ((b) == 2 ? (a) * (a) : std::pow(a, b))
#define FIDIV(a, b) (std::floor((a) / (b)))

op_ADDI: {
  const Value* x = RB();
  int sc = getSC(i);
  if (x->isInt()) {
    *RA() = Value::integer(wrapAdd(x->u.i, sc));
    pc++;
  } else if (x->isFloat()) {
    *RA() = Value::number(x->u.n + sc);
    pc++;
  }
  DISPATCH();
}
op_ADDK: { const Value* y = KC(); ARITH_FAST(wrapAdd, FADD); }
op_SUBK: { const Value* y = KC(); ARITH_FAST(wrapSub, FSUB); }
op_MULK: { const Value* y = KC(); ARITH_FAST(wrapMul, FMUL); }
op_MODK: {
  const Value* y = KC();
  const Value* x = RB();
  if (x->isInt() && y->isInt() && y->u.i != 0) {
    *RA() = Value::integer(intMod(x->u.i, y->u.i));
    pc++;
  } else if (double a, b; !(x->isInt() && y->isInt()) && toFloatFast(*x, a) && toFloatFast(*y, b)) {
    *RA() = Value::number(floatMod(a, b));
    pc++;
  }
  DISPATCH();
}
op_POWK: { const Value* y = KC(); FLOAT_FAST(FPOW); }
op_DIVK: { const Value* y = KC(); FLOAT_FAST(FDIV); }
op_IDIVK: {
  const Value* y = KC();
  const Value* x = RB();
  if (x->isInt() && y->isInt() && y->u.i != 0) {
    *RA() = Value::integer(intFloorDiv(x->u.i, y->u.i));
    pc++;
  } else if (double a, b; !(x->isInt() && y->isInt()) && toFloatFast(*x, a) && toFloatFast(*y, b)) {
    *RA() = Value::number(FIDIV(a, b));
    pc++;
  }
  DISPATCH();
}
op_BANDK: { const Value* y = KC(); BIT_FAST(a & b); }
op_BORK: { const Value* y = KC(); BIT_FAST(a | b); }
op_BXORK: { const Value* y = KC(); BIT_FAST(a ^ b); }
op_SHRI: {
  const Value* x = RB();
  if (int64_t a; toIntFast(*x, a)) {
    *RA() = Value::integer(shiftRight(a, getSC(i)));
    pc++;
  }
  DISPATCH();
}
op_SHLI: {
  const Value* x = RB();
  if (int64_t a; toIntFast(*x, a)) {
    *RA() = Value::integer(shiftLeft(getSC(i), a));
    pc++;
  }
  DISPATCH();
}
op_ADD: { const Value* y = RC(); ARITH_FAST(wrapAdd, FADD); }
op_SUB: { const Value* y = RC(); ARITH_FAST(wrapSub, FSUB); }
op_MUL: { const Value* y = RC(); ARITH_FAST(wrapMul, FMUL); }
op_MOD: {
  const Value* y = RC();
  const Value* x = RB();
  if (x->isInt() && y->isInt()) {
    if (y->u.i == 0) SLOW(runtimeErrorMayGC(S, t, "attempt to perform 'n%%0'"));
    *RA() = Value::integer(intMod(x->u.i, y->u.i));
    pc++;
  } else if (double a, b; toFloatFast(*x, a) && toFloatFast(*y, b)) {
    *RA() = Value::number(floatMod(a, b));
    pc++;
  }
  DISPATCH();
}
op_POW: { const Value* y = RC(); FLOAT_FAST(FPOW); }
op_DIV: { const Value* y = RC(); FLOAT_FAST(FDIV); }
op_IDIV: {
  const Value* y = RC();
  const Value* x = RB();
  if (x->isInt() && y->isInt()) {
    if (y->u.i == 0) SLOW(runtimeErrorMayGC(S, t, "attempt to divide by zero"));
    *RA() = Value::integer(intFloorDiv(x->u.i, y->u.i));
    pc++;
  } else if (double a, b; toFloatFast(*x, a) && toFloatFast(*y, b)) {
    *RA() = Value::number(FIDIV(a, b));
    pc++;
  }
  DISPATCH();
}
op_BAND: { const Value* y = RC(); BIT_FAST(a & b); }
op_BOR: { const Value* y = RC(); BIT_FAST(a | b); }
op_BXOR: { const Value* y = RC(); BIT_FAST(a ^ b); }
op_SHL: { const Value* y = RC(); BIT_FAST(shiftLeft(a, b)); }
op_SHR: { const Value* y = RC(); BIT_FAST(shiftRight(a, b)); }

op_MMBIN: {
  Instruction prev = pc[-2];
  Meta ev = metaOfEvent(MetaEvent(getC(i)));
  SLOW(arithLoopMayGC(S, t, *RA(), *RB(), ev, VarRef::reg(getA(i)), VarRef::reg(getB(i)), IDX(base + getA(prev))));
}
op_MMBINI: {
  Instruction prev = pc[-2];
  Meta ev = metaOfEvent(MetaEvent(getC(i)));
  Value imm = Value::integer(getSB(i));
  if (getK(i)) SLOW(arithLoopMayGC(S, t, imm, *RA(), ev, VarRef::none(), VarRef::reg(getA(i)), IDX(base + getA(prev))));
  SLOW(arithLoopMayGC(S, t, *RA(), imm, ev, VarRef::reg(getA(i)), VarRef::none(), IDX(base + getA(prev))));
}
op_MMBINK: {
  Instruction prev = pc[-2];
  Meta ev = metaOfEvent(MetaEvent(getC(i)));
  Value kv = *KB();
  if (getK(i)) SLOW(arithLoopMayGC(S, t, kv, *RA(), ev, VarRef::none(), VarRef::reg(getA(i)), IDX(base + getA(prev))));
  SLOW(arithLoopMayGC(S, t, *RA(), kv, ev, VarRef::reg(getA(i)), VarRef::none(), IDX(base + getA(prev))));
}
op_UNM: {
  Value* rb = RB();
  if (rb->isInt()) {
    *RA() = Value::integer(wrapSub(0, rb->u.i));
    DISPATCH();
  }
  if (rb->isFloat()) {
    *RA() = Value::number(-rb->u.n);
    DISPATCH();
  }
  SLOW(unaryLoopMayGC(S, t, *rb, Meta::Unm, VarRef::reg(getB(i)), IDX(RA())));
}
op_BNOT: {
  Value* rb = RB();
  if (rb->isInt()) {
    *RA() = Value::integer(~rb->u.i);
    DISPATCH();
  }
  SLOW(unaryLoopMayGC(S, t, *rb, Meta::BNot, VarRef::reg(getB(i)), IDX(RA())));
}
op_NOT:
  *RA() = Value::boolean(RB()->isFalsy());
  DISPATCH();
op_LEN: {
  Value* rb = RB();
  if (rb->isString()) {
    *RA() = Value::integer(int64_t(rb->asString()->length));
    DISPATCH();
  }
  if (rb->isTable() && !tableMetatable(rb->asTable())) {
    *RA() = Value::integer(int64_t(tableLength(rb->asTable())));
    DISPATCH();
  }
  SLOW(unaryLoopMayGC(S, t, *rb, Meta::Len, VarRef::reg(getB(i)), IDX(RA())));
}
op_CONCAT: {
  SAVEPC();
  SYNC_SHARED();
  status = concatLoopMayGC(S, t, IDX(RA()), getB(i));
  if (!status.isOk()) goto onError;
  LOADFRAME();
  SAFEPOINT_LIVE(IDX(RA()) + 1);
  DISPATCH();
}
op_CLOSE: {
  SAVEPC();
  SYNC_SHARED();  // the __close handlers may read locals captured below `level`
  uint32_t level = IDX(RA());
  closeUpvalues(t, level);
  status = closeTbcInFrameMayGC(S, t, level);
  if (!status.isOk()) goto onError;
  goto reload;
}
op_TBC:
  SLOW(markTbcMayGC(S, t, IDX(RA())));
op_JMP: {
  int sj = getSJ(i);
  pc += sj;
  if (sj < 0) {
    SAFEPOINT_LIVE(kLiveLocals);
    JIT_BACKEDGE();
  }
  DISPATCH();
}

#define COND_JUMP(cond)                       \
  do {                                        \
    if ((cond) != getK(i)) {                  \
      pc++;                                   \
    } else {                                  \
      int sj = getSJ(*pc);                    \
      pc += sj + 1;                           \
      if (sj < 0) {                           \
        SAFEPOINT_LIVE(kLiveLocals);          \
        if (SHARED()) sharedBackEdge(t, f->base); \
        JIT_BACKEDGE();                       \
      }                                       \
    }                                         \
    DISPATCH();                               \
  } while (0)

op_EQ: {
  Value* ra = RA();
  Value* rb = RB();
  bool cond;
  if (ra->isNumber() && rb->isNumber()) {
    cond = (ra->isInt() && rb->isInt()) ? ra->u.i == rb->u.i : numEquals(*ra, *rb);
  } else if (ra->tag == rb->tag && ra->u.i == rb->u.i) {
    cond = true;
  } else if (ra->isString() && rb->isString()) {
    cond = stringEquals(ra->asString(), rb->asString());
  } else if ((ra->isTable() && rb->isTable()) || (ra->tag == Tag::Userdata && rb->tag == Tag::Userdata)) {
    SLOW(equalsLoopMayGC(S, t, *ra, *rb));
  } else {
    cond = false;
  }
  COND_JUMP(cond);
}
op_LT: {
  Value* ra = RA();
  Value* rb = RB();
  bool cond;
  if (ra->isInt() && rb->isInt()) cond = ra->u.i < rb->u.i;
  else if (ra->isNumber() && rb->isNumber()) cond = numLessThan(*ra, *rb);
  else SLOW(compareLoopMayGC(S, t, *ra, *rb, Meta::Lt));
  COND_JUMP(cond);
}
op_LE: {
  Value* ra = RA();
  Value* rb = RB();
  bool cond;
  if (ra->isInt() && rb->isInt()) cond = ra->u.i <= rb->u.i;
  else if (ra->isNumber() && rb->isNumber()) cond = numLessEqual(*ra, *rb);
  else SLOW(compareLoopMayGC(S, t, *ra, *rb, Meta::Le));
  COND_JUMP(cond);
}
op_EQK:
  COND_JUMP(rawEquals(*RA(), *KB()));
op_EQI: {
  Value* ra = RA();
  int im = getSB(i);
  bool cond = ra->isInt() ? ra->u.i == im : ra->isFloat() ? ra->u.n == double(im) : false;
  COND_JUMP(cond);
}
#define CMP_IMM(iop, meta, flip)                                                         \
  do {                                                                                   \
    Value* ra = RA();                                                                    \
    int im = getSB(i);                                                                   \
    bool cond;                                                                           \
    if (ra->isInt()) cond = ra->u.i iop im;                                              \
    else if (ra->isFloat()) cond = ra->u.n iop double(im);                               \
    else {                                                                               \
      Value iv = getC(i) ? Value::number(double(im)) : Value::integer(im);               \
      if (flip) SLOW(compareLoopMayGC(S, t, iv, *ra, meta));                             \
      SLOW(compareLoopMayGC(S, t, *ra, iv, meta));                                       \
    }                                                                                    \
    COND_JUMP(cond);                                                                     \
  } while (0)
op_LTI: CMP_IMM(<, Meta::Lt, false);
op_LEI: CMP_IMM(<=, Meta::Le, false);
op_GTI: CMP_IMM(>, Meta::Lt, true);
op_GEI: CMP_IMM(>=, Meta::Le, true);
op_TEST:
  COND_JUMP(!RA()->isFalsy());
op_TESTSET: {
  Value* rb = RB();
  if (rb->isFalsy() == getK(i)) {
    pc++;
  } else {
    *RA() = *rb;
    int sj = getSJ(*pc);
    pc += sj + 1;
    if (sj < 0) {
      SAFEPOINT();
      if (SHARED()) sharedBackEdge(t, f->base);
      JIT_BACKEDGE();
    }
  }
  DISPATCH();
}

op_CALL: {
  Value* ra = RA();
  int b = getB(i);
  uint32_t func = IDX(ra);
  if (b != 0) t->top = func + b;
  SAVEPC();
  if (ra->isLuaClosure()) [[likely]] {
    status = setupLuaFrameMayGC(S, t, func, getC(i) - 1, 0);
    if (!status.isOk()) [[unlikely]] goto onError;
    goto startFrame;
  }
  if (ra->tag == Tag::LightNative && ra->u.fn != basePcall && ra->u.fn != baseXpcall) {
    status = callNativeMayGC(S, t, func, getC(i) - 1, 0);  // callNonLuaMayGC's common case
    if (!status.isOk()) goto callFailed;
    goto startFrame;
  }
  status = callNonLuaMayGC(S, t, func, getC(i) - 1, 0);
  if (!status.isOk()) goto callFailed;
  goto startFrame;
}
// Slow path: OP_CALL's native raised or yielded. Only a frame that profiles records the
// yield (a prototype profiles only in such frames): every yield of a task's loop walked
// the frames to the caller, two per round trip of bench/tasks/pingpong.lua.
callFailed:
  if (status.code() == StatusCode::kYield && (dispatch == kProfileLabels || dispatch == kSharedProfileLabels))
    jitCallYielded(t);
  goto onError;
op_TAILCALL: {
  Value* ra = RA();
  int b = getB(i);
  uint32_t func = IDX(ra);
  if (b != 0) t->top = func + b;
  SAVEPC();
  if (getK(i)) closeUpvalues(t, f->base);
  if (!ra->isLuaClosure()) {
    status = resolveCallableMayGC(S, t, func, getA(i));
    if (!status.isOk()) goto onError;
    ra = t->stack + func;
    if (!ra->isLuaClosure()) {
      // Not a Lua function after all: call it in place; the RETURN that follows every
      // TAILCALL returns its results.
      status = callNonLuaMayGC(S, t, func, -1, 0);
      if (!status.isOk()) goto onError;
      goto startFrame;
    }
  }
  {
    uint32_t dest = f->func - f->varargDelta;
    uint32_t n = t->top - func;
    Value* s = t->stack;
    for (uint32_t j = 0; j < n; j++) s[dest + j] = s[func + j];
    t->top = dest + n;
    int32_t nres = f->nresults;
    uint16_t flags = (f->flags & ~kFrameLua) | kFrameTail;
    t->frameCount--;
    status = setupLuaFrameMayGC(S, t, dest, nres, flags);
    if (!status.isOk()) goto onError;
    goto startFrame;
  }
}
op_RETURN: {
  Value* ra = RA();
  int b = getB(i);
  retSrc = IDX(ra);
  retCount = b != 0 ? uint32_t(b - 1) : t->top - retSrc;
  if (getK(i)) {
    SAVEPC();
    if (b != 0) t->top = retSrc + retCount;
    closeUpvalues(t, f->base);
    if (t->hasTbcFrom(f->base)) {
      f->extra = retCount;  // a __close that yields repeats this RETURN (finishOpMayGC)
      status = closeTbcInFrameMayGC(S, t, f->base);
      if (!status.isOk()) goto onError;
      LOADFRAME();
    }
  }
  goto doReturn;
}
op_RETURN0:
  retSrc = IDX(base);
  retCount = 0;
  goto doReturn;
op_RETURN1:
  retSrc = IDX(RA());
  retCount = 1;
  goto doReturn;

doReturn: {
  if (t->hookMask & kHookMaskReturn) [[unlikely]] {
    SAVEPC();
    status = runHookMayGC(S, t, "return", -1, retSrc - f->func, retCount);
    if (!status.isOk()) goto onError;
    f = &t->frames[t->frameCount - 1];
  }
  uint32_t dest = f->func - f->varargDelta;
  int32_t wanted = f->nresults;
  uint16_t flags = f->flags;
  Value* s = t->stack;
  if (wanted == 1) {
    s[dest] = retCount ? s[retSrc] : Value::nil();
    t->top = dest + 1;
  } else {
    moveResults(t, dest, retSrc, retCount, wanted);
  }
  t->frameCount--;
  if (flags & (kFrameEntry | kFrameFinishOp)) [[unlikely]] {
    if (flags & kFrameEntry) return Status::ok();
    t->cDepth--;
    status = finishOpMayGC(S, t, dest);
    if (!status.isOk()) goto onError;
    goto reload;
  }
  // Into a pcall marker (its caller is a Lua frame), or (after a yield) a native's
  // continuation or a catcher closing variables.
  if (!(t->frame().flags & kFrameLua)) [[unlikely]] {
    if ((t->frame().flags & (kFrameProtected | kFrameErrClose)) != kFrameProtected) goto unroll;
    finishProtected(t);
  }
  goto reload;
}

op_FORLOOP: {
  Value* ra = RA();
  if (ra[2].isInt()) [[likely]] {
    uint64_t count = uint64_t(ra[1].u.i);
    if (count > 0) {
      int64_t idx = wrapAdd(ra[0].u.i, ra[2].u.i);
      ra[1].u.i = int64_t(count - 1);
      ra[0].u.i = idx;
      ra[3] = Value::integer(idx);
      pc -= getBx(i);
      SAFEPOINT_LIVE(kLiveLocals);
      JIT_BACKEDGE();
    }
  } else {
    double step = ra[2].u.n, limit = ra[1].u.n, idx = ra[0].u.n + step;
    if (step > 0 ? idx <= limit : limit <= idx) {
      ra[0].u.n = idx;
      ra[3] = Value::number(idx);
      pc -= getBx(i);
      SAFEPOINT_LIVE(kLiveLocals);
      JIT_BACKEDGE();
    }
  }
  DISPATCH();
}
op_FORPREP: {
  // A loop starts: compiled code may run it from here (a plain frame with an entry).
  if (jit && dispatch == kLabels && jitEntersAt(cl->proto, uint32_t(pc - 1 - cl->proto->code))) [[unlikely]] {
    pc--;
    goto jitEnter;
  }
forPrepInterpreted:
  bool skip = false;
  SAVEPC();
  status = forPrepMayGC(S, t, RA(), skip);
  if (!status.isOk()) goto onError;
  if (skip) pc += getBx(i) + 1;
  DISPATCH();
}
op_TFORPREP: {
  SAVEPC();
  status = markTbcMayGC(S, t, IDX(RA() + 3));
  if (!status.isOk()) goto onError;
  pc += getBx(i);
  DISPATCH();
}
op_TFORCALL: {
  Value* ra = RA();
  ra[4] = ra[0];
  ra[5] = ra[1];
  ra[6] = ra[2];
  uint32_t func = IDX(ra + 4);
  t->top = func + 3;
  SAVEPC();
  if (ra[4].isLuaClosure()) {
    status = setupLuaFrameMayGC(S, t, func, getC(i), 0);
    if (!status.isOk()) goto onError;
    goto startFrame;
  }
  status = callNonLuaMayGC(S, t, func, getC(i), 0);
  if (!status.isOk()) goto onError;
  goto startFrame;
}
op_TFORLOOP: {
  Value* ra = RA();
  if (!ra[4].isNil()) {
    ra[2] = ra[4];
    pc -= getBx(i);
    SAFEPOINT_LIVE(kLiveLocals);
    JIT_BACKEDGE();
  }
  DISPATCH();
}
op_SETLIST: {
  Value* ra = RA();
  uint32_t n = getB(i);
  uint32_t last = getC(i);
  if (getK(i)) {
    last += uint32_t(getAx(*pc)) * (kMaxArgC + 1);
    pc++;
  }
  SAVEPC();
  status = setListMayGC(S, t, IDX(ra), n, last);
  if (!status.isOk()) goto onError;
  DISPATCH();
}
op_CLOSURE: {
  SAVEPC();
  status = newClosure(S, t, f, cl->proto->protos[getBx(i)], IDX(RA()));
  if (!status.isOk()) goto onError;
  SAFEPOINT_LIVE(IDX(RA()) + 1);
  if (SHARED()) goto sharedFrame;  // it may have captured a register
  DISPATCH();
}
op_VARARG: {
  SAVEPC();
  status = varArgMayGC(S, t, f, cl->proto, IDX(RA()), getC(i) - 1);
  if (!status.isOk()) goto onError;
  base = t->stack + f->base;
  SAFEPOINT();
  DISPATCH();
}
op_VARARGPREP: {
  SAVEPC();
  status = varargPrepMayGC(S, t, f, cl->proto);
  if (!status.isOk()) goto onError;
  base = t->stack + f->base;
  if (t->hookMask) [[unlikely]] {
    status = varargHookMayGC(S, t);
    if (!status.isOk()) goto onError;
    LOADFRAME();
    // The call hook may have set a line or count hook: this function's first line counts.
    if (tracing(t)) dispatch = kTraceLabels;
  }
  DISPATCH();
}
op_EXTRAARG:
  DISPATCH();

onError: {
  if (status.code() == StatusCode::kYield || status.code() == StatusCode::kFatal) return status;
  // The handlers and __close functions that run now see the erring frame's last writes.
  if (t->frameCount && (t->frame().flags & kFrameLua) && t->openTop > t->frame().base) {
    syncSharedFrame(t, t->frame().base);
  }
  // The nearest catcher of this loop invocation (or, after a yield, below it) catches
  // the error; unrolling closes its call's variables and ends it.
  for (uint32_t idx = t->frameCount; idx-- > 0;) {
    uint16_t fl = t->frames[idx].flags;
    if (fl & (kFrameProtected | kFramePcallK)) {
      catchErrorAt(S, t, idx, status);
      goto unroll;
    }
    if (fl & kFrameEntry) break;
  }
  return status;
}

// Slow path: the top frame is not a Lua frame (a resumed native, a pcall marker, a
// native's continuation, a catcher closing variables): it ends as its C++ activation
// would have.
unroll: {
  bool leave;
  status = unrollMayGC(S, t, leave);
  if (!status.isOk()) goto onError;
  if (leave) return Status::ok();
  goto reload;
}

#undef LOADFRAME
#undef SAVEPC
#undef DISPATCH
#undef SLOW
#undef SAFEPOINT
#undef SAFEPOINT_LIVE
#undef JIT_BACKEDGE
#undef SHARED
}

// Compiled code's calls into the loop's fast paths (vm/jit_abi.h, WeftJitHelpers): the
// same lookups as the opcodes above, returning 0 wherever those take their slow path.
namespace {

int jitGetTable(void* state, void* dst, const void* obj, const void* key) {
  const Value* o = static_cast<const Value*>(obj);
  const Value* k = static_cast<const Value*>(key);
  if (!o->isTable()) return 0;
  Table* h = o->asTable();
  if (k->isInt()) {
    const Value* slot = tableIntSlot(h, k->u.i);
    Value v = slot ? loadSlot(*slot) : Value::nil();
    if (v.isNil() && !lacksMeta(h, Meta::Index)) return 0;
    setValue(static_cast<Value*>(dst), v);
    return 1;
  }
  if (k->isString()) {
    const Value* v = fieldFast(*static_cast<State*>(state), h, k->asString());
    if (!v) return 0;
    setValue(static_cast<Value*>(dst), loadSlotChecked(*v));
    return 1;
  }
  Value v = tableGet(h, *k);  // a float key (bench/cd.lua's voxel keys), a boolean, an object
  if (v.isNil() && !lacksMeta(h, Meta::Index)) return 0;
  setValue(static_cast<Value*>(dst), v);
  return 1;
}

int jitGetInt(void* state, void* dst, const void* obj, int64_t key) {
  Value k = Value::integer(key);
  return jitGetTable(state, dst, obj, &k);
}

// OP_SETTABLE's fast paths: a store into a live slot (an
// existing key with a non-nil value, where __newindex does not apply), or, without
// __newindex, a raw set, which may insert and grow the table (it never collects).
int jitSetTable(void* state, const void* obj, const void* key, const void* val) {
  const Value* o = static_cast<const Value*>(obj);
  const Value* k = static_cast<const Value*>(key);
  const Value& v = *static_cast<const Value*>(val);
  if (!o->isTable()) return 0;
  Table* h = o->asTable();
  uint32_t seq = tableWriteBegin(h);  // table.h invariant 7
  Value* slot = nullptr;
  if (k->isInt()) {
    const Value* s = tableIntSlot(h, k->u.i);
    if (s && !s->isNil()) slot = const_cast<Value*>(s);
  } else if (k->isString()) {
    slot = liveStrSlot(h, k->asString());
  } else {
    slot = tableFindSlot(h, *k);  // a float key (bench/cd.lua's voxel keys), a boolean, an object
  }
  if (!slot) {
    if (!lacksMeta(h, Meta::NewIndex)) return 0;
    auto& S = *static_cast<State*>(state);
    Status st = k->isInt()      ? tableSetInt(S, h, k->u.i, v)
                : k->isString() ? tableSetStr(S, h, k->asString(), v)
                                : tableSet(S, h, *k, v);
    return st.isOk() ? 1 : 0;  // a memory error, a nil or NaN key: the interpreter's to raise
  }
  storeValue(h, *slot, v);
  tableTouched(h);
  return tableWriteHeld(h, seq) ? 1 : 0;  // 0: the interpreter stores again
}

int jitSetInt(void* state, const void* obj, int64_t key, const void* val) {
  Value k = Value::integer(key);
  return jitSetTable(state, obj, &k, val);
}

int jitGetTabUp(void* state, void* dst, const void* funcSlot, uint32_t index, const void* key) {
  const LuaClosure* cl = static_cast<const Value*>(funcSlot)->asLuaClosure();
  Value up = loadSlotChecked(cl->upvalues[index]->cell);
  return jitGetTable(state, dst, &up, key);
}

// OP_CALL of a Lua function as setupLuaFrameMayGC does it, and the callee's start
// (startFrame) with its safepoint polled, for compiled code that enters the callee's
// code itself (docs/design/jit.md, "Compiled calls"). Everything that would collect,
// raise, grow the stack or the frames, or run a hook makes it return null first, and
// the interpreter makes the call.
// Slots are written through the pointers compiled code passed (it declares its stack
// and budget pointers unaliased).
// The code of cl's prototype p to enter at its start, or null: then `never` says
// whether p will never have such code (rejected, blacklisted, no entry at its start,
// varargs); a deferred or waiting one is asked for, as a compiled call or tail call
// meets it.
JitCode* calleeCode(State& S, const LuaClosure* cl, bool& never) {
  Proto* p = cl->proto;
  never = false;
  JitCode* code = jitReady(p);
  if (!code) {
    JitCode* pending = __atomic_load_n(&p->jit, __ATOMIC_ACQUIRE);
    if (!pending) return nullptr;
    uint8_t state = pending->state.load(std::memory_order_relaxed);
    bool asked = state == JitCode::kDeferred || state == JitCode::kWaiting;
    if (asked) S.jit()->requestForCall(cl, pending);
    never = state != JitCode::kQueued && !asked;
    return nullptr;
  }
  never = !__atomic_load_n(&code->callEntry, __ATOMIC_ACQUIRE);
  return never ? nullptr : code;
}

// Whether a compiled call may push a frame of p at stack index `func` without anything
// the interpreter's call would do first: a hook, a nest or frame array too deep or
// full, no room in the stack, the budget spent, a collection requested.
bool compiledCallFits(State& S, const ThreadData* t, const Proto* p, uint32_t func, const int32_t* budget) {
  gc::Heap& heap = S.heap();
  return !(t->hookMask || t->jitDepth >= kJitMaxCallDepth || t->frameCount >= S.options().maxCallDepth ||
           t->frameCount == t->frameCap || uint64_t(func) + 1 + p->maxStackSize + kExtraStack > t->stackSize ||
           *budget < 1 || heap.collectionRequested() || heap.config().stress != gc::StressMode::kNone);
}

// The frame of p at `func` (its `nargs` arguments after it) that compiled code runs from
// its start, as setupLuaFrameMayGC pushes it; charges the budget the start's poll would.
void pushCompiledFrame(ThreadData* t, const Proto* p, uint32_t func, uint32_t nargs, int32_t nresults, uint16_t flags,
                       int32_t* budget) {
  --*budget;
  Value* fn = t->stack + func;
  for (uint32_t j = nargs; j < p->numParams; j++) fn[1 + j] = Value::nil();
  t->top = func + 1 + (nargs < p->numParams ? p->numParams : nargs);
  CallFrame* f = pushFrame(t);
  f->func = func;
  f->base = func + 1;
  f->top = func + 1 + p->maxStackSize;
  f->pc = p->code;
  f->nresults = nresults;
  f->flags = flags;
  t->jitDepth++;
}

WeftJitEntry jitCallLua(void* state, void* thread, int32_t* budget, void* funcSlot, uint32_t nargs, int32_t nresults,
                        uint32_t callerPc) {
  auto& S = *static_cast<State*>(state);
  auto* t = static_cast<ThreadData*>(thread);
  Value* fn = static_cast<Value*>(funcSlot);
  if (!fn->isLuaClosure()) return nullptr;
  Proto* p = fn->asLuaClosure()->proto;
  bool never;
  JitCode* code = calleeCode(S, fn->asLuaClosure(), never);
  if (!code) return never ? kWeftJitCallNever : nullptr;
  uint32_t func = uint32_t(fn - t->stack);
  if (!compiledCallFits(S, t, p, func, budget)) return nullptr;
  CallFrame& caller = t->frame();
  caller.pc = t->stack[caller.func].asLuaClosure()->proto->code + callerPc + 1;
  pushCompiledFrame(t, p, func, nargs, nresults, kFrameLua, budget);
  return code->callEntry;
}

// OP_MMBIN's call of a Lua metamethod (callMetaLoopMayGC's) for compiled code that
// enters the metamethod's code itself (docs/design/jit.md, "Metamethod arithmetic"):
// the arithmetic instruction at callerPc, its MMBIN after it. Anything else the
// instruction may need (numbers or strings, which never call; a native, callable or
// missing metamethod; one without code; a C stack too deep), or that jitCallLua
// refuses, returns null first, and the interpreter runs the instruction.
WeftJitEntry jitArithMeta(void* state, void* thread, int32_t* budget, uint32_t callerPc, void** calleeBase) {
  auto& S = *static_cast<State*>(state);
  auto* t = static_cast<ThreadData*>(thread);
  CallFrame& caller = t->frame();
  const Proto* cp = t->stack[caller.func].asLuaClosure()->proto;
  Value x, y;
  Value tm = arithMetamethod(S, cp, callerPc, t->stack + caller.base, x, y);
  if (!tm.isLuaClosure()) return nullptr;
  bool never;
  JitCode* code = calleeCode(S, tm.asLuaClosure(), never);
  if (!code) return nullptr;
  const Proto* p = tm.asLuaClosure()->proto;
  uint32_t func = scratchTop(t);
  // Lua counts metamethod calls as C calls (callMetaLoopMayGC).
  if (t->nativeDepth + t->cDepth >= S.options().maxNativeDepth || !compiledCallFits(S, t, p, func, budget))
    return nullptr;
  caller.pc = cp->code + callerPc + 2;
  Value* s = t->stack;
  s[func] = tm;
  s[func + 1] = x;
  s[func + 2] = y;
  pushCompiledFrame(t, p, func, 2, 1, kFrameLua | kFrameFinishOp, budget);
  t->cDepth++;
  *calleeBase = s + func + 1;
  return code->callEntry;
}

// doReturn for a frame that returns to a Lua caller, with no return hook (a metamethod's
// frame only into the arithmetic instruction that called it, which it finishes): the
// rest is the interpreter's.
int jitReturnLua(void*, void* thread, void* first, uint32_t n) {
  auto* t = static_cast<ThreadData*>(thread);
  CallFrame& f = t->frame();
  if ((t->hookMask & kHookMaskReturn) || (f.flags & kFrameEntry) || t->frameCount < 2 ||
      !(t->frames[t->frameCount - 2].flags & kFrameLua))
    return 0;
  bool finish = f.flags & kFrameFinishOp;
  if (finish && !finishesArith(t->frames[t->frameCount - 2])) return 0;
  Value* src = static_cast<Value*>(first);
  uint32_t from = uint32_t(src - t->stack), dest = f.func - f.varargDelta;
  Value* dst = src - (from - dest);
  uint32_t wanted = f.nresults < 0 ? n : uint32_t(f.nresults);
  for (uint32_t j = 0; j < wanted; j++) dst[j] = j < n ? src[j] : Value::nil();
  t->top = dest + wanted;
  t->frameCount--;
  if (t->jitDepth) t->jitDepth--;
  if (finish) {  // doReturn's kFrameFinishOp case for an arithmetic metamethod
    const CallFrame& caller = t->frame();
    t->stack[caller.base + getA(caller.pc[-2])] = wanted ? dst[0] : Value::nil();
    t->top = caller.top;  // as finishOpMayGC leaves it
    t->cDepth--;
  }
  return 1;
}

// OP_LEN's fast paths.
int jitLen(void*, void* dst, const void* obj) {
  const Value* o = static_cast<const Value*>(obj);
  int64_t n;
  if (o->isString()) {
    n = int64_t(o->asString()->length);
  } else if (o->isTable() && lacksMeta(o->asTable(), Meta::Len)) {
    n = int64_t(tableLength(o->asTable()));
  } else {
    return 0;
  }
  setValue(static_cast<Value*>(dst), Value::integer(n));
  return 1;
}

// OP_TFORCALL of next (baseNext) without the call: its errors are the interpreter's.
int jitNext(void*, void* ra) {
  Value* r = static_cast<Value*>(ra);
  if (!r[1].isTable()) return 0;
  Value key = r[2], value;
  bool found = false;
  if (!tableNext(r[1].asTable(), key, value, found).isOk()) return 0;
  setValue(&r[4], found ? key : Value::nil());
  if (found) setValue(&r[5], value);
  return 1;
}

// OP_SELF's fast paths.
int jitSelf(void* state, void* ra, const void* obj, const void* key) {
  auto& S = *static_cast<State*>(state);
  Value* r = static_cast<Value*>(ra);
  Value o = *static_cast<const Value*>(obj);
  const Value* k = static_cast<const Value*>(key);
  if (!k->isString()) return 0;
  const Value* v = o.isTable() ? fieldFast(S, o.asTable(), k->asString()) : methodFast(S, o, k->asString());
  if (!v) return 0;
  setValue(&r[1], o);
  setValue(&r[0], loadSlotChecked(*v));
  return 1;
}

// OP_SETUPVAL.
void jitSetUpval(void* thread, const void* funcSlot, uint32_t index, const void* value) {
  const LuaClosure* cl = static_cast<const Value*>(funcSlot)->asLuaClosure();
  storeUpvalue(static_cast<const ThreadData*>(thread), cl->upvalues[index], *static_cast<const Value*>(value));
}

// OP_CLOSE where it would do nothing.
int jitCloses(void* thread, const void* level) {
  auto* t = static_cast<ThreadData*>(thread);
  uint32_t from = uint32_t(static_cast<const Value*>(level) - t->stack);
  bool upvalues = t->openUpvalues && t->openUpvalues->index >= from;
  bool tbc = t->hasTbcFrom(from);
  return upvalues || tbc ? 0 : 1;
}

// OP_NEWTABLE: allocation never collects, so neither does this.
int jitNewTable(void* state, void* dst, uint32_t arraySize, uint32_t hashSize) {
  Table* h = newTable(*static_cast<State*>(state), arraySize, hashSize);
  if (!h) return 0;
  setValue(static_cast<Value*>(dst), Value::table(h));
  return 1;
}

// OP_SETLIST of a fixed count (setListMayGC's checks, without raising). A failure may
// leave some values stored: the interpreter stores them all again.
int jitSetList(void* state, void* ra, uint32_t n, uint32_t last) {
  Value* r = static_cast<Value*>(ra);
  if (!r->isTable()) return 0;
  return tableSetList(*static_cast<State*>(state), r->asTable(), int64_t(last), r + 1, n).isOk() ? 1 : 0;
}

// A native that compiled code called at callerPc of frame `callerIndex` yielded (a
// channel's send or receive, coroutine.yield): the run of compiled code ends there, and
// entering code to yield a few instructions later costs more than it runs (ping-pong:
// 10% slower than interpreted). Counted as a guard exit of the call: at the limit the
// next version leaves that call to the interpreter (docs/design/jit.md, "Native calls").
// Never collects.
void jitNativeYielded(State& S, ThreadData* t, uint32_t callerIndex, uint32_t callerPc) {
  const CallFrame& f = t->frames[callerIndex];
  const LuaClosure* cl = t->stack[f.func].asLuaClosure();
  if (JitCode* code = jitReady(cl->proto)) S.jit()->guardExit(cl, code, callerPc, t->stack + f.base);
}

// OP_CALL of a native from compiled code (docs/design/jit.md, "Native calls"): the call
// as op_CALL makes it, then the safepoint after it (startFrame's). Compiled code has
// written its frame back. It goes on only where nothing it holds can be stale: no
// collection ran (a collection needs this thread's acknowledgement, so its epoch tells),
// the stack did not move, no hook was set; else the frame resumes in the interpreter.
int jitCallNativeMayGC(void* state, void* thread, void* funcSlot, uint32_t nargs, int32_t nresults, uint32_t callerPc) {
  auto& S = *static_cast<State*>(state);
  auto* t = static_cast<ThreadData*>(thread);
  Value* fn = static_cast<Value*>(funcSlot);
  bool light = fn->tag == Tag::LightNative && fn->u.fn != basePcall && fn->u.fn != baseXpcall;
  if ((!light && fn->tag != Tag::NativeClosure) || t->hookMask) return kWeftJitNativeRefused;
  if (t->jitDepth > kJitMaxNativeCallDepth) return kWeftJitNativeDeep;
  uint32_t callerIndex = t->frameCount - 1;
  CallFrame& caller = t->frame();
  caller.pc = t->stack[caller.func].asLuaClosure()->proto->code + callerPc + 1;
  uint32_t func = uint32_t(fn - t->stack);
  t->top = func + 1 + nargs;
  const Value* stack = t->stack;
  uint8_t depth = t->jitDepth;  // Lua the native runs enters compiled code afresh
  uint64_t epoch = S.mutator().lastAckedEpoch();
  gc::Heap& heap = S.heap();
  Status st = light ? callNativeMayGC(S, t, func, nresults, 0) : callNonLuaMayGC(S, t, func, nresults, 0);
  t->jitDepth = depth;
  if (st.code() == StatusCode::kYield) [[unlikely]]
    jitNativeYielded(S, t, callerIndex, callerPc);
  bool stress = heap.config().stress != gc::StressMode::kNone;
  if (st.isOk() && ((--t->budget < 0) | heap.collectionRequested() | stress)) {
    st = loopSafepointMayGC(S, t, kLiveResumed);
  }
  if (!st.isOk()) return kWeftJitNativeStatus + int(st.code());
  bool same = t->stack == stack && S.mutator().lastAckedEpoch() == epoch && !t->hookMask;
  return same ? kWeftJitNativeDone : kWeftJitNativeResume;
}

// A compiled tail call's slow path: 1 when the Lua function at `funcSlot` will never
// have code to enter at its start (calleeCode).
int jitTailCallee(void* state, const void* funcSlot) {
  const Value* fn = static_cast<const Value*>(funcSlot);
  if (!fn->isLuaClosure()) return 0;
  bool never;
  calleeCode(*static_cast<State*>(state), fn->asLuaClosure(), never);
  return never ? 1 : 0;
}

// Around a compiled call in a frame that may be shared: what op_CALL's sharedInstruction
// does before it and sharedFrame after the return (its registers are written back).
void jitSyncShared(void* thread, const void* base) {
  auto* t = static_cast<ThreadData*>(thread);
  uint32_t level = uint32_t(static_cast<const Value*>(base) - t->stack);
  if (t->openTop > level) syncSharedFrame(t, level);
}

// OP_CONCAT's fast path (concatStrNums) into R[A]; 0 having changed nothing.
int jitConcat(void* state, void* thread, void* first, uint32_t count) {
  auto* t = static_cast<ThreadData*>(thread);
  return concatStrNums(*static_cast<State*>(state), t, uint32_t(static_cast<Value*>(first) - t->stack), count) ? 1 : 0;
}

}  // namespace

WeftJitHelpers jitHelpers() {
  return WeftJitHelpers{jitGetTable, jitGetInt,     jitSetTable,   jitSetInt,   jitGetTabUp,
                        jitCallLua,  jitReturnLua,  jitLen,        jitNext,     jitCloses,
                        jitSelf,     jitSetUpval,   jitNewTable,   jitSetList,  jitCallNativeMayGC,
                        jitConcat,   jitTailCallee, jitSyncShared, jitArithMeta};
}

void moveResults(ThreadData* t, uint32_t dest, uint32_t src, uint32_t n, int32_t wanted) {
  Value* s = t->stack;
  if (wanted < 0) {
    if (dest != src) for (uint32_t j = 0; j < n; j++) s[dest + j] = s[src + j];
    t->top = dest + n;
    return;
  }
  uint32_t w = uint32_t(wanted);
  uint32_t copy = n < w ? n : w;
  if (dest != src) for (uint32_t j = 0; j < copy; j++) s[dest + j] = s[src + j];
  for (uint32_t j = copy; j < w; j++) s[dest + j] = Value::nil();
  t->top = dest + w;
}

}  // namespace weft::vm
