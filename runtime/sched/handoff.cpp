// Threads and workers (Go's M and P): starting threads, the spare pool, and handing a
// worker between threads around blocking regions.
//
// Protocol (docs/design/scheduler.md, "Blocking regions"):
//  - Every scheduler thread is a Carrier. It holds at most one worker at a time and runs
//    the worker loop on it (runHeld); without one it waits in the spare pool (`spares`,
//    parked on its own Parker) until a giver stores a worker in its `given` (release)
//    and unparks it. At close a spare leaves only by taking itself out of `spares` under
//    poolMu: one already taken out has a worker on its way and waits for it.
//  - A worker is held by exactly one carrier, or free. It changes hands only under its
//    handMu, through the next carrier's `given`, so the next holder (acquire) sees every
//    owner field as the last holder left it.
//  - enterBlocking: the thread first reserves a spare (freeWorkers <= spares.size()
//    always, so a free worker always finds one; a block finding none starts a thread;
//    after close nothing is released: no task will run).
//    Then, under handMu: a thread waiting to take the worker back gets it; else work
//    already queued for it goes with it to a spare; else it becomes free and joins the
//    sleepers as if it had parked. A later publication or pinned push "unparks" it:
//    resume() gives a free worker to a returning thread or a spare instead of a futex.
//    A block that finds nothing to do costs a few locks and wakes no thread.
//  - leaveBlocking (reclaim): a free worker still among the sleepers is taken back at
//    once; a free worker just claimed by a waker comes through that waker's resume(); a
//    held one is asked for (reclaimWanted, and its holder unparked if it sleeps): the
//    holder gives it up at its next dispatch boundary, detached, and returns to the pool.
//    The returning thread attaches to the collector only after that, since the holder it
//    waits for may itself be waiting for a collection that needs every attached thread.
//  - Close: a holder stops at its boundary and gives its worker to a waiting returner,
//    or leaves it free and `abandoned` (out of the sleepers) for one that returns later,
//    which then ends its dispatch and stops too. Spares leave the pool; shutdown joins
//    every carrier.
#include <algorithm>
#include <system_error>

#include "runtime/sched/internals.h"

namespace weft::runtime {

thread_local constinit Carrier* tlsCarrier = nullptr;

// Under poolMu. `first` >= 0: that worker's own thread, which starts holding it (the
// thread's start orders the relaxed store); otherwise a spare, which joins the pool.
Carrier* SchedulerInternals::startCarrier(int first) {
  carriers.push_back(std::make_unique<Carrier>());
  Carrier* m = carriers.back().get();
  if (first >= 0) m->given.store(cores[static_cast<unsigned>(first)].get(), std::memory_order_relaxed);
  try {
    m->thread = std::thread([this, m, first] { runCarrier(*m, first); });
  } catch (const std::system_error&) {
    carriers.pop_back();
    return nullptr;
  }
  if (first < 0) spares.push_back(m);
  return m;
}

void SchedulerInternals::runCarrier(Carrier& m, int first) {
  tlsCarrier = &m;
  Status status = executor.onThreadStart();
  // Closed before the count-down, so start() returns to a scheduler already closed.
  if (!status.isOk()) self.close(first >= 0 ? "a worker failed to start" : "a spare thread failed to start");
  if (first >= 0) {
    startStatus[static_cast<unsigned>(first)] = status;
    startLatch->count_down();  // the latch orders the status write before start() reads it
  }
  // A thread that could not start still takes the workers given to it, to pass them on.
  while (WorkerCore* c = awaitWorker(m)) runHeld(m, *c, status.isOk());
  if (status.isOk()) executor.onThreadStop();
  tlsCarrier = nullptr;
}

WorkerCore* SchedulerInternals::awaitWorker(Carrier& m) {
  while (true) {
    if (WorkerCore* c = m.given.exchange(nullptr, std::memory_order_acquire)) return c;
    if (isClosed()) {
      std::lock_guard lock(poolMu);
      auto it = std::find(spares.begin(), spares.end(), &m);
      if (it != spares.end()) {
        spares.erase(it);
        return nullptr;
      }
    }
    m.parker.park();
  }
}

void SchedulerInternals::runHeld(Carrier& m, WorkerCore& c, bool started) {
  tlsCurrentWorker = c.worker;
  topology.pinThread(c.worker->index());  // on the worker's node, as its victim order assumes
  bool handedBack = started && loop(m, c);
  if (!handedBack) {  // closed
    if (m.busy) executor.onIdle(*c.worker);
    m.busy = false;
    leaveAtClose(c);
  }
  tlsCurrentWorker = nullptr;
  std::lock_guard lock(poolMu);
  spares.push_back(&m);
}

void SchedulerInternals::giveTo(Carrier& m, WorkerCore& c) {
  m.given.store(&c, std::memory_order_release);
  m.parker.unpark();
}

Status SchedulerInternals::enterBlocking(Carrier& m, WorkerCore& c, Blocking kind) {
  if (tracing && m.current) addSpan(c.trace, m.current, m.spanStart, TraceSpan::kBlocked);
  m.blocking = true;
  m.kind = kind;
  m.released = false;
  c.spawned.sealBatch();  // another thread may run the worker's dispatches meanwhile
  if (kind == Blocking::kOs) osBlocked.fetch_add(1, std::memory_order_relaxed);
  // Reserve a spare for the worker about to be released (freeWorkers <= spares.size()).
  bool closedNow, reserved = false;
  {
    std::lock_guard lock(poolMu);
    closedNow = isClosed();
    if (!closedNow) reserved = spares.size() > freeWorkers || startCarrier(-1);
    if (reserved) ++freeWorkers;
  }
  if (closedNow) return Status::ok();  // nothing will run any more: the thread keeps it
  if (!reserved) {
    self.close("could not start a spare thread");  // outside poolMu: close takes it
    return Status(StatusCode::kFatal);
  }
  unsigned index = c.worker->index();
  bool madeFree = false;
  {
    std::lock_guard lock(c.handMu);
    m.released = true;
    Carrier* next = nullptr;
    if (!c.reclaimers.empty()) {
      next = c.reclaimers.back();
      c.reclaimers.pop_back();
      c.reclaimWanted.store(!c.reclaimers.empty(), std::memory_order_release);
    }
    if (next || c.lifo || !c.spawned.empty() || !c.ring.empty() || !c.pinned.empty()) {
      std::lock_guard pool(poolMu);
      --freeWorkers;
      if (!next && spares.empty()) {
        // The reserved spare left: it failed to start and closed the scheduler, so
        // nothing will run any more and this thread keeps its worker, as when closed.
        m.released = false;
        return Status::ok();
      }
      if (!next) {
        next = spares.back();
        spares.pop_back();
      }
    } else {
      c.free = madeFree = true;
      idle.transitionToParked(
          index, false, [this] { return nothingPending(); }, [this] { executor.onAllBlocked(); });
    }
    if (next) giveTo(*next, c);
  }
  if (!madeFree) return Status::ok();
  // As after a park: a publication that found this worker unparked and nobody searching
  // woke nobody, and a pinned push found it outside the sleepers.
  notifyIfWorkPending();
  if (!c.pinned.empty() && idle.claimById(index)) resume(index);
  return Status::ok();
}

void SchedulerInternals::leaveBlocking(Carrier& m, WorkerCore& c) {
  if (m.released) reclaim(m, c);
  m.released = false;
  // After the worker left the sleepers: until then the region still counts as busy.
  if (m.kind == Blocking::kOs) osBlocked.fetch_sub(1, std::memory_order_relaxed);
  m.blocking = false;
  if (tracing) m.spanStart = sinceEpoch();  // the dispatch goes on in a new span
}

void SchedulerInternals::reclaim(Carrier& m, WorkerCore& c) {
  unsigned index = c.worker->index();
  bool held;
  {
    std::lock_guard lock(c.handMu);
    if (c.free && c.abandoned) {
      c.free = c.abandoned = false;
      stopSearching(c);
      return;
    }
    if (c.free && idle.claimById(index)) {
      c.free = false;
      std::lock_guard pool(poolMu);
      --freeWorkers;
      return;
    }
    // Held by another thread, or claimed by a waker whose resume() hands it here.
    held = !c.free;
    c.reclaimers.push_back(&m);
    c.reclaimWanted.store(true, std::memory_order_release);
  }
  if (held) unparkById(index);  // a parked holder gives it up at once
  WorkerCore* got;
  while (!(got = m.given.exchange(nullptr, std::memory_order_acquire))) m.parker.park();
  WEFT_CHECK(got == &c, "a thread takes back the worker it released");
  stopSearching(c);
}

// The holder, at a dispatch boundary with reclaimWanted seen: detaches and gives the
// worker to a returning thread. false if none waits any more (a stale flag).
bool SchedulerInternals::handBack(Carrier& m, WorkerCore& c) {
  if (m.busy) executor.onIdle(*c.worker);
  m.busy = false;
  stopSearching(c);
  std::lock_guard lock(c.handMu);
  if (c.reclaimers.empty()) return false;
  Carrier* next = c.reclaimers.back();
  c.reclaimers.pop_back();
  c.reclaimWanted.store(!c.reclaimers.empty(), std::memory_order_release);
  giveTo(*next, c);
  return true;
}

void SchedulerInternals::leaveAtClose(WorkerCore& c) {
  std::lock_guard lock(c.handMu);
  if (c.reclaimers.empty()) {
    c.free = c.abandoned = true;
    return;
  }
  Carrier* next = c.reclaimers.back();
  c.reclaimers.pop_back();
  c.reclaimWanted.store(!c.reclaimers.empty(), std::memory_order_release);
  giveTo(*next, c);
}

// A worker taken over in the middle of a dispatch is not looking for work: if it was
// woken as a searcher, another worker takes over the search.
void SchedulerInternals::stopSearching(WorkerCore& c) {
  if (!c.searching) return;
  c.searching = false;
  if (idle.transitionFromSearching()) notifyParked();
}

// Whoever claimed worker `w` from the sleepers wakes it: its parked holder, or, for a
// free worker, the first returning thread waiting for it, else a reserved spare.
void SchedulerInternals::resume(unsigned w) {
  WorkerCore& c = *cores[w];
  std::unique_lock lock(c.handMu);
  if (!c.free) {
    lock.unlock();
    c.parker.unpark();
    return;
  }
  c.free = false;
  c.searching = idle.wakeReason(w) == WakeReason::kAsSearcher;
  Carrier* next = nullptr;
  if (!c.reclaimers.empty()) {
    next = c.reclaimers.back();
    c.reclaimers.pop_back();
    c.reclaimWanted.store(!c.reclaimers.empty(), std::memory_order_release);
  }
  {
    std::lock_guard pool(poolMu);
    --freeWorkers;
    if (!next && !isClosed()) {
      WEFT_CHECK(!spares.empty(), "a free worker has a reserved spare");
      next = spares.back();
      spares.pop_back();
    }
  }
  if (!next) {  // closed: a thread returning later takes it
    c.free = c.abandoned = true;
    return;
  }
  giveTo(*next, c);
}

}  // namespace weft::runtime
