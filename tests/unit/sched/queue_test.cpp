// The local ready queue (local_queue.h) and the injection/pinned queue (task_list.h).
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "runtime/sched/local_queue.h"
#include "runtime/sched/task_list.h"
#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

constexpr uint32_t kCap = LocalQueue::kCapacity;

std::vector<std::unique_ptr<Task>> makeTasks(size_t n) {
  std::vector<std::unique_ptr<Task>> v;
  for (size_t i = 0; i < n; ++i) v.push_back(std::make_unique<Task>());
  return v;
}

TEST(SchedLocalQueue, OwnerPushesAndPopsInOrder) {
  auto tasks = makeTasks(10);
  LocalQueue q;
  TaskList spill;
  EXPECT_EQ(q.pop().task, nullptr);
  for (auto& t : tasks) q.push(t.get(), false, spill);
  EXPECT_EQ(q.size(), 10u);
  for (auto& t : tasks) EXPECT_EQ(q.pop().task, t.get());
  EXPECT_EQ(q.pop().task, nullptr);
  EXPECT_TRUE(spill.empty());
}

TEST(SchedLocalQueue, HoldsItsCapacityThenMovesHalfAndTheNewTaskOut) {
  auto tasks = makeTasks(kCap + 1);
  LocalQueue q;
  TaskList spill;
  for (uint32_t i = 0; i < kCap; ++i) q.push(tasks[i].get(), false, spill);
  EXPECT_TRUE(spill.empty());
  EXPECT_EQ(q.size(), kCap);
  q.push(tasks[kCap].get(), false, spill);
  ASSERT_EQ(spill.size(), kCap / 2 + 1);
  EXPECT_EQ(q.size(), kCap / 2);
  for (uint32_t i = 0; i < kCap / 2; ++i) EXPECT_EQ(spill.pop(), tasks[i].get());  // oldest half
  EXPECT_EQ(spill.pop(), tasks[kCap].get());
  for (uint32_t i = kCap / 2; i < kCap; ++i) EXPECT_EQ(q.pop().task, tasks[i].get());
}

TEST(SchedLocalQueue, StealTakesTheOlderHalfRoundedUp) {
  auto tasks = makeTasks(11);
  LocalQueue victim, thief;
  TaskList spill;
  for (auto& t : tasks) victim.push(t.get(), false, spill);
  uint32_t stolen = 0;
  Task* run = victim.stealInto(thief, stolen);
  EXPECT_EQ(stolen, 6u);
  EXPECT_EQ(run, tasks[5].get());  // the thief runs the newest of its batch
  EXPECT_EQ(thief.size(), 5u);
  EXPECT_EQ(victim.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    LocalQueue::Item item = thief.pop();
    EXPECT_EQ(item.task, tasks[i].get());
    EXPECT_TRUE(item.migrated);
  }
  for (int i = 6; i < 11; ++i) EXPECT_FALSE(victim.pop().migrated);
  EXPECT_EQ(victim.stealInto(thief, stolen), nullptr);
  EXPECT_EQ(stolen, 0u);
}

TEST(SchedLocalQueue, AStolenTaskIsNotStolenAgainUntilPublishedAgain) {
  auto tasks = makeTasks(11);
  LocalQueue a, b, c;
  TaskList spill;
  for (int i = 0; i < 10; ++i) a.push(tasks[i].get(), false, spill);
  uint32_t stolen = 0;
  ASSERT_NE(a.stealInto(b, stolen), nullptr);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b.stealInto(c, stolen), nullptr);  // every task there migrated already
  b.push(tasks[10].get(), false, spill);       // a fresh publication behind them
  EXPECT_EQ(b.stealInto(c, stolen), nullptr);  // the marked prefix still shields it
  for (int i = 0; i < 4; ++i) b.pop();
  EXPECT_EQ(b.stealInto(c, stolen), tasks[10].get());
  EXPECT_EQ(stolen, 1u);
}

TEST(SchedLocalQueue, OverflowCarriesTheMigrationMarkIntoTheTask) {
  auto tasks = makeTasks(kCap + 1);
  LocalQueue q;
  TaskList spill;
  q.push(tasks[0].get(), true, spill);
  for (uint32_t i = 1; i <= kCap; ++i) q.push(tasks[i].get(), false, spill);
  ASSERT_EQ(spill.size(), kCap / 2 + 1);
  auto marked = [](Task* t) { return (TaskAccess::bits(t).load() & kMigrated) != 0; };
  EXPECT_TRUE(marked(spill.pop()));
  EXPECT_FALSE(marked(spill.pop()));
}

// The owner pushes and pops while two thieves steal: every task comes out exactly once.
TEST(SchedLocalQueue, ConcurrentStealsLoseAndDuplicateNothing) {
  constexpr int kTasks = 60000;
  auto tasks = makeTasks(kTasks);
  std::vector<std::atomic<int>> seen(kTasks);
  auto indexOf = [&](Task* t) { return static_cast<int>(t->id() - tasks[0]->id()); };
  LocalQueue owner;
  std::atomic<bool> done{false};
  std::vector<std::thread> thieves;
  for (int k = 0; k < 2; ++k) {
    thieves.emplace_back([&] {
      LocalQueue mine;
      while (!done.load()) {
        uint32_t n = 0;
        if (Task* t = owner.stealInto(mine, n)) seen[indexOf(t)].fetch_add(1);
        while (Task* t = mine.pop().task) seen[indexOf(t)].fetch_add(1);
      }
    });
  }
  TaskList spill;
  for (int i = 0; i < kTasks; ++i) {
    owner.push(tasks[i].get(), false, spill);
    if (i % 3 == 0)
      if (Task* t = owner.pop().task) seen[indexOf(t)].fetch_add(1);
  }
  while (Task* t = owner.pop().task) seen[indexOf(t)].fetch_add(1);
  done = true;
  for (auto& t : thieves) t.join();
  while (Task* t = spill.pop()) seen[indexOf(t)].fetch_add(1);
  for (int i = 0; i < kTasks; ++i) ASSERT_EQ(seen[i].load(), 1) << "task " << i;
}

TEST(SchedInjectionQueue, FifoBatchesAndClose) {
  auto tasks = makeTasks(6);
  SharedTaskQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.pop(), nullptr);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(q.push(tasks[i].get()));
  EXPECT_EQ(q.size(), 5u);
  TaskList batch = q.popBatch(3);
  ASSERT_EQ(batch.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(batch.pop(), tasks[i].get());
  EXPECT_EQ(q.pop(), tasks[3].get());
  TaskList rest = q.close();
  EXPECT_EQ(rest.pop(), tasks[4].get());
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.push(tasks[5].get()));  // closed: the caller keeps the task
}

TEST(SchedInjectionQueue, ConcurrentProducersAndConsumers) {
  constexpr int kPerThread = 5000, kProducers = 3;
  auto tasks = makeTasks(kPerThread * kProducers);
  std::vector<std::atomic<int>> seen(tasks.size());
  SharedTaskQueue q;
  std::atomic<int> consumed{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerThread; ++i) q.push(tasks[p * kPerThread + i].get());
    });
  }
  threads.emplace_back([&] {
    // Pops batches until the queue runs dry, then lets waitUntil poll again.
    auto drain = [&] {
      for (TaskList b = q.popBatch(7); !b.empty(); b = q.popBatch(7)) {
        while (Task* t = b.pop()) {
          seen[t->id() - tasks[0]->id()].fetch_add(1);
          consumed.fetch_add(1);
        }
      }
      return consumed.load() == kPerThread * kProducers;
    };
    EXPECT_TRUE(waitUntil(drain, "the consumer to pop every pushed task")) << consumed.load() << " popped";
  });
  for (auto& t : threads) t.join();
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
}

}  // namespace
}  // namespace weft::runtime::test
