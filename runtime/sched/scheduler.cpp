// The scheduler's public operations and the publication paths (protocol in scheduler.h
// and docs/design/scheduler.md; the worker loop is in worker.cpp).
#include "runtime/sched/scheduler.h"

#include <algorithm>
#include <system_error>
#include <utility>

#include "runtime/sched/internals.h"

namespace weft::runtime {

thread_local constinit Worker* tlsCurrentWorker = nullptr;
thread_local constinit uint32_t tlsPublications = 0;

namespace {

std::atomic<uint64_t> nextSchedulerSerial{1};  // relaxed: only uniqueness matters

uint64_t seedFrom(const SchedulerOptions& options) {
  if (options.seed != 0) return options.seed;
  return static_cast<uint64_t>(Clock::now().time_since_epoch().count());
}

unsigned workersFrom(const SchedulerOptions& options) {
  if (options.workers != 0) return options.workers;
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

SchedulerInternals::SchedulerInternals(Scheduler& s, const SchedulerOptions& options, Executor& e)
    : self(s),
      executor(e),
      workerCount(workersFrom(options)),
      slice(std::max<int32_t>(1, options.slice)),
      tracing(options.trace),
      traceLimit(options.traceLimit),
      epoch(Clock::now()),
      idle(workerCount),
      timers({[this] { notifyParked(); }, [this](const char* what) { self.close(what); }}),
      chooser(seedFrom(options)),
      serial(nextSchedulerSerial.fetch_add(1, std::memory_order_relaxed)) {
  if (options.deterministic.enabled) det = std::make_unique<DetCoordinator>(*this, options.deterministic);
  for (unsigned i = 0; i < workerCount; ++i) {
    workers.emplace_back(new Worker(self, i));
    cores.push_back(std::make_unique<WorkerCore>(workers.back().get(), workerCount,
                                                 topology.victimTiers(i, workerCount), chooser.next()));
  }
}

WorkerCore* SchedulerInternals::localCore() {
  Worker* w = tlsCurrentWorker;
  if (!w || &w->scheduler() != &self) return nullptr;
  Carrier* m = tlsCarrier;
  return m->dispatching && !m->blocking ? cores[w->index()].get() : nullptr;
}

void SchedulerInternals::publish(Task* t, bool lifo) {
  if (det) return det->enqueue(t);
  if (t->sticky()) return publishPinned(t);
  WorkerCore* c = localCore();
  if (!c && onHostThread()) return publishToHost(t);
  if (!c) {
    TaskList list;
    list.push(t);
    return pushInjection(list);
  }
  if (lifo) {
    std::swap(t, c->lifo);  // the slot's previous task, if any, goes to the queue
    if (!t) return;
  }
  pushLocal(*c, t, false);
}

// A new task from a worker's dispatch goes to its spawn stack unless a sibling could
// take it now (spawn_stack.h): fork-join work then runs depth first, so a tree of tasks
// keeps few of them alive at once. An overloaded worker (load_monitor.h) sends it to the
// injection queue instead, which busy siblings poll after their spent slices and idle
// ones search (the push wakes one).
void SchedulerInternals::publishSpawned(Task* t) {
  if (det) return det->enqueue(t);
  if (t->sticky()) return publishPinned(t);
  WorkerCore* c = localCore();
  if (!c && !tlsHost.dispatching) return publish(t, false);  // the host lane's too
  if (!c) {
    // A task the host runs spawns for the workers: its tree then runs in their order
    // (depth first on the spawn stacks); only the main task's own spawns use the lane.
    TaskList list;
    list.push(t);
    return pushInjection(list);
  }
  if (c->load.retargeting()) [[unlikely]] {
    bump(c->counters.spawnsRetargeted);
    TaskList list;
    list.push(t);
    return pushInjection(list);
  }
  if (c->spawned.batchFull() || idle.someoneHungry()) return pushLocal(*c, t, false);
  if (c->spawned.full()) shareSpawned(*c, SpawnStack::kCapacity / 2);
  c->spawned.push(t);
  noteMax(c->counters.queueDepthMax, c->ring.size() + c->spawned.size());
}

// Moves the spawn stack's oldest tasks to the local queue, where siblings can steal them.
void SchedulerInternals::shareSpawned(WorkerCore& c, uint32_t count) {
  TaskList oldest;
  c.spawned.spillOldest(count, oldest);
  TaskList spill;
  while (Task* t = oldest.pop()) c.ring.push(t, false, spill);
  noteMax(c.counters.queueDepthMax, c.ring.size() + c.spawned.size());
  if (!spill.empty()) return pushInjection(spill);
  notifyParked();
}

void SchedulerInternals::publishPinned(Task* t) {
  unsigned home = static_cast<unsigned>(t->homeWorker());
  if (!cores[home]->pinned.push(t)) return t->release();  // shut down
  WorkerCore* c = localCore();
  if (c && c->worker->index() == home) return;  // it finds the task at its next dispatch
  // The mutexes order this with the home worker's re-check after it joins the sleepers.
  unparkById(home);
}

void SchedulerInternals::pushLocal(WorkerCore& c, Task* t, bool migrated) {
  TaskList spill;
  c.ring.push(t, migrated, spill);
  noteMax(c.counters.queueDepthMax, c.ring.size() + c.spawned.size());
  if (!spill.empty()) return pushInjection(spill);
  notifyParked();
}

void SchedulerInternals::pushInjection(TaskList& list) {
  if (!injection.pushAll(list)) {
    while (Task* t = list.pop()) t->release();  // shut down: never queued, never run
    return;
  }
  notifyParked();
}

// Called after the task is stored: claimOneToWake's RMW orders the two (idle.h).
void SchedulerInternals::notifyParked() {
  int w = idle.claimOneToWake();
  if (w >= 0) resume(static_cast<unsigned>(w));
}

void SchedulerInternals::unparkById(unsigned w) {
  if (idle.claimById(w)) resume(w);
}

// Under the idle lock, with every worker among the sleepers (parked, or released by a
// blocked thread): they have empty LIFO slots and local queues (internals.h), and none
// can be woken while the lock is held, so this reads a moment in which no task can run
// on a worker. A thread blocked on the OS may still publish: osBlocked counts them.
// Timers are read first: a callback publishes before its count drops (timer_service.h).
bool SchedulerInternals::nothingPending() {
  if (isClosed() || timers.pending() != 0 || !injection.empty()) return false;
  if (osBlocked.load(std::memory_order_relaxed) != 0) return false;
  return std::all_of(cores.begin(), cores.end(),
                     [](const auto& c) { return c->pinned.empty() && c->ring.empty(); });
}

// Runs after the parker's RMW on the idle state, which orders these reads (idle.h).
void SchedulerInternals::notifyIfWorkPending() {
  bool work = !injection.empty() ||
              std::any_of(cores.begin(), cores.end(), [](const auto& c) { return !c->ring.empty(); });
  if (work) notifyParked();
}

void SchedulerInternals::drainAll() {
  for (auto& c : cores) {
    if (c->lifo) c->lifo->release();
    c->lifo = nullptr;
    while (Task* t = c->spawned.pop()) t->release();
    while (Task* t = c->ring.pop().task) t->release();
    TaskList pinned = c->pinned.close();
    while (Task* t = pinned.pop()) t->release();
  }
  TaskList rest = injection.close();
  while (Task* t = rest.pop()) t->release();
  if (hostSlot) hostSlot->release();
  hostSlot = nullptr;
}

Scheduler::Scheduler(const SchedulerOptions& options, Executor& executor)
    : in_(std::make_unique<SchedulerInternals>(*this, options, executor)),
      deterministic_(options.deterministic.enabled) {}

Scheduler::~Scheduler() { shutdown(); }

void SchedulerInternals::readTopology() {
  if (std::exchange(topologyRead, true)) return;
  topology = Topology::fromEnvironment();
  if (topology.flat()) return;
  for (unsigned i = 0; i < workerCount; ++i) cores[i]->victims.retier(topology.victimTiers(i, workerCount));
}

Status Scheduler::start() {
  std::lock_guard lock(in_->lifecycleMu);
  WEFT_CHECK(!in_->started && !in_->joined, "a scheduler starts once");
  in_->started = true;
  // The coordinator runs on the main task's thread; runners run steps ahead beside it.
  if (in_->det) return in_->det->startRunners();
  in_->readTopology();  // before the workers: each owns its core's victim order
  unsigned n = in_->workerCount;
  in_->startStatus.assign(n, Status::ok());
  in_->startLatch = std::make_unique<std::latch>(n);
  in_->timers.start();
  for (unsigned i = 0; i < n; ++i) {
    bool started;
    {
      std::lock_guard pool(in_->poolMu);
      started = in_->startCarrier(static_cast<int>(i)) != nullptr;
    }
    if (!started) {
      close("could not start a worker thread");  // outside poolMu: close takes it
      in_->startStatus[i] = Status(StatusCode::kFatal);
      in_->startLatch->count_down(n - i);
      break;
    }
  }
  in_->startLatch->wait();
  for (const Status& s : in_->startStatus)
    if (!s.isOk()) return s;
  return Status::ok();
}

unsigned Scheduler::workerCount() const { return in_->workerCount; }

bool Scheduler::spawn(Task* task) {
  if (in_->isClosed()) return false;
  if (task->sticky()) {
    Worker* w = tlsCurrentWorker;
    TaskAccess::setHome(task, w && &w->scheduler() == this ? static_cast<int>(w->index()) : 0);
  }
  task->retain();  // the scheduler's reference, dropped when the task leaves its care
  SchedulerInternals::stampReady(task);
  in_->publishSpawned(task);
  return true;
}

// A running task whose step runs ahead in deterministic mode is ready, as far as the
// program can tell: a wake or a cancel treats it so. Asked once the task's state reads
// running: the acquire that read it orders the runner's kAhead (set before beginRun).
bool Scheduler::runsAhead(const Task* task) const { return in_->det && in_->det->showsReady(task); }

bool Scheduler::wake(Task* task) {
  auto& bits = TaskAccess::bits(task);
  uint32_t cur = bits.load(std::memory_order_acquire);
  while (true) {
    uint32_t next;
    TaskState s = stateOf(cur);
    if (s == TaskState::kSuspended) {
      next = (cur & kCancel) | stateBits(TaskState::kReady);
    } else if (s == TaskState::kRunning && !(cur & kNotified) && !runsAhead(task)) {
      next = cur | kNotified;
    } else {
      return false;  // ready (coalesced), already notified, or terminal
    }
    // acq_rel: publishes the waker's writes to the worker that dispatches the task.
    if (bits.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_acquire)) break;
  }
  if (stateOf(cur) == TaskState::kRunning) return false;
  task->retain();
  SchedulerInternals::stampReady(task);
  in_->publish(task, true);
  return true;
}

bool Scheduler::cancel(Task* task) {
  auto& bits = TaskAccess::bits(task);
  uint32_t cur = bits.load(std::memory_order_acquire);
  while (true) {
    TaskState s = stateOf(cur);
    if ((cur & kCancel) || isTerminal(s)) return false;
    uint32_t next = cur | kCancel;
    if (s == TaskState::kSuspended) next = kCancel | stateBits(TaskState::kReady);
    // Running: also notified, so that a dispatch ending in kSuspended sees the request
    // (not a step running ahead: its task is ready, as in wake).
    if (s == TaskState::kRunning && !runsAhead(task)) next |= kNotified;
    if (bits.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_acquire)) break;
  }
  if (stateOf(cur) == TaskState::kSuspended) {
    task->retain();
    SchedulerInternals::stampReady(task);
    in_->publish(task, true);
  }
  return true;
}

TimerId Scheduler::addTimer(Clock::time_point deadline, std::function<void()> fn) {
  if (in_->det) {
    auto since = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
    return in_->det->addTimer(uint64_t(std::max<int64_t>(since, 0)), std::move(fn));
  }
  return in_->timers.add(deadline, std::move(fn));
}

bool Scheduler::cancelTimer(TimerId id) { return in_->det ? in_->det->cancelTimer(id) : in_->timers.cancel(id); }

uint64_t Scheduler::timersPending() const { return in_->timers.pending(); }


Clock::time_point Scheduler::now() const {
  if (!in_->det) return Clock::now();
  // The logical clock starts at the clock's epoch, so that every run reads the same times.
  return Clock::time_point(std::chrono::nanoseconds(in_->det->nowNanos()));
}

InlineRun Scheduler::runInline(Task* waiter, const std::function<bool()>& enabled) {
  WEFT_CHECK(in_->det, "runInline is deterministic mode's");
  return in_->det->runInline(waiter, enabled);
}

bool Scheduler::passGate(Task* task) { return !in_->det || in_->det->passGate(task); }
bool Scheduler::continueStep(Task* task, int32_t budgetLeft) {
  return in_->det && in_->det->continueInPlace(task, budgetLeft);
}

bool Scheduler::waitCommitted(Task* task) { return in_->det->waitCommitted(task); }

bool Scheduler::showsReady(const Task* task) { return in_->det && in_->det->showsReady(task); }

void Scheduler::chargeInline(int64_t units) {
  if (in_->det) in_->det->charge(units);
}

std::string Scheduler::finishRecording() { return in_->det ? in_->det->finish() : ""; }

std::string Scheduler::divergence() const { return in_->det ? in_->det->divergence() : ""; }

Status Scheduler::enterBlocking(Worker& worker, Blocking kind) {
  if (in_->det) return Status::ok();  // one thread runs everything: nothing to hand over
  WEFT_CHECK(tlsCurrentWorker == &worker && tlsCarrier, "enterBlocking runs on the worker's thread");
  WEFT_CHECK(tlsCarrier->dispatching && !tlsCarrier->blocking,
             "a blocking region is inside a dispatch, not nested");
  return in_->enterBlocking(*tlsCarrier, *in_->cores[worker.index()], kind);
}

void Scheduler::leaveBlocking(Worker& worker) {
  if (in_->det) return;
  WEFT_CHECK(tlsCurrentWorker == &worker && tlsCarrier && tlsCarrier->blocking,
             "leaveBlocking ends the calling thread's region");
  in_->leaveBlocking(*tlsCarrier, *in_->cores[worker.index()]);
}

Worker* Scheduler::currentWorker() { return tlsCurrentWorker; }

unsigned Scheduler::threadCount() const {
  std::lock_guard lock(in_->poolMu);
  return static_cast<unsigned>(in_->carriers.size());
}

void Scheduler::shutdown() {
  Worker* w = tlsCurrentWorker;
  WEFT_CHECK(!w || &w->scheduler() != this, "shutdown is not called from a worker");
  std::lock_guard lock(in_->lifecycleMu);
  if (in_->joined) return;
  in_->joined = true;
  close("the scheduler was shut down");
  // No thread starts after close (startCarrier's callers check under poolMu), so one
  // snapshot covers them all; joined outside the lock, which they take to leave.
  std::vector<Carrier*> all;
  {
    std::lock_guard pool(in_->poolMu);
    for (auto& m : in_->carriers) all.push_back(m.get());
  }
  for (Carrier* m : all)
    if (m->thread.joinable()) m->thread.join();
  in_->timers.stop();
  in_->drainAll();
  if (in_->det) {
    in_->det->joinThreads();
    in_->det->drain();
  }
}

void Scheduler::close(const std::string& reason) {
  {
    std::lock_guard lock(in_->closeMu);
    if (in_->closed.load(std::memory_order_relaxed)) return;  // the first reason wins
    in_->closeReason = reason;
    in_->closed.store(true, std::memory_order_release);
  }
  // After the store: a worker that joins the sleepers later sees `closed` (the idle
  // mutex orders it) and does not park; a spare that joins the pool later sees it too
  // (poolMu orders it).
  for (unsigned w : in_->idle.claimAll()) in_->resume(w);
  if (in_->det) in_->det->onClosed();
  std::lock_guard pool(in_->poolMu);
  for (Carrier* m : in_->spares) m->parker.unpark();
}

bool Scheduler::closed() const { return in_->isClosed(); }

std::string Scheduler::closeReason() const {
  std::lock_guard lock(in_->closeMu);
  return in_->closeReason;
}

uint64_t Scheduler::choose(uint64_t n) {
  WEFT_CHECK(n > 0, "choose needs a non-empty range");
  if (in_->det) return in_->det->chooseCase(n);
  std::lock_guard lock(in_->chooserMu);
  return in_->chooser.below(n);
}

std::vector<WorkerStats> Scheduler::stats() const {
  std::vector<WorkerStats> out;
  for (const auto& w : in_->workers) out.push_back(w->stats());
  return out;
}

WorkerStats Worker::stats() const {
  const WorkerCore& c = *sched_.in_->cores[index_];
  const WorkerCounters& k = c.counters;
  auto get = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  WorkerStats s;
  s.tasksRun = get(k.tasksRun);
  for (const auto& v : k.stealsFrom) s.stealsFrom.push_back(get(v));
  s.stealsFromInjection = get(k.stealsFromInjection);
  s.migrations = get(k.migrations);
  s.parks = get(k.parks);
  s.wakeups = get(k.wakeups);
  s.budgetExhaustions = get(k.budgetExhaustions);
  s.queueDepth = c.ring.size() + c.spawned.size();
  s.queueDepthMax = get(k.queueDepthMax);
  s.gcPauses = get(k.gcPauses);
  s.gcPauseTotalNanos = get(k.gcPauseTotalNanos);
  s.gcPauseMaxNanos = get(k.gcPauseMaxNanos);
  s.spawnsRetargeted = get(k.spawnsRetargeted);
  s.readyDelay = k.readyDelay.snapshot();
  return s;
}

HistogramSnapshot Scheduler::timerLateness() const { return in_->timers.lateness(); }

std::vector<TraceEvent> Scheduler::trace(unsigned w, uint64_t& dropped) const {
  const TraceBuffer& b = w == in_->workerCount ? in_->hostTrace : in_->cores[w]->trace;
  std::lock_guard lock(b.mu);
  dropped = b.dropped;
  return b.events;
}

void Worker::notePause(uint64_t nanos) {
  WorkerCounters& k = sched_.in_->cores[index_]->counters;
  bump(k.gcPauses);
  bump(k.gcPauseTotalNanos, nanos);
  noteMax(k.gcPauseMaxNanos, nanos);
}

}  // namespace weft::runtime
