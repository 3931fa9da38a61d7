// Pinning and non-moving objects (docs/design/gc-v2.md "Pinning and non-moving
// objects"; gc/heap.h): non-moving objects stay where they were allocated in minors and
// majors, relocate stress included; pinned objects are roots while their count is above
// zero.
#include <gtest/gtest.h>

#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

Config relocating() {
  Config config;
  config.verify = true;
  config.stress = StressMode::kRelocate;
  return config;
}

Blob* nonMovingBlob(ToyHeap& h, const char* text) {
  size_t n = std::strlen(text);
  Blob* b = as<Blob>(h.m().allocateNonMoving(kBlob, sizeof(Blob) + n));
  if (b) {
    b->length = static_cast<uint32_t>(n);
    std::memcpy(b->bytes, text, n);
  }
  return b;
}

TEST(GcPin, NonMovingObjectStaysInPlaceUnderRelocateStress) {
  ToyHeap h(relocating());
  Blob* b = nonMovingBlob(h, "payload");
  ASSERT_NE(b, nullptr);
  size_t i = h.root(h.pair(obj(b)));
  for (int round = 0; round < 3; ++round) {
    h.collect();
    EXPECT_EQ(h.rooted<Pair>(i)->a, obj(b));
    EXPECT_EQ(text(b), "payload");
    EXPECT_TRUE(obj(b)->header.gcBits & kBitOld);
  }
}

TEST(GcPin, PinnedObjectIsARootUntilUnpinned) {
  ToyHeap h(relocating());
  Ext* e = as<Ext>(h.m().allocateNonMoving(kExt, sizeof(Ext)));
  e->id = 9101;
  h.heap.registerExternal(obj(e));
  h.heap.pin(obj(e));
  h.heap.pin(obj(e));
  EXPECT_EQ(h.heap.pinCount(obj(e)), 2u);
  h.collect();
  EXPECT_EQ(releasedIds()[9101], 0);
  h.heap.unpin(obj(e));
  h.collect();
  EXPECT_EQ(releasedIds()[9101], 0) << "one pin is left";
  h.heap.unpin(obj(e));
  h.collect();
  EXPECT_EQ(releasedIds()[9101], 1) << "released once its pins are gone";
}

}  // namespace
}  // namespace weft::gc::toy
