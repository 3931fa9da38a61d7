// Timers (timer_service.h) and onAllBlocked, which counts them as future work.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "runtime/sched/timer_service.h"
#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

TEST(SchedTimerHeap, PopsInDeadlineOrderAndRemovesAnyEntry) {
  TimerHeap heap;
  Clock::time_point base = Clock::now();
  std::vector<int> offsets = {50, 10, 40, 10, 30, 20, 60, 0};
  for (size_t i = 0; i < offsets.size(); ++i)
    heap.push({base + std::chrono::milliseconds(offsets[i]), i + 1, {}});
  EXPECT_TRUE(heap.remove(3));   // the 40
  EXPECT_FALSE(heap.remove(3));
  EXPECT_TRUE(heap.remove(7));   // the 60
  std::vector<TimerId> order;
  while (!heap.empty()) order.push_back(heap.pop().id);
  EXPECT_EQ(order, (std::vector<TimerId>{8, 2, 4, 6, 5, 1}));  // equal deadlines: FIFO
}

TEST(SchedTimerService, RunsInOrderAndCancels) {
  std::atomic<int> drained{0};
  TimerService timers({[&] { drained.fetch_add(1); }, {}});
  timers.start();
  std::mutex mu;
  std::vector<int> fired;
  Clock::time_point base = Clock::now() + 20ms;
  for (int i : {3, 1, 2}) {
    timers.add(base + std::chrono::milliseconds(5 * i), [&, i] {
      std::lock_guard lock(mu);
      fired.push_back(i);
    });
  }
  TimerId cancelled = timers.add(base, [&] {
    std::lock_guard lock(mu);
    fired.push_back(0);
  });
  EXPECT_TRUE(timers.cancel(cancelled));
  EXPECT_FALSE(timers.cancel(cancelled));
  ASSERT_TRUE(waitUntil([&] { return timers.pending() == 0; }, "the three timers to run"));
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(fired, (std::vector<int>{1, 2, 3}));
  }
  EXPECT_EQ(drained.load(), 1);  // once, when the last timer ran
  TimerId ran = timers.add(Clock::now(), [] {});
  ASSERT_TRUE(waitUntil([&] { return timers.pending() == 0; }, "a timer due now to run"));
  EXPECT_FALSE(timers.cancel(ran));
}

// The timer thread sleeps on its condition variable: with no timer, or one far away, it
// does not loop.
TEST(SchedTimerService, DoesNotSpin) {
  TimerService timers({});
  timers.start();
  std::this_thread::sleep_for(100ms);
  EXPECT_LE(timers.loopIterations(), 2u);
  TimerId far = timers.add(Clock::now() + 1h, [] {});
  std::this_thread::sleep_for(100ms);
  EXPECT_LE(timers.loopIterations(), 4u);
  EXPECT_TRUE(timers.cancel(far));
}

// Not a speed goal (that is a benchmark's job): a 1 ms timer must not be late by more
// than scheduling noise, which would show a polling design.
TEST(SchedTimerService, FiresNearItsDeadline) {
  TimerService timers({});
  timers.start();
  std::vector<double> lateMicros;
  for (int i = 0; i < 20; ++i) {
    std::atomic<bool> done{false};
    Clock::time_point deadline = Clock::now() + 1ms;
    std::atomic<int64_t> late{0};
    timers.add(deadline, [&] {
      late = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - deadline).count();
      done = true;
    });
    ASSERT_TRUE(waitUntil([&] { return done.load(); }, "a 1 ms timer to fire")) << "timer " << i;
    EXPECT_GE(late.load(), 0);
    lateMicros.push_back(static_cast<double>(late.load()));
  }
  std::sort(lateMicros.begin(), lateMicros.end());
  double median = lateMicros[lateMicros.size() / 2];
  std::printf("timer lateness: median %.0f us, max %.0f us\n", median, lateMicros.back());
  EXPECT_LT(median, 5000.0);
}

TEST(SchedTimerService, ACallbackThatThrowsIsReported) {
  std::atomic<int> reports{0};
  TimerService timers({{}, [&](const char*) { reports.fetch_add(1); }});
  timers.start();
  timers.add(Clock::now(), [] { throw std::runtime_error("x"); });
  ASSERT_TRUE(waitUntil([&] { return reports.load() == 1; }, "the throwing callback to be reported"));
}

TEST(SchedTimers, ATimerWakesASuspendedTask) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  ASSERT_TRUE(s.start().isOk());
  TaskRef t = makeTask([&](Worker&, FnTask& self) {
    if (self.dispatches.load() > 1) return RunOutcome::kCompleted;
    s.addTimer(Clock::now() + 5ms, [&s, task = &self] { s.wake(task); });
    return RunOutcome::kSuspended;
  });
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(waitUntil([&] { return t->state() == TaskState::kCompleted; }, "the timer to wake the task"));
}

// --- onAllBlocked -------------------------------------------------------------------

TEST(SchedAllBlocked, FiresOnceWhenTheLastTaskSuspendsForGood) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  TaskRef t = makeTask([](Worker&, FnTask&) { return RunOutcome::kSuspended; });
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return ex.allBlocked.load() == 1; }, "the all-blocked callback"));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ex.allBlocked.load(), 1);
  EXPECT_EQ(t->state(), TaskState::kSuspended);
}

TEST(SchedAllBlocked, DoesNotFireWhileATaskRunsOnAnotherWorker) {
  TestExecutor ex;
  std::atomic<bool> release{false};  // outlives the scheduler, whose shutdown waits for the task reading it
  Scheduler s({.workers = 2, .seed = 1}, ex);
  TaskRef t = makeTask([&](Worker&, FnTask&) {
    EXPECT_TRUE(waitUntil([&] { return release.load(); }, "the test to release the running task"));
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return sleepers(s) == 1; }, "the other worker to park"));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ex.allBlocked.load(), 0);
  release = true;
  ASSERT_TRUE(waitUntil([&] { return ex.allBlocked.load() == 1; }, "the all-blocked callback after the task"));
  EXPECT_EQ(t->state(), TaskState::kCompleted);
}

TEST(SchedAllBlocked, DoesNotFireWhileATaskSleepsOnATimer) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  TaskRef t = makeTask([&](Worker&, FnTask& self) {
    if (self.dispatches.load() > 1) return RunOutcome::kCompleted;
    s.addTimer(Clock::now() + 150ms, [&s, task = &self] { s.wake(task); });
    return RunOutcome::kSuspended;
  });
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return allParked(s); }, "both workers to park"));
  EXPECT_EQ(t->state(), TaskState::kSuspended);
  EXPECT_EQ(ex.allBlocked.load(), 0);
  ASSERT_TRUE(waitUntil([&] { return t->state() == TaskState::kCompleted; }, "the timer to wake the task"));
  ASSERT_TRUE(waitUntil([&] { return ex.allBlocked.load() == 1; }, "the all-blocked callback after the task"));
}

// A timer that publishes nothing still counted as future work; once it has run, the
// workers (all parked meanwhile) must notice that nothing can run any more.
TEST(SchedAllBlocked, FiresAfterTheLastTimerRunsWithoutWakingAnything) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  std::atomic<bool> timerRan{false};
  TaskRef t = makeTask([&](Worker&, FnTask&) {
    s.addTimer(Clock::now() + 50ms, [&] { timerRan = true; });
    return RunOutcome::kSuspended;
  });
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return allParked(s); }, "both workers to park"));
  EXPECT_EQ(ex.allBlocked.load(), 0);
  ASSERT_TRUE(waitUntil([&] { return ex.allBlocked.load() == 1; }, "the all-blocked callback after the timer"));
  EXPECT_TRUE(timerRan.load());
}

TEST(SchedAllBlocked, DoesNotFireDuringABlockingRegion) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  TaskRef t = makeTask([&](Worker& w, FnTask&) {
    EXPECT_TRUE(s.enterBlocking(w, Blocking::kOs).isOk());
    std::this_thread::sleep_for(100ms);
    s.leaveBlocking(w);
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return ex.allBlocked.load() == 1; }, "the all-blocked callback after the region"));
  EXPECT_EQ(t->state(), TaskState::kCompleted);  // it fired only after the region
}

TEST(SchedAllBlocked, ACloseFromTheCallbackStopsTheWorkers) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  ex.onAllBlockedHook = [&] { s.close("deadlock: all tasks are blocked"); };
  TaskRef t = makeTask([](Worker&, FnTask&) { return RunOutcome::kSuspended; });
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return ex.stops.load() == 2; }, "both workers to stop after the close"));
  EXPECT_EQ(s.closeReason(), "deadlock: all tasks are blocked");
  EXPECT_EQ(ex.allBlocked.load(), 1);
}

}  // namespace
}  // namespace weft::runtime::test
