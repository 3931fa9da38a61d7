// Pinning and non-moving objects (docs/design/gc-v2.md "Pinning and non-moving
// objects"; gc/heap.h): non-moving objects stay where they were allocated in minors and
// majors, relocate stress included, and their cells are reclaimed when they die; pinned
// objects are roots that stay in place, young or old, while their count is above zero;
// --gc-verify reports a pin the collector forgot (gc.pin-drop) and references to freed
// cells.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gc/fault.h"
#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

bool isOld(const void* p) { return static_cast<const Object*>(p)->header.gcBits & kBitOld; }

struct PinHeap : ToyHeap {
  using ToyHeap::ToyHeap;
  Blob* fixedBlob(const char* text) { return fixedBlob(text, std::strlen(text)); }
  Blob* fixedBlob(const char* text, size_t length) {
    Blob* b = as<Blob>(m().allocateNonMoving(kBlob, sizeof(Blob) + length));
    if (b) {
      b->length = static_cast<uint32_t>(length);
      std::memcpy(b->bytes, text, std::min(length, std::strlen(text)));
    }
    return b;
  }
  Pair* fixedPair(Object* a = nullptr, Object* b = nullptr) {
    Pair* p = as<Pair>(m().allocateNonMoving(kPair, sizeof(Pair)));
    p->a = a;
    p->b = b;
    return p;
  }
  std::string failedMinor() {
    Status s = heap.collectMayGC(CollectionKind::kMinor);
    EXPECT_EQ(s.code(), StatusCode::kFatal);
    return heap.failureReason();
  }
};

TEST(GcPin, NonMovingObjectStaysInPlaceUnderRelocateStress) {
  PinHeap h(verifying(StressMode::kRelocate));
  Blob* b = h.fixedBlob("payload");
  ASSERT_NE(b, nullptr);
  size_t i = h.root(h.pair(obj(b)));
  for (int round = 0; round < 3; ++round) {
    Object* holder = h.rooted(i);
    h.collect();
    EXPECT_NE(h.rooted(i), holder) << "relocate stress moves the movable holder";
    EXPECT_EQ(h.rooted<Pair>(i)->a, obj(b));
    EXPECT_EQ(text(b), "payload");
    EXPECT_TRUE(isOld(b));
  }
}

TEST(GcPin, YoungNonMovingObjectIsPromotedInPlaceAndTraced) {
  PinHeap h(verifying());
  Pair* p = h.fixedPair(obj(h.blob("young referent")));
  EXPECT_FALSE(isOld(p));
  size_t i = h.root(p);
  h.minor();
  EXPECT_EQ(h.rooted(i), obj(p));
  EXPECT_TRUE(isOld(p));
  ASSERT_TRUE(isOld(p->a)) << "its referent was reached through it and promoted";
  EXPECT_EQ(text(as<Blob>(p->a)), "young referent");
  // Old now: a young store into it goes through the barrier and the remembered set.
  Blob* young = h.blob("stored later");
  writeBarrier(obj(p), obj(young));
  p->b = obj(young);
  h.minor();
  ASSERT_TRUE(isOld(p->b));
  EXPECT_EQ(text(as<Blob>(p->b)), "stored later");
  h.major();
  EXPECT_EQ(h.rooted(i), obj(p));
  EXPECT_EQ(text(as<Blob>(p->b)), "stored later");
}

TEST(GcPin, DeadNonMovingCellsAreReclaimedByMinorsAndMajors) {
  PinHeap h(verifying());
  size_t base = h.heap.bytesInUse();
  std::vector<Object*> first;
  for (int k = 0; k < 100; ++k) first.push_back(obj(h.fixedBlob("garbage")));
  EXPECT_EQ(h.heap.bytesInUse() - base, 100 * roundObjectSize(sizeof(Blob) + 7)) << "counted exactly";
  h.minor();
  EXPECT_EQ(h.heap.bytesInUse(), base) << "a minor frees young non-moving garbage";
  // The freed cells are reused (first the cells of the last batch it did not use).
  std::vector<Object*> second;
  for (int k = 0; k < 100; ++k) second.push_back(obj(h.fixedBlob("garbage")));
  std::sort(first.begin(), first.end());
  size_t reused = 0;
  for (Object* o : second) reused += std::binary_search(first.begin(), first.end(), o);
  EXPECT_GE(reused, 50u);
  // Old ones wait for a major.
  size_t i = h.root(h.fixedPair());
  h.minor();
  size_t kept = h.heap.bytesInUse();
  EXPECT_EQ(kept - base, roundObjectSize(sizeof(Pair)));
  h.roots.slots[i] = nullptr;
  h.minor();
  EXPECT_EQ(h.heap.bytesInUse(), kept) << "old garbage stays until a major";
  h.major();
  EXPECT_EQ(h.heap.bytesInUse(), base);
}

TEST(GcPin, ExternalsOfNonMovingObjectsAreReleasedOnce) {
  PinHeap h(verifying());
  auto ext = [&](uint64_t id) {
    Ext* e = as<Ext>(h.m().allocateNonMoving(kExt, sizeof(Ext)));
    e->id = id;
    h.heap.registerExternal(obj(e));
    return e;
  };
  ext(9201);
  size_t i = h.root(ext(9202));
  h.minor();
  EXPECT_EQ(releasedIds()[9201], 1) << "a young one dies in a minor";
  EXPECT_EQ(releasedIds()[9202], 0);
  h.roots.slots[i] = nullptr;
  h.minor();
  EXPECT_EQ(releasedIds()[9202], 0);
  h.major();
  EXPECT_EQ(releasedIds()[9202], 1) << "an old one in a major";
  h.major();
  EXPECT_EQ(releasedIds()[9202], 1);
}

TEST(GcPin, BigNonMovingObjectsStayInPlace) {
  PinHeap h(verifying(StressMode::kRelocate));
  std::string big(5000, 'x');
  Blob* b = h.fixedBlob(big.c_str());
  size_t i = h.root(b);
  h.collect();
  h.collect();
  EXPECT_EQ(h.rooted(i), obj(b));
  EXPECT_EQ(text(b), big);
}

TEST(GcPin, NonMovingAllocationRespectsTheLimit) {
  Config config;
  config.heapLimit = 1u << 20;
  PinHeap h(config);
  size_t n = 0;
  while (h.fixedBlob("x", 1000)) ++n;
  EXPECT_GT(n, 500u);
  EXPECT_LE(h.heap.bytesInUse(), config.heapLimit);
}

TEST(GcPin, WeakEntriesOfDeadNonMovingObjectsAreCleared) {
  PinHeap h(verifying());
  size_t w = h.root(h.weak(false, true, 2));
  Blob* kept = h.fixedBlob("kept");
  h.root(kept);
  Weak* table = h.rooted<Weak>(w);
  table->slots[0] = obj(h.blob("k1"));
  table->slots[1] = obj(h.fixedBlob("dies"));
  table->slots[2] = obj(h.blob("k2"));
  table->slots[3] = obj(kept);
  h.minor();
  table = h.rooted<Weak>(w);
  EXPECT_EQ(table->slots[1], nullptr);
  EXPECT_EQ(table->slots[3], obj(kept));
}

// A pinned young object keeps its nursery chunk: the chunk becomes old as it is, its
// neighbours moved out (or died) and left fillers behind.
TEST(GcPin, PinnedYoungObjectStaysAcrossMinorsAndMajors) {
  PinHeap h(verifying());
  size_t before = h.root(h.blob("neighbour before"));
  Blob* pinned = h.blob("pinned");
  h.blob("dead neighbour");
  size_t after = h.root(h.blob("neighbour after"));
  h.heap.pin(obj(pinned));
  Object* neighbour = h.rooted(before);
  h.minor();
  EXPECT_TRUE(isOld(pinned));
  EXPECT_EQ(text(pinned), "pinned");
  EXPECT_NE(h.rooted(before), neighbour) << "only the pinned object stays";
  EXPECT_EQ(text(h.rooted<Blob>(before)), "neighbour before");
  EXPECT_EQ(text(h.rooted<Blob>(after)), "neighbour after");
  h.minor();
  h.major();
  h.major();
  EXPECT_EQ(text(pinned), "pinned");
  EXPECT_EQ(h.heap.pinCount(obj(pinned)), 1u);
  h.heap.unpin(obj(pinned));
  EXPECT_EQ(h.heap.pinCount(obj(pinned)), 0u);
  h.major();
}

TEST(GcPin, PinnedObjectsStayUnderRelocateStress) {
  PinHeap h(verifying(StressMode::kRelocate));
  Blob* young = h.blob("young");
  h.heap.pin(obj(young));
  size_t i = h.root(h.blob("old"));
  h.collect();
  Blob* old = h.rooted<Blob>(i);
  h.heap.pin(obj(old));
  std::string big(40000, 'y');
  Blob* large = h.blob(big.c_str());
  h.heap.pin(obj(large));
  for (int k = 0; k < 3; ++k) h.collect();
  EXPECT_EQ(h.rooted<Blob>(i), old);
  EXPECT_EQ(text(young), "young");
  EXPECT_EQ(text(old), "old");
  EXPECT_EQ(text(large), big);
  h.heap.unpin(obj(old));
  h.collect();
  EXPECT_NE(h.rooted<Blob>(i), old) << "unpinned, it moves again";
  EXPECT_EQ(text(h.rooted<Blob>(i)), "old");
  h.heap.unpin(obj(young));
  h.heap.unpin(obj(large));
  h.collect();
}

TEST(GcPin, PinnedObjectIsARootUntilUnpinned) {
  PinHeap h(verifying());
  Ext* e = as<Ext>(h.m().allocate(kExt, sizeof(Ext)));
  e->id = 9101;
  h.heap.registerExternal(obj(e));
  h.heap.pin(obj(e));
  h.heap.pin(obj(e));
  EXPECT_EQ(h.heap.pinCount(obj(e)), 2u);
  h.minor();
  h.major();
  EXPECT_EQ(releasedIds()[9101], 0);
  h.heap.unpin(obj(e));
  h.major();
  EXPECT_EQ(releasedIds()[9101], 0) << "one pin is left";
  h.heap.unpin(obj(e));
  h.major();
  EXPECT_EQ(releasedIds()[9101], 1) << "released once its pins are gone";
}

// The negative test: the collector forgets a pin (fault site gc.pin-drop), the object
// moves, and verification reports the pinned address that no longer holds an object.
TEST(GcPin, PinDropIsCaught) {
  PinHeap h(verifying());
  Blob* pinned = h.blob("pinned");
  h.root(pinned);
  h.heap.pin(obj(pinned));
  fault::configure("gc.pin-drop:1");
  std::string reason = h.failedMinor();
  fault::configure("");
  EXPECT_NE(reason.find("pinned object (moved or freed while pinned)"), std::string::npos) << reason;
}

TEST(GcPin, ReferenceToAFreedCellIsCaught) {
  PinHeap h(verifying());
  Blob* dead = h.fixedBlob("dead");
  size_t i = h.root(h.pair());
  h.minor();
  h.rooted<Pair>(i)->a = obj(dead);  // a stale pointer to the freed cell
  std::string fault = h.heap.verifyHeap();
  EXPECT_NE(fault.find("reference to a freed object"), std::string::npos) << fault;
  h.rooted<Pair>(i)->a = nullptr;
}

}  // namespace
}  // namespace weft::gc::toy
