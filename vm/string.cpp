// Strings and the interned-string table.
//
// Protocol of the StringTable (many threads; the scheduler issue runs several workers):
//  - The table is 64 shards. A string's shard is chosen by the top 6 bits of its content
//    hash, its home slot inside the shard by the low bits: the two are independent, so a
//    shard's slots stay evenly used.
//  - Each shard is an open-addressing array of slots with linear probing (a slot keeps
//    20 bits of its string's hash beside its address, so probes rarely touch the
//    strings, and a slot's home needs no string: a shard has at most 2^20), guarded by
//    its own spinlock (`locked`, gc/spin_lock.h: acquire on lock, release on unlock;
//    everything written under the lock is visible to the next holder). Critical sections are a few probes
//    and at most one bump allocation, which never collects and never waits for a
//    collection, so a spinlock that yields after a short spin is enough.
//  - Entries are only ever removed by sweepWeakRoots, which runs while the world is
//    stopped (no mutator holds a lock then); it drops dead strings, updates survivors to
//    their new addresses and re-packs each shard in place so probe chains have no holes.
//    No tombstones are needed because nothing else removes entries.
//  - Generations (docs/design/gc-v2.md): an old string dies only at a major, so a minor
//    sweeps only the strings inserted since the last collection, which each shard lists
//    as it inserts them (Shard::young): each is found from its home slot, updated or
//    erased by backward shifting (eraseSlot), so a minor's sweep costs in proportion to
//    the strings interned since the last collection, not to the table. A major (and
//    verification) walks every slot. Every collection empties the lists.
//  - Load factor at most 7/8 (hasRoom); a shard doubles when it would exceed it, up to
//    2^20 slots (some 50 million strings in all, gigabytes of them). If the bigger array
//    cannot be allocated the shard keeps going until it is truly full, and then
//    interning fails with nullptr (a memory error for the caller). At 3/4, 200,000
//    strings (bench/tables.lua's keys: 3,125 a shard) doubled most shards to 8,192
//    slots, 4 MB where lua's table of pointers took 2; the 20-bit tags keep the longer
//    probes in the slot array, eight slots to a cache line.
//  - A shard that a sweep leaves an eighth full or less shrinks (shrink), as lua's table
//    does at a collection.
//  - A young list that a sweep leaves a quarter full or less shrinks (fitYoung): it
//    grows to the strings made between two collections and then held that memory for
//    good (1 MB of bench/tables.lua's peak).
//
// Long strings are never interned. Their hash is computed lazily: at creation the seed
// is parked in header.hash; the first stringHash replaces it with the content hash and
// sets aux bit 0. Racing threads compute the same value, and the bit is published with
// release after the hash, so a reader that sees the bit sees the hash.
#include "vm/string.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>

#include "gc/pass.h"
#include "vm/state.h"

namespace weft::vm {

namespace {

constexpr uint16_t kHashComputed = 1;     // String::header.aux bit (long strings)
constexpr uint32_t kInitialShardSlots = 32;
constexpr uint32_t kSweepPrefetch = 8;  // slots ahead whose string the sweep prefetches
constexpr size_t kSweepSlotsPerPart = 16384;  // a part of a parallel sweep: some 0.3 ms of work

inline uint64_t load64(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

inline uint32_t load32(const char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

// The last 1-7 bytes as one word, with fixed-size loads only (a memcpy of a variable
// length is a library call): two overlapping 4-byte loads, or the first, middle and
// last byte. Together with the length, the word determines the bytes.
inline uint64_t tailWord(const char* p, size_t n) {
  if (n >= 4) return load32(p) | uint64_t(load32(p + n - 4)) << 32;
  auto byte = [p](size_t i) { return uint64_t(static_cast<unsigned char>(p[i])); };
  return byte(0) | byte(n / 2) << 8 | byte(n - 1) << 16;
}

inline uint64_t mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

String* allocateString(State& state, size_t length) {
  if (length > (size_t(1) << 40)) return nullptr;  // larger than any heap we manage
  auto* obj = state.mutator().allocate(uint8_t(Kind::String), stringSize(length));
  if (!obj) return nullptr;
  auto* s = reinterpret_cast<String*>(obj);
  s->length = length;
  s->data[length] = '\0';
  return s;
}

}  // namespace

uint32_t processHashSeed() {
  static const uint32_t seed = [] {
    // A fixed seed reproduces a run whose outcome depends on hash order (docs/cli.md).
    if (const char* fixed = std::getenv("WEFT_HASH_SEED"); fixed && *fixed) {
      return uint32_t(std::strtoul(fixed, nullptr, 0)) | 1u;
    }
    std::random_device rd;
    uint64_t t = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    return uint32_t(mix64(rd() ^ (uint64_t(rd()) << 32) ^ t)) | 1u;
  }();
  return seed;
}

// Word-at-a-time multiply-xorshift: short keys (the common case) take 1-5 rounds.
uint32_t hashBytes(std::string_view bytes, uint32_t seed) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t h = (uint64_t(seed) << 32 | seed) ^ (n * 0x9e3779b97f4a7c15ull);
  while (n >= 8) {
    h = (h ^ load64(p)) * 0x9fb21c651e98df25ull;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    h = (h ^ tailWord(p, n) ^ (uint64_t(n) << 59)) * 0x9fb21c651e98df25ull;
  }
  return uint32_t(mix64(h));
}

uint32_t longStringHash(String* s) {
  std::atomic_ref<uint16_t> aux(s->header.aux);
  std::atomic_ref<uint32_t> hash(s->header.hash);
  if (aux.load(std::memory_order_acquire) & kHashComputed) return hash.load(std::memory_order_relaxed);
  uint32_t h = hashBytes(s->view(), hash.load(std::memory_order_relaxed));
  hash.store(h, std::memory_order_relaxed);
  aux.fetch_or(kHashComputed, std::memory_order_release);
  return h;
}

String* newString(State& state, std::string_view bytes) {
  if (bytes.size() <= kMaxShortString) {
    return state.strings().intern(state, bytes, hashBytes(bytes, state.hashSeed()));
  }
  String* s = allocateString(state, bytes.size());
  if (!s) return nullptr;
  std::memcpy(s->data, bytes.data(), bytes.size());
  s->identity = s->header.hash;
  s->header.hash = state.hashSeed();
  return s;
}

String* newStringUninit(State& state, size_t length) {
  String* s = allocateString(state, length);
  if (!s) return nullptr;
  s->identity = s->header.hash;
  s->header.hash = state.hashSeed();
  return s;
}

String* finishString(State& state, String* s) {
  if (s->length > kMaxShortString || s->isShort()) return s;
  return state.strings().adopt(s, hashBytes(s->view(), state.hashSeed()));
}

bool longStringEquals(const String* a, const String* b) {
  return a->length == b->length && std::memcmp(a->data, b->data, a->length) == 0;
}

// In the C locale strcoll is strcmp; comparing NUL-separated pieces as Lua does then
// reduces to an unsigned byte-wise comparison where a proper prefix sorts first.
int stringCompare(const String* a, const String* b) {
  if (a == b) return 0;
  size_t n = std::min(a->length, b->length);
  int c = n ? std::memcmp(a->data, b->data, n) : 0;
  if (c != 0) return c;
  return a->length < b->length ? -1 : (a->length > b->length ? 1 : 0);
}

// ---- StringTable -------------------------------------------------------------------

StringTable::StringTable() = default;

StringTable::~StringTable() {
  for (Shard& shard : shards_) {
    delete[] shard.slots;
    delete[] shard.young;
  }
}

void StringTable::lock(Shard& shard) { shard.locked.lock(); }

void StringTable::unlock(Shard& shard) { shard.locked.unlock(); }

void StringTable::insertSlot(Shard& shard, const Slot& slot) {
  uint32_t mask = shard.capacity - 1;
  uint32_t i = slot.tag() & mask;
  while (shard.slots[i]) i = (i + 1) & mask;
  shard.slots[i] = slot;
  shard.count++;
}

// A young list that cannot grow is not an error: the next minor sweeps the whole shard.
void StringTable::noteYoung(Shard& shard, const Slot& slot) {
  if (shard.youngAll) return;
  if (shard.youngCount == shard.youngCapacity) {
    uint32_t capacity = shard.youngCapacity ? shard.youngCapacity * 2 : kInitialShardSlots;
    auto* young = capacity > shard.youngCapacity ? new (std::nothrow) Slot[capacity] : nullptr;
    if (!young) {
      shard.youngAll = true;
      return;
    }
    std::copy(shard.young, shard.young + shard.youngCount, young);
    delete[] shard.young;
    shard.young = young;
    shard.youngCapacity = capacity;
  }
  shard.young[shard.youngCount++] = slot;
}

// After a sweep: a list at most a quarter full gets one of twice its entries (at least
// the initial size). If that cannot be allocated the list stays as it is.
void StringTable::fitYoung(Shard& shard) {
  if (shard.youngCapacity <= kInitialShardSlots || shard.youngCount * 4 > shard.youngCapacity) return;
  uint32_t capacity = std::max(kInitialShardSlots, std::bit_ceil(shard.youngCount * 2));
  auto* young = new (std::nothrow) Slot[capacity];
  if (!young) return;
  std::copy(shard.young, shard.young + shard.youngCount, young);
  delete[] shard.young;
  shard.young = young;
  shard.youngCapacity = capacity;
}

// Linear probing's deletion without tombstones: the entries after the hole in its
// cluster move back into it, unless their home lies cyclically in (hole, j], where they
// must stay to be found.
void StringTable::eraseSlot(Shard& shard, uint32_t i) {
  uint32_t mask = shard.capacity - 1;
  uint32_t hole = i;
  shard.slots[hole] = Slot{};
  for (uint32_t j = (hole + 1) & mask; shard.slots[j]; j = (j + 1) & mask) {
    uint32_t home = shard.slots[j].tag() & mask;
    bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    shard.slots[hole] = shard.slots[j];
    shard.slots[j] = Slot{};
    hole = j;
  }
  shard.count--;
}

String* StringTable::findLocked(const Shard& shard, std::string_view bytes, uint32_t hash) {
  if (!shard.capacity) return nullptr;
  uint32_t mask = shard.capacity - 1;
  uint32_t tag = hash & ((1u << kTagBits) - 1);
  for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
    Slot slot = shard.slots[i];
    if (!slot) return nullptr;
    if (slot.tag() != tag) continue;
    String* s = slot.string();
    if (s->length == bytes.size() && std::memcmp(s->data, bytes.data(), bytes.size()) == 0) return s;
  }
  return nullptr;
}

bool StringTable::grow(Shard& shard) {
  uint32_t newCapacity = shard.capacity ? shard.capacity * 2 : kInitialShardSlots;
  if (newCapacity > (1u << kTagBits)) return false;  // a slot's tag is its home
  return rehash(shard, newCapacity);
}

// After a sweep: a shard an eighth full or less halves until it is a quarter full at
// most (and at least the initial size), as lua's string table shrinks at a collection:
// strings made by the million and dropped no longer keep their slots for good. False
// when it kept its size.
bool StringTable::shrink(Shard& shard) {
  uint32_t capacity = shard.capacity;
  while (capacity > kInitialShardSlots && shard.count * 8 <= capacity) capacity /= 2;
  return capacity < shard.capacity && rehash(shard, capacity);
}

// Moves every slot into a new array of `capacity` slots; false if it cannot be had.
bool StringTable::rehash(Shard& shard, uint32_t capacity) {
  auto* slots = new (std::nothrow) Slot[capacity]();
  if (!slots) return false;
  Slot* old = shard.slots;
  uint32_t oldCapacity = shard.capacity;
  shard.slots = slots;
  shard.capacity = capacity;
  shard.count = 0;
  for (uint32_t i = 0; i < oldCapacity; ++i) {
    if (old[i]) insertSlot(shard, old[i]);
  }
  delete[] old;
  return true;
}

String* StringTable::intern(State& state, std::string_view bytes, uint32_t hash) {
  Shard& shard = shardFor(hash);
  lock(shard);
  if (String* s = findLocked(shard, bytes, hash)) {
    unlock(shard);
    return s;
  }
  String* result = nullptr;
  bool room = hasRoom(shard) || grow(shard) || shard.count + 1 < shard.capacity;
  if (room) result = allocateString(state, bytes.size());
  Slot slot = slotOf(result, hash);
  if (slot) {
    std::memcpy(result->data, bytes.data(), bytes.size());
    result->header.hash = hash;
    result->flags = kStringShort;
    insertSlot(shard, slot);
    noteYoung(shard, slot);
  } else {
    result = nullptr;  // garbage for the next collection
  }
  unlock(shard);
  return result;
}

String* StringTable::adopt(String* s, uint32_t hash) {
  Shard& shard = shardFor(hash);
  lock(shard);
  if (String* t = findLocked(shard, s->view(), hash)) {
    unlock(shard);
    return t;
  }
  String* result = nullptr;
  Slot slot = slotOf(s, hash);
  if (slot && (hasRoom(shard) || grow(shard) || shard.count + 1 < shard.capacity)) {
    s->header.hash = hash;
    s->header.aux = 0;
    s->flags = kStringShort;
    insertSlot(shard, slot);
    noteYoung(shard, slot);
    result = s;
  }
  unlock(shard);
  return result;
}

size_t StringTable::size() const {
  size_t total = 0;
  for (const Shard& shard : shards_) {
    lock(const_cast<Shard&>(shard));
    total += shard.count;
    unlock(const_cast<Shard&>(shard));
  }
  return total;
}

StringTable::Footprint StringTable::footprint() const {
  Footprint total;
  for (const Shard& shard : shards_) {
    lock(const_cast<Shard&>(shard));
    total.slots += shard.capacity;
    total.youngSlots += shard.youngCapacity;
    unlock(const_cast<Shard&>(shard));
  }
  return total;
}

// Re-packs a shard after entries were cleared: each surviving string is taken out and
// re-inserted from its home slot, once round the shard from `start`. `start` must have
// been free before the sweep: then no probe chain crosses it, every cluster is processed
// front to back, and a string lands between its home and its old slot, so no earlier
// string's chain gains a hole. A slot the sweep freed would not do: a chain that wrapped
// across it sends its string back across it, and a later move can then cut that chain;
// the string, still alive, is no longer found, and interning its bytes again makes a
// second copy (a table then holds the same key twice).
void StringTable::rebuildInPlace(Shard& shard, uint32_t start) {
  uint32_t mask = shard.capacity - 1;
  for (uint32_t n = 1; n <= mask; ++n) {
    uint32_t i = (start + n) & mask;
    Slot slot = shard.slots[i];
    if (!slot) continue;
    shard.slots[i] = Slot{};
    uint32_t j = slot.tag() & mask;
    while (shard.slots[j]) j = (j + 1) & mask;
    shard.slots[j] = slot;
  }
}

namespace {

bool isYoung(const String* s) { return !(asGc(s)->header.gcBits & gc::kBitOld); }

}  // namespace

// A live slot's string visited (moved: the slot follows it); false if it is dead.
bool StringTable::visitSlot(Slot& slot, gc::Visitor& visitor) {
  gc::Object* obj = asGc(slot.string());
  if (!visitor.isLive(obj)) return false;
  visitor.visit(obj);
  // The copy lies in the heap's chunks, below 2^48 as the original (invariant 3).
  slot = slotOf(reinterpret_cast<String*>(obj), slot.tag());
  return true;
}

void StringTable::sweepWeakRoots(gc::Visitor& visitor) {
  for (Shard& shard : shards_) sweepOneShard(shard, visitor);
}

// Called with the world stopped: the capacities are those the last safepoint saw.
size_t StringTable::weakRootParts() const {
  size_t slots = 0;
  for (const Shard& shard : shards_) slots += shard.capacity;
  return std::clamp<size_t>(slots / kSweepSlotsPerPart, 1, kShardCount);
}

void StringTable::sweepWeakRootPart(size_t part, size_t parts, gc::Visitor& visitor) {
  for (size_t i = part * kShardCount / parts; i < (part + 1) * kShardCount / parts; ++i)
    sweepOneShard(shards_[i], visitor);
}

void StringTable::sweepOneShard(Shard& shard, gc::Visitor& visitor) {
  if (!shard.capacity) return;
  gc::Pass pass = gc::passOf(visitor);
  lock(shard);  // uncontended: the world is stopped
  if (pass == gc::Pass::kMinor && !shard.youngAll) {
    sweepYoung(shard, visitor);
  } else {
    if (pass != gc::Pass::kCheck) {
      shard.youngCount = 0;
      shard.youngAll = false;
    }
    sweepShard(shard, visitor, pass == gc::Pass::kMinor);
  }
  if (pass != gc::Pass::kCheck) fitYoung(shard);
  unlock(shard);
}

void StringTable::sweepShard(Shard& shard, gc::Visitor& visitor, bool relist) {
  bool removed = false;
  // A slot already free when the loop reaches it was free before the sweep (the loop
  // clears only the slot it is at); every shard keeps one (intern never fills the last).
  uint32_t freeBefore = shard.capacity;
  for (uint32_t i = 0; i < shard.capacity; ++i) {
    // Every string's header is a cache miss (a large table holds megabytes of them):
    // asking for one a few slots ahead overlaps the misses instead of taking them in
    // turn.
    if (i + kSweepPrefetch < shard.capacity) {
      if (Slot ahead = shard.slots[i + kSweepPrefetch]) __builtin_prefetch(ahead.string());
    }
    Slot& slot = shard.slots[i];
    if (!slot) {
      if (freeBefore == shard.capacity) freeBefore = i;
      continue;
    }
    if (visitSlot(slot, visitor)) {
      if (relist && isYoung(slot.string())) noteYoung(shard, slot);
    } else {
      slot = Slot{};
      shard.count--;
      removed = true;
    }
  }
  if (removed && !shrink(shard)) rebuildInPlace(shard, freeBefore);
}

// Each young string is found by its address from its home slot (a survivor's slot is
// updated to its new address, which no young string of the list had: the collection
// copies into chunks that held no young object, so later searches cannot mistake it),
// then kept or erased. Those the minor kept young stay listed, at their new address.
void StringTable::sweepYoung(Shard& shard, gc::Visitor& visitor) {
  uint32_t mask = shard.capacity - 1;
  uint32_t kept = 0;
  for (uint32_t k = 0; k < shard.youngCount; ++k) {
    Slot young = shard.young[k];
    uint32_t i = young.tag() & mask;
    while (shard.slots[i] && shard.slots[i].bits != young.bits) i = (i + 1) & mask;
    if (!shard.slots[i]) continue;  // always found: only sweeps remove entries, and they update the lists
    if (!visitSlot(shard.slots[i], visitor)) {
      eraseSlot(shard, i);
      continue;
    }
    if (isYoung(shard.slots[i].string())) shard.young[kept++] = shard.slots[i];
  }
  shard.youngCount = kept;
}

}  // namespace weft::vm
