// Task lifetime and the dispatch-side state transitions. Each transition is one CAS on
// Task::bits_ (retried only when a concurrent wake or cancel changed the flags), so a
// wake, a cancel and the end of a dispatch can never interleave half-way.
//
// Orderings: every transition is acq_rel. Release publishes what the thread did before
// it (a waker's message, a dispatch's results); acquire makes the next owner of the task
// (the worker that dispatches it) see them.
#include <atomic>

#include "runtime/sched/internals.h"

namespace weft::runtime {

namespace {

std::atomic<uint64_t> nextTaskId{1};

// Replaces the state keeping the flags in `keep`; the others are cleared.
uint32_t withState(uint32_t bits, TaskState s, uint32_t keep) {
  return (bits & keep) | stateBits(s);
}

}  // namespace

const char* taskStateName(TaskState state) {
  switch (state) {
    case TaskState::kReady: return "ready";
    case TaskState::kRunning: return "running";
    case TaskState::kSuspended: return "suspended";
    case TaskState::kCompleted: return "completed";
    case TaskState::kCancelled: return "cancelled";
    case TaskState::kPanicked: return "panicked";
  }
  return "?";
}

// Relaxed id: uniqueness needs only the atomicity of the increment.
Task::Task() : bits_(stateBits(TaskState::kReady)), id_(nextTaskId.fetch_add(1, std::memory_order_relaxed)) {}

uint64_t Task::nextId() { return nextTaskId.load(std::memory_order_relaxed); }

Task::~Task() { delete det_.load(std::memory_order_relaxed); }  // the last release ordered every write

TaskState Task::state() const { return stateOf(bits_.load(std::memory_order_acquire)); }

bool Task::cancelRequested() const { return (bits_.load(std::memory_order_acquire) & kCancel) != 0; }

void Task::release() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

bool SchedulerInternals::beginRun(Task* t) {
  auto& bits = TaskAccess::bits(t);
  uint32_t cur = bits.load(std::memory_order_acquire);
  do {
    if (stateOf(cur) != TaskState::kReady) return false;
  } while (!bits.compare_exchange_weak(cur, withState(cur, TaskState::kRunning, kCancel),
                                       std::memory_order_acq_rel, std::memory_order_acquire));
  return true;
}

void SchedulerInternals::endRunReady(Task* t) {
  auto& bits = TaskAccess::bits(t);
  uint32_t cur = bits.load(std::memory_order_acquire);
  while (!bits.compare_exchange_weak(cur, withState(cur, TaskState::kReady, kCancel),
                                     std::memory_order_acq_rel, std::memory_order_acquire)) {
  }
}

bool SchedulerInternals::endRunSuspend(Task* t) {
  auto& bits = TaskAccess::bits(t);
  uint32_t cur = bits.load(std::memory_order_acquire);
  uint32_t next;
  do {
    // A wake (or cancel) during the dispatch set kNotified: ready again at once.
    TaskState s = (cur & kNotified) ? TaskState::kReady : TaskState::kSuspended;
    next = withState(cur, s, kCancel);
  } while (!bits.compare_exchange_weak(cur, next, std::memory_order_acq_rel, std::memory_order_acquire));
  return stateOf(next) == TaskState::kSuspended;
}

void SchedulerInternals::endRunTerminal(Task* t, TaskState s) {
  auto& bits = TaskAccess::bits(t);
  uint32_t cur = bits.load(std::memory_order_acquire);
  while (!bits.compare_exchange_weak(cur, withState(cur, s, kCancel), std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
  }
}

bool SchedulerInternals::settle(Task* t, RunOutcome out) {
  switch (out) {
    case RunOutcome::kBudgetSpent:
    case RunOutcome::kYielded:
      endRunReady(t);
      return true;
    case RunOutcome::kSuspended:
      if (!endRunSuspend(t)) return true;  // woken during the dispatch
      break;
    case RunOutcome::kCompleted:
      endRunTerminal(t, TaskState::kCompleted);
      break;
    case RunOutcome::kCancelled:
      endRunTerminal(t, TaskState::kCancelled);
      break;
    case RunOutcome::kPanicked:
      endRunTerminal(t, TaskState::kPanicked);
      break;
  }
  t->release();
  return false;
}

}  // namespace weft::runtime
