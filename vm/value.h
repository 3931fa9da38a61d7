// Lua values. A Value is 16 bytes: an 8-byte payload and a tag. The tag alone tells a
// heap reference from every other value (precise collection, no guessing): a value is a
// reference exactly when tag >= Tag::kFirstHeap, and then the payload is a pointer to
// the start of a gc::Object.
//
// Invariants:
//  1. isCollectable(v) <=> v.tag >= kFirstHeap <=> v.u.obj points to a live heap object
//     of the kind objectKindOf(v.tag).
//  2. Nil and False are the only falsy values, and they are the two smallest tags.
//  3. Float keys with an integral value are normalised to integers before they reach a
//     table (table.h); -0.0 and 0.0 are the same key.
//  4. A Value in a slot another task can reach (table parts, upvalue cells, native
//     closure upvalues, user values) is read with loadSlot (or loadSlotChecked, which
//     returns what one 16-byte load saw) and written with storeSlot
//     (through storeValue in object.h): one aligned 16-byte access each, so a reader
//     never combines the tag of one store with the payload of another (DEVELOPERS.md
//     invariant 6; docs/design/values.md).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

#include "gc/object.h"

namespace weft::vm {

struct String;
struct Table;
struct LuaClosure;
struct NativeClosure;
struct Userdata;
struct Thread;
struct Proto;
struct Upvalue;
struct ValueArray;
struct NodeArray;

// Object kinds as registered with the collector (gc::TypeInfo index).
enum class Kind : uint8_t {
  String = 0, Table, LuaClosure, NativeClosure, Userdata, Thread,
  // Kinds that are never Values:
  Proto, Upvalue, ValueArray, NodeArray,
  kCount
};

enum class Tag : uint8_t {
  Nil = 0,
  False = 1,
  True = 2,
  Int = 3,
  Float = 4,
  LightUserdata = 5,
  LightNative = 6,  // a native function without upvalues: a plain function pointer
  LightCFunction = 7,  // a C API function without upvalues (lua_CFunction): State::callLightC runs it
  kFirstHeap = 16,
  String = kFirstHeap + uint8_t(Kind::String),
  Table = kFirstHeap + uint8_t(Kind::Table),
  LuaClosure = kFirstHeap + uint8_t(Kind::LuaClosure),
  NativeClosure = kFirstHeap + uint8_t(Kind::NativeClosure),
  Userdata = kFirstHeap + uint8_t(Kind::Userdata),
  Thread = kFirstHeap + uint8_t(Kind::Thread),
};

class CallContext;
// A native function (see vm/api.h for the calling convention).
using NativeFn = struct NativeResult (*)(CallContext& cx);

// 16-byte aligned so that a slot is one naturally aligned vector word (loadSlot).
struct alignas(16) Value {
  union {
    int64_t i;
    double n;
    gc::Object* obj;
    void* p;
    NativeFn fn;
  } u;
  Tag tag;

  // Copies move the payload and the tag separately, never as one 16-byte word: values
  // are written field by field (a payload and a tag byte), and a 16-byte load of a slot
  // written that way misses store forwarding and stalls (docs/design/values.md).
  Value() = default;
  Value(const Value& o) : u(o.u), tag(o.tag) {}
  Value& operator=(const Value& o) {
    u = o.u;
    tag = o.tag;
    return *this;
  }

  // Construction.
  static Value nil() { Value v; v.u.i = 0; v.tag = Tag::Nil; return v; }
  static Value boolean(bool b) { Value v; v.u.i = 0; v.tag = b ? Tag::True : Tag::False; return v; }
  static Value integer(int64_t i) { Value v; v.u.i = i; v.tag = Tag::Int; return v; }
  static Value number(double n) { Value v; v.u.n = n; v.tag = Tag::Float; return v; }
  static Value lightUserdata(void* p) { Value v; v.u.p = p; v.tag = Tag::LightUserdata; return v; }
  static Value lightNative(NativeFn f) { Value v; v.u.fn = f; v.tag = Tag::LightNative; return v; }
  static Value object(gc::Object* o, Tag t) { Value v; v.u.obj = o; v.tag = t; return v; }
  static Value string(String* s) { return object(reinterpret_cast<gc::Object*>(s), Tag::String); }
  static Value table(Table* t) { return object(reinterpret_cast<gc::Object*>(t), Tag::Table); }
  static Value luaClosure(LuaClosure* c) { return object(reinterpret_cast<gc::Object*>(c), Tag::LuaClosure); }
  static Value nativeClosure(NativeClosure* c) { return object(reinterpret_cast<gc::Object*>(c), Tag::NativeClosure); }
  static Value userdata(Userdata* u) { return object(reinterpret_cast<gc::Object*>(u), Tag::Userdata); }
  static Value thread(Thread* t) { return object(reinterpret_cast<gc::Object*>(t), Tag::Thread); }

  // Classification.
  bool isNil() const { return tag == Tag::Nil; }
  bool isFalsy() const { return tag <= Tag::False; }
  bool isTruthy() const { return tag > Tag::False; }
  bool isBoolean() const { return tag == Tag::False || tag == Tag::True; }
  bool isInt() const { return tag == Tag::Int; }
  bool isFloat() const { return tag == Tag::Float; }
  bool isNumber() const { return tag == Tag::Int || tag == Tag::Float; }
  bool isString() const { return tag == Tag::String; }
  bool isTable() const { return tag == Tag::Table; }
  bool isLuaClosure() const { return tag == Tag::LuaClosure; }
  bool isFunction() const {
    return tag == Tag::LuaClosure || tag == Tag::NativeClosure || tag == Tag::LightNative ||
           tag == Tag::LightCFunction;
  }
  bool isUserdata() const { return tag == Tag::Userdata || tag == Tag::LightUserdata; }
  bool isThread() const { return tag == Tag::Thread; }
  bool isCollectable() const { return tag >= Tag::kFirstHeap; }

  // Access (callers check the tag first).
  int64_t asInt() const { return u.i; }
  double asFloat() const { return u.n; }
  double asNumber() const { return tag == Tag::Int ? double(u.i) : u.n; }
  gc::Object* asObject() const { return u.obj; }
  String* asString() const { return reinterpret_cast<String*>(u.obj); }
  Table* asTable() const { return reinterpret_cast<Table*>(u.obj); }
  LuaClosure* asLuaClosure() const { return reinterpret_cast<LuaClosure*>(u.obj); }
  NativeClosure* asNativeClosure() const { return reinterpret_cast<NativeClosure*>(u.obj); }
  Userdata* asUserdata() const { return reinterpret_cast<Userdata*>(u.obj); }
  Thread* asThread() const { return reinterpret_cast<Thread*>(u.obj); }
  NativeFn asLightNative() const { return u.fn; }
  void* asLightUserdata() const { return u.p; }

  // Same tag and same payload bits: raw identity (not Lua equality; see object.h).
  bool identical(const Value& o) const { return tag == o.tag && u.i == o.u.i; }
};
static_assert(sizeof(Value) == 16 && alignof(Value) == 16);

// Whether loadSlot/storeSlot cannot tear on this machine. Intel's and AMD's manuals
// guarantee that an aligned 16-byte SSE load or store is a single access on processors
// that support AVX; on anything else tasks must not run in parallel, so task.spawn
// refuses to start one (runtime/tasklib.cpp). Cached after the first call.
bool slotAccessIsAtomic();

// A slot publishes the value stored in it: a task that loads a reference from a slot
// another task stored sees the object as the storer saw it (x86 orders stores with
// stores and loads with loads). The slot accesses are asm, which ThreadSanitizer cannot
// see, so its builds are told of that release and acquire explicitly.
#if defined(__SANITIZE_THREAD__)
[[gnu::always_inline]] inline void slotPublished(const Value& slot) { __tsan_release(const_cast<Value*>(&slot)); }
[[gnu::always_inline]] inline void slotObserved(const Value& slot) { __tsan_acquire(const_cast<Value*>(&slot)); }
#else
[[gnu::always_inline]] inline void slotPublished(const Value&) {}
[[gnu::always_inline]] inline void slotObserved(const Value&) {}
#endif

#if defined(__x86_64__)
// One aligned 16-byte load. Written as asm, not an intrinsic: the compiler may turn a
// vector load whose halves are extracted into two narrower loads, which could tear. A
// slot written by storeSlot (one 16-byte store) forwards to it without a stall.
[[gnu::always_inline]] inline Value loadSlot(const Value& slot) {
  __m128i bits;
  asm("movdqa %1, %0" : "=x"(bits) : "m"(slot));
  slotObserved(slot);
  Value v;
  v.u.i = _mm_cvtsi128_si64(bits);
  v.tag = Tag(_mm_extract_epi16(bits, 4));
  return v;
}
// loadSlot for a fast path whose next steps depend on the value (a call through it, a
// field of it): the fields are read with plain loads, whose results reach those steps
// sooner than fields moved out of a vector register, and the 16-byte load only
// confirms them, off the dependent path (fib 8% faster than a 16-byte copy). When both
// fields equal those of the single 16-byte load, the pair is a value some store wrote,
// whatever the plain loads saw in between; otherwise that load's value is taken.
// Relaxed atomics keep the compiler from merging the plain loads into one access.
[[gnu::always_inline]] inline Value loadSlotChecked(const Value& slot) {
  Value v;
  v.u.i = __atomic_load_n(&slot.u.i, __ATOMIC_RELAXED);
  // Through the tag's byte: clang's __atomic builtins take integers, not enums.
  v.tag = Tag(__atomic_load_n(reinterpret_cast<const uint8_t*>(&slot.tag), __ATOMIC_RELAXED));
  __m128i bits;
  asm("movdqa %1, %0" : "=x"(bits) : "m"(slot));
  slotObserved(slot);
  int64_t payload = _mm_cvtsi128_si64(bits);
  Tag tag = Tag(uint8_t(_mm_extract_epi16(bits, 4)));
  if (payload != v.u.i || tag != v.tag) [[unlikely]] {
    v.u.i = payload;
    v.tag = tag;
  }
  return v;
}
// One aligned 16-byte store of `v`, assembled from its two fields in registers: a
// Value written field by field (a register result) is never reloaded as one 16-byte
// word, which would miss store forwarding (docs/design/values.md). The padding after
// the tag is stored as zero. Asm again, so the store is never split in two.
[[gnu::always_inline]] inline void storeSlot(Value& slot, const Value& v) {
  __m128i bits = _mm_set_epi64x(int64_t(uint8_t(v.tag)), v.u.i);
  slotPublished(slot);
  asm volatile("movdqa %1, %0" : "=m"(slot) : "x"(bits));
}
#else
// No single-access guarantee here: there are no tasks (slotAccessIsAtomic).
inline Value loadSlot(const Value& slot) { return slot; }
inline void storeSlot(Value& slot, const Value& v) { slot = v; }
inline Value loadSlotChecked(const Value& slot) { return slot; }
#endif

// Lua's basic types, numbered as lua.h numbers them; State::typeMetatables is indexed
// by this (the string library sets typeMetatables[int(BasicType::String)]).
enum class BasicType : uint8_t {
  Nil = 0, Boolean, LightUserdata, Number, String, Table, Function, Userdata, Thread,
};
inline BasicType basicType(const Value& v) {
  switch (v.tag) {
    case Tag::Nil: return BasicType::Nil;
    case Tag::False: case Tag::True: return BasicType::Boolean;
    case Tag::Int: case Tag::Float: return BasicType::Number;
    case Tag::LightUserdata: return BasicType::LightUserdata;
    case Tag::LightNative: case Tag::LightCFunction: case Tag::LuaClosure: case Tag::NativeClosure:
      return BasicType::Function;
    case Tag::String: return BasicType::String;
    case Tag::Table: return BasicType::Table;
    case Tag::Userdata: return BasicType::Userdata;
    case Tag::Thread: return BasicType::Thread;
  }
  return BasicType::Nil;
}
// The name of each basic type, by BasicType: what type() returns (lua_typename's).
inline constexpr const char* kBasicTypeNames[] = {"nil",   "boolean",  "userdata", "number", "string",
                                                  "table", "function", "userdata", "thread"};

inline constexpr Kind objectKindOf(Tag t) { return Kind(uint8_t(t) - uint8_t(Tag::kFirstHeap)); }

// Lets a trace function visit the reference a Value holds (collector may update it).
inline gc::Object*& referenceSlot(Value& v) { return v.u.obj; }

}  // namespace weft::vm
