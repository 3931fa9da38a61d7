// The spawn stack (runtime/sched/spawn_stack.h) and the scheduler's use of it: depth
// first across batches, spawn order within one, one slice for a chain of spawned tasks,
// sharing with a hungry sibling.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "runtime/sched/spawn_stack.h"
#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

std::vector<FnTask*> popAll(SpawnStack& s) {
  std::vector<FnTask*> out;
  while (Task* t = s.pop()) out.push_back(static_cast<FnTask*>(t));
  return out;
}

TEST(SchedSpawnStack, ASealedBatchPopsInPushOrderNewestBatchFirst) {
  std::vector<TaskRef> t;
  for (int i = 0; i < 5; ++i) t.push_back(makeTask());
  SpawnStack s;
  s.push(t[0].get());
  s.push(t[1].get());
  s.sealBatch();
  s.push(t[2].get());
  s.push(t[3].get());
  s.push(t[4].get());
  s.sealBatch();
  s.sealBatch();  // idempotent
  std::vector<FnTask*> expected{t[2].get(), t[3].get(), t[4].get(), t[0].get(), t[1].get()};
  EXPECT_EQ(popAll(s), expected);
  EXPECT_TRUE(s.empty());
}

TEST(SchedSpawnStack, SpillTakesTheOldestAndNeverTheOpenBatch) {
  std::vector<TaskRef> t;
  for (int i = 0; i < 4; ++i) t.push_back(makeTask());
  SpawnStack s;
  s.push(t[0].get());
  s.push(t[1].get());
  s.sealBatch();  // pops t0 first, then t1
  s.push(t[2].get());
  s.push(t[3].get());  // open batch
  TaskList out;
  s.spillOldest(4, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out.pop(), t[1].get());  // the bottom of the stack: the last to pop
  EXPECT_EQ(out.pop(), t[0].get());
  s.sealBatch();
  std::vector<FnTask*> expected{t[2].get(), t[3].get()};
  EXPECT_EQ(popAll(s), expected);
}

TEST(SchedSpawnStack, ABatchFillsAtItsLimit) {
  std::vector<TaskRef> t;
  for (uint32_t i = 0; i < SpawnStack::kBatchLimit; ++i) t.push_back(makeTask());
  SpawnStack s;
  for (auto& r : t) {
    EXPECT_FALSE(s.batchFull());
    s.push(r.get());
  }
  EXPECT_TRUE(s.batchFull());
  s.sealBatch();
  EXPECT_FALSE(s.batchFull());
  popAll(s);
}

// One worker: a tree of spawns runs depth first, each node's children in spawn order;
// the tasks a dispatch spawns past the batch limit queue behind them, in order too.
TEST(SchedSpawnStack, OneWorkerRunsATreeDepthFirst) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  std::vector<std::string> order;  // the single worker's
  std::vector<TaskRef> all;
  std::function<FnTask*(std::string, int)> node = [&](std::string name, int kids) {
    all.push_back(makeTask([&, name, kids](Worker&, FnTask&) {
      order.push_back(name);
      for (int i = 0; i < kids; ++i) EXPECT_TRUE(s.spawn(node(name + std::to_string(i), kids == 20 ? 0 : kids - 1)));
      return RunOutcome::kCompleted;
    }));
    return all.back().get();
  };
  FnTask* root = node("r", 2);
  FnTask* wide = node("w", 20);
  TaskRef seed = makeTask([&](Worker&, FnTask&) {
    EXPECT_TRUE(s.spawn(root));
    EXPECT_TRUE(s.spawn(wide));
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(seed.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return allParked(s) && s.stats()[0].tasksRun == 27; }, "the 27 tasks to run"));
  s.shutdown();
  std::vector<std::string> expected{"r", "r0", "r00", "r1", "r10", "w"};
  for (int i = 0; i < 20; ++i) expected.push_back("w" + std::to_string(i));
  EXPECT_EQ(order, expected);
}

// A chain of spawned tasks spends one slice: each runs on what the previous left.
TEST(SchedSpawnStack, SpawnedTasksInheritTheSlice) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1, .slice = 100}, ex);
  std::vector<TaskRef> kids;
  for (int i = 0; i < 3; ++i) {
    kids.push_back(makeTask());
    kids.back()->cost = 40;
  }
  TaskRef parent = makeTask([&](Worker&, FnTask&) {
    for (auto& k : kids) EXPECT_TRUE(s.spawn(k.get()));
    return RunOutcome::kCompleted;
  });
  parent->cost = 10;
  ASSERT_TRUE(s.spawn(parent.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return allParked(s) && s.stats()[0].tasksRun == 4; }, "the parent and its kids to run"));
  s.shutdown();
  EXPECT_EQ(parent->budgets, std::vector<int32_t>{100});
  EXPECT_EQ(kids[0]->budgets, std::vector<int32_t>{90});
  EXPECT_EQ(kids[1]->budgets, std::vector<int32_t>{50});
  EXPECT_EQ(kids[2]->budgets, std::vector<int32_t>{10});
}

// Two workers: tasks spawned while the sibling was busy stay with the spawner; once the
// sibling runs out of work, it gets the older half at the spawner's next pick.
TEST(SchedSpawnStack, AHungrySiblingGetsSpawnedWork) {
  TestExecutor ex;
  std::atomic<bool> spawnedAll{false};  // outlives the scheduler, whose shutdown waits for the blocker
  Scheduler s({.workers = 2, .seed = 1}, ex);
  std::mutex mu;
  std::vector<unsigned> workerOfKid;
  std::atomic<bool> siblingBusy{false};
  // Holds the other worker until the spawns are done, so that they go to the stack.
  TaskRef blocker = makeTask([&](Worker&, FnTask&) {
    siblingBusy = true;
    EXPECT_TRUE(waitUntil([&] { return spawnedAll.load(); }, "the parent to spawn its kids"));
    return RunOutcome::kCompleted;
  });
  std::vector<TaskRef> kids;
  for (int i = 0; i < 8; ++i) {
    kids.push_back(makeTask([&](Worker& w, FnTask&) {
      std::this_thread::sleep_for(20ms);  // the sibling goes hungry meanwhile
      std::lock_guard lock(mu);
      workerOfKid.push_back(w.index());
      return RunOutcome::kCompleted;
    }));
  }
  unsigned parentWorker = 0;
  TaskRef parent = makeTask([&](Worker& w, FnTask&) {
    parentWorker = w.index();
    for (auto& k : kids) EXPECT_TRUE(s.spawn(k.get()));
    spawnedAll = true;
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(s.spawn(blocker.get()));
  ASSERT_TRUE(waitUntil([&] { return siblingBusy.load(); }, "the blocker to hold the other worker"));
  ASSERT_TRUE(s.spawn(parent.get()));
  ASSERT_TRUE(waitUntil([&] {
    std::lock_guard lock(mu);
    return workerOfKid.size() == 8;
  }, "the eight kids to run"));
  s.shutdown();
  EXPECT_EQ(s.stats()[parentWorker].queueDepthMax, 8u);  // all eight waited in its stack
  size_t elsewhere = std::count_if(workerOfKid.begin(), workerOfKid.end(),
                                   [&](unsigned w) { return w != parentWorker; });
  EXPECT_GE(elsewhere, 1u);
  EXPECT_LE(elsewhere, 4u);  // at most the older half moved
}

}  // namespace
}  // namespace weft::runtime::test
