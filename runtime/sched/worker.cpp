// The worker loop: find work, dispatch it, settle the task; search, park.
//
// Protocol (docs/design/scheduler.md):
//  - Finding work: the LIFO slot (at most kLifoLimit dispatches in a row), the spawn
//    stack (on the rest of the slice; after a spent slice, only if nothing is queued),
//    the pinned queue, the local queue (every kInjectionInterval-th dispatch, and the
//    dispatch after one that spent its budget, poll the injection queue first), then
//    searching: siblings tier by tier (topology.h), each tier in a fresh seeded order,
//    then the injection queue; then parking. After a dispatch that came from the pinned
//    queue the local queue goes first once, so that a yielding sticky task cannot starve
//    it.
//  - Every kInjectionInterval-th dispatch also feeds the load monitor (load_monitor.h),
//    which decides whether this worker's spawns go to the injection queue.
//  - Why the budget poll: a task woken from outside the workers (a timer, the main
//    thread) waits in the injection queue while busy workers cycle through their own
//    queues; polling only every 61st dispatch made it wait up to 61 slices (5 ms at p99
//    in bench/tasks/timers.lua). A spent budget means a whole slice went by, so the poll
//    costs one lock per slice at most. It is skipped when the spent task came from the
//    injection queue itself, so a queue that never empties takes at most every other
//    dispatch and the local queue keeps the rest.
//  - onIdle runs when a busy thread runs out of local work, before it searches; onBusy
//    runs when an idle thread found work, before it dispatches. A thread starts idle and
//    leaves idle (onIdle before it gives its worker away or stops), so the calls pair.
//  - At each dispatch boundary the holder checks whether the thread that released the
//    worker wants it back (handoff.cpp); a parked holder is woken for it.
//  - All fields of the WorkerCore used here are the holder's (internals.h).
#include <algorithm>

#include "runtime/sched/internals.h"

namespace weft::runtime {

// Runs worker `c` on thread `m` until the scheduler closes (false) or `m` gives the
// worker back to the thread that released it (true).
bool SchedulerInternals::loop(Carrier& m, WorkerCore& c) {
  while (!isClosed()) {
    // Acquire: a returning thread's request, then handMu settles it (handoff.cpp).
    if (c.reclaimWanted.load(std::memory_order_acquire) && handBack(m, c)) return true;
    Task* t = nextLocal(c);
    if (!t) {
      c.load.reset();  // an empty worker is not overloaded
      if (m.busy) executor.onIdle(*c.worker);
      m.busy = false;
      t = search(c);
      if (!t) {
        park(c);
        continue;
      }
    }
    if (c.searching) {
      c.searching = false;
      // The last searcher found work: more may wait, so another worker takes over.
      if (idle.transitionFromSearching()) notifyParked();
    }
    if (isClosed()) {
      t->release();  // closed meanwhile: the task is dropped like every queued one
      return false;
    }
    if (!m.busy) {
      if (!executor.onBusy(*c.worker).isOk()) {
        t->release();
        self.close("the executor could not attach a worker");
        return false;
      }
      m.busy = true;
    }
    dispatch(m, c, t);
  }
  return false;
}

Task* SchedulerInternals::nextLocal(WorkerCore& c) {
  c.lastFromInjection = false;
  c.fromSpawned = false;
  if (c.lifo) {
    Task* t = c.lifo;
    c.lifo = nullptr;
    // The limit guards the queued tasks: with none queued there is nobody to starve, and
    // requeueing would only wake a sibling to steal one of two ping-ponging tasks.
    if (c.lifoRun < Scheduler::kLifoLimit || (c.ring.empty() && c.pinned.empty() && c.spawned.empty())) {
      ++c.lifoRun;
      return t;
    }
    pushLocal(c, t, false);  // the limit: it waits its turn behind the queue
  }
  c.lifoRun = 0;
  if (Task* t = nextSpawned(c)) return t;
  bool pinnedFirst = !c.lastFromPinned || c.ring.empty();
  c.lastFromPinned = false;
  if (pinnedFirst) {
    if (Task* t = c.pinned.pop()) {
      c.lastFromPinned = true;
      return t;
    }
  }
  bool poll = c.tick % Scheduler::kInjectionInterval == 0 || c.pollAfterBudget;
  c.pollAfterBudget = false;
  if (poll) {
    if (Task* t = pullInjection(c, 1)) {
      c.lastFromInjection = true;
      return t;
    }
  }
  if (Task* t = c.ring.pop().task) return t;
  if (Task* t = c.spawned.pop()) return t;
  if (pinnedFirst) return nullptr;
  Task* t = c.pinned.pop();
  c.lastFromPinned = t != nullptr;
  return t;
}

// The spawn stack's top, which runs on what is left of the current slice (as Go's
// runnext inherits its time slice): a chain of spawned tasks spends one slice between
// them, and once it is spent the shared queues go first (pollAfterBudget). A hungry
// sibling first gets the older half when it has nothing to steal here.
Task* SchedulerInternals::nextSpawned(WorkerCore& c) {
  if (c.spawned.empty()) return nullptr;
  if (c.spawned.size() > 1 && c.ring.empty() && idle.someoneHungry()) {
    shareSpawned(c, c.spawned.size() / 2);
  }
  if (c.pollAfterBudget && !(c.ring.empty() && c.pinned.empty() && injection.empty())) return nullptr;
  c.fromSpawned = true;
  return c.spawned.pop();
}

Task* SchedulerInternals::search(WorkerCore& c) {
  if (!c.searching) {
    if (!idle.transitionToSearching()) return nullptr;  // enough searchers already
    c.searching = true;
  }
  for (unsigned victim : c.victims.next()) {
    uint32_t stolen = 0;
    if (Task* t = cores[victim]->ring.stealInto(c.ring, stolen)) {
      bump(c.counters.stealsFrom[victim], stolen);
      noteMax(c.counters.queueDepthMax, c.ring.size());
      return t;
    }
  }
  return pullInjection(c, LocalQueue::kCapacity / 2);
}

// Takes a fair share of the injection queue: runs the first, queues the rest locally
// (keeping their migration marks).
Task* SchedulerInternals::pullInjection(WorkerCore& c, size_t max) {
  if (injection.empty()) return nullptr;
  size_t share = std::min(max, injection.size() / workerCount + 1);
  TaskList batch = injection.popBatch(share);
  Task* first = batch.pop();
  if (!first) return nullptr;
  bump(c.counters.stealsFromInjection, batch.size() + 1);
  TaskList spill;
  while (Task* t = batch.pop()) {
    bool migrated = (TaskAccess::bits(t).load(std::memory_order_relaxed) & kMigrated) != 0;
    c.ring.push(t, migrated, spill);
  }
  noteMax(c.counters.queueDepthMax, c.ring.size());
  if (!spill.empty()) pushInjection(spill);
  return first;
}

// The load monitor's periodic check (load_monitor.h): this worker's queue depth against
// its lightest sibling's, read as relaxed snapshots (LocalQueue::size, SpawnStack::size),
// and its spent slices (its own counter).
void SchedulerInternals::checkLoad(WorkerCore& c) {
  if (workerCount == 1) return;
  uint32_t lightest = UINT32_MAX;
  for (const auto& sibling : cores)
    if (sibling.get() != &c) lightest = std::min(lightest, sibling->ring.size() + sibling->spawned.size());
  uint64_t spent = c.counters.budgetExhaustions.load(std::memory_order_relaxed);
  c.load.check(c.ring.size() + c.spawned.size(), lightest, spent);
}

// Work for this worker only: its queues, or a returning thread waiting for it.
bool SchedulerInternals::ownWorkPending(WorkerCore& c) {
  if (c.lifo || !c.spawned.empty() || !c.ring.empty() || !c.pinned.empty()) return true;
  return c.reclaimWanted.load(std::memory_order_acquire);
}

void SchedulerInternals::park(WorkerCore& c) {
  unsigned index = c.worker->index();
  bool lastSearcher = idle.transitionToParked(
      index, c.searching, [this] { return nothingPending(); }, [this] { executor.onAllBlocked(); });
  c.searching = false;
  bump(c.counters.parks);
  if (lastSearcher) notifyIfWorkPending();
  while (!isClosed()) {
    WakeReason reason = idle.wakeReason(index);
    if (reason != WakeReason::kStillParked) {
      c.searching = reason == WakeReason::kAsSearcher;
      bump(c.counters.wakeups);
      return;
    }
    // Work for this worker only (its pinned queue, a returning thread) may have arrived
    // before it joined the sleepers, when nobody could find it there.
    if (ownWorkPending(c)) {
      if (idle.claimById(index)) return;
      continue;  // somebody woke it meanwhile: read why
    }
    c.parker.park();
  }
}

void SchedulerInternals::dispatch(Carrier& m, WorkerCore& c, Task* t) {
  WEFT_CHECK(beginRun(t), "a queued task is ready");
  if (uint64_t since = TaskAccess::readySince(t); since != 0) {  // every publication stamps it
    uint64_t now = steadyNanos();
    c.counters.readyDelay.record(now > since ? now - since : 0);
  }
  if (tracing) {
    m.current = t;
    m.spanStart = sinceEpoch();
  }
  int index = static_cast<int>(c.worker->index());
  // Relaxed: lastWorker is a statistic; the task's data is ordered by Task::bits_.
  int previous = TaskAccess::last(t).exchange(index, std::memory_order_relaxed);
  if (previous >= 0 && previous != index) bump(c.counters.migrations);
  bump(c.counters.tasksRun);
  if (++c.tick % Scheduler::kInjectionInterval == 0) checkLoad(c);
  m.dispatching = true;
  // A task from the spawn stack continues the slice; any other starts a new one.
  int32_t budget = c.fromSpawned && c.sliceLeft > 0 ? c.sliceLeft : slice;
  c.fromSpawned = false;
  RunOutcome out;
  try {
    out = executor.runTask(*c.worker, *t, budget);
    c.sliceLeft = out == RunOutcome::kBudgetSpent ? 0 : budget;
  } catch (...) {
    out = RunOutcome::kPanicked;
    if (m.blocking) leaveBlocking(m, c);  // a throw may skip it: take the worker back
  }
  m.dispatching = false;
  if (tracing) {
    addSpan(c.trace, t, m.spanStart, TraceSpan(out));
    m.current = nullptr;
  }
  c.spawned.sealBatch();
  WEFT_CHECK(!m.blocking, "a blocking region ends within its dispatch");
  finish(c, t, out);
}

void SchedulerInternals::finish(WorkerCore& c, Task* t, RunOutcome out) {
  if (out == RunOutcome::kBudgetSpent) {
    bump(c.counters.budgetExhaustions);
    c.pollAfterBudget = !c.lastFromInjection;
  }
  if (settle(t, out)) requeue(c, t);
}

// A task ready again after its dispatch goes to the tail (sticky: of its pinned queue),
// behind the spawn stack's tasks too: they move to the local queue first, in the order
// they would have run.
void SchedulerInternals::requeue(WorkerCore& c, Task* t) {
  stampReady(t);
  if (!c.spawned.empty()) {
    TaskList spill;
    while (Task* s = c.spawned.pop()) c.ring.push(s, false, spill);
    if (!spill.empty()) pushInjection(spill);
    if (t->sticky()) notifyParked();  // else pushLocal below does
  }
  if (!t->sticky()) return pushLocal(c, t, false);
  if (!c.pinned.push(t)) t->release();  // shut down
}

// --- Telemetry (docs/design/telemetry.md) ---------------------------------------------

uint64_t SchedulerInternals::sinceEpoch() const {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - epoch).count());
}

void SchedulerInternals::addSpan(TraceBuffer& b, Task* t, uint64_t start, TraceSpan how) {
  TraceEvent e{t->id(), start, sinceEpoch(), how};
  std::lock_guard lock(b.mu);
  if (b.events.size() >= traceLimit) {
    ++b.dropped;
    return;
  }
  try {
    b.events.push_back(e);
  } catch (const std::bad_alloc&) {
    ++b.dropped;  // the trace is best effort; the scheduler goes on
  }
}

}  // namespace weft::runtime
