// Lua tables: array part + hash part (see table.h for the invariants).
//
// Layout policy:
//  - The array part holds keys 1..arraySize in a ValueArray whose capacity may exceed
//    arraySize; slots at or beyond arraySize are always nil. Appending key arraySize+1
//    extends arraySize in place, doubling the buffer when full, so `t[#t+1] = v` is
//    amortised O(1) without a rehash.
//  - The hash part is open addressing with linear probing, capacity a power of 2 and at
//    most 3/4 full counting dead keys (nodeCount). A probe starts at tableHomeSlot:
//    hash & mask, except for integer keys (intHome). A nil key is a free slot and ends a
//    probe; a key with a nil value is dead and stays until the next rehash (invariant 3)
//    unless a later insertion with the same home reuses its slot.
//  - Robin Hood order: along a run of full slots, keys sit in order of their home slot,
//    so a probe may stop at the first key nearer its home than the probe is to its own
//    (probeHash, findIntNode). An insertion moves the keys after its place one slot on,
//    which is allowed only where no other task reads: a part not yet published, or no
//    tasks at all. A shared writer instead puts the key at the end of its run and marks
//    the part unordered (NodeArray::unordered), whose probes then scan to a free slot;
//    the next rebuild orders the part again (docs/design/values.md). A collectable key
//    (string, table...) also makes its part unordered: its home needs a read of the
//    object, which ordering would do for every key an insertion passes.
//  - When an insertion finds no room, rehash counts the integer keys like Lua 5.4 does
//    (the largest power of 2, n, such that more than n/2 of the keys 1..n are present
//    becomes the array size) and rebuilds both parts, dropping dead keys.
//  - Both parts are owned by their table (kPartOwnedByTable): every store into them
//    uses the table as the write-barrier holder, and the table's trace visits their
//    contents (gctypes.cpp).
//  - Racing tasks (table.h invariant 6): a new part is filled completely, then
//    published with a release store of its pointer (publishPart); a reader acquires the
//    pointer once and bounds every index by that part's capacity. Old parts stay
//    alive until the next collection, which runs only with every task stopped, so a
//    reader or an unclaimed writer holding one touches valid memory. Slots move between
//    parts with loadSlot/storeValue, so a value stored concurrently is copied whole or
//    not at all.
//  - Shared writers (table.h invariant 7, WriterClaim below): structural changes wait
//    for the table's claim; a store into an existing slot checks the claim's sequence
//    word after the store and stores again through the claim if a rebuild may have
//    copied the slot before the store reached it. A rebuild makes every placement before
//    it writes anything another task sees, so when racing writers revived more keys
//    than it counted it can start again with more room instead of dropping one.
// Nothing here collects: allocation failure leaves the table unchanged and reports
// kMemoryError.
#include "vm/table.h"

#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

#include "gc/fault.h"
#include "vm/heavy_barrier.h"
#include "vm/number.h"
#include "vm/state.h"
#include "vm/string.h"

namespace weft::vm {

uint8_t* arrayCardOf(Table* t, const Value* field) {
  // Acquire, as readers do: another task may publish a new part meanwhile; a slot of a
  // part already replaced is no slot of this one (the new part is young, traced whole).
  ValueArray* a = std::atomic_ref<ValueArray*>(t->array).load(std::memory_order_acquire);
  if (!a || a->capacity < kCardMinSlots) return nullptr;
  // The negative test of verify's card check: the holder is still remembered, but the
  // card stays clean, as if the store had not marked it.
  if (gc::fault::hit("gc.card-drop")) [[unlikely]] return nullptr;
  // Below the data the difference wraps to a huge index.
  size_t index = (reinterpret_cast<uintptr_t>(field) - reinterpret_cast<uintptr_t>(a->data)) / sizeof(Value);
  if (index >= a->capacity) return nullptr;
  return valueArrayCards(a) + index / kCardSlots;
}

void tableRememberYoung(Table* t, const Value* field) {
  gc::rememberYoungValue(asGc(t), gc::loadGcBits(asGc(t)), [t, field] { return arrayCardOf(t, field); });
}

namespace {

constexpr uint32_t kMaxArrayCapacity = 1u << 30;
constexpr uint32_t kMaxNodeCapacity = 1u << 30;
constexpr int kMaxArrayBits = 30;

const char kDeadKeyAnchor = 0;

constexpr bool isPrime(uint32_t v) {
  if (v < 2) return false;
  for (uint32_t d = 2; d * d <= v; ++d) {
    if (v % d == 0) return false;
  }
  return true;
}

// kIntModulus[b]: the largest prime below 2^b (1 if none), for a hash part of 2^b nodes.
// One entry per possible ctz of a uint32_t, so no capacity can index past the end.
constexpr auto kIntModulus = [] {
  std::array<uint32_t, 32> moduli{};
  for (int b = 0; b < 32; ++b) {
    uint32_t v = (1u << b) - 1;
    while (v > 1 && !isPrime(v)) --v;
    moduli[b] = v ? v : 1;
  }
  return moduli;
}();

// kIntReciprocal[b] = floor(2^64 / kIntModulus[b]), for the modulo in intHome. No
// modulus divides 2^64 (1 and odd primes only), so dividing 2^64 - 1 gives the same.
constexpr auto kIntReciprocal = [] {
  std::array<uint64_t, 32> reciprocals{};
  for (int b = 0; b < 32; ++b) reciprocals[b] = ~uint64_t(0) / kIntModulus[b];
  return reciprocals;
}();

}  // namespace

const uint32_t* tableIntModuli() { return kIntModulus.data(); }
const uint64_t* tableIntReciprocals() { return kIntReciprocal.data(); }

namespace {

// Home slot of an integer key: (key mod p) * kTableIntSpread mod capacity, p prime. Keys in
// an arithmetic progression get distinct residues (unless the stride is a multiple of
// p) and land a constant stride apart, so they neither collide nor scatter.
// The remainder comes from a multiply by the reciprocal (a division costs up to 45 cycles
// on a 64-bit key, at every probe start and every distance test): the quotient estimate
// k * floor(2^64/p) / 2^64 falls short of floor(k/p) by at most one, so one subtraction
// corrects it.
inline uint32_t intHome(int64_t key, uint32_t capacity) {
  int bits = __builtin_ctz(capacity);
  uint64_t p = kIntModulus[bits];
  uint64_t k = uint64_t(key);
  uint64_t q = uint64_t((unsigned __int128)k * kIntReciprocal[bits] >> 64);
  uint64_t r = k - q * p;
  if (r >= p) r -= p;
  return (uint32_t(r) * kTableIntSpread) & (capacity - 1);
}

inline uint32_t mixBits(uint64_t x) {
  x ^= x >> 32;
  x *= 0x9e3779b97f4a7c15ull;
  return uint32_t(x >> 32) ^ uint32_t(x >> 7);
}

inline uint32_t mixIdentity(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  return h;
}

// Keys a hash part takes before a rehash: three quarters, but all of a small part's,
// whose probes are short anyway. A constructor's hint is Lua's rounded-up count (a
// power of two: 4 for {name=, size=, kind=}), which three quarters doubled: a three-field
// record took 8 nodes, 341 bytes against lua5.4's 173.
inline uint32_t maxLoad(uint32_t capacity) { return capacity <= 8 ? capacity : capacity - capacity / 4; }

uint32_t nodeCapacityFor(uint64_t count) {
  if (count == 0) return 0;
  uint32_t cap = 1;
  while (maxLoad(cap) < count) {
    if (cap >= kMaxNodeCapacity) return 0;
    cap <<= 1;
  }
  return cap;
}

inline bool keyEquals(const Value& stored, const Value& key) {
  if (stored.tag != key.tag) return false;
  switch (key.tag) {
    case Tag::False:
    case Tag::True:
      return true;
    case Tag::String:
      return stringEquals(stored.asString(), key.asString());
    default:
      return stored.u.i == key.u.i;
  }
}

// The node holding `key` (live or dead), or nullptr.
Node* findNode(const NodeArray* na, const Value& key) {
  if (!na) return nullptr;
  uint32_t mask = na->capacity - 1;
  uint32_t i = tableHomeSlot(key, na->capacity);
  for (uint32_t n = 0; n <= mask; ++n, i = (i + 1) & mask) {
    const Node& node = na->nodes[i];
    // One load: keyEquals dereferences a string key, so it must not be torn.
    Value stored = loadSlot(node.key);
    if (stored.tag == Tag::Nil) return nullptr;
    if (keyEquals(stored, key)) return const_cast<Node*>(&node);
  }
  return nullptr;
}

inline bool isDeadKeyMarker(const Value& k) {
  return k.tag == Tag::LightUserdata && k.u.p == static_cast<const void*>(&kDeadKeyAnchor);
}

// Whether the part's keys are in Robin Hood order (file comment). Relaxed: a part only
// turns unordered before a key is placed out of order, and a reader that loads the old
// flag can only miss a key inserted concurrently, which its race allows anyway.
inline bool partOrdered(const NodeArray* na) { return __atomic_load_n(&na->unordered, __ATOMIC_RELAXED) == 0; }

// Relaxed, as partOrdered explains. Only a writer holding the claim (or the only task)
// calls this, before it places the key that breaks the order.
inline void markUnordered(NodeArray* na) { __atomic_store_n(&na->unordered, 1, __ATOMIC_RELAXED); }

// How many slots `i` lies past the home slot of `key`.
inline uint32_t homeDistance(const Value& key, uint32_t i, uint32_t capacity) {
  uint32_t home = key.isInt() ? intHome(key.u.i, capacity) : tableHomeSlot(key, capacity);
  return (i - home) & (capacity - 1);
}

// Compares the key's fields separately, as tableShortStrSlot does: a torn key is never
// dereferenced, only compared. In an ordered part a miss ends at the first integer key
// nearer its home than the probe is to ours: the key cannot lie beyond it. Only integer
// keys are tested (a multiply each; none at the home slot itself).
//
// The home slot and the next are examined together without branching on what they
// hold: most lookups end there, and a branch on a key that is still being fetched from
// memory mispredicts whenever hits and misses (or misses ending at either slot) mix,
// which discards the caller's next lookup already under way and serialises the cache
// misses (a miss on a large table then costs a whole memory latency).
// The probe past the first two slots: out of line, so that the lookups that end there
// (most) save no registers for its loop.
[[gnu::noinline]] Node* findIntNodeBeyond(const NodeArray* na, int64_t key, uint32_t home) {
  uint32_t capacity = na->capacity, mask = capacity - 1;
  bool ordered = partOrdered(na);
  uint32_t i = (home + 1) & mask;
  // The second key sits at its own home: in order, ours would have come before it.
  const Node& second = na->nodes[i];
  if (ordered && second.key.tag == Tag::Int && intHome(second.key.u.i, capacity) == i) return nullptr;
  i = (i + 1) & mask;
  for (uint32_t n = 2; n <= mask; ++n, i = (i + 1) & mask) {
    const Node& node = na->nodes[i];
    if (node.key.tag == Tag::Int) {
      int64_t other = node.key.u.i;
      if (other == key) return const_cast<Node*>(&node);
      if (ordered && ((i - intHome(other, capacity)) & mask) < n) return nullptr;
    } else if (node.key.tag == Tag::Nil) {
      return nullptr;
    }
  }
  return nullptr;
}

inline Node* findIntNode(const NodeArray* na, int64_t key) {
  if (!na) return nullptr;
  uint32_t capacity = na->capacity, mask = capacity - 1;
  uint32_t i = intHome(key, capacity);
  const Node* first = &na->nodes[i];
  const Node* second = &na->nodes[(i + 1) & mask];
  Tag tag0 = first->key.tag, tag1 = second->key.tag;
  int64_t key0 = first->key.u.i, key1 = second->key.u.i;
  bool hit0 = tag0 == Tag::Int && key0 == key;
  bool hit1 = tag1 == Tag::Int && key1 == key;
  bool ends = hit0 | hit1 | (tag0 == Tag::Nil) | (tag1 == Tag::Nil);
  if (ends) [[likely]] {
    const Node* found = hit1 ? second : nullptr;
    found = hit0 ? first : found;
    return const_cast<Node*>(found);
  }
  return findIntNodeBeyond(na, key, i);
}

[[gnu::always_inline]] inline ValueArray* newValueArray(State& state, uint32_t capacity) {
  auto* a = reinterpret_cast<ValueArray*>(
      state.mutator().allocate(uint8_t(Kind::ValueArray), valueArraySize(capacity)));
  if (!a) return nullptr;
  a->header.aux = kPartOwnedByTable;
  a->capacity = capacity;  // zero-filled memory is nil values (Tag::Nil == 0) and clean cards
  return a;
}

NodeArray* newNodeArray(State& state, uint32_t capacity) {
  auto* na = reinterpret_cast<NodeArray*>(
      state.mutator().allocate(uint8_t(Kind::NodeArray), nodeArraySize(capacity)));
  if (!na) return nullptr;
  na->header.aux = kPartOwnedByTable;
  na->capacity = capacity;
  return na;
}

// Where a key goes in the hash part, or where it is (probeHash).
struct HashProbe {
  Node* found = nullptr;  // the key's node
  Node* dead = nullptr;   // a dead node the key may take over
  Node* stop = nullptr;   // where the key would go: a free node, or in an ordered part the
                          // first node whose key lies nearer its home (nullptr: part full)
};

// One probe finds the key, or else where to insert it. In an ordered part it ends early
// (the key cannot lie beyond a key nearer its home), and only a dead key with the same
// home may give its node away, which keeps the order; in an unordered part the first
// dead node on the chain may. The collector's dead-key marker has no meaningful home:
// probes pass over it and insertions never move in front of it by its distance.
// kInt: `key` is an integer; kShortString: an interned string, whose home is its hash
// and which only its own pointer equals (tableShortStrSlot); both compared without
// keyEquals' switch on the tag (bench/list.lua: its constructors' field stores).
enum class ProbeKey { kAny, kInt, kShortString };
template <ProbeKey kKey>
[[gnu::always_inline]] inline HashProbe probeHashAs(NodeArray* na, const Value& key) {
  HashProbe p;
  if (!na) return p;
  uint32_t capacity = na->capacity, mask = capacity - 1;
  bool ordered = partOrdered(na);
  uint32_t i = kKey == ProbeKey::kInt           ? intHome(key.u.i, capacity)
               : kKey == ProbeKey::kShortString ? key.asString()->header.hash & mask
                                                : tableHomeSlot(key, capacity);
  for (uint32_t n = 0; n <= mask; ++n, i = (i + 1) & mask) {
    Node& node = na->nodes[i];
    Value stored = loadSlot(node.key);  // keyEquals dereferences string keys
    if (stored.tag == Tag::Nil) {
      p.stop = &node;
      break;
    }
    bool equal = kKey == ProbeKey::kInt           ? stored.tag == Tag::Int && stored.u.i == key.u.i
                 : kKey == ProbeKey::kShortString ? stored.tag == Tag::String && stored.u.obj == key.u.obj
                                                  : keyEquals(stored, key);
    if (equal) {
      p.found = &node;
      break;
    }
    if (!ordered) {
      if (!p.dead && node.value.isNil()) p.dead = &node;
      continue;
    }
    if (isDeadKeyMarker(stored)) continue;
    uint32_t d = homeDistance(stored, i, capacity);  // an ordered part has immediate keys only
    if (d < n) {
      p.stop = &node;
      break;
    }
    if (d == n && !p.dead && node.value.isNil()) p.dead = &node;
  }
  return p;
}

HashProbe probeHash(NodeArray* na, const Value& key) {
  if (key.isInt()) return probeHashAs<ProbeKey::kInt>(na, key);
  if (key.isString() && key.asString()->isShort()) return probeHashAs<ProbeKey::kShortString>(na, key);
  return probeHashAs<ProbeKey::kAny>(na, key);
}

// Puts `key` (absent) at `stop`, the end of its probe. In an ordered part the keys from
// `stop` up to the next free node move one node on, which keeps the order but may only
// happen where no other task reads: a part not yet published, or no tasks at all. A
// shared writer (under its claim) takes the next free node instead, after marking the
// part unordered; a key placed at the end of a run never hides another key, and the
// next rebuild orders the part again. False when no node is free.
// Only parts whose keys are all immediates (integers, floats, booleans, light userdata)
// stay ordered; a collectable key makes the part unordered.
bool insertAt(Table* t, NodeArray* na, Node* stop, const Value& key, const Value& value, bool shared) {
  uint32_t mask = na->capacity - 1;
  uint32_t at = uint32_t(stop - na->nodes) & mask;
  uint32_t free = at;
  for (uint32_t n = 0; !na->nodes[free].key.isNil(); free = (free + 1) & mask) {
    if (++n > mask) return false;
  }
  // A key whose home needs its object read (a string, a table...) gives the order up:
  // ordering would read the header of every key an insertion passes, a cache miss each.
  if (partOrdered(na) && key.isCollectable()) {
    markUnordered(na);
  } else if (free != at && partOrdered(na)) {
    if (shared) {
      markUnordered(na);
    } else {
      for (uint32_t i = free; i != at; i = (i - 1) & mask) {
        const Node& from = na->nodes[(i - 1) & mask];
        storeValue(t, na->nodes[i].key, loadSlot(from.key));
        storeValue(t, na->nodes[i].value, loadSlot(from.value));
      }
      free = at;
    }
  }
  storeValue(t, na->nodes[free].key, key);
  storeValue(t, na->nodes[free].value, value);
  return true;
}

// Places a key known to be absent (used while rebuilding, and after a rehash), whose
// probe starts at `home`. Knowing the key absent, the probe compares no keys: it passes
// full nodes, in an ordered part up to the first key nearer its home. False when every
// node is taken: small parts may be filled completely (maxLoad), and racing writers can
// revive dead keys after rehash counted them.
bool placeNode(Table* t, NodeArray* na, uint32_t home, const Value& key, const Value& value, bool shared) {
  if (!na) return false;
  uint32_t capacity = na->capacity, mask = capacity - 1;
  bool ordered = partOrdered(na) && !key.isCollectable();  // insertAt unorders the part
  uint32_t i = home & mask;
  for (uint32_t n = 0; n <= mask; ++n, i = (i + 1) & mask) {
    Node& node = na->nodes[i];
    Value stored = loadSlot(node.key);
    bool nearer = ordered && !stored.isNil() && !isDeadKeyMarker(stored) && homeDistance(stored, i, capacity) < n;
    if (stored.isNil() || nearer) return insertAt(t, na, &node, key, value, shared);
  }
  return false;
}

inline bool inArrayRange(int64_t k, uint32_t arraySize) { return uint64_t(k) - 1 < arraySize; }

// Makes a filled part visible to racing readers (table.h invariant 6): the release
// orders the part's capacity and contents before its pointer.
template <typename Part>
void publishPart(Table* t, Part*& field, Part* part) {
  gc::writeBarrier(asGc(t), asGc(part));
  __atomic_store_n(&field, part, __ATOMIC_RELEASE);
}
// A part its table replaced is garbage, but a racing reader may still read it until its
// next safepoint: a large one gives its pages back at the next stop
// (gc::Mutator::discardLarge), where lua's realloc frees the old block at once. (An
// array grown by doubling to a million values kept 16 MB of old parts until a major.)
// Zeros are nil values, empty nodes and clean cards, and the collector never reads a
// part through anything but its table.
void dropPart(State& state, gc::Object* part, size_t bytes) {
  if (part && bytes >= gc::Heap::kLargeObjectSize) state.mutator().discardLarge(part, bytes);
}
void dropPart(State& state, ValueArray* a) {
  if (a) dropPart(state, asGc(a), valueArraySize(a->capacity));
}
void dropPart(State& state, NodeArray* na) {
  if (na) dropPart(state, asGc(na), nodeArraySize(na->capacity));
}
inline void setArraySize(Table* t, uint32_t n) { __atomic_store_n(&t->arraySize, n, __ATOMIC_RELAXED); }
inline void setLengthHint(Table* t, uint32_t n) { __atomic_store_n(&t->lengthHint, n, __ATOMIC_RELAXED); }

// Shared writers (table.h invariant 7, docs/design/shared-tables.md). Once tasks may run
// in parallel (State::tablesShared), a structural change (a new key, an append, a
// rebuild) holds the table's claim: Table::sync goes from an even g to g + 1, and at the
// end to g + 2 if the holder copied existing slots (beforeCopy), else back to g. Only a
// copy can lose a racing store, so only a copy makes writers store again, and the word
// advances only with copies, each of which allocates a part (the wrap argument in the
// design note). A second claimer waits for the first.
// The holder runs a bounded stretch of this file: it reaches no safepoint, collects
// nothing (allocation here never collects; a refill takes the heap lock briefly and
// never waits for a stop), calls no Lua and waits for nothing; a thread holds at most
// one claim. So a waiter's wait ends even while a stop-the-world is pending: the
// requester waits for both threads, which reach their next safepoint once the holder
// has finished and the waiter has had its turn.
// The acquire of a claim pairs with the release that ended the previous one, so a holder
// sees the parts, sizes and counts its predecessor left; a writer whose tableWriteHeld
// reads that release sees them too. Without tasks no claim is taken: sync stays 0, so
// every tableWriteHeld succeeds.
class WriterClaim {
 public:
  WriterClaim(State& state, Table* t) : t_(t), shared_(state.tablesShared.load(std::memory_order_relaxed)) {
    if (shared_) begun_ = lock(t);
  }
  ~WriterClaim() {
    if (shared_) __atomic_store_n(&t_->sync, copied_ ? begun_ + 2 : begun_, __ATOMIC_RELEASE);
  }
  WriterClaim(const WriterClaim&) = delete;
  WriterClaim& operator=(const WriterClaim&) = delete;
  // Whether other tasks may be writing too (the claim was really taken).
  bool shared() const { return shared_; }

  // Called before the holder reads existing slots to count or copy them. A writer of an
  // existing slot stores first and reads sync after, with no fence between (tableWriteHeld);
  // the heavy barrier supplies the fence on this side: once it returns, every such store
  // made before the writer could see this claim has reached memory, and every writer
  // whose check comes later sees an odd or newer word and stores again after the claim.
  // A table with no parts has no slot a store could be lost from.
  void beforeCopy() {
    if (!shared_ || copied_ || (!t_->array && !t_->nodes)) return;
    heavyBarrier();
    copied_ = true;
  }

 private:
  static uint32_t lock(Table* t) {
    for (int spins = 0;; ++spins) {
      uint32_t word = __atomic_load_n(&t->sync, __ATOMIC_RELAXED);
      if (!(word & 1) &&
          __atomic_compare_exchange_n(&t->sync, &word, word + 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        return word;
      }
      if (spins > 64) std::this_thread::yield();  // the holder may have been descheduled
      else cpuPause();
    }
  }
  static void cpuPause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  Table* t_;
  bool shared_;
  bool copied_ = false;  // beforeCopy ran: the release advances the word
  uint32_t begun_ = 0;
};

// A rebuild's placements found no room: racing writers revived more keys after they were
// counted than the part was sized for (only with a claim shared). Internal to this file.
constexpr StatusCode kNoRoom = StatusCode::kRuntimeError;

// The old part is read in order, but its keys' homes in the new part are scattered: on
// a large table every placement would wait for a cache miss. Fetching the home of the
// key this many nodes ahead overlaps those misses.
constexpr uint32_t kRebuildPrefetchAhead = 16;

// Starts fetching the new home of the integer key in old node `i`, if any (only
// integer homes are computed without reading memory).
inline void prefetchHome(const NodeArray* nodes, const NodeArray* oldNodes, uint32_t i) {
  if (!nodes || i >= oldNodes->capacity) return;
  const Value& key = oldNodes->nodes[i].key;
  if (key.isInt()) __builtin_prefetch(&nodes->nodes[intHome(key.u.i, nodes->capacity)], 1);
}

// Makes a rebuild's first access to a node of its new part a write. The part's pages
// are fresh: a read would map the shared zero page, and the write after it would fault a
// second time (two faults per page of a large part). The byte is rewritten with its own
// value in one instruction, so this is only for a part no other task can see yet.
inline void touchForWrite(Node& node) {
#if defined(__x86_64__)
  asm volatile("orb $0, %0" : "+m"(*reinterpret_cast<uint8_t*>(&node.key.tag)));
#else
  (void)node;
#endif
}

// Rebuilds the table with an array part of `arraySize` and room for `hashCount` keys in
// the hash part, `reserve` of them kept free for keys the caller places next. Dead keys
// are dropped. The table is unchanged on failure: kMemoryError, or kNoRoom when racing
// writers revived keys after the caller counted them (every placement comes before any
// store another task can see, so the caller can rebuild again with more room).
Status rebuild(State& state, Table* t, uint32_t arraySize, uint64_t hashCount, uint32_t reserve) {
  ValueArray* oldArray = t->array;
  uint32_t oldSize = t->arraySize;
  uint32_t oldCap = oldArray ? oldArray->capacity : 0;
  NodeArray* oldNodes = t->nodes;

  ValueArray* array = oldArray;
  if (arraySize > oldCap || (arraySize < oldCap / 2)) {
    array = arraySize ? newValueArray(state, arraySize) : nullptr;
    if (arraySize && !array) return Status(StatusCode::kMemoryError);
  }
  uint32_t nodeCap = nodeCapacityFor(hashCount);
  if (hashCount && !nodeCap) return Status(StatusCode::kMemoryError);
  NodeArray* nodes = nodeCap ? newNodeArray(state, nodeCap) : nullptr;
  if (nodeCap && !nodes) return Status(StatusCode::kMemoryError);

  uint32_t count = 0;
  auto placeOrFail = [&](const Value& key, const Value& value) {
    if (!nodes || count + 1 + reserve > maxLoad(nodes->capacity)) return false;
    uint32_t home = tableHomeSlot(key, nodes->capacity);
    touchForWrite(nodes->nodes[home]);
    // The new part is not published yet: no reader sees keys move.
    if (!placeNode(t, nodes, home, key, value, false)) return false;
    count++;
    return true;
  };
  // Array entries beyond the new size move to the hash part. Values may change under
  // us (writers of existing slots do not claim): each is read once, whole; a writer whose
  // store this copy may miss stores again after the claim (WriterClaim::beforeCopy).
  for (uint32_t i = arraySize; i < oldSize && oldArray && i < oldCap; ++i) {
    Value v = loadSlot(oldArray->data[i]);
    if (v.isNil()) continue;
    if (!placeOrFail(Value::integer(int64_t(i) + 1), v)) return Status(kNoRoom);
  }
  bool intoOldArray = false;  // hash keys that move into the old array, in a second pass
  if (oldNodes) {
    for (uint32_t i = 0; i < oldNodes->capacity; ++i) {
      prefetchHome(nodes, oldNodes, i + kRebuildPrefetchAhead);
      const Node& node = oldNodes->nodes[i];
      Value key = node.key;  // keys change only under the claim this rebuild holds
      Value v = loadSlot(node.value);
      if (key.isNil() || v.isNil()) continue;
      if (key.isInt() && inArrayRange(key.asInt(), arraySize)) {
        // The old array is shared: it is written only once every placement succeeded.
        if (array != oldArray) storeValue(t, array->data[key.asInt() - 1], v);
        else intoOldArray = true;
      } else if (!placeOrFail(key, v)) {
        return Status(kNoRoom);
      }
    }
  }
  if (array != oldArray) {
    uint32_t keep = oldSize < arraySize ? oldSize : arraySize;
    for (uint32_t i = 0; i < keep && i < oldCap; ++i) storeValue(t, array->data[i], loadSlot(oldArray->data[i]));
  } else {
    for (uint32_t i = 0; intoOldArray && i < oldNodes->capacity; ++i) {
      const Node& node = oldNodes->nodes[i];
      Value key = node.key;
      if (key.isInt() && inArrayRange(key.asInt(), arraySize)) {
        storeValue(t, array->data[key.asInt() - 1], loadSlot(node.value));
      }
    }
    for (uint32_t i = arraySize; i < oldSize && i < oldCap; ++i) storeSlot(array->data[i], Value::nil());
  }
  publishPart(t, t->array, array);
  setArraySize(t, arraySize);
  publishPart(t, t->nodes, nodes);
  t->nodeCount = count;
  if (array != oldArray) dropPart(state, oldArray);
  dropPart(state, oldNodes);
  if (__atomic_load_n(&t->lengthHint, __ATOMIC_RELAXED) > arraySize) setLengthHint(t, 0);
  return Status::ok();
}

// rebuild, and when racing writers revived too many keys (kNoRoom), once more with room
// for every key the old parts can hold: no key is ever dropped to make it fit.
Status rebuildWithRoom(State& state, Table* t, uint32_t arraySize, uint64_t hashCount, uint32_t reserve,
                       const WriterClaim& claim) {
  Status s = rebuild(state, t, arraySize, hashCount, reserve);
  if (s.code() != kNoRoom) return s;
  WEFT_CHECK(claim.shared(), "rehash sizing counts every key");
  uint64_t bound = uint64_t(t->nodes ? t->nodes->capacity : 0) + t->arraySize + reserve;
  s = rebuild(state, t, arraySize, bound > hashCount ? bound : hashCount, reserve);
  WEFT_CHECK(s.code() != kNoRoom, "a hash part sized for every old slot holds them all");
  return s;
}

// Bin of a positive integer key for the array sizing: keys in (2^(b-1), 2^b] go to b.
inline int keyBin(uint64_t k) { return k <= 1 ? 0 : 64 - __builtin_clzll(k - 1); }

// Rehash before inserting `extra` (a key absent from the table): picks the array size
// as Lua 5.4 does and sizes the hash part for the remaining keys, keeping a node free
// for `extra` if it goes there.
Status rehash(State& state, Table* t, const Value& extra, WriterClaim& claim) {
  claim.beforeCopy();
  uint64_t bins[kMaxArrayBits + 1] = {};
  uint64_t intKeys = 0, totalKeys = 0;
  auto countKey = [&](const Value& key) {
    totalKeys++;
    if (key.isInt() && key.asInt() >= 1 && key.asInt() <= int64_t(kMaxArrayCapacity)) {
      bins[keyBin(uint64_t(key.asInt()))]++;
      intKeys++;
    }
  };
  if (const ValueArray* a = t->array) {
    for (uint32_t i = 0; i < t->arraySize && i < a->capacity; ++i) {
      if (!a->data[i].isNil()) countKey(Value::integer(int64_t(i) + 1));
    }
  }
  if (const NodeArray* na = t->nodes) {
    for (uint32_t i = 0; i < na->capacity; ++i) {
      // Keys change only under the claim the caller holds; values may race (tags only).
      if (!na->nodes[i].key.isNil() && !na->nodes[i].value.isNil()) countKey(na->nodes[i].key);
    }
  }
  countKey(extra);
  uint64_t arraySize = 0, inArray = 0, cumulative = 0;
  for (int b = 0; b <= kMaxArrayBits; ++b) {
    uint64_t twoToB = uint64_t(1) << b;
    if (twoToB / 2 >= intKeys) break;
    cumulative += bins[b];
    if (cumulative > twoToB / 2) {
      arraySize = twoToB;
      inArray = cumulative;
    }
  }
  bool extraInHash = !(extra.isInt() && inArrayRange(extra.asInt(), uint32_t(arraySize)));
  return rebuildWithRoom(state, t, uint32_t(arraySize), totalKeys - inArray, extraInHash ? 1 : 0, claim);
}

// Appends key arraySize+1 (absent from the hash part) to the array part.
Status appendArray(State& state, Table* t, const Value& value, WriterClaim& claim) {
  ValueArray* a = t->array;
  uint32_t n = t->arraySize;
  if (!a || n >= a->capacity) {
    uint32_t cap = a ? a->capacity : 0;
    uint32_t newCap = cap < 4 ? 4 : cap * 2;
    if (newCap > kMaxArrayCapacity) return Status(StatusCode::kMemoryError);
    ValueArray* bigger = newValueArray(state, newCap);
    if (!bigger) return Status(StatusCode::kMemoryError);
    claim.beforeCopy();
    for (uint32_t i = 0; i < n && a && i < a->capacity; ++i) storeValue(t, bigger->data[i], loadSlot(a->data[i]));
    publishPart(t, t->array, bigger);
    dropPart(state, a);
    a = bigger;
  }
  storeValue(t, a->data[n], value);
  setArraySize(t, n + 1);
  return Status::ok();
}

// Inserts `key` (normalised, not nil/NaN, absent from both parts, `value` not nil) under
// the claim; `na` and `p` are the hash part and the key's probe in it.
[[gnu::always_inline]] inline Status insertClaimed(State& state, Table* t, NodeArray* na, const HashProbe& p, const Value& key,
                     const Value& value, WriterClaim& claim) {
  // With tasks about, a key once stored stays in its node until a rebuild makes a new
  // part: a reader that matched a dead key must not then read a value stored for
  // another key that reused the node. Dead keys go at the next rehash instead.
  Node* dead = claim.shared() ? nullptr : p.dead;
  if (key.isInt() && uint64_t(key.asInt()) == uint64_t(t->arraySize) + 1 &&
      tableArraySize(t) < kMaxArrayCapacity) {
    return appendArray(state, t, value, claim);
  }
  if (dead) {
    if (key.isCollectable()) markUnordered(na);  // keeps ordered parts free of such keys
    storeValue(t, dead->key, key);
    storeValue(t, dead->value, value);
    return Status::ok();
  }
  if (p.stop && t->nodeCount + 1 <= maxLoad(na->capacity)) {
    if (p.stop->key.isNil()) {
      // Fast path: the probe ended at a free node (a constructor's fields, a new key in
      // a sparse part), where insertAt would move nothing: inline, no call
      // (bench/list.lua 6% faster, cd.lua 5%).
      if (key.isCollectable() && partOrdered(na)) markUnordered(na);
      storeValue(t, p.stop->key, key);
      storeValue(t, p.stop->value, value);
      t->nodeCount++;
      return Status::ok();
    }
    if (insertAt(t, na, p.stop, key, value, claim.shared())) {
      t->nodeCount++;
      return Status::ok();
    }
  }
  Status s = rehash(state, t, key, claim);
  if (!s.isOk()) return s;
  if (key.isInt() && inArrayRange(key.asInt(), t->arraySize)) {
    storeValue(t, t->array->data[key.asInt() - 1], value);
    return Status::ok();
  }
  NodeArray* rebuilt = t->nodes;
  bool placed = rebuilt && placeNode(t, rebuilt, tableHomeSlot(key, rebuilt->capacity), key, value, claim.shared());
  WEFT_CHECK(placed, "rehash keeps a node free for the key it was called for");
  t->nodeCount++;
  return Status::ok();
}

// Stores into a node its probe found. A node whose value is nil keeps its key (a dead
// key, for `next`), and a table's trace skips dead keys: storing a value revives the key
// without storing it, so it goes through the barrier as if stored again (an incremental
// major may have traced the table while the key was dead: gc-v2.md "Incremental
// majors").
void storeFoundValue(Table* t, Node& node, const Value& value) {
  if (loadSlot(node.value).isNil()) {
    Value key = loadSlot(node.key);
    if (key.isCollectable()) gc::writeBarrier(asGc(t), key.u.obj);
  }
  storeValue(t, node.value, value);
}

// Stores `key` (normalised, not nil/NaN) under the claim: no part changes meanwhile, so
// a store into an existing slot needs no check.
Status setClaimed(State& state, Table* t, const Value& key, const Value& value, WriterClaim& claim) {
  if (key.isInt() && inArrayRange(key.asInt(), t->arraySize) && key.asInt() - 1 < t->array->capacity) {
    storeValue(t, t->array->data[key.asInt() - 1], value);
    return Status::ok();
  }
  NodeArray* na = t->nodes;
  HashProbe p = probeHash(na, key);
  if (p.found) {
    storeFoundValue(t, *p.found, value);
    return Status::ok();
  }
  if (value.isNil()) return Status::ok();
  return insertClaimed(state, t, na, p, key, value, claim);
}

// Stores into the hash part; `key` is normalised, not nil/NaN, and was not in the array
// part as the caller saw it after reading `seq` (tableWriteBegin). The probe that looks
// for the key also finds where to insert it.
Status setInHash(State& state, Table* t, const Value& key, const Value& value, uint32_t seq) {
  NodeArray* na = tableNodePart(t);
  HashProbe p = probeHash(na, key);
  if (p.found) {
    storeFoundValue(t, *p.found, value);
    if (tableWriteHeld(t, seq)) [[likely]] return Status::ok();
  } else if (value.isNil() && tableWriteHeld(t, seq)) {
    return Status::ok();  // no claim since the lookup: the key is absent and stays so
  }
  WriterClaim claim(state, t);
  // Another writer may have rebuilt the table, or inserted this key, since the probe:
  // look again, so the key goes into the live parts, once.
  if (claim.shared()) return setClaimed(state, t, key, value, claim);
  return insertClaimed(state, t, na, p, key, value, claim);
}

// tableResize's work, under the caller's claim.
Status resizeClaimed(State& state, Table* t, uint32_t arraySize, uint32_t hashSize, WriterClaim& claim) {
  if (arraySize < t->arraySize) arraySize = t->arraySize;
  uint32_t nodeCap = t->nodes ? t->nodes->capacity : 0;
  ValueArray* a = t->array;
  if (arraySize == t->arraySize && maxLoad(nodeCap) >= uint64_t(t->nodeCount) + hashSize) return Status::ok();
  if (arraySize > t->arraySize && a && arraySize <= a->capacity && !t->nodes) {
    setArraySize(t, arraySize);  // slots beyond the old size are already nil
    if (hashSize == 0) return Status::ok();
  }
  if (arraySize > t->arraySize && !t->nodes && hashSize == 0) {
    // An array part that grows, and no hash part: a copy, without rebuild's walk and
    // count (a constructor whose last item is a call, `{f(x), f(y)}`, sized for one:
    // bench/binarytrees.lua).
    ValueArray* bigger = newValueArray(state, arraySize);
    if (!bigger) return Status(StatusCode::kMemoryError);
    claim.beforeCopy();
    uint32_t n = t->arraySize;
    for (uint32_t i = 0; i < n && i < a->capacity; ++i) storeValue(t, bigger->data[i], loadSlot(a->data[i]));
    publishPart(t, t->array, bigger);
    setArraySize(t, arraySize);
    dropPart(state, a);
    return Status::ok();
  }
  claim.beforeCopy();
  uint64_t liveHash = 0;
  if (const NodeArray* na = t->nodes) {
    for (uint32_t i = 0; i < na->capacity; ++i) {
      const Node& node = na->nodes[i];
      if (node.key.isNil() || node.value.isNil()) continue;
      if (node.key.isInt() && inArrayRange(node.key.asInt(), arraySize)) continue;
      liveHash++;
    }
  }
  return rebuildWithRoom(state, t, arraySize, liveHash > hashSize ? liveHash : hashSize, 0, claim);
}

// tableSetInt's append: no hash part can hold the key, which is checked again under
// the claim, since another writer may have appended or rebuilt since. Out of line: the
// claim would make tableSetInt save registers on every path.
[[gnu::noinline]] Status appendOrSetInHash(State& state, Table* t, int64_t key, const Value& value, uint32_t seq) {
  {
    WriterClaim claim(state, t);
    if (!t->nodes && uint64_t(key) == uint64_t(t->arraySize) + 1) return appendArray(state, t, value, claim);
  }
  return setInHash(state, t, Value::integer(key), value, seq);
}

// tableSetInt's array store failed its check: a rebuild may have copied the slot first.
// Stores again, under the claim; out of line, off the array path.
[[gnu::noinline]] Status setIntAgain(State& state, Table* t, int64_t key, const Value& value) {
  WriterClaim claim(state, t);
  return setClaimed(state, t, Value::integer(key), value, claim);
}

}  // namespace

Value tableDeadKey() { return Value::lightUserdata(const_cast<char*>(&kDeadKeyAnchor)); }

Value normaliseKey(const Value& key) {
  if (key.isFloat()) {
    int64_t i;
    if (floatToInteger(key.asFloat(), i, FloatToInt::Exact)) return Value::integer(i);
  }
  return key;
}

uint32_t hashValue(const Value& key) {
  switch (key.tag) {
    case Tag::Int:
    case Tag::Float:
    case Tag::LightUserdata:
    case Tag::LightNative:
    case Tag::LightCFunction:
      return mixBits(uint64_t(key.u.i));
    case Tag::False:
      return 0x2f0d1a4bu;
    case Tag::True:
      return 0x7c3e9d15u;
    case Tag::String:
      return stringHash(key.asString());
    default:
      return key.isCollectable() ? mixIdentity(key.u.obj->header.hash) : 0;
  }
}

uint32_t tableHomeSlot(const Value& key, uint32_t capacity) {
  if (key.isInt()) return intHome(key.asInt(), capacity);
  return hashValue(key) & (capacity - 1);
}

// The parts a rebuild of the empty table would give it, without the rebuild's walk of
// old parts: no task sees the table yet, and the parts hold nothing to place
// (bench/list.lua spent 7% of its time in rebuild, binarytrees 7%).
Table* newTable(State& state, uint32_t arrayHint, uint32_t hashHint) {
  auto* t = reinterpret_cast<Table*>(state.mutator().allocate(uint8_t(Kind::Table), sizeof(Table)));
  if (!t) return nullptr;
  if (arrayHint) {
    uint32_t size = arrayHint > kMaxArrayCapacity ? kMaxArrayCapacity : arrayHint;
    ValueArray* array = newValueArray(state, size);
    if (!array) return nullptr;
    publishPart(t, t->array, array);
    setArraySize(t, size);
  }
  if (hashHint) {
    uint32_t capacity = nodeCapacityFor(hashHint);
    NodeArray* nodes = capacity ? newNodeArray(state, capacity) : nullptr;
    if (!nodes) return nullptr;
    publishPart(t, t->nodes, nodes);
  }
  return t;
}

const Value* tableHashIntSlot(const Table* t, int64_t key) {
  const Node* node = findIntNode(tableNodePart(t), key);
  return node ? &node->value : nullptr;
}

Value tableGetInt(const Table* t, int64_t key) {
  if (const Value* v = tableArraySlot(t, key)) return loadSlot(*v);
  if (const Node* node = findIntNode(tableNodePart(t), key)) return loadSlot(node->value);
  return Value::nil();
}

const Value* tableLongStrSlot(const Table* t, const String* key) {
  Value k = Value::string(const_cast<String*>(key));
  const Node* node = findNode(tableNodePart(t), k);
  return node ? &node->value : nullptr;
}

Value tableGetStr(const Table* t, const String* key) {
  const Value* v = tableStrSlot(t, key);
  return v ? loadSlot(*v) : Value::nil();
}

Value tableGet(const Table* t, const Value& key) {
  switch (key.tag) {
    case Tag::Int:
      return tableGetInt(t, key.asInt());
    case Tag::String:
      return tableGetStr(t, key.asString());
    case Tag::Nil:
      return Value::nil();
    case Tag::Float: {
      int64_t i;
      if (floatToInteger(key.asFloat(), i, FloatToInt::Exact)) return tableGetInt(t, i);
      if (std::isnan(key.asFloat())) return Value::nil();
      break;
    }
    default:
      break;
  }
  if (const Node* node = findNode(tableNodePart(t), key)) return loadSlot(node->value);
  return Value::nil();
}

Status tableSetInt(State& state, Table* t, int64_t key, const Value& value) {
  tableTouched(t);
  uint32_t seq = tableWriteBegin(t);
  if (ValueArray* a = tableArrayPart(t); a && inArrayRange(key, tableArraySize(t)) && uint64_t(key) - 1 < a->capacity) {
    storeValue(t, a->data[key - 1], value);
    if (tableWriteHeld(t, seq)) [[likely]] return Status::ok();
    return setIntAgain(state, t, key, value);
  }
  if (!tableNodePart(t) && uint64_t(key) == uint64_t(tableArraySize(t)) + 1 && !value.isNil() &&
      tableArraySize(t) < kMaxArrayCapacity) {
    return appendOrSetInHash(state, t, key, value, seq);
  }
  return setInHash(state, t, Value::integer(key), value, seq);
}

Status tableSetStr(State& state, Table* t, String* key, const Value& value) {
  tableTouched(t);
  uint32_t seq = tableWriteBegin(t);
  return setInHash(state, t, Value::string(key), value, seq);
}

Status tableSet(State& state, Table* t, const Value& key, const Value& value) {
  switch (key.tag) {
    case Tag::Int:
      return tableSetInt(state, t, key.asInt(), value);
    case Tag::String:
      return tableSetStr(state, t, key.asString(), value);
    case Tag::Nil:
      return Status(StatusCode::kRuntimeError);
    case Tag::Float: {
      int64_t i;
      if (floatToInteger(key.asFloat(), i, FloatToInt::Exact)) return tableSetInt(state, t, i, value);
      if (std::isnan(key.asFloat())) return Status(StatusCode::kRuntimeError);
      break;
    }
    default:
      break;
  }
  tableTouched(t);
  uint32_t seq = tableWriteBegin(t);
  return setInHash(state, t, key, value, seq);
}

Value* tableFindSlot(Table* t, const Value& rawKey) {
  Value key = normaliseKey(rawKey);
  Value* slot = nullptr;
  if (key.isInt()) {
    slot = const_cast<Value*>(tableArraySlot(t, key.asInt()));
    if (!slot) {
      Node* node = findIntNode(tableNodePart(t), key.asInt());
      slot = node ? &node->value : nullptr;
    }
  } else if (!key.isNil()) {
    Node* node = findNode(tableNodePart(t), key);
    slot = node ? &node->value : nullptr;
  }
  return slot && !slot->isNil() ? slot : nullptr;
}

namespace {

inline bool presentInt(const Table* t, uint64_t k) { return !tableGetInt(t, int64_t(k)).isNil(); }

// Unbounded search beyond the array part: t[i] is present; doubles j until t[j] is
// absent, then bisects. Integer overflow falls back to a linear scan, as such a table
// is adversarial anyway.
uint64_t hashBorder(const Table* t, uint64_t i) {
  uint64_t j = i * 2;
  while (presentInt(t, j)) {
    i = j;
    if (j > uint64_t(INT64_MAX) / 2) {
      uint64_t k = 1;
      while (presentInt(t, k)) k++;
      return k - 1;
    }
    j *= 2;
  }
  while (j - i > 1) {
    uint64_t m = i + (j - i) / 2;
    if (presentInt(t, m)) i = m;
    else j = m;
  }
  return i;
}

}  // namespace

uint64_t tableLength(Table* t) {
  const ValueArray* a = tableArrayPart(t);
  uint32_t limit = tableArraySize(t);
  if (a && limit > a->capacity) limit = a->capacity;
  if (!a) limit = 0;
  if (limit > 0 && a->data[limit - 1].isNil()) {
    // A border lies inside the array part.
    if (limit >= 2 && !a->data[limit - 2].isNil()) return limit - 1;
    uint32_t hint = __atomic_load_n(&t->lengthHint, __ATOMIC_RELAXED);
    if (hint < limit && (hint == 0 || !a->data[hint - 1].isNil()) && a->data[hint].isNil()) return hint;
    uint32_t lo = 0, hi = limit;  // a[lo-1] present (or lo == 0), a[hi-1] absent
    while (hi - lo > 1) {
      uint32_t m = lo + (hi - lo) / 2;
      if (a->data[m - 1].isNil()) hi = m;
      else lo = m;
    }
    setLengthHint(t, lo);
    return lo;
  }
  if (!tableNodePart(t) || !presentInt(t, uint64_t(limit) + 1)) return limit;
  return hashBorder(t, uint64_t(limit) + 1);
}

Status tableNext(const Table* t, Value& key, Value& value, bool& found) {
  uint64_t index = 0;  // position to resume from: array slots, then nodes
  const ValueArray* a = tableArrayPart(t);
  uint32_t arraySize = tableArraySize(t);
  if (a && arraySize > a->capacity) arraySize = a->capacity;
  if (!a) arraySize = 0;
  const NodeArray* na = tableNodePart(t);
  if (!key.isNil()) {
    Value k = normaliseKey(key);
    if (k.isInt() && inArrayRange(k.asInt(), arraySize)) {
      index = uint64_t(k.asInt());
    } else {
      const Node* node = findNode(na, k);
      if (!node) return Status(StatusCode::kRuntimeError);
      index = uint64_t(arraySize) + uint64_t(node - na->nodes) + 1;
    }
  }
  for (; index < arraySize; ++index) {
    Value v = loadSlot(a->data[index]);
    if (!v.isNil()) {
      key = Value::integer(int64_t(index) + 1);
      value = v;
      found = true;
      return Status::ok();
    }
  }
  for (uint64_t i = index - arraySize; na && i < na->capacity; ++i) {
    const Node& node = na->nodes[i];
    Value k = loadSlot(node.key);
    Value v = loadSlot(node.value);
    if (!k.isNil() && !v.isNil()) {
      key = k;
      value = v;
      found = true;
      return Status::ok();
    }
  }
  found = false;
  return Status::ok();
}

Status tableResize(State& state, Table* t, uint32_t arraySize, uint32_t hashSize) {
  if (arraySize > kMaxArrayCapacity) return Status(StatusCode::kMemoryError);
  // Every field is read under the claim, so no other writer changes the parts.
  WriterClaim claim(state, t);
  return resizeClaimed(state, t, arraySize, hashSize, claim);
}

Status tableSetList(State& state, Table* t, int64_t first, const Value* values, uint32_t n) {
  tableTouched(t);
  // One claim for the whole list: its stores need no check (table.h invariant 7).
  WriterClaim claim(state, t);
  uint64_t end = uint64_t(first) + n;
  if (end > t->arraySize && end <= UINT32_MAX) {
    if (end > kMaxArrayCapacity) return Status(StatusCode::kMemoryError);
    if (Status st = resizeClaimed(state, t, uint32_t(end), 0, claim); !st.isOk()) return st;
  }
  // Pre-sized, so normally every key is in the array part; any other goes the long way.
  ValueArray* a = t->array;
  uint32_t size = t->arraySize, j = 0;
  for (; j < n; j++) {
    uint64_t i = uint64_t(first) + j;  // slot of key first + 1 + j
    if (i >= size || i >= a->capacity) break;
    storeValue(t, a->data[i], values[j]);
  }
  for (; j < n; j++) {
    if (Status st = setClaimed(state, t, Value::integer(first + 1 + j), values[j], claim); !st.isOk()) return st;
  }
  return Status::ok();
}

// Release: a task that reads the new metatable pointer sees the metatable's contents.
void tableSetMetatable(Table* t, Table* mt) {
  gc::writeBarrier(asGc(t), asGc(mt));
  __atomic_store_n(&t->metatable, mt, __ATOMIC_RELEASE);
}

}  // namespace weft::vm
