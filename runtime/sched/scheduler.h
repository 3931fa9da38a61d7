// The M:N work-stealing scheduler. It knows nothing of Lua: a Task is a unit of work
// that an Executor (the VM side, runtime/executor.*) runs for one dispatch at a time.
//
// Protocol (design: docs/design/scheduler.md):
//  - N worker threads. Each owns a bounded local ready queue (kLocalQueueCapacity) that
//    only it pushes and pops, and that siblings steal half of in one batch; a one-task
//    LIFO slot for the task it just woke; a private spawn stack for the tasks its
//    dispatches spawn while no sibling is hungry (spawn_stack.h: depth first across
//    dispatches, spawn order within one); and a pinned queue for sticky tasks (never
//    stolen). A global injection queue takes tasks published from outside the workers
//    and the overflow of a full local queue (half of it moves at once).
//  - Finding work, in order: the LIFO slot (at most kLifoLimit dispatches in a row while
//    other work is queued locally), the spawn stack (its tasks run on what is left of
//    the slice; once a slice is spent the shared queues go first), the
//    pinned queue, the local queue (every kInjectionInterval-th dispatch, and the one after
//    a dispatch that spent its budget on a task not taken from the injection queue, poll
//    the injection queue first), stealing from siblings (tier by tier: same NUMA node,
//    same package, the rest (topology.h); seeded random order within a tier, each sibling
//    at most once per search, at most half the workers searching at once), the
//    injection queue, then parking. A requeued task (yield, spent budget) goes behind the
//    spawn stack's tasks, which move to the local queue first.
//  - Load balancing: a worker whose queue of CPU-bound tasks stays much deeper than its
//    lightest sibling's sends its spawns to the injection queue until that ends
//    (load_monitor.h); sticky spawns are never sent away.
//  - Parking: a worker with no work parks on its own futex. A publication that finds an
//    idle worker and no searcher wakes exactly one. When every worker is idle none wakes
//    up on its own; timers are driven by one timer thread that sleeps until the earliest
//    deadline.
//  - Task states change only by single atomic steps on Task::bits_ (state, a notified
//    bit, a cancel bit): a task woken twice while ready is queued once; a wake that
//    arrives while the task runs sets the notified bit and the task is requeued when
//    its dispatch ends with kSuspended; a cancellation racing a wake queues it once.
//  - A task migrates at most once between two of its ready publications: a stolen task
//    is marked and is not stolen again until it is published again.
//  - A dispatch that throws is contained: the task becomes kPanicked, the worker lives.
//  - Workers and threads (Go's P and M): a worker is the queues and their policy; a
//    scheduler thread runs one worker's dispatches at a time. Each worker starts with its
//    own thread. A thread about to block inside a dispatch (enterBlocking) releases its
//    worker, which a pooled spare thread (created on demand, parked when unused) runs
//    meanwhile; leaving the region, the thread takes its worker back before it runs Lua
//    again (the holder gives it up at its next dispatch boundary). So at most one thread
//    runs a worker's tasks at a time, at most `workers` threads run tasks at once, and a
//    worker's queue never waits for a blocked thread.
//  - The host lane (host_lane.cpp): the thread that runs the main task is no worker, but
//    its own publications (the wakes and spawns of the main chunk, and of the tasks it
//    runs) go to a one-task slot, like a worker's LIFO slot, that it runs itself while
//    its task waits (runOnHost). The slot is published like any other task when the host
//    thread goes on without waiting (flushHostLane: after a slice of its work, before it
//    returns to its embedder or waits on the OS).
//  - Deterministic mode (SchedulerOptions::deterministic, deterministic.h) replaces all
//    of the above: no thread starts, every publication goes to one coordinator, and the
//    thread of the main task runs every task's steps as its seeded chooser decides.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/sched/histogram.h"
#include "runtime/sched/schedule_file.h"
#include "weft/status.h"

namespace weft::runtime {

class Scheduler;
class Worker;
struct SchedulerInternals;  // runtime/sched/internals.h
struct DetStep;             // runtime/sched/deterministic.h

enum class TaskState : uint8_t { kReady, kRunning, kSuspended, kCompleted, kCancelled, kPanicked };
// "ready", "running", "suspended", "completed", "cancelled", "panicked".
const char* taskStateName(TaskState state);
inline bool isTerminal(TaskState s) { return s >= TaskState::kCompleted; }

// How one dispatch of a task ended (Executor::runTask).
enum class RunOutcome : uint8_t {
  kYielded,       // task.yield: back to the tail of the worker's local queue
  kBudgetSpent,   // the dispatch budget ran out: tail of the local queue (counted)
  kSuspended,     // waits for Scheduler::wake (channel, await, timer)
  kCompleted,     // terminal outcomes
  kCancelled,
  kPanicked,
};

// A unit of work. The VM's task derives from it. Reference counted: the scheduler holds
// a reference while the task is queued or running; creators hold their own.
class Task {
 public:
  Task();
  virtual ~Task();
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  uint64_t id() const { return id_; }   // unique, increasing, from 1
  static uint64_t nextId();             // the id the next task made will get (relaxed)
  TaskState state() const;              // acquire load
  bool cancelRequested() const;
  // Sticky tasks stay on the worker that spawned them (set before spawn).
  void setSticky(bool sticky) { sticky_ = sticky; }
  bool sticky() const { return sticky_; }
  int homeWorker() const { return home_; }  // sticky: its worker; otherwise -1
  // Index of the worker that ran the task last (-1 before its first dispatch).
  int lastWorker() const { return last_.load(std::memory_order_relaxed); }
  // Deterministic mode, on the task's thread during its step: whether the task was
  // cancelled before it last became ready (DetCoordinator::enqueue): its next step
  // starts with the cancellation.
  bool cancelledBeforeReady() const;
  // Deterministic mode, on the task's thread during its step: the step ends because an
  // ordered operation ended it, not by a yield or its budget (the task keeps its place
  // among the candidates as the newest: DetCoordinator::settleStep), with `budgetLeft`
  // of its budget (the work it did: which steps run ahead).
  void endStepAtOperation(int32_t budgetLeft);

  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Deletes the task when the last reference goes (acq_rel: the deleting thread sees
  // every write made before the other releases).
  void release();

 private:
  friend class Scheduler;
  friend class Worker;
  friend struct SchedulerInternals;
  friend struct TaskAccess;      // runtime/sched/task_list.h: the queues' internal view
  friend class DetCoordinator;
  std::atomic<uint32_t> bits_;   // TaskState in the low byte | kNotified | kCancel | kMigrated
  std::atomic<uint32_t> refs_{1};
  std::atomic<int> last_{-1};
  int home_ = -1;
  Task* next_ = nullptr;         // injection/pinned queue link (owned by whoever holds the queue lock)
  // When a sampled publication made the task ready (steady-clock ns; 0: not sampled).
  // Written by the publisher before the queue push, read by the dispatching worker after
  // the pop: the queue's own release/acquire orders the two.
  uint64_t readySince_ = 0;
  uint64_t id_;
  // Deterministic mode's state of the task's steps (deterministic.h), made on first use
  // (by a reader too: mutable) and freed with the task; null in the other modes, so
  // that a task record does not carry it.
  mutable std::atomic<DetStep*> det_{nullptr};
  // Last: a derived class's small fields go into the tail padding after it (the
  // runtime's LuaTask counts on it for its size class).
  bool sticky_ = false;
};

// Per-worker counters. Written only by the owning worker (relaxed atomics so that
// another thread may read a snapshot); the steal matrix row is indexed by the victim.
struct WorkerStats {
  uint64_t tasksRun = 0;
  std::vector<uint64_t> stealsFrom;   // [victim worker index]: tasks stolen from it
  uint64_t stealsFromInjection = 0;   // tasks taken from the injection queue
  uint64_t migrations = 0;            // dispatches of a task last run by another worker
  uint64_t parks = 0;
  uint64_t wakeups = 0;               // times this worker was unparked by a publication
  uint64_t budgetExhaustions = 0;
  uint64_t queueDepth = 0;            // local queue length now
  uint64_t queueDepthMax = 0;
  uint64_t gcPauses = 0;              // filled by the executor (its mutator's stops)
  uint64_t gcPauseTotalNanos = 0;
  uint64_t gcPauseMaxNanos = 0;
  uint64_t spawnsRetargeted = 0;      // spawns sent to the injection queue by the load monitor
  HistogramSnapshot readyDelay;       // publication to dispatch, sampled (telemetry.md)
};

// One span of a worker's time in the scheduler trace (SchedulerOptions::trace): a task's
// dispatch, cut where its thread blocked in a region (the worker ran others meanwhile).
// The first six are RunOutcome's, in its order.
enum class TraceSpan : uint8_t { kYielded, kBudgetSpent, kSuspended, kCompleted, kCancelled, kPanicked, kBlocked };
static_assert(uint8_t(TraceSpan::kPanicked) == uint8_t(RunOutcome::kPanicked));
struct TraceEvent {
  uint64_t task = 0;
  uint64_t startNanos = 0;  // since the scheduler was made
  uint64_t endNanos = 0;
  TraceSpan how = TraceSpan::kCompleted;  // how the span ended
};

// The VM side. All calls come from scheduler threads (a worker's first thread or a
// spare), on the calling thread's own behalf, unless said otherwise.
class Executor {
 public:
  virtual ~Executor() = default;
  // One dispatch of `task` on `worker`. Must not throw (a throw is contained anyway).
  // `budget` is the work units the dispatch may spend before it ends with kBudgetSpent;
  // the executor leaves in it what is left (a task from the spawn stack runs on what its
  // predecessors left of the slice).
  virtual RunOutcome runTask(Worker& worker, Task& task, int32_t& budget) = 0;
  // Start and end of every scheduler thread, on that thread (register and unregister its
  // mutator: the state is per thread, since a worker moves between threads). A non-ok
  // status closes the scheduler; onThreadStop then is not called. Spare threads start
  // on demand while the scheduler runs, so this may run at any time before shutdown.
  virtual Status onThreadStart() { return Status::ok(); }
  virtual void onThreadStop() {}
  // Around idleness: onIdle before the calling thread stops running `worker`'s tasks
  // (it searches, parks, gives the worker back to its blocked thread, or stops; detach
  // from the collector), onBusy before it dispatches again (attach; non-ok closes the
  // scheduler). They pair per thread.
  virtual void onIdle(Worker& worker) {}
  virtual Status onBusy(Worker& worker) { return Status::ok(); }
  // Every worker is parked or released by a thread blocked in a kTaskWait region, no
  // task is queued anywhere, no timer is pending and no thread blocks in a kOs region:
  // no task can run again unless a task-wait region's wait has already ended (the
  // executor knows its waits and checks). Called once per such moment, from the last
  // worker to park or the thread whose enterBlocking made it so, under the scheduler's
  // idle lock (so no publication can end the moment meanwhile); it may close the
  // scheduler but must not publish.
  virtual void onAllBlocked() {}
  // The host thread's own publication filled its empty lane (Scheduler::setHostThread):
  // the host must call flushHostLane within a slice of its work. On the host thread.
  virtual void onHostLaneFilled() {}
  // Deterministic mode (deterministic.h): whether a thread outside the scheduler may
  // still publish a task (an open port), so that a run with nothing to do waits for it
  // rather than ending as a deadlock.
  virtual bool mayPublishFromOutside() { return false; }
  // Deterministic mode: a replay met a decision its recording does not have (`what`
  // says where). Called on the coordinator thread; the executor ends the run.
  virtual void onDiverged(const std::string& what) {}
  // Deterministic mode's parallel steps: the calling thread is about to wait for another
  // thread's step (the coordinator for a committed step, a step at its gate for its
  // commit): detach it from the collector, then attach it again (non-ok closes the run).
  virtual void detachForStep() {}
  virtual Status attachAfterStep() { return Status::ok(); }
};

// Why a dispatch blocks its thread (Scheduler::enterBlocking).
enum class Blocking : uint8_t {
  kOs,        // file I/O, a child process: may end by itself, so it is possible future work
  kTaskWait,  // a task's wait under a native frame: only a task, a timer or close ends it
};

// Deterministic mode's chooser (deterministic.h, docs/design/deterministic.md).
enum class DetStrategy : uint8_t {
  kRandom,   // seeded random choices, biased to the newest candidates (deterministic.cpp)
  kUniform,  // every decision uniform over its candidates (the explorer's random runs)
  kPct,     // PCT: random task priorities, pctDepth - 1 priority change points
  kReplay,  // exactly the decisions of `script`; a different candidate set is a divergence
  kPrefix,  // `script`'s decisions while they fit, then no preemption (exploration)
};

struct DeterministicOptions {
  bool enabled = false;
  uint64_t seed = 1;
  uint32_t budget = 0;      // the slice, recorded with the decisions (SchedulerOptions::slice)
  // The id of the run's first task (its main task). Decisions name tasks by their id
  // counted from it (the first is 1), so that a run's decisions do not depend on the tasks
  // other runtimes of the process made before (Task::nextId; default: ids as they are).
  uint64_t firstId = 1;
  DetStrategy strategy = DetStrategy::kRandom;
  uint32_t pctDepth = 0;
  uint64_t pctSteps = 0;    // kPct: change points fall among the first pctSteps steps
  Schedule script;          // kReplay, kPrefix
  std::string recordPath;   // where finishRecording writes the decisions ("": nowhere)
};

struct SchedulerOptions {
  unsigned workers = 0;        // 0: std::thread::hardware_concurrency()
  uint64_t seed = 0;           // victim order and chooser; 0: from the clock
  int32_t slice = 10000;       // work units per slice (Executor::runTask's budget)
  bool trace = false;          // record every dispatch's span (Scheduler::trace)
  size_t traceLimit = size_t(1) << 20;  // spans kept per worker; later ones are counted
  DeterministicOptions deterministic{};
};

// Which scheduler the calling thread is the host of (Scheduler::bindHost), with that
// scheduler's serial (an address may be reused by a later scheduler), and whether it is
// inside a dispatch of runOnHost.
struct HostBinding {
  const void* sched = nullptr;
  uint64_t serial = 0;
  bool dispatching = false;
};

// How Scheduler::runOnHost ended.
enum class HostRun : uint8_t {
  kDone,    // done() holds
  kIdle,    // the lane is empty: nothing for this thread to run
  kClosed,  // the scheduler closed
};

// How Scheduler::runInline ended.
enum class InlineRun : uint8_t { kChosen, kDeadlock, kClosed, kDiverged };

class Worker {
 public:
  unsigned index() const { return index_; }
  Scheduler& scheduler() { return sched_; }
  // Snapshot readable from any thread (relaxed reads of the counters).
  WorkerStats stats() const;
  // The owning worker's own counters for the executor's GC pause fields and budget.
  void notePause(uint64_t nanos);

 private:
  friend class Scheduler;
  friend struct SchedulerInternals;
  Worker(Scheduler& sched, unsigned index) : sched_(sched), index_(index) {}
  Scheduler& sched_;
  unsigned index_;
};

using Clock = std::chrono::steady_clock;
using TimerId = uint64_t;

class Scheduler {
 public:
  static constexpr uint32_t kLocalQueueCapacity = 256;
  static constexpr uint32_t kInjectionInterval = 61;
  static constexpr uint32_t kLifoLimit = 3;

  Scheduler(const SchedulerOptions& options, Executor& executor);
  ~Scheduler();  // shutdown() and join
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts the worker threads. Non-ok if a worker failed to start (the scheduler is then
  // closed).
  Status start();
  unsigned workerCount() const;

  // Publishes a new task (state kReady). From a worker: its spawn stack or local queue
  // (sticky: its pinned queue, home = that worker); from elsewhere: the injection queue (a sticky
  // task spawned outside a worker gets home 0). Takes its own reference. false when the
  // scheduler is closed (the task is not queued).
  bool spawn(Task* task);
  // kSuspended -> kReady and publish (from a worker: into its LIFO slot; sticky: to its
  // home's pinned queue). Ready: coalesced. Running: sets the notified bit. Terminal:
  // ignored. Returns true if this call queued the task.
  bool wake(Task* task);
  // Requests cancellation. A suspended task is made ready so that it sees the request
  // at its dispatch. false if it was already requested or the task is terminal.
  bool cancel(Task* task);

  // Timers, run on the timer thread at or after `deadline` (never on a worker; `fn` must
  // not block). A pending timer counts as possible future work for onAllBlocked.
  TimerId addTimer(Clock::time_point deadline, std::function<void()> fn);
  // true if the timer was removed before it ran.
  bool cancelTimer(TimerId id);
  // Timers added and not yet finished (acquire; timer_service.h). For onAllBlocked's
  // second look: a thread may add a timer and then block after the last parker read
  // the count, so the executor reads it again once it has read its waits.
  uint64_t timersPending() const;

  // A dispatch about to block its thread (an OS call, or a task's wait under a native
  // frame), called on that thread with the worker it runs: the thread releases the
  // worker, which a spare thread runs as soon as it has work (at once if its queues are
  // not empty). Until leaveBlocking the thread's publications take the external path.
  // kOs regions count as possible future work for onAllBlocked. Non-ok (and the
  // scheduler closed) when no spare thread could be started: the thread keeps its worker.
  // leaveBlocking waits until the thread holds its worker again; call it before
  // attaching to the collector (the holder may be stopped for a collection).
  Status enterBlocking(Worker& worker, Blocking kind);
  void leaveBlocking(Worker& worker);

  // The worker the calling thread runs (or, inside a blocking region, will run again),
  // or nullptr.
  static Worker* currentWorker();
  // Scheduler threads started so far: one per worker plus the spares (never fewer).
  unsigned threadCount() const;

  // Stops the workers (parked ones are woken), refuses later spawns, joins every thread
  // (spares included; a thread blocked in a region is waited for) and the timer thread.
  // Idempotent. Must not be called from a scheduler thread.
  void shutdown();
  // Fail closed (DEVELOPERS.md invariant 5): from any thread, marks the scheduler closed
  // with `reason` (kept: the first reason wins), wakes every parked worker and spare,
  // refuses later spawns; workers stop at their next dispatch boundary. Does not join.
  void close(const std::string& reason);
  bool closed() const;
  std::string closeReason() const;

  // The scheduler's single seeded chooser (task.select, victim order seeds): a uniform
  // integer in [0, n). Thread-safe.
  uint64_t choose(uint64_t n);

  // Deterministic mode (deterministic.h). `now` is the logical clock there (timers,
  // task.now), the steady clock otherwise.
  bool deterministic() const { return deterministic_; }
  Clock::time_point now() const;
  // On the thread of `waiter` (the main task, or a task waiting under a native frame),
  // which has reached a schedule point: other tasks' steps run, on other threads, until
  // the chooser picks `waiter`, a candidate whenever `enabled()` (its wait has ended);
  // meanwhile this thread makes decisions or parks (deterministic.h). kDeadlock (on the
  // host thread only): nothing can run, no timer is pending and nothing can come from
  // outside.
  InlineRun runInline(Task* waiter, const std::function<bool()>& enabled);
  // Work units the inline task spent since its last schedule point (the logical clock).
  void chargeInline(int64_t units);
  // Parallel steps (--deterministic with several workers, deterministic.h): a step of
  // `task` on the calling thread reached a gate (an ordered operation, an effect on the
  // world, its end). passGate: true when the step is committed (go on); false when it
  // was not, and the caller, detached from the collector, calls waitCommitted (false:
  // the scheduler closed). Always true outside deterministic mode and with one worker.
  bool passGate(Task* task);
  bool waitCommitted(Task* task);
  // Whether `task` is a candidate whose step is not committed: ready, as far as the
  // program can tell, even while its step runs ahead.
  bool showsReady(const Task* task);
  // Deterministic mode: a step of `task` on the calling thread ends at a safepoint that
  // could suspend it, with `budgetLeft` of its budget. Makes the decision that follows
  // the step's end here: true when it picks `task` again, whose next step then goes on
  // without leaving the interpreter (DetCoordinator::continueInPlace). Never collects.
  bool continueStep(Task* task, int32_t budgetLeft);
  // Writes the recording once (DeterministicOptions::recordPath); "" or the error.
  std::string finishRecording();
  std::string divergence() const;

  // The host lane (host_lane.cpp). bindHost: the calling thread (never a worker) starts
  // running the main task's code (a call from its embedder): its publications go to the
  // lane until unbindHost, which publishes what the lane holds. Meanwhile it calls
  // flushHostLane after a slice of work and before waiting on the OS (Executor::
  // onHostLaneFilled says when the lane holds a task). No effect in deterministic mode.
  // bindHost returns the binding it replaced (a host call into another State's main
  // task, made from this one's code), which unbindHost restores.
  HostBinding bindHost();
  void unbindHost(const HostBinding& previous);
  // Whether the calling thread is bound as some scheduler's host.
  static bool hostBoundHere();
  // On the host thread while its task waits: runs the lane's task, and then what that
  // dispatch published to it, one dispatch at a time, until `done()` or the lane is
  // empty. A task that yields or spends its slice is published as usual (the host does
  // not share the workers' load).
  HostRun runOnHost(const std::function<bool()>& done);
  // On the host thread: publishes the lane's task, if any.
  void flushHostLane();
  // On the host thread: whether the lane holds no task.
  bool hostLaneEmpty() const;
  // Whether the calling thread runs a dispatch of runOnHost (where a task may suspend as
  // on a worker).
  static bool dispatchingOnHost();
  // Sets what dispatchingOnHost answers, returning what it answered: the main task's
  // code resumed inside such a dispatch runs as the host's own (wait.cpp).
  static bool exchangeDispatchingOnHost(bool dispatching);
  // Tasks the host thread ran (relaxed).
  uint64_t hostTasksRun() const;

  std::vector<WorkerStats> stats() const;
  // How late timers ran (the timer thread's histogram).
  HistogramSnapshot timerLateness() const;
  // With SchedulerOptions::trace: worker `w`'s spans so far, in order, and how many did
  // not fit; `w` == workerCount(): the host's (runOnHost). Any thread.
  std::vector<TraceEvent> trace(unsigned w, uint64_t& dropped) const;

 private:
  friend class Worker;
  friend struct SchedulerInternals;
  bool runsAhead(const Task* task) const;
  std::unique_ptr<SchedulerInternals> in_;
  // Set at construction (SchedulerOptions::deterministic); inline, as the VM asks it at
  // every ordered operation.
  const bool deterministic_;
};

}  // namespace weft::runtime
