// Parking (idle.h) and the flat victim order (victim_order.h; tiered orders and seeding:
// topology_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "runtime/sched/idle.h"
#include "runtime/sched/victim_order.h"
#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

// A thread the test may abandon: when a wakeup is lost, its park() never returns, so the
// test fails and detaches it instead of joining it. What the thread touches must be its
// own (captured shared_ptrs), never the test's stack.
class AbandonableThread {
 public:
  explicit AbandonableThread(std::function<void()> body)
      : finished_(std::make_shared<std::atomic<bool>>(false)),
        thread_([body = std::move(body), finished = finished_] {
          body();
          finished->store(true);
        }) {}
  ~AbandonableThread() {
    if (finished()) thread_.join();
    else thread_.detach();
  }
  bool finished() const { return finished_->load(); }

 private:
  std::shared_ptr<std::atomic<bool>> finished_;
  std::thread thread_;
};

TEST(SchedParker, AnUnparkBeforeParkIsNotLost) {
  auto p = std::make_shared<Parker>();
  p->unpark();
  {
    AbandonableThread parked([p] { p->park(); });
    ASSERT_TRUE(waitUntil([&] { return parked.finished(); }, "park() to return after an earlier unpark()"));
  }
  p->unpark();
  p->unpark();
  {
    AbandonableThread parked([p] { p->park(); });
    ASSERT_TRUE(waitUntil([&] { return parked.finished(); }, "park() to return after two earlier unpark()s"));
  }
  // Tokens do not accumulate: that park consumed both, so the next one sleeps.
  AbandonableThread parked([p] { p->park(); });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(parked.finished()) << "park() returned on a token an earlier park() had consumed";
  p->unpark();
  EXPECT_TRUE(waitUntil([&] { return parked.finished(); }, "park() to return after an unpark() while it slept"));
}

// Two threads hand a token back and forth through a flag and each other's parker while
// the test thread watches the rounds go by: a lost wakeup leaves both parked, and the
// test fails naming the round instead of hanging.
TEST(SchedParker, NoLostWakeupOverManyRounds) {
  constexpr int kRounds = 20000;
  struct PingPong {
    Parker a, b;
    std::atomic<int> turn{0};
    std::atomic<int> rounds{0};  // rounds the pinger has seen answered
  };
  auto g = std::make_shared<PingPong>();
  AbandonableThread ponger([g] {
    for (int i = 0; i < kRounds; ++i) {
      while (g->turn.load() != 1) g->b.park();
      g->turn.store(0);
      g->a.unpark();
    }
  });
  AbandonableThread pinger([g] {
    for (int i = 0; i < kRounds; ++i) {
      g->turn.store(1);
      g->b.unpark();
      while (g->turn.load() != 0) g->a.park();
      g->rounds.fetch_add(1);
    }
  });
  for (int seen = 0; seen < kRounds; seen = g->rounds.load()) {
    ASSERT_TRUE(waitUntil([&] { return g->rounds.load() > seen; },
                          "park/unpark round " + std::to_string(seen + 1) + " of " + std::to_string(kRounds)));
  }
  ASSERT_TRUE(waitUntil([&] { return pinger.finished() && ponger.finished(); }, "both threads to leave"));
  EXPECT_EQ(g->turn.load(), 0);
}

TEST(SchedIdle, AtMostHalfTheWorkersSearchAndAtLeastOne) {
  Idle four(4);
  EXPECT_TRUE(four.transitionToSearching());
  EXPECT_TRUE(four.transitionToSearching());
  EXPECT_FALSE(four.transitionToSearching());
  EXPECT_FALSE(four.transitionFromSearching());
  EXPECT_TRUE(four.transitionFromSearching());  // the last searcher
  Idle one(1);
  EXPECT_TRUE(one.transitionToSearching());
  EXPECT_FALSE(one.transitionToSearching());
}

TEST(SchedIdle, APublicationWakesOneSleeperOnlyWhenNobodySearches) {
  Idle idle(3);
  bool allBlocked = false;
  auto noteAllBlocked = [&] { allBlocked = true; };
  EXPECT_EQ(idle.claimOneToWake(), -1);  // nobody sleeps
  idle.transitionToParked(0, false, [] { return true; }, noteAllBlocked);
  EXPECT_FALSE(allBlocked);
  idle.transitionToParked(1, false, [] { return true; }, noteAllBlocked);
  EXPECT_EQ(idle.wakeReason(1), WakeReason::kStillParked);
  int w = idle.claimOneToWake();
  EXPECT_EQ(w, 1);  // the most recent sleeper
  EXPECT_EQ(idle.wakeReason(1), WakeReason::kAsSearcher);
  EXPECT_EQ(idle.claimOneToWake(), -1);  // worker 1 searches now
  EXPECT_TRUE(idle.claimById(0));
  EXPECT_FALSE(idle.claimById(0));
  EXPECT_EQ(idle.wakeReason(0), WakeReason::kPlain);
  EXPECT_EQ(idle.sleeperCount(), 0u);
}

TEST(SchedIdle, TheLastWorkerToParkEvaluatesAllBlocked) {
  Idle idle(2);
  bool allBlocked = false;
  int evaluated = 0;
  auto noteAllBlocked = [&] { allBlocked = true; };
  idle.transitionToParked(0, false, [&] { return ++evaluated, true; }, noteAllBlocked);
  EXPECT_EQ(evaluated, 0);
  EXPECT_TRUE(idle.transitionToSearching());
  EXPECT_TRUE(idle.transitionToParked(1, true, [&] { return ++evaluated, true; }, noteAllBlocked));
  EXPECT_EQ(evaluated, 1);
  EXPECT_TRUE(allBlocked);
}

// The all-blocked callback runs under the idle lock: a publication that would wake a
// sleeper meanwhile waits for it, so the callback never acts on a stale decision.
TEST(SchedIdle, APublicationCannotWakeASleeperDuringTheAllBlockedCallback) {
  Idle idle(1);
  std::atomic<bool> inCallback{false}, release{false};
  std::atomic<int> woken{-2};
  std::jthread parker([&] {
    idle.transitionToParked(0, false, [] { return true; }, [&] {
      inCallback = true;
      EXPECT_TRUE(waitUntil([&] { return release.load(); }, "the test to end the all-blocked callback"));
    });
  });
  ASSERT_TRUE(waitUntil([&] { return inCallback.load(); }, "the parked worker to enter the all-blocked callback"));
  std::jthread publisher([&] { woken = idle.claimOneToWake(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(woken.load(), -2) << "the publication woke a sleeper inside the callback";
  release = true;
  parker.join();
  publisher.join();
  EXPECT_EQ(woken.load(), 0);
}

TEST(SchedVictimOrder, EverySiblingOnceAndTheOrderChanges) {
  constexpr unsigned kWorkers = 8;
  VictimOrder order(Topology().victimTiers(3, kWorkers), 42);  // flat: one tier
  std::set<std::vector<unsigned>> distinct;
  for (int round = 0; round < 50; ++round) {
    std::vector<unsigned> v = order.next();
    ASSERT_EQ(v.size(), kWorkers - 1);
    std::vector<unsigned> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<unsigned>{0, 1, 2, 4, 5, 6, 7}));
    distinct.insert(v);
  }
  EXPECT_GT(distinct.size(), 40u);  // 7! orders: repeats are rare
}

TEST(SchedChooser, SeededAndInRange) {
  TestExecutor ex;
  Scheduler a({.workers = 1, .seed = 99}, ex), b({.workers = 1, .seed = 99}, ex);
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.choose(10);
    EXPECT_LT(x, 10u);
    EXPECT_EQ(x, b.choose(10));
  }
}

}  // namespace
}  // namespace weft::runtime::test
