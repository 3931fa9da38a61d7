// Thread objects: allocation, tracing, stack growth and open upvalues (vm/thread.h).
#include "vm/thread.h"

#include <cstring>

#include <mimalloc.h>

#include <algorithm>
#include <new>

namespace weft::vm {

namespace {

// A suspended task or coroutine is mostly its stack and frames, so they start small (a
// function of a few registers waiting in a native fits) and double when a call needs more.
// A thread made without a size (a coroutine, the main thread) gets room for what C code
// may push on it unchecked (kMinCStack above slot 0); a task asks for its function's
// frame (newThread's minStackSlots).
constexpr uint32_t kInitialStack = kMinCStack + 1;
constexpr uint32_t kInitialFrames = 2;

// A stack of at least `slots`, rounded up to fill mimalloc's size class (which would
// otherwise hold the difference unused).
uint32_t stackSlotsFor(uint32_t slots) {
  return uint32_t(mi_good_size(sizeof(Value) * slots) / sizeof(Value));
}

// Larger buffers are not kept for reuse: a deep recursion's stack goes back to the heap.
constexpr uint32_t kRecycledStackLimit = 1024;
constexpr uint32_t kRecycledFrameLimit = 64;

size_t threadSizeOf(const gc::Object*) { return sizeof(Thread); }

// Old stack buffers are kept until a collection: during one no mutator runs, so nobody
// holds a pointer into them. The list is linked through each buffer's first slot.
void freeRetiredStacks(ThreadData* t) {
  while (Value* old = t->retiredStacks) {
    t->retiredStacks = *reinterpret_cast<Value**>(old);
    mi_free(old);
  }
}

void freeThreadData(ThreadData* t) {
  freeRetiredStacks(t);
  delete t->rare;
  mi_free(t->stack);
  mi_free(t->frames);
  t->~ThreadData();
  mi_free(t);
}

// Every field back to a new thread's but the buffers (stack, frames), which the next
// thread reuses. `incarnation`, `shells` and `ownerReleased` describe the Thread
// objects pointing here and carry over.
// ThreadData holds an atomic, so this goes field by field; the size check makes a new
// field fail the build until it is reset here too.
void resetThreadData(ThreadData& t, State& state) {
  static_assert(sizeof(ThreadData) == 192, "a ThreadData field was added: reset it here");
  t.self = nullptr;
  t.state = &state;
  t.top = 0;
  t.frameCount = 0;
  t.openUpvalues = nullptr;
  t.openTop = 0;
  t.cellWrites = 0;
  t.seenCellWrites = 0;
  t.syncCountdown = 0;
  t.error = Value::nil();
  t.errFunc = 0;
  t.nny = 0;
  t.nativeDepth = 0;
  t.cDepth = 0;
  t.resumeCount = 0;
  t.status.store(ThreadStatus::Suspended, std::memory_order_relaxed);
  t.isMain = false;
  t.budget = kUnlimitedBudget;
  t.taskRoot = false;
  t.preempted = false;
  t.task = nullptr;
  t.resumeStatus = StatusCode::kOk;
  t.resumer = nullptr;
  t.suspendedChild = nullptr;
  t.taskSuspending = false;
  // No hook carries over, and the next task seeds its own generator.
  if (t.rare) {
    state.mutator().noteExternalBytes(-static_cast<int64_t>(sizeof(uint32_t) * t.rare->tbcCap));
    delete t.rare;
    t.rare = nullptr;
  }
  t.inErrorHandler = false;
  t.jitDepth = 0;
  t.hookMask = 0;
  t.runningFinalizers = false;
  t.failed = false;
  t.escaped = false;
}

// What a thread owns off the heap, as noted to its mutator (gc::Mutator::noteExternalBytes).
// Retired stacks are short-lived (freed at the next collection) and not counted.
size_t ownedBytes(const ThreadData* t) {
  return sizeof(ThreadData) + sizeof(Value) * t->stackSize + sizeof(CallFrame) * t->frameCap +
         (t->rare ? sizeof(uint32_t) * t->rare->tbcCap : 0);
}

static_assert(offsetof(ThreadData, escaped) < 64, "traceThread's fields share the first cache line");
static_assert(offsetof(ThreadData, retiredStacks) / 64 == offsetof(ThreadData, error) / 64,
              "traceThread's other fields share the line prefetchThread fetches for error");

// Stage 0: the data's first line (and the line holding error); stage 1, once
// that has arrived: the stack's first line and the top frame.
void prefetchThread(const gc::Object* obj, int stage) {
  auto* th = reinterpret_cast<const Thread*>(obj);
  const ThreadData* t = th->data;
  if (!t) return;
  if (stage == 0) {
    __builtin_prefetch(t);
    __builtin_prefetch(&t->error);
    return;
  }
  if (t->incarnation != th->incarnation) return;
  __builtin_prefetch(t->stack);
  if (t->frameCount) __builtin_prefetch(&t->frames[t->frameCount - 1]);
}

// Visits an object field through a gc::Object* copy, not a punned reference to the field.
template <typename T>
void visitField(gc::Visitor& v, T*& field) {
  gc::Object* o = reinterpret_cast<gc::Object*>(field);
  v.visit(o);
  field = reinterpret_cast<T*>(o);
}

void traceThread(gc::Object* obj, gc::Visitor& v) {
  auto* th = reinterpret_cast<Thread*>(obj);
  ThreadData* t = th->data;
  if (!t || t->incarnation != th->incarnation) return;  // an empty shell (ThreadPool)
  freeRetiredStacks(t);
  visitField(v, t->self);
  uint32_t live = std::min(t->liveTop(), t->stackSize);
  for (uint32_t i = 0; i < live; i++) {
    if (t->stack[i].isCollectable()) v.visit(referenceSlot(t->stack[i]));
  }
  // Slots above the live part may hold references a collection did not update; clear
  // them so no later collection visits a stale one (thread.h invariant 2).
  for (uint32_t i = live; i < t->stackSize; i++) t->stack[i] = Value::nil();
  if (t->openUpvalues) visitField(v, t->openUpvalues);
  if (t->error.isCollectable()) v.visit(referenceSlot(t->error));
  if (t->rare && t->rare->hook.isCollectable()) v.visit(referenceSlot(t->rare->hook));
}

// The owner's release returns the data's bytes; the data itself goes with the last
// Thread object pointing to it (a shell of an earlier incarnation may outlive the owner,
// and reads the data until its own release).
size_t releaseThread(gc::Object* obj) {
  auto* th = reinterpret_cast<Thread*>(obj);
  ThreadData* t = std::exchange(th->data, nullptr);
  if (!t) return 0;
  bool owner = t->incarnation == th->incarnation;
  size_t owned = owner ? ownedBytes(t) : 0;
  if (owner) t->ownerReleased = true;
  if (--t->shells == 0 && t->ownerReleased) freeThreadData(t);
  return owned;
}

}  // namespace

// A call's function slot is always above the caller's live registers, so only the top
// frame's extent matters: a Lua frame's registers reach its top, a native's values the
// thread top. Stale values in dead registers below are then not kept alive for long.
uint32_t ThreadData::liveTop() const {
  if (frameCount == 0) return top;
  const CallFrame& f = frames[frameCount - 1];
  if ((f.flags & kFrameLua) && f.top > top) return f.top;
  return top;
}

void registerThreadKind(gc::Heap& heap) {
  gc::TypeInfo info;
  info.name = "thread";
  info.sizeOf = threadSizeOf;
  info.trace = traceThread;
  info.prefetch = prefetchThread;
  info.release = releaseThread;
  heap.registerType(uint8_t(Kind::Thread), info);
}

namespace {

// A block for a ThreadData, aligned for it. mimalloc's blocks of a size that is a
// multiple of 16 are 16-byte aligned (a page starts aligned to its block size), whereas
// its mi_malloc_aligned takes a block of the next size class up whenever the page in
// hand has no free block ready (2.0's aligned fast path falls back to over-allocating):
// 224 bytes instead of 192 for every task. Checked, with the aligned call as the
// fallback.
void* allocateThreadBlock() {
  static_assert(sizeof(ThreadData) % alignof(ThreadData) == 0);
  void* block = mi_malloc(sizeof(ThreadData));
  if (block && reinterpret_cast<uintptr_t>(block) % alignof(ThreadData) != 0) {
    mi_free(block);
    block = mi_malloc_aligned(sizeof(ThreadData), alignof(ThreadData));
  }
  return block;
}

ThreadData* allocateThreadData(State& state, uint32_t stackSlots) {
  void* block = allocateThreadBlock();
  if (!block) return nullptr;
  auto* data = new (block) ThreadData();
  // A new thread's extra space starts as a copy of the main thread's, as
  // lua_newthread's does (thread.h, kThreadExtraSpace).
  if (state.mainThread) std::memcpy(data->extraSpace, state.mainThread->data->extraSpace, kThreadExtraSpace);
  data->state = &state;
  data->stack = static_cast<Value*>(mi_malloc(sizeof(Value) * stackSlots));
  data->frames = static_cast<CallFrame*>(mi_malloc(sizeof(CallFrame) * kInitialFrames));
  if (!data->stack || !data->frames) {
    freeThreadData(data);
    return nullptr;
  }
  data->stackSize = stackSlots;
  data->frameCap = kInitialFrames;
  for (uint32_t i = 0; i < stackSlots; i++) data->stack[i] = Value::nil();
  state.mutator().noteExternalBytes(static_cast<int64_t>(ownedBytes(data)));
  return data;
}

}  // namespace

Thread* newThread(State& state, uint32_t minStackSlots) {
  uint32_t slots = minStackSlots ? minStackSlots : kInitialStack;
  if (slots > kMaxStackSlots) return nullptr;
  ThreadData* data = state.threadPool().take(state.context());
  // A recycled stack smaller than asked for grows here, before anything is on it.
  if (data && !ensureStackSlots(data, slots)) {
    state.threadPool().give(state.context(), data);
    return nullptr;
  }
  if (!data) data = allocateThreadData(state, stackSlotsFor(slots));
  if (!data) return nullptr;
  auto* th = reinterpret_cast<Thread*>(state.mutator().allocate(uint8_t(Kind::Thread), sizeof(Thread)));
  if (!th) {
    state.threadPool().give(state.context(), data);
    return nullptr;
  }
  th->data = data;
  th->incarnation = data->incarnation;
  ++data->shells;
  data->self = th;
  state.mutator().registerExternal(asGc(th));
  return th;
}

ThreadPool::~ThreadPool() {
  for (ThreadData* t : free_) freeThreadData(t);
}

ThreadData* ThreadPool::take(ExecContext& ctx) {
  ThreadCache& c = ctx.threads;
  if (c.count == 0) {
    std::lock_guard lock(mutex_);
    while (c.count < kBatch && !free_.empty()) {
      c.slots[c.count++] = free_.back();
      free_.pop_back();
    }
    size_.store(free_.size(), std::memory_order_relaxed);
  }
  return c.count ? c.slots[--c.count] : nullptr;
}

void ThreadPool::give(ExecContext& ctx, ThreadData* t) {
  ThreadCache& c = ctx.threads;
  if (c.count == ThreadCache::kSize) {
    std::lock_guard lock(mutex_);
    while (c.count > ThreadCache::kSize - kBatch) free_.push_back(c.slots[--c.count]);
    size_.store(free_.size(), std::memory_order_relaxed);
  }
  c.slots[c.count++] = t;
}

void ThreadPool::flush(ExecContext& ctx) {
  ThreadCache& c = ctx.threads;
  if (c.count == 0) return;
  std::lock_guard lock(mutex_);
  while (c.count) free_.push_back(c.slots[--c.count]);
  size_.store(free_.size(), std::memory_order_relaxed);
}

bool ThreadPool::full() const { return size_.load(std::memory_order_relaxed) >= kCapacity; }

bool recycleTaskThread(State& state, ThreadData* t) {
  if (t->escaped || t->frameCount != 0 || t->openUpvalues || t->tbcCount() != 0) return false;
  if (t->stackSize > kRecycledStackLimit || t->frameCap > kRecycledFrameLimit) return false;
  if (state.threadPool().full()) return false;
  // The stack all nil again, so no stale reference survives into the next owner's frames.
  for (uint32_t i = 0; i < t->stackSize; i++) t->stack[i] = Value::nil();
  resetThreadData(*t, state);
  ++t->incarnation;
  state.threadPool().give(state.context(), t);
  return true;
}

ThreadData* threadData(const Value& v) { return v.asThread()->data; }

ThreadRare* makeThreadRare(ThreadData* t) {
  if (!t->rare) t->rare = new (std::nothrow) ThreadRare();
  return t->rare;
}

ThreadRare::~ThreadRare() { mi_free(tbc); }

bool ThreadData::pushTbc(uint32_t slot) {
  ThreadRare* r = makeThreadRare(this);
  if (!r) return false;
  if (r->tbcCount == r->tbcCap) {
    uint32_t cap = r->tbcCap ? r->tbcCap * 2 : 8;
    auto* grown = static_cast<uint32_t*>(mi_realloc(r->tbc, sizeof(uint32_t) * cap));
    if (!grown) return false;
    r->tbc = grown;
    state->mutator().noteExternalBytes(static_cast<int64_t>(sizeof(uint32_t) * (cap - r->tbcCap)));
    r->tbcCap = cap;
  }
  r->tbc[r->tbcCount++] = slot;
  return true;
}

bool ensureStackSlots(ThreadData* t, uint64_t needed) {
  if (needed <= t->stackSize) return true;
  // A message handler running for a stack overflow gets some headroom.
  uint64_t limit = kMaxStackSlots + (t->inErrorHandler ? 2000 : 0);
  if (needed > limit) return false;
  uint64_t size = t->stackSize;
  while (size < needed) size *= 2;
  if (size > limit) size = limit;
  auto* grown = static_cast<Value*>(mi_malloc(sizeof(Value) * size));
  if (!grown) return false;
  // Only this thread reads its stack (no upvalue reaches into it), so a plain copy.
  for (uint32_t i = 0; i < t->stackSize; i++) grown[i] = t->stack[i];
  for (uint64_t i = t->stackSize; i < size; i++) grown[i] = Value::nil();
  *reinterpret_cast<Value**>(t->stack) = t->retiredStacks;
  t->retiredStacks = t->stack;
  t->stack = grown;
  t->state->mutator().noteExternalBytes(static_cast<int64_t>(sizeof(Value) * (size - t->stackSize)));
  t->stackSize = uint32_t(size);
  return true;
}

CallFrame* pushFrameSlow(ThreadData* t) {
  {
    uint32_t cap = t->frameCap * 2;
    auto* grown = static_cast<CallFrame*>(mi_realloc(t->frames, sizeof(CallFrame) * cap));
    if (!grown) return nullptr;
    t->frames = grown;
    t->state->mutator().noteExternalBytes(static_cast<int64_t>(sizeof(CallFrame) * (cap - t->frameCap)));
    t->frameCap = cap;
  }
  CallFrame* f = &t->frames[t->frameCount++];
  f->errStatus = 0;
  f->varargDelta = 0;
  f->extra = 0;
  return f;
}

Upvalue* findUpvalue(State& state, ThreadData* t, uint32_t index) {
  Upvalue* prev = nullptr;
  Upvalue* cur = t->openUpvalues;
  while (cur && cur->index >= index) {
    if (cur->index == index) return cur;
    prev = cur;
    cur = cur->nextOpen;
  }
  auto* uv = reinterpret_cast<Upvalue*>(state.mutator().allocate(uint8_t(Kind::Upvalue), sizeof(Upvalue)));
  if (!uv) return nullptr;
  uv->thread = t->self;
  uv->index = index;
  uv->nextOpen = cur;
  // Register, cell and shadow agree; the closure that publishes the cell does not exist yet.
  storeValue(uv, uv->cell, t->stack[index]);
  storeValue(uv, uv->shadow, t->stack[index]);
  // The list head is off-heap (traced with the thread); a nextOpen field is a heap store.
  if (prev) {
    storeRef(prev, prev->nextOpen, uv);
  } else {
    t->openUpvalues = uv;
    t->openTop = index + 1;
  }
  return uv;
}

namespace {

// syncOpenUpvalues for one upvalue (thread.h). The cell is read whole: another task
// may be storing into it.
void reconcile(ThreadData* t, Upvalue* uv) {
  Value& reg = t->stack[uv->index];
  if (!reg.identical(uv->shadow)) {
    storeValue(uv, uv->cell, reg);
    storeValue(uv, uv->shadow, reg);
    return;
  }
  Value cell = loadSlot(uv->cell);
  if (!cell.identical(uv->shadow)) {
    reg = cell;
    storeValue(uv, uv->shadow, cell);
  }
}

}  // namespace

void syncOpenUpvalues(ThreadData* t, uint32_t level) {
  for (Upvalue* uv = t->openUpvalues; uv && uv->index >= level; uv = uv->nextOpen) reconcile(t, uv);
}

void syncOpenUpvalueAt(ThreadData* t, uint32_t index) {
  for (Upvalue* uv = t->openUpvalues; uv && uv->index >= index; uv = uv->nextOpen) {
    if (uv->index == index) reconcile(t, uv);
  }
}

void closeUpvalues(ThreadData* t, uint32_t level) {
  while (t->openUpvalues && t->openUpvalues->index >= level) {
    Upvalue* uv = t->openUpvalues;
    reconcile(t, uv);
    t->openUpvalues = uv->nextOpen;
    // Release pairs with storeUpvalue's acquire: a closure that sees the upvalue closed
    // no longer signals this thread.
    __atomic_store_n(&uv->thread, nullptr, __ATOMIC_RELEASE);
    uv->nextOpen = nullptr;
    uv->shadow = Value::nil();
  }
  t->openTop = t->openUpvalues ? t->openUpvalues->index + 1 : 0;
}

}  // namespace weft::vm
