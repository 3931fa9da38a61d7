// Stress schedules and relocate mode (--gc-stress, --gc-interval, --gc-seed).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fstream>
#include <set>

#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

// The stress collections: stops of every kind (an incremental major's start and slices
// are stops without a collection).
uint64_t stops(const ToyHeap& h) {
  Stats s = h.heap.stats();
  return s.minor.count + s.major.count + s.slice.count;
}

uint64_t collectionsOver(ToyHeap& h, int safepoints, std::vector<int>* which = nullptr) {
  uint64_t before = stops(h);
  for (int i = 0; i < safepoints; ++i) {
    uint64_t n = stops(h);
    EXPECT_TRUE(h.heap.collectionRequested()) << "stress keeps the poll up";
    EXPECT_TRUE(h.heap.safepointMayGC().isOk());
    if (which && stops(h) != n) which->push_back(i);
  }
  return stops(h) - before;
}

Config stress(uint64_t interval, uint64_t seed = 0, StressMode mode = StressMode::kCollect) {
  Config config;
  config.stress = mode;
  config.interval = interval;
  config.seed = seed;
  return config;
}

TEST(GcStress, Invariant1_CollectsOnlyAtSafepointsEveryInterval) {
  ToyHeap every(stress(1));
  for (int i = 0; i < 1000; ++i) every.pair();
  EXPECT_EQ(every.heap.stats().collections, 0u);
  EXPECT_EQ(collectionsOver(every, 100), 100u);
  ToyHeap seventh(stress(7));
  EXPECT_EQ(collectionsOver(seventh, 100), 14u);
  ToyHeap none;
  EXPECT_EQ(collectionsOver(none, 0), 0u);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(none.heap.safepointMayGC().isOk());
  EXPECT_EQ(none.heap.stats().collections, 0u);
}

TEST(GcStress, SeededScheduleIsDeterministicAndAveragesOneInInterval) {
  std::vector<int> first, second, other;
  ToyHeap a(stress(10, 42));
  ToyHeap b(stress(10, 42));
  ToyHeap c(stress(10, 43));
  uint64_t n = collectionsOver(a, 5000, &first);
  collectionsOver(b, 5000, &second);
  collectionsOver(c, 5000, &other);
  EXPECT_GT(n, 400u);
  EXPECT_LT(n, 600u);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, other);
  std::vector<int> gaps;
  for (size_t i = 1; i < first.size(); ++i) gaps.push_back(first[i] - first[i - 1]);
  EXPECT_NE(std::set<int>(gaps.begin(), gaps.end()).size(), 1u) << "not a fixed period";
}

TEST(GcStress, ThresholdCollectsOnlyWhenAutomatic) {
  Config config;
  config.initialThreshold = 1 << 20;
  ToyHeap h(config);
  h.heap.setAutomatic(false);
  for (int i = 0; i < 100000; ++i) h.pair();
  EXPECT_TRUE(h.heap.collectionRequested());
  EXPECT_TRUE(h.heap.safepointMayGC().isOk());
  EXPECT_EQ(h.heap.stats().collections, 0u);
  EXPECT_FALSE(h.heap.collectionRequested()) << "a stopped collector does not nag every safepoint";
  EXPECT_TRUE(h.heap.collectMayGC().isOk());  // explicit collections still run
  EXPECT_EQ(h.heap.stats().collections, 1u);
  h.heap.setAutomatic(true);
  for (int i = 0; i < 100000; ++i) h.pair();
  EXPECT_TRUE(h.heap.safepointMayGC().isOk());
  EXPECT_EQ(h.heap.stats().collections, 2u);
}

TEST(GcStress, RelocateMovesEveryObjectInEveryCollection) {
  ToyHeap h(stress(1, 0, StressMode::kRelocate));
  Node* list = nullptr;
  for (int i = 0; i < 5000; ++i) list = h.node(i % 3 ? obj(list) : obj(h.pair(obj(list), obj(h.blob("x")))), i);
  size_t r = h.root(list);
  std::set<const void*> previous;
  for (int round = 0; round < 5; ++round) {
    std::set<const void*> now;
    for (Object* o = h.rooted(r); o;) {
      now.insert(o);
      if (o->header.kind == kPair) {
        now.insert(as<Pair>(o)->b);
        o = as<Pair>(o)->a;
      } else {
        o = as<Node>(o)->next;
      }
    }
    EXPECT_EQ(now.size(), 5000u + 2 * 1667u);
    for (const void* p : now) ASSERT_EQ(previous.count(p), 0u) << "object stayed in place";
    for (const void* p : previous) ASSERT_FALSE(h.heap.contains(p));
    previous = now;
    ASSERT_TRUE(h.heap.safepointMayGC().isOk());
  }
}

TEST(GcStressDeathTest, RelocateReportsStaleReferenceAndExits3) {
  EXPECT_EXIT(
      {
        ToyHeap h(stress(1, 0, StressMode::kRelocate));
        Pair* p = h.pair(obj(h.blob("moved away")));
        h.root(p);
        (void)h.heap.safepointMayGC();
        volatile uint8_t kind = p->header.kind;  // stale: p is the old copy
        (void)kind;
        std::exit(0);
      },
      testing::ExitedWithCode(3),
      "weft: gc: stale reference: access to relocated object memory at 0x[0-9a-f]+ \\(collection #1\\)");
}

TEST(GcStressDeathTest, OtherFaultsKeepTheirDefaultAction) {
  EXPECT_EXIT(
      {
        ToyHeap h(stress(1, 0, StressMode::kRelocate));
        (void)h.heap.safepointMayGC();
        volatile uintptr_t address = 16;
        *reinterpret_cast<volatile int*>(address) = 1;
        std::exit(0);
      },
      [](int status) { return !(WIFEXITED(status) && (WEXITSTATUS(status) == 3 || WEXITSTATUS(status) == 0)); },
      "");
}

size_t mappedBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  return pages * 4096;
}

TEST(GcStress, RelocateQuarantineStaysBounded) {
#if defined(__SANITIZE_THREAD__)
  // TSan maps shadow memory for each new address range and keeps it: the process size
  // grows with the chunks mapped so far, whatever the quarantine holds.
  GTEST_SKIP() << "the process size measures ThreadSanitizer's shadow memory here";
#endif
  ToyHeap h(stress(1, 0, StressMode::kRelocate));
  Node* list = nullptr;
  for (int i = 0; i < 100000; ++i) list = h.node(obj(list), i);  // 2.4 MB live
  h.root(list);
  size_t before = mappedBytes();
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(h.heap.safepointMayGC().isOk());  // 480 MB moved
  EXPECT_LT(mappedBytes(), before + (128u << 20));
}

}  // namespace
}  // namespace weft::gc::toy
