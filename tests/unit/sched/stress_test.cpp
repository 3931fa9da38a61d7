// Seeded stress tests. Each prints its seed on failure; WEFT_STRESS_SEED replays one.
// (a) stops its rounds early at a time budget so that a ThreadSanitizer build stays
// quick, and requires a floor of them; (c) runs and checks every round it plans.
#include <gtest/gtest.h>

#include <barrier>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

constexpr auto kBudget = 6s;

bool overBudget(Clock::time_point start) { return Clock::now() - start > kBudget; }

// (a) Every worker parks, then several external threads publish at once: every task runs
// exactly once and every queue drains before the next round.
TEST(SchedStress, ExternalPublishersWakeParkedWorkers) {
  uint64_t seed = stressSeed();
  SCOPED_TRACE(seedNote(seed));
  TestExecutor ex;
  std::atomic<int> destroyed{0};  // outlives the scheduler, which may release the last tasks
  Scheduler s({.workers = 2, .seed = seed}, ex);
  ASSERT_TRUE(s.start().isOk());
  constexpr int kThreads = 3, kRounds = 3000;
  Rng rng(seed);
  std::vector<std::vector<TaskRef>> batches(kThreads);
  std::atomic<bool> stop{false};
  std::barrier sync(kThreads + 1);
  std::vector<std::thread> publishers;
  for (int p = 0; p < kThreads; ++p) {
    publishers.emplace_back([&, p] {
      while (true) {
        sync.arrive_and_wait();  // the round starts
        if (stop.load()) return;
        for (auto& t : batches[p]) EXPECT_TRUE(s.spawn(t.get()));
        sync.arrive_and_wait();  // published
      }
    });
  }
  int spawned = 0;
  // A failed ASSERT returns from the round only: the loop ends, and the publishers (at the
  // round's first barrier) are let go before the test returns.
  auto runRound = [&](int round) {
    ASSERT_TRUE(waitUntil([&] { return allParked(s); }, "both workers to park")) << "round " << round;
    for (auto& b : batches) {
      b.clear();
      int n = 1 + static_cast<int>(rng.below(6));
      for (int i = 0; i < n; ++i) {
        b.push_back(makeTask(rng.below(4) == 0 ? FnTask::Body([](Worker&, FnTask& t) {
          return t.dispatches.load() < 3 ? RunOutcome::kYielded : RunOutcome::kCompleted;
        }) : FnTask::Body(), &destroyed));
        ++spawned;
      }
    }
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    ASSERT_TRUE(waitUntil([&] {
      for (auto& b : batches)
        for (auto& t : b)
          if (t->state() != TaskState::kCompleted) return false;
      return true;
    }, "every published task to complete")) << "round " << round;
    for (auto& b : batches)
      for (auto& t : b) {
        int expected = t->body ? 3 : 1;
        ASSERT_EQ(t->dispatches.load(), expected) << "round " << round;
      }
  };
  Clock::time_point start = Clock::now();
  int rounds = 0;
  for (; rounds < kRounds && !overBudget(start) && !HasFatalFailure(); ++rounds) runRound(rounds);
  stop = true;
  sync.arrive_and_wait();
  for (auto& t : publishers) t.join();
  if (HasFatalFailure()) return;
  ASSERT_TRUE(waitUntil([&] { return allParked(s); }, "both workers to park after the last round"));
  SchedulerInternals& in = SchedulerInternals::of(s);
  EXPECT_TRUE(in.injection.empty());
  for (const WorkerStats& st : s.stats()) EXPECT_EQ(st.queueDepth, 0u);
  for (auto& b : batches) b.clear();
  EXPECT_EQ(destroyed.load(), spawned);
  std::printf("%d rounds, %d tasks\n", rounds, spawned);
  EXPECT_GT(rounds, 100);
}

// A task that runs `body` once on each of two workers: it yields until the other worker
// (idle, or out of local work) steals it. Gives a test a foothold on every worker
// whatever the thread timing. `visited` is owned by the task's dispatches.
FnTask::Body onBothWorkers(std::function<void(Worker&)> body) {
  auto visited = std::make_shared<unsigned>(0);
  return [visited, body](Worker& w, FnTask&) {
    unsigned bit = 1u << w.index();
    if (!(*visited & bit)) body(w);
    *visited |= bit;
    return *visited == 3 ? RunOutcome::kCompleted : RunOutcome::kYielded;
  };
}

// (b) Tasks throwing on every worker leave every worker alive and working.
TEST(SchedStress, PanicStormLeavesWorkersAlive) {
  uint64_t seed = stressSeed();
  SCOPED_TRACE(seedNote(seed));
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = seed}, ex);
  ASSERT_TRUE(s.start().isOk());
  Rng rng(seed);
  std::vector<std::atomic<int>> panicsOn(2);
  std::mutex mu;
  std::vector<TaskRef> storm;  // guarded by mu while the roots fill it
  std::vector<bool> throwsOf;  // likewise
  // Each root spawns its share on its worker: half sticky (they panic there for sure),
  // half free to be stolen.
  auto spawnStorm = [&](Worker&) {
    std::lock_guard lock(mu);
    for (int i = 0; i < 1500; ++i) {
      bool throws = rng.below(3) != 0;
      int yields = static_cast<int>(rng.below(3));
      throwsOf.push_back(throws);
      storm.push_back(makeTask([&, throws, yields](Worker& w, FnTask& t) -> RunOutcome {
        if (t.dispatches.load() <= yields) return RunOutcome::kYielded;
        if (!throws) return RunOutcome::kCompleted;
        panicsOn[w.index()].fetch_add(1);
        throw std::runtime_error("storm");
      }));
      storm.back()->setSticky(i % 2 == 0);
      EXPECT_TRUE(s.spawn(storm.back().get()));
    }
  };
  TaskRef root = makeTask(onBothWorkers(spawnStorm));
  ASSERT_TRUE(s.spawn(root.get()));
  auto stormEnded = [&] {
    std::lock_guard lock(mu);
    if (storm.size() < 3000) return false;
    for (auto& t : storm)
      if (!isTerminal(t->state())) return false;
    return true;
  };
  ASSERT_TRUE(waitUntil(stormEnded, "the 3000 storm tasks to end"));
  for (size_t i = 0; i < storm.size(); ++i)
    EXPECT_EQ(storm[i]->state(), throwsOf[i] ? TaskState::kPanicked : TaskState::kCompleted);
  EXPECT_GT(panicsOn[0].load(), 400);
  EXPECT_GT(panicsOn[1].load(), 400);
  EXPECT_FALSE(s.closed());
  // Both workers still run tasks.
  std::atomic<int> probes{0};
  TaskRef probe = makeTask(onBothWorkers([&](Worker&) { probes.fetch_add(1); }));
  ASSERT_TRUE(s.spawn(probe.get()));
  ASSERT_TRUE(waitUntil([&] { return probes.load() == 2; }, "the probe to run on both workers"));
  s.shutdown();
  EXPECT_EQ(ex.stops.load(), 2);
}

// (c) Wakes race cancellations: each task reaches exactly one terminal outcome, is never
// dispatched twice at once nor after it ended, and every reference is returned. Every
// planned round runs and is checked: under a time budget, a slow run stopped after
// however many rounds fitted, one included, and passed all the same.
TEST(SchedStress, WakesRacingCancellations) {
  uint64_t seed = stressSeed();
  SCOPED_TRACE(seedNote(seed));
  constexpr int kRounds = 200, kTasks = 32;
  TestExecutor ex;
  std::atomic<int> destroyed{0};
  // Per task of the current round; they outlive the scheduler, so that a failed round
  // leaves nothing a late dispatch could touch after its end.
  std::vector<std::atomic<int>> inRun(kTasks), ended(kTasks);
  int created = 0, checked = 0;
  {
    Scheduler s({.workers = 2, .seed = seed}, ex);
    ASSERT_TRUE(s.start().isOk());
    Rng rng(seed);
    auto runRound = [&](int round) {
      std::vector<TaskRef> tasks;
      for (int i = 0; i < kTasks; ++i) {
        inRun[i] = 0;
        ended[i] = 0;
        int limit = 1 + static_cast<int>(rng.below(8));
        tasks.push_back(makeTask([&, i, limit](Worker&, FnTask& t) {
          EXPECT_EQ(inRun[i].fetch_add(1), 0) << "dispatched twice at once";
          EXPECT_EQ(ended[i].load(), 0) << "dispatched after its end";
          RunOutcome out = t.cancelRequested() ? RunOutcome::kCancelled
                           : t.dispatches.load() >= limit ? RunOutcome::kCompleted
                                                          : RunOutcome::kSuspended;
          if (out != RunOutcome::kSuspended) ended[i].fetch_add(1);
          inRun[i].fetch_sub(1);
          return out;
        }, &destroyed));
        ++created;
        ASSERT_TRUE(s.spawn(tasks.back().get())) << "round " << round;
      }
      auto allDone = [&] {
        for (auto& t : tasks)
          if (!isTerminal(t->state())) return false;
        return true;
      };
      std::vector<std::jthread> racers;
      for (int r = 0; r < 3; ++r) {
        uint64_t racerSeed = rng.next();
        racers.emplace_back([&, r, racerSeed](std::stop_token stop) {
          Rng mine(racerSeed);
          while (!stop.stop_requested()) {
            FnTask* t = tasks[mine.below(kTasks)].get();
            if (r == 2 && mine.below(16) == 0) s.cancel(t);
            else s.wake(t);
          }
        });
      }
      testing::AssertionResult done = waitUntil(allDone, "every task of the round to end");
      racers.clear();  // stops and joins them
      ASSERT_TRUE(done) << "round " << round;
      for (int i = 0; i < kTasks; ++i) {
        ASSERT_EQ(ended[i].load(), 1) << "round " << round << " task " << i;
        TaskState st = tasks[i]->state();
        EXPECT_TRUE(st == TaskState::kCompleted || (st == TaskState::kCancelled && tasks[i]->cancelRequested()))
            << taskStateName(st);
      }
      ++checked;
    };
    for (int round = 0; round < kRounds && !HasFatalFailure(); ++round) runRound(round);
  }
  EXPECT_EQ(checked, kRounds) << "rounds run and checked";
  EXPECT_EQ(destroyed.load(), created);
}

// (d) A steal storm: tasks published once each and stolen back and forth between idle
// workers. A stolen task is never stolen again before its next publication, so the
// steals cannot outnumber the publications.
TEST(SchedStress, StealStormMigratesEachTaskAtMostOnce) {
  uint64_t seed = stressSeed();
  SCOPED_TRACE(seedNote(seed));
  TestExecutor ex;
  Scheduler s({.workers = 4, .seed = seed}, ex);
  ASSERT_TRUE(s.start().isOk());
  Rng rng(seed);
  constexpr int kTasks = 4000;
  std::vector<TaskRef> tasks;
  for (int i = 0; i < kTasks; ++i) {
    auto spin = std::chrono::microseconds(rng.below(100));
    tasks.push_back(makeTask([spin](Worker&, FnTask&) {
      auto end = Clock::now() + spin;
      while (Clock::now() < end) {
      }
      return RunOutcome::kCompleted;
    }));
  }
  TaskRef root = makeTask([&](Worker&, FnTask&) {
    for (int i = 0; i < kTasks / 2; ++i) EXPECT_TRUE(s.spawn(tasks[i].get()));
    return RunOutcome::kCompleted;
  });
  // Also pile the second half in at once from outside.
  for (int i = kTasks / 2; i < kTasks; ++i) ASSERT_TRUE(s.spawn(tasks[i].get()));
  ASSERT_TRUE(s.spawn(root.get()));
  ASSERT_TRUE(waitUntil([&] {
    for (auto& t : tasks)
      if (t->state() != TaskState::kCompleted) return false;
    return true;
  }, "the 4000 tasks to complete"));
  uint64_t steals = 0;
  for (const WorkerStats& st : s.stats())
    for (uint64_t n : st.stealsFrom) steals += n;
  uint64_t publications = kTasks + 1;  // and the root's spawn
  std::printf("%lu steals for %lu publications\n", static_cast<unsigned long>(steals),
              static_cast<unsigned long>(publications));
  EXPECT_LE(steals, publications);
  for (auto& t : tasks) EXPECT_EQ(t->dispatches.load(), 1);
}

}  // namespace
}  // namespace weft::runtime::test
