// The scheduler's policies: sticky tasks, the LIFO limit, budget fairness, blocking
// regions (more in handoff_test.cpp), close and shutdown, contained panics, statistics
// and executor callbacks.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

TEST(SchedScheduler, RunsTasksAndPairsIdleWithBusy) {
  TestExecutor ex;
  std::atomic<int> destroyed{0};
  {
    Scheduler s({.workers = 2, .seed = 3}, ex);
    EXPECT_EQ(s.workerCount(), 2u);
    std::vector<TaskRef> tasks;
    for (int i = 0; i < 100; ++i) {
      tasks.push_back(makeTask({}, &destroyed));
      ASSERT_TRUE(s.spawn(tasks.back().get()));
    }
    ASSERT_TRUE(s.start().isOk());
    ASSERT_TRUE(waitUntil([&] {
      for (auto& t : tasks)
        if (t->state() != TaskState::kCompleted) return false;
      return true;
    }, "the 100 tasks to complete"));
    uint64_t run = 0;
    for (const WorkerStats& st : s.stats()) {
      run += st.tasksRun;
      EXPECT_EQ(st.stealsFrom.size(), 2u);
    }
    EXPECT_EQ(run, 100u);
    for (auto& t : tasks) EXPECT_EQ(t->dispatches.load(), 1);
  }
  EXPECT_EQ(destroyed.load(), 100);
  EXPECT_EQ(ex.starts.load(), 2);
  EXPECT_EQ(ex.stops.load(), 2);
  EXPECT_EQ(ex.idles.load(), ex.busies.load());
}

TEST(SchedScheduler, StickyTasksNeverLeaveTheirWorker) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 5}, ex);
  std::mutex mu;
  std::vector<std::pair<int, int>> runs;  // (home, worker)
  std::vector<TaskRef> spawned;
  auto sticky = [&](Worker& w, FnTask& t) {
    std::lock_guard lock(mu);
    runs.emplace_back(t.homeWorker(), static_cast<int>(w.index()));
    return t.dispatches.load() < 50 ? RunOutcome::kYielded : RunOutcome::kCompleted;
  };
  auto busy = [](Worker&, FnTask& t) {
    std::this_thread::sleep_for(20us);
    return t.dispatches.load() < 20 ? RunOutcome::kYielded : RunOutcome::kCompleted;
  };
  TaskRef parent = makeTask([&](Worker&, FnTask&) {
    std::lock_guard lock(mu);
    for (int i = 0; i < 20; ++i) {
      spawned.push_back(makeTask(i % 2 ? FnTask::Body(sticky) : FnTask::Body(busy)));
      spawned.back()->setSticky(i % 2 == 1);
      EXPECT_TRUE(s.spawn(spawned.back().get()));
    }
    return RunOutcome::kCompleted;
  });
  TaskRef outside = makeTask(sticky);
  outside->setSticky(true);
  ASSERT_TRUE(s.spawn(parent.get()));
  ASSERT_TRUE(s.spawn(outside.get()));
  EXPECT_EQ(outside->homeWorker(), 0);  // spawned outside a worker
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] {
    std::lock_guard lock(mu);
    if (spawned.size() < 20 || outside->state() != TaskState::kCompleted) return false;
    for (auto& t : spawned)
      if (t->state() != TaskState::kCompleted) return false;
    return true;
  }, "the 21 spawned tasks to complete"));
  s.shutdown();
  EXPECT_EQ(runs.size(), 11u * 50);
  for (auto [home, worker] : runs) EXPECT_EQ(home, worker);
}

// Two tasks that wake each other through the LIFO slot must not starve a third task
// waiting in the local queue: the slot serves at most kLifoLimit dispatches in a row.
TEST(SchedScheduler, LifoLimitStopsAPingPongFromStarvingTheQueue) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  std::atomic<bool> thirdRan{false};
  std::atomic<int> pingPongs{0}, pingPongsBeforeThird{-1};
  FnTask* a = nullptr;
  FnTask* b = nullptr;
  auto player = [&](FnTask*& partner) {
    return [&](Worker&, FnTask& self) {
      if (self.dispatches.load() == 1) return RunOutcome::kSuspended;  // wait for the serve
      if (thirdRan.load() || pingPongs.load() > 10000) {
        s.wake(partner);  // let the partner finish too
        return RunOutcome::kCompleted;
      }
      pingPongs.fetch_add(1);
      s.wake(partner);
      return RunOutcome::kSuspended;
    };
  };
  TaskRef ta = makeTask(player(b)), tb = makeTask(player(a));
  a = ta.get();
  b = tb.get();
  TaskRef third = makeTask([&](Worker&, FnTask&) {
    pingPongsBeforeThird = pingPongs.load();
    thirdRan = true;
    return RunOutcome::kCompleted;
  });
  TaskRef serve = makeTask([&](Worker&, FnTask&) {
    EXPECT_TRUE(s.wake(a));  // into the LIFO slot
    EXPECT_TRUE(s.spawn(third.get()));  // into the spawn stack
    return RunOutcome::kCompleted;
  });
  for (FnTask* t : {a, b, serve.get()}) ASSERT_TRUE(s.spawn(t));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] {
    return ta->state() == TaskState::kCompleted && tb->state() == TaskState::kCompleted;
  }, "both ping-pong players to complete"));
  s.shutdown();
  EXPECT_TRUE(thirdRan.load());
  EXPECT_GE(pingPongsBeforeThird.load(), 0);
  EXPECT_LE(pingPongsBeforeThird.load(), static_cast<int>(Scheduler::kLifoLimit));
}

// Tasks that spend their budget go to the tail of the local queue: on one worker they
// take turns.
TEST(SchedScheduler, BudgetRequeueTakesTurns) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  std::vector<uint64_t> order;  // written by the single worker only
  std::vector<TaskRef> tasks;
  for (int i = 0; i < 3; ++i) {
    tasks.push_back(makeTask([&](Worker&, FnTask& t) {
      order.push_back(t.id());
      return t.dispatches.load() < 100 ? RunOutcome::kBudgetSpent : RunOutcome::kCompleted;
    }));
  }
  TaskRef parent = makeTask([&](Worker&, FnTask&) {
    for (auto& t : tasks) EXPECT_TRUE(s.spawn(t.get()));  // into the local queue
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(parent.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] {
    for (auto& t : tasks)
      if (t->state() != TaskState::kCompleted) return false;
    return true;
  }, "the three budget spenders to complete"));
  s.shutdown();
  ASSERT_EQ(order.size(), 300u);
  for (size_t i = 3; i < order.size(); ++i) EXPECT_EQ(order[i], order[i - 3]) << "dispatch " << i;
  EXPECT_EQ(s.stats()[0].budgetExhaustions, 297u);
}

// A worker whose local queue never empties still polls the injection queue, even when
// no dispatch spends its budget (here they yield).
TEST(SchedScheduler, TheInjectionQueueIsPolledEvery61stDispatch) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  std::atomic<bool> outsiderRan{false};
  std::atomic<int> spinsBeforeOutsider{-1};
  std::atomic<bool> spinning{false};
  Clock::time_point giveUp = Clock::now() + 5s;
  TaskRef spinner = makeTask([&](Worker&, FnTask&) {
    spinning = true;
    if (outsiderRan.load() || Clock::now() > giveUp) return RunOutcome::kCompleted;
    return RunOutcome::kYielded;
  });
  TaskRef outsider = makeTask([&](Worker&, FnTask&) {
    spinsBeforeOutsider = spinner->dispatches.load();
    outsiderRan = true;
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(spinner.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return spinning.load(); }, "the spinner to run"));
  ASSERT_TRUE(s.spawn(outsider.get()));
  // Read once the outsider is published: the spinner's dispatches between this read and
  // the outsider's run are no more than those since the publication (read before the
  // spawn, dispatches made while spawn ran would count too: ThreadSanitizer saw 63).
  int before = spinner->dispatches.load();
  ASSERT_TRUE(waitUntil([&] { return spinner->state() == TaskState::kCompleted; }, "the spinner to complete"));
  EXPECT_TRUE(outsiderRan.load());
  EXPECT_LE(spinsBeforeOutsider.load() - before, static_cast<int>(Scheduler::kInjectionInterval) + 1);
}

// A task published from outside the workers (a timer's wake) runs right after the next
// dispatch that spends its budget, not up to kInjectionInterval dispatches later.
TEST(SchedScheduler, TheInjectionQueueIsPolledAfterABudgetSpentDispatch) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  std::atomic<bool> outsiderRan{false};
  std::atomic<int> spinsBeforeOutsider{-1};
  std::atomic<bool> spinning{false};
  Clock::time_point giveUp = Clock::now() + 5s;
  TaskRef spinner = makeTask([&](Worker&, FnTask&) {
    spinning = true;
    if (outsiderRan.load() || Clock::now() > giveUp) return RunOutcome::kCompleted;
    std::this_thread::sleep_for(20us);  // the outsider is published during some dispatch
    return RunOutcome::kBudgetSpent;
  });
  TaskRef outsider = makeTask([&](Worker&, FnTask&) {
    spinsBeforeOutsider = spinner->dispatches.load();
    outsiderRan = true;
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(spinner.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return spinning.load(); }, "the spinner to run"));
  int before = spinner->dispatches.load();
  ASSERT_TRUE(s.spawn(outsider.get()));
  ASSERT_TRUE(waitUntil([&] { return spinner->state() == TaskState::kCompleted; }, "the spinner to complete"));
  EXPECT_TRUE(outsiderRan.load());
  // The dispatch running at the spawn, and at most one more that had begun meanwhile.
  EXPECT_LE(spinsBeforeOutsider.load() - before, 2);
}

// The budget poll cannot starve the local queue: when the injection queue never empties,
// a task taken by the poll that spends its budget does not poll again, so the dispatches
// of fresh tasks from the injection queue never come in a long run.
TEST(SchedScheduler, TheBudgetPollLeavesTheLocalQueueItsTurns) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  constexpr int kInjected = 200;
  std::vector<bool> fresh;  // per dispatch: an injected task's first; worker-only, read after shutdown
  std::atomic<int> injectedDone{0};
  std::atomic<bool> localRunning{false};
  Clock::time_point giveUp = Clock::now() + 10s;
  TaskRef local = makeTask([&](Worker&, FnTask&) {
    fresh.push_back(false);
    localRunning = true;
    if (injectedDone.load() == kInjected || Clock::now() > giveUp) return RunOutcome::kCompleted;
    return RunOutcome::kBudgetSpent;
  });
  TaskRef parent = makeTask([&](Worker&, FnTask&) {
    EXPECT_TRUE(s.spawn(local.get()));  // into the local queue
    return RunOutcome::kCompleted;
  });
  std::vector<TaskRef> injected;
  for (int i = 0; i < kInjected; ++i) {
    injected.push_back(makeTask([&](Worker&, FnTask& t) {
      fresh.push_back(t.dispatches.load() == 1);
      if (t.dispatches.load() == 1) return RunOutcome::kBudgetSpent;
      injectedDone.fetch_add(1);
      return RunOutcome::kCompleted;
    }));
  }
  ASSERT_TRUE(s.spawn(parent.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return localRunning.load(); }, "the local task to run"));
  for (auto& t : injected) ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(waitUntil([&] { return local->state() == TaskState::kCompleted; }, "the local task to complete", 15s));
  s.shutdown();
  EXPECT_EQ(injectedDone.load(), kInjected);
  // Two in a row only when the every-61st poll follows a budget poll.
  size_t run = 0, longest = 0;
  for (bool f : fresh) {
    run = f ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  EXPECT_GE(longest, 1u);
  EXPECT_LE(longest, 2u);
}

// While a thread blocks, its worker's LIFO slot and local queue run on another thread.
TEST(SchedScheduler, EnterBlockingHandsTheQueueToAnotherThread) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 9}, ex);
  std::atomic<std::thread::id> blocker{};
  std::atomic<int> ranElsewhere{0};
  auto child = [&](Worker&, FnTask&) {
    if (std::this_thread::get_id() != blocker.load()) ranElsewhere.fetch_add(1);
    return RunOutcome::kCompleted;
  };
  TaskRef suspended = makeTask([&](Worker&, FnTask& t) {
    if (t.dispatches.load() == 1) return RunOutcome::kSuspended;
    if (std::this_thread::get_id() != blocker.load()) ranElsewhere.fetch_add(1);
    return RunOutcome::kCompleted;
  });
  std::vector<TaskRef> children;
  for (int i = 0; i < 10; ++i) children.push_back(makeTask(child));
  TaskRef parent = makeTask([&](Worker& w, FnTask&) {
    blocker = std::this_thread::get_id();
    EXPECT_TRUE(s.wake(suspended.get()));  // the LIFO slot: never stolen
    for (auto& c : children) EXPECT_TRUE(s.spawn(c.get()));
    EXPECT_TRUE(s.enterBlocking(w, Blocking::kOs).isOk());
    EXPECT_TRUE(waitUntil([&] { return ranElsewhere.load() == 11; },
                          "the blocked worker's 11 queued tasks to run on another thread", 5s));
    s.leaveBlocking(w);
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(suspended.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return suspended->state() == TaskState::kSuspended; }, "the task to suspend"));
  ASSERT_TRUE(s.spawn(parent.get()));
  ASSERT_TRUE(waitUntil([&] { return parent->state() == TaskState::kCompleted; }, "the blocking parent to complete"));
  s.shutdown();
}

TEST(SchedScheduler, CloseWakesParkedWorkersAndRefusesSpawn) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return allParked(s); }, "both workers to park"));
  EXPECT_FALSE(s.closed());
  s.close("first");
  s.close("second");
  EXPECT_TRUE(s.closed());
  EXPECT_EQ(s.closeReason(), "first");
  ASSERT_TRUE(waitUntil([&] { return ex.stops.load() == 2; }, "both workers to stop without a join"));
  TaskRef t = makeTask();
  EXPECT_FALSE(s.spawn(t.get()));
  s.shutdown();
  s.shutdown();
  EXPECT_EQ(t->dispatches.load(), 0);
}

TEST(SchedScheduler, ShutdownReleasesQueuedTasksWithoutRunningThem) {
  TestExecutor ex;
  std::atomic<int> destroyed{0};
  {
    Scheduler s({.workers = 2, .seed = 1}, ex);
    for (int i = 0; i < 50; ++i) {
      TaskRef t = makeTask({}, &destroyed);
      t->setSticky(i % 5 == 0);
      ASSERT_TRUE(s.spawn(t.get()));
    }
    EXPECT_EQ(destroyed.load(), 0);  // the scheduler holds them
    s.close("stop");
    ASSERT_TRUE(s.start().isOk());
  }
  EXPECT_EQ(destroyed.load(), 50);
  EXPECT_EQ(ex.busies.load(), 0);
}

TEST(SchedScheduler, AFailingWorkerStartClosesTheScheduler) {
  TestExecutor ex;
  ex.failStart = true;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  EXPECT_FALSE(s.start().isOk());
  EXPECT_TRUE(s.closed());
  EXPECT_EQ(ex.stops.load(), 0);
}

TEST(SchedScheduler, APanicIsContainedAndTheWorkerRunsOn) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  TaskRef bad = makeTask([](Worker&, FnTask&) -> RunOutcome { throw std::runtime_error("boom"); });
  TaskRef good = makeTask();
  ASSERT_TRUE(s.spawn(bad.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return bad->state() == TaskState::kPanicked; }, "the throwing task to end panicked"));
  ASSERT_TRUE(s.spawn(good.get()));
  ASSERT_TRUE(waitUntil([&] { return good->state() == TaskState::kCompleted; }, "the next task to complete"));
  EXPECT_FALSE(s.closed());
}

TEST(SchedScheduler, StatisticsCountPausesAndDepth) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  std::vector<TaskRef> kids;
  TaskRef parent = makeTask([&](Worker& w, FnTask&) {
    for (int i = 0; i < 10; ++i) {
      kids.push_back(makeTask());
      EXPECT_TRUE(s.spawn(kids.back().get()));
    }
    w.notePause(100);
    w.notePause(300);
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(parent.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return allParked(s) && s.stats()[0].tasksRun == 11; }, "the parent and its kids to run"));
  WorkerStats st = s.stats()[0];
  EXPECT_EQ(st.gcPauses, 2u);
  EXPECT_EQ(st.gcPauseTotalNanos, 400u);
  EXPECT_EQ(st.gcPauseMaxNanos, 300u);
  EXPECT_EQ(st.queueDepth, 0u);
  EXPECT_EQ(st.queueDepthMax, 10u);
  EXPECT_EQ(st.stealsFromInjection, 1u);
  EXPECT_GE(st.parks, 1u);
}

TEST(SchedScheduler, CurrentWorkerIsThreadLocal) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 1}, ex);
  EXPECT_EQ(Scheduler::currentWorker(), nullptr);
  std::atomic<Worker*> seen{nullptr};
  std::atomic<Worker*> given{nullptr};
  TaskRef t = makeTask([&](Worker& w, FnTask&) {
    seen = Scheduler::currentWorker();
    given = &w;
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(t.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return t->state() == TaskState::kCompleted; }, "the task to complete"));
  EXPECT_EQ(seen.load(), given.load());
  EXPECT_NE(seen.load(), nullptr);
}

}  // namespace
}  // namespace weft::runtime::test
