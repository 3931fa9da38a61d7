// Weak tables and weak roots, following the Lua 5.4 manual §2.5.4.
#include <gtest/gtest.h>

#include "gc/pass.h"
#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

void setEntry(Weak* w, uint32_t i, void* key, void* value) {
  w->slots[2 * i] = obj(key);
  w->slots[2 * i + 1] = obj(value);
}
Object* key(Weak* w, uint32_t i) { return w->slots[2 * i]; }
Object* value(Weak* w, uint32_t i) { return w->slots[2 * i + 1]; }

TEST(GcWeak, WeakValuesDropDeadEntriesAndUpdateLiveOnes) {
  ToyHeap h;
  Weak* w = h.weak(false, true, 3);
  size_t rw = h.root(w);
  setEntry(w, 0, h.blob("k0"), h.blob("dead value"));
  Blob* live = h.blob("live value");
  size_t rl = h.root(live);
  setEntry(w, 1, h.blob("k1"), live);
  h.collect();
  w = h.rooted<Weak>(rw);
  EXPECT_EQ(key(w, 0), nullptr);
  EXPECT_EQ(value(w, 0), nullptr);
  EXPECT_EQ(text(as<Blob>(key(w, 1))), "k1");
  EXPECT_EQ(value(w, 1), h.rooted(rl));
  EXPECT_TRUE(h.heap.verifyHeap().empty()) << h.heap.verifyHeap();
}

TEST(GcWeak, WeakKeysDropEntriesWithDeadKeysAndTheirValues) {
  ToyHeap h;
  Weak* w = h.weak(true, false, 2);
  size_t rw = h.root(w);
  setEntry(w, 0, h.blob("dead key"), h.blob("value of dead key"));
  Blob* k1 = h.blob("live key");
  size_t rk = h.root(k1);
  setEntry(w, 1, k1, h.blob("kept value"));
  h.collect();
  w = h.rooted<Weak>(rw);
  EXPECT_EQ(key(w, 0), nullptr);
  EXPECT_EQ(key(w, 1), h.rooted(rk));
  EXPECT_EQ(text(as<Blob>(value(w, 1))), "kept value");
  size_t expected = roundObjectSize(sizeof(Weak) + 32) + roundObjectSize(sizeof(Blob) + 8) +
                    roundObjectSize(sizeof(Blob) + 10);
  EXPECT_EQ(h.heap.bytesInUse(), expected);  // the dead entry's value was not kept
}

// A value reachable only through an entry whose key is reachable only from another
// entry's value: the ephemeron fixpoint must find it, whatever the entry order.
TEST(GcWeak, EphemeronChainsAreFollowedToTheFixpoint) {
  ToyHeap h;
  Weak* w = h.weak(true, false, 4);
  size_t rw = h.root(w);
  Blob* k1 = h.blob("k1");
  Blob* k2 = h.blob("k2");
  Blob* k3 = h.blob("k3");
  size_t rk1 = h.root(k1);
  setEntry(w, 0, k3, h.blob("end of chain"));
  setEntry(w, 1, k2, k3);
  setEntry(w, 2, k1, k2);
  setEntry(w, 3, h.blob("unreached key"), h.blob("unreached value"));
  h.collect();
  w = h.rooted<Weak>(rw);
  EXPECT_EQ(key(w, 2), h.rooted(rk1));
  EXPECT_EQ(value(w, 2), key(w, 1));
  EXPECT_EQ(value(w, 1), key(w, 0));
  EXPECT_EQ(text(as<Blob>(key(w, 0))), "k3");
  EXPECT_EQ(text(as<Blob>(value(w, 0))), "end of chain");
  EXPECT_EQ(key(w, 3), nullptr);
  EXPECT_TRUE(h.heap.verifyHeap().empty());
}

TEST(GcWeak, EphemeronValueThatRefersToItsOwnKeyDoesNotKeepIt) {
  ToyHeap h;
  Weak* w = h.weak(true, false, 1);
  size_t rw = h.root(w);
  Blob* k = h.blob("self");
  setEntry(w, 0, k, h.pair(obj(k)));
  h.collect();
  EXPECT_EQ(key(h.rooted<Weak>(rw), 0), nullptr);
  EXPECT_EQ(h.heap.bytesInUse(), roundObjectSize(sizeof(Weak) + 16));
}

TEST(GcWeak, FullyWeakTableDropsEntriesWithAnyDeadPart) {
  ToyHeap h;
  Weak* w = h.weak(true, true, 3);
  size_t rw = h.root(w);
  Blob* a = h.blob("a");
  Blob* b = h.blob("b");
  size_t ra = h.root(a);
  size_t rb = h.root(b);
  setEntry(w, 0, a, b);
  setEntry(w, 1, a, h.blob("dead value"));
  setEntry(w, 2, h.blob("dead key"), b);
  h.collect();
  w = h.rooted<Weak>(rw);
  EXPECT_EQ(key(w, 0), h.rooted(ra));
  EXPECT_EQ(value(w, 0), h.rooted(rb));
  EXPECT_EQ(key(w, 1), nullptr);
  EXPECT_EQ(key(w, 2), nullptr);
}

TEST(GcWeak, StrongReferenceElsewhereKeepsWeakValue) {
  ToyHeap h;
  Weak* w = h.weak(false, true, 1);
  size_t rw = h.root(w);
  Blob* v = h.blob("held by a pair");
  h.root(h.pair(obj(v)));
  setEntry(w, 0, h.blob("k"), v);
  h.collect();
  w = h.rooted<Weak>(rw);
  ASSERT_NE(value(w, 0), nullptr);
  EXPECT_EQ(text(as<Blob>(value(w, 0))), "held by a pair");
}

TEST(GcWeak, WeakRootSourceDropsDeadEntriesAndUpdatesLiveOnes) {
  Config config;
  config.stress = StressMode::kRelocate;  // every major moves the live string
  ToyHeap h(config);
  StringTable table;
  h.heap.addWeakRootSource(&table);
  Blob* live = h.blob("live");
  size_t r = h.root(live);
  table.strings = {obj(h.blob("dead")), obj(live), obj(h.blob("dead too"))};
  h.collect();
  ASSERT_EQ(table.strings.size(), 1u);
  EXPECT_EQ(table.strings[0], h.rooted(r));
  h.heap.removeWeakRootSource(&table);
  Object* before = table.strings[0];
  h.collect();
  EXPECT_EQ(table.strings[0], before) << "a removed source is not swept any more";
  EXPECT_NE(h.rooted(r), before);
}

// The negative test of verify's weak-root check: a source that skips its entries at a
// minor (as a string table that forgot a young string would) keeps a reference into
// the freed nursery, which verification after the collection reports.
TEST(GcWeak, StaleWeakRootEntryIsCaughtByVerify) {
  struct Forgetful : WeakRootSource {
    void sweepWeakRoots(Visitor& v) override {
      if (passOf(v) == Pass::kMinor) return;
      for (Object*& s : strings) v.visit(s);
    }
    std::vector<Object*> strings;
  } table;
  ToyHeap h(verifying());
  h.heap.addWeakRootSource(&table);
  table.strings = {obj(h.blob("young and forgotten"))};
  h.root(table.strings[0]);
  Status s = h.heap.collectMayGC(CollectionKind::kMinor);
  EXPECT_EQ(s.code(), StatusCode::kFatal);
  std::string reason = h.heap.failureReason();
  EXPECT_NE(reason.find("verify failed: after collection"), std::string::npos) << reason;
  EXPECT_NE(reason.find("weak root source #0"), std::string::npos) << reason;
  h.heap.removeWeakRootSource(&table);
}

}  // namespace
}  // namespace weft::gc::toy
