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
//  1. At most one short string object exists for each byte sequence.
//  2. A String's header.hash is its content hash; for long strings it is computed on
//     first use (aux bit 0 set once computed).
#pragma once

#include <cstdint>
#include <string_view>

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

uint32_t stringHash(String* s);
uint32_t hashBytes(std::string_view bytes, uint32_t seed);

// Lua equality on strings (short: identity; long: content).
bool stringEquals(const String* a, const String* b);
// Lua's ordering for strings (byte-wise, embedded zeros allowed, as strcoll in the C locale).
int stringCompare(const String* a, const String* b);

}  // namespace weft::vm
