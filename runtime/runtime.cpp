// The executor: runs Lua tasks on the scheduler's workers, each worker a mutator of the
// shared heap (protocol: runtime/runtime.h), and the runtime's life cycle.
//
// One dispatch: the worker re-reads the task's thread from the registry (restoration),
// gives it a budget, and runs the interpreter on it until the task completes, fails,
// waits (a native yielded after starting a wait), yields or spends its budget (the
// interpreter's safepoint yielded). A task that stops running stays published in the
// registry, where the collector updates its frames in place.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <typeinfo>

#include "gc/fault.h"
#include "runtime/port.h"
#include "runtime/runtime_impl.h"
#include "vm/debug.h"
#include "vm/interp.h"
#include "vm/string.h"

namespace weft::runtime {

using sched::RunOutcome;
using sched::TaskState;
using vm::Value;

namespace {

// A no-op task (deadlock probe).
struct ProbeTask final : sched::Task {};

// The thread the registry holds for `task`, as the collector sees it. The fault site
// (WEFT_FAULT) stands for a registry that lost it: the same check that catches a real
// loss then reports it, so a test of the site tests the detection, not only the closing.
vm::Thread* registryRoot(const LuaTask& task, const char* faultSite) {
  return gc::fault::hit(faultSite) ? nullptr : task.thread;
}

// Whether a registry root still owns the frames of the thread data the worker runs: the
// data is the root's, and its back-pointer, which the thread's own trace keeps, names the
// root (the registry's trace keeps the root: two updates that must agree).
bool rootIntact(const vm::Thread* root, const vm::ThreadData* t) { return root && root->data == t && t->self == root; }

// The calling scheduler thread's context (set by onThreadStart; the thread's own).
thread_local constinit WorkerContext* tlsContext = nullptr;

unsigned defaultWorkers(unsigned requested) {
  if (requested > 0) return requested;
  if (const char* env = std::getenv("WEFT_WORKERS")) {
    int n = std::atoi(env);
    if (n > 0) return unsigned(n);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? hw : 1;
}

}  // namespace

uint8_t currentRegistryShard() { return tlsContext ? tlsContext->registryShard : 0; }

RuntimeImpl::RuntimeImpl(vm::State& s, const RuntimeOptions& o)
    : state(s), options(o), blockingPool(o.blockingThreads, [this] {
        // The deadlock check passed over a job in flight: look again if the main task
        // still waits (a probe's dispatch makes the workers park and re-evaluate).
        if (mainTask && mainTask->wait.isBlocked() && !closed()) probeForDeadlock();
      }) {
  options.workers = defaultWorkers(o.workers);
}

// The State may outlive us (finalizers at its close may print or read): it must not
// call into a runtime that is gone.
RuntimeImpl::~RuntimeImpl() {
  blockingPool.stop();  // running jobs end first; their tasks' wakes are refused
  if (nestedContext_) state.threadPool().flush(nestedContext_->exec);
  if (state.runtime == this) {
    state.osWaitEnter = nullptr;
    state.osWaitLeave = nullptr;
    state.blockingSubmit = nullptr;
    state.hostCall = nullptr;
    state.driveMainMayGC = nullptr;
    state.flushHostLane = nullptr;
    state.hostLanePending = false;
    state.deterministic = nullptr;
    state.runtime = nullptr;
  }
  detachPorts();
  releaseLeftovers();
}

void RuntimeImpl::addPort(const std::shared_ptr<Port>& port) {
  std::lock_guard lock(portsMutex_);
  std::erase_if(ports_, [](const std::weak_ptr<Port>& p) { return p.expired(); });
  ports_.push_back(port);
}

void RuntimeImpl::detachPorts() {
  std::lock_guard lock(portsMutex_);
  for (const std::weak_ptr<Port>& p : ports_) {
    if (std::shared_ptr<Port> port = p.lock()) port->detach();
  }
  ports_.clear();
}

// --- Executor ---------------------------------------------------------------------

Status RuntimeImpl::onThreadStart() {
  Expected<gc::Mutator*> m = state.heap().registerMutator();
  if (!m) {
    // The heap's first failure, whichever thread reports it: a worker whose registration
    // failed only because another's had already closed the heap would name the closing
    // instead of its cause (a flake of fault_gc_register, about 1 run in 40).
    std::string first = state.heap().failureReason();
    failClosed("worker registration: " + (first.empty() ? m.error().message : first));
    return Status(StatusCode::kFatal);
  }
  auto* wc = new WorkerContext();
  wc->exec = vm::ExecContext{&state, *m, nullptr, {}};
  // Shard 0 is the main thread's; worker threads take the others in turn.
  wc->registryShard = uint8_t(1 + nextShard_.fetch_add(1, std::memory_order_relaxed) % (kRegistryShards - 1));
  wc->mutator = *m;
  tlsContext = wc;
  vm::bindExecContext(&wc->exec);
  return Status::ok();
}

void RuntimeImpl::onThreadStop() {
  WorkerContext* wc = tlsContext;
  if (!wc) return;
  if (wc->attached) state.heap().detach(*wc->mutator);
  state.threadPool().flush(wc->exec);
  state.heap().unregisterMutator(wc->mutator);
  vm::bindExecContext(nullptr);
  tlsContext = nullptr;
  delete wc;
}

// The pauses a thread's mutator saw while it ran `worker` go to that worker's counters.
void RuntimeImpl::onIdle(sched::Worker& worker) {
  WorkerContext* wc = tlsContext;
  if (!wc || !wc->attached) return;
  state.heap().detach(*wc->mutator);
  wc->attached = false;
  const gc::MutatorStats& ms = wc->mutator->stats();
  uint64_t stops = ms.stops - wc->reportedStops;
  uint64_t nanos = ms.stoppedNanosTotal - wc->reportedNanos;
  for (uint64_t i = 0; i < stops; i++) worker.notePause(i + 1 == stops ? nanos - (nanos / stops) * i : nanos / stops);
  wc->reportedStops = ms.stops;
  wc->reportedNanos = ms.stoppedNanosTotal;
}

Status RuntimeImpl::onBusy(sched::Worker& worker) {
  WorkerContext* wc = tlsContext;
  if (!wc || wc->attached) return Status::ok();
  if (gc::fault::hit("rt.attach")) {
    failClosed("worker registration: injected failure attaching a worker");
    return Status(StatusCode::kFatal);
  }
  Status st = state.heap().attach(*wc->mutator);
  if (!st.isOk()) {
    failClosed("worker registration: attach failed: " + state.heap().failureReason());
    return st;
  }
  wc->attached = true;
  return Status::ok();
}

// The host thread sleeps in the wait of the main task, or of a task it ran that waits
// under a native frame (hostWaiter: the main task below it cannot go on either).
// The waiter's thread begins a wait, may add its timer, and only then sets `blocked`;
// the scheduler read the timers before this runs, possibly before that timer was added.
// So: the claim word first, then `blocked` (seq_cst: a true read of this wait's store
// makes its timer visible), then the timers again, then the word again. A timer that
// ended and dropped the count to zero ended this wait first, and the word shows it.
void RuntimeImpl::onAllBlocked() {
  LuaTask* waiter = hostWaiter.load(std::memory_order_seq_cst);
  // Not asleep: the main task runs above its wait (wait.cpp) and may sleep itself.
  if (!waiter || !waiter->wait.isBlocked()) waiter = mainTask;
  if (closed() || !waiter) return;
  uint64_t word = waiter->wait.observedWord();
  if (WaitState::phaseOf(word) != WaitPhase::kWaiting || !waiter->wait.isBlocked() || mainResumable()) return;
  if (!nativeWaitsOpen() || openPorts.load(std::memory_order_relaxed) > 0) return;
  if (blockingPool.inFlight() > 0) return;  // a job's end wakes its task
  if (scheduler->timersPending() != 0 || waiter->wait.observedWord() != word) return;
  deadlocked.store(true, std::memory_order_release);
  waiter->wait.signalBlocked();
}

bool RuntimeImpl::mainResumable() const {
  return mainTask && mainSuspended.load(std::memory_order_seq_cst) && !mainTask->wait.open();
}

void RuntimeImpl::onHostLaneFilled() {
  // Main thread: the main context's code flushes the lane at its next budget check
  // (vm/call.cpp loopSafepointMayGC), or sooner (flushHostLane).
  state.hostLanePending = true;
  if (vm::ThreadData* running = state.mainRunning()) running->budget = std::min(running->budget, options.budget);
}

// A budget the fill did not lower stays (an interrupt's -1, stored from another thread:
// hence the compare-exchange).
void RuntimeImpl::endHostLaneSlice() {
  state.hostLanePending = false;
  vm::ThreadData* running = state.mainRunning();
  if (!running) return;
  int32_t lowered = __atomic_load_n(&running->budget, __ATOMIC_RELAXED);
  if (lowered < 0 || lowered > options.budget) return;
  __atomic_compare_exchange_n(&running->budget, &lowered, vm::kUnlimitedBudget, false, __ATOMIC_RELAXED,
                              __ATOMIC_RELAXED);
}

bool RuntimeImpl::mayPublishFromOutside() { return openPorts.load(std::memory_order_acquire) > 0; }

void RuntimeImpl::onDiverged(const std::string& what) {
  std::fflush(stdout);
  std::fprintf(stderr, "weft: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

Status RuntimeImpl::runInlineMayGC(LuaTask& self, const std::function<bool()>& enabled) {
  self.wait.setBlockedInline(true);
  sched::InlineRun run = scheduler->runInline(&self, enabled);
  self.wait.setBlockedInline(false);
  // Collections ran meanwhile; the code that stopped here goes on writing its stack.
  if (vm::ThreadData* running = state.context().running) vm::markStackDirty(running);
  switch (run) {
    case sched::InlineRun::kChosen:
      return Status::ok();
    case sched::InlineRun::kClosed:
      return Status(StatusCode::kFatal);
    case sched::InlineRun::kDeadlock:
      // Only the host thread, whose waiter is the main task, is told of a deadlock.
      if (self.isMain && state.atPrompt) {
        abortPromptWait(self);
        return Status::ok();
      }
      reportDeadlockAndExit();
    case sched::InlineRun::kDiverged:
      onDiverged(scheduler->divergence());
  }
  return Status(StatusCode::kFatal);
}

double RuntimeImpl::nowSeconds() const {
  return std::chrono::duration<double>(scheduler->now().time_since_epoch()).count();
}

// The scheduler saw no work anywhere, but a task blocked under a native (its thread
// released its worker) whose wait has already ended is about to run again: not a
// deadlock. Its thread's worker parks again after it, which re-evaluates. Nothing runs
// at this moment, so no wait can end while this reads them.
bool RuntimeImpl::nativeWaitsOpen() {
  for (RegistryShard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    for (LuaTask* t : shard.tasks) {
      if (!t->isMain && t->wait.isBlocked() && !t->wait.open()) return false;
    }
  }
  return true;
}

void RuntimeImpl::detachCurrent() {
  if (WorkerContext* wc = tlsContext) {
    state.heap().detach(*wc->mutator);
    wc->attached = false;
    return;
  }
  state.heap().detach(state.mutator());
}

Status RuntimeImpl::attachCurrent() {
  WorkerContext* wc = tlsContext;
  Status st = state.heap().attach(wc ? *wc->mutator : state.mutator());
  if (!st.isOk()) {
    failClosed("worker registration: attach failed: " + state.heap().failureReason());
    return st;
  }
  if (wc) wc->attached = true;
  // A collection may have cleaned the running thread's stack while this thread waited
  // detached; the native that waited goes on writing into it.
  if (vm::ThreadData* running = state.context().running) vm::markStackDirty(running);
  return st;
}

Status RuntimeImpl::enterBlockingCurrent(sched::Blocking kind) {
  sched::Worker* w = sched::Scheduler::currentWorker();
  if (!w) return Status::ok();
  Status st = scheduler->enterBlocking(*w, kind);
  if (!st.isOk()) failClosed("worker handoff: " + scheduler->closeReason());
  return st;
}

void RuntimeImpl::leaveBlockingCurrent() {
  if (sched::Worker* w = sched::Scheduler::currentWorker()) scheduler->leaveBlocking(*w);
}

namespace {

// A failed handoff closes the runtime (and its heap); the wait goes on and the attach in
// leaveOsWait reports kFatal.
// A short wait (a write) only detaches: handing the worker on would cost more than the
// write, and a write that does block still never delays a collection.
void osWaitEnter(vm::State& S, vm::OsWait kind) {
  RuntimeImpl& rt = *runtimeOf(S);
  rt.scheduler->flushHostLane();  // on the host thread: its lane's task must not wait for the OS
  rt.detachCurrent();
  if (kind == vm::OsWait::kLong) (void)rt.enterBlockingCurrent(sched::Blocking::kOs);
}

// The worker first, then the collector (scheduler.h: leaveBlocking).
Status osWaitLeave(vm::State& S, vm::OsWait kind) {
  RuntimeImpl& rt = *runtimeOf(S);
  if (kind == vm::OsWait::kLong) rt.leaveBlockingCurrent();
  return rt.attachCurrent();
}

bool blockingSubmit(vm::CallContext& cx, const std::shared_ptr<vm::BlockingJob>& job) {
  return runtimeOf(cx.state())->submitBlockingJob(cx, job);
}

void hostCall(vm::State& S, bool entering) {
  RuntimeImpl& rt = *runtimeOf(S);
  if (entering) {
    rt.outerHost = rt.scheduler->bindHost();
    return;
  }
  rt.scheduler->unbindHost(rt.outerHost);
  S.hostLanePending = false;
}

void flushHostLane(vm::State& S) {
  runtimeOf(S)->scheduler->flushHostLane();
  S.hostLanePending = false;
}

}  // namespace

void RuntimeImpl::installHostLaneHooks() {
  state.hostCall = hostCall;
  state.driveMainMayGC = driveMainMayGC;
  state.flushHostLane = flushHostLane;
}

void RuntimeImpl::installOsWaitHooks() {
  state.osWaitEnter = osWaitEnter;
  state.osWaitLeave = osWaitLeave;
  state.blockingSubmit = blockingSubmit;
}

// The wait begins under the pool's lock (admit), where a cancellation requested before
// is seen and ends the wait at once instead (cancelTask takes the same lock). The job's
// end claims the wait; nothing else does while the job is queued or running, so its
// generation is the current one then.
bool RuntimeImpl::submitBlockingJob(vm::CallContext& cx, const std::shared_ptr<vm::BlockingJob>& job) {
  vm::ThreadData* t = cx.threadData();
  // Deterministic mode runs the job in its step: its end is then never a decision.
  if (!canSuspend(t) || scheduler->deterministic()) return false;
  LuaTask* self = currentTask(*this, t);
  if (!self || self->isMain) return false;
  bool cancelled = false;
  self->retain();  // the pool's reference, released by `done`
  BlockingPool::Entry entry{job, self, [this, self](bool ran) {
                              if (ran && self->wait.claim(self->wait.gen(), -1)) wakeTask(self, false);
                              self->release();
                            }};
  bool queued = blockingPool.submit(std::move(entry), [&] {
    self->wait.begin(WaitOp::kBlocking, 0, false);
    if (!self->cancelRequested()) return true;
    self->wait.cancel(self->wait.gen());
    return !(cancelled = true);
  });
  if (!queued) {
    self->release();
    if (!cancelled) return false;
  }
  self->makeAside().blockingJob = job;
  self->suspend = LuaTask::Suspend::kWait;
  t->taskSuspending = true;
  return true;
}

RunOutcome RuntimeImpl::runTask(sched::Worker& worker, sched::Task& base, int32_t& budget) {
  // A probe's dispatch is its purpose. typeid, not dynamic_cast: equal types compare by
  // address, where a dynamic_cast walks the hierarchy comparing names.
  if (typeid(base) != typeid(LuaTask)) return RunOutcome::kCompleted;
  auto* task = static_cast<LuaTask*>(&base);
  if (closed()) return RunOutcome::kCancelled;
  if (!tlsContext) return dispatchNestedMayGC(*task, budget);
  return dispatchMayGC(*tlsContext, *task, budget);
}

bool RuntimeImpl::cancelAtStart(const LuaTask& task) const {
  return scheduler->deterministic() ? task.cancelledBeforeReady() : task.cancelRequested();
}

// Between two tasks a worker serves a pending collection request (gc-v2.md, "Requests
// served between tasks"): a task resumed in a native (a receive, a send) that suspends
// again in the next native passes no loop safepoint, so a worker running only such tasks
// would leave the request (the remembered budget's, say) pending while their dirty
// stacks pile up for the minor that finally serves it. No task frame of this worker is
// live here; the collector's finalizers run at the next task safepoint as always.
bool RuntimeImpl::servePendingCollectionMayGC(WorkerContext& wc) {
  if (!state.heap().collectionRequested()) [[likely]] return true;
  Status st = state.heap().safepointMayGC(*wc.mutator);
  if (st.isOk()) return true;
  failClosed(state.heap().failureReason().empty() ? "collector failure" : state.heap().failureReason());
  return false;
}

RunOutcome RuntimeImpl::dispatchNestedMayGC(LuaTask& task, int32_t& budget) {
  if (!nestedContext_) {
    nestedContext_ = std::make_unique<WorkerContext>();
    nestedContext_->exec = vm::ExecContext{&state, &state.mutator(), nullptr, {}};
    nestedContext_->mutator = &state.mutator();
    nestedContext_->attached = true;
  }
  vm::ExecContext* outer = vm::tlsExecContext;
  vm::ThreadData* outerRunning = nestedContext_->exec.running;
  vm::bindExecContext(&nestedContext_->exec);
  RunOutcome out = dispatchMayGC(*nestedContext_, task, budget);
  nestedContext_->exec.running = outerRunning;
  vm::bindExecContext(outer);
  return out;
}

RunOutcome RuntimeImpl::dispatchMayGC(WorkerContext& wc, LuaTask& task, int32_t& budget) {
  if (!servePendingCollectionMayGC(wc)) return RunOutcome::kCancelled;
  vm::ThreadData* t = task.data();
  // Restoration: the registry's (possibly relocated) thread must still own the frames.
  if (!rootIntact(registryRoot(task, "rt.restore"), t)) {
    failClosed("root restoration: task " + std::to_string(task.id()) + " does not match its published thread");
    return RunOutcome::kPanicked;
  }
  wc.exec.running = t;
  // The chain runs again (and its leaf receives the wait's results): dirty stacks.
  for (vm::ThreadData* c = t; c; c = c->suspendedChild) vm::markStackDirty(c);
  if (t->self && wc.exec.mutator) wc.exec.mutator->noteRunning(vm::asGc(t->self));
  t->budget = budget;
  t->preempted = false;
  bool stepEnded = std::exchange(task.stepEnded, false);
  if (!task.started) {
    task.started = true;
    if (cancelAtStart(task)) return cancelTaskMayGC(task);
    return finishDispatchMayGC(task, startTaskMayGC(task), budget);
  }
  // The thread whose native suspended the task: the root, or the innermost coroutine of
  // a suspended chain (vm/thread.h). Its results go there; resuming the root runs the
  // chain's continuations down to it.
  vm::ThreadData* leaf = t;
  while (leaf->suspendedChild) leaf = leaf->suspendedChild;
  // A cancellation seen at the start of a dispatch ends the task here, whatever ended
  // its wait: the scheduler delivers a request made while the task was ready only once.
  if (cancelAtStart(task) && !stepEnded) {
    // A job still queued or running may be using what the unwinding would free (a
    // FILE*): the job's end (or cancelTask's removal of it) wakes the task again.
    if (task.suspend == LuaTask::Suspend::kWait && task.wait.op() == WaitOp::kBlocking && task.wait.open()) {
      return RunOutcome::kSuspended;
    }
    if (task.suspend == LuaTask::Suspend::kWait) {
      task.wait.cancel(task.wait.gen());
      uint32_t n;
      Value err;
      (void)finishWaitMayGC(state, leaf, task, n, err);
    }
    return cancelTaskMayGC(task);
  }
  if (task.suspend == LuaTask::Suspend::kWait) {
    if (task.wait.open()) return RunOutcome::kSuspended;  // a stale wake
    uint32_t n = 0;
    Value err;
    Status fs = finishWaitMayGC(state, leaf, task, n, err);
    if (fs.code() == StatusCode::kRuntimeError) {
      Status raised = vm::raiseValueMayGC(state, leaf, err);
      if (raised.code() == StatusCode::kFatal) return finishDispatchMayGC(task, raised, budget);
      leaf->resumeStatus = raised.code();
    } else if (!fs.isOk()) {
      return finishDispatchMayGC(task, fs, budget);
    }
    leaf->resumeCount = n;
  } else {
    leaf->resumeCount = 0;
  }
  task.suspend = LuaTask::Suspend::kNone;
  return finishDispatchMayGC(task, vm::executeMayGC(state, t), budget);
}

Status RuntimeImpl::startTaskMayGC(LuaTask& task) {
  vm::ThreadData* t = task.data();
  Status st = vm::resolveCallableMayGC(state, t, 2, -1);
  if (!st.isOk()) return st;
  if (t->stack[2].isLuaClosure()) {
    st = vm::pushLuaFrameMayGC(state, t, 2, -1, vm::kFrameEntry);
    if (!st.isOk()) return st;
    return vm::executeMayGC(state, t);
  }
  return vm::callNativeMayGC(state, t, 2, -1, vm::kFrameEntry);
}

RunOutcome RuntimeImpl::finishDispatchMayGC(LuaTask& task, Status st, int32_t& budget) {
  vm::ThreadData* t = task.data();
  // What the dispatch left of its budget, before completion recycles the thread: the
  // innermost coroutine of a suspended chain holds it (vm/thread.h).
  vm::ThreadData* holder = t;
  while (holder->suspendedChild) holder = holder->suspendedChild;
  budget = std::clamp(holder->budget, 0, budget);
  switch (st.code()) {
    case StatusCode::kYield: {
      // Publication: the task leaves its worker, and the collector will reach its frames
      // only through the registry's thread, which must still own them.
      if (!rootIntact(registryRoot(task, "rt.publish"), t)) {
        failClosed("root publication: task " + std::to_string(task.id()) + " left its worker unreachable from the registry");
        return RunOutcome::kPanicked;
      }
      t->taskSuspending = false;
      vm::ThreadData* leaf = t;
      while (leaf->suspendedChild) leaf = leaf->suspendedChild;
      if (leaf->preempted) {
        leaf->preempted = false;
        // Its budget's end is a gate: the step that ran ahead ends in decision order.
        if (Status gate = detGateMayGC(task); !gate.isOk()) return RunOutcome::kCancelled;
        if (task.cancelRequested() && !task.stepEnded) return cancelTaskMayGC(task);
        return RunOutcome::kBudgetSpent;
      }
      if (task.suspend == LuaTask::Suspend::kYield) return RunOutcome::kYielded;
      return RunOutcome::kSuspended;
    }
    case StatusCode::kOk:
      (void)detGateMayGC(task);  // its end is a gate (closed: nothing observes it)
      completeTask(&task, TaskState::kCompleted);
      return RunOutcome::kCompleted;
    case StatusCode::kFatal:
      failClosed(state.heap().failureReason().empty() ? "collector failure" : state.heap().failureReason());
      completeTask(&task, TaskState::kPanicked);
      return RunOutcome::kPanicked;
    default: {
      Status closedSt = vm::unwindForErrorMayGC(state, t, 0, 2, st);
      vm::normaliseErrorValue(state, t, closedSt);
      t->frameCount = 0;
      t->top = 2;
      (void)detGateMayGC(task);
      completeTask(&task, TaskState::kPanicked);
      return RunOutcome::kPanicked;
    }
  }
}

// Closes the task's thread, and first every coroutine of a suspended chain (innermost
// first), as coroutine.close would: their to-be-closed variables close with no error.
RunOutcome RuntimeImpl::cancelTaskMayGC(LuaTask& task) {
  std::vector<vm::ThreadData*> chain;
  for (vm::ThreadData* cur = task.data(); cur; cur = cur->suspendedChild) chain.push_back(cur);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    vm::ThreadData* t = *it;
    t->suspendedChild = nullptr;
    t->resumer = nullptr;
    t->taskSuspending = false;
    t->status = vm::ThreadStatus::Suspended;
    Status st = vm::closeCoroutineMayGC(state, t);
    if (st.code() == StatusCode::kFatal) failClosed(state.heap().failureReason());
    t->status = vm::ThreadStatus::Dead;
  }
  task.data()->status = vm::ThreadStatus::Dead;
  (void)detGateMayGC(task);
  completeTask(&task, TaskState::kCancelled);
  return RunOutcome::kCancelled;
}

// --- Task life cycle ----------------------------------------------------------------

void RuntimeImpl::completeTask(LuaTask* task, TaskState outcome) {
  std::vector<Wake> wake;
  std::vector<LuaTask*> unclaimed;  // holdForWake's references to drop after the lock
  vm::ThreadData* d = task->data();
  // Before doneLock: it takes the registry shard's lock, which is taken before
  // doneLock (reportUnobservedErrors, describeBlockedTasks). No collection can clear
  // the mark before the writes below: this thread is attached and reaches no safepoint.
  noteRecordWritten(*task);
  {
    std::lock_guard lock(task->doneLock);
    if (outcome == TaskState::kCompleted && d->top > 2) {
      task->resultCount = d->top - 2;
      task->results = std::make_unique<Value[]>(task->resultCount);
      std::copy(d->stack + 2, d->stack + d->top, task->results.get());
    }
    if (outcome == TaskState::kPanicked) task->makeAside().error = d->error;
    task->done = true;
    task->outcome = outcome;
    // Claimed under doneLock: an awaiter leaving by timeout removes its Waiter under
    // the same lock, so no Waiter here is stale memory.
    for (Waiter* w = task->awaiters, *next; w; w = next) {
      // The Waiter is read before the claim shows: its task may then start another wait.
      next = w->next;
      LuaTask* awaiter = w->task;
      bool blocking = awaiter->wait.holdForWake(*awaiter);
      if (awaiter->wait.claim(w->gen, w->caseIndex)) wake.push_back({awaiter, blocking});
      else if (blocking) unclaimed.push_back(awaiter);
    }
    task->awaiters = nullptr;
  }
  d->status = vm::ThreadStatus::Dead;
  task->handle = nullptr;
  // The thread is garbage now unless the script kept it (coroutine.running).
  if (!task->isMain) {
    d->task = nullptr;
    task->thread = nullptr;
    vm::recycleTaskThread(state, d);
    // Nothing left to trace or report: it leaves the registry now, so collections do
    // not walk finished tasks that only wait for their handles to die.
    bool traced = outcome == TaskState::kPanicked ||
                  std::any_of(task->results.get(), task->results.get() + task->resultCount,
                              [](const Value& v) { return v.isCollectable(); });
    if (!traced) removeTask(task);
  }
  for (LuaTask* u : unclaimed) u->release();
  for (const Wake& w : wake) wakeTask(w.task, w.blocking);
  if (!task->isMain && aliveTasks.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    std::lock_guard lock(finishMutex);
    finishCv.notify_all();
  }
}

void RuntimeImpl::wakeTask(LuaTask* task, bool blocking) {
  if (task->isMain) {
    // Never queued: the host thread resumes it, asleep in its own wait or in the wait
    // of a task it ran (hostWaiter), which then resumes it nested (wait.cpp).
    task->wait.signalBlocked();
    if (LuaTask* h = hostWaiter.load(std::memory_order_seq_cst)) h->wait.signalBlocked();
    if (blocking) task->release();  // holdForWake's
    return;
  }
  if (!blocking) {
    scheduler->wake(task);
    return;
  }
  task->wait.signalBlocked();
  task->release();  // holdForWake's
}

bool RuntimeImpl::cancelTask(LuaTask* task) {
  bool first;
  if (task->isMain) {
    first = !task->mainCancel.exchange(true, std::memory_order_acq_rel);
  } else {
    first = scheduler->cancel(task);
  }
  uint64_t gen = task->wait.observedGen();
  if (first) {
    // A blocking job: a queued one is dropped and its wait (begun before it was queued)
    // ends here; a running one ends first, and the dispatch its end brings sees the request.
    switch (blockingPool.cancel(task)) {
      case BlockingPool::Cancel::kRunning:
        return first;
      case BlockingPool::Cancel::kRemoved:
        gen = task->wait.gen();
        break;
      case BlockingPool::Cancel::kNotHere:
        break;
    }
    bool blocking = task->wait.holdForWake(*task);
    if (task->wait.cancel(gen)) wakeTask(task, blocking);
    else if (blocking) task->release();
  }
  return first;
}

Status RuntimeImpl::ensureWorkers() {
  if (workersTried_.load(std::memory_order_acquire)) [[likely]] {
    if (startStatus_.isOk()) return Status::ok();
  } else {
    std::lock_guard lock(workersMutex_);
    if (!workersTried_.load(std::memory_order_relaxed)) {
      startStatus_ = scheduler->start();
      if (!startStatus_.isOk()) failClosed("worker start: " + scheduler->closeReason());
      workersTried_.store(true, std::memory_order_release);
    }
    if (startStatus_.isOk()) return Status::ok();
  }
  return Status(StatusCode::kFatal);
}

void RuntimeImpl::probeForDeadlock() {
  if (!ensureWorkers().isOk()) return;  // closed: the waiter sees it and ends
  auto* probe = new ProbeTask();
  scheduler->spawn(probe);
  scheduler->flushHostLane();  // from the host thread it must reach the workers, which park again
  probe->release();
}

void RuntimeImpl::abortPromptWait(LuaTask& waiter) {
  mainAbortReason = "deadlock: all tasks are blocked\n" + describeBlockedTasks();
  while (!mainAbortReason.empty() && mainAbortReason.back() == '\n') mainAbortReason.pop_back();
  deadlocked.store(false, std::memory_order_release);
  waiter.wait.abort(waiter.wait.gen());
}

void RuntimeImpl::reportDeadlockAndExit() {
  writeRecording();
  std::fflush(stdout);
  std::string report = "weft: deadlock: all tasks are blocked\n" + describeBlockedTasks();
  std::fputs(report.c_str(), stderr);
  std::fflush(stderr);
  std::_Exit(1);
}

void RuntimeImpl::failClosed(const std::string& reason) { closeAll(reason); }

void RuntimeImpl::closeAll(const std::string& reason) {
  {
    std::lock_guard lock(reasonMutex_);
    if (closed_.load(std::memory_order_relaxed)) return;
    reason_ = reason;
    closed_.store(true, std::memory_order_release);
  }
  if (scheduler) scheduler->close(reason.empty() ? "the program is exiting" : reason);
  if (!reason.empty()) state.heap().closeHeap(reason);
  // Wake every blocking waiter so that nobody stays asleep on a closed runtime.
  for (LuaTask* t : retainAllTasks()) {
    t->wait.signalBlocked();
    t->release();
  }
  std::lock_guard lock(finishMutex);
  finishCv.notify_all();
}

std::string RuntimeImpl::closeReason() const {
  std::lock_guard lock(reasonMutex_);
  return reason_;
}

// --- Runtime ------------------------------------------------------------------------

Runtime::Runtime(std::unique_ptr<RuntimeImpl> impl) : impl_(std::move(impl)) {}

Runtime::~Runtime() {
  stopNow();
  RuntimeImpl& rt = *impl_;
  // The pool's threads end before the main task goes: the end of a job runs the drained
  // hook, which reads mainTask (RuntimeImpl's constructor). ~RuntimeImpl stops it too,
  // but only after the write below.
  rt.blockingPool.stop();
  rt.state.heap().removeRootSource(&rt);
  if (rt.mainTask) {
    rt.mainTask->release();
    rt.mainTask = nullptr;
  }
}

Expected<std::unique_ptr<Runtime>> Runtime::start(vm::State& state, const RuntimeOptions& options) {
  auto impl = std::make_unique<RuntimeImpl>(state, options);
  RuntimeImpl& rt = *impl;
  state.heap().addRootSource(&rt);
  sched::SchedulerOptions so;
  so.workers = rt.options.workers;
  so.seed = options.seed;
  so.slice = options.budget;
  so.trace = options.trace;
  rt.options.deterministic.budget = uint32_t(so.slice);
  rt.options.deterministic.firstId = sched::Task::nextId();  // the main task's, made next
  so.deterministic = rt.options.deterministic;
  rt.scheduler = std::make_unique<sched::Scheduler>(so, rt);
  if (so.deterministic.enabled) rt.installDeterministicHooks();
  else rt.installHostLaneHooks();
  auto runtime = std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
  rt.installOsWaitHooks();
  Status st = openTaskLib(rt);
  if (!st.isOk()) return Error{st.code(), "cannot open the task library: not enough memory"};
  return runtime;
}

Status Runtime::finishMayGC() {
  RuntimeImpl& rt = *impl_;
  rt.cancelAllTasks();
  if (rt.scheduler->deterministic()) return rt.finishDeterministicMayGC();
  rt.state.heap().detach(rt.state.mutator());
  {
    std::unique_lock lock(rt.finishMutex);
    rt.finishCv.wait(lock, [&] { return rt.aliveTasks.load(std::memory_order_acquire) == 0 || rt.closed(); });
  }
  Status st = rt.state.heap().attach(rt.state.mutator());
  if (vm::ThreadData* running = rt.state.context().running) vm::markStackDirty(running);  // as attachCurrent
  rt.scheduler->shutdown();
  rt.blockingPool.stop();
  rt.reportUnobservedErrors();
  if (rt.closed() || !st.isOk()) return Status(StatusCode::kFatal);
  return Status::ok();
}

bool Runtime::stopNow() {
  impl_->writeRecording();
  impl_->closeAll("");
  // A worker cannot join itself (os.exit inside a task): the others stop at their next
  // dispatch boundary and the process ends without closing the state.
  if (sched::Scheduler::currentWorker()) return false;
  if (impl_->scheduler) impl_->scheduler->shutdown();
  return true;
}

bool Runtime::failed() const { return !impl_->closeReason().empty(); }
std::string Runtime::failureReason() const { return impl_->closeReason(); }

}  // namespace weft::runtime
