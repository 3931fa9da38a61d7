// A toy object model for the collector's unit tests: gc/ knows nothing of vm, so the
// tests register their own kinds.
//   Pair  two references (either may be null)
//   Blob  `length` bytes of data
//   Node  a list cell: next reference and an int64 value
//   Weak  a weak-table-like container: `capacity` key/value slot pairs, weak keys
//         and/or weak values
//   Ext   owns "off-heap memory" (an id); release() counts per id
//   Stack a toy thread: an off-heap stack of references (StackHeap registers it)
// and the helpers the test files share: ToyHeap (the kinds registered, roots, minor and
// major collections), StackHeap, verifying() and a StringTable weak root source.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "gc/heap.h"

namespace weft::gc::toy {

enum Kind : uint8_t { kPair = 1, kBlob = 2, kNode = 3, kWeak = 4, kExt = 5 };

struct Pair {
  ObjectHeader header;
  Object* a;
  Object* b;
};

struct Blob {
  ObjectHeader header;
  uint32_t length;
  uint32_t unused;
  char bytes[];
};

struct Node {
  ObjectHeader header;
  Object* next;
  int64_t value;
};

struct Weak {
  ObjectHeader header;
  uint8_t weakKeys;
  uint8_t weakValues;
  uint16_t unused;
  uint32_t capacity;
  Object* slots[];  // key, value, key, value, ...
};

struct Ext {
  ObjectHeader header;
  uint64_t id;
  uint64_t external;  // off-heap bytes it stands for (Mutator::noteExternalBytes)
};

inline std::map<uint64_t, int>& releasedIds() {
  static std::map<uint64_t, int> released;
  return released;
}

inline Object* obj(void* p) { return static_cast<Object*>(p); }
template <typename T>
T* as(Object* o) {
  return reinterpret_cast<T*>(o);
}

inline void tracePair(Object* o, Visitor& v) {
  Pair* p = as<Pair>(o);
  if (p->a) v.visit(p->a);
  if (p->b) v.visit(p->b);
}

inline void traceNode(Object* o, Visitor& v) {
  Node* n = as<Node>(o);
  if (n->next) v.visit(n->next);
}

inline size_t sizeOfBlob(const Object* o) { return sizeof(Blob) + reinterpret_cast<const Blob*>(o)->length; }
inline size_t sizeOfWeak(const Object* o) {
  return sizeof(Weak) + 2 * sizeof(Object*) * reinterpret_cast<const Weak*>(o)->capacity;
}

inline void traceWeak(Object* o, Visitor& v) {
  Weak* w = as<Weak>(o);
  for (uint32_t i = 0; i < w->capacity; ++i) {
    Object*& key = w->slots[2 * i];
    Object*& value = w->slots[2 * i + 1];
    if (!key) continue;
    if (!w->weakKeys) v.visit(key);
    if (!w->weakValues && value && !w->weakKeys) v.visit(value);
  }
  v.deferWeak(o, w->weakKeys, w->weakValues);
}

inline bool traceEphemeronWeak(Object* o, Visitor& v) {
  Weak* w = as<Weak>(o);
  bool reached = false;
  for (uint32_t i = 0; i < w->capacity; ++i) {
    Object*& key = w->slots[2 * i];
    Object*& value = w->slots[2 * i + 1];
    if (!key || !value || !v.isLive(key)) continue;
    if (!v.isLive(value)) reached = true;
    v.visit(value);
  }
  return reached;
}

inline void clearWeakWeak(Object* o, Visitor& v, int phase) {
  Weak* w = as<Weak>(o);
  for (uint32_t i = 0; i < w->capacity; ++i) {
    Object*& key = w->slots[2 * i];
    Object*& value = w->slots[2 * i + 1];
    if (!key) continue;
    bool dead = (w->weakValues && (phase & kClearValues) && value && !v.isLive(value)) ||
                (w->weakKeys && (phase & kClearKeys) && !v.isLive(key));
    if (dead) {
      key = value = nullptr;
      continue;
    }
    if (w->weakValues && value && (phase & kClearValues)) v.visit(value);
    if (w->weakKeys && (phase & kClearKeys)) v.visit(key);
  }
}

inline size_t releaseExt(Object* o) {
  ++releasedIds()[as<Ext>(o)->id];
  return as<Ext>(o)->external;
}

inline void registerToyKinds(Heap& heap) {
  heap.registerType(kPair, TypeInfo{.name = "Pair", .fixedSize = sizeof(Pair), .trace = tracePair});
  heap.registerType(kBlob, TypeInfo{.name = "Blob", .sizeOf = sizeOfBlob});
  heap.registerType(kNode, TypeInfo{.name = "Node", .sizeOf = [](const Object*) { return sizeof(Node); },
                                    .trace = traceNode});
  heap.registerType(kWeak, TypeInfo{.name = "Weak",
                                    .sizeOf = sizeOfWeak,
                                    .trace = traceWeak,
                                    .clearWeak = clearWeakWeak,
                                    .traceEphemeron = traceEphemeronWeak});
  heap.registerType(kExt, TypeInfo{.name = "Ext", .fixedSize = sizeof(Ext), .release = releaseExt});
}

// Roots the tests control directly.
class TestRoots : public RootSource {
 public:
  void traceRoots(Visitor& v) override {
    for (Object*& slot : slots)
      if (slot) v.visit(slot);
  }
  std::vector<Object*> slots;
};

// A heap with the toy kinds registered and a TestRoots source.
struct ToyHeap {
  explicit ToyHeap(const Config& config = {}) : heap(config) {
    registerToyKinds(heap);
    heap.addRootSource(&roots);
  }
  ~ToyHeap() { heap.removeRootSource(&roots); }

  Mutator& m() { return heap.mainMutator(); }

  Pair* pair(Object* a = nullptr, Object* b = nullptr) {
    Pair* p = as<Pair>(m().allocate(kPair, sizeof(Pair)));
    if (p) {
      p->a = a;
      p->b = b;
    }
    return p;
  }
  Blob* blob(const char* text) {
    size_t n = std::strlen(text);
    Blob* b = as<Blob>(m().allocate(kBlob, sizeof(Blob) + n));
    if (b) {
      b->length = static_cast<uint32_t>(n);
      std::memcpy(b->bytes, text, n);
    }
    return b;
  }
  Node* node(Object* next, int64_t value) {
    Node* n = as<Node>(m().allocate(kNode, sizeof(Node)));
    if (n) {
      n->next = next;
      n->value = value;
    }
    return n;
  }
  Weak* weak(bool weakKeys, bool weakValues, uint32_t capacity) {
    Weak* w = as<Weak>(m().allocate(kWeak, sizeof(Weak) + 2 * sizeof(Object*) * capacity));
    w->weakKeys = weakKeys;
    w->weakValues = weakValues;
    w->capacity = capacity;
    return w;
  }
  // `external`: off-heap bytes it stands for, noted now and returned by its release.
  Ext* ext(uint64_t id, uint64_t external = 0) {
    Ext* e = as<Ext>(m().allocate(kExt, sizeof(Ext)));
    e->id = id;
    e->external = external;
    heap.registerExternal(obj(e));
    m().noteExternalBytes(static_cast<int64_t>(external));
    return e;
  }
  // Roots an object; returns its root index.
  size_t root(void* o) {
    roots.slots.push_back(obj(o));
    return roots.slots.size() - 1;
  }
  template <typename T = Object>
  T* rooted(size_t index) {
    return reinterpret_cast<T*>(roots.slots[index]);
  }
  void collect() {
    Status s = heap.collectMayGC();
    ASSERT_TRUE(s.isOk());
  }
  void minor() {
    Status s = heap.collectMayGC(CollectionKind::kMinor);
    ASSERT_TRUE(s.isOk()) << heap.failureReason();
  }
  void major() {
    Status s = heap.collectMayGC(CollectionKind::kMajor);
    ASSERT_TRUE(s.isOk()) << heap.failureReason();
  }

  Heap heap;
  TestRoots roots;
};

// A toy "thread": a heap object owning an off-heap stack of references, written without
// a barrier per store (as the VM's stacks are: writeBarrierBulk records the holder),
// traced through the object. Its kind is named "thread" as the VM's is, so verify names
// a stack in its messages.
inline constexpr uint8_t kStack = 6;
struct Stack {
  ObjectHeader header;
  std::vector<Object*>* slots;
};
inline int gStackTraces = 0;  // every trace of a stack, by the collector or verify
inline void traceStack(Object* o, Visitor& v) {
  ++gStackTraces;
  for (Object*& slot : *reinterpret_cast<Stack*>(o)->slots)
    if (slot) v.visit(slot);
}

// A ToyHeap with stacks; it owns their off-heap slots.
struct StackHeap : ToyHeap {
  explicit StackHeap(const Config& config = {}) : ToyHeap(config) {
    heap.registerType(kStack, TypeInfo{.name = "thread", .fixedSize = sizeof(Stack), .trace = traceStack});
  }
  Stack* stack() {
    Stack* s = as<Stack>(m().allocate(kStack, sizeof(Stack)));
    stacks.push_back(std::make_unique<std::vector<Object*>>());
    s->slots = stacks.back().get();
    return s;
  }
  std::vector<std::unique_ptr<std::vector<Object*>>> stacks;
};

inline std::string text(const Blob* b) { return std::string(b->bytes, b->length); }

inline Config verifying(StressMode stress = StressMode::kNone) {
  Config config;
  config.verify = true;
  config.stress = stress;
  return config;
}

// A weak root source shaped like the interned-string table: it drops dead entries and
// updates the others.
class StringTable : public WeakRootSource {
 public:
  void sweepWeakRoots(Visitor& v) override {
    std::vector<Object*> kept;
    for (Object* s : strings) {
      if (!v.isLive(s)) continue;
      v.visit(s);
      kept.push_back(s);
    }
    strings = kept;
  }
  std::vector<Object*> strings;
};

}  // namespace weft::gc::toy
