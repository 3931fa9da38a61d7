// Turning compiled prototypes into heap objects, and the constructors of the function
// and userdata objects. Every function here allocates without collecting (allocation
// never runs the collector; only safepoints do) and returns nullptr when memory is
// exhausted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "frontend/proto.h"
#include "vm/object.h"

namespace weft::vm {

class State;

// Builds the heap Proto tree of a compiled chunk: constant strings are interned (equal
// long string constants of the tree become one object, as Lua's compiler makes them),
// nested prototypes loaded recursively; the Proto takes ownership of the ProtoData (its code
// and debug information stay off-heap at stable addresses). Each Proto is registered
// with the heap as external, so its off-heap arrays are freed when it dies.
Proto* loadProto(State& state, std::unique_ptr<frontend::ProtoData> data);

// A Lua closure over `proto` with `nup` upvalue slots, all null (the caller fills them
// with storeRef before the closure can be reached by the collector's next safepoint).
LuaClosure* newLuaClosure(State& state, Proto* proto, uint32_t nup);
// A native closure with `nup` upvalues, all nil. `name` has static storage.
NativeClosure* newNativeClosure(State& state, NativeFn fn, const char* name, uint32_t nup);
// A closed upvalue holding `value`.
Upvalue* newUpvalueClosed(State& state, const Value& value);
// A full userdata of `size` zeroed bytes, no metatable, and `userValues` (at most
// kMaxUserValues) nil user values. It never moves (gc::Mutator::allocateNonMoving), so
// its payload's address stays valid for as long as it lives.
Userdata* newUserdata(State& state, size_t size, uint32_t userValues = 1);
// A userdata without user values whose `release` runs on the collecting thread after the
// collection that found it dead (or when the heap goes), instead of a __gc finalizer: no
// resurrection, no Lua call. `release` must not touch the heap.
Userdata* newHostUserdata(State& state, size_t size, UserdataRelease release);

}  // namespace weft::vm
