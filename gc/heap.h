// The heap and its collector, version 1: precise, copying (Cheney), stop-the-world, run
// only at safepoints.
//
// Protocol:
//  - Mutators allocate with Mutator::allocate, which never collects. When the heap grows
//    past its threshold, allocation raises `collectionRequested`; the VM polls it at its
//    safepoints (Heap::safepointMayGC) and the collection runs there.
//  - A collection traces the roots (RootSources, handles, pending finalizers), copies
//    every reachable movable object into fresh space, processes weak containers and
//    finalizable objects (Lua 5.4 manual §2.5), sweeps weak roots (the string table),
//    releases off-heap memory of dead registered objects, and discards the old space.
//  - Between safepoints no object moves, so code that cannot reach a safepoint may hold
//    raw Object pointers freely.
//
// Invariants (each has a checker: --gc-verify, or a named unit test):
//  1. Collections happen only inside safepointMayGC/collectMayGC (a function that may
//     collect says MayGC in its name).
//  2. After a collection no root and no reachable object refers to old space; with
//     verify on, verifyHeap() checks every reference before and after each collection
//     (valid kind, inside current space, not forwarded).
//  3. Every reference store into a heap object goes through writeBarrier().
//  4. Identity hashes survive moves (object.h invariant 2).
//  5. Allocation beyond the heap limit fails with nullptr; it never aborts.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gc/object.h"
#include "weft/status.h"

namespace weft::gc {

class Heap;

// What the stress mode does at safepoints.
enum class StressMode : uint8_t {
  kNone,
  kCollect,   // --gc-stress: collect at every (or every N-th / seeded random) safepoint
  kRelocate,  // --gc-stress=relocate: as kCollect, and every collection moves every
              // movable object; old space is poisoned and protected so a stale
              // pointer faults at once and is reported as a stale reference
};

struct Config {
  StressMode stress = StressMode::kNone;
  bool verify = false;          // --gc-verify
  uint64_t interval = 1;        // --gc-interval=N: stress collects every N-th safepoint
  uint64_t seed = 0;            // --gc-seed=S (non-zero): at random safepoints, 1 in N on average
  size_t heapLimit = 0;         // --heap-limit in bytes; 0 means none
  size_t initialThreshold = 4u << 20;  // bytes allocated before the first collection
  unsigned pauseMultiplier = 200;      // next threshold = live * pause / 100
};

// Written by the collector and the refill path; read by the VM thread.
struct Stats {
  uint64_t collections = 0;
  uint64_t bytesAllocatedTotal = 0;  // up to the last buffer refill or collection
  uint64_t bytesCopiedTotal = 0;
  uint64_t totalPauseNanos = 0;
  uint64_t longestPauseNanos = 0;
};

// Visits reference slots. The collector's copying visitor updates each slot to the
// object's new address; the verifier's visitor checks it.
class Visitor {
 public:
  virtual ~Visitor() = default;
  // `slot` holds a reference to the start of a heap object (never null).
  virtual void visit(Object*& slot) = 0;
  // Called by a weak container's trace function instead of visiting its weak parts.
  virtual void deferWeak(Object* container, bool weakKeys, bool weakValues) {}
  // During weak processing: whether the object the slot refers to was reached.
  virtual bool isLive(Object* obj) { return true; }
};

// Something outside the heap that holds references: the VM's global state, a host's
// registered container. traceRoots must visit every reference it holds.
class RootSource {
 public:
  virtual ~RootSource() = default;
  virtual void traceRoots(Visitor& visitor) = 0;
};

// Weak roots (the interned string table): after tracing, sweepWeakRoots must drop every
// entry whose object is dead (!visitor.isLive) and update the rest (visitor.visit).
class WeakRootSource {
 public:
  virtual ~WeakRootSource() = default;
  virtual void sweepWeakRoots(Visitor& visitor) = 0;
};

// Runs finalizers: the VM drains pending finalizable objects at its safepoints.
// (Heap::takePendingFinalizer.)

// Header bits owned by the collector (ObjectHeader::gcBits).
inline constexpr uint8_t kBitEpoch = 0x01;        // which space generation the object is in
inline constexpr uint8_t kBitFinalizable = 0x02;  // registered with registerFinalizable
inline constexpr uint8_t kBitExternal = 0x04;     // registered with registerExternal

// Bytes a request of `bytes` occupies: rounded up to alignment, at least kMinObjectSize.
constexpr size_t roundObjectSize(size_t bytes) {
  return bytes < kMinObjectSize ? kMinObjectSize : (bytes + kObjectAlignment - 1) & ~(kObjectAlignment - 1);
}

struct Chunk;

// A thread's allocation context. Today a heap has one; the scheduler issue gives each
// worker its own, with a private bump buffer refilled from the shared heap. All fields
// are touched only by the owning thread, and by the collector while the world is stopped.
class Mutator {
 public:
  explicit Mutator(Heap& heap);
  ~Mutator();
  Mutator(const Mutator&) = delete;
  Mutator& operator=(const Mutator&) = delete;

  // Allocates `bytes` (header included) of kind `kind`, zero-filled, with a fresh
  // identity hash. Never collects. Returns nullptr if the heap limit would be exceeded
  // (or the system is out of memory).
  inline Object* allocate(uint8_t kind, size_t bytes);

  Heap& heap() { return heap_; }

 private:
  friend class Heap;
  friend class Collector;
  Object* allocateSlow(uint8_t kind, size_t bytes);
  inline Object* initObject(char* p, uint8_t kind);
  Heap& heap_;
  char* cursor_ = nullptr;  // bump region [cursor_, limit_) owned by this mutator
  char* limit_ = nullptr;
  Chunk* chunk_ = nullptr;  // the chunk the bump region lies in
  uint32_t hashState_ = 0x9e3779b9u;  // xorshift32 state: never 0, so hashes never 0
  uint8_t gcBits_ = 0;      // current epoch bit, stamped into every new header
};

class Heap {
 public:
  explicit Heap(const Config& config = {});
  // Calls TypeInfo::release for every still-registered external object (state close).
  ~Heap();
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  void registerType(uint8_t kind, const TypeInfo& info);
  const TypeInfo& typeInfo(uint8_t kind) const;

  void addRootSource(RootSource* source);
  void removeRootSource(RootSource* source);
  void addWeakRootSource(WeakRootSource* source);
  void removeWeakRootSource(WeakRootSource* source);

  // The object owns off-heap memory: call TypeInfo::release when it dies.
  void registerExternal(Object* obj);
  // The object has a finalizer (__gc): when unreachable it is resurrected once and
  // queued; the VM takes it with takePendingFinalizer and runs the finalizer.
  void registerFinalizable(Object* obj);
  // Next object whose finalizer is due, or nullptr. Queued objects are roots until taken.
  Object* takePendingFinalizer();
  bool hasPendingFinalizers() const;
  // At close: every registered finalizable object, reachable or not, is queued (Lua
  // calls all pending finalizers when the state closes).
  void queueAllFinalizers();

  // Cheap poll for the interpreter's safepoints. With stress on it stays true, so the
  // VM (which calls safepointMayGC only when it is) lets the stress schedule count every
  // safepoint; set `stress` in the constructor's Config (a change through
  // mutableConfig() takes effect after the next collection).
  bool collectionRequested() const { return requested_.load(std::memory_order_relaxed); }
  // A safepoint: collects if requested or if the stress mode says so. Returns kFatal if
  // a collector transition failed (invariant 5), otherwise ok.
  Status safepointMayGC();
  // A full collection now (collectgarbage("collect")).
  Status collectMayGC();

  // The VM raises a memory error for a failed allocation: until the next collection the
  // limit is raised by a reserve (an eighth of it, at least two chunks), so the code that
  // catches the error can run before a safepoint; that collection is requested at once
  // and runs even while automatic collection is stopped (Lua's emergency collection).
  // Without a grant the limit stays exact (invariant 5).
  void grantEmergencyReserve();

  // Stop / restart automatic collection (collectgarbage "stop"/"restart"). Stress mode
  // and explicit collections still run.
  void setAutomatic(bool on) { automatic_ = on; }
  bool automatic() const { return automatic_; }

  size_t bytesInUse() const;   // allocated bytes, live or not yet collected
  size_t heapLimit() const { return config_.heapLimit; }
  // Takes effect at once: the mutators' current buffers are retired.
  void setHeapLimit(size_t bytes);
  const Config& config() const { return config_; }
  // Change stress/interval/seed/limits here; use setVerify for verify (it also arms the
  // write-barrier checks).
  Config& mutableConfig() { return config_; }
  void setVerify(bool on);
  const Stats& stats() const { return stats_; }

  // Walks every root and object and checks every reference (invariant 2). Returns an
  // empty string when the heap is sound, otherwise a description of the first fault.
  std::string verifyHeap();

  // True if `p` points into space the heap currently allocates from.
  bool contains(const void* p) const;

  Mutator& mainMutator() { return *mainMutator_; }

  // Chunk geometry: a mutator's bump buffer is one chunk; an object of at least
  // kLargeObjectSize bytes gets a chunk of its own (and is still copied in v1).
  static constexpr size_t kChunkSize = 256u << 10;
  static constexpr size_t kLargeObjectSize = kChunkSize / 8;

 private:
  friend class Mutator;
  friend class Collector;
  friend class Verifier;
  friend class HandleScope;
  friend class PersistentHandle;
  friend void writeBarrierSlow(Object* holder, Object* value);
  char* refill(Mutator& mutator, size_t size);
  void retireLocked(Mutator& mutator);
  void addChunkLocked(Chunk* chunk);
  void noteGrowthLocked();
  size_t currentLimitLocked() const;
  Chunk* takeChunkLocked();
  void flushMutators();
  bool stressSaysCollect();
  Status collectNow();
  Status failCollection(const char* what, const std::string& detail);
  bool isCurrentObject(const Object* obj) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Config config_;
  Stats stats_;
  // The handle stack: one reserved region (kMaxHandles slots, committed as touched), so
  // slots never move. Owning thread only.
  static constexpr size_t kMaxHandles = size_t{1} << 20;
  Object** handleBase_ = nullptr;
  Object** handleTop_ = nullptr;
  Object** handleEnd_ = nullptr;
  std::atomic<bool> requested_{false};  // written by allocating mutators, read at safepoints; relaxed: a late read only delays a collection to the next safepoint
  bool automatic_ = true;
  std::unique_ptr<Mutator> mainMutator_;
};

// Allocation fast path: a bounds check and a bump. `bytes <= avail` first, so a huge
// request cannot wrap around in the rounding.
inline Object* Mutator::allocate(uint8_t kind, size_t bytes) {
  char* p = cursor_;
  size_t avail = static_cast<size_t>(limit_ - p);
  if (bytes <= avail) [[likely]] {
    size_t size = roundObjectSize(bytes);
    if (size <= avail) [[likely]] {
      cursor_ = p + size;
      return initObject(p, kind);
    }
  }
  return allocateSlow(kind, bytes);
}

// The buffer is zero-filled when handed out; only the header is written here.
inline Object* Mutator::initObject(char* p, uint8_t kind) {
  uint32_t h = hashState_;
  h ^= h << 13;
  h ^= h >> 17;
  h ^= h << 5;
  hashState_ = h;
  Object* obj = reinterpret_cast<Object*>(p);
  obj->header = ObjectHeader{kind, gcBits_, 0, h};
  return obj;
}

// The one write-barrier entry (heap.h invariant 3). The copying collector of version 1
// needs no barrier work; with verification on it checks that the holder is a live object
// in current space, which catches stores into stale copies. The generational collector
// will record old-to-young stores here.
// gBarrierChecks is true while some heap has verify on; written only by Heap's
// constructor, destructor and setVerify, before mutator threads start.
void writeBarrierSlow(Object* holder, Object* value);
extern bool gBarrierChecks;
inline void writeBarrier(Object* holder, Object* value) {
  if (gBarrierChecks) [[unlikely]] writeBarrierSlow(holder, value);
}

// Scoped handles: a stack of slots the collector treats as roots. A native that holds a
// heap reference across a safepoint keeps it in a Handle and re-reads it afterwards.
// Scopes nest LIFO; a slot may hold nullptr. Slots never move (one reserved region), so
// a Handle stays valid while its scope lives. One stack per heap in v1 (one thread).
class HandleScope {
 public:
  explicit HandleScope(Heap& heap) : heap_(heap), mark_(static_cast<size_t>(heap.handleTop_ - heap.handleBase_)) {}
  ~HandleScope() { heap_.handleTop_ = heap_.handleBase_ + mark_; }
  HandleScope(const HandleScope&) = delete;
  HandleScope& operator=(const HandleScope&) = delete;
  Object** newSlot(Object* obj) {
    Object** slot = heap_.handleTop_;
    WEFT_CHECK(slot < heap_.handleEnd_, "handle stack overflow (a handle leak in a loop?)");
    heap_.handleTop_ = slot + 1;
    *slot = obj;
    return slot;
  }

 private:
  Heap& heap_;
  size_t mark_;
};

template <typename T>
class Handle {
 public:
  Handle(HandleScope& scope, T* obj) : slot_(scope.newSlot(reinterpret_cast<Object*>(obj))) {}
  T* get() const { return reinterpret_cast<T*>(*slot_); }
  T* operator->() const { return get(); }
  void set(T* obj) { *slot_ = reinterpret_cast<Object*>(obj); }

 private:
  Object** slot_;
};

// A handle that lives until destroyed, independent of scopes (for hosts). May hold
// nullptr. Created and destroyed under the heap's lock; get/set by the owning thread.
class PersistentHandle {
 public:
  PersistentHandle(Heap& heap, Object* obj);
  ~PersistentHandle();
  PersistentHandle(const PersistentHandle&) = delete;
  PersistentHandle& operator=(const PersistentHandle&) = delete;
  Object* get() const;
  void set(Object* obj);

 private:
  Heap& heap_;
  size_t index_;
};

}  // namespace weft::gc
