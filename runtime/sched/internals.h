// The scheduler's private state: one WorkerCore per worker, one Carrier per thread, and
// the shared parts.
//
// Protocol (who touches what; the orderings are justified where they are used):
//  - WorkerCore fields marked "owner" are read and written only by the thread that holds
//    the worker (and by shutdown() after every thread has been joined). A worker changes
//    hands only under its `handMu` and through Carrier::given (release/acquire), so each
//    holder sees its predecessor's writes (handoff.cpp gives the protocol).
//  - `ring` is the owner's LocalQueue (siblings steal from it), `pinned` a mutex queue
//    that any thread pushes sticky tasks into and only the owner pops.
//  - WorkerCounters are written only by the owner (relaxed load + store: no RMW needed
//    with one writer) and read by any thread for a stats() snapshot.
//  - A thread publishes into its worker's LIFO slot, local queue or (for its own sticky
//    tasks) pinned queue only during a dispatch (`dispatching`) outside a blocking region;
//    a publication at any other moment (onIdle, onAllBlocked) takes the external path.
//    Its search fills the local queue only right before a dispatch, and a worker is
//    released only with an empty LIFO slot, spawn stack and local queue. So a sleeping
//    worker's LIFO slot, spawn stack and local queue are empty, which the all-blocked
//    check relies on.
#pragma once

#include <latch>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/sched/deterministic.h"
#include "runtime/sched/idle.h"
#include "runtime/sched/load_monitor.h"
#include "runtime/sched/local_queue.h"
#include "runtime/sched/spawn_stack.h"
#include "runtime/sched/task_list.h"
#include "runtime/sched/timer_service.h"
#include "runtime/sched/topology.h"
#include "runtime/sched/victim_order.h"

namespace weft::runtime {

struct WorkerCore;

// The worker the calling thread runs (Scheduler::currentWorker).
extern thread_local constinit Worker* tlsCurrentWorker;

// A scheduler thread (Go's M): a worker's first thread or a spare (handoff.cpp).
// A cache line of its own: its owner writes busy and dispatching at every dispatch, and
// two 48-byte carriers allocated one after the other shared a line or not depending on
// what was allocated before them (bench/tasks/skynet.lua with the JIT: 0.78 s or 0.92 s
// by the length of the script's path, localCore's read of `dispatching` missing).
struct alignas(64) Carrier {
  Parker parker;  // it waits here for a worker: in the spare pool or taking one back
  // A worker handed to it: stored (release) by the giver, taken (acquire) by the carrier.
  std::atomic<WorkerCore*> given{nullptr};
  std::thread thread;     // started under poolMu, joined by shutdown()
  bool busy = false;          // own: between onBusy and onIdle
  bool dispatching = false;   // own
  bool blocking = false;      // own: inside enterBlocking/leaveBlocking
  bool released = false;      // own: its worker was released at enterBlocking
  Blocking kind = Blocking::kOs;  // own: the current region's kind
  // own, with SchedulerOptions::trace: the task being dispatched and where its current
  // span began (a blocking region ends one span and its end starts the next).
  Task* current = nullptr;
  uint64_t spanStart = 0;
};

// The calling thread's carrier (nullptr outside scheduler threads).
extern thread_local constinit Carrier* tlsCarrier;

// The calling thread's host binding (Scheduler::bindHost).
extern thread_local constinit HostBinding tlsHost;

// Telemetry's clock: steady time in nanoseconds (ready stamps compare across threads).
inline uint64_t steadyNanos() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}
constexpr uint32_t kReadySampleEvery = 16;
// The calling thread's publications so far (SchedulerInternals::stampReady).
extern thread_local constinit uint32_t tlsPublications;

struct WorkerCounters {
  explicit WorkerCounters(unsigned workers) : stealsFrom(workers) {}
  std::atomic<uint64_t> tasksRun{0}, stealsFromInjection{0}, migrations{0}, parks{0};
  std::atomic<uint64_t> wakeups{0}, budgetExhaustions{0}, queueDepthMax{0};
  std::atomic<uint64_t> gcPauses{0}, gcPauseTotalNanos{0}, gcPauseMaxNanos{0};
  std::atomic<uint64_t> spawnsRetargeted{0};
  std::vector<std::atomic<uint64_t>> stealsFrom;  // [victim]
  LogHistogram readyDelay;
};

// A worker's trace spans (SchedulerOptions::trace). Its holder appends; a thread that
// blocked while dispatching one of its tasks appends the span it ended, and any thread
// reads: hence the lock, taken once per span and only when tracing.
struct TraceBuffer {
  mutable std::mutex mu;
  std::vector<TraceEvent> events;  // mu
  uint64_t dropped = 0;            // mu
};

// The single writer's increment (relaxed: readers want a snapshot, not an order).
inline void bump(std::atomic<uint64_t>& c, uint64_t n = 1) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}
inline void noteMax(std::atomic<uint64_t>& c, uint64_t v) {
  if (v > c.load(std::memory_order_relaxed)) c.store(v, std::memory_order_relaxed);
}

// Aligned to a cache line so that no other allocation shares its owner-written ends.
struct alignas(64) WorkerCore {
  WorkerCore(Worker* w, unsigned workers, const std::vector<std::vector<unsigned>>& victimTiers,
             uint64_t seed)
      : worker(w), counters(workers), victims(victimTiers, seed) {}
  Worker* worker;
  LocalQueue ring;
  SharedTaskQueue pinned;
  Parker parker;
  WorkerCounters counters;
  VictimOrder victims;          // owner: tiered by the topology
  LoadMonitor load;             // owner (load_monitor.h)
  TraceBuffer trace;
  Task* lifo = nullptr;         // owner
  SpawnStack spawned;           // owner (spawn_stack.h)
  bool fromSpawned = false;     // owner: the task being picked came from `spawned`
  int32_t sliceLeft = 0;        // owner: what the last dispatch left of its slice
  uint32_t lifoRun = 0;         // owner: dispatches in a row from the LIFO slot
  uint32_t tick = 0;            // owner: dispatches so far
  bool lastFromPinned = false;  // owner
  bool lastFromInjection = false;  // owner: the last task came from the injection poll
  bool pollAfterBudget = false;    // owner: the next pick polls the injection queue first
  bool searching = false;       // owner
  // Who holds the worker (handoff.cpp).
  std::mutex handMu;
  bool free = false;             // handMu: released by a blocked holder, nobody holds it
  bool abandoned = false;        // handMu: free and out of the sleepers (left at close)
  std::vector<Carrier*> reclaimers;  // handMu: blocked holders back, waiting for it
  // Whether `reclaimers` is non-empty: written under handMu, read by the holder at its
  // dispatch boundaries without the lock (acquire: then it locks to hand over).
  std::atomic<bool> reclaimWanted{false};
};

struct SchedulerInternals {
  SchedulerInternals(Scheduler& self, const SchedulerOptions& options, Executor& executor);

  static SchedulerInternals& of(Scheduler& s) { return *s.in_; }

  // Task transitions (task.cpp): each one atomic step on Task::bits_.
  static bool beginRun(Task* t);
  static void endRunReady(Task* t);
  static bool endRunSuspend(Task* t);  // false: notified meanwhile, so it is ready again
  static void endRunTerminal(Task* t, TaskState s);
  // The transition a dispatch's outcome makes: true when the task is ready again (the
  // caller requeues it with the scheduler's reference); false when it left the
  // scheduler's care (suspended or terminal: that reference is released).
  static bool settle(Task* t, RunOutcome out);

  // Publication (scheduler.cpp).
  WorkerCore* localCore();  // the calling thread's worker, if it may use its local queues
  void publish(Task* t, bool lifo);
  void publishSpawned(Task* t);
  void shareSpawned(WorkerCore& c, uint32_t count);
  void publishPinned(Task* t);
  void pushLocal(WorkerCore& c, Task* t, bool migrated);
  void pushInjection(TaskList& list);
  void notifyParked();
  void unparkById(unsigned w);
  void resume(unsigned w);  // wakes a worker just claimed from the sleepers
  bool nothingPending();
  void notifyIfWorkPending();
  void drainAll();

  // Threads and handoffs (handoff.cpp).
  void runCarrier(Carrier& m, int first);
  WorkerCore* awaitWorker(Carrier& m);
  void runHeld(Carrier& m, WorkerCore& c, bool started);
  void giveTo(Carrier& m, WorkerCore& c);
  Carrier* startCarrier(int first);  // under poolMu
  Status enterBlocking(Carrier& m, WorkerCore& c, Blocking kind);
  void leaveBlocking(Carrier& m, WorkerCore& c);
  void reclaim(Carrier& m, WorkerCore& c);
  bool handBack(Carrier& m, WorkerCore& c);
  void leaveAtClose(WorkerCore& c);
  void stopSearching(WorkerCore& c);

  // The worker loop (worker.cpp).
  bool loop(Carrier& m, WorkerCore& c);
  Task* nextLocal(WorkerCore& c);
  Task* nextSpawned(WorkerCore& c);
  Task* search(WorkerCore& c);
  Task* pullInjection(WorkerCore& c, size_t max);
  void park(WorkerCore& c);
  bool ownWorkPending(WorkerCore& c);
  void checkLoad(WorkerCore& c);
  void dispatch(Carrier& m, WorkerCore& c, Task* t);
  void finish(WorkerCore& c, Task* t, RunOutcome out);
  void requeue(WorkerCore& c, Task* t);

  // The host lane (host_lane.cpp).
  bool onHostThread() const { return tlsHost.sched == this && tlsHost.serial == serial; }
  void publishToHost(Task* t);
  void dispatchOnHost(Task* t);

  // Telemetry: the sampled ready stamp, and trace spans (worker.cpp).
  static void stampReady(Task* t);
  uint64_t sinceEpoch() const;
  void addSpan(TraceBuffer& b, Task* t, uint64_t start, TraceSpan how);

  bool isClosed() const { return closed.load(std::memory_order_acquire); }

  Scheduler& self;
  Executor& executor;
  const unsigned workerCount;
  const int32_t slice;
  // Read once, by start (readTopology), before any worker runs; flat until then: a
  // script that never starts the workers never reads sysfs (topology.h).
  Topology topology;
  bool topologyRead = false;  // lifecycleMu (start), or a test before start
  void readTopology();
  const bool tracing;
  const size_t traceLimit;
  const Clock::time_point epoch;  // trace times count from here
  std::vector<std::unique_ptr<Worker>> workers;   // immutable after construction
  std::vector<std::unique_ptr<WorkerCore>> cores; // immutable after construction
  SharedTaskQueue injection;                      // any thread
  Idle idle;
  TimerService timers;
  // Threads in kOs blocking regions. Changed only while the thread's worker is out of
  // the sleepers and read under the idle mutex (nothingPending), whose lock orders both:
  // relaxed suffices.
  std::atomic<uint32_t> osBlocked{0};

  // The threads (handoff.cpp). Lock order: a core's handMu, then idle's, then poolMu.
  std::mutex poolMu;
  std::vector<std::unique_ptr<Carrier>> carriers;  // poolMu: every thread, for the join
  std::vector<Carrier*> spares;    // poolMu: threads waiting for a worker
  unsigned freeWorkers = 0;        // poolMu: released workers not taken yet (<= spares)

  // Acquire/release: a worker that sees `closed` also sees the reason.
  std::atomic<bool> closed{false};
  mutable std::mutex closeMu;
  std::string closeReason;        // guarded by closeMu

  std::mutex chooserMu;
  Rng chooser;                    // guarded by chooserMu
  // The host lane: written and read by the bound host thread only (one at a time: the
  // embedder's calls into a State do not overlap, and each unbinds before it returns,
  // leaving the slot empty); hostTasksRun is read by any thread (relaxed, a statistic).
  const uint64_t serial;
  Task* hostSlot = nullptr;
  std::atomic<uint64_t> hostTasksRun{0};
  TraceBuffer hostTrace;  // the host's dispatches (SchedulerOptions::trace)

  // Deterministic mode's coordinator (deterministic.h): every publication goes there
  // and no thread starts. nullptr in a normal run. Immutable after construction.
  std::unique_ptr<DetCoordinator> det;

  std::mutex lifecycleMu;         // start() and shutdown() callers
  bool started = false;           // guarded by lifecycleMu
  bool joined = false;            // guarded by lifecycleMu
  std::vector<Status> startStatus;     // one per worker, written before the latch
  std::unique_ptr<std::latch> startLatch;
};

// One publication in kReadySampleEvery per publishing thread is stamped, as Go samples
// its scheduling latencies: two clock reads on every publication would add a third to a
// ping-pong round trip (docs/design/telemetry.md). The others store 0, so a dispatch
// never reads a stale stamp.
inline void SchedulerInternals::stampReady(Task* t) {
  TaskAccess::readySince(t) = ++tlsPublications % kReadySampleEvery == 0 ? steadyNanos() : 0;
}

}  // namespace weft::runtime
