// The chunk index (docs/design/gc-v2.md "Minor and major collections"; gc/heap.h
// invariant 2): chunks join and leave current space at every collection, and the index
// that contains() and the collector's chunk lookups use is kept as they do, never
// rebuilt. Many minors and majors, plain and under relocate stress, map, pool, reuse
// and unmap nursery, promotion, large, cell and pinned chunks; after each collection
// every live object is found in the heap and every large object that died is not, and
// --gc-verify checks the index against the chunk lists at every collection (negative
// test: fault site gc.index-drop).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gc/fault.h"
#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

struct IndexHeap : ToyHeap {
  using ToyHeap::ToyHeap;
  Blob* sized(size_t length, bool nonMoving) {
    size_t bytes = sizeof(Blob) + length;
    Blob* b = as<Blob>(nonMoving ? m().allocateNonMoving(kBlob, bytes) : m().allocate(kBlob, bytes));
    if (b) b->length = static_cast<uint32_t>(length);
    return b;
  }
  uint32_t next() {  // a fixed sequence, so a failure reproduces
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
  }
  uint32_t seed = 12345;
};

void churnChunks(StressMode stress) {
  IndexHeap h(verifying(stress));
  std::vector<size_t> live;      // root slots of the objects kept (pinned ones apart)
  std::vector<Object*> gone;     // large objects whose chunk the next collection frees
  std::vector<Object*> oldGone;  // old large objects dropped: freed by the next major
  std::vector<size_t> pinned;
  for (int round = 0; round < 60; ++round) {
    for (int i = 0; i < 3000; ++i) {
      Pair* p = h.pair();
      ASSERT_NE(p, nullptr);
      if (h.next() % 4 == 0) live.push_back(h.root(p));
    }
    for (int i = 0; i < 3; ++i) {
      bool nonMoving = i == 2 && round % 2;
      // Bigger than a nursery chunk, so never bumped into one: a chunk of its own.
      Blob* b = h.sized(Heap::kChunkSize + h.next() % Heap::kChunkSize, nonMoving);
      ASSERT_NE(b, nullptr);
      if (h.next() % 2)
        live.push_back(h.root(b));
      else
        gone.push_back(obj(b));
    }
    for (int i = 0; i < 50; ++i) {
      Blob* b = h.sized(h.next() % 1500, true);
      ASSERT_NE(b, nullptr);
      if (h.next() % 3 == 0) live.push_back(h.root(b));
    }
    if (round % 7 == 0) {  // a pinned young object keeps its nursery chunk
      size_t slot = h.root(h.pair());
      h.heap.pin(h.rooted(slot));
      pinned.push_back(slot);
    }
    if (round % 7 == 3 && !pinned.empty()) {
      h.heap.unpin(h.rooted(pinned.front()));
      pinned.erase(pinned.begin());
    }
    std::vector<size_t> kept;
    for (size_t slot : live) {
      if (h.next() % 5) {
        kept.push_back(slot);
        continue;
      }
      Object* o = h.rooted(slot);
      if (o->header.kind == kBlob && sizeOfBlob(o) > Heap::kChunkSize)
        (o->header.gcBits & kBitOld ? oldGone : gone).push_back(o);
      h.roots.slots[slot] = nullptr;
    }
    live = kept;
    bool major = round % 3 == 2 || stress == StressMode::kRelocate;
    if (major)
      h.major();
    else
      h.minor();
    if (::testing::Test::HasFatalFailure()) return;
    if (major) {
      gone.insert(gone.end(), oldGone.begin(), oldGone.end());
      oldGone.clear();
    }
    for (Object* o : gone) ASSERT_FALSE(h.heap.contains(o)) << "round " << round << ": a freed large chunk " << o;
    gone.clear();
    for (size_t slot : live) ASSERT_TRUE(h.heap.contains(h.rooted(slot))) << "round " << round;
    for (size_t slot : pinned) ASSERT_TRUE(h.heap.contains(h.rooted(slot))) << "round " << round;
  }
  for (size_t slot : pinned) h.heap.unpin(h.rooted(slot));
}

TEST(GcChunkIndex, LookupsFollowChunksAcrossMinorsAndMajors) { churnChunks(StressMode::kNone); }

TEST(GcChunkIndex, LookupsFollowChunksUnderRelocateStress) { churnChunks(StressMode::kRelocate); }

TEST(GcChunkIndex, ChunkLeftOutOfTheIndexIsCaughtByVerify) {
  IndexHeap h(verifying());
  for (int i = 0; i < 100; ++i) h.root(h.pair());
  fault::configure("gc.index-drop:1");
  Status s = h.heap.collectMayGC(CollectionKind::kMinor);
  fault::configure("");
  EXPECT_EQ(s.code(), StatusCode::kFatal);
  std::string reason = h.heap.failureReason();
  EXPECT_NE(reason.find("is not in the chunk index"), std::string::npos) << reason;
}

}  // namespace
}  // namespace weft::gc::toy
