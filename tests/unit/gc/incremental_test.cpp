// Incremental majors (docs/design/gc-v2.md "Incremental majors"; heap.h invariant 15):
// steps that mark the old generation in slices, the barrier's marking half, minors and
// bulk writes during a cycle, the final pause, and verify's tricolour check with its
// negative tests.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gc/fault.h"
#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

struct IncHeap : StackHeap {
  explicit IncHeap(const Config& config = verifying()) : StackHeap(config) {}
  // One step of `work` bytes; whether it finished the cycle.
  bool step(size_t work) {
    bool ended = false;
    Status st = heap.stepMayGC(m(), work, ended);
    EXPECT_TRUE(st.isOk()) << heap.failureReason();
    return ended;
  }
  // Steps until the cycle ends; how many steps that took.
  int finish(size_t work) {
    int steps = 1;
    while (!step(work) && steps < 100000) ++steps;
    return steps;
  }
};

// Roots [Q, P] with Q.a = X, all old: the first step (budget 1: one object) starts the
// cycle, marks both roots and traces P alone, so P is marked and traced (black) while X
// is still unmarked (white) and reachable only through Q.
struct BlackHolder {
  explicit BlackHolder(IncHeap& h) {
    q = h.root(h.pair(obj(h.blob("x"))));
    p = h.root(h.pair());
    h.minor();
    EXPECT_FALSE(h.step(1));
    EXPECT_EQ(h.heap.stats().slice.count, 1u) << "the start";
  }
  size_t q, p;
};

TEST(GcIncremental, StepsMarkInSlicesThenTheFinalPauseSweeps) {
  IncHeap h;
  releasedIds().clear();
  Node* list = nullptr;
  for (int i = 0; i < 5000; ++i) list = h.node(obj(list), i);
  size_t kept = h.root(list);
  std::vector<size_t> dropped;
  for (uint64_t id = 1; id <= 300; ++id) dropped.push_back(h.root(h.ext(id)));
  h.minor();  // all old
  for (size_t i : dropped) h.roots.slots[i] = nullptr;
  int steps = h.finish(4096);
  EXPECT_GT(steps, 10) << "5000 nodes of 32 bytes take many 4 KB slices";
  Stats stats = h.heap.stats();
  EXPECT_EQ(stats.incrementalCycles, 1u);
  EXPECT_EQ(stats.major.count, 1u) << "the final pause";
  EXPECT_EQ(releasedIds().size(), 300u) << "the unreachable externals died at the final pause";
  int64_t expect = 4999;
  for (Object* n = h.rooted(kept); n; n = as<Node>(n)->next) EXPECT_EQ(as<Node>(n)->value, expect--);
  EXPECT_EQ(expect, -1);
}

TEST(GcIncremental, Invariant15_TheBarrierGreysAValueStoredIntoAMarkedHolder) {
  IncHeap h;
  BlackHolder s(h);
  Pair* p = h.rooted<Pair>(s.p);
  Pair* q = h.rooted<Pair>(s.q);
  Object* x = q->a;
  writeBarrier(obj(p), x);
  p->a = x;
  writeBarrier(obj(q), nullptr);
  q->a = nullptr;
  h.finish(1);
  EXPECT_EQ(text(as<Blob>(h.rooted<Pair>(s.p)->a)), "x");
}

TEST(GcIncremental, Invariant15_MarkBarrierDropIsCaught) {
  IncHeap h;
  BlackHolder s(h);
  Pair* p = h.rooted<Pair>(s.p);
  Pair* q = h.rooted<Pair>(s.q);
  Object* x = q->a;
  fault::configure("gc.mark-barrier-drop:1");
  writeBarrier(obj(p), x);
  fault::configure("");
  p->a = x;
  q->a = nullptr;
  bool ended = false;
  EXPECT_EQ(h.heap.stepMayGC(h.m(), 1, ended).code(), StatusCode::kFatal);
  EXPECT_NE(h.heap.failureReason().find("incremental marking"), std::string::npos) << h.heap.failureReason();
}

TEST(GcIncremental, AMinorDuringACyclePromotesGrey) {
  IncHeap h;
  BlackHolder s(h);
  Pair* q = h.rooted<Pair>(s.q);
  Pair* y = h.pair(q->a);  // young, holding the white X
  writeBarrier(h.rooted(s.p), obj(y));
  h.rooted<Pair>(s.p)->a = obj(y);
  writeBarrier(obj(q), nullptr);
  q->a = nullptr;
  h.minor();
  EXPECT_EQ(h.heap.stats().minor.count, 2u);
  EXPECT_EQ(h.heap.stats().incrementalCycles, 0u) << "a minor leaves the cycle marking";
  h.finish(1);
  auto* promoted = as<Pair>(h.rooted<Pair>(s.p)->a);
  EXPECT_EQ(text(as<Blob>(promoted->a)), "x");
}

// A stack is not barriered: the holder written in bulk is traced again by the final
// pause; without the bulk record, verify finds a marked stack holding an unmarked value.
TEST(GcIncremental, ABulkWriteIsTracedAgainByTheFinalPause) {
  IncHeap h;
  size_t q = h.root(h.pair(obj(h.blob("x"))));
  size_t t = h.root(h.stack());
  h.minor();
  EXPECT_FALSE(h.step(1));  // traces the stack, empty
  Stack* stack = h.rooted<Stack>(t);
  stack->slots->push_back(h.rooted<Pair>(q)->a);
  writeBarrierBulk(obj(stack));
  writeBarrier(h.rooted(q), nullptr);
  h.rooted<Pair>(q)->a = nullptr;
  h.finish(1);
  EXPECT_EQ(text(as<Blob>(h.rooted<Stack>(t)->slots->at(0))), "x");
}

// A stack the cycle has not marked is not listed when written: whatever marks it later
// traces what it then holds. Here the final pause reaches it through its holder.
TEST(GcIncremental, AnUnmarkedStackIsNotListedWhenWritten) {
  IncHeap h;
  size_t q = h.root(h.pair(obj(h.blob("x"))));
  size_t holder = h.root(h.pair(obj(h.stack())));
  h.root(h.pair());
  h.minor();
  EXPECT_FALSE(h.step(1));  // traces the last root only: the stack is still unmarked
  auto* stack = as<Stack>(h.rooted<Pair>(holder)->a);
  stack->slots->push_back(h.rooted<Pair>(q)->a);
  writeBarrierBulk(obj(stack));
  EXPECT_EQ(obj(stack)->header.gcBits & kBitRescan, 0) << "an unmarked holder is not listed";
  writeBarrier(h.rooted(q), nullptr);
  h.rooted<Pair>(q)->a = nullptr;
  h.finish(1);
  EXPECT_EQ(text(as<Blob>(as<Stack>(h.rooted<Pair>(holder)->a)->slots->at(0))), "x");
}

TEST(GcIncremental, Invariant15_AnUnrecordedStackWriteIsCaught) {
  IncHeap h;
  size_t q = h.root(h.pair(obj(h.blob("x"))));
  size_t t = h.root(h.stack());
  h.minor();
  EXPECT_FALSE(h.step(1));
  h.rooted<Stack>(t)->slots->push_back(h.rooted<Pair>(q)->a);
  h.rooted<Pair>(q)->a = nullptr;
  bool ended = false;
  EXPECT_EQ(h.heap.stepMayGC(h.m(), 1, ended).code(), StatusCode::kFatal);
  EXPECT_NE(h.heap.failureReason().find("(thread) is marked and not grey"), std::string::npos)
      << h.heap.failureReason();
}

TEST(GcIncremental, AnExplicitMajorFinishesTheCycleThenCollectsWhatDiedDuringIt) {
  IncHeap h;
  releasedIds().clear();
  size_t e = h.root(h.ext(7));
  h.root(h.pair());
  h.minor();
  EXPECT_FALSE(h.step(1));  // marks the ext, a root
  h.roots.slots[e] = nullptr;
  h.collect();
  EXPECT_EQ(releasedIds()[7], 1) << "marked by the cycle, dead by the explicit major";
  EXPECT_EQ(h.heap.stats().incrementalCycles, 1u);
  EXPECT_EQ(h.heap.stats().collections, 3u) << "the minor, the final pause, the major";
  EXPECT_EQ(h.heap.stats().major.count, 1u) << "both in one pause";
}

// Lua's full collection is one cycle, whose finalizers run in reverse registration
// order. A is registered, promoted and dropped before a cycle starts (unmarked); B is
// registered and promoted marked during it, then dropped: the final pause finds only A
// dead, the major that follows B too, and B's finalizer must still come first.
TEST(GcIncremental, AnExplicitMajorDuringACycleQueuesFinalizersInOneOrder) {
  IncHeap h;
  size_t a = h.root(h.blob("A"));
  h.heap.registerFinalizable(h.rooted(a));
  h.root(h.pair(obj(h.blob("x"))));
  h.root(h.pair());
  h.minor();
  h.roots.slots[a] = nullptr;
  EXPECT_FALSE(h.step(1)) << "the start: the rooted pairs keep the cycle marking";
  size_t b = h.root(h.blob("B"));
  h.heap.registerFinalizable(h.rooted(b));
  h.minor();
  h.roots.slots[b] = nullptr;
  h.collect();
  std::vector<std::string> order;
  while (Object* o = h.heap.takePendingFinalizer()) order.push_back(text(as<Blob>(o)));
  EXPECT_EQ(order, (std::vector<std::string>{"B", "A"}));
  EXPECT_EQ(h.heap.stats().incrementalCycles, 1u);
}

// A remembered holder the cycle did not mark is dead unless the final pause reaches it:
// what only it refers to dies (a minor would keep it: old objects are live to a minor).
TEST(GcIncremental, TheFinalPauseKeepsNothingForADeadRememberedHolder) {
  IncHeap h;
  releasedIds().clear();
  size_t holder = h.root(h.pair());
  h.minor();
  Ext* e = h.ext(9);
  writeBarrier(h.rooted(holder), obj(e));
  h.rooted<Pair>(holder)->a = obj(e);
  h.roots.slots[holder] = nullptr;
  EXPECT_TRUE(h.step(1 << 20)) << "nothing to mark: the step ends the cycle";
  EXPECT_EQ(releasedIds()[9], 1);
}

TEST(GcIncremental, WeakEntriesTheCycleLeftUnmarkedAreCleared) {
  IncHeap h;
  Weak* w = h.weak(false, true, 2);
  size_t wi = h.root(w);
  size_t ki = h.root(h.blob("key"));
  w = h.rooted<Weak>(wi);
  w->slots[0] = h.rooted(ki);
  w->slots[1] = obj(h.blob("dies"));
  w->slots[2] = obj(h.blob("k2"));
  w->slots[3] = h.rooted(ki);  // a strong key, a weak value reached from a root
  h.finish(16);
  w = h.rooted<Weak>(wi);
  EXPECT_EQ(w->slots[0], nullptr) << "its value died: the entry goes";
  EXPECT_EQ(w->slots[3], h.rooted(ki));
}

// An old generation of `first` nodes, collected, then `more` promoted by a minor and a
// churn of pairs past the major threshold; the stop that churn ends in.
void growOldGeneration(IncHeap& h, int first, int more) {
  Node* list = nullptr;
  for (int i = 0; i < first; ++i) list = h.node(obj(list), i);
  h.root(list);
  h.collect();
  Node* added = nullptr;
  for (int i = 0; i < more; ++i) added = h.node(obj(added), i);
  h.root(added);
  ASSERT_TRUE(h.heap.safepointMayGC().isOk());  // a minor promotes it
  for (int i = 0; i < 250000; ++i) h.pair();
  ASSERT_TRUE(h.heap.safepointMayGC().isOk());
}

// Below Config::incrementalMinBytes the growth's major stops the world: a cycle would
// keep what its minors promote until the next one, and the pause is short.
TEST(GcIncremental, ASmallOldGenerationsGrowthStopsTheWorld) {
  Config config;
  config.initialThreshold = 1 << 20;
  config.incrementalMinBytes = 32u << 20;
  IncHeap h(config);
  growOldGeneration(h, 200000, 220000);  // 6.4 MB, then 7 MB more
  EXPECT_EQ(h.heap.stats().major.count, 2u) << "the explicit one and the growth's";
  EXPECT_EQ(h.heap.stats().slice.count, 0u) << "no cycle";
}

// Growth past the old generation's threshold starts a cycle, not a stop-the-world
// major; allocation paces its slices, and it finishes on its own.
TEST(GcIncremental, TheOldGenerationsGrowthStartsACycleThatAllocationFinishes) {
  Config config;
  config.initialThreshold = 1 << 20;
  config.incrementalMinBytes = 0;
  IncHeap h(config);
  growOldGeneration(h, 200000, 220000);
  EXPECT_EQ(h.heap.stats().major.count, 1u) << "only the explicit one";
  EXPECT_EQ(h.heap.stats().slice.count, 1u) << "the cycle started";
  for (int round = 0; round < 2000 && h.heap.stats().incrementalCycles == 0; ++round) {
    for (int i = 0; i < 2000; ++i) h.pair();
    ASSERT_TRUE(h.heap.safepointMayGC().isOk()) << h.heap.failureReason();
  }
  Stats stats = h.heap.stats();
  EXPECT_EQ(stats.incrementalCycles, 1u) << stats.slice.count << " slices, " << stats.minor.count << " minors";
  EXPECT_GT(stats.slice.count, 3u) << "marked in several slices";
}

}  // namespace
}  // namespace weft::gc::toy
