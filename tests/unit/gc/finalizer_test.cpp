// Finalizable objects (Lua 5.4 manual §2.5.3) and released external memory; minors look
// only at the registrations made since the last collection (heap.h invariant 13).
#include <gtest/gtest.h>

#include "gc/fault.h"
#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

std::vector<std::string> drainPending(Heap& heap) {
  std::vector<std::string> names;
  while (Object* o = heap.takePendingFinalizer()) names.push_back(text(as<Blob>(o)));
  return names;
}

TEST(GcFinalizer, UnreachableObjectsAreQueuedOnceInReverseRegistrationOrder) {
  ToyHeap h;
  for (const char* name : {"A", "B", "C"}) h.heap.registerFinalizable(obj(h.blob(name)));
  h.root(h.blob("reachable"));
  h.heap.registerFinalizable(h.rooted(0));
  EXPECT_FALSE(h.heap.hasPendingFinalizers());
  h.collect();
  EXPECT_TRUE(h.heap.hasPendingFinalizers());
  EXPECT_EQ(drainPending(h.heap), (std::vector<std::string>{"C", "B", "A"}));
  EXPECT_FALSE(h.heap.hasPendingFinalizers());
  h.collect();  // finalized objects are no longer registered: they die for good
  EXPECT_FALSE(h.heap.hasPendingFinalizers());
  EXPECT_EQ(h.heap.bytesInUse(), roundObjectSize(sizeof(Blob) + 9));
}

TEST(GcFinalizer, ResurrectedObjectsKeepWhatTheyReference) {
  ToyHeap h;
  Pair* p = h.pair(obj(h.blob("child")), obj(h.pair(obj(h.blob("grandchild")))));
  h.heap.registerFinalizable(obj(p));
  h.collect();
  Object* f = h.heap.takePendingFinalizer();
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f, obj(p));
  EXPECT_EQ(text(as<Blob>(as<Pair>(f)->a)), "child");
  EXPECT_EQ(text(as<Blob>(as<Pair>(as<Pair>(f)->b)->a)), "grandchild");
}

// §2.5.4: resurrected objects leave weak values before their finalizers run, and leave
// weak keys only at the next collection.
TEST(GcFinalizer, WeakValuesClearedBeforeFinalizerWeakKeysOnlyNextCollection) {
  ToyHeap h;
  Blob* f = h.blob("finalized");
  h.heap.registerFinalizable(obj(f));
  Weak* values = h.weak(false, true, 1);
  Weak* keys = h.weak(true, false, 1);
  size_t rv = h.root(values);
  size_t rk = h.root(keys);
  values->slots[0] = obj(h.blob("k"));
  values->slots[1] = obj(f);
  keys->slots[0] = obj(f);
  keys->slots[1] = obj(h.blob("value of a resurrected key"));
  h.collect();
  Object* queued = h.heap.takePendingFinalizer();
  ASSERT_NE(queued, nullptr);
  EXPECT_EQ(h.rooted<Weak>(rv)->slots[0], nullptr);
  EXPECT_EQ(h.rooted<Weak>(rv)->slots[1], nullptr);
  EXPECT_EQ(h.rooted<Weak>(rk)->slots[0], queued);
  EXPECT_EQ(text(as<Blob>(h.rooted<Weak>(rk)->slots[1])), "value of a resurrected key");
  EXPECT_TRUE(h.heap.verifyHeap().empty());
  queued = nullptr;  // the finalizer ran and dropped it
  h.collect();
  EXPECT_EQ(h.rooted<Weak>(rk)->slots[0], nullptr);
}

TEST(GcFinalizer, ReachableObjectStaysRegisteredAcrossMoves) {
  ToyHeap h;
  Blob* f = h.blob("later");
  uint32_t hash = f->header.hash;
  h.heap.registerFinalizable(obj(f));
  size_t r = h.root(f);
  h.collect();
  h.collect();
  EXPECT_FALSE(h.heap.hasPendingFinalizers());
  h.roots.slots[r] = nullptr;
  h.collect();
  Object* queued = h.heap.takePendingFinalizer();
  ASSERT_NE(queued, nullptr);
  EXPECT_EQ(queued->header.hash, hash);
  EXPECT_EQ(text(as<Blob>(queued)), "later");
}

TEST(GcFinalizer, PendingQueueIsARoot) {
  ToyHeap h;
  h.heap.registerFinalizable(obj(h.pair(obj(h.blob("kept by the queue")))));
  h.collect();
  h.collect();
  h.collect();
  Object* f = h.heap.takePendingFinalizer();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(text(as<Blob>(as<Pair>(f)->a)), "kept by the queue");
  EXPECT_EQ(h.heap.takePendingFinalizer(), nullptr);
}

TEST(GcFinalizer, RegisteringAgainRunsTheFinalizerAgainButDuplicatesDoNot) {
  ToyHeap h;
  Blob* b = h.blob("phoenix");
  h.heap.registerFinalizable(obj(b));
  h.heap.registerFinalizable(obj(b));  // a second __gc assignment: still once
  h.collect();
  EXPECT_EQ(drainPending(h.heap), std::vector<std::string>{"phoenix"});
  h.collect();
  EXPECT_FALSE(h.heap.hasPendingFinalizers());

  Blob* c = h.blob("again");
  h.heap.registerFinalizable(obj(c));
  h.collect();
  Object* f = h.heap.takePendingFinalizer();
  ASSERT_NE(f, nullptr);
  h.heap.registerFinalizable(f);  // the finalizer re-registered it
  h.collect();
  EXPECT_EQ(drainPending(h.heap), std::vector<std::string>{"again"});
}

TEST(GcFinalizer, QueueAllFinalizersQueuesEveryRegisteredObject) {
  ToyHeap h;
  h.root(h.blob("first"));
  h.heap.registerFinalizable(h.rooted(0));
  h.heap.registerFinalizable(obj(h.blob("second")));
  h.root(h.blob("third"));
  h.heap.registerFinalizable(h.rooted(1));
  h.heap.queueAllFinalizers();
  h.collect();  // the queue keeps them all
  EXPECT_EQ(drainPending(h.heap), (std::vector<std::string>{"third", "second", "first"}));
  h.heap.queueAllFinalizers();
  EXPECT_FALSE(h.heap.hasPendingFinalizers());
}

bool isOld(const Object* o) { return o->header.gcBits & kBitOld; }

// A minor finds dead only objects registered since the last collection (young ones, and
// old ones registered since, which it keeps); a major finds the old ones too, and the
// queue keeps reverse registration order across both lists.
TEST(GcFinalizer, MinorsFinalizeNewRegistrationsMajorsOldOnesInReverseRegistrationOrder) {
  ToyHeap h(verifying());
  size_t ra = h.root(h.blob("A"));
  h.heap.registerFinalizable(h.rooted(ra));
  size_t rb = h.root(h.blob("B"));
  h.heap.registerFinalizable(h.rooted(rb));
  h.heap.registerFinalizable(obj(h.blob("C")));
  h.minor();
  EXPECT_TRUE(isOld(h.rooted(ra)));
  EXPECT_EQ(drainPending(h.heap), std::vector<std::string>{"C"});
  size_t rd = h.root(h.blob("D"));
  h.minor();
  ASSERT_TRUE(isOld(h.rooted(rd)));
  h.heap.registerFinalizable(h.rooted(rd));  // an old object's new registration
  h.heap.registerFinalizable(obj(h.blob("E")));
  h.roots.slots[ra] = h.roots.slots[rb] = h.roots.slots[rd] = nullptr;
  h.minor();  // A, B and D are old: only a major finds them dead
  EXPECT_EQ(drainPending(h.heap), std::vector<std::string>{"E"});
  h.minor();
  EXPECT_FALSE(h.heap.hasPendingFinalizers());
  h.heap.registerFinalizable(obj(h.blob("F")));
  h.major();
  EXPECT_EQ(drainPending(h.heap), (std::vector<std::string>{"F", "D", "B", "A"}));
  h.major();
  EXPECT_FALSE(h.heap.hasPendingFinalizers());
  EXPECT_EQ(h.heap.bytesInUse(), 0u);
}

// A minor resurrects a dead young object with everything it references (promoted with
// it); registered again by its finalizer, it is an old registration from the next
// collection on, which minors leave alone and a major queues again, once.
TEST(GcFinalizer, MinorResurrectsYoungObjectsAndMajorsFinalizeThemAgain) {
  ToyHeap h(verifying());
  h.heap.registerFinalizable(obj(h.pair(obj(h.blob("child")), obj(h.pair(obj(h.blob("grandchild")))))));
  h.minor();
  size_t r = h.root(h.heap.takePendingFinalizer());
  ASSERT_NE(h.rooted(r), nullptr);
  EXPECT_FALSE(h.heap.hasPendingFinalizers());
  EXPECT_TRUE(isOld(h.rooted(r)));
  EXPECT_EQ(text(as<Blob>(h.rooted<Pair>(r)->a)), "child");
  EXPECT_EQ(text(as<Blob>(as<Pair>(h.rooted<Pair>(r)->b)->a)), "grandchild");
  h.heap.registerFinalizable(h.rooted(r));  // the finalizer registered it again
  h.minor();
  h.roots.slots[r] = nullptr;
  h.minor();
  h.minor();
  EXPECT_FALSE(h.heap.hasPendingFinalizers());
  h.major();
  Object* again = h.heap.takePendingFinalizer();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(text(as<Blob>(as<Pair>(again)->a)), "child");
  EXPECT_EQ(h.heap.takePendingFinalizer(), nullptr);
  again = nullptr;
  h.major();
  EXPECT_FALSE(h.heap.hasPendingFinalizers());
  EXPECT_EQ(h.heap.bytesInUse(), 0u);
}

// The negative test of invariant 13: a registration filed with the old ones (fault site
// gc.finalizable-misfile) would be missed by minors; verification reports it before the
// next collection, which fails closed.
TEST(GcFinalizer, MisfiledRegistrationIsCaughtByVerify) {
  ToyHeap h(verifying());
  h.root(h.blob("kept"));
  h.minor();
  fault::configure("gc.finalizable-misfile:1");
  h.heap.registerFinalizable(obj(h.blob("young")));
  fault::configure("");
  std::string fault = h.heap.verifyHeap();
  EXPECT_NE(fault.find("young object"), std::string::npos) << fault;
  EXPECT_NE(fault.find("old list"), std::string::npos) << fault;
  EXPECT_EQ(h.heap.collectMayGC(CollectionKind::kMinor).code(), StatusCode::kFatal);
  EXPECT_NE(h.heap.failureReason().find("verify failed: before collection"), std::string::npos)
      << h.heap.failureReason();
}

TEST(GcFinalizer, ReleaseIsCalledExactlyOnceForDeadExternals) {
  releasedIds().clear();
  ToyHeap h;
  size_t r = h.root(h.ext(1));
  h.ext(2);
  Ext* three = h.ext(3);
  h.heap.registerExternal(obj(three));  // duplicate registration: still one release
  h.collect();
  EXPECT_EQ(releasedIds(), (std::map<uint64_t, int>{{2, 1}, {3, 1}}));
  h.collect();
  EXPECT_EQ(releasedIds().size(), 2u);
  EXPECT_EQ(h.rooted<Ext>(r)->id, 1u);
  h.roots.slots[r] = nullptr;
  h.collect();
  EXPECT_EQ(releasedIds(), (std::map<uint64_t, int>{{1, 1}, {2, 1}, {3, 1}}));
}

TEST(GcFinalizer, ResurrectedExternalIsReleasedOnlyWhenItFinallyDies) {
  releasedIds().clear();
  ToyHeap h;
  h.heap.registerFinalizable(obj(h.ext(7)));
  h.collect();
  EXPECT_TRUE(releasedIds().empty());
  Object* f = h.heap.takePendingFinalizer();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(as<Ext>(f)->id, 7u);
  h.collect();
  EXPECT_EQ(releasedIds(), (std::map<uint64_t, int>{{7, 1}}));
}

TEST(GcFinalizer, HeapDestructionReleasesSurvivingExternals) {
  releasedIds().clear();
  {
    ToyHeap h;
    h.root(h.ext(11));
    h.ext(12);
    h.collect();
    EXPECT_EQ(releasedIds(), (std::map<uint64_t, int>{{12, 1}}));
  }
  EXPECT_EQ(releasedIds(), (std::map<uint64_t, int>{{11, 1}, {12, 1}}));
}

}  // namespace
}  // namespace weft::gc::toy
