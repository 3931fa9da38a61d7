// The `task` library (docs/tasks.md): spawning, awaiting and cancelling tasks, channels,
// select, sleeping, and the runtime's telemetry. Task handles and channels are userdata
// holding a reference to their C++ object, released by __gc.
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <thread>
#include <utility>

#include "runtime/port.h"
#include "runtime/runtime_impl.h"
#include "vm/debug.h"
#include "vm/interp.h"
#include "vm/meta.h"
#include "vm/proto.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::runtime {

using vm::CallContext;
using vm::NativeResult;
using vm::Value;

namespace {

struct TaskBox {
  LuaTask* task;
};
struct ChannelBox {
  Channel* ch;
};

RuntimeImpl& rtOf(CallContext& cx) { return *runtimeOf(cx.state()); }

// Every library function goes through this: a script or host may keep task.spawn, a
// handle or a channel and call it after the embedder destroyed the runtime, when
// there is no scheduler left to run anything.
template <vm::NativeFn F>
NativeResult live(CallContext& cx) {
  if (!runtimeOf(cx.state())) return cx.error("the task runtime has ended");
  return F(cx);
}

// Deterministic mode: the step waits at its gate for its commit (parallel steps). At an
// operation that may wait (`mayWait`: a suspension point), a cancellation reaches the
// task here, in decision order whatever ran ahead: the task gives up its step before the
// operation, and its next dispatch starts with the cancellation (RuntimeImpl::
// cancelAtStart: the request then predates its becoming ready). kOk: go on.
NativeResult gateOrderedMayGC(CallContext& cx, RuntimeImpl& rt, bool mayWait) {
  LuaTask* self = currentTask(rt, cx.threadData());
  if (self->isMain) return cx.noResults();
  if (Status st = rt.detGateMayGC(*self); !st.isOk()) return NativeResult{0, st.code()};
  if (!mayWait || !self->cancelRequested() || !canSuspend(cx.threadData())) return cx.noResults();
  self->suspend = LuaTask::Suspend::kYield;
  cx.threadData()->taskSuspending = true;
  return NativeResult{0, StatusCode::kYield};
}

// An operation whose order the scheduler decides in deterministic mode (a channel
// operation, spawn, await, select, sleep, yield, the clock): the step ends at the
// safepoint that follows it (runtime/sched/deterministic.h), where the chooser decides
// what runs next. `ordered` for operations that never wait, `orderedWait` for those that
// may (yield, sleep, select, await, send, receive).
template <vm::NativeFn F, bool kMayWait>
NativeResult orderedOp(CallContext& cx) {
  RuntimeImpl* rt = runtimeOf(cx.state());
  if (!rt) return cx.error("the task runtime has ended");
  if (rt->scheduler->deterministic()) {
    if (NativeResult g = gateOrderedMayGC(cx, *rt, kMayWait); g.status != StatusCode::kOk) return g;
  }
  NativeResult r = F(cx);
  if (r.status == StatusCode::kOk && rt->scheduler->deterministic()) {
    // The step's end is not a suspension point: a cancellation still waits for one.
    LuaTask* self = currentTask(*rt, cx.threadData());
    self->stepEnded = true;
    self->endStepAtOperation(cx.threadData()->budget);
    cx.threadData()->budget = 0;
  }
  return r;
}

template <vm::NativeFn F>
NativeResult ordered(CallContext& cx) {
  return orderedOp<F, false>(cx);
}

template <vm::NativeFn F>
NativeResult orderedWait(CallContext& cx) {
  return orderedOp<F, true>(cx);
}

// A handle or channel that died drops its reference (vm::newHostUserdata), on the
// collecting thread: the last one deletes the task or channel, which then leaves the
// registry (its lock is never held across a safepoint, so never during a collection).
// The record's memory is accounted to its handle (noted when the handle is made), as
// the handle's death is what lets it go.
size_t releaseTaskBox(vm::Userdata* u) {
  LuaTask* task = std::exchange(reinterpret_cast<TaskBox*>(u->data)->task, nullptr);
  if (!task) return 0;
  task->release();
  return sizeof(LuaTask);
}

size_t releaseChannelBox(vm::Userdata* u) {
  Channel* ch = std::exchange(reinterpret_cast<ChannelBox*>(u->data)->ch, nullptr);
  if (!ch) return 0;
  ch->release();
  return sizeof(Channel);
}

template <typename Box>
Box* boxOf(const Value& v, vm::Table* meta) {
  if (!v.isUserdata()) return nullptr;
  vm::Userdata* u = v.asUserdata();
  if (u->metatable != meta || u->size < sizeof(Box)) return nullptr;
  return reinterpret_cast<Box*>(u->data);
}

LuaTask* checkTask(CallContext& cx, uint32_t i) {
  auto* box = boxOf<TaskBox>(cx.arg(i), rtOf(cx).taskMeta);
  return box ? box->task : nullptr;
}

Channel* checkChannel(CallContext& cx, uint32_t i) {
  auto* box = boxOf<ChannelBox>(cx.arg(i), rtOf(cx).channelMeta);
  return box ? box->ch : nullptr;
}

NativeResult pushValues(CallContext& cx, std::initializer_list<Value> values) {
  if (!cx.ensureStack(uint32_t(values.size()))) return cx.stackOverflow();
  for (const Value& v : values) cx.push(v);
  return cx.results(int32_t(values.size()));
}

NativeResult pushString(CallContext& cx, const std::string& s) {
  vm::String* str = cx.newString(s);
  if (!str) return cx.memoryError();
  return pushValues(cx, {Value::string(str)});
}

// Optional timeout argument: < 0 when absent.
bool optTimeout(CallContext& cx, uint32_t i, double& out) {
  if (cx.arg(i).isNil()) {
    out = -1;
    return true;
  }
  if (!cx.checkNumber(i, out)) return false;
  if (out < 0) out = 0;
  return true;
}

std::string channelName(Channel* ch) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "channel %p", static_cast<void*>(ch));
  return buf;
}

// --- spawning -------------------------------------------------------------------------

NativeResult spawnImpl(CallContext& cx, bool sticky) {
  RuntimeImpl& rt = rtOf(cx);
  Value fn = cx.arg(1);
  if (!fn.isFunction() && !cx.checkType(1, vm::Tag::LuaClosure)) return cx.failure();
  if (rt.closed()) return cx.error("cannot spawn: the runtime is closed");
  // Parallel tasks rely on 16-byte value accesses that cannot tear (vm/value.h); without
  // them a racing script could break memory safety, so there are no tasks at all.
  if (!vm::slotAccessIsAtomic()) return cx.error("cannot spawn: tasks need a processor with AVX");
  if (!rt.ensureWorkers().isOk()) return NativeResult{0, StatusCode::kFatal};
  LuaTask* task = rt.newTask(cx, cx.argIndex(1), cx.argCount() - 1);
  if (!task) return cx.memoryError();
  task->setSticky(sticky);
  if (!cx.state().tablesShared.load(std::memory_order_relaxed)) cx.state().tablesShared.store(true, std::memory_order_relaxed);
  rt.aliveTasks.fetch_add(1, std::memory_order_acq_rel);
  if (!rt.scheduler->spawn(task)) {
    rt.completeTask(task, sched::TaskState::kCancelled);
    return cx.error("cannot spawn: the runtime is closed");
  }
  return cx.results(1);
}

NativeResult taskSpawn(CallContext& cx) { return spawnImpl(cx, false); }
NativeResult taskSpawnSticky(CallContext& cx) { return spawnImpl(cx, true); }

NativeResult taskCurrent(CallContext& cx) {
  LuaTask* self = currentTask(rtOf(cx), cx.threadData());
  return pushValues(cx, {self->handle ? Value::userdata(self->handle) : Value::nil()});
}

NativeResult taskYield(CallContext& cx) {
  if (!canSuspend(cx.threadData())) {
    std::this_thread::yield();
    return cx.noResults();
  }
  currentTask(rtOf(cx), cx.threadData())->suspend = LuaTask::Suspend::kYield;
  cx.threadData()->taskSuspending = true;
  return NativeResult{0, StatusCode::kYield};
}

NativeResult taskSleep(CallContext& cx) {
  double seconds;
  if (!cx.checkNumber(1, seconds)) return cx.failure();
  if (!(seconds > 0)) return taskYield(cx);
  LuaTask* self = currentTask(rtOf(cx), cx.threadData());
  self->wait.begin(WaitOp::kSleep, 0, !canSuspendWait(cx.threadData()));
  return waitMayGC(cx, *self, seconds);
}

NativeResult taskWorkers(CallContext& cx) {
  return pushValues(cx, {Value::integer(int64_t(rtOf(cx).options.workers))});
}

NativeResult taskNow(CallContext& cx) { return pushValues(cx, {Value::number(rtOf(cx).nowSeconds())}); }

// --- task handles -----------------------------------------------------------------------

NativeResult handleAwait(CallContext& cx) {
  RuntimeImpl& rt = rtOf(cx);
  LuaTask* target = checkTask(cx, 1);
  if (!target) return cx.typeError(1, "task");
  LuaTask* self = currentTask(rt, cx.threadData());
  if (target == self) return cx.error("a task cannot await itself");
  bool waiting = false;
  {
    std::lock_guard lock(target->doneLock);
    if (!target->done) {
      self->wait.begin(WaitOp::kAwait, 1, !canSuspendWait(cx.threadData()));
      target->addAwaiter(&self->wait.addWaiter(self, target));
      target->retain();  // the wait's (WaitState::takeAwaited)
      waiting = true;
    }
  }
  if (waiting) return waitMayGC(cx, *self, -1);
  uint32_t n = 0;
  Value err;
  Status st = awaitResults(cx.state(), cx.threadData(), *target, n, err);
  if (st.code() == StatusCode::kRuntimeError) return cx.raise(err);
  if (!st.isOk()) return cx.memoryError();
  return cx.results(int32_t(n));
}

NativeResult handleCancel(CallContext& cx) {
  LuaTask* target = checkTask(cx, 1);
  if (!target) return cx.typeError(1, "task");
  if (target->isDone()) return pushValues(cx, {Value::boolean(false)});
  return pushValues(cx, {Value::boolean(rtOf(cx).cancelTask(target))});
}

const char* statusOf(LuaTask* task) {
  {
    std::lock_guard lock(task->doneLock);
    if (task->done) return sched::taskStateName(task->outcome);
  }
  // A task blocked in a wait on its OS thread (main, or a wait nested in a coroutine)
  // is suspended, though its scheduler state is running.
  if (task->wait.isBlocked()) return "suspended";
  if (task->isMain) return "running";
  // Deterministic mode: a step running ahead of its commit is a ready task's.
  if (task->rt.scheduler->showsReady(task)) return "ready";
  return sched::taskStateName(task->state());
}

NativeResult handleStatus(CallContext& cx) {
  LuaTask* target = checkTask(cx, 1);
  if (!target) return cx.typeError(1, "task");
  return pushString(cx, statusOf(target));
}

NativeResult handleId(CallContext& cx) {
  LuaTask* target = checkTask(cx, 1);
  if (!target) return cx.typeError(1, "task");
  return pushValues(cx, {Value::integer(int64_t(target->isMain ? 0 : target->id()))});
}

NativeResult handleToString(CallContext& cx) {
  LuaTask* target = checkTask(cx, 1);
  if (!target) return cx.typeError(1, "task");
  return pushString(cx, "task " + std::to_string(target->isMain ? 0 : target->id()) + " (" + statusOf(target) + ")");
}



// --- channels -------------------------------------------------------------------------

NativeResult taskChannel(CallContext& cx) {
  RuntimeImpl& rt = rtOf(cx);
  int64_t capacity;
  if (!cx.optInteger(1, 0, capacity)) return cx.failure();
  if (capacity < 0 || capacity > int64_t(UINT32_MAX)) return cx.argError(1, "capacity out of range");
  vm::Userdata* u = vm::newHostUserdata(cx.state(), sizeof(ChannelBox), releaseChannelBox);
  if (!u) return cx.memoryError();
  auto* ch = new Channel(rt, uint32_t(capacity));
  cx.state().mutator().noteExternalBytes(sizeof(Channel));
  rt.addChannel(ch);
  reinterpret_cast<ChannelBox*>(u->data)->ch = ch;
  vm::storeRef(u, u->metatable, rt.channelMeta);
  return pushValues(cx, {Value::userdata(u)});
}

#define CHECK_CHANNEL(var)                               \
  Channel* var = checkChannel(cx, 1);                    \
  if (!var) return cx.typeError(1, "channel")

NativeResult channelSendNative(CallContext& cx) {
  CHECK_CHANNEL(ch);
  Value v = cx.arg(2);
  bool closed;
  if (!opLikelyWaits(*ch, true)) {
    OpResult r = channelSend(*ch, v, closed);
    if (r == OpResult::kNoMemory) return cx.memoryError();
    if (r == OpResult::kDone) {
      if (closed) return cx.error("send on closed channel");
      return cx.noResults();
    }
  }
  LuaTask* self = currentTask(rtOf(cx), cx.threadData());
  self->wait.begin(WaitOp::kSend, 1, !canSuspendWait(cx.threadData()));
  if (channelSend(*ch, v, closed, self, 0) == OpResult::kDone) {
    self->wait.deliverOwn(closed ? Delivery::sendFailedClosed() : Delivery::sent());
  }
  return waitMayGC(cx, *self, -1);
}

// A receive that waits (timeout < 0: for ever).
NativeResult recvMayGC(CallContext& cx, Channel* ch, double timeout) {
  Value v;
  bool ok;
  if ((timeout == 0 || !opLikelyWaits(*ch, false)) && channelRecv(*ch, v, ok) == OpResult::kDone) {
    return pushValues(cx, {v, Value::boolean(ok)});
  }
  if (timeout == 0) {
    vm::String* s = cx.newString("timeout");
    if (!s) return cx.memoryError();
    return pushValues(cx, {Value::nil(), Value::boolean(false), Value::string(s)});
  }
  LuaTask* self = currentTask(rtOf(cx), cx.threadData());
  self->wait.begin(WaitOp::kRecv, 1, !canSuspendWait(cx.threadData()));
  if (channelRecv(*ch, v, ok, self, 0) == OpResult::kDone) {
    self->rt.noteRecordWritten(*self);
    self->wait.deliverOwn({v, ok, false});
  }
  return waitMayGC(cx, *self, timeout);
}

NativeResult channelRecvNative(CallContext& cx) {
  CHECK_CHANNEL(ch);
  double timeout;
  if (!optTimeout(cx, 2, timeout)) return cx.failure();
  return recvMayGC(cx, ch, timeout);
}

NativeResult channelTrySend(CallContext& cx) {
  CHECK_CHANNEL(ch);
  bool closed;
  OpResult r = channelSend(*ch, cx.arg(2), closed);
  if (r == OpResult::kNoMemory) return cx.memoryError();
  if (r == OpResult::kDone && closed) return cx.error("send on closed channel");
  return pushValues(cx, {Value::boolean(r == OpResult::kDone)});
}

NativeResult channelTryRecv(CallContext& cx) {
  CHECK_CHANNEL(ch);
  Value v;
  bool ok = false;
  if (channelRecv(*ch, v, ok) != OpResult::kDone) return pushValues(cx, {Value::nil(), Value::boolean(false)});
  return pushValues(cx, {v, Value::boolean(ok)});
}

NativeResult channelCloseNative(CallContext& cx) {
  CHECK_CHANNEL(ch);
  if (!channelClose(*ch)) return cx.error("close of closed channel");
  return cx.noResults();
}

NativeResult channelCap(CallContext& cx) {
  CHECK_CHANNEL(ch);
  return pushValues(cx, {Value::integer(ch->capacity)});
}

NativeResult channelLen(CallContext& cx) {
  CHECK_CHANNEL(ch);
  return pushValues(cx, {Value::integer(ch->length.load(std::memory_order_relaxed))});
}

// The generic for calls it with (channel, previous value): a receive without timeout.
NativeResult channelIterStep(CallContext& cx) {
  CHECK_CHANNEL(ch);
  return recvMayGC(cx, ch, -1);
}

NativeResult channelIter(CallContext& cx) {
  CHECK_CHANNEL(ch);
  (void)ch;
  return pushValues(cx, {Value::lightNative(orderedWait<channelIterStep>), cx.arg(1), Value::nil()});
}

NativeResult channelToString(CallContext& cx) {
  CHECK_CHANNEL(ch);
  return pushString(cx, channelName(ch));
}

}  // namespace

NativeResult taskSelect(CallContext& cx);
NativeResult taskStats(CallContext& cx);

// --- library set-up ---------------------------------------------------------------------

namespace {

constexpr vm::LibEntry kTaskLib[] = {
    {"spawn", ordered<taskSpawn>},     {"spawn_sticky", ordered<taskSpawnSticky>},
    {"current", live<taskCurrent>}, {"yield", orderedWait<taskYield>},
    {"sleep", orderedWait<taskSleep>},     {"workers", live<taskWorkers>},
    {"channel", live<taskChannel>}, {"select", orderedWait<taskSelect>},
    {"stats", live<taskStats>},     {"now", ordered<taskNow>},
};

constexpr vm::LibEntry kHandleMethods[] = {
    {"await", orderedWait<handleAwait>},   {"cancel", ordered<handleCancel>},
    {"status", ordered<handleStatus>}, {"id", live<handleId>},
};

constexpr vm::LibEntry kChannelMethods[] = {
    {"send", orderedWait<channelSendNative>},  {"recv", orderedWait<channelRecvNative>},
    {"try_send", ordered<channelTrySend>}, {"try_recv", ordered<channelTryRecv>},
    {"close", ordered<channelCloseNative>}, {"cap", live<channelCap>},
    {"iter", live<channelIter>},
};

Status setField(vm::State& S, vm::Table* t, const char* name, const Value& v) {
  vm::String* key = vm::newString(S, name);
  if (!key) return Status(StatusCode::kMemoryError);
  return vm::tableSetStr(S, t, key, v);
}

// A metatable with methods under __index and the given metamethods. Allocation never
// collects, so the raw pointers stay valid here.
vm::Table* makeMetatable(vm::State& S, std::span<const vm::LibEntry> methods, std::span<const vm::LibEntry> metas,
                         const char* name) {
  vm::Table* mt = vm::newTable(S, 0, 8);
  vm::Table* index = vm::newTable(S, 0, 8);
  vm::String* nameStr = vm::newString(S, name);
  if (!mt || !index || !nameStr) return nullptr;
  for (const auto& e : methods)
    if (!setField(S, index, e.name, Value::lightNative(e.fn)).isOk()) return nullptr;
  for (const auto& e : metas)
    if (!setField(S, mt, e.name, Value::lightNative(e.fn)).isOk()) return nullptr;
  if (!setField(S, mt, "__index", Value::table(index)).isOk()) return nullptr;
  if (!setField(S, mt, "__name", Value::string(nameStr)).isOk()) return nullptr;
  return mt;
}

// The message handler at the bottom of every task: records the traceback for the
// report of an error nobody awaits, and leaves the error value itself unchanged.
NativeResult taskMessageHandler(CallContext& cx) {
  LuaTask* self = currentTask(rtOf(cx), cx.threadData());
  Value err = cx.arg(1);
  std::string message;
  // As lua.c's message handler: strings and numbers as they are, else __tostring.
  vm::String* s = nullptr;
  if (err.isString() || err.isNumber() || !vm::metamethodOf(cx.state(), err, vm::Meta::ToString).isNil()) {
    if (cx.toStringMayGC(err, s).isOk() && s) message = std::string(s->view());
  }
  if (!s) message = std::string("(error object is a ") + vm::typeName(err) + " value)";
  self->makeAside().traceback = vm::traceback(cx.state(), cx.threadData(), message, 1, true);
  return pushValues(cx, {cx.arg(1)});
}

// The stack a new task needs before it calls anything: its base (a nil, the message
// handler, the function and its arguments), and a Lua function's frame as the call will
// ask for it (interp.cpp, setupLuaFrameMayGC), so that the first call does not grow it.
uint32_t taskStackSlots(const Value& fn, uint32_t nargs) {
  uint32_t slots = 3 + nargs + vm::kMinNativeStack;
  if (!fn.isLuaClosure()) return slots;
  const vm::Proto* p = fn.asLuaClosure()->proto;
  uint32_t frame = 3 + p->maxStackSize + vm::kExtraStack + (p->isVararg ? nargs + 1 + p->numParams : 0);
  return std::max(slots, frame);
}

}  // namespace

LuaTask* RuntimeImpl::newTask(CallContext& cx, uint32_t fnIndex, uint32_t nargs) {
  vm::Thread* th = vm::newThread(state, taskStackSlots(cx.at(fnIndex), nargs));
  if (!th) return nullptr;
  vm::ThreadData* t = th->data;
  vm::Userdata* u = vm::newHostUserdata(state, sizeof(TaskBox), releaseTaskBox);
  if (!u || !cx.ensureStack(1)) return nullptr;
  t->taskRoot = true;
  t->status = vm::ThreadStatus::Running;  // never resumable as a coroutine
  t->nativeDepth = 1;
  t->stack[0] = Value::nil();
  t->stack[1] = Value::lightNative(taskMessageHandler);
  for (uint32_t i = 0; i <= nargs; i++) t->stack[2 + i] = cx.at(fnIndex + i);
  t->top = 3 + nargs;
  t->errFunc = 1;
  auto* task = new LuaTask(*this, th);  // its first reference is the handle's
  state.mutator().noteExternalBytes(sizeof(LuaTask));
  reinterpret_cast<TaskBox*>(u->data)->task = task;
  vm::storeRef(u, u->metatable, taskMeta);
  task->handle = u;
  cx.push(Value::userdata(u));
  return task;
}

Status openTaskLib(RuntimeImpl& rt) {
  vm::State& S = rt.state;
  S.runtime = &rt;
  static constexpr vm::LibEntry kHandleMetas[] = {{"__tostring", live<handleToString>}};
  static constexpr vm::LibEntry kChannelMetas[] = {{"__tostring", live<channelToString>},
                                                   {"__len", ordered<channelLen>}};
  rt.taskMeta = makeMetatable(S, kHandleMethods, kHandleMetas, "task");
  rt.channelMeta = makeMetatable(S, kChannelMethods, kChannelMetas, "channel");
  if (!rt.taskMeta || !rt.channelMeta) return Status(StatusCode::kMemoryError);
  if (Status st = vm::openLibrary(S, "task", kTaskLib, nullptr); !st.isOk()) return st;
  if (Status st = setField(S, S.registry, kPortMakerKey, Value::lightNative(portMakeMayGC)); !st.isOk()) return st;
  // The main chunk's task: the State's main thread, run by the thread that started us.
  vm::Userdata* u = vm::newHostUserdata(S, sizeof(TaskBox), releaseTaskBox);
  if (!u) return Status(StatusCode::kMemoryError);
  auto* main = new LuaTask(rt, S.mainThread);
  S.mutator().noteExternalBytes(sizeof(LuaTask));
  main->isMain = true;
  main->retain();  // one for the runtime (mainTask), one for the handle
  reinterpret_cast<TaskBox*>(u->data)->task = main;
  vm::storeRef(u, u->metatable, rt.taskMeta);
  main->handle = u;
  rt.mainTask = main;
  return Status::ok();
}

}  // namespace weft::runtime
