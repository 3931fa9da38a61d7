// The wait protocol as one type (runtime/wait_state.h): each transition alone, then
// races on one wait between claimers (direct, and tentative ones that confirm with a
// delivery or undo), a channel's close, a timer, a cancellation and a stale claim of the
// previous wait. Every race must end the wait exactly once, with the winner's case and
// delivery, and leave the task's reference count as it found it. The waiting side
// plays the owner as a blocking waiter does (it polls the claim and sleeps on the
// signal word) and rewrites its Waiters as soon as it sees the wait end, so that a
// claimer reading them after its claim showed is a data race ThreadSanitizer reports
// (tools/tsan.sh runs this binary).
#include "runtime/wait_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/unit/wait_until.h"

namespace weft::runtime {
namespace {

using vm::Value;
using weft::test::waitUntil;

// The task a wait belongs to, for holdForWake's reference: it records its deletion.
struct HeldTask final : sched::Task {
  explicit HeldTask(std::atomic<bool>& d) : deleted(d) {}
  ~HeldTask() override { deleted.store(true); }
  std::atomic<bool>& deleted;
};

// A source keeping its Waiters under its lock, as a channel queue does: claimers find
// them there, and the owner's withdrawal takes them out under the same lock.
struct FakeSource final : WaitSource {
  std::mutex mu;
  std::vector<Waiter*> waiters;  // mu
  int removed = 0;               // mu
  void add(Waiter* w) {
    std::lock_guard lock(mu);
    waiters.push_back(w);
  }
  void removeWaiter(Waiter* w) override {
    std::lock_guard lock(mu);
    auto it = std::find(waiters.begin(), waiters.end(), w);
    if (it != waiters.end()) waiters.erase(it);
    removed++;
  }
};

// --- One transition at a time ---------------------------------------------------------

TEST(WaitState, BeginOpensANewGeneration) {
  WaitState ws;
  EXPECT_EQ(ws.phase(), WaitPhase::kIdle);
  EXPECT_FALSE(ws.open());
  ws.begin(WaitOp::kRecv, 1, false);
  uint64_t gen = ws.gen();
  EXPECT_EQ(gen, 1u);
  EXPECT_EQ(ws.observedGen(), gen);
  EXPECT_EQ(ws.phase(), WaitPhase::kWaiting);
  EXPECT_TRUE(ws.open());
  EXPECT_EQ(ws.op(), WaitOp::kRecv);
  EXPECT_EQ(ws.firedCase(), -1);
  EXPECT_TRUE(ws.delivered().isNil());
  ws.finish();
  EXPECT_EQ(ws.op(), WaitOp::kNone);
  ws.begin(WaitOp::kSleep, 0, false);
  EXPECT_EQ(ws.gen(), gen + 1);
}

TEST(WaitState, ClaimRecordsTheCaseAndEndsTheWaitOnce) {
  WaitState ws;
  ws.begin(WaitOp::kSelect, 3, false);
  uint64_t gen = ws.gen();
  EXPECT_TRUE(ws.claim(gen, 2));
  EXPECT_EQ(ws.phase(), WaitPhase::kClaimed);
  EXPECT_FALSE(ws.open());
  EXPECT_EQ(ws.firedCase(), 2);
  EXPECT_FALSE(ws.claim(gen, 1));
  EXPECT_FALSE(ws.claimTentatively(gen));
  EXPECT_FALSE(ws.timeOut(gen));
  EXPECT_FALSE(ws.cancel(gen));
  EXPECT_FALSE(ws.abort(gen));
  EXPECT_EQ(ws.firedCase(), 2);
  EXPECT_EQ(ws.phase(), WaitPhase::kClaimed);
}

TEST(WaitState, TimeoutCancelAndAbortEachEndTheWait) {
  struct Case {
    bool (WaitState::*end)(uint64_t);
    WaitPhase phase;
  };
  for (Case c : {Case{&WaitState::timeOut, WaitPhase::kTimedOut}, Case{&WaitState::cancel, WaitPhase::kCancelled},
                 Case{&WaitState::abort, WaitPhase::kAborted}}) {
    WaitState ws;
    ws.begin(WaitOp::kRecv, 1, false);
    uint64_t gen = ws.gen();
    EXPECT_TRUE((ws.*c.end)(gen));
    EXPECT_EQ(ws.phase(), c.phase);
    EXPECT_FALSE(ws.claim(gen, 0));
    EXPECT_FALSE((ws.*c.end)(gen));
    EXPECT_EQ(ws.firedCase(), -1);
  }
}

TEST(WaitState, ConfirmedTentativeClaimDelivers) {
  WaitState ws;
  ws.begin(WaitOp::kSelect, 2, false);
  uint64_t gen = ws.gen();
  ASSERT_TRUE(ws.claimTentatively(gen));
  EXPECT_EQ(ws.phase(), WaitPhase::kClaiming);
  EXPECT_TRUE(ws.open());  // the tentative claim may yet be undone
  ws.confirmClaim(gen, 1, Delivery::received(Value::integer(42)));
  EXPECT_EQ(ws.phase(), WaitPhase::kClaimed);
  EXPECT_EQ(ws.firedCase(), 1);
  ASSERT_TRUE(ws.delivered().isInt());
  EXPECT_EQ(ws.delivered().asInt(), 42);
  EXPECT_TRUE(ws.deliveredOk());
  EXPECT_FALSE(ws.sendClosed());
}

TEST(WaitState, UndoReopensTheWait) {
  WaitState ws;
  ws.begin(WaitOp::kSelect, 2, false);
  uint64_t gen = ws.gen();
  ASSERT_TRUE(ws.claimTentatively(gen));
  ws.undoClaim(gen);
  EXPECT_EQ(ws.phase(), WaitPhase::kWaiting);
  ASSERT_TRUE(ws.claimTentatively(gen));
  ws.confirmClaim(gen, 0, Delivery::sendFailedClosed());
  EXPECT_EQ(ws.firedCase(), 0);
  EXPECT_TRUE(ws.sendClosed());
  EXPECT_TRUE(ws.delivered().isNil());
  EXPECT_FALSE(ws.deliveredOk());
}

TEST(WaitState, AStaleGenerationNeverEndsTheNextWait) {
  WaitState ws;
  ws.begin(WaitOp::kRecv, 1, false);
  uint64_t old = ws.gen();
  ASSERT_TRUE(ws.timeOut(old));
  ws.finish();
  ws.begin(WaitOp::kRecv, 1, false);
  EXPECT_FALSE(ws.claim(old, 0));
  EXPECT_FALSE(ws.claimTentatively(old));
  EXPECT_FALSE(ws.timeOut(old));
  EXPECT_FALSE(ws.cancel(old));
  EXPECT_EQ(ws.phase(), WaitPhase::kWaiting);
  EXPECT_TRUE(ws.claim(ws.gen(), 0));
}

// A claim meeting a tentative one waits it out: it loses to a confirmation and wins
// after an undo.
TEST(WaitState, ATimerWaitsOutATentativeClaim) {
  for (bool undo : {false, true}) {
    WaitState ws;
    ws.begin(WaitOp::kSelect, 1, false);
    uint64_t gen = ws.gen();
    ASSERT_TRUE(ws.claimTentatively(gen));
    std::atomic<int> timer{-1};  // -1: still trying; then whether it won
    std::thread t([&] { timer.store(ws.timeOut(gen) ? 1 : 0); });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(timer.load(), -1) << "a claim went past a tentative one";
    if (undo) ws.undoClaim(gen);
    else ws.confirmClaim(gen, 0, Delivery::sent());
    t.join();
    EXPECT_EQ(timer.load(), undo ? 1 : 0);
    EXPECT_EQ(ws.phase(), undo ? WaitPhase::kTimedOut : WaitPhase::kClaimed);
  }
}

TEST(WaitState, WaitersAreFilledInAndWithdrawn) {
  WaitState ws;
  FakeSource a, b;
  ws.begin(WaitOp::kSelect, 3, false);
  Waiter& w0 = ws.addWaiter(0, nullptr, &a, false);
  Waiter& w2 = ws.addWaiter(2, nullptr, &b, true, Value::integer(7));
  a.add(&w0);
  b.add(&w2);
  EXPECT_EQ(w0.gen, ws.gen());
  EXPECT_EQ(w2.caseIndex, 2);
  EXPECT_TRUE(w2.isSend);
  int roots = 0, sevens = 0;
  ws.forEachRoot([&](Value& v) {
    roots++;
    if (v.isInt() && v.asInt() == 7) sevens++;
  });
  EXPECT_EQ(roots, 4);  // delivered and three Waiters
  EXPECT_EQ(sevens, 1);
  ASSERT_TRUE(ws.claim(ws.gen(), 0));
  ws.withdrawWaiters();  // case 1 was never registered: nothing to remove there
  EXPECT_EQ(a.removed, 1);
  EXPECT_EQ(b.removed, 1);
  EXPECT_TRUE(a.waiters.empty());
  EXPECT_TRUE(b.waiters.empty());
  ws.finish();
  roots = 0;
  ws.forEachRoot([&](Value&) { roots++; });
  EXPECT_EQ(roots, 1);
  EXPECT_TRUE(ws.waiters().empty());
}

TEST(WaitState, OwnDeliveryAndTimer) {
  WaitState ws;
  ws.begin(WaitOp::kRecv, 1, false);
  sched::TimerId id = 0;
  EXPECT_FALSE(ws.takeTimer(id));
  ws.noteTimer(9);
  ASSERT_TRUE(ws.claim(ws.gen(), 0));
  ws.deliverOwn({Value::integer(3), true, false});
  EXPECT_EQ(ws.delivered().asInt(), 3);
  EXPECT_TRUE(ws.takeTimer(id));
  EXPECT_EQ(id, 9u);
  EXPECT_FALSE(ws.takeTimer(id));
  ws.finish();
  EXPECT_TRUE(ws.delivered().isNil());
  ws.begin(WaitOp::kRecv, 1, false);
  EXPECT_FALSE(ws.takeTimer(id)) << "a timer of the last wait carried over";
}

TEST(WaitState, HoldForWakeRetainsOnlyABlockingWait) {
  std::atomic<bool> deleted{false};
  auto* task = new HeldTask(deleted);
  WaitState ws;
  ws.begin(WaitOp::kRecv, 1, false);
  EXPECT_FALSE(ws.holdForWake(*task));
  ws.begin(WaitOp::kRecv, 1, true);
  EXPECT_TRUE(ws.blocksThread());
  EXPECT_TRUE(ws.holdForWake(*task));
  task->release();  // the test's own: the hold keeps it
  EXPECT_FALSE(deleted.load());
  task->release();  // the hold's
  EXPECT_TRUE(deleted.load());
}

TEST(WaitState, ASignalWakesTheSleeper) {
  WaitState ws;
  ws.begin(WaitOp::kRecv, 1, true);
  uint64_t gen = ws.gen();
  std::atomic<bool> woke{false};
  std::thread sleeper([&] {
    for (;;) {
      uint32_t seen = ws.signalSeen();
      if (!ws.open()) break;
      ws.sleepUntilSignalled(seen);
    }
    woke.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_TRUE(ws.cancel(gen));
  ws.signalBlocked();
  EXPECT_TRUE(waitUntil([&] { return woke.load(); }, "the sleeper to see its wait end"));
  sleeper.join();
  ws.setBlocked(true);
  EXPECT_TRUE(ws.isBlocked());
  ws.setBlocked(false);
  EXPECT_FALSE(ws.isBlocked());
}

// --- Races --------------------------------------------------------------------------

// What a racer does to the wait.
enum class Role {
  kClaim,     // a direct claim of its case (an await's end, a port's post, a job's end)
  kDeliver,   // a channel peer: tentative claim, then a confirmed delivery of a value
  kLose,      // a select's peer that lost its own wait: tentative claim, then undo
  kClose,     // a channel's close: tentative claim, then the end of the channel
  kTimer,     // the wait's timeout
  kCancel,    // a cancellation
  kStale,     // a claim of the previous wait (a late timer)
};

struct Racer {
  Role role;
  int caseIndex = 0;
  bool won = false;  // this iteration (read by the owner after the end barrier)
};

constexpr int kRaceCases = 3;
constexpr int kRaceIterations = 5000;

// One wait per iteration; the racers start together on a barrier. The owner waits like
// a blocking waiter, reads the outcome, then at once withdraws and finishes, racing
// whatever the losers still do; after the second barrier it checks the winner.
void raceOneWait(const std::vector<Role>& roles) {
  std::atomic<bool> deleted{false};
  auto* task = new HeldTask(deleted);
  WaitState ws;
  FakeSource sources[kRaceCases];
  std::vector<Racer> racers;
  for (size_t i = 0; i < roles.size(); i++) racers.push_back({roles[i], int(i % kRaceCases)});
  uint64_t gen = 0, previous = 0;  // written by the owner before the start barrier
  std::vector<int> wins(roles.size());  // per racer, over the iterations
  std::atomic<int> ready{0}, go{0};     // the racers awake, and the owner's start
  std::barrier sync(std::ptrdiff_t(racers.size() + 1));

  auto value = [](const Racer& r, const std::vector<Racer>& all) { return Value::integer(1000 + (&r - all.data())); };
  auto run = [&](Racer& r) {
    // A seeded jitter before each move, so that the barrier's wake order does not decide
    // the winner and every pair of moves meets in both orders.
    uint64_t x = 0x9e3779b97f4a7c15ull * uint64_t(&r - racers.data() + 1);
    for (int it = 0; it < kRaceIterations; it++) {
      sync.arrive_and_wait();
      r.won = false;
      ready.fetch_add(1);
      while (go.load() != it + 1) std::this_thread::yield();
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      for (uint64_t y = (x >> 32) % 4; y > 0; y--) std::this_thread::yield();
      for (volatile uint64_t spin = x % 4096; spin > 0;) spin = spin - 1;
      bool blocking = false;
      switch (r.role) {
        case Role::kTimer:
          blocking = ws.holdForWake(*task);
          r.won = ws.timeOut(gen);
          break;
        case Role::kCancel:
          blocking = ws.holdForWake(*task);
          r.won = ws.cancel(gen);
          break;
        case Role::kStale:
          blocking = ws.holdForWake(*task);
          r.won = ws.claim(previous, r.caseIndex);
          break;
        default: {
          // A peer finds the Waiter under its source's lock and reads it before its
          // claim can show; the owner withdraws it under the same lock.
          FakeSource& src = sources[r.caseIndex];
          std::lock_guard lock(src.mu);
          if (src.waiters.empty()) break;
          Waiter* w = src.waiters.front();
          uint64_t wgen = w->gen;
          int wcase = w->caseIndex;
          blocking = ws.holdForWake(*task);
          if (r.role == Role::kClaim) {
            r.won = ws.claim(wgen, wcase);
          } else if (ws.claimTentatively(wgen)) {
            if (r.role == Role::kLose) {
              std::this_thread::yield();  // others meet the tentative claim meanwhile
              ws.undoClaim(wgen);
            } else {
              ws.confirmClaim(wgen, wcase, r.role == Role::kClose ? Delivery::recvClosed()
                                                                  : Delivery::received(value(r, racers)));
              r.won = true;
            }
          }
          break;
        }
      }
      if (r.won) ws.signalBlocked();
      if (blocking) task->release();  // holdForWake's, after the signal
      sync.arrive_and_wait();
    }
  };
  std::vector<std::thread> threads;
  for (Racer& r : racers) threads.emplace_back(run, std::ref(r));

  for (int it = 0; it < kRaceIterations; it++) {
    previous = ws.gen();
    ws.begin(WaitOp::kSelect, kRaceCases, it % 2 == 0);
    gen = ws.gen();
    for (int c = 0; c < kRaceCases; c++) sources[c].add(&ws.addWaiter(c, nullptr, &sources[c]));
    sync.arrive_and_wait();
    // Every racer awake before any moves: the barrier wakes them one by one.
    while (ready.load() != int(racers.size()) * (it + 1)) std::this_thread::yield();
    go.store(it + 1);
    if (it % 4 == 1) {
      // Polling, as a blocking waiter's check does between its sleeps: it sees the claim
      // the moment it shows, before any signal, so a claimer still writing the wait
      // after its claim showed races these reads.
      while (ws.open()) std::this_thread::yield();
    } else {
      for (;;) {
        uint32_t seen = ws.signalSeen();
        if (!ws.open()) break;
        ws.sleepUntilSignalled(seen);
      }
    }
    WaitPhase phase = ws.phase();
    int fired = ws.firedCase();
    Value delivered = ws.delivered();
    bool ok = ws.deliveredOk();
    ws.withdrawWaiters();
    ws.finish();
    sync.arrive_and_wait();

    int winners = 0;
    for (const Racer& r : racers) {
      if (!r.won) continue;
      winners++;
      wins[size_t(&r - racers.data())]++;
      switch (r.role) {
        case Role::kTimer:
          EXPECT_EQ(phase, WaitPhase::kTimedOut);
          break;
        case Role::kCancel:
          EXPECT_EQ(phase, WaitPhase::kCancelled);
          break;
        case Role::kClaim:
          EXPECT_EQ(phase, WaitPhase::kClaimed);
          EXPECT_EQ(fired, r.caseIndex);
          break;
        case Role::kDeliver:
          EXPECT_EQ(phase, WaitPhase::kClaimed);
          EXPECT_EQ(fired, r.caseIndex);
          EXPECT_TRUE(ok);
          EXPECT_TRUE(delivered.isInt() && delivered.asInt() == value(r, racers).asInt());
          break;
        case Role::kClose:
          EXPECT_EQ(phase, WaitPhase::kClaimed);
          EXPECT_EQ(fired, r.caseIndex);
          EXPECT_FALSE(ok);
          EXPECT_TRUE(delivered.isNil());
          break;
        case Role::kLose:
        case Role::kStale:
          ADD_FAILURE() << "a claim that must lose won";
          break;
      }
    }
    // EXPECT: the racers wait at the barrier for every iteration.
    EXPECT_EQ(winners, 1) << "iteration " << it;
    EXPECT_FALSE(deleted.load()) << "a hold released the task twice";
  }
  for (std::thread& t : threads) t.join();
  EXPECT_GT(std::count_if(wins.begin(), wins.end(), [](int n) { return n > 0; }), 1)
      << "one racer won every iteration: the moves never met";
  task->release();
  EXPECT_TRUE(deleted.load()) << "a hold was never released";
}

TEST(WaitStateRace, ClaimersTimerAndCancelEndTheWaitOnce) {
  raceOneWait({Role::kClaim, Role::kDeliver, Role::kDeliver, Role::kClaim, Role::kTimer, Role::kCancel});
}

// Peers that undo their tentative claims hold the wait in kClaiming; the others must
// wait them out and still end it exactly once.
TEST(WaitStateRace, UndoneTentativeClaimsReopenTheWait) {
  raceOneWait({Role::kLose, Role::kLose, Role::kLose, Role::kDeliver, Role::kTimer, Role::kStale});
}

// A channel's close against a send's delivery and a timeout: the receiver sees either
// the value, or the end of the channel, or the timeout; never a mix.
TEST(WaitStateRace, CloseAgainstDeliveryAndTimeout) {
  raceOneWait({Role::kClose, Role::kDeliver, Role::kClose, Role::kTimer, Role::kStale});
}

TEST(WaitStateRace, CancelAgainstEveryClaimer) {
  raceOneWait({Role::kCancel, Role::kClaim, Role::kDeliver, Role::kClose, Role::kLose, Role::kTimer, Role::kStale});
}

}  // namespace
}  // namespace weft::runtime
