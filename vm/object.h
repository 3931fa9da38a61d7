// Heap object layouts. Every object starts with gc::ObjectHeader (gc/object.h) and is
// trivially relocatable: the collector may move any of them at any safepoint. Fields
// that hold references point at the start of other heap objects; fields that hold
// off-heap memory (Proto's code, a Thread's stack) own it, and the object is registered
// with gc::Heap::registerExternal so the memory is released when it dies.
//
// Invariants:
//  1. No object points into a stack (DEVELOPERS.md invariant 2): an open upvalue names
//     its thread and a stack index, never a stack address, and only that thread reads
//     or writes the register (Upvalue).
//  2. Every reference store into an object goes through gc::writeBarrier (use the
//     setters in this file or table.h; never assign a reference field directly
//     after the object was allocated).
//  3. Buffers are bounds-checked against their own capacity field, never against a
//     size cached elsewhere, so a racing resize cannot make a read go out of bounds
//     (invariant 6).
//  4. ObjectHeader::hash is the identity hash of tables, functions, userdata and
//     threads; for strings it is the content hash.
//  5. Value fields sit at 16-byte offsets (static_asserts below) and are read with
//     loadSlot and written with storeValue/storeSlot when another task can reach them
//     (value.h invariant 4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frontend/proto.h"
#include "gc/heap.h"
#include "vm/value.h"

namespace weft::vm {

using frontend::Instruction;

inline gc::Object* asGc(const void* p) { return reinterpret_cast<gc::Object*>(const_cast<void*>(p)); }

// Strings are immutable byte sequences. Short strings (length <= kMaxShortString) are
// interned, so two short strings are equal iff they are the same object.
inline constexpr size_t kMaxShortString = 40;
struct String {
  gc::ObjectHeader header;  // hash: content hash (aux bit 0: hash computed, for long strings)
  uint32_t flags;           // kStringShort | kStringReserved (a reserved word index in the upper bits)
  uint32_t identity;        // long strings: the identity hash allocation gave (header.hash is
                            // the content hash), so %p tells equal long strings apart, as Lua's
                            // addresses do; short strings: unused (interned, one per content)
  size_t length;
  char data[1];             // length bytes followed by a NUL

  std::string_view view() const { return {data, length}; }
  bool isShort() const { return flags & 1u; }
};
inline constexpr uint32_t kStringShort = 1u;

// A plain array of values: the array part of a table, a thread's to-be-closed list, etc.
struct ValueArray {
  gc::ObjectHeader header;
  uint32_t capacity;
  uint32_t pad;
  Value data[1];
};

struct Node {
  Value key;    // nil key: empty slot. A key whose value is nil is dead but stays until
                // the next rehash so `next` can continue past it.
  Value value;
};

// The hash part of a table: open addressing with linear probing, capacity a power of 2.
struct NodeArray {
  gc::ObjectHeader header;
  uint32_t capacity;
  uint32_t unordered;  // nonzero once a key was placed out of Robin Hood order (table.cpp)
  Node nodes[1];
};

// Metamethod absence cache bits live in Table::header.aux (bit set: "metatable has no
// such field"), for the fast metamethods __index, __newindex, __gc, __mode, __len, __eq.
struct Table {
  gc::ObjectHeader header;
  Table* metatable;
  ValueArray* array;    // array part: keys 1..arraySize, may be null
  NodeArray* nodes;     // hash part, may be null
  uint32_t arraySize;   // logical size of the array part (<= array->capacity)
  uint32_t nodeCount;   // live+dead keys in the hash part (for the load factor)
  uint32_t lengthHint;  // a border found by the last # (speeds up the next)
  // Writers' sequence word (table.cpp, "Shared writers"): odd while a writer holds the
  // table's claim. Every writer of any thread reads it; claimers take and release it.
  // Always 0 while no tasks run.
  uint32_t sync;
};

struct Proto;

// A variable captured by closures. Closures, of any task, read and write it only in
// `cell` (loadSlot/storeValue), open or closed. While open, the frame that declared it
// also keeps it in its register, which only the owning thread touches; that thread
// reconciles the two between instructions of the frame (thread.h, syncOpenUpvalues),
// so no task ever reads another thread's stack (docs/design/values.md).
struct Upvalue {
  gc::ObjectHeader header;
  Thread* thread;   // open: the thread whose frame holds the register; closed: null
  uint32_t index;   // open: the register's stack index in `thread`
  uint32_t pad;
  Upvalue* nextOpen;  // open: next open upvalue of the same thread (descending index)
  Value cell;       // the variable as closures see it
  Value shadow;     // open: the value register and cell last agreed on; closed: nil
};

struct LuaClosure {
  gc::ObjectHeader header;
  Proto* proto;
  uint32_t numUpvalues;
  uint32_t pad;
  Upvalue* upvalues[1];
};

struct NativeClosure {
  gc::ObjectHeader header;
  NativeFn fn;
  const char* name;  // for messages ("bad argument #1 to 'insert'"); static storage
  uint32_t numUpvalues;
  uint32_t pad;
  void (*cfunction)();  // a C API closure (lua_pushcclosure): its lua_CFunction; else null
  Value upvalues[1];
};

// A function prototype. Its code and debug information live off-heap in the ProtoData
// the compiler produced (stable addresses: a frame's pc may point into the code across a
// collection); constants and nested prototypes are heap references held in off-heap
// arrays that the collector traces and updates.
struct Proto {
  gc::ObjectHeader header;
  frontend::ProtoData* data;  // owned; code, lineinfo, locals, upvalue descriptions
  const Instruction* code;    // == data->code.data()
  Value* constants;           // owned off-heap array, data->constants.size() entries
  Proto** protos;             // owned off-heap array, data->protos.size() entries
  String* source;             // chunk name
  uint32_t codeSize;
  uint32_t numConstants;
  uint32_t numProtos;
  uint16_t numUpvalues;  // at most 255 (frontend)
  // The JIT tier's quiet epoch when a frame change last found nothing to do for this
  // prototype, or its code last waited for a callee's (vm/jit.h, JitTier::quietEpoch,
  // waitForCallee); 0 never matches. Any worker, relaxed.
  uint16_t jitQuiet;
  uint8_t numParams;
  uint8_t isVararg;
  uint8_t maxStackSize;
  // Calls of p counted while it waited to be queued, up to 2 (vm/jit.h, jitCharge): a
  // main chunk called once whose loops grew hot runs in one frame only, whose loops the
  // JIT may find too short to compile (docs/design/jit.md, "Short loops").
  uint8_t jitCalls;
  // Calls plus loop back-edges seen while the JIT is on (vm/jit.h, jitCharge).
  uint32_t jitHotness;
  // Type feedback (vm/jit_abi.h): off-heap, codeSize bytes, then codeSize bytes of field
  // slot hints, allocated when the JIT first profiles the prototype; null before. Set
  // once by compare-and-swap.
  uint8_t* jitProfile;
  // Nested prototypes share their chunk's ProtoData tree: `root` is the top-level Proto
  // whose `data` owns the tree (null when this Proto is the root). A nested Proto keeps
  // its root alive, so its `data` (a node of the tree) outlives it; only a root frees
  // `data` (string.dump and debug information can walk the whole ProtoData tree).
  Proto* root;
  // Compiled code (vm/jit.h): off-heap, shared with a pending compile job; null until
  // the prototype is first queued. Set once by compare-and-swap.
  struct JitCode* jit;
  // A number no other Proto of the process has had (vm/proto.cpp): compiled code that
  // runs this prototype's body in place of a call tests it (jit/lower_inline.cpp), where
  // an address could be a dead prototype's reused.
  uint64_t uid;
};

// Full userdata: a block of bytes with a metatable and `userValues` user values, fixed at
// creation as lua_newuserdatauv's count (io handles have none), at most kMaxUserValues
// (Lua's limit). The bytes start at a fixed, 16-byte aligned offset (lua_touserdata is
// `data`); the user values follow them (userValueSlot), at a 16-byte aligned offset.
inline constexpr uint32_t kMaxUserValues = 65534;
struct Userdata;
// Frees what a host userdata owns off the heap (newHostUserdata); returns the bytes it
// had noted with gc::Mutator::noteExternalBytes.
using UserdataRelease = size_t (*)(Userdata* u);
struct Userdata {
  gc::ObjectHeader header;
  Table* metatable;
  size_t size;
  uint32_t userValues;
  uint32_t pad;
  UserdataRelease release;  // nullptr but for host userdata; called once, when it dies
  alignas(16) unsigned char data[16];
};

// Value fields of heap objects are 16-byte aligned (objects are, gc/object.h), so
// loadSlot and storeSlot are single aligned accesses (value.h invariant 4).
static_assert(gc::kObjectAlignment % alignof(Value) == 0);
static_assert(offsetof(ValueArray, data) % 16 == 0 && offsetof(NodeArray, nodes) % 16 == 0);
static_assert(offsetof(Node, value) % 16 == 0 && sizeof(Node) % 16 == 0);
static_assert(offsetof(Upvalue, cell) % 16 == 0 && offsetof(Upvalue, shadow) % 16 == 0);
static_assert(offsetof(NativeClosure, upvalues) % 16 == 0);
static_assert(offsetof(Userdata, data) % 16 == 0);

inline constexpr size_t stringSize(size_t length) { return offsetof(String, data) + length + 1; }
// Card marking (gc-v2.md "Cards"): an array part of at least kCardMinSlots slots keeps
// a byte per kCardSlots slots after its data, set by the barrier when an old table
// receives a young value there, so a minor traces only the dirty ranges of a big old
// array instead of all of it.
inline constexpr uint32_t kCardSlots = 128;
inline constexpr uint32_t kCardMinSlots = 1024;
inline constexpr uint32_t valueArrayCardCount(uint32_t n) {
  return n < kCardMinSlots ? 0 : (n + kCardSlots - 1) / kCardSlots;
}
inline constexpr size_t valueArraySize(uint32_t n) {
  return offsetof(ValueArray, data) + sizeof(Value) * n + valueArrayCardCount(n);
}
// From the object's base, not from `data`, whose declared one slot it passes.
inline uint8_t* valueArrayCards(ValueArray* a) {
  return reinterpret_cast<uint8_t*>(a) + offsetof(ValueArray, data) + sizeof(Value) * a->capacity;
}
inline constexpr size_t nodeArraySize(uint32_t n) { return offsetof(NodeArray, nodes) + sizeof(Node) * n; }
inline constexpr size_t luaClosureSize(uint32_t n) { return offsetof(LuaClosure, upvalues) + sizeof(Upvalue*) * (n ? n : 1); }
inline constexpr size_t nativeClosureSize(uint32_t n) { return offsetof(NativeClosure, upvalues) + sizeof(Value) * (n ? n : 1); }
inline constexpr size_t userdataBytesRounded(size_t n) { return n == 0 ? 16 : (n + 15) & ~size_t(15); }
inline constexpr size_t userdataSize(size_t n, uint32_t userValues) {
  return offsetof(Userdata, data) + userdataBytesRounded(n) + sizeof(Value) * userValues;
}
// User value i (0-based, i < userValues) of a full userdata.
inline Value& userValueSlot(Userdata* u, uint32_t i) {
  // From the object's base, not from `data`, whose declared 16 bytes it may pass
  // (UBSan's array-bounds check, in the fuzz build).
  char* values = reinterpret_cast<char*>(u) + offsetof(Userdata, data) + userdataBytesRounded(u->size);
  return reinterpret_cast<Value*>(values)[i];
}

// Registers the TypeInfo of every kind defined here (all but Thread, which
// vm/thread.cpp registers with registerThreadKind). Implemented in vm/gctypes.cpp.
void registerObjectKinds(gc::Heap& heap);

// Reference stores (object.h invariant 2).
template <typename Holder, typename T>
inline void storeRef(Holder* holder, T*& field, T* value) {
  gc::writeBarrier(asGc(holder), asGc(value));
  field = value;
}
// Always inlined: the interpreter's table stores are this plus one test. The store is
// one 16-byte access (storeSlot): another task may be reading the field.
template <typename Holder>
[[gnu::always_inline]] inline void storeValue(Holder* holder, Value& field, const Value& value) {
  if (value.isCollectable()) gc::writeBarrier(asGc(holder), value.u.obj);
  storeSlot(field, value);
}
// A table's stores: a slot of its array part that keeps cards has its card set (out of
// line, table.cpp: only an old table receiving a young value asks).
uint8_t* arrayCardOf(Table* t, const Value* field);
[[gnu::always_inline]] inline void storeValue(Table* t, Value& field, const Value& value) {
  if (value.isCollectable()) gc::writeBarrier(asGc(t), value.u.obj, [t, &field] { return arrayCardOf(t, &field); });
  storeSlot(field, value);
}
// The slow path of storeValue's barrier out of line, for compiled code's stores (their
// test is inline: vm/jit.cpp jitLayout): a young value stored into `field` of old `t`.
void tableRememberYoung(Table* t, const Value* field);

}  // namespace weft::vm
