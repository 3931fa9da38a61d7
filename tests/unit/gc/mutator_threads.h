// Helpers for the multi-threaded collector tests: allocation through an explicit
// Mutator, and a thread that owns a registered mutator. Waits use waitUntil
// (tests/unit/wait_until.h).
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "gc/fault.h"
#include "tests/unit/gc/toy_model.h"
#include "tests/unit/wait_until.h"

namespace weft::gc::toy {

using weft::test::waitUntil;

inline Node* newNode(Mutator& m, Object* next, int64_t value) {
  Node* n = as<Node>(m.allocate(kNode, sizeof(Node)));
  n->next = next;
  n->value = value;
  return n;
}

inline Blob* newBlob(Mutator& m, const std::string& text) {
  Blob* b = as<Blob>(m.allocate(kBlob, sizeof(Blob) + text.size()));
  b->length = static_cast<uint32_t>(text.size());
  std::memcpy(b->bytes, text.data(), text.size());
  return b;
}

using Clock = std::chrono::steady_clock;

inline int64_t millisSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// A registered mutator, unregistered (detached first if need be) when it goes away.
struct WorkerMutator {
  explicit WorkerMutator(Heap& heap) : heap(heap) {
    auto made = heap.registerMutator();
    EXPECT_TRUE(made.hasValue());
    m = made.hasValue() ? made.value() : nullptr;
  }
  ~WorkerMutator() {
    if (!m) return;
    if (m->attached()) heap.detach(*m);
    heap.unregisterMutator(m);
  }
  Heap& heap;
  Mutator* m;
};

// Sets a fault spec for one test and clears it afterwards.
struct FaultSpec {
  explicit FaultSpec(std::string_view spec) { fault::configure(spec); }
  ~FaultSpec() { fault::configure(""); }
};

}  // namespace weft::gc::toy
