// The object header every heap object starts with, and the per-kind type table through
// which the collector sizes and traces objects it otherwise knows nothing about
// (gc/ knows nothing of vm: the VM registers one TypeInfo per object kind).
//
// Invariants:
//  1. Every heap object begins with ObjectHeader and is at least kMinObjectSize bytes,
//     16-byte aligned, so a 16-byte field at a 16-byte offset can be read and written in
//     one access (the VM's values, docs/design/values.md), and a forwarding address
//     fits in the header word with the kind (forwardedWord): a moved object's old image
//     keeps its body, which parallel markers may still be reading (gc-v2.md "Parallel
//     majors").
//  2. ObjectHeader::hash is preserved by every move: objects keep their identity hash.
//  3. Objects are trivially relocatable: they hold only plain data, references to the
//     start of other heap objects, and pointers to off-heap memory they own. Nothing in
//     them points into a stack or into the middle of another heap object.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace weft::gc {

inline constexpr size_t kObjectAlignment = 16;
inline constexpr size_t kMinObjectSize = 16;
inline constexpr uint8_t kForwardedKind = 0xff;  // header of a moved object's old copy
inline constexpr int kMaxKinds = 32;

struct alignas(8) ObjectHeader {  // one word: parallel markers load and CAS it whole
  uint8_t kind;     // index into the heap's TypeInfo table, or kForwardedKind
  uint8_t gcBits;   // owned by the collector (see heap.h kBit*)
  uint16_t aux;     // free for the object kind (e.g. a table's metamethod-absence cache)
  uint32_t hash;    // identity hash, assigned at allocation; a kind may overwrite it
                    // with a content hash (strings); the collector only preserves it
};
static_assert(sizeof(ObjectHeader) == 8);

struct Object {
  ObjectHeader header;
};

// The header as one word, read and written atomically while parallel markers run: one
// compare-and-swap of it claims an object (marker.cpp). may_alias: the word overlays
// the header's fields, which the rest of the code reads by name.
using HeaderWord = uint64_t __attribute__((may_alias));
static_assert(std::endian::native == std::endian::little, "kind is the header word's low byte");
inline uint64_t loadHeaderWord(const Object* obj) {
  return __atomic_load_n(reinterpret_cast<const HeaderWord*>(&obj->header), __ATOMIC_ACQUIRE);
}
inline constexpr uint8_t kindOfWord(uint64_t word) { return static_cast<uint8_t>(word); }
inline constexpr uint8_t gcBitsOfWord(uint64_t word) { return static_cast<uint8_t>(word >> 8); }
inline constexpr uint64_t withGcBits(uint64_t word, uint8_t bits) {
  return (word & ~uint64_t{0xff00}) | (uint64_t{bits} << 8);
}
// A forwarded header: kForwardedKind in the kind byte, the copy's address (16-byte
// aligned, below 2^60) in the rest.
inline uint64_t forwardedWord(const Object* to) { return (reinterpret_cast<uintptr_t>(to) << 4) | kForwardedKind; }
inline Object* forwardeeOfWord(uint64_t word) { return reinterpret_cast<Object*>((word & ~uint64_t{0xff}) >> 4); }
// Where a collection moved `obj`, or `obj` itself if it has not moved.
inline Object* currentAddress(Object* obj) {
  uint64_t word = loadHeaderWord(obj);
  return kindOfWord(word) == kForwardedKind ? forwardeeOfWord(word) : obj;
}

class Visitor;

// How the collector handles one object kind. Registered by the VM at start-up.
struct TypeInfo {
  const char* name = nullptr;
  // Non-zero for kinds whose every object has this size (header included): the
  // collector then never calls sizeOf for them (one indirect call less per copy).
  size_t fixedSize = 0;
  // Size in bytes of the object (header included), rounded up by the heap to alignment.
  // Must equal the `bytes` the object was allocated with (rounded the same way), or the
  // verifier's heap walk reports the mismatch.
  size_t (*sizeOf)(const Object* obj) = nullptr;
  // Calls visitor.visit(slot) for every reference the object holds (off-heap buffers it
  // owns included). A weak container visits its strong parts only and calls
  // visitor.deferWeak(obj) (see Visitor).
  void (*trace)(Object* obj, Visitor& visitor) = nullptr;
  // For weak containers: after strong tracing, drop entries whose weak parts are dead
  // (visitor.isLive) and update the surviving references (visitor.visit). `phase` tells
  // which parts to clear (see WeakPhase): in a kClearValues-only call, leave weak keys
  // alone (neither test nor visit them; they are decided after resurrection). Visiting
  // an already-updated reference again is harmless; visiting a dead one leaves the slot
  // unchanged (the entry must then be dropped, or --gc-verify reports it). The verifier
  // also calls clearWeak, with isLive always true: it must then change nothing (and so
  // visits every weak reference, which is how verify checks them).
  void (*clearWeak)(Object* obj, Visitor& visitor, int phase) = nullptr;
  // For ephemeron containers (weak keys, strong values): trace the values whose keys are
  // live; return true if anything was newly reached. (The collector detects the fixpoint
  // by its own copy count, so returning true too often costs time, never correctness.)
  bool (*traceEphemeron)(Object* obj, Visitor& visitor) = nullptr;
  // Optional, for kinds whose objects may hold very many references (a table's big
  // parts): the trace in parts that an incremental major's slices use, so no slice
  // traces a million-slot array at once (gc/incremental.cpp). Visits what trace visits,
  // from position `from` (0: the start; the positions are the kind's own) until about
  // `budget` references were visited, which it subtracts from `budget`, and returns the
  // position to continue from, or 0 when it visited the rest. Between two calls the
  // mutators may change the object (every store through the barrier): a position past
  // its end means the rest is done.
  size_t (*tracePart)(Object* obj, Visitor& visitor, size_t from, size_t& budget) = nullptr;
  // Optional, for small objects whose trace reads memory outside the heap: issue
  // prefetches for it. The scan calls it with stage 0 some objects of such kinds ahead
  // of the one it traces, then with stage 1 half as far ahead (so stage 1 may read what
  // stage 0 prefetched, to prefetch one pointer further). It must only read, and only
  // what trace would.
  void (*prefetch)(const Object* obj, int stage) = nullptr;
  // Frees off-heap memory of an object that died. Called only for objects registered
  // with Heap::registerExternal, once, after the collection that found them dead.
  // Returns the bytes it accounted for with Mutator::noteExternalBytes (they stop
  // pacing collections).
  size_t (*release)(Object* obj) = nullptr;
  // Objects of this kind are written from one end to the other as they are made (a
  // string's bytes): a large one's chunk is populated whole at once, not its first half
  // (gc-v2.md "Pages populated ahead").
  bool writtenWhole = false;
};

// Weak clearing phases, in the order of the Lua 5.4 manual §2.5.4: weak values are
// cleared before finalizable objects are resurrected, weak keys after.
enum WeakPhase : int { kClearValues = 1, kClearKeys = 2 };

}  // namespace weft::gc
