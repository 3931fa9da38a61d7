// Waits: suspending or blocking until a task's wait ends, and finishing the operation it
// was for (runtime/wait_state.h gives the protocol and its transitions).
#include <chrono>
#include <memory>
#include <cstdio>
#include <thread>

#include "gc/fault.h"
#include "runtime/runtime_impl.h"
#include "vm/interp.h"
#include "vm/string.h"

namespace weft::runtime {

using vm::Value;

namespace {

// A task reference owned by a timer callback (released also when the timer is cancelled
// and its callback destroyed unrun).
struct TaskRef {
  explicit TaskRef(LuaTask* t) : task(t) { task->retain(); }
  ~TaskRef() { task->release(); }
  TaskRef(const TaskRef&) = delete;
  TaskRef& operator=(const TaskRef&) = delete;
  LuaTask* task;
};

// A wait's results are the last values its native pushes before returning them, so they
// need room for themselves only: no reserve above them (a native's call left
// vm::kMinNativeStack slots above its arguments, which a few results fit, so a task
// parked in a wait does not grow its stack to finish it).
bool pushValue(vm::ThreadData* t, const Value& v) {
  if (!vm::ensureStackSlots(t, uint64_t(t->top) + 1)) return false;
  t->stack[t->top++] = v;
  return true;
}

Status pushAll(vm::State& S, vm::ThreadData* t, std::initializer_list<Value> values, uint32_t& n) {
  for (const Value& v : values) {
    if (!pushValue(t, v)) return Status(StatusCode::kMemoryError);
  }
  n = uint32_t(values.size());
  return Status::ok();
}

Value stringValue(vm::State& S, const char* s) {
  vm::String* str = vm::newString(S, s);
  return str ? Value::string(str) : Value::nil();
}

}  // namespace

Status awaitResults(vm::State& S, vm::ThreadData* t, LuaTask& target, uint32_t& n, Value& err) {
  std::lock_guard lock(target.doneLock);
  switch (target.outcome) {
    case sched::TaskState::kCompleted: {
      uint32_t count = target.resultCount;
      if (!vm::ensureStackSlots(t, uint64_t(t->top) + count)) {  // as pushValue
        return Status(StatusCode::kMemoryError);
      }
      for (uint32_t i = 0; i < count; i++) t->stack[t->top++] = target.results[i];
      n = count;
      return Status::ok();
    }
    case sched::TaskState::kPanicked:
      target.errorObserved = true;
      err = target.aside ? target.aside->error : Value::nil();
      return Status(StatusCode::kRuntimeError);
    default:
      err = positionedError(S, t, "task cancelled");
      return Status(StatusCode::kRuntimeError);
  }
}

namespace {

Status claimedResults(vm::State& S, vm::ThreadData* t, LuaTask& self, uint32_t& n, Value& err) {
  const WaitState& wait = self.wait;
  switch (wait.op()) {
    case WaitOp::kRecv:
      return pushAll(S, t, {wait.delivered(), Value::boolean(wait.deliveredOk())}, n);
    case WaitOp::kSend:
      if (wait.sendClosed()) {
        err = positionedError(S, t, "send on closed channel");
        return Status(StatusCode::kRuntimeError);
      }
      n = 0;
      return Status::ok();
    case WaitOp::kSelect: {
      const Waiter& w = wait.waiters()[size_t(wait.firedCase())];
      Value index = Value::integer(wait.firedCase() + 1);
      if (!w.isSend) return pushAll(S, t, {index, wait.delivered(), Value::boolean(wait.deliveredOk())}, n);
      if (wait.sendClosed()) {
        err = positionedError(S, t, "send on closed channel");
        return Status(StatusCode::kRuntimeError);
      }
      return pushAll(S, t, {index}, n);
    }
    case WaitOp::kAwait:
      return awaitResults(S, t, *self.wait.awaited(), n, err);
    default:
      n = 0;
      return Status::ok();
  }
}

Status timedOutResults(vm::State& S, vm::ThreadData* t, LuaTask& self, uint32_t& n) {
  switch (self.wait.op()) {
    case WaitOp::kRecv:
      return pushAll(S, t, {Value::nil(), Value::boolean(false), stringValue(S, "timeout")}, n);
    case WaitOp::kSelect:
      return pushAll(S, t, {Value::nil()}, n);
    default:
      n = 0;  // sleep: the time passing is its success
      return Status::ok();
  }
}

void armTimer(LuaTask& self, double timeout) {
  if (!self.rt.ensureWorkers().isOk()) return;  // closed: the wait ends at once
  auto ref = std::make_shared<TaskRef>(&self);
  uint64_t gen = self.wait.gen();
  auto delay = std::chrono::duration_cast<sched::Clock::duration>(std::chrono::duration<double>(timeout));
  self.wait.noteTimer(self.rt.scheduler->addTimer(self.rt.scheduler->now() + delay, [ref, gen] {
    LuaTask* task = ref->task;
    bool blocking = task->wait.holdForWake(*task);
    if (task->wait.timeOut(gen)) task->rt.wakeTask(task, blocking);
    else if (blocking) task->release();
  }));
}

// On the host thread, the main task suspended at the bottom of its embedder's call:
// runs the tasks the host itself woke (sched/host_lane.cpp) while the wait lasts. true
// when the wait ended (or the runtime closed, or the main task's code ended inside one of
// those tasks' waits) meanwhile; false when nothing is left to run here, and the thread
// must sleep. Only then: a task the host runs may hold the thread in a wait under a
// native frame, and only a main task whose code is not on the thread's stack can go on
// inside it (runMainNestedMayGC).
bool helpedToEndMayGC(LuaTask& self) {
  RuntimeImpl& rt = self.rt;
  sched::HostRun run = rt.scheduler->runOnHost([&] { return !self.wait.open() || rt.mainEndedNested; });
  // Once the lane is empty, a task the main chunk wakes next waits at most a slice from
  // then: otherwise the slice of the first fill ran on, and a ping-pong with the main
  // chunk published its peer to the workers every slice (a round trip between threads).
  if (rt.scheduler->hostLaneEmpty()) rt.endHostLaneSlice();
  // Collections ran meanwhile; the code that waited goes on writing its stack.
  if (vm::ThreadData* running = rt.state.context().running) vm::markStackDirty(running);
  return run != sched::HostRun::kIdle;
}

// Resumes the main task's code suspended at the bottom of its embedder's call on `t`
// (its wait ended), as RuntimeImpl::dispatchMayGC resumes a task; kYield when it
// suspended again.
Status resumeMainMayGC(RuntimeImpl& rt, vm::ThreadData* t) {
  LuaTask& main = *rt.mainTask;
  rt.mainSuspended.store(false, std::memory_order_seq_cst);
  if (main.mainCancel.load(std::memory_order_acquire)) main.wait.cancel(main.wait.gen());
  vm::ThreadData* leaf = t;
  while (leaf->suspendedChild) leaf = leaf->suspendedChild;
  // The chain runs again (and its leaf receives the wait's results): dirty stacks.
  for (vm::ThreadData* c = t; c; c = c->suspendedChild) vm::markStackDirty(c);
  uint32_t n = 0;
  Value err;
  Status fs = finishWaitMayGC(rt.state, leaf, main, n, err);
  if (fs.code() == StatusCode::kRuntimeError) {
    Status raised = vm::raiseValueMayGC(rt.state, leaf, err);
    if (raised.code() == StatusCode::kFatal) return raised;
    leaf->resumeStatus = raised.code();
  } else if (!fs.isOk()) {
    return fs;
  }
  leaf->resumeCount = n;
  main.suspend = LuaTask::Suspend::kNone;
  Status st = vm::executeMayGC(rt.state, t);
  if (st.code() == StatusCode::kYield) {
    t->taskSuspending = false;
    rt.mainSuspended.store(true, std::memory_order_seq_cst);
  }
  return st;
}

// On the host thread, asleep (detached) in the wait of a task it ran that holds the
// thread under a native frame: the main task's wait ended, and its code, suspended with
// nothing on this thread's stack, goes on here until it waits again or ends (then the
// embedder's call below returns how, driveMainMayGC).
Status runMainNestedMayGC(RuntimeImpl& rt) {
  Status st = rt.attachCurrent();
  if (!st.isOk()) return st;
  vm::ExecContext* outer = vm::tlsExecContext;
  vm::bindExecContext(rt.mainExec);
  bool dispatching = sched::Scheduler::exchangeDispatchingOnHost(false);
  Status out = resumeMainMayGC(rt, rt.state.mainThread->data);
  sched::Scheduler::exchangeDispatchingOnHost(dispatching);
  if (out.code() != StatusCode::kYield) {
    rt.mainEndedNested = true;
    rt.mainNestedStatus = out;
  }
  // What it woke must not wait in the lane while this thread sleeps again.
  rt.scheduler->flushHostLane();
  vm::bindExecContext(outer);
  rt.detachCurrent();
  return Status::ok();
}

// The main task or a nested wait: sleeps on the task's condition variable, detached
// from the collector (so it never delays a collection), then re-attaches.
// On the host thread, a task it runs that waits under a native frame holds the thread,
// and so the main task below it: `hostWaiter` names it for the deadlock check
// (RuntimeImpl::onAllBlocked), which then treats it as it treats the main task.
// On a worker, the thread releases its worker to a spare meanwhile, and `blocked` stays
// set until it holds the worker again: the deadlock check (RuntimeImpl::nativeWaitsOpen)
// must see a task whose wait ended as about to run for as long as its worker sleeps.
Status blockMayGC(LuaTask& self) {
  RuntimeImpl& rt = self.rt;
  // Deterministic mode: this thread runs the other tasks until the wait ends and the
  // chooser picks this task again.
  if (rt.scheduler->deterministic()) return rt.runInlineMayGC(self, [&self] { return !self.wait.open(); });
  if (self.isMain && rt.mainSuspended.load(std::memory_order_relaxed) && helpedToEndMayGC(self)) return Status::ok();
  bool onHost = !self.isMain && sched::Scheduler::dispatchingOnHost();
  if (onHost) rt.hostWaiter.store(&self, std::memory_order_seq_cst);
  rt.scheduler->flushHostLane();  // on the host thread: nothing waits in its lane while it sleeps
  self.wait.setBlocked(true);
  rt.detachCurrent();
  (void)rt.enterBlockingCurrent(sched::Blocking::kTaskWait);  // failing, it closed the runtime
  bool holdsHost = self.isMain || onHost;
  if (holdsHost) rt.probeForDeadlock();
  for (;;) {
    // Read before the check: a bump after it (the wait ending) keeps the sleep below from
    // starting.
    uint32_t signal = self.wait.signalSeen();
    if (!self.wait.open() || rt.closed() || (holdsHost && rt.deadlocked.load(std::memory_order_acquire))) break;
    if (onHost && !rt.mainEndedNested && rt.mainResumable()) {
      // The thread is not asleep while the main task runs: the deadlock check must not
      // take this wait for its state.
      self.wait.setBlocked(false);
      Status st = runMainNestedMayGC(rt);
      self.wait.setBlocked(true);
      if (!st.isOk()) break;  // the runtime closed
      rt.probeForDeadlock();  // the workers may all have parked meanwhile
      continue;
    }
    self.wait.sleepUntilSignalled(signal);
  }
  rt.leaveBlockingCurrent();  // the worker first, then the collector (scheduler.h)
  self.wait.setBlocked(false);
  if (onHost) rt.hostWaiter.store(nullptr, std::memory_order_seq_cst);
  if (holdsHost && !rt.closed() && rt.deadlocked.load(std::memory_order_acquire)) {
    if (onHost && rt.mainEndedNested) {
      // The main task's code ended above this wait, and the embedder's call returns only
      // once it ends: end it as the end of the program would, by cancelling it.
      rt.deadlocked.store(false, std::memory_order_release);
      self.wait.cancel(self.wait.gen());
    } else if (!rt.state.atPrompt) {
      rt.reportDeadlockAndExit();
    } else {
      rt.abortPromptWait(self);
    }
  }
  return rt.attachCurrent();
}

}  // namespace

std::string LuaTask::describeWait() const {
  char buf[64];
  std::span<const Waiter> waiters = wait.waiters();
  switch (wait.op()) {
    case WaitOp::kSleep:
      return "sleep";
    case WaitOp::kRecv:
    case WaitOp::kSend:
      // The channel its Waiter is queued on (channel.cpp: registerWaiter).
      std::snprintf(buf, sizeof buf, "%s on channel %p", wait.op() == WaitOp::kRecv ? "recv" : "send",
                    waiters.empty() ? nullptr : static_cast<void*>(static_cast<Channel*>(waiters[0].source)));
      return buf;
    case WaitOp::kSelect:
      return "select over " + std::to_string(waiters.size()) + " cases";
    case WaitOp::kAwait:
      if (const LuaTask* awaited = wait.awaited()) {
        return "await task " + (awaited->isMain ? std::string("main") : std::to_string(awaited->id()));
      }
      break;
    case WaitOp::kPort:
      return "posts from the host (a port)";
    case WaitOp::kBlocking:
      return "a blocking call (the blocking pool)";
    case WaitOp::kNone:
      break;
  }
  return "nothing";
}

void LuaTask::addAwaiter(Waiter* w) {
  w->next = nullptr;
  if (!awaiters) {
    w->prev = w;
    awaiters = w;
    return;
  }
  Waiter* last = awaiters->prev;
  w->prev = last;
  last->next = w;
  awaiters->prev = w;
}

void LuaTask::removeWaiter(Waiter* w) {
  std::lock_guard lock(doneLock);
  // Not in the list: completion claimed it and emptied the list.
  Waiter* cur = awaiters;
  while (cur && cur != w) cur = cur->next;
  if (!cur) return;
  if (w == awaiters) {
    awaiters = w->next;
    if (awaiters) awaiters->prev = w->prev;
  } else {
    w->prev->next = w->next;
    (w->next ? w->next : awaiters)->prev = w->prev;
  }
  w->prev = w->next = nullptr;
}

bool canSuspend(vm::ThreadData* t) {
  return (sched::Scheduler::currentWorker() != nullptr || sched::Scheduler::dispatchingOnHost()) &&
         vm::taskChainSuspendable(t);
}

bool canSuspendWait(vm::ThreadData* t) {
  if (sched::Scheduler::currentWorker() != nullptr || sched::Scheduler::dispatchingOnHost()) {
    return vm::taskChainSuspendable(t);
  }
  if (!sched::Scheduler::hostBoundHere()) return false;
  for (const vm::ThreadData* cur = t; cur; cur = cur->resumer) {
    // The embedder's call is the main thread's one native level and non-yieldable frame,
    // and it called a Lua function (driveMainMayGC resumes Lua frames; a native the
    // embedder calls directly, such as the C++ API's Task::await, blocks).
    if (cur->isMain) {
      return cur->nny == 1 && cur->nativeDepth == 1 && cur->frameCount > 0 && (cur->frames[0].flags & vm::kFrameLua);
    }
    if (cur->nny != 0) return false;
  }
  return false;
}

Status driveMainMayGC(vm::State& S, vm::ThreadData* t) {
  RuntimeImpl& rt = *runtimeOf(S);
  LuaTask& main = *rt.mainTask;
  rt.mainExec = vm::tlsExecContext;
  t->taskSuspending = false;
  rt.mainSuspended.store(true, std::memory_order_seq_cst);
  for (;;) {
    if (main.wait.open()) {
      Status st = blockMayGC(main);
      if (!st.isOk()) {
        rt.mainSuspended.store(false, std::memory_order_seq_cst);
        return st;
      }
    }
    if (rt.mainEndedNested) {
      rt.mainEndedNested = false;
      return std::exchange(rt.mainNestedStatus, Status::ok());
    }
    if (rt.closed()) {
      rt.mainSuspended.store(false, std::memory_order_seq_cst);
      return Status(StatusCode::kFatal);
    }
    Status st = resumeMainMayGC(rt, t);
    if (st.code() != StatusCode::kYield) return st;
  }
}

Value positionedError(vm::State& S, vm::ThreadData* t, const char* message) {
  std::string text = vm::wherePrefix(t, 1) + message;
  return stringValue(S, text.c_str());
}

vm::NativeResult waitMayGC(vm::CallContext& cx, LuaTask& self, double timeout) {
  bool cancel = self.isMain ? self.mainCancel.load(std::memory_order_acquire) : self.cancelRequested();
  if (cancel) self.wait.cancel(self.wait.gen());
  // A suspending task leaves even when cancelled here: the scheduler requeues it (its
  // cancel bit is set) and the executor ends it, closing its variables, as it would have
  // at the dispatch after a wait.
  if (!self.wait.blocksThread() && (self.wait.open() || self.wait.phase() == WaitPhase::kCancelled)) {
    if (self.wait.open() && timeout >= 0) armTimer(self, timeout);
    self.suspend = LuaTask::Suspend::kWait;
    cx.threadData()->taskSuspending = true;
    return vm::NativeResult{0, StatusCode::kYield};
  }
  if (self.wait.open()) {
    if (timeout >= 0) armTimer(self, timeout);
    Status st = blockMayGC(self);
    if (!st.isOk()) return vm::NativeResult{0, st.code()};
    if (self.rt.closed()) return vm::NativeResult{0, StatusCode::kFatal};
    cancel = self.isMain ? self.mainCancel.load(std::memory_order_acquire) : self.cancelRequested();
    if (cancel) self.wait.cancel(self.wait.gen());
  }
  uint32_t n = 0;
  Value err;
  Status st = finishWaitMayGC(cx.state(), cx.threadData(), self, n, err);
  if (st.code() == StatusCode::kRuntimeError) return cx.raise(err);
  if (!st.isOk()) return vm::NativeResult{0, st.code()};
  return cx.results(int32_t(n));
}

Status finishWaitMayGC(vm::State& S, vm::ThreadData* t, LuaTask& self, uint32_t& n, Value& err) {
  // A channel peer delivered before confirming its claim (channel.cpp: deliverTo), and
  // the acquire that saw the wait end orders that delivery before the reads below.
  self.wait.withdrawWaiters();
  sched::TimerId timer;
  if (self.wait.takeTimer(timer)) self.rt.scheduler->cancelTimer(timer);
  WaitPhase phase = self.wait.phase();
  Status st;
  n = 0;
  switch (phase) {
    case WaitPhase::kClaimed:
      st = claimedResults(S, t, self, n, err);
      break;
    case WaitPhase::kTimedOut:
      st = timedOutResults(S, t, self, n);
      break;
    case WaitPhase::kCancelled:
      err = positionedError(S, t, "task cancelled");
      st = Status(StatusCode::kRuntimeError);
      break;
    case WaitPhase::kAborted:  // the main task's deadlock at the prompt
      err = positionedError(S, t, self.rt.mainAbortReason.c_str());
      st = Status(StatusCode::kRuntimeError);
      break;
    default:
      self.rt.failClosed("task wait: task " + std::to_string(self.id()) + " resumed with its wait still open");
      st = Status(StatusCode::kFatal);
      break;
  }
  LuaTask* awaited = self.wait.takeAwaited();
  self.wait.finish();
  if (awaited) awaited->release();
  return st;
}

}  // namespace weft::runtime
