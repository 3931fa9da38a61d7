// Lua tables: an array part for keys 1..arraySize and a hash part (open addressing,
// linear probing). All functions here are raw (no metamethods) and never collect; the
// ones that allocate may fail and say so in their result.
//
// Invariants:
//  1. A key lives in at most one part: integer keys 1..arraySize only in the array part.
//  2. Float keys with integral values are normalised to integers, and nil/NaN keys never
//     enter a table (value.h invariant 3).
//  3. Assigning nil to an existing key keeps the key (dead) until the next rehash, so
//     `next` works while a traversal assigns to existing fields.
//  4. Reads bound-check against the buffer's own capacity (object.h invariant 3).
//  5. The metamethod-absence cache in header.aux is cleared by every store into a table
//     (a table may be some other table's metatable).
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

// Fast-path read of the array part; nullptr if `key` is not in the array part.
inline const Value* tableArraySlot(const Table* t, int64_t key) {
  uint64_t i = uint64_t(key) - 1;
  if (i < t->arraySize && t->array && i < t->array->capacity) return &t->array->data[i];
  return nullptr;
}

// Raw writes. kRuntimeError for a nil or NaN key (the caller raises "index is nil" /
// "index is NaN"), kMemoryError when a resize cannot allocate. Never collects.
Status tableSet(State& state, Table* t, const Value& key, const Value& value);
Status tableSetInt(State& state, Table* t, int64_t key, const Value& value);
Status tableSetStr(State& state, Table* t, String* key, const Value& value);

// Pointer to the value slot of an existing key with a non-nil value, or nullptr. Stores
// through it must use storeValue(t, *slot, v) (barrier) and clear the cache (tableTouched).
Value* tableFindSlot(Table* t, const Value& key);

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
// Called after any store into `t` (clears the metamethod-absence cache).
inline void tableTouched(Table* t) { t->header.aux = 0; }

// Key normalisation: float keys with integer values become integers.
Value normaliseKey(const Value& key);

// Hash of a key value, as the hash part uses it (strings: content; objects: identity).
uint32_t hashValue(const Value& key);

}  // namespace weft::vm
