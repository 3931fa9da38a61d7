// The load monitor (runtime/sched/load_monitor.h) and the scheduler's use of it: an
// overloaded worker's spawns go to the injection queue, where siblings take them, and
// sticky tasks stay home all the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "runtime/sched/load_monitor.h"
#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

// Feeds a LoadMonitor checks one interval apart, counting its spent slices.
struct Checks {
  LoadMonitor m;
  uint64_t spent = 0;
  void cpuBound(uint32_t own, uint32_t lightest) { next(own, lightest, LoadMonitor::kMinSpentSlices); }
  void shortTasks(uint32_t own, uint32_t lightest) { next(own, lightest, LoadMonitor::kMinSpentSlices - 1); }
  void next(uint32_t own, uint32_t lightest, uint64_t slices) { m.check(own, lightest, spent += slices); }
};

constexpr uint32_t kDeep = LoadMonitor::kMinDepth * 2;

TEST(SchedLoadMonitor, RetargetsAfterConsecutiveOverloadedChecks) {
  Checks c;
  for (uint32_t i = 1; i < LoadMonitor::kChecks; ++i) {
    c.cpuBound(kDeep, 1);
    EXPECT_FALSE(c.m.retargeting()) << "after " << i << " check(s)";
  }
  c.cpuBound(kDeep, 1);
  EXPECT_TRUE(c.m.retargeting());
  c.cpuBound(kDeep + 10, 0);
  EXPECT_TRUE(c.m.retargeting());
  c.cpuBound(kDeep, kDeep / LoadMonitor::kRatio);  // exactly the ratio: balanced enough
  EXPECT_FALSE(c.m.retargeting());
}

TEST(SchedLoadMonitor, OneBalancedCheckRestartsTheCount) {
  Checks c;
  for (uint32_t i = 1; i < LoadMonitor::kChecks; ++i) c.cpuBound(kDeep, 0);
  c.cpuBound(kDeep, kDeep);  // the siblings caught up
  for (uint32_t i = 1; i < LoadMonitor::kChecks; ++i) c.cpuBound(kDeep, 0);
  EXPECT_FALSE(c.m.retargeting());
  c.cpuBound(kDeep, 0);
  EXPECT_TRUE(c.m.retargeting());
  c.m.reset();
  EXPECT_FALSE(c.m.retargeting());
  c.cpuBound(kDeep, 0);
  EXPECT_EQ(c.m.retargeting(), LoadMonitor::kChecks == 1);
}

TEST(SchedLoadMonitor, AShallowQueueIsNeverOverloaded) {
  Checks c;
  for (int i = 0; i < 10; ++i) c.cpuBound(LoadMonitor::kMinDepth - 1, 0);
  EXPECT_FALSE(c.m.retargeting());
}

// Tasks that end or wait within their slice (a fork-join tree) keep their depth-first
// order however deep the queue: stealing spreads them.
TEST(SchedLoadMonitor, ADeepQueueOfShortTasksIsNotOverloaded) {
  Checks c;
  for (int i = 0; i < 10; ++i) c.shortTasks(kDeep * 4, 0);
  EXPECT_FALSE(c.m.retargeting());
  for (uint32_t i = 0; i < LoadMonitor::kChecks; ++i) c.cpuBound(kDeep, 0);
  EXPECT_TRUE(c.m.retargeting());
  c.shortTasks(kDeep, 0);
  EXPECT_FALSE(c.m.retargeting());
}

// A sticky spawner on worker 0 keeps spawning long CPU-bound tasks (each spends its
// whole slice at every dispatch) while worker 1 is held by a task that spins until the
// spawner is done (so it cannot steal, and its queue stays empty): worker 0's queue grows
// far past its sibling's, and the monitor retargets its spawns. The spawner and the
// sticky tasks it spawns meanwhile run on worker 0 only. Once worker 1 is free it runs
// some of the retargeted tasks, which last until one of them ran there (counted at each
// dispatch: a task that ran there may end on worker 0, so its last worker says nothing).
TEST(SchedLoadBalance, AnOverloadedWorkerSpreadsItsSpawnsAndStickyTasksStayHome) {
  constexpr int kSpawnerDispatches = 300, kPerDispatch = 2, kLongDispatches = 40;
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 11, .slice = 100}, ex);
  ASSERT_TRUE(s.start().isOk());
  std::mutex mu;
  std::vector<TaskRef> spawned;   // mu
  std::vector<unsigned> stickyWorkers;  // mu: where each sticky dispatch ran
  int stickyWhileRetargeting = 0;       // the spawner's own
  std::atomic<bool> ranOnOne{false};
  std::atomic<int> dispatchesOnOne{0};
  auto longTask = [&] {
    TaskRef t = makeTask([&](Worker& w, FnTask& self) {
      if (w.index() == 1) {
        ranOnOne = true;
        ++dispatchesOnOne;
      }
      bool more = self.dispatches.load() < kLongDispatches || !ranOnOne.load();
      return more ? RunOutcome::kBudgetSpent : RunOutcome::kCompleted;
    });
    t->cost = 100;
    return t;
  };
  auto stickyTask = [&] {
    TaskRef t = makeTask([&](Worker& w, FnTask& self) {
      std::lock_guard lock(mu);
      stickyWorkers.push_back(w.index());
      return self.dispatches.load() < 5 ? RunOutcome::kYielded : RunOutcome::kCompleted;
    });
    t->setSticky(true);
    return t;
  };
  TaskRef spawner = makeTask([&](Worker& w, FnTask& self) {
    {
      std::lock_guard lock(mu);
      stickyWorkers.push_back(w.index());
      for (int i = 0; i < kPerDispatch; ++i) {
        spawned.push_back(longTask());
        EXPECT_TRUE(s.spawn(spawned.back().get()));
      }
      if (self.dispatches.load() % 10 == 0) {
        if (SchedulerInternals::of(s).cores[w.index()]->load.retargeting()) ++stickyWhileRetargeting;
        spawned.push_back(stickyTask());
        EXPECT_TRUE(s.spawn(spawned.back().get()));
      }
    }
    return self.dispatches.load() < kSpawnerDispatches ? RunOutcome::kBudgetSpent : RunOutcome::kCompleted;
  });
  spawner->setSticky(true);
  spawner->cost = 100;
  // The hog: bounced by worker 0 until worker 1 takes it, then holds worker 1.
  std::atomic<bool> hogHolds{false};
  TaskRef hog = makeTask([&](Worker& w, FnTask&) {
    if (w.index() == 0) return RunOutcome::kYielded;
    hogHolds = true;
    while (!isTerminal(spawner->state())) std::this_thread::yield();
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(hog.get()));
  ASSERT_TRUE(waitUntil([&] { return hogHolds.load(); }, "worker 1 to take the hog"));
  ASSERT_TRUE(s.spawn(spawner.get()));  // from outside the workers: home 0
  ASSERT_TRUE(waitUntil([&] { return isTerminal(spawner->state()); }, "the spawner to finish"));
  ASSERT_TRUE(waitUntil([&] {
    std::lock_guard lock(mu);
    return std::all_of(spawned.begin(), spawned.end(),
                       [](const TaskRef& t) { return isTerminal(t->state()); });
  }, "every spawned task to finish"));

  std::vector<WorkerStats> stats = s.stats();
  EXPECT_GT(stats[0].spawnsRetargeted, 0u);
  EXPECT_EQ(stats[1].spawnsRetargeted, 0u);  // it spawns nothing
  EXPECT_GT(dispatchesOnOne.load(), 0);
  EXPECT_GT(stickyWhileRetargeting, 0);
  std::lock_guard lock(mu);
  EXPECT_TRUE(std::all_of(stickyWorkers.begin(), stickyWorkers.end(), [](unsigned w) { return w == 0; }));
}

}  // namespace
}  // namespace weft::runtime::test
