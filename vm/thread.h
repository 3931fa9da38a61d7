// Threads of execution (Lua coroutines; later, tasks). A Thread is a small heap object
// that owns an off-heap ThreadData: the value stack, the call frames, the open-upvalue
// list, the to-be-closed list and the error slot. The interpreter works on ThreadData,
// whose address never changes, so a moving collection never invalidates it; the
// ThreadData's `self` field is updated by the Thread's trace function when the heap
// object moves. The frame layout is documented in docs/design/frames.md.
//
// Invariants:
//  1. No heap object points into a stack: open upvalues name (thread, slot index), and
//     CallFrames hold stack indices, never Value pointers.
//  2. The collector traces every stack slot below liveTop() (the top frame's extent:
//     a call's function slot is always above its caller's live registers) and clears
//     the slots above it, so a stale slot can never be visited by a later collection.
//     A loop safepoint may lower that extent to the registers in use while it polls
//     (vm/call.cpp loopSafepointMayGC, docs/design/gc-dead-slots.md).
//  3. A suspended thread is nothing but its heap object and its ThreadData: no C++ stack
//     belongs to it (resume re-enters the interpreter from the frames alone).
//  4. Open upvalues are sorted by descending stack index and there is at most one per
//     slot.
//  5. Continuations (docs/design/continuations.md): a native frame below the running code
//     has a continuation (CallFrame::k), set by callK/pcallK while its callee runs, and
//     nothing else of it survives a yield: its C++ activation is gone, so what it needs
//     afterwards is in its stack slots and its context (CallFrame::ctx). Only natives
//     whose calls are yieldable (k set, nny == 0) leave the C++ stack during a call; every
//     other native re-entry counts in nny and cannot be yielded across.
//  6. A catcher (a pcall marker, or a native in pcallK: kFramePcallK) that caught an
//     error keeps it in its callee's slot while it closes the protected call's
//     to-be-closed variables (kFrameErrClose); each __close runs as a call that may yield
//     and whose error replaces the pending one. Nothing above the catcher is left of the
//     failed call but those __close calls.
//  Invariants 5 and 6 are checked by tests/lua/lang_yield_across.lua and
//  task_yield_across.lua (plainly and under relocation stress).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "vm/object.h"
#include "vm/state.h"

namespace weft::vm {

enum class ThreadStatus : uint8_t { Suspended, Running, Normal, Dead };

// CallFrame::flags.
// Loop back-edges of a shared frame between two reconciliations when no cell changed
// (vm/interp.cpp syncSharedFrame; compiled code counts them with its poll's budget):
// how long another task may see a captured local lag behind a frame that writes it in
// a loop without calls. A power of two, for compiled code's mask.
inline constexpr uint32_t kSharedSyncInterval = 64;
static_assert((kSharedSyncInterval & (kSharedSyncInterval - 1)) == 0);

inline constexpr uint16_t kFrameLua = 1u << 0;        // a Lua function (pc is meaningful)
inline constexpr uint16_t kFrameEntry = 1u << 1;      // first frame of a loop invocation: its return leaves the loop
inline constexpr uint16_t kFrameProtected = 1u << 2;  // pcall/xpcall marker (no function of its own)
inline constexpr uint16_t kFrameXpcall = 1u << 3;     // marker of xpcall: the handler is at func+1
inline constexpr uint16_t kFrameFinishOp = 1u << 4;   // metamethod called by an opcode: finish it on return
inline constexpr uint16_t kFrameTail = 1u << 5;       // entered by a tail call
inline constexpr uint16_t kFrameHook = 1u << 6;       // running a debug hook
inline constexpr uint16_t kFrameFinalizer = 1u << 7;  // running a __gc finalizer
inline constexpr uint16_t kFrameClose = 1u << 8;      // running a __close metamethod
inline constexpr uint16_t kFramePcallK = 1u << 9;     // native in pcallK: catches errors of the frames above (invariant 6)
inline constexpr uint16_t kFrameErrClose = 1u << 10;  // catcher closing variables for a caught error (invariant 6)

// ThreadData::hookMask bits (debug.sethook's "c", "r", "l" and a count).
inline constexpr uint8_t kHookMaskCall = 1;
inline constexpr uint8_t kHookMaskReturn = 2;
inline constexpr uint8_t kHookMaskLine = 4;
inline constexpr uint8_t kHookMaskCount = 8;

inline constexpr int32_t kUnlimitedBudget = INT32_MAX;
inline constexpr int32_t kBudgetRecheck = 1024;

class CallContext;
struct NativeResult;
// A native frame's continuation (invariant 5; vm/api.h, CallContext::callK): run in
// place of the rest of the native when its callee returns after a yield (status kYield),
// when it yielded with one (kYield), or when its pcallK caught an error (the error's
// code); it ends the native as the native would have.
using NativeK = NativeResult (*)(CallContext& cx, StatusCode status, intptr_t ctx);

// One activation record. Everything is a stack index or an off-heap pointer, so the
// frame array needs no tracing of its own (the stack slots it names are traced).
struct CallFrame {
  union {
    const Instruction* pc;  // Lua: next instruction; saved before anything that may GC or raise
    NativeK k;              // native: its pending continuation (invariant 5), or nullptr
  };
  uint32_t func;          // stack index of the called function (protected marker: of pcall itself)
  uint32_t base;          // Lua: stack index of register 0; native: first argument
  uint32_t top;           // Lua: base + maxStackSize; native: top when it was called
  int32_t nresults;       // results the caller wants; -1 for all of them
  uint16_t flags;         // kFrame*
  uint16_t errStatus;     // kFrameErrClose: the StatusCode of the error being closed for
  union {
    uint32_t varargDelta;  // Lua vararg function: slots between the original func and func
    uint32_t calleeSlot;   // native in pcallK: its callee's slot (where an error goes)
  };
  uint32_t extra;         // protected marker, native in pcallK: errFunc to restore;
                          // finish-op CONCAT: pending count; finish-op RETURN: result count
  intptr_t ctx;           // native: its continuation's context
};

// What a thread needs only once a debug hook is set on it, once it has a to-be-closed
// variable, or (at the root of a chain: the main thread, a task's own) once math.random
// is called: made then (makeThreadRare), freed with the data or when it is recycled.
// Kept out of ThreadData, whose size is part of a suspended task's memory
// (docs/design/tasks.md). A thread whose hookMask is not 0, or with a to-be-closed
// variable, has one.
struct ThreadRare {
  ThreadRare() = default;
  ~ThreadRare();  // frees tbc
  ThreadRare(const ThreadRare&) = delete;
  ThreadRare& operator=(const ThreadRare&) = delete;
  Value hook = Value::nil();  // debug.sethook's function (traced with the thread)
  int32_t hookCount = 0;
  int32_t hookCounter = 0;
  uint32_t hookOldPc = 0;     // instruction index of the last line-hook check (Lua's oldpc)
  // While a hook runs (inHook), the values the hooked frame (the one below the
  // kFrameHook frame) transfers, as debug.getinfo's "r" reports them: local indices
  // hookFtransfer to hookFtransfer + hookNtransfer - 1 (a call's parameters or
  // arguments, a return's results; none for other events).
  uint16_t hookFtransfer = 0;
  uint16_t hookNtransfer = 0;
  bool inHook = false;  // running a debug hook (debug.sethook)
  // A C hook may yield from a count or line event (lua_yield with no values, as in Lua):
  // hookYieldable says whether the running hook may (set before each hook call);
  // lua_yield sets hookYieldRequested and returns, the hook returns, and the instruction
  // the hook preceded yields (traceMayGC: its pc steps back, hookYielded set). The resume
  // drops its values and sets hookSkipOnce, so that instruction runs without the hook.
  bool hookYieldable = false;
  bool hookYieldRequested = false;
  bool hookYielded = false;
  bool hookSkipOnce = false;
  bool randomSeeded = false;
  // math.random's generator (lib/math.cpp), seeded by its first call.
  uint64_t random[4] = {};
  // Stack indices of the to-be-closed variables, ascending (ThreadData::pushTbc).
  uint32_t* tbc = nullptr;
  uint32_t tbcCount = 0;
  uint32_t tbcCap = 0;
};

// Bytes of raw memory at the start of every ThreadData, the host's to use: the C API's
// lua_getextraspace (LUA_EXTRASPACE of them) is a macro that reads the bytes before a
// lua_State, which is the address just past them (runtime/capi/capi.h, luaStateOf). A
// new thread's start as a copy of the main thread's.
inline constexpr size_t kThreadExtraSpace = 8;

struct ThreadData {
  // Fields are grouped by size, the small ones filling the gaps the larger ones leave,
  // so that a ThreadData takes a 192-byte block (a suspended task's memory;
  // bench/tasks/blocked.lua); the size check in thread.cpp guards it.
  // The first cache line holds what the collector reads to trace a thread (thread.cpp:
  // traceThread, prefetchThread), so tracing a suspended task costs it one line here,
  // and the second the rest of it (retiredStacks, error).
  unsigned char extraSpace[kThreadExtraSpace] = {};  // the C API's (kThreadExtraSpace)
  Thread* self = nullptr;  // the heap object (traced: updated when it moves)
  Value* stack = nullptr;  // mi_malloc'd, stackSize slots, replaced to grow
  uint32_t stackSize = 0;
  uint32_t top = 0;        // first free slot of the running native / multiple results end

  CallFrame* frames = nullptr;  // mi_malloc'd, frameCap entries
  uint32_t frameCap = 0;
  uint32_t frameCount = 0;

  Upvalue* openUpvalues = nullptr;  // descending index (traced)
  // Recycling (ThreadPool): a Thread object owns this data only while their incarnations
  // match; `escaped` once a script could hold the thread (coroutine.running), which
  // rules recycling out.
  uint32_t incarnation = 0;
  bool escaped = false;
  // Thread objects pointing here that were not released yet (`shells`: the owner and
  // the shells of earlier incarnations), and whether the owner was: the last release
  // frees this data once the owner is gone, whatever order the heap releases them in.
  bool ownerReleased = false;
  bool failed = false;          // dead by an error (coroutine.close reports it)
  bool inErrorHandler = false;  // running a message handler: limits get some headroom

  State* state = nullptr;
  // 1 + the index of the highest open upvalue's register, 0 with none: a frame whose
  // base is below it runs with its open upvalues synchronised (syncOpenUpvalues).
  uint32_t openTop = 0;
  uint32_t shells = 0;  // see ownerReleased
  uint32_t syncCountdown = 0;  // see seenCellWrites, kSharedSyncInterval
  uint32_t errFunc = 0;        // stack index of the active message handler, 0 for none
  // Bumped after every store into the cell of this thread's open upvalues, by any
  // task (atomic); the interpreter pulls cells into registers when it changes.
  uint64_t cellWrites = 0;
  // The interpreter's view of the running frame while it is shared (interp.cpp,
  // syncSharedFrame; set again whenever a frame is entered): the cellWrites count its
  // registers caught up with, and the loop back-edges left before the next periodic
  // reconciliation.
  uint64_t seenCellWrites = 0;
  Value* retiredStacks = nullptr;  // replaced buffers, freed at the next collection (thread.cpp)

  Value error = Value::nil();  // the current error object (traced)
  uint32_t nny = 0;            // native->Lua re-entries below the running code (not yieldable if > 0)
  uint32_t nativeDepth = 0;    // nested loop invocations (C++ stack use)
  uint32_t cDepth = 0;         // pcall markers and Lua metamethod frames on the stack (Lua counts them as C calls)
  uint32_t resumeCount = 0;    // values passed by the resume that continues a yielded native
  // Scheduler support (runtime/executor.cpp). `budget` counts down at the interpreter's
  // safepoints; below zero the safepoint's slow path either preempts a task's root
  // thread (returns kYield with `preempted` set, when nothing native is below: nny == 0)
  // or refills it. A coroutine resumed inside a task takes over the budget and hands the
  // rest back.
  int32_t budget = kUnlimitedBudget;
  bool isMain = false;
  bool taskRoot = false;  // the bottom thread of a task (not the main thread)
  bool preempted = false;
  bool taskSuspending = false;  // see resumer
  void* task = nullptr;         // the runtime's task running on this thread (opaque to vm)
  // A task waiting inside coroutines suspends the whole chain (docs/design/tasks.md): the
  // thread whose native started the wait returns kYield with taskSuspending set; each
  // resumer's coroutine.resume (or wrap) records the child in suspendedChild, yields in
  // turn with a continuation for its own native frame (CallFrame::k), up to the task's root.
  // Resuming the root runs the continuations down the chain.
  ThreadData* resumer = nullptr;         // the thread that resumed this one, while it runs
  ThreadData* suspendedChild = nullptr;  // the coroutine this thread's resume is suspended in
  // Debug hooks, to-be-closed variables and math.random's generator, when the thread
  // has used them.
  ThreadRare* rare = nullptr;
  // Atomic: two tasks may try to resume the same coroutine at once; Suspended -> Running
  // is a compare-exchange (coroutine.cpp), so exactly one wins.
  std::atomic<ThreadStatus> status{ThreadStatus::Suspended};
  // Debug hooks (debug.sethook; their state is in `rare`): a single mask test on the
  // hot path.
  uint8_t hookMask = 0;  // kHookMask* bits
  // Resuming a thread suspended in a native: kOk delivers resumeCount values as the
  // native's results; an error status raises t->error (already through the message
  // handler) at the native's call instead.
  StatusCode resumeStatus = StatusCode::kOk;
  bool runningFinalizers = false;
  uint8_t jitDepth = 0;         // compiled calls nested in one entry into compiled code (vm/jit.h kJitMaxCallDepth)

  CallFrame& frame() { return frames[frameCount - 1]; }
  uint32_t liveTop() const;
  bool inHook() const { return rare && rare->inHook; }
  // To-be-closed variables (in `rare`): whether one lies at stack index `level` or
  // above; the innermost one's index (there is one); the innermost one taken off.
  bool hasTbcFrom(uint32_t level) const { return rare && rare->tbcCount && rare->tbc[rare->tbcCount - 1] >= level; }
  uint32_t innermostTbc() const { return rare->tbc[rare->tbcCount - 1]; }
  uint32_t popTbc() { return rare->tbc[--rare->tbcCount]; }
  uint32_t tbcCount() const { return rare ? rare->tbcCount : 0; }
  // Adds the variable at stack index `slot` (above every other); false when memory is
  // exhausted.
  bool pushTbc(uint32_t slot);
};

struct Thread {
  gc::ObjectHeader header;
  ThreadData* data;
  uint32_t incarnation;  // data->incarnation while this object owns `data`
};

// Finished task threads' ThreadData, kept for new threads so that a spawn reuses a warm
// stack instead of allocating one. A recycled ThreadData gets a new incarnation: the old
// Thread object (unreachable, since the thread never escaped) still points to it, and
// its trace and release then leave it alone; a racing store into a just-closed upvalue
// that still goes through that object bumps a live cellWrites, never freed memory. Pooled
// ThreadData are freed with the State, after the heap released every Thread object.
// A shell's trace and release read its old data's incarnation, so the data lives until
// every Thread object pointing to it was released (ThreadData::shells), in whatever
// order the heap releases them.
class ThreadPool {
 public:
  ThreadPool() = default;
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  // Through the calling thread's cache: the lock is taken once per kBatch takes or
  // gives at most, so two workers spawning and finishing tasks do not pass the pool's
  // lock and vector between them for every task.
  ThreadData* take(ExecContext& ctx);  // nullptr when empty
  void give(ExecContext& ctx, ThreadData* t);
  // The cache back into the pool (its thread unbinds, or the State ends).
  void flush(ExecContext& ctx);
  // A soft bound, checked before giving (relaxed: a few over it are harmless).
  bool full() const;

 private:
  static constexpr size_t kCapacity = 4096;
  static constexpr uint32_t kBatch = ThreadCache::kSize / 2;
  std::mutex mutex_;
  std::vector<ThreadData*> free_;   // mutex_
  std::atomic<size_t> size_{0};     // free_.size(), written under mutex_
};

// Hands the ThreadData of a finished task's root thread to the pool, if nothing can
// still use it: it never escaped, holds no frame, open upvalue or to-be-closed variable,
// and its buffers are of a reusable size. Its Thread object is then an empty shell.
bool recycleTaskThread(State& state, ThreadData* t);

// Stack and frame limits (State options give the defaults).
inline constexpr uint32_t kMaxStackSlots = 1000000;
// Free slots a native finds above its arguments when it is called. A built-in native's
// pushes are checked (CallContext::push grows the stack), so its reserve only spares it
// a growth for its first few values; a lua_CFunction pushes unchecked, as Lua allows up
// to LUA_MINSTACK values, so the C API's entry (capi/call.cpp) ensures kMinCStack. The
// reserve stays in the stack of a task suspended in a native (a channel receive), so
// it is a suspended task's memory: 8 slots, not 20, keep such a task's stack at 16
// slots (docs/design/tasks.md).
inline constexpr uint32_t kMinNativeStack = 8;
inline constexpr uint32_t kMinCStack = 20;        // LUA_MINSTACK
inline constexpr uint32_t kExtraStack = 5;        // headroom above a Lua frame for metamethod calls

ThreadData* threadData(const Value& v);
// t's rare part, made on first use; nullptr when memory is exhausted.
ThreadRare* makeThreadRare(ThreadData* t);

// The parked-stack rule (docs/design/gc-v2.md): a minor collection rescans a thread's
// stack only if its Thread object is remembered (its stack's dirty flag), so this is
// called whenever `t` becomes its worker's running thread, after a safepoint at which a
// collection may have cleaned it while it runs, and before writing into the stack (or
// the traced fields) of a thread that is not running.
inline void markStackDirty(ThreadData* t) {
  if (t->self) gc::writeBarrierBulk(asGc(t->self));
}

// `t` becomes the running thread of `ctx`: its stack is dirty, and its mutator's minors
// may keep what it holds young once (gc::Mutator::noteRunning).
inline void markRunning(ExecContext& ctx, ThreadData* t) {
  markStackDirty(t);
  if (ctx.mutator && t->self) ctx.mutator->noteRunning(asGc(t->self));
}

// Whether code running on `t` can suspend its task: every thread from `t` up its chain
// of resumers to the task's root runs at the bottom of its own loop (nothing native below).
inline bool taskChainSuspendable(const ThreadData* t) {
  for (const ThreadData* cur = t; cur; cur = cur->resumer) {
    if (cur->nny != 0) return false;
    if (cur->taskRoot) return true;
  }
  return false;
}

// Grows the stack so that `needed` slots are available (indices < needed). false when
// the limit would be exceeded or memory is exhausted (the caller raises "stack overflow").
bool ensureStackSlots(ThreadData* t, uint64_t needed);
// Pushes a frame, growing the frame array; nullptr if memory is exhausted.
CallFrame* pushFrameSlow(ThreadData* t);
inline CallFrame* pushFrame(ThreadData* t) {
  if (t->frameCount == t->frameCap) [[unlikely]] return pushFrameSlow(t);
  CallFrame* f = &t->frames[t->frameCount++];
  f->errStatus = 0;
  f->varargDelta = 0;
  f->extra = 0;
  return f;
}

// Open upvalue for stack slot `index` (existing or new); nullptr on exhaustion.
Upvalue* findUpvalue(State& state, ThreadData* t, uint32_t index);
// Closes every open upvalue at or above `level` (reconciles it, detaches).
void closeUpvalues(ThreadData* t, uint32_t level);

// Open upvalues (object.h, Upvalue). The register of an open upvalue is read and written
// only by its thread, field by field like any register; every closure uses the cell.
// Running on `t`, these bring the two together: a register that differs from the
// shadow was written by the frame, and goes to the cell; otherwise a cell that differs
// was written through a closure, and goes to the register. Both changed: the frame's
// write is the later one in this thread, and a closure's racing write is lost as a
// racing store may be. Reconciles every open upvalue whose register is at or above
// `level`.
void syncOpenUpvalues(ThreadData* t, uint32_t level);
// Reconciles the open upvalue of register `index`, if there is one (debug.getlocal and
// debug.setlocal reach registers of frames that are not running).
void syncOpenUpvalueAt(ThreadData* t, uint32_t index);

// Stores `v`, running on `t`, into an upvalue's variable: the cell, then (open) tells
// the owning thread that a cell changed. Another thread's count takes an atomic
// increment, release: a thread that sees the count change sees the value. Its own is
// bumped with a plain load and store: it may overwrite another task's increment, but
// the value it stores still differs from any count the owner has seen since, so the
// owner pulls every cell all the same.
inline void storeUpvalue(const ThreadData* t, Upvalue* uv, const Value& v) {
  storeValue(uv, uv->cell, v);
  Thread* owner = __atomic_load_n(&uv->thread, __ATOMIC_ACQUIRE);
  if (!owner) return;
  uint64_t* count = &owner->data->cellWrites;
  if (owner == t->self) {
    __atomic_store_n(count, __atomic_load_n(count, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
  } else {
    __atomic_fetch_add(count, 1, __ATOMIC_RELEASE);
  }
}

}  // namespace weft::vm

namespace weft::vm {
// Recomputes ThreadData::cDepth after frames were cut back (error unwinding).
inline void recountCDepth(ThreadData* t) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < t->frameCount; i++) {
    uint16_t fl = t->frames[i].flags;
    if ((fl & kFrameProtected) || ((fl & kFrameFinishOp) && (fl & kFrameLua))) n++;
  }
  t->cDepth = n;
}
}  // namespace weft::vm
