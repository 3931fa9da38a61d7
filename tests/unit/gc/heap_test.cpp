// Allocation, accounting, moving and handles (heap.h invariants 1, 4 and 5).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/gc/mutator_threads.h"
#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

// What a Pair and a Node occupy in the heap (sizes round up to kObjectAlignment).
constexpr size_t kPairBytes = roundObjectSize(sizeof(Pair));
constexpr size_t kNodeBytes = roundObjectSize(sizeof(Node));

TEST(GcHeap, AllocationIsZeroFilledAlignedAndHashed) {
  ToyHeap h;
  std::set<uint32_t> hashes;
  for (int i = 0; i < 1000; ++i) {
    Object* o = h.m().allocate(kBlob, 16 + 100);
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(o) % kObjectAlignment, 0u);
    EXPECT_EQ(o->header.kind, kBlob);
    EXPECT_NE(o->header.hash, 0u);
    hashes.insert(o->header.hash);
    const Blob* b = as<Blob>(o);
    for (int j = 0; j < 100; ++j) ASSERT_EQ(b->bytes[j], 0);
    as<Blob>(o)->length = 100;
    std::memset(as<Blob>(o)->bytes, 0x5a, 100);  // dirty it: recycled memory must be re-zeroed
  }
  EXPECT_EQ(hashes.size(), 1000u);
  h.collect();  // all garbage: the chunks go to the pool and come back dirty
  for (int i = 0; i < 3000; ++i) {
    Object* o = h.m().allocate(kBlob, 16 + 100);
    for (int j = 0; j < 100; ++j) ASSERT_EQ(as<Blob>(o)->bytes[j], 0);
    as<Blob>(o)->length = 100;
  }
}

TEST(GcHeap, SmallRequestsAreRoundedToMinimumSize) {
  ToyHeap h;
  Object* a = h.m().allocate(kBlob, 9);
  Object* b = h.m().allocate(kBlob, 9);
  EXPECT_EQ(reinterpret_cast<char*>(b) - reinterpret_cast<char*>(a), 16);
  EXPECT_EQ(roundObjectSize(1), kMinObjectSize);
  EXPECT_EQ(roundObjectSize(17), 32u);  // 16-byte alignment (object.h invariant 1)
}

TEST(GcHeap, Invariant1_AllocationNeverCollectsButRaisesRequest) {
  Config config;
  config.initialThreshold = 1 << 20;
  ToyHeap h(config);
  EXPECT_FALSE(h.heap.collectionRequested());
  for (int i = 0; i < 100000; ++i) ASSERT_NE(h.pair(), nullptr);  // 2.4 MB
  EXPECT_TRUE(h.heap.collectionRequested());
  EXPECT_EQ(h.heap.stats().collections, 0u);
  EXPECT_TRUE(h.heap.safepointMayGC().isOk());
  EXPECT_EQ(h.heap.stats().collections, 1u);
  EXPECT_FALSE(h.heap.collectionRequested());
}

// Pacing (gc-v2.md): a collection is requested after a nursery's worth of allocation
// (initialThreshold, or half the growth a live heap allows), and it is a major one only
// once the old generation outgrew live * pause / 100. Stop-the-world majors here: the
// incremental ones start at the same point (GcIncremental.*).
TEST(GcHeap, NurseryPacesCollectionsAndPausePacesMajors) {
  Config config;
  config.initialThreshold = 1 << 20;
  config.pauseMultiplier = 200;
  config.incrementalMajors = false;
  config.survivalPacing = false;
  ToyHeap h(config);
  Node* list = nullptr;
  for (int i = 0; i < 200000; ++i) list = h.node(obj(list), i);  // 4.8 MB live
  h.root(list);
  h.collect();
  size_t live = h.heap.bytesInUse();
  EXPECT_GE(live, 200000 * kNodeBytes);
  for (int i = 0; i < 50000; ++i) h.pair();  // 1.6 MB (and a buffer's tail): within live / 2
  EXPECT_FALSE(h.heap.collectionRequested());
  for (int i = 0; i < 60000; ++i) h.pair();
  EXPECT_TRUE(h.heap.collectionRequested());
  ASSERT_TRUE(h.heap.safepointMayGC().isOk());
  EXPECT_EQ(h.heap.stats().minor.count, 1u) << "the old generation is far below live * 2";
  EXPECT_EQ(h.heap.stats().major.count, 1u);
  // Promote another `live` worth: the next automatic collection is a major one.
  Node* more = nullptr;
  for (int i = 0; i < 220000; ++i) more = h.node(obj(more), i);
  h.root(more);
  ASSERT_TRUE(h.heap.safepointMayGC().isOk());  // a minor promotes it
  EXPECT_EQ(h.heap.stats().minor.count, 2u);
  for (int i = 0; i < 250000; ++i) h.pair();  // 8 MB: past the 6.7 MB nursery
  ASSERT_TRUE(h.heap.safepointMayGC().isOk());
  EXPECT_EQ(h.heap.stats().major.count, 2u);
}

// Survival pacing (gc-v2.md "Pacing"): the nursery starts at a quarter of the floor and
// stays there while minors find nothing alive; minors that promote much double it, past
// the floor up to 4 MiB; one that promotes nothing halves it back, but a heap whose
// nursery reached the floor never goes below it again.
TEST(GcHeap, SurvivalPacingSizesTheNurseryBySurvival) {
  Config config;
  config.initialThreshold = 1 << 20;
  config.incrementalMajors = false;
  ToyHeap h(config);
  auto minorsFor = [&](int pairs) {  // 32 bytes each, polled every 32 KB
    uint64_t before = h.heap.stats().minor.count;
    for (int i = 1; i <= pairs; ++i) {
      h.pair();
      if (i % 1000 == 0) {
        EXPECT_TRUE(h.heap.safepointMayGC().isOk());
      }
    }
    return h.heap.stats().minor.count - before;
  };
  EXPECT_GE(minorsFor(128000), 12u) << "4 MB of garbage, 256 KiB at a time";
  for (int round = 0; round < 3; ++round) {
    Node* list = nullptr;
    for (int i = 0; i < 5000; ++i) list = h.node(obj(list), i);  // 160 KB, promoted
    h.root(list);
    h.minor();
  }
  EXPECT_LE(minorsFor(128000), 3u) << "doubled three times: 2 MiB, then halved back to 1 MiB";
  uint64_t atFloor = minorsFor(128000);
  EXPECT_GE(atFloor, 3u);
  EXPECT_LE(atFloor, 5u) << "the floor, not below it: 1 MiB at a time";
  EXPECT_EQ(h.heap.stats().major.count, 0u) << "the old generation stayed below its threshold";
}

// A 1 MiB nursery that survival pacing leaves alone, and majors in one pause.
Config fixedNurseryConfig() {
  Config config;
  config.initialThreshold = 1 << 20;
  config.incrementalMajors = false;
  config.survivalPacing = false;
  return config;
}

// The nursery is the bytes filled, not the buffers handed out (heap_internal.h
// openBuffers): another mutator's buffer, taken for one object and held (a parked
// worker's), and cells allocated after a collection do not bring the next minor forward.
// Counted whole, they ran a minor per task in bench/tasks/skynet.lua.
TEST(GcHeap, BuffersHeldAndCellsDoNotBringTheMinorForward) {
  ToyHeap h(fixedNurseryConfig());
  h.minor();
  WorkerMutator worker(h.heap);
  ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
  ASSERT_NE(worker.m->allocate(kPair, sizeof(Pair)), nullptr);  // a 256 KiB buffer, held
  h.heap.detach(*worker.m);
  for (int i = 0; i < 200; ++i) ASSERT_NE(h.m().allocateNonMoving(kPair, sizeof(Pair)), nullptr);
  for (int i = 0; i < 28000; ++i) h.pair();  // 896 KB of the 1 MiB nursery
  EXPECT_FALSE(h.heap.collectionRequested()) << "the held buffer or the cells counted as filled";
  for (int i = 0; i < 8000; ++i) h.pair();  // 256 KB more
  EXPECT_TRUE(h.heap.collectionRequested()) << "the nursery's bytes are filled";
}

// Off-heap memory that objects own paces collections too: noting it raises the request,
// keeping it alive widens the major threshold, and its release narrows it again.
TEST(GcHeap, ExternalBytesPaceCollections) {
  ToyHeap h(fixedNurseryConfig());
  releasedIds().clear();
  size_t held = h.root(h.ext(1, 8 << 20));
  EXPECT_TRUE(h.heap.collectionRequested()) << "8 MB noted, far past the 1 MB nursery";
  h.collect();
  EXPECT_FALSE(h.heap.collectionRequested());
  Node* list = nullptr;
  for (int i = 0; i < 100000; ++i) list = h.node(obj(list), i);  // 3.2 MB, promoted next
  h.root(list);
  EXPECT_TRUE(h.heap.collectionRequested());
  ASSERT_TRUE(h.heap.safepointMayGC().isOk());
  for (int i = 0; i < 60000; ++i) h.pair();
  ASSERT_TRUE(h.heap.safepointMayGC().isOk());
  EXPECT_EQ(h.heap.stats().major.count, 1u) << "the 8 MB held keep the old generation's threshold wide";
  EXPECT_EQ(h.heap.stats().minor.count, 2u);
  h.roots.slots[held] = nullptr;
  h.collect();  // a major: the threshold is now about twice the 3.2 MB live
  EXPECT_EQ(releasedIds()[1], 1);
  Node* more = nullptr;
  for (int i = 0; i < 110000; ++i) more = h.node(obj(more), i);
  h.root(more);
  ASSERT_TRUE(h.heap.safepointMayGC().isOk());  // a minor promotes it: 6.7 MB old
  EXPECT_EQ(h.heap.stats().minor.count, 3u);
  for (int i = 0; i < 120000; ++i) h.pair();  // past the 3.4 MB nursery
  ASSERT_TRUE(h.heap.safepointMayGC().isOk());
  EXPECT_EQ(h.heap.stats().major.count, 3u) << "released: the threshold is back near twice the live size";
}

TEST(GcHeap, BytesInUseTracksAllocationAndDropsAfterCollection) {
  ToyHeap h;
  size_t before = h.heap.bytesInUse();
  for (int i = 0; i < 10000; ++i) h.pair();
  EXPECT_EQ(h.heap.bytesInUse() - before, 10000 * kPairBytes);
  Pair* keep = h.pair();
  h.root(keep);
  h.collect();
  EXPECT_EQ(h.heap.bytesInUse(), kPairBytes);
  EXPECT_GE(h.heap.stats().bytesAllocatedTotal, 10001 * kPairBytes);
}

TEST(GcHeap, Invariant5_HeapLimitReturnsNullptrAndHeapRecovers) {
  Config config;
  config.heapLimit = 1 << 20;
  ToyHeap h(config);
  size_t n = 0;
  while (h.pair() != nullptr) ++n;
  EXPECT_GT(n, (1u << 20) / kPairBytes - 16);
  EXPECT_LE(h.heap.bytesInUse(), size_t{1} << 20);
  EXPECT_EQ(h.blob("still full"), nullptr);
  EXPECT_EQ(h.m().allocate(kBlob, 200 << 10), nullptr);  // large path respects it too
  h.collect();
  EXPECT_EQ(h.heap.bytesInUse(), 0u);
  Blob* b = h.blob("works again");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(text(b), "works again");
}

TEST(GcHeap, Invariant5_LoweringTheLimitTakesEffectAtOnce) {
  ToyHeap h;
  h.pair();
  h.heap.setHeapLimit(4096);
  size_t n = 0;
  while (h.pair() != nullptr) ++n;
  EXPECT_LE(h.heap.bytesInUse(), 4096u);
  EXPECT_LT(n, 4096 / kPairBytes);
}

TEST(GcHeap, Invariant5_AbsurdRequestsFailWithoutAborting) {
  ToyHeap h;
  EXPECT_EQ(h.m().allocate(kBlob, SIZE_MAX), nullptr);
  EXPECT_EQ(h.m().allocate(kBlob, SIZE_MAX - 3), nullptr);
  EXPECT_EQ(h.m().allocate(kBlob, size_t{1} << 50), nullptr);
  EXPECT_NE(h.pair(), nullptr);
}

TEST(GcHeap, LargeObjectsGetTheirOwnChunkAndSurvive) {
  ToyHeap h;
  std::string big(1 << 20, 'x');
  big[12345] = 'y';
  Blob* b = h.blob(big.c_str());
  ASSERT_NE(b, nullptr);
  Pair* small = h.pair(obj(b));
  size_t r = h.root(small);
  for (int i = 0; i < 3; ++i) h.collect();
  Blob* kept = as<Blob>(h.rooted<Pair>(r)->a);
  EXPECT_EQ(kept, b);  // its chunk joined to-space in place
  EXPECT_EQ(text(kept), big);
  EXPECT_TRUE(h.heap.contains(kept));
  EXPECT_EQ(h.heap.bytesInUse(), kPairBytes + roundObjectSize(sizeof(Blob) + big.size()));
  EXPECT_EQ(h.heap.stats().bytesCopiedTotal, kPairBytes) << "young once, then marked in place";
}

TEST(GcHeap, LargeObjectsKeptInPlaceHaveTheirReferencesUpdated) {
  ToyHeap h;
  const uint32_t n = 4096;  // 64 KiB of slots: a large object
  Weak* w = h.weak(false, false, n);
  for (uint32_t i = 0; i < 2 * n; ++i) w->slots[i] = obj(h.node(nullptr, i));
  size_t r = h.root(w);
  h.pair();  // garbage, so small objects do move
  for (int c = 0; c < 2; ++c) {
    h.collect();
    Weak* kept = h.rooted<Weak>(r);
    ASSERT_EQ(kept, w);
    for (uint32_t i = 0; i < 2 * n; ++i) {
      ASSERT_TRUE(h.heap.contains(kept->slots[i]));
      ASSERT_EQ(as<Node>(kept->slots[i])->value, int64_t(i));
    }
  }
  size_t dead = h.root(h.weak(false, false, n));
  h.collect();
  h.roots.slots[dead] = nullptr;
  h.collect();  // an unreachable kept chunk is returned
  EXPECT_EQ(h.heap.bytesInUse(), roundObjectSize(sizeof(Weak) + 2 * sizeof(Object*) * n) + 2 * n * kNodeBytes);
}

// Counts the large chunks (blocks under a standard chunk's size, and apart those over
// two) a heap maps and unmaps.
struct LargeBlockCounter {
  static void* fn(void* ud, void* ptr, size_t osize, size_t nsize) {
    auto& self = *static_cast<LargeBlockCounter*>(ud);
    if (nsize == 0) {
      self.unmapped += osize < Heap::kChunkSize;
      self.bigUnmapped += osize > 2 * Heap::kChunkSize;
      std::free(ptr);
      return nullptr;
    }
    self.mapped += nsize < Heap::kChunkSize;
    self.bigMapped += nsize > 2 * Heap::kChunkSize;
    return std::malloc(nsize);
  }
  int mapped = 0;
  int unmapped = 0;
  int bigMapped = 0;  // blocks over two standard chunks: big large objects'
  int bigUnmapped = 0;
};

// A toy heap whose chunks come from a LargeBlockCounter.
struct CountedHeap {
  static Config countedBy(LargeBlockCounter& counter) {
    Config config;
    config.chunkSource = {LargeBlockCounter::fn, &counter};
    return config;
  }
  LargeBlockCounter counter;
  ToyHeap h{countedBy(counter)};
};

// A large object bumped into the nursery (the buffer is refilled first, so it fits).
Blob* bigInNursery(ToyHeap& h, size_t bytes) {
  h.pair();
  auto* b = as<Blob>(h.m().allocate(kBlob, sizeof(Blob) + bytes));
  b->length = bytes;
  std::memset(b->bytes, 'z', bytes);
  return b;
}

// A large object a bump buffer had room for lies in the nursery; the minor that first
// reaches it copies it to a large chunk, taken from the pool when one fits. A pooled
// large chunk nothing reuses is unmapped at the sixteenth collection after it was freed
// (gc-v2.md "Free large chunks are pooled"). Mapping one for each copy, with the pool
// emptied at every collection, cost bench/cd.lua a munmap a frame.
TEST(GcHeap, LargeCopiesReusePooledChunksAndIdleOnesAreUnmapped) {
  CountedHeap counted;
  ToyHeap& h = counted.h;
  LargeBlockCounter& counter = counted.counter;
  constexpr size_t kBytes = 40000;
  size_t r = h.root(bigInNursery(h, kBytes));
  EXPECT_EQ(counter.mapped, 0) << "bumped into the nursery";
  h.minor();
  EXPECT_EQ(counter.mapped, 1) << "copied to a large chunk of its own";
  h.roots.slots[r] = nullptr;
  h.major();  // dead: its chunk is pooled
  r = h.root(bigInNursery(h, kBytes));
  h.minor();
  EXPECT_EQ(counter.mapped, 1) << "the copy took the pooled chunk";
  EXPECT_EQ(h.rooted<Blob>(r)->bytes[kBytes - 1], 'z');
  h.roots.slots[r] = nullptr;
  h.major();  // pooled again
  for (int c = 0; c < 15; ++c) h.minor();
  EXPECT_EQ(counter.unmapped, 0) << "kept fifteen collections for reuse";
  h.minor();
  EXPECT_EQ(counter.unmapped, 1) << "unmapped at the sixteenth";
}

// Large chunks are pooled within a budget of their own: a major that frees more
// standard chunks than the pool keeps used to unmap the large ones first, and cd.lua
// mapped and unmapped a voxel map's chunk every few frames.
TEST(GcHeap, AMajorsFreedStandardChunksDoNotPushLargeOnesOutOfThePool) {
  CountedHeap counted;
  ToyHeap& h = counted.h;
  LargeBlockCounter& counter = counted.counter;
  constexpr size_t kBytes = 40000;
  size_t list = h.root(nullptr);
  for (size_t i = 0; i < 8 * Heap::kChunkSize / sizeof(Pair); ++i)
    h.roots.slots[list] = obj(h.pair(h.roots.slots[list]));
  size_t big = h.root(bigInNursery(h, kBytes));
  h.minor();
  h.minor();  // the list and the big object are old (survivor age: the second minor)
  ASSERT_EQ(counter.mapped, 1);
  h.roots.slots[list] = nullptr;
  h.roots.slots[big] = nullptr;
  h.major();  // frees some eight standard chunks and the large one
  EXPECT_EQ(counter.unmapped, 0) << "the large chunk is pooled";
  big = h.root(bigInNursery(h, kBytes));
  h.minor();
  EXPECT_EQ(counter.mapped, 1) << "and reused";
  EXPECT_EQ(h.rooted<Blob>(big)->bytes[kBytes - 1], 'z');
}

// A free large chunk of a standard chunk's size or more is unmapped by the next
// collection unless an allocation took it before: kept sixteen collections as the
// smaller ones are, a round's big strings of bench/gsub.lua stayed resident for nothing
// (gc-v2.md "Free large chunks are pooled").
TEST(GcHeap, BigFreeLargeChunksWaitOneCollectionForReuse) {
  CountedHeap counted;
  ToyHeap& h = counted.h;
  LargeBlockCounter& counter = counted.counter;
  constexpr size_t kBytes = 600 << 10;
  auto big = [&] {
    auto* b = as<Blob>(h.m().allocate(kBlob, sizeof(Blob) + kBytes));
    b->length = kBytes;
    return b;
  };
  big();
  h.minor();  // young and unreached: its chunk is pooled
  size_t r = h.root(big());
  EXPECT_EQ(counter.bigMapped, 1) << "the pooled chunk was taken before the next collection";
  h.minor();
  h.roots.slots[r] = nullptr;
  h.major();  // old and dead: pooled again
  EXPECT_EQ(counter.bigUnmapped, 0);
  h.minor();
  EXPECT_EQ(counter.bigUnmapped, 1) << "not taken: unmapped by the next collection";
}

// Free standard chunks go to bump buffers most resident first and to the collector's
// copies least resident first, so a nursery keeps to the chunks it filled before: taken
// from one end of the pool, a buffer that filled its chunk and one that just began the
// next swapped places at the next minor, and both chunks came to be resident whole
// (bench/format.lua: 370 KB more of peak RSS).
TEST(GcHeap, BumpBuffersTakeTheMostResidentFreeChunk) {
  ToyHeap h;
  std::set<Object*> bufferStarts;
  for (int round = 0; round < 8; ++round) {
    Object* first = obj(h.pair());
    if (round >= 2) bufferStarts.insert(first);
    for (size_t i = 0; i < Heap::kChunkSize / kPairBytes + 100; ++i) h.pair();  // a chunk and a bit of the next
    h.minor();
  }
  EXPECT_EQ(bufferStarts.size(), 1u) << "every round starts in the chunk the last one filled";
}

// Whether every page of [p, p + bytes) is resident (p page-aligned).
bool resident(const char* p, size_t bytes) {
  std::vector<unsigned char> pages((bytes + 4095) / 4096);
  if (mincore(const_cast<char*>(p), bytes, pages.data()) != 0) return false;
  for (unsigned char page : pages)
    if (!(page & 1)) return false;
  return true;
}

// Whether the kernel takes MADV_POPULATE_WRITE (Linux 5.14 and later); an older one
// refuses it, and the collector's pages fault in as they are used.
bool kernelPopulates() {
  void* probe = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe == MAP_FAILED) return false;
  bool populates = madvise(probe, 4096, MADV_POPULATE_WRITE) == 0;
  munmap(probe, 4096);
  return populates;
}

// A bump buffer's chunk is populated ahead of the allocations, as much again as they
// used (16 to 64 KiB), one system call a step where a first write faulted each page in
// (13-16 us a page on the virtual machines CI runs on, 0.9 us populated ahead); a buffer
// that takes a few objects stays a few pages (gc-v2.md "Pages populated ahead").
TEST(GcHeap, BumpBuffersArePopulatedAheadInSteps) {
  if (!kernelPopulates()) GTEST_SKIP() << "a kernel before Linux 5.14 refuses the advice: pages fault in as used";
  ToyHeap h;
  char* base = reinterpret_cast<char*>(h.pair());  // a fresh heap's first chunk
  ASSERT_EQ(reinterpret_cast<uintptr_t>(base) % 4096, 0u);
  EXPECT_TRUE(resident(base, 16 << 10)) << "the first step";
  EXPECT_FALSE(resident(base + (128 << 10), 4096)) << "not the whole chunk";
  size_t before = h.heap.bytesInUse();
  while (reinterpret_cast<char*>(h.pair()) < base + (100 << 10)) {
  }
  EXPECT_TRUE(resident(base + (100 << 10), 28 << 10)) << "ahead of the allocations (to 128 KiB, populated at 64)";
  EXPECT_FALSE(resident(base + (200 << 10), 4096));
  EXPECT_EQ((h.heap.bytesInUse() - before) % kPairBytes, 0u) << "the steps count no bytes";
}

// A new large object of a kind written whole (TypeInfo::writtenWhole: a string's bytes)
// has its chunk populated whole; of another kind (an array part that doubled), its
// first half, the rest faulting in as it is written (gc-v2.md "Pages populated ahead").
TEST(GcHeap, LargeObjectsOfKindsWrittenWholeArePopulatedWhole) {
  if (!kernelPopulates()) GTEST_SKIP() << "a kernel before Linux 5.14 refuses the advice: pages fault in as used";
  ToyHeap h;
  constexpr uint8_t kWholeBlob = 20;  // a kind the toy model leaves free
  h.heap.registerType(kWholeBlob, TypeInfo{.name = "WholeBlob", .sizeOf = sizeOfBlob, .writtenWhole = true});
  constexpr size_t kBytes = 512 << 10;
  constexpr size_t kLastPage = (sizeof(Blob) + kBytes - 1) / 4096 * 4096;
  auto* half = reinterpret_cast<char*>(h.m().allocate(kBlob, sizeof(Blob) + kBytes));
  auto* whole = reinterpret_cast<char*>(h.m().allocate(kWholeBlob, sizeof(Blob) + kBytes));
  ASSERT_TRUE(half && whole);
  as<Blob>(reinterpret_cast<Object*>(half))->length = kBytes;
  as<Blob>(reinterpret_cast<Object*>(whole))->length = kBytes;
  ASSERT_EQ(reinterpret_cast<uintptr_t>(half) % 4096, 0u) << "a chunk of its own";
  EXPECT_TRUE(resident(half, kBytes / 2));
  EXPECT_FALSE(resident(half + kLastPage, 4096)) << "not the second half";
  EXPECT_TRUE(resident(whole, sizeof(Blob) + kBytes)) << "written whole: populated whole";
}

// A large object its only holder dropped gives its pages back at the next stop, not
// before (a racing reader may still read it until then), and asks for that stop itself
// once a MiB is waiting; its head stays as it was.
TEST(GcHeap, ADroppedLargeObjectsPagesGoBackAtTheNextStop) {
  ToyHeap h;
  std::string big(2 << 20, 'x');
  size_t r = h.root(h.blob(big.c_str()));
  h.minor();  // old: a minor would keep it even unreachable
  Blob* b = h.rooted<Blob>(r);
  h.m().discardLarge(obj(b), sizeof(Blob) + big.size());
  EXPECT_EQ(b->bytes[big.size() - 1], 'x') << "kept until the next stop";
  ASSERT_TRUE(h.heap.safepointMayGC(h.m()).isOk()) << "2 MiB dropped asked for a stop";
  ASSERT_EQ(h.rooted<Blob>(r), b) << "large objects do not move";
  EXPECT_EQ(b->length, big.size()) << "the head stays";
  EXPECT_EQ(b->bytes[0], 'x');
  EXPECT_EQ(b->bytes[big.size() / 2], 0);
  EXPECT_EQ(b->bytes[big.size() - 8192], 0);
  h.roots.slots[r] = nullptr;
  h.collect();  // a major frees it as any dead object
  EXPECT_EQ(h.heap.bytesInUse(), 0u);
}

// The VmFlags of the mapping that holds `address`, from /proc/self/smaps ("" if none).
std::string mappingFlags(const void* address) {
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (!f) return "";
  auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  std::string flags;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    unsigned long from = 0, to = 0;
    if (std::sscanf(line, "%lx-%lx ", &from, &to) == 2 && std::strchr(line, '-') < std::strchr(line, ' ')) {
      inside = at >= from && at < to;
    } else if (inside && std::strncmp(line, "VmFlags:", 8) == 0) {
      flags = line + 8;
      break;
    }
  }
  std::fclose(f);
  return flags;
}

// A large object of 2 MiB or more is mapped with transparent huge pages asked for (its
// array is filled from end to end at once: page-by-page faults cost more than the copy);
// a smaller one is not (its last huge page would be resident for little).
TEST(GcHeap, LargeObjectsOfAHugePageOrMoreAskForHugePages) {
  if (std::FILE* thp = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r")) {
    std::fclose(thp);
  } else {
    GTEST_SKIP() << "a kernel without transparent huge pages refuses the advice";
  }
  ToyHeap h;
  std::string big(2 << 20, 'x'), small(1 << 20, 'y');
  Blob* b = h.blob(big.c_str());
  Blob* s = h.blob(small.c_str());
  std::string bigFlags = mappingFlags(b), smallFlags = mappingFlags(s);
  ASSERT_NE(bigFlags, "") << "no mapping holds the object";
  EXPECT_NE(bigFlags.find(" hg"), std::string::npos) << bigFlags;
  EXPECT_EQ(smallFlags.find(" hg"), std::string::npos) << smallFlags;
}

TEST(GcHeap, RelocateStressStillMovesLargeObjects) {
  Config config;
  config.stress = StressMode::kRelocate;
  ToyHeap h(config);
  std::string big(1 << 16, 'z');
  Blob* b = h.blob(big.c_str());
  size_t r = h.root(b);
  h.collect();
  EXPECT_NE(h.rooted<Blob>(r), b);
  EXPECT_EQ(text(h.rooted<Blob>(r)), big);
}

TEST(GcHeap, Invariant4_IdentityHashSurvivesMoves) {
  Config config;
  config.stress = StressMode::kRelocate;  // every major moves every object
  ToyHeap h(config);
  Pair* p = h.pair(obj(h.blob("a")));
  uint32_t hash = p->header.hash;
  uint32_t blobHash = as<Blob>(p->a)->header.hash;
  size_t r = h.root(p);
  for (int i = 0; i < 5; ++i) {
    h.collect();
    EXPECT_NE(h.rooted(r), obj(p));
    EXPECT_EQ(h.rooted(r)->header.hash, hash);
    EXPECT_EQ(h.rooted<Pair>(r)->a->header.hash, blobHash);
    p = h.rooted<Pair>(r);
  }
}

TEST(GcHeap, CyclesAndSharedSubstructureKeepTheirShape) {
  ToyHeap h;
  Blob* shared = h.blob("shared");
  Pair* a = h.pair(obj(shared));
  Pair* b = h.pair(obj(shared), obj(a));
  a->b = obj(b);  // cycle a <-> b
  Pair* self = h.pair();
  self->a = self->b = obj(self);
  size_t ra = h.root(a);
  size_t rs = h.root(self);
  h.collect();
  Pair* na = h.rooted<Pair>(ra);
  Pair* nb = as<Pair>(na->b);
  EXPECT_EQ(as<Pair>(nb->b), na);
  EXPECT_EQ(na->a, nb->a);
  EXPECT_EQ(text(as<Blob>(na->a)), "shared");
  Pair* ns = h.rooted<Pair>(rs);
  EXPECT_EQ(ns->a, obj(ns));
  EXPECT_EQ(ns->b, obj(ns));
}

TEST(GcHeap, MillionNodeListSurvivesWithoutRecursion) {
  ToyHeap h;
  constexpr int64_t kN = 1000000;
  Node* list = nullptr;
  for (int64_t i = 0; i < kN; ++i) list = h.node(obj(list), i);
  size_t r = h.root(list);
  h.collect();
  h.collect();
  int64_t expect = kN - 1;
  for (Node* n = h.rooted<Node>(r); n; n = as<Node>(n->next)) ASSERT_EQ(n->value, expect--);
  EXPECT_EQ(expect, -1);
  EXPECT_EQ(h.heap.bytesInUse(), kN * kNodeBytes);
}

TEST(GcHeap, UnreachableObjectsAreCollectedAndMemoryReturned) {
  ToyHeap h;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 200000; ++i) h.pair(obj(h.blob("garbage")));
    EXPECT_GT(h.heap.bytesInUse(), 200000 * kPairBytes);
    h.collect();
    EXPECT_EQ(h.heap.bytesInUse(), 0u);
  }
  EXPECT_EQ(h.heap.stats().collections, 5u);
  EXPECT_EQ(h.heap.stats().bytesCopiedTotal, 0u);
}

TEST(GcHeap, HandlesKeepObjectsAliveAndAreUpdated) {
  ToyHeap h;
  HandleScope outer(h.heap);
  Handle<Blob> kept(outer, h.blob("kept"));
  Blob* before = kept.get();
  {
    HandleScope inner(h.heap);
    Handle<Pair> temp(inner, h.pair(obj(h.blob("inner"))));
    for (int i = 0; i < 1000; ++i) Handle<Pair> many(inner, h.pair());  // several blocks
    h.collect();
    EXPECT_NE(kept.get(), before);
    EXPECT_EQ(text(as<Blob>(temp->a)), "inner");
  }
  h.collect();
  EXPECT_EQ(text(kept.get()), "kept");
  EXPECT_EQ(h.heap.bytesInUse(), roundObjectSize(sizeof(Blob) + 4));  // inner scope's objects died
  kept.set(nullptr);
  h.collect();
  EXPECT_EQ(h.heap.bytesInUse(), 0u);
}

TEST(GcHeap, PersistentHandlesKeepObjectsAliveUntilDestroyed) {
  ToyHeap h;
  auto* p1 = new PersistentHandle(h.heap, obj(h.blob("one")));
  PersistentHandle p2(h.heap, obj(h.blob("two")));
  h.collect();
  EXPECT_EQ(text(as<Blob>(p1->get())), "one");
  EXPECT_EQ(text(as<Blob>(p2.get())), "two");
  delete p1;
  h.collect();
  EXPECT_EQ(h.heap.bytesInUse(), roundObjectSize(sizeof(Blob) + 3));
  PersistentHandle p3(h.heap, nullptr);  // reuses the freed slot; null is allowed
  h.collect();
  EXPECT_EQ(p3.get(), nullptr);
  p3.set(obj(h.blob("three")));
  h.collect();
  EXPECT_EQ(text(as<Blob>(p3.get())), "three");
  EXPECT_EQ(text(as<Blob>(p2.get())), "two");
}

TEST(GcHeap, SecondMutatorSharesTheHeap) {
  ToyHeap h;
  Mutator worker(h.heap);
  Object* a = worker.allocate(kPair, sizeof(Pair));
  Object* b = h.m().allocate(kPair, sizeof(Pair));
  as<Pair>(a)->a = b;
  size_t r = h.root(a);
  EXPECT_EQ(h.heap.bytesInUse(), 2 * kPairBytes + Heap::kChunkSize - kPairBytes);  // worker's buffer counts whole
  h.collect();
  Object* c = worker.allocate(kPair, sizeof(Pair));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->header.gcBits & kBitEpoch, h.rooted(r)->header.gcBits & kBitEpoch);
  EXPECT_NE(as<Pair>(h.rooted(r))->a, nullptr);
  EXPECT_NE(c->header.hash, 0u);
}

TEST(GcHeap, StatsCountCollectionsCopiesAndPauses) {
  ToyHeap h;
  h.root(h.pair());
  h.collect();
  h.collect();
  const Stats& s = h.heap.stats();
  EXPECT_EQ(s.collections, 2u);
  EXPECT_EQ(s.bytesCopiedTotal, kPairBytes) << "the second major marks the pair in place";
  EXPECT_GT(s.totalPauseNanos, 0u);
  EXPECT_GE(s.totalPauseNanos, s.longestPauseNanos);
  EXPECT_GT(s.longestPauseNanos, 0u);
}

TEST(GcHeap, ContainsOnlyCurrentSpace) {
  ToyHeap h;
  Pair* p = h.pair();
  EXPECT_TRUE(h.heap.contains(p));
  int local = 0;
  EXPECT_FALSE(h.heap.contains(&local));
  size_t r = h.root(p);
  h.collect();
  EXPECT_TRUE(h.heap.contains(h.rooted(r)));
}

}  // namespace
}  // namespace weft::gc::toy
