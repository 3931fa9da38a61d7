// Strings and the interned-string table.
//
// Protocol: short strings (<= kMaxShortString bytes) are interned: creating one looks it
// up in the StringTable and returns the existing object if present. The table is shared
// by every thread (scheduler issue): it is split into shards, each guarded by its own
// lock; a lookup locks one shard. The collector sweeps the table as a weak root
// (gc::WeakRootSource): strings only the table references die, and surviving entries are
// updated to their new addresses. Sweeping happens while the world is stopped.
//
// Invariants:
//  1. At most one short string object exists for each byte sequence, and every string
//     value of at most kMaxShortString bytes is that one (newStringUninit's buffers are
//     finished before they become values): a short string equals only itself, and a
//     long one only a long one. Checker: tests/lua/lang_tables_intern.lua (each string
//     builder's short result is the literal's table key).
//  2. A String's header.hash is its content hash; for long strings it is computed on
//     first use (aux bit 0 set once computed).
//  3. Heap objects lie below 2^48 (x86-64's and AArch64's user address space), so a
//     table slot packs an interned string's address with 20 bits of its hash into one
//     word (StringTable::Slot); a string that did not fit would not be interned (a
//     memory error), never mistaken for another. Checker:
//     StringTest.StringsWhoseSlotTagsCollideAreToldApart.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gc/spin_lock.h"
#include "vm/object.h"

namespace weft::vm {

class State;

// Creates (or finds, for short strings) a string. nullptr when memory is exhausted.
String* newString(State& state, std::string_view bytes);
// A long string of `length` uninitialised bytes for the caller to fill before it is used
// as a value (string.rep, table.concat, ..). Never interned; nullptr on exhaustion.
String* newStringUninit(State& state, size_t length);
// Interns a long string buffer built with newStringUninit if it turned out short;
// returns the canonical string (nullptr on exhaustion).
String* finishString(State& state, String* s);

uint32_t longStringHash(String* s);
// The content hash (invariant 2).
inline uint32_t stringHash(String* s) { return s->isShort() ? s->header.hash : longStringHash(s); }
uint32_t hashBytes(std::string_view bytes, uint32_t seed);
// The seed of every State in this process (random per process, fixed for its life): one
// seed lets the collector recompute a key's hash ("__mode") without a State at hand.
uint32_t processHashSeed();

bool longStringEquals(const String* a, const String* b);
// Lua equality on strings (short: identity; long: content; invariant 1). `b` is looked at
// first: a table lookup passes its key there, and an interned key then never reads the
// string of a node it probes past (bench/tables.lua spent 8% of its time on those reads).
inline bool stringEquals(const String* a, const String* b) {
  if (a == b) return true;
  if (b->isShort() || a->isShort()) return false;
  return longStringEquals(a, b);
}
// What %p shows for a string: one value per short string (they are interned), one per
// long string object (survives moves, as every identity hash does).
inline uint32_t stringIdentity(const String* s) { return s->isShort() ? s->header.hash : s->identity; }
// Lua's ordering for strings (byte-wise, embedded zeros allowed, as strcoll in the C locale).
int stringCompare(const String* a, const String* b);

// The interned short strings, sharded for many threads (protocol: vm/string.cpp).
class StringTable final : public gc::WeakRootSource {
 public:
  static constexpr uint32_t kShardCount = 64;

  StringTable();
  ~StringTable() override;
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  // The canonical short string for `bytes` (whose content hash is `hash`), allocating it
  // if absent. nullptr when memory is exhausted.
  String* intern(State& state, std::string_view bytes, uint32_t hash);
  // Interns a string object built elsewhere (finishString): returns the existing equal
  // string, or adopts `s` (marking it short). nullptr if the table cannot grow.
  String* adopt(String* s, uint32_t hash);
  // Number of interned strings (tests and statistics; takes every shard lock).
  size_t size() const;
  // Slots allocated, in the shards' arrays and in their young lists (tests; takes every
  // shard lock).
  struct Footprint {
    size_t slots = 0;
    size_t youngSlots = 0;
  };
  Footprint footprint() const;

  void sweepWeakRoots(gc::Visitor& visitor) override;
  // Runs of whole shards (shards share nothing the sweep writes), about
  // kSweepSlotsPerPart slots each (string.cpp), at most 64: one part for a small table.
  size_t weakRootParts() const override;
  void sweepWeakRootPart(size_t part, size_t parts, gc::Visitor& visitor) override;

 private:
  // One slot: the string's address (16-byte aligned, below 2^48: 44 bits) and the low
  // kTagBits bits of its hash in one word, so a probe reads only the array (eight
  // slots a cache line) and touches a string only when those bits match, and a shard
  // of up to 2^kTagBits slots finds a slot's home without reading its string. Half the
  // size of a slot with the whole hash and length beside the pointer: the table of
  // bench/sort_strings.lua (100,000 strings kept, as many made by each sort pass) took
  // 6 MB. A young list holds slots too.
  static constexpr unsigned kTagBits = 20;
  static constexpr unsigned kAddressBits = 44;
  struct Slot {
    uint64_t bits = 0;  // 0: free
    String* string() const { return reinterpret_cast<String*>((bits & ((uint64_t(1) << kAddressBits) - 1)) << 4); }
    uint32_t tag() const { return uint32_t(bits >> kAddressBits); }
    explicit operator bool() const { return bits != 0; }
  };
  // The slot of `s` (whose content hash is `hash`); a free slot for nullptr or an
  // address that does not fit (invariant 3).
  static Slot slotOf(const String* s, uint32_t hash) {
    auto address = reinterpret_cast<uintptr_t>(s);
    if (!s || address >> (kAddressBits + 4)) return Slot{};
    return Slot{address >> 4 | uint64_t(hash & ((1u << kTagBits) - 1)) << kAddressBits};
  }
  struct alignas(64) Shard {
    gc::SpinLock locked;  // the shard's lock (see string.cpp)
    uint32_t capacity = 0;            // slots, a power of 2 (0: not allocated yet)
    uint32_t count = 0;               // occupied slots
    Slot* slots = nullptr;            // owned
    // The young strings (inserted since the last collection, or kept young by it: a
    // minor's survivors, gc-v2.md "Survivor age"), which a minor sweeps instead of every
    // slot; youngAll: the list could not grow, so the next minor sweeps every slot.
    // Owned; under the lock, or world stopped.
    Slot* young = nullptr;
    uint32_t youngCount = 0;
    uint32_t youngCapacity = 0;
    bool youngAll = false;
  };
  static void insertSlot(Shard& shard, const Slot& slot);
  static void noteYoung(Shard& shard, const Slot& slot);
  static void fitYoung(Shard& shard);
  // Whether one more string keeps the shard within its load factor (string.cpp).
  static bool hasRoom(const Shard& shard) { return (shard.count + 1) * 8 <= shard.capacity * 7; }
  static void eraseSlot(Shard& shard, uint32_t i);
  // `relist`: a minor's, which lists again the strings it keeps young.
  static void sweepShard(Shard& shard, gc::Visitor& visitor, bool relist);
  static void sweepOneShard(Shard& shard, gc::Visitor& visitor);
  static void sweepYoung(Shard& shard, gc::Visitor& visitor);
  static String* findLocked(const Shard& shard, std::string_view bytes, uint32_t hash);
  static bool visitSlot(Slot& slot, gc::Visitor& visitor);
  static void lock(Shard& shard);
  static void unlock(Shard& shard);
  static bool grow(Shard& shard);
  static bool shrink(Shard& shard);
  static bool rehash(Shard& shard, uint32_t capacity);
  static void rebuildInPlace(Shard& shard, uint32_t start);
  Shard& shardFor(uint32_t hash) { return shards_[hash >> 26]; }

  Shard shards_[kShardCount];
};
static_assert(StringTable::kShardCount == 64, "shardFor takes the top 6 hash bits");

}  // namespace weft::vm
