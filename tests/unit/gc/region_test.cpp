// The mark-region old generation (docs/design/gc-v2.md "Mark-region old generation";
// gc/heap.h invariants 2, 4 and 12): a major marks old objects in place and sweeps their
// chunks into holes, minors promote into those holes, fragmented chunks are evacuated
// (every chunk under relocate stress), weak tables and finalizers see objects that did
// not move, moved or died, and --gc-verify checks the line marks (negative tests: fault
// site gc.line-drop, and a reference into a free line).
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "gc/fault.h"
#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

constexpr size_t kPairBytes = roundObjectSize(sizeof(Pair));

struct RegionHeap : ToyHeap {
  using ToyHeap::ToyHeap;
  // A rooted strong array of `n` young pairs, promoted by a minor into consecutive old
  // chunks. From 4096 pairs on the array is a large object, which never moves.
  Weak* oldPairs(uint32_t n) {
    size_t r = root(weak(false, false, n / 2));
    for (uint32_t i = 0; i < n; ++i) rooted<Weak>(r)->slots[i] = obj(pair());
    minor();
    return rooted<Weak>(r);
  }
  // Drops every pair but one in `keepEvery`, so the survivors' chunks are mostly free.
  static void thin(Weak* array, uint32_t n, uint32_t keepEvery) {
    for (uint32_t i = 0; i < n; ++i)
      if (i % keepEvery) array->slots[i] = nullptr;
  }
  uint64_t copied() { return heap.stats().bytesCopiedTotal; }
};

TEST(GcRegion, MajorMarksADenseOldGenerationInPlace) {
  RegionHeap h(verifying());
  constexpr uint32_t n = 20000;
  Weak* array = h.oldPairs(n);
  std::vector<Object*> before(array->slots, array->slots + n);
  uint64_t copied = h.copied();
  size_t inUse = h.heap.bytesInUse();
  h.major();
  EXPECT_EQ(h.copied(), copied) << "a major copies nothing of a dense old generation";
  EXPECT_EQ(h.heap.bytesInUse(), inUse);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(array->slots[i], before[i]);
}

TEST(GcRegion, MajorSweepsDeadObjectsAndMinorsPromoteIntoTheFreedLines) {
  RegionHeap h(verifying());
  constexpr uint32_t n = 20000;
  Weak* array = h.oldPairs(n);
  std::set<Object*> promoted(array->slots, array->slots + n);
  size_t arrayBytes = roundObjectSize(sizeof(Weak) + sizeof(Object*) * n);
  RegionHeap::thin(array, n, 16);  // one pair in 512 bytes: three free lines in four
  h.major();
  EXPECT_EQ(h.heap.bytesInUse(), arrayBytes + n / 16 * kPairBytes) << "the dead pairs were swept";
  constexpr uint32_t kYoung = 1000;
  for (uint32_t i = 0; i < kYoung; ++i) {
    Pair* young = h.pair();
    writeBarrier(obj(array), obj(young));
    array->slots[16 * i + 1] = obj(young);
  }
  h.minor();
  uint32_t inHoles = 0;
  for (uint32_t i = 0; i < kYoung; ++i) inHoles += promoted.count(array->slots[16 * i + 1]);
  EXPECT_EQ(inHoles, kYoung) << "promotion fills the free lines of the old chunks first";
  EXPECT_EQ(h.heap.bytesInUse(), arrayBytes + (n / 16 + kYoung) * kPairBytes);
}

TEST(GcRegion, FragmentedChunksAreEvacuatedAndFreed) {
  RegionHeap h(verifying());
  constexpr uint32_t n = 40000;  // five chunks of pairs
  Weak* array = h.oldPairs(n);
  RegionHeap::thin(array, n, 16);
  h.major();  // sweeps: every chunk is now fifteen sixteenths free
  std::vector<Object*> before(array->slots, array->slots + n);
  std::vector<uint32_t> hashes;
  for (uint32_t i = 0; i < n; i += 16) hashes.push_back(before[i]->header.hash);
  uint64_t copied = h.copied();
  h.major();  // evacuates them
  EXPECT_EQ(h.copied(), copied + n / 16 * kPairBytes) << "every survivor of the sparse chunks moved, once";
  for (uint32_t i = 0; i < n; i += 16) {
    ASSERT_NE(array->slots[i], before[i]);
    ASSERT_EQ(array->slots[i]->header.hash, hashes[i / 16]) << "identity hashes survive evacuation";
    ASSERT_FALSE(h.heap.contains(before[i])) << "an evacuated chunk is freed";
  }
  copied = h.copied();
  h.major();
  EXPECT_EQ(h.copied(), copied) << "the compacted chunk is dense: marked in place";
}

TEST(GcRegion, RelocateStressEvacuatesEveryOldChunk) {
  RegionHeap h(verifying(StressMode::kRelocate));
  constexpr uint32_t n = 10000;
  Weak* array = h.weak(false, false, n / 2);
  size_t r = h.root(array);
  for (uint32_t i = 0; i < n; ++i) array->slots[i] = obj(h.pair());
  for (int round = 0; round < 3; ++round) {
    array = h.rooted<Weak>(r);
    std::vector<Object*> before(array->slots, array->slots + n);
    ASSERT_TRUE(h.heap.safepointMayGC().isOk()) << h.heap.failureReason();
    array = h.rooted<Weak>(r);
    for (uint32_t i = 0; i < n; ++i) ASSERT_NE(array->slots[i], before[i]) << "round " << round;
  }
}

TEST(GcRegion, WeakTablesAndFinalizersSeeObjectsThatStayedMovedOrDied) {
  RegionHeap h(verifying());
  constexpr uint32_t n = 40000;
  constexpr uint32_t kSparse = 3 * 8192;  // the pairs of the first three chunks thin out
  Weak* array = h.oldPairs(n);
  for (uint32_t i = 0; i < kSparse; ++i)
    if (i % 16) array->slots[i] = nullptr;
  size_t values = h.root(h.weak(false, true, 3));
  size_t keys = h.root(h.weak(true, false, 2));
  h.major();  // sweeps: the first chunks are mostly free now, so the next major evacuates them
  Object* stays = array->slots[30000];
  Object* moves = array->slots[0];
  Object* deadKey = array->slots[32];
  Object* ephemeronValue = array->slots[48];
  Object* finalized = array->slots[35000];
  Weak* v = h.rooted<Weak>(values);
  Object* entries[] = {stays, stays, stays, moves, stays, array->slots[16]};
  std::copy(std::begin(entries), std::end(entries), v->slots);
  Weak* k = h.rooted<Weak>(keys);
  Object* ephemerons[] = {deadKey, stays, stays, ephemeronValue};
  std::copy(std::begin(ephemerons), std::end(ephemerons), k->slots);
  h.heap.registerFinalizable(finalized);
  for (uint32_t i : {16u, 32u, 48u, 35000u}) array->slots[i] = nullptr;
  h.major();
  v = h.rooted<Weak>(values);
  k = h.rooted<Weak>(keys);
  EXPECT_EQ(array->slots[30000], stays) << "an object of a dense chunk is marked in place";
  EXPECT_EQ(v->slots[1], stays) << "a weak value that did not move is kept as it is";
  EXPECT_NE(array->slots[0], moves) << "its sparse chunk was evacuated";
  EXPECT_EQ(v->slots[3], array->slots[0]) << "a weak value that moved is updated";
  EXPECT_EQ(v->slots[4], nullptr) << "a dead weak value's entry is cleared";
  EXPECT_EQ(v->slots[5], nullptr);
  EXPECT_EQ(k->slots[0], nullptr) << "a dead weak key's entry is cleared";
  EXPECT_EQ(k->slots[1], nullptr);
  EXPECT_EQ(k->slots[2], stays);
  ASSERT_NE(k->slots[3], nullptr) << "a live key keeps its value";
  EXPECT_NE(k->slots[3], ephemeronValue) << "which moved out of its sparse chunk";
  EXPECT_TRUE(h.heap.contains(k->slots[3]));
  EXPECT_EQ(h.heap.takePendingFinalizer(), finalized) << "resurrected where it lies, and queued";
  EXPECT_EQ(h.heap.takePendingFinalizer(), nullptr);
}

// The interned-string table's contract (a WeakRootSource) at an in-place major: a live
// string that did not move keeps its entry as it is, one that moved is updated, a dead
// one is dropped.
TEST(GcRegion, InternTableSeesStringsThatStayedMovedOrDied) {
  RegionHeap h(verifying());
  constexpr uint32_t n = 40000;
  constexpr uint32_t kSparse = 3 * 8192;
  Weak* array = h.oldPairs(n);
  for (uint32_t i = 0; i < kSparse; ++i)
    if (i % 16) array->slots[i] = nullptr;
  StringTable table;
  h.heap.addWeakRootSource(&table);
  h.major();  // the first chunks are mostly free now: the next major evacuates them
  Object* stays = array->slots[30000];
  Object* moves = array->slots[0];
  table.strings = {stays, moves, array->slots[16]};
  array->slots[16] = nullptr;
  h.major();
  ASSERT_EQ(table.strings.size(), 2u) << "the dead entry is dropped";
  EXPECT_EQ(table.strings[0], stays);
  EXPECT_NE(table.strings[1], moves);
  EXPECT_EQ(table.strings[1], array->slots[0]);
  h.heap.removeWeakRootSource(&table);
}

// A pinned object in a chunk chosen for evacuation stays, and so does its chunk; the
// chunk's other survivors still move (into the holes of that very chunk, the only one
// left that is not being evacuated).
TEST(GcRegion, PinnedObjectKeepsItsEvacuatedChunk) {
  RegionHeap h(verifying());
  constexpr uint32_t n = 40000;
  Weak* array = h.oldPairs(n);
  RegionHeap::thin(array, n, 16);
  h.major();
  Object* pinned = array->slots[0];
  Object* neighbour = array->slots[16];
  h.heap.pin(pinned);
  h.major();
  EXPECT_EQ(array->slots[0], pinned);
  EXPECT_TRUE(h.heap.contains(pinned));
  EXPECT_NE(array->slots[16], neighbour) << "the rest of the chunk was evacuated";
  h.heap.unpin(pinned);
  h.major();  // the kept chunk took the evacuees into its holes: dense enough to stay
  EXPECT_TRUE(h.heap.contains(array->slots[0]));
}

TEST(GcRegion, LineDropIsCaught) {
  RegionHeap h(verifying());
  constexpr uint32_t n = 4000;
  Weak* array = h.oldPairs(n);
  RegionHeap::thin(array, n, 16);
  fault::configure("gc.line-drop:1");
  Status s = h.heap.collectMayGC(CollectionKind::kMajor);
  fault::configure("");
  EXPECT_EQ(s.code(), StatusCode::kFatal);
  std::string reason = h.heap.failureReason();
  EXPECT_NE(reason.find("verify failed: after collection"), std::string::npos) << reason;
  EXPECT_NE(reason.find("line marks"), std::string::npos) << reason;
  EXPECT_NE(reason.find("unmarked, but an object overlaps it"), std::string::npos) << reason;
}

TEST(GcRegion, ReferenceIntoAFreeLineIsCaught) {
  RegionHeap h(verifying());
  constexpr uint32_t n = 4000;
  Weak* array = h.oldPairs(n);
  Object* swept = array->slots[2 * 16 + 5];  // inside a run of dead pairs
  RegionHeap::thin(array, n, 16);
  h.major();
  h.roots.slots.push_back(swept);  // a stale raw pointer kept across the major
  std::string fault = h.heap.verifyHeap();
  EXPECT_NE(fault.find("reference to a freed object"), std::string::npos) << fault;
  h.roots.slots.pop_back();
}

}  // namespace
}  // namespace weft::gc::toy
