// Thread objects: allocation, tracing, stack growth and open upvalues (vm/thread.h).
#include "vm/thread.h"

#include <mimalloc.h>

#include <algorithm>
#include <new>

namespace weft::vm {

namespace {

// As Lua's BASIC_STACK_SIZE: a suspended task or coroutine is mostly its stack, so it starts
// small and doubles when a call needs more.
constexpr uint32_t kInitialStack = 40;
constexpr uint32_t kInitialFrames = 8;

size_t threadSizeOf(const gc::Object*) { return sizeof(Thread); }

// Old stack buffers are kept until a collection: a task on another worker may be reading
// one through an open upvalue of this thread (scheduler issue; DEVELOPERS.md invariant 6).
// During a collection no mutator runs, so nobody holds a pointer into them. The list is
// linked through each buffer's first slot (slot 0 holds a function, never a local, so
// no upvalue reads it).
void freeRetiredStacks(ThreadData* t) {
  while (Value* old = t->retiredStacks) {
    t->retiredStacks = *reinterpret_cast<Value**>(old);
    mi_free(old);
  }
}

void traceThread(gc::Object* obj, gc::Visitor& v) {
  auto* th = reinterpret_cast<Thread*>(obj);
  ThreadData* t = th->data;
  if (!t) return;
  freeRetiredStacks(t);
  v.visit(reinterpret_cast<gc::Object*&>(t->self));
  uint32_t live = std::min(t->liveTop(), t->stackSize);
  for (uint32_t i = 0; i < live; i++) {
    if (t->stack[i].isCollectable()) v.visit(referenceSlot(t->stack[i]));
  }
  // Slots above the live part may hold references a collection did not update; clear
  // them so no later collection visits a stale one (thread.h invariant 2).
  for (uint32_t i = live; i < t->stackSize; i++) t->stack[i] = Value::nil();
  if (t->openUpvalues) v.visit(reinterpret_cast<gc::Object*&>(t->openUpvalues));
  if (t->error.isCollectable()) v.visit(referenceSlot(t->error));
  if (t->hook.isCollectable()) v.visit(referenceSlot(t->hook));
}

void releaseThread(gc::Object* obj) {
  auto* th = reinterpret_cast<Thread*>(obj);
  ThreadData* t = th->data;
  if (!t) return;
  freeRetiredStacks(t);
  mi_free(t->stack);
  mi_free(t->frames);
  mi_free(t->tbc);
  delete t;
  th->data = nullptr;
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
  info.release = releaseThread;
  heap.registerType(uint8_t(Kind::Thread), info);
}

Thread* newThread(State& state) {
  auto* data = new (std::nothrow) ThreadData();
  if (!data) return nullptr;
  data->state = &state;
  data->stack = static_cast<Value*>(mi_malloc(sizeof(Value) * kInitialStack));
  data->frames = static_cast<CallFrame*>(mi_malloc(sizeof(CallFrame) * kInitialFrames));
  if (!data->stack || !data->frames) {
    mi_free(data->stack);
    mi_free(data->frames);
    delete data;
    return nullptr;
  }
  data->stackSize = kInitialStack;
  data->frameCap = kInitialFrames;
  for (uint32_t i = 0; i < kInitialStack; i++) data->stack[i] = Value::nil();
  auto* th = reinterpret_cast<Thread*>(state.mutator().allocate(uint8_t(Kind::Thread), sizeof(Thread)));
  if (!th) {
    mi_free(data->stack);
    mi_free(data->frames);
    delete data;
    return nullptr;
  }
  th->data = data;
  data->self = th;
  state.heap().registerExternal(asGc(th));
  return th;
}

ThreadData* threadData(const Value& v) { return v.asThread()->data; }

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
  // Slot by slot, whole: a task sharing an open upvalue of this thread may be storing
  // into its slot meanwhile (value.h invariant 4). Release publishes the copy to such
  // a task (upvalueIn's acquire).
  for (uint32_t i = 0; i < t->stackSize; i++) storeSlot(grown[i], loadSlot(t->stack[i]));
  for (uint64_t i = t->stackSize; i < size; i++) grown[i] = Value::nil();
  *reinterpret_cast<Value**>(t->stack) = t->retiredStacks;
  t->retiredStacks = t->stack;
  __atomic_store_n(&t->stack, grown, __ATOMIC_RELEASE);
  t->stackSize = uint32_t(size);
  return true;
}

CallFrame* pushFrameSlow(ThreadData* t) {
  {
    uint32_t cap = t->frameCap * 2;
    auto* grown = static_cast<CallFrame*>(mi_realloc(t->frames, sizeof(CallFrame) * cap));
    if (!grown) return nullptr;
    t->frames = grown;
    t->frameCap = cap;
  }
  CallFrame* f = &t->frames[t->frameCount++];
  f->pad = 0;
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
  uv->closed = Value::nil();
  uv->nextOpen = cur;
  // The list head is off-heap (traced with the thread); a nextOpen field is a heap store.
  if (prev) {
    storeRef(prev, prev->nextOpen, uv);
  } else {
    t->openUpvalues = uv;
  }
  return uv;
}

void closeUpvalues(ThreadData* t, uint32_t level) {
  while (t->openUpvalues && t->openUpvalues->index >= level) {
    Upvalue* uv = t->openUpvalues;
    t->openUpvalues = uv->nextOpen;
    // A task sharing the upvalue may be storing into the slot (storeSlot): read it
    // whole. Release pairs with upvalueIn's acquire: the value is in before `thread`
    // says closed.
    storeValue(uv, uv->closed, loadSlot(t->stack[uv->index]));
    __atomic_store_n(&uv->thread, nullptr, __ATOMIC_RELEASE);
    uv->nextOpen = nullptr;
  }
}

}  // namespace weft::vm
