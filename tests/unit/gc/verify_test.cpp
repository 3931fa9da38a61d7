// Verification mode (--gc-verify) and the checking write barrier: the checkers of
// heap.h invariants 2 and 3, and fail-closed collections (DEVELOPERS.md invariant 5).
#include <gtest/gtest.h>

#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

Config verifying() {
  Config config;
  config.verify = true;
  return config;
}

TEST(GcVerify, Invariant2_SoundHeapPassesBeforeAndAfterEveryCollection) {
  ToyHeap h(verifying());
  HandleScope scope(h.heap);
  Weak* w = h.weak(true, true, 2);
  h.root(w);
  Pair* p = h.pair(obj(h.blob("a")), obj(w));
  Handle<Pair> hp(scope, p);
  w->slots[0] = obj(h.blob("k"));
  w->slots[1] = p->a;
  PersistentHandle ph(h.heap, obj(h.ext(1)));
  h.heap.registerFinalizable(obj(h.blob("finalize me")));
  h.blob(std::string(100000, 'l').c_str());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(h.heap.collectMayGC().isOk());
    EXPECT_EQ(h.heap.verifyHeap(), "");
  }
  EXPECT_TRUE(h.heap.hasPendingFinalizers());
}

std::string fatalCollection(ToyHeap& h) {
  testing::internal::CaptureStderr();
  Status s = h.heap.collectMayGC();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(s.code(), StatusCode::kFatal);
  EXPECT_EQ(h.heap.safepointMayGC().code(), StatusCode::kFatal) << "a broken heap stays closed";
  return err;
}

TEST(GcVerify, Invariant2_ReferenceOutsideCurrentSpaceIsFatal) {
  ToyHeap h(verifying());
  Pair* p = h.pair();
  h.root(p);
  static uint64_t notAnObject[4];
  p->a = reinterpret_cast<Object*>(notAnObject);
  std::string err = fatalCollection(h);
  EXPECT_NE(err.find("weft: gc: verify failed: before collection #1: reference outside current space"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("(Pair)"), std::string::npos) << err;
}

TEST(GcVerify, Invariant2_InteriorPointerIsFatal) {
  ToyHeap h(verifying());
  Blob* b = h.blob("0123456789abcdef");
  h.root(h.pair(reinterpret_cast<Object*>(reinterpret_cast<char*>(b) + kObjectAlignment)));
  std::string err = fatalCollection(h);
  EXPECT_NE(err.find("verify failed: before collection #1: reference into the middle of an object"),
            std::string::npos)
      << err;
}

TEST(GcVerify, Invariant2_MisalignedAndNullRootsAreFatal) {
  ToyHeap h(verifying());
  Blob* b = h.blob("x");
  h.root(reinterpret_cast<Object*>(reinterpret_cast<char*>(b) + 3));
  EXPECT_NE(fatalCollection(h).find("misaligned reference"), std::string::npos);

  class NullRoot : public RootSource {
    void traceRoots(Visitor& v) override {
      Object* none = nullptr;
      v.visit(none);
    }
  } nullRoot;
  ToyHeap g(verifying());
  g.heap.addRootSource(&nullRoot);
  EXPECT_NE(g.heap.verifyHeap().find("null reference"), std::string::npos);
  EXPECT_NE(g.heap.verifyHeap().find("root source #1"), std::string::npos);
  g.heap.removeRootSource(&nullRoot);
}

TEST(GcVerify, Invariant2_SizeThatOverrunsItsChunkIsReported) {
  ToyHeap h(verifying());
  Blob* b = h.blob("short");
  h.root(b);
  b->length = 1u << 30;  // sizeOf now disagrees with the allocation
  EXPECT_NE(h.heap.verifyHeap().find("overruns its chunk"), std::string::npos);
}

TEST(GcVerify, Invariant2_StaleReferenceAfterCollectionIsReported) {
  ToyHeap h(verifying());
  Pair* holder = h.pair();
  size_t r = h.root(holder);
  Blob* b = h.blob("soon stale");
  h.collect();  // b was unreachable: its memory is old space now
  h.rooted<Pair>(r)->a = obj(b);
  EXPECT_NE(h.heap.verifyHeap().find("reference outside current space"), std::string::npos);
}

// A weak container whose clearWeak updates its entries but forgets to drop dead ones
// leaves a reference to old space: verify after the collection catches it and the
// collection fails closed.
TEST(GcVerify, Invariant2_DanglingWeakEntryIsCaughtAfterCollection) {
  ToyHeap h(verifying());
  h.heap.registerType(6, TypeInfo{.name = "LazyWeak",
                                  .sizeOf = sizeOfWeak,
                                  .trace = traceWeak,
                                  .clearWeak = [](Object* o, Visitor& v, int) {
                                    if (Object*& value = as<Weak>(o)->slots[1]) v.visit(value);
                                  }});
  Weak* w = as<Weak>(h.m().allocate(6, sizeof(Weak) + 16));
  w->weakValues = true;
  w->capacity = 1;
  w->slots[0] = obj(h.blob("key"));
  w->slots[1] = obj(h.blob("dies"));
  h.root(w);
  std::string err = fatalCollection(h);
  EXPECT_NE(err.find("verify failed: after collection #1: reference outside current space"), std::string::npos)
      << err;
  EXPECT_NE(err.find("(LazyWeak)"), std::string::npos) << err;
}

TEST(GcVerify, Invariant5_UnregisteredKindFailsClosedWithoutVerify) {
  ToyHeap h;
  h.root(h.m().allocate(17, 32));
  std::string err = fatalCollection(h);
  EXPECT_NE(err.find("weft: gc: collection failed: reference to an object of unregistered kind"),
            std::string::npos)
      << err;
}

TEST(GcVerify, Invariant3_WriteBarrierAcceptsCurrentObjects) {
  {
    ToyHeap h(verifying());
    EXPECT_TRUE(gBarrierSlow.load());
    Pair* p = h.pair();
    Blob* b = h.blob("v");
    p->a = obj(b);
    writeBarrier(obj(p), obj(b));
    writeBarrier(obj(p), nullptr);
    size_t r = h.root(p);
    h.collect();
    writeBarrier(h.rooted(r), as<Pair>(h.rooted(r))->a);
  }
  EXPECT_FALSE(gBarrierSlow.load());
}

TEST(GcVerifyDeathTest, Invariant3_WriteBarrierRejectsStaleHolder) {
  EXPECT_EXIT(
      {
        ToyHeap h(verifying());
        Pair* p = h.pair();
        h.root(p);
        h.collect();
        writeBarrier(obj(p), nullptr);  // p is the old copy
        std::exit(0);
      },
      testing::ExitedWithCode(3), "weft: gc: verify failed: write barrier: holder 0x[0-9a-f]+ is not a live object");
}

}  // namespace
}  // namespace weft::gc::toy
