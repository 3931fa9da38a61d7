// Generations (docs/design/gc-v2.md; heap.h invariants 2, 3 and 10): promotion, the
// remembered set behind the write barrier, the parked-stack rule, large objects
// promoted in place, weak tables and finalizers at minor collections, and the
// verifier's remembered-set check with its negative tests.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "gc/fault.h"
#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

bool isOld(const void* p) { return static_cast<const Object*>(p)->header.gcBits & kBitOld; }

using GenHeap = StackHeap;

TEST(GcGenerational, PromotionOnFirstSurvivalThenNoMove) {
  GenHeap h(verifying());
  size_t i = h.root(h.blob("kept"));
  Object* young = h.rooted(i);
  EXPECT_FALSE(isOld(young));
  h.minor();
  Object* promoted = h.rooted(i);
  EXPECT_NE(promoted, young) << "a minor evacuates the nursery";
  EXPECT_TRUE(isOld(promoted));
  EXPECT_EQ(text(as<Blob>(promoted)), "kept");
  EXPECT_GE(h.heap.stats().bytesPromotedTotal, roundObjectSize(sizeof(Blob) + 4));
  h.minor();
  EXPECT_EQ(h.rooted(i), promoted) << "a minor leaves the old generation in place";
  h.collect();
  EXPECT_EQ(h.rooted(i), promoted) << "a major marks old objects in place (its chunk is not fragmented)";
  EXPECT_EQ(h.heap.stats().minor.count, 2u);
  EXPECT_EQ(h.heap.stats().major.count, 1u);
}

TEST(GcGenerational, MinorFreesYoungGarbageAndKeepsOldGarbageUntilMajor) {
  GenHeap h;
  size_t i = h.root(h.pair());
  h.minor();
  size_t withOld = h.heap.bytesInUse();
  for (int k = 0; k < 10000; ++k) h.pair();
  h.minor();
  EXPECT_EQ(h.heap.bytesInUse(), withOld) << "young garbage is freed, count stays exact";
  h.roots.slots[i] = nullptr;
  h.minor();
  EXPECT_EQ(h.heap.bytesInUse(), withOld) << "old garbage waits for a major";
  h.collect();
  EXPECT_EQ(h.heap.bytesInUse(), 0u);
}

TEST(GcGenerational, Invariant3_RememberedOldHolderKeepsAndUpdatesYoungReferent) {
  GenHeap h(verifying());
  size_t i = h.root(h.pair());
  h.minor();
  Pair* holder = h.rooted<Pair>(i);
  Blob* young = h.blob("young");
  writeBarrier(obj(holder), obj(young));
  holder->a = obj(young);
  EXPECT_TRUE(holder->header.gcBits & kBitRemembered);
  h.minor();
  ASSERT_EQ(h.rooted<Pair>(i), holder);
  EXPECT_NE(holder->a, obj(young));
  EXPECT_TRUE(isOld(holder->a));
  EXPECT_EQ(text(as<Blob>(holder->a)), "young");
  EXPECT_FALSE(holder->header.gcBits & kBitRemembered) << "a collection empties the remembered set";
}

TEST(GcGenerational, BarrierRecordsOnlyOldToYoungStores) {
  GenHeap h;
  size_t i = h.root(h.pair());
  size_t j = h.root(h.pair());
  h.minor();
  Pair* a = h.rooted<Pair>(i);
  writeBarrier(obj(a), h.rooted(j));  // old to old
  writeBarrier(obj(a), nullptr);
  EXPECT_FALSE(a->header.gcBits & kBitRemembered);
  Pair* y = h.pair();
  writeBarrier(obj(y), obj(h.blob("x")));  // young holder
  EXPECT_FALSE(y->header.gcBits & kBitRemembered);
  writeBarrier(obj(a), obj(y));
  EXPECT_TRUE(a->header.gcBits & kBitRemembered);
}

std::string failedMinor(GenHeap& h) {
  Status s = h.heap.collectMayGC(CollectionKind::kMinor);
  EXPECT_EQ(s.code(), StatusCode::kFatal);
  return h.heap.failureReason();
}

// The negative tests of verify's remembered-set check: a store with no barrier at all,
// and a barrier whose record is dropped (fault site gc.barrier-drop).
TEST(GcGenerational, Invariant3_StoreWithoutBarrierIsCaught) {
  GenHeap h(verifying());
  size_t i = h.root(h.pair());
  h.minor();
  h.rooted<Pair>(i)->b = obj(h.blob("unrecorded"));
  std::string reason = failedMinor(h);
  EXPECT_NE(reason.find("verify failed: before collection"), std::string::npos) << reason;
  EXPECT_NE(reason.find("no write barrier recorded it"), std::string::npos) << reason;
}

// An old holder (rooted) receives a young blob through the barrier, whose first slow
// path runs with fault site `site` firing.
void storeYoungWithFault(GenHeap& h, const char* site) {
  size_t i = h.root(h.pair());
  h.minor();
  Pair* holder = h.rooted<Pair>(i);
  Blob* young = h.blob("young");
  fault::configure(std::string(site) + ":1");
  writeBarrier(obj(holder), obj(young));
  fault::configure("");
  holder->a = obj(young);
}

TEST(GcGenerational, Invariant3_BarrierDropIsCaught) {
  GenHeap h(verifying());
  storeYoungWithFault(h, "gc.barrier-drop");
  std::string reason = failedMinor(h);
  EXPECT_NE(reason.find("in no remembered buffer"), std::string::npos) << reason;
}

// Fault site gc.remember (invariant 9): an append to the remembered buffer that fails
// breaks the heap at once; the store goes on, and the next safepoint fails closed
// instead of running a minor that would miss the holder.
TEST(GcGenerational, Invariant9_RememberFailureFailsClosed) {
  GenHeap h(verifying());
  storeYoungWithFault(h, "gc.remember");
  EXPECT_TRUE(h.heap.collectionRequested()) << "the broken heap keeps the poll up";
  EXPECT_EQ(h.heap.safepointMayGC().code(), StatusCode::kFatal);
  std::string reason = h.heap.failureReason();
  EXPECT_NE(reason.find("remember: a remembered-set append failed"), std::string::npos) << reason;
  EXPECT_EQ(h.heap.stats().minor.count, 1u) << "no collection ran on the broken heap";
}

// A chunk source that hands freed blocks of the size asked out again, last freed first,
// so a heap made after another has died takes its chunks in the order it had them.
struct RecyclingSource {
  static void* fn(void* ud, void* ptr, size_t osize, size_t nsize) {
    auto& freed = static_cast<RecyclingSource*>(ud)->freed;
    if (nsize == 0) {
      freed.emplace_back(osize, ptr);
      return nullptr;
    }
    for (auto it = freed.rbegin(); it != freed.rend(); ++it) {
      if (it->first != nsize) continue;
      void* p = it->second;
      freed.erase(std::next(it).base());
      return p;
    }
    return std::malloc(nsize);
  }
  ~RecyclingSource() {
    for (auto& [size, p] : freed) std::free(p);
  }
  std::vector<std::pair<size_t, void*>> freed;
};

// With two heaps on one thread, a store into the one that is not the thread's current
// heap is recorded as an orphan (gc-v2.md "The remembered set"). Its heap dying before
// any collection took the record must drop it: a later heap at the same addresses would
// otherwise inherit a record of an object it never had (seen as --gc-verify's "remembered
// buffers still hold ... after the collection" in a process that made States in turn).
TEST(GcGenerational, OrphanRecordsDieWithTheirHeap) {
  RecyclingSource source;
  Config config = verifying();
  config.chunkSource = {RecyclingSource::fn, &source};
  auto first = std::make_unique<GenHeap>(config);
  size_t i = first->root(first->pair());
  first->minor();
  auto second = std::make_unique<GenHeap>(config);  // now the thread's current heap
  Pair* holder = first->rooted<Pair>(i);
  writeBarrier(obj(holder), obj(first->blob("young")));
  ASSERT_TRUE(holder->header.gcBits & kBitRemembered);
  const void* stale = holder;
  first.reset();
  second.reset();
  GenHeap third(config);
  size_t j = 0;
  for (int round = 0; round < 8 && !third.heap.contains(stale); ++round) {
    j = third.root(third.pair());
    third.minor();
  }
  ASSERT_TRUE(third.heap.contains(stale)) << "the test needs the third heap at the first's addresses";
  EXPECT_TRUE(third.heap.collectMayGC(CollectionKind::kMinor).isOk()) << third.heap.failureReason();
  EXPECT_TRUE(third.heap.collectMayGC(CollectionKind::kMajor).isOk()) << third.heap.failureReason();
  EXPECT_NE(third.rooted(j), nullptr);
}

TEST(GcGenerational, Invariant10_ParkedStackIsNotRescanned) {
  GenHeap h(verifying());
  size_t i = h.root(h.stack());
  h.rooted<Stack>(i)->slots->push_back(obj(h.blob("on the stack")));
  gStackTraces = 0;
  h.minor();  // young: traced whole, promoted
  Stack* parked = h.rooted<Stack>(i);
  EXPECT_GT(gStackTraces, 0);
  EXPECT_TRUE(isOld(parked));
  int before = gStackTraces;
  for (int k = 0; k < 3; ++k) h.minor();
  // verify traces every object before and after each collection; the collector none.
  EXPECT_EQ(gStackTraces - before, 3 * 2) << "only verify traced the parked stack";
  // It runs again: dirty, so the next minor rescans it and promotes what it pushed.
  writeBarrierBulk(obj(parked));
  parked->slots->push_back(obj(h.blob("pushed")));
  before = gStackTraces;
  h.minor();
  EXPECT_EQ(gStackTraces - before, 3) << "verify twice and the collector once";
  EXPECT_TRUE(isOld((*parked->slots)[1]));
  EXPECT_EQ(text(as<Blob>((*parked->slots)[1])), "pushed");
}

TEST(GcGenerational, Invariant10_CleanStackWithYoungReferenceIsCaught) {
  GenHeap h(verifying());
  size_t i = h.root(h.stack());
  h.minor();
  h.rooted<Stack>(i)->slots->push_back(obj(h.blob("not marked dirty")));
  std::string reason = failedMinor(h);
  EXPECT_NE(reason.find("a clean stack holds a young reference"), std::string::npos) << reason;
}

// Pacing (gc-v2.md): a mutator whose remembered buffer reaches the budget requests a
// minor, so the stacks (and holders) a minor rescans are bounded by it, not by how many
// tasks ran since the last one; the minor that follows promotes what they hold.
TEST(GcGenerational, RememberedBudgetRequestsAMinor) {
  Config config = verifying();
  config.rememberedBudget = 8;
  GenHeap h(config);
  std::vector<size_t> stacks;
  for (int k = 0; k < 8; ++k) stacks.push_back(h.root(h.stack()));
  h.minor();
  ASSERT_FALSE(h.heap.collectionRequested());
  for (int k = 0; k < 8; ++k) {
    EXPECT_FALSE(h.heap.collectionRequested()) << "requested after " << k << " holders";
    Stack* s = h.rooted<Stack>(stacks[static_cast<size_t>(k)]);
    writeBarrierBulk(obj(s));
    s->slots->push_back(obj(h.blob("ran")));
  }
  EXPECT_TRUE(h.heap.collectionRequested()) << "the eighth dirty stack reaches the budget";
  uint64_t minors = h.heap.stats().minor.count;
  ASSERT_TRUE(h.heap.safepointMayGC().isOk()) << h.heap.failureReason();
  EXPECT_EQ(h.heap.stats().minor.count, minors + 1);
  EXPECT_FALSE(h.heap.collectionRequested());
  for (size_t i : stacks) EXPECT_TRUE(isOld((*h.rooted<Stack>(i)->slots)[0]));
  // Stopped automatic collection drops the request, as it drops a crossed threshold.
  h.heap.setAutomatic(false);
  for (size_t i : stacks) writeBarrierBulk(h.rooted(i));
  ASSERT_TRUE(h.heap.safepointMayGC().isOk());
  EXPECT_EQ(h.heap.stats().minor.count, minors + 1);
}

TEST(GcGenerational, LargeObjectIsPromotedInPlaceAndTracedWhole) {
  GenHeap h(verifying());
  uint32_t capacity = (Heap::kLargeObjectSize / (2 * sizeof(Object*))) + 1;
  Weak* big = h.weak(false, false, capacity);  // strong: a big array of references
  size_t i = h.root(big);
  // Filled without barrier records: it is young until a minor reaches it.
  big->slots[0] = obj(h.blob("key"));
  big->slots[1] = obj(h.blob("value"));
  EXPECT_FALSE(isOld(big));
  h.minor();
  EXPECT_EQ(h.rooted<Weak>(i), big) << "large objects do not move";
  EXPECT_TRUE(isOld(big));
  EXPECT_TRUE(isOld(big->slots[0]));
  EXPECT_EQ(text(as<Blob>(big->slots[1])), "value");
  Blob* later = h.blob("later");
  writeBarrier(obj(big), obj(later));
  big->slots[2] = obj(h.blob("k2"));
  writeBarrier(obj(big), big->slots[2]);
  big->slots[3] = obj(later);
  h.minor();
  EXPECT_EQ(text(as<Blob>(big->slots[3])), "later");
}

TEST(GcGenerational, UnreachedYoungLargeObjectIsFreedByMinor) {
  GenHeap h;
  h.minor();
  size_t before = h.heap.bytesInUse();
  h.m().allocate(kBlob, Heap::kLargeObjectSize * 2);
  EXPECT_GE(h.heap.bytesInUse(), before + Heap::kLargeObjectSize * 2);
  h.minor();
  EXPECT_EQ(h.heap.bytesInUse(), before);
}

TEST(GcGenerational, WeakValuesOfRememberedOldTableClearedAtMinor) {
  GenHeap h(verifying());
  size_t i = h.root(h.weak(false, true, 2));
  size_t kept = h.root(h.blob("kept"));
  h.minor();
  Weak* w = h.rooted<Weak>(i);
  Blob* dead = h.blob("dead");
  Blob* key = h.blob("key");
  writeBarrier(obj(w), obj(key));
  w->slots[0] = obj(key);
  w->slots[1] = obj(dead);
  w->slots[2] = h.rooted(kept);  // old key, old value
  w->slots[3] = h.rooted(kept);
  h.minor();
  EXPECT_EQ(w->slots[0], nullptr) << "young weak value died at the minor";
  EXPECT_EQ(w->slots[1], nullptr);
  EXPECT_EQ(w->slots[3], h.rooted(kept));
}

TEST(GcGenerational, YoungFinalizableObjectIsQueuedByMinor) {
  GenHeap h;
  size_t i = h.root(h.pair());
  h.minor();
  Pair* young = h.pair();
  h.heap.registerFinalizable(obj(young));
  Pair* survivor = h.pair();
  h.heap.registerFinalizable(obj(survivor));
  writeBarrier(h.rooted(i), obj(survivor));
  h.rooted<Pair>(i)->a = obj(survivor);
  h.minor();
  Object* due = h.heap.takePendingFinalizer();
  ASSERT_NE(due, nullptr);
  EXPECT_TRUE(isOld(due)) << "resurrected, and promoted";
  EXPECT_EQ(h.heap.takePendingFinalizer(), nullptr) << "the reachable one stays registered";
}

TEST(GcGenerational, StressCollectRunsMinorsAndSomeMajors) {
  Config config;
  config.stress = StressMode::kCollect;
  config.verify = true;
  GenHeap h(config);
  size_t i = h.root(h.pair());
  for (int k = 0; k < 32; ++k) {
    Pair* p = h.pair(obj(h.blob("x")));
    writeBarrier(h.rooted(i), obj(p));
    h.rooted<Pair>(i)->a = obj(p);
    ASSERT_TRUE(h.heap.safepointMayGC().isOk()) << h.heap.failureReason();
  }
  // Every eighth stress collection is a major, every other of those incremental: its
  // start, then minors and slices by turns until nothing is grey, then its final pause.
  Stats stats = h.heap.stats();
  EXPECT_EQ(stats.major.count, 3u) << "#8 and #24 stop-the-world, and #17 the final pause of #16's cycle";
  EXPECT_EQ(stats.incrementalCycles, 1u);
  EXPECT_EQ(stats.slice.count, 2u) << "the starts at #16 and #32 (a small heap: one slice marks it all)";
  EXPECT_EQ(stats.major.count + stats.minor.count + stats.slice.count, 32u);
  EXPECT_GT(h.heap.stats().minor.p99Nanos, 0u);
  EXPECT_GE(h.heap.stats().minor.longestNanos, h.heap.stats().minor.p50Nanos);
}

TEST(GcGenerational, RelocateStressMakesEveryCollectionMajor) {
  Config config;
  config.stress = StressMode::kRelocate;
  GenHeap h(config);
  size_t i = h.root(h.blob("moves"));
  Object* last = h.rooted(i);
  for (int k = 0; k < 4; ++k) {
    ASSERT_TRUE(h.heap.safepointMayGC().isOk());
    EXPECT_NE(h.rooted(i), last);
    last = h.rooted(i);
  }
  EXPECT_EQ(h.heap.stats().minor.count, 0u);
}

}  // namespace
}  // namespace weft::gc::toy
