// Lua tables: an array part for keys 1..arraySize and a hash part (open addressing,
// linear probing, Robin Hood order while no tasks run; table.cpp). All functions here
// are raw (no metamethods) and never collect; the ones that allocate may fail and say so
// in their result. Integer keys start their probe at a home slot of their own
// (tableHomeSlot); every other key at hashValue & mask.
//
// Invariants:
//  1. A key lives in at most one part: integer keys 1..arraySize only in the array part.
//  2. Float keys with integral values are normalised to integers, and nil/NaN keys never
//     enter a table (value.h invariant 3).
//  3. Assigning nil to an existing key keeps the key (dead) until the next rehash, so
//     `next` works while a traversal assigns to existing fields. The key is held
//     weakly: a collection replaces it by tableDeadKey() when nothing else reaches it
//     (vm/gctypes.cpp), as no traversal can continue from an object it does not hold.
//  4. Reads bound-check against the buffer's own capacity (object.h invariant 3).
//  5. The metamethod-absence cache in header.aux is cleared by every store into a table
//     (a table may be some other table's metatable); it is read and written atomically
//     (metaKnownAbsent, noteMetaAbsent, tableTouched).
//  6. Racing readers (DEVELOPERS.md invariant 6): a part pointer is loaded once, with
//     acquire (tableArrayPart/tableNodePart), and published with release after the
//     part is filled (table.cpp), so a reader sees a part's capacity and contents as
//     its writer left them. Every index into a part is checked against that part's own
//     capacity, never only against arraySize or a capacity read from another part.
//     Slots are read with loadSlot and written with storeValue (value.h invariant 4);
//     the slot-returning functions below hand out pointers for the caller to read so.
//  7. No write is lost to a racing writer of another key, and no write fails because of
//     one (docs/design/shared-tables.md). Structural changes (a new key, an append, a
//     rebuild) hold the table's claim, waiting for it if another writer has it. A store
//     into an existing slot takes no claim: it reads the sequence word before finding
//     the slot (tableWriteBegin) and checks it after the store (tableWriteHeld); if a
//     claim was held or taken meanwhile, the slot may have been copied before the store
//     reached it, and the store is done again through tableSet, which then claims.
//     A claim holder never reaches a safepoint, never collects and never waits for
//     anything but another claim, so waiting for a claim cannot deadlock with a stop.
#pragma once

#include <cstdint>

#include "vm/object.h"
#include "weft/status.h"

namespace weft::vm {

class State;

// Allocates a table with room for `arrayHint` array entries and `hashHint` hash entries.
// Returns nullptr when memory is exhausted.
Table* newTable(State& state, uint32_t arrayHint = 0, uint32_t hashHint = 0);

// Raw reads. A missing key reads as nil.
Value tableGet(const Table* t, const Value& key);
Value tableGetInt(const Table* t, int64_t key);
Value tableGetStr(const Table* t, const String* key);  // key may be short or long

// The parts as a racing reader must load them (invariant 6). Acquire pairs with the
// release that published the part; on x86-64 both are plain moves.
inline ValueArray* tableArrayPart(const Table* t) { return __atomic_load_n(&t->array, __ATOMIC_ACQUIRE); }
inline NodeArray* tableNodePart(const Table* t) { return __atomic_load_n(&t->nodes, __ATOMIC_ACQUIRE); }
// The logical array size: a hint for racing readers, who bound every index by the
// part's own capacity as well. Relaxed: it orders nothing.
inline uint32_t tableArraySize(const Table* t) { return __atomic_load_n(&t->arraySize, __ATOMIC_RELAXED); }

// Fast-path read of the array part; nullptr if `key` is not in the array part. The
// buffer is loaded once and checked against its own capacity (invariant 4).
inline const Value* tableArraySlot(const Table* t, int64_t key) {
  uint64_t i = uint64_t(key) - 1;
  const ValueArray* a = tableArrayPart(t);
  if (i < tableArraySize(t) && a && i < a->capacity) return &a->data[i];
  return nullptr;
}

// intHome's tables (vm/table.cpp), by the log2 of a node part's capacity, for compiled
// code, which computes the home of an integer key inline (vm/jit_abi.h WeftJitHost).
const uint32_t* tableIntModuli();
const uint64_t* tableIntReciprocals();
// Integer keys step this many slots per unit of residue. At most 3/4 of the slots are
// full, so an arithmetic run of keys fills at most 4 of every 5 slots and never forms
// one long cluster (docs/design/values.md).
inline constexpr uint32_t kTableIntSpread = 5;

// Value slot of an integer key in either part, or nullptr; the hash part out of line.
const Value* tableHashIntSlot(const Table* t, int64_t key);
inline const Value* tableIntSlot(const Table* t, int64_t key) {
  if (const Value* v = tableArraySlot(t, key)) [[likely]] return v;
  return tableHashIntSlot(t, key);
}

// Fast-path read of a short (interned) string key in the hash part: pointer compares
// only. Returns the value slot (which may hold nil: a dead key) or nullptr if absent.
// Short strings hash to their header.hash and start at hash & mask (tableHomeSlot agrees).
// The key's fields are read separately: a key torn by a racing insertion is compared,
// never dereferenced, and the pair (String, key) only matches if it was stored as such.
inline const Value* tableShortStrSlot(const Table* t, const String* key) {
  const NodeArray* na = tableNodePart(t);
  if (!na) return nullptr;
  uint32_t mask = na->capacity - 1;
  uint32_t i = key->header.hash & mask;
  for (uint32_t n = 0; n <= mask; ++n, i = (i + 1) & mask) {
    const Node& node = na->nodes[i];
    if (node.key.u.obj == asGc(key) && node.key.tag == Tag::String) return &node.value;
    if (node.key.tag == Tag::Nil) return nullptr;
  }
  return nullptr;
}

// Value slot of a string key (short or long) in the hash part, or nullptr. Long keys
// compare contents, out of line.
const Value* tableLongStrSlot(const Table* t, const String* key);
inline const Value* tableStrSlot(const Table* t, const String* key) {
  if (key->isShort()) [[likely]] return tableShortStrSlot(t, key);
  return tableLongStrSlot(t, key);
}

// Raw writes. kRuntimeError for a nil or NaN key (the caller raises "index is nil" /
// "index is NaN"), kMemoryError when a resize cannot allocate; never fails otherwise,
// whatever other tasks write at the same time (invariant 7). Never collects; may wait
// for another writer's claim (a few hundred instructions, or a rebuild's copy).
Status tableSet(State& state, Table* t, const Value& key, const Value& value);
Status tableSetInt(State& state, Table* t, int64_t key, const Value& value);
Status tableSetStr(State& state, Table* t, String* key, const Value& value);

// SETLIST: stores values[0..n) at keys first+1..first+n, pre-sizing the array part for
// them; kMemoryError when that cannot allocate. `values` must not be in the heap
// (a thread's stack is fine: nothing here collects or moves it).
Status tableSetList(State& state, Table* t, int64_t first, const Value* values, uint32_t n);

// Pointer to the value slot of an existing key with a non-nil value, or nullptr. Stores
// through it must use storeValue(t, *slot, v) (barrier), clear the cache (tableTouched)
// and be checked with tableWriteHeld against a tableWriteBegin read before this call.
Value* tableFindSlot(Table* t, const Value& key);

// A store into a slot found by the lookups above (invariant 7):
//   uint32_t seq = tableWriteBegin(t);  // before the lookup loads a part
//   ... find slot; storeValue(t, *slot, v) ...
//   if (!tableWriteHeld(t, seq)) store again with tableSet (or the metamethod path);
// Acquire on both loads pairs with the release that ends a claim: a writer that reads a
// newer word also sees the parts that claim published, so its lookup or its second
// store finds the live slot. The compiler fence keeps the check after the store in the
// program; the processor may still let the check's load pass the store, which the
// claim's heavy barrier (table.cpp) covers, so the fast path needs no fence instruction.
// The begun value drops the claim bit: if a claim was held, the word is g + 1 and the
// check passes only if it is back at g, which a claim that copied nothing leaves (a
// copying claim leaves g + 2; table.cpp, WriterClaim).
inline uint32_t tableWriteBegin(const Table* t) { return __atomic_load_n(&t->sync, __ATOMIC_ACQUIRE) & ~1u; }
[[gnu::always_inline]] inline bool tableWriteHeld(const Table* t, uint32_t begun) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return __atomic_load_n(&t->sync, __ATOMIC_ACQUIRE) == begun;
}

// A border of the table (Lua's # without __len).
uint64_t tableLength(Table* t);

// Traversal: given a key (nil to start), finds the next key/value pair in the table's
// order. Returns false at the end; kRuntimeError status if `key` is not in the table
// (the caller raises "invalid key to 'next'").
Status tableNext(const Table* t, Value& key, Value& value, bool& found);

// Pre-sizes the parts (used by OP_NEWTABLE, SETLIST and table.move). Never shrinks
// below the current contents. kMemoryError on allocation failure.
Status tableResize(State& state, Table* t, uint32_t arraySize, uint32_t hashSize);

void tableSetMetatable(Table* t, Table* mt);
// A table's metatable as a racing setmetatable left it: acquire pairs with
// tableSetMetatable's release, so the metatable's contents are seen as published.
inline Table* tableMetatable(const Table* t) { return __atomic_load_n(&t->metatable, __ATOMIC_ACQUIRE); }

// The metamethod-absence cache (header.aux; invariant 5). Every task that uses a
// metatable reads and fills it, and every store into the table clears it, so tasks
// sharing a table (DEVELOPERS.md invariant 6) reach it only atomically. Relaxed: a bit
// says only "this field was nil when looked up"; nothing else is published through it.
// A task that fills a bit while another stores that very field races on one key (the
// script's race): the bit may then outlive the store until the next store into the table.
inline bool metaKnownAbsent(const Table* mt, int event) {
  return __atomic_load_n(&mt->header.aux, __ATOMIC_RELAXED) & (1u << event);
}
inline void noteMetaAbsent(Table* mt, int event) {
  __atomic_fetch_or(&mt->header.aux, uint16_t(1u << event), __ATOMIC_RELAXED);
}
// Called after any store into `t` (clears the metamethod-absence cache).
inline void tableTouched(Table* t) { __atomic_store_n(&t->header.aux, uint16_t(0), __ATOMIC_RELAXED); }

// Key normalisation: float keys with integer values become integers.
Value normaliseKey(const Value& key);

// Hash of a key value (strings: content; objects: identity). Every key but an integer
// starts its probe at hashValue & (capacity - 1).
uint32_t hashValue(const Value& key);

// Slot where the probe for a normalised key starts in a hash part of `capacity` (a power
// of 2) nodes. Integer keys use a capacity-dependent home that keeps nearby and strided
// keys nearby in memory without clustering them (table.cpp, docs/design/values.md).
uint32_t tableHomeSlot(const Value& key, uint32_t capacity);

// Header bits of a table-owned ValueArray/NodeArray (its header.aux). An owned part is
// traced by its table (gctypes.cpp), which knows the table's weakness; the part's own
// trace then does nothing. The weak bits record the mode found by the last trace, for
// clearWeak and traceEphemeron.
inline constexpr uint16_t kPartOwnedByTable = 1;
inline constexpr uint16_t kPartWeakKeys = 2;
inline constexpr uint16_t kPartWeakValues = 4;

// The key the collector leaves in a node whose weak key died: non-nil, so probe chains
// stay intact, and equal to no key a program can build (a light userdata whose address
// is private to table.cpp). Its value is always nil, so `next` never returns it.
Value tableDeadKey();

}  // namespace weft::vm
