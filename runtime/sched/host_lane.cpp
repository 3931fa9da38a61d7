// The host lane: the main task's thread running the tasks it woke while its task waits.
//
// Protocol (docs/design/scheduler.md, "The main task's waits"):
//  - The host thread (between Scheduler::bindHost and unbindHost: the thread that runs
//    the main task's code, for one call from its embedder; never a worker; at most one
//    at a time, as a State runs one host call at a time) publishes its wakes, and the
//    main task's spawns, into `hostSlot` (the spawns of a task it runs go to the workers,
//    whose spawn stacks keep a tree of tasks depth first), a one-task slot that only it touches, like a
//    worker's LIFO slot: a task already there moves to the injection queue (and wakes a
//    worker), so the slot always holds the newest publication. The first publication
//    into an empty slot tells the executor (onHostLaneFilled), which arranges a flush
//    within a slice of the host's work; a wait in which the host runs the slot empty ends
//    that slice (RuntimeImpl::endHostLaneSlice).
//  - While its task waits, the host runs the slot's task (runOnHost), and then what that
//    dispatch put there, until the wait ends or the slot is empty: a ping-pong between
//    the main chunk and a task costs no thread switch and no futex. Only the host's own
//    publications are run there, so the host never takes work the workers could do, and
//    a task that yields or spends its slice is published as usual.
//  - flushHostLane publishes the slot's task: the host calls it when it goes on without
//    waiting (after a slice, before an OS wait) and unbindHost when it returns to its
//    embedder, so a task never waits in the slot for longer than a slice of the host's
//    work (or one native call of it).
//  - The slot is never seen by the workers, so the all-blocked check does not see it:
//    the host is never blocked while the slot holds a task (it empties the slot before
//    it sleeps), which is what that check needs.
#include "runtime/sched/internals.h"

namespace weft::runtime {

thread_local constinit HostBinding tlsHost{};

void SchedulerInternals::publishToHost(Task* t) {
  std::swap(t, hostSlot);
  if (!t) return executor.onHostLaneFilled();
  TaskList list;
  list.push(t);
  pushInjection(list);
}

// One dispatch on the host thread: the worker loop's dispatch and settling (worker.cpp),
// without a worker's queues or counters.
void SchedulerInternals::dispatchOnHost(Task* t) {
  WEFT_CHECK(beginRun(t), "a task in the host lane is ready");
  hostTasksRun.fetch_add(1, std::memory_order_relaxed);
  bool outer = std::exchange(tlsHost.dispatching, true);
  uint64_t start = tracing ? sinceEpoch() : 0;
  int32_t budget = slice;
  RunOutcome out;
  try {
    out = executor.runTask(*workers[0], *t, budget);
  } catch (...) {
    out = RunOutcome::kPanicked;
  }
  tlsHost.dispatching = outer;
  if (tracing) addSpan(hostTrace, t, start, TraceSpan(out));
  if (!settle(t, out)) return;
  stampReady(t);
  TaskList list;
  list.push(t);
  pushInjection(list);
}

HostBinding Scheduler::bindHost() {
  HostBinding previous = tlsHost;
  if (!in_->det) tlsHost = HostBinding{in_.get(), in_->serial, false};
  return previous;
}

void Scheduler::unbindHost(const HostBinding& previous) {
  flushHostLane();
  tlsHost = previous;
}

bool Scheduler::hostBoundHere() { return tlsHost.sched != nullptr; }

HostRun Scheduler::runOnHost(const std::function<bool()>& done) {
  WEFT_CHECK(in_->onHostThread(), "runOnHost runs on the host thread");
  while (!done()) {
    if (in_->isClosed()) return HostRun::kClosed;
    Task* t = std::exchange(in_->hostSlot, nullptr);
    if (!t) return HostRun::kIdle;
    in_->dispatchOnHost(t);
  }
  return HostRun::kDone;
}

void Scheduler::flushHostLane() {
  if (!in_->onHostThread()) return;
  Task* t = std::exchange(in_->hostSlot, nullptr);
  if (!t) return;
  TaskList list;
  list.push(t);
  in_->pushInjection(list);
}

bool Scheduler::hostLaneEmpty() const { return !in_->onHostThread() || in_->hostSlot == nullptr; }

bool Scheduler::dispatchingOnHost() { return tlsHost.dispatching; }

bool Scheduler::exchangeDispatchingOnHost(bool dispatching) { return std::exchange(tlsHost.dispatching, dispatching); }

uint64_t Scheduler::hostTasksRun() const { return in_->hostTasksRun.load(std::memory_order_relaxed); }

}  // namespace weft::runtime
