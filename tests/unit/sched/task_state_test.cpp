// Task states and their transitions (scheduler.h: every change one atomic step).
#include <gtest/gtest.h>

#include <thread>

#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

TEST(SchedTaskState, NamesAndFreshTasks) {
  EXPECT_STREQ(taskStateName(TaskState::kReady), "ready");
  EXPECT_STREQ(taskStateName(TaskState::kRunning), "running");
  EXPECT_STREQ(taskStateName(TaskState::kSuspended), "suspended");
  EXPECT_STREQ(taskStateName(TaskState::kCompleted), "completed");
  EXPECT_STREQ(taskStateName(TaskState::kCancelled), "cancelled");
  EXPECT_STREQ(taskStateName(TaskState::kPanicked), "panicked");
  TaskRef a = makeTask(), b = makeTask();
  EXPECT_EQ(a->state(), TaskState::kReady);
  EXPECT_GT(b->id(), a->id());
  EXPECT_EQ(a->lastWorker(), -1);
  EXPECT_EQ(a->homeWorker(), -1);
}

// Suspends on its first dispatch, completes on the next.
FnTask::Body suspendOnce() {
  return [](Worker&, FnTask& t) {
    return t.dispatches.load() == 1 ? RunOutcome::kSuspended : RunOutcome::kCompleted;
  };
}

TEST(SchedTaskState, WakesOfAReadyTaskCoalesce) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  ASSERT_TRUE(s.start().isOk());
  TaskRef t = makeTask(suspendOnce());
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(waitUntil([&] { return t->state() == TaskState::kSuspended; }, "the task to suspend"));
  EXPECT_TRUE(s.wake(t.get()));
  EXPECT_FALSE(s.wake(t.get()));  // ready (or already running): queued once
  ASSERT_TRUE(waitUntil([&] { return t->state() == TaskState::kCompleted; }, "the task to complete"));
  EXPECT_FALSE(s.wake(t.get()));  // terminal: ignored
  s.shutdown();
  EXPECT_EQ(t->dispatches.load(), 2);
}

TEST(SchedTaskState, AWakeWhileRunningRequeuesInsteadOfSuspending) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  ASSERT_TRUE(s.start().isOk());
  std::atomic<int> wakeResult{-1};
  TaskRef t = makeTask([&](Worker&, FnTask& self) {
    if (self.dispatches.load() > 1) return RunOutcome::kCompleted;
    EXPECT_EQ(self.state(), TaskState::kRunning);
    wakeResult = s.wake(&self);
    EXPECT_FALSE(s.wake(&self));  // the notified bit is already set
    return RunOutcome::kSuspended;
  });
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(waitUntil([&] { return t->state() == TaskState::kCompleted; }, "the task to complete"));
  s.shutdown();
  EXPECT_EQ(wakeResult.load(), 0);
  EXPECT_EQ(t->dispatches.load(), 2);
}

// Sees a cancellation at its dispatch; otherwise suspends.
FnTask::Body cancellable() {
  return [](Worker&, FnTask& t) {
    return t.cancelRequested() ? RunOutcome::kCancelled : RunOutcome::kSuspended;
  };
}

TEST(SchedTaskState, CancelMakesASuspendedTaskReadyOnceAndTwiceReturnsFalse) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  ASSERT_TRUE(s.start().isOk());
  TaskRef t = makeTask(cancellable());
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(waitUntil([&] { return t->state() == TaskState::kSuspended; }, "the task to suspend"));
  EXPECT_TRUE(s.cancel(t.get()));
  EXPECT_TRUE(t->cancelRequested());
  EXPECT_FALSE(s.cancel(t.get()));
  ASSERT_TRUE(waitUntil([&] { return t->state() == TaskState::kCancelled; }, "the task to end cancelled"));
  EXPECT_FALSE(s.cancel(t.get()));
  s.shutdown();
  EXPECT_EQ(t->dispatches.load(), 2);
}

// A wake and a cancel race on a suspended task. Each publication queues it once: either
// both land on the same suspension (one dispatch follows, and it sees the cancel), or
// the wake's dispatch suspends again before the cancel arrives (then the cancel queues
// it once more). A double queueing would dispatch a finished task, which the scheduler's
// ready check refuses, or show a second dispatch seeing the cancel.
TEST(SchedTaskState, CancelRacingWakeQueuesOnce) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  ASSERT_TRUE(s.start().isOk());
  for (int round = 0; round < 300; ++round) {
    std::atomic<int> sawCancel{0};
    TaskRef t = makeTask([&](Worker&, FnTask& self) {
      if (!self.cancelRequested()) return RunOutcome::kSuspended;
      sawCancel.fetch_add(1);
      return RunOutcome::kCancelled;
    });
    ASSERT_TRUE(s.spawn(t.get()));
    ASSERT_TRUE(waitUntil([&] { return t->state() == TaskState::kSuspended; }, "the task to suspend"));
    std::atomic<bool> go{false};
    bool woke = false;
    std::thread waker([&] {
      while (!go.load()) {
      }
      woke = s.wake(t.get());
    });
    go = true;
    EXPECT_TRUE(s.cancel(t.get()));
    waker.join();
    ASSERT_TRUE(waitUntil([&] { return isTerminal(t->state()); }, "the task to end"));
    EXPECT_EQ(t->state(), TaskState::kCancelled);
    EXPECT_EQ(sawCancel.load(), 1) << "round " << round;
    int expected = woke ? 3 : 2;
    EXPECT_LE(t->dispatches.load(), expected) << "round " << round;
    EXPECT_GE(t->dispatches.load(), 2) << "round " << round;
  }
  s.shutdown();
}

TEST(SchedTaskState, CancelWhileRunningIsSeenWhenTheTaskSuspends) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  ASSERT_TRUE(s.start().isOk());
  TaskRef t = makeTask([&](Worker&, FnTask& self) {
    if (self.cancelRequested()) return RunOutcome::kCancelled;
    EXPECT_TRUE(s.cancel(&self));
    return RunOutcome::kSuspended;  // would sleep forever without the notified bit
  });
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(waitUntil([&] { return t->state() == TaskState::kCancelled; }, "the task to end cancelled"));
  s.shutdown();
  EXPECT_EQ(t->dispatches.load(), 2);
}

}  // namespace
}  // namespace weft::runtime::test
