// Randomized soak: a mutating object graph checked against a shadow model across
// seeded stress collections in relocate and verify modes (heap.h invariants 1, 2, 4).
#include <gtest/gtest.h>

#include <random>

#include "tests/unit/gc/toy_model.h"

namespace weft::gc::toy {
namespace {

struct Shadow {
  int64_t id;
  uint32_t hash;
  int next;  // index into the shadow table, -1 for none
};

void checkChain(Object* o, const std::vector<Shadow>& shadow, int s) {
  for (int depth = 0; depth < 16 && (o || s >= 0); ++depth) {
    ASSERT_TRUE(o && s >= 0) << "chain length differs from the model";
    ASSERT_EQ(as<Node>(o)->value, shadow[s].id);
    ASSERT_EQ(o->header.hash, shadow[s].hash);
    o = as<Node>(o)->next;
    s = shadow[s].next;
  }
}

void soak(StressMode mode, uint64_t seed) {
  Config config;
  config.stress = mode;
  config.verify = true;
  config.interval = 5;
  config.seed = seed;
  ToyHeap h(config);
  constexpr int kRoots = 64;
  h.roots.slots.assign(kRoots, nullptr);
  std::vector<int> rootShadow(kRoots, -1);
  std::vector<Shadow> shadow;
  std::mt19937_64 rng(seed);
  for (int step = 0; step < 20000; ++step) {
    int i = static_cast<int>(rng() % kRoots);
    int j = static_cast<int>(rng() % kRoots);
    switch (rng() % 4) {
      case 0: {  // new node pointing at another root's object
        Node* n = h.node(h.roots.slots[j], static_cast<int64_t>(shadow.size()));
        shadow.push_back({n->value, n->header.hash, rootShadow[j]});
        h.roots.slots[i] = obj(n);
        rootShadow[i] = static_cast<int>(shadow.size()) - 1;
        break;
      }
      case 1:  // link: roots[i].next = roots[j] (through the barrier)
        if (Object* o = h.roots.slots[i]) {
          as<Node>(o)->next = h.roots.slots[j];
          writeBarrier(o, h.roots.slots[j]);
          shadow[rootShadow[i]].next = rootShadow[j];
        }
        break;
      case 2:  // advance: roots[i] = roots[i].next
        if (Object* o = h.roots.slots[i]) {
          h.roots.slots[i] = as<Node>(o)->next;
          rootShadow[i] = shadow[rootShadow[i]].next;
        }
        break;
      default:
        ASSERT_TRUE(h.heap.safepointMayGC().isOk());
        break;
    }
  }
  for (int i = 0; i < kRoots; ++i) checkChain(h.roots.slots[i], shadow, rootShadow[i]);
  EXPECT_GT(h.heap.stats().collections, 500u);
}

TEST(GcSoak, Invariant2_RandomGraphUnderRelocateAndVerify) { soak(StressMode::kRelocate, 1); }
TEST(GcSoak, Invariant4_RandomGraphUnderSeededStressAndVerify) { soak(StressMode::kCollect, 99); }

}  // namespace
}  // namespace weft::gc::toy
