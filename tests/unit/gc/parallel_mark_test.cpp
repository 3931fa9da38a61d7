// Parallel majors (gc-v2.md "Parallel majors", heap.h invariant 14): mutators parked in
// a major's stop help mark and sweep, and the heap they leave is the one a single
// marker and sweeper leaves.
// Run under ThreadSanitizer by tools/tsan.sh.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "tests/unit/gc/mutator_threads.h"

namespace weft::gc::toy {
namespace {

constexpr int kHelpers = 3;
constexpr int kTreeDepth = 12;     // 8,191 pairs a tree
constexpr int kFixedNodes = 4000;  // of each list of non-moving nodes
constexpr std::chrono::milliseconds kRunTimeout{120000};

// A full binary tree of pairs whose leaves are numbered blobs.
Object* buildTree(Mutator& m, int depth, int& next) {
  if (depth == 0) return obj(newBlob(m, std::to_string(next++)));
  HandleScope scope(m);
  Handle<Object> left(scope, buildTree(m, depth - 1, next));
  Object* right = buildTree(m, depth - 1, next);
  Pair* p = as<Pair>(m.allocate(kPair, sizeof(Pair)));
  p->a = left.get();
  p->b = right;
  return obj(p);
}

// Two lists of non-moving nodes whose cells interleave, values from `count` - 1 down:
// the even ones (returned) and the odd ones (left unrooted, to die).
Object* buildFixedLists(Mutator& m, int count) {
  Object* kept = nullptr;
  Object* dropped = nullptr;
  for (int i = 0; i < count; ++i) {
    Node* n = as<Node>(m.allocateNonMoving(kNode, sizeof(Node)));
    n->next = i % 2 ? dropped : kept;
    n->value = i;
    (i % 2 ? dropped : kept) = obj(n);
  }
  return kept;
}

// The nodes of `list` count down by `step` to `last`.
void checkList(Object* list, int64_t first, int64_t step, int64_t last) {
  int64_t expect = first;
  for (Object* o = list; o; o = as<Node>(o)->next, expect -= step) ASSERT_EQ(as<Node>(o)->value, expect);
  EXPECT_EQ(expect, last - step);
}

// A weak root source in parts, as the string table's shards: the parts are swept at
// once by the requester and the helpers.
struct PartedTable : WeakRootSource {
  static constexpr size_t kParts = 16;
  void sweepWeakRoots(Visitor& v) override {
    for (size_t part = 0; part < kParts; ++part) sweepWeakRootPart(part, kParts, v);
  }
  size_t weakRootParts() const override { return kParts; }
  void sweepWeakRootPart(size_t part, size_t /*parts*/, Visitor& v) override {
    std::vector<Object*> kept;
    for (Object* entry : parts[part]) {
      if (!v.isLive(entry)) continue;
      v.visit(entry);
      kept.push_back(entry);
    }
    parts[part] = std::move(kept);
  }
  std::vector<Object*> parts[kParts];
};

// The leaves of a tree built from `first`, in order, or -1 if one is wrong.
int64_t checkTree(Object* o, int depth, int64_t first) {
  if (depth == 0) return text(as<Blob>(o)) == std::to_string(first) ? first + 1 : -1;
  int64_t mid = checkTree(as<Pair>(o)->a, depth - 1, first);
  return mid < 0 ? -1 : checkTree(as<Pair>(o)->b, depth - 1, mid);
}

// The test thread owns the heap's main mutator and requests the majors; each helper
// thread roots a tree of its own, the shared list and a weak table, then polls until
// told to stop, so it is parked in every stop and may help mark.
struct Scene {
  explicit Scene(Config config) : h(config) {}

  void helper(int id) {
    WorkerMutator worker(h.heap);
    Mutator& m = *worker.m;
    ASSERT_TRUE(h.heap.attach(m).isOk());
    TestRoots roots;
    int next = id * 100000;
    roots.slots.push_back(buildTree(m, kTreeDepth, next));
    // Every helper's roots reach the shared list and big blob: markers race to claim them.
    // Attached, so no collection moves them between this read and the rooting.
    roots.slots.push_back(h.roots.slots[0]);
    roots.slots.push_back(h.roots.slots[1]);
    Weak* w = as<Weak>(m.allocate(kWeak, sizeof(Weak) + 2 * sizeof(Object*) * 2));
    w->weakKeys = 0;
    w->weakValues = 1;
    w->capacity = 2;
    roots.slots.push_back(obj(w));
    roots.slots.push_back(obj(newBlob(m, "kept")));
    as<Weak>(roots.slots[3])->slots[0] = roots.slots[4];  // key and value alive
    as<Weak>(roots.slots[3])->slots[1] = roots.slots[4];
    as<Weak>(roots.slots[3])->slots[2] = roots.slots[4];  // value dead: cleared
    as<Weak>(roots.slots[3])->slots[3] = obj(newBlob(m, "dropped"));
    h.heap.addRootSource(&roots);
    ready.fetch_add(1);
    while (!done.load() && h.heap.safepointMayGC(m).isOk()) std::this_thread::yield();
    Weak* after = as<Weak>(roots.slots[3]);
    EXPECT_EQ(checkTree(roots.slots[0], kTreeDepth, id * 100000), id * 100000 + (1 << kTreeDepth)) << id;
    EXPECT_EQ(roots.slots[1], h.roots.slots[0]) << "every root of the shared list was updated alike";
    EXPECT_EQ(roots.slots[2], h.roots.slots[1]);
    EXPECT_EQ(after->slots[1], roots.slots[4]);
    EXPECT_EQ(after->slots[3], nullptr) << "a weak value only a helper's table held";
    h.heap.removeRootSource(&roots);
  }

  // `majors` majors with the helpers parked in each; the last ones sweep non-moving
  // cells that died among live ones, and the free lists they rebuilt serve new ones.
  // The weak table holds the shared list's nodes and as many dead ones.
  void run(int majors) {
    Object* list = nullptr;
    for (int i = 0; i < 2000; ++i) {
      list = obj(newNode(h.m(), list, i));
      weak.parts[i % PartedTable::kParts].push_back(list);
      weak.parts[(i + 1) % PartedTable::kParts].push_back(obj(newNode(h.m(), nullptr, -i)));
    }
    h.heap.addWeakRootSource(&weak);
    h.roots.slots = {list, obj(newBlob(h.m(), std::string(Heap::kLargeObjectSize, 'b'))),
                     buildFixedLists(h.m(), 2 * kFixedNodes)};
    std::vector<std::thread> threads;
    for (int i = 0; i < kHelpers; ++i) threads.emplace_back([this, i] { helper(i + 1); });
    EXPECT_TRUE(waitUntil(
        [&] {
          EXPECT_TRUE(h.heap.safepointMayGC(h.m()).isOk());
          return ready.load() == kHelpers;
        },
        "the helpers to build their trees", kRunTimeout));
    for (int i = 0; i < majors; ++i) h.major();
    h.roots.slots.push_back(buildFixedLists(h.m(), 2 * kFixedNodes));
    h.major();
    // Detached while the helpers finish: under stress their polls still collect.
    h.heap.detach(h.m());
    done.store(true);
    for (std::thread& t : threads) t.join();
    ASSERT_TRUE(h.heap.attach(h.m()).isOk());
    int64_t expect = 1999;
    for (Object* o = h.roots.slots[0]; o; o = as<Node>(o)->next, --expect) ASSERT_EQ(as<Node>(o)->value, expect);
    EXPECT_EQ(expect, -1);
    checkList(h.roots.slots[2], 2 * kFixedNodes - 2, 2, 0);
    checkList(h.roots.slots[3], 2 * kFixedNodes - 2, 2, 0);
    std::set<Object*> nodes;
    for (Object* o = h.roots.slots[0]; o; o = as<Node>(o)->next) nodes.insert(o);
    size_t entries = 0;
    for (const std::vector<Object*>& part : weak.parts) {
      for (Object* entry : part) EXPECT_EQ(nodes.count(entry), 1u) << "a weak entry names a live node's copy";
      entries += part.size();
    }
    EXPECT_EQ(entries, nodes.size()) << "the dead entries went, the live ones stayed";
    h.heap.removeWeakRootSource(&weak);
    EXPECT_EQ(h.heap.failureReason(), "");
  }

  // Its roots (the shared list and big blob) are written by the test thread's
  // collections and read by helpers while attached or after `done`.
  ToyHeap h;
  PartedTable weak;  // swept only with the world stopped
  std::atomic<int> ready{0};
  std::atomic<bool> done{false};
};

Config parallelConfig(StressMode stress) {
  Config config = verifying(stress);
  config.safepointDeadlineMs = 60000;
  return config;
}

TEST(GcParallelMark, Invariant14_HelpersMarkAndTheHeapStaysWhole) {
  Scene scene(parallelConfig(StressMode::kNone));
  scene.run(20);
  Stats stats = scene.h.heap.stats();
  EXPECT_EQ(stats.major.count, 21u);
  EXPECT_GT(stats.majorMarkersTotal, stats.major.count) << "parked mutators helped some majors";
  EXPECT_GT(stats.majorChunksHelpersSweptTotal, 0u) << "parked mutators swept some chunks";
}

// Relocate stress copies every object at every major: markers race to copy the same
// ones, and the losers give their copies back.
TEST(GcParallelMark, Invariant14_RacingCopiesUnderRelocateStress) {
  Scene scene(parallelConfig(StressMode::kRelocate));
  scene.run(12);
  EXPECT_GT(scene.h.heap.stats().majorMarkersTotal, scene.h.heap.stats().major.count);
}

TEST(GcParallelMark, Invariant14_OffMeansOneMarker) {
  Config config = parallelConfig(StressMode::kNone);
  config.parallelMajors = false;
  Scene scene(config);
  scene.run(5);
  EXPECT_EQ(scene.h.heap.stats().majorMarkersTotal, scene.h.heap.stats().major.count);
  EXPECT_EQ(scene.h.heap.stats().majorChunksHelpersSweptTotal, 0u);
}

// A marker failing fails the collection closed, whoever it is.
TEST(GcParallelMark, Invariant9_MarkerFailureFailsClosed) {
  ToyHeap h(parallelConfig(StressMode::kNone));
  h.root(h.pair(obj(h.blob("x"))));
  FaultSpec fault("gc.marker");
  Status s = h.heap.collectMayGC(CollectionKind::kMajor);
  EXPECT_EQ(s.code(), StatusCode::kFatal);
  EXPECT_NE(h.heap.failureReason().find("gc.marker"), std::string::npos) << h.heap.failureReason();
}

}  // namespace
}  // namespace weft::gc::toy
