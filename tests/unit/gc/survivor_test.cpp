// Survivor age (docs/design/gc-v2.md "Survivor age"; heap.h invariants 3 and 10): a
// minor keeps what only a running stack or a handle reaches young once, promotes it at
// its second survival, promotes at once what a parked stack or a root source holds, and
// carries the old objects that then refer to a survivor; verify's check of those, with
// its negative test.
#include <gtest/gtest.h>

#include <string>

#include "gc/fault.h"
#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

bool isOld(const void* p) { return static_cast<const Object*>(p)->header.gcBits & kBitOld; }
bool isSurvivor(const void* p) {
  uint8_t bits = static_cast<const Object*>(p)->header.gcBits;
  return !(bits & kBitOld) && (bits & kBitSurvivor);
}
bool isRemembered(const void* p) { return static_cast<const Object*>(p)->header.gcBits & kBitRemembered; }

// A verifying heap with an old stack (rooted) that runs on the main mutator and holds
// one young blob, pushed after the minor that promoted the stack.
struct Running {
  StackHeap h;
  Stack* s = nullptr;
  explicit Running(const char* held, const Config& config = verifying()) : h(config) {
    size_t i = h.root(h.stack());
    h.minor();
    s = h.rooted<Stack>(i);
    h.m().noteRunning(obj(s));
    push(h.blob(held));
  }
  void push(void* value) {
    writeBarrierBulk(obj(s));
    s->slots->push_back(obj(value));
  }
  Object* held(size_t slot = 0) const { return (*s->slots)[slot]; }
  uint64_t promoted() const { return h.heap.stats().bytesPromotedTotal; }
};

TEST(GcSurvivor, ARunningStacksReferentStaysYoungOnceThenIsPromoted) {
  Running run("temp");
  uint64_t promotedBefore = run.promoted();  // the stack's
  Object* first = run.held();
  run.h.minor();
  Object* survivor = run.held();
  EXPECT_NE(survivor, first) << "copied within the nursery";
  EXPECT_TRUE(isSurvivor(survivor));
  EXPECT_EQ(text(as<Blob>(survivor)), "temp");
  EXPECT_TRUE(isRemembered(run.s)) << "the stack refers to a survivor: carried to the next minor";
  EXPECT_EQ(run.promoted(), promotedBefore) << "nothing promoted";
  run.h.minor();
  EXPECT_TRUE(isOld(run.held()));
  EXPECT_EQ(text(as<Blob>(run.held())), "temp");
  EXPECT_FALSE(isRemembered(run.s));
  EXPECT_GT(run.promoted(), promotedBefore);
}

TEST(GcSurvivor, ASurvivorThatDiesIsNeverPromoted) {
  Running run("short-lived");
  uint64_t promotedBefore = run.promoted();
  run.h.minor();
  size_t survived = run.h.heap.bytesInUse();
  (*run.s->slots)[0] = nullptr;
  run.h.minor();
  EXPECT_LT(run.h.heap.bytesInUse(), survived) << "the survivor died young";
  EXPECT_EQ(run.promoted(), promotedBefore);
}

// Invariant 10: a stack that ran and stopped is not traced by the next minor, so what it
// holds is promoted at once, as without survivor age.
TEST(GcSurvivor, AParkedStacksReferentIsPromotedAtOnce) {
  Running run("parked");
  run.h.m().noteRunning(nullptr);
  run.h.minor();
  EXPECT_TRUE(isOld(run.held()));
  EXPECT_FALSE(isRemembered(run.s));
}

TEST(GcSurvivor, ARootSourcesReferentIsPromotedAtOnce) {
  StackHeap h(verifying());
  size_t i = h.root(h.blob("rooted"));
  h.minor();
  EXPECT_TRUE(isOld(h.rooted(i)));
}

TEST(GcSurvivor, AHandlesReferentStaysYoungOnce) {
  StackHeap h(verifying());
  HandleScope scope(h.m());
  Handle<Object> handle(scope, obj(h.blob("held")));
  h.minor();
  EXPECT_TRUE(isSurvivor(handle.get()));
  h.minor();
  EXPECT_TRUE(isOld(handle.get()));
  EXPECT_EQ(text(as<Blob>(handle.get())), "held");
}

// A survivor promoted at its second minor that refers to an object young still (aged in
// the same minor through another path) is carried: recorded as a barrier records a
// holder, so the next minor traces it and promotes its referent.
TEST(GcSurvivor, APromotedSurvivorReferringToASurvivorIsCarried) {
  Running run("unused");
  (*run.s->slots)[0] = obj(run.h.pair());
  run.h.minor();
  Pair* older = as<Pair>(run.held());
  ASSERT_TRUE(isSurvivor(older));
  Blob* young = run.h.blob("young");
  older->a = obj(young);                                    // a young holder: no barrier record needed
  run.s->slots->insert(run.s->slots->begin(), obj(young));  // reached first: aged before `older` is traced
  run.h.minor();
  auto* promoted = as<Pair>(run.held(1));
  ASSERT_TRUE(isOld(promoted));
  EXPECT_TRUE(isSurvivor(promoted->a));
  EXPECT_EQ(promoted->a, run.held(0));
  EXPECT_TRUE(isRemembered(promoted)) << "carried";
  run.h.minor();
  EXPECT_TRUE(isOld(promoted->a));
  EXPECT_EQ(text(as<Blob>(promoted->a)), "young");
  EXPECT_FALSE(isRemembered(promoted));
}

TEST(GcSurvivor, ACarryDropIsCaughtByVerify) {
  Running run("forgotten");
  fault::configure("gc.carry-drop:1");
  Status s = run.h.heap.collectMayGC(CollectionKind::kMinor);
  fault::configure("");
  EXPECT_EQ(s.code(), StatusCode::kFatal);
  EXPECT_NE(run.h.heap.failureReason().find("a clean stack holds a young reference"), std::string::npos)
      << run.h.heap.failureReason();
}

TEST(GcSurvivor, AMajorPromotesEverySurvivor) {
  Running run("to promote");
  run.h.minor();
  ASSERT_TRUE(isSurvivor(run.held()));
  run.h.major();
  EXPECT_TRUE(isOld(run.held()));
  EXPECT_FALSE(isRemembered(run.s));
}

TEST(GcSurvivor, OffEverySurvivorIsPromoted) {
  Config config = verifying();
  config.survivorAge = false;
  Running run("at once", config);
  run.h.minor();
  EXPECT_TRUE(isOld(run.held()));
}

}  // namespace
}  // namespace weft::gc::toy
