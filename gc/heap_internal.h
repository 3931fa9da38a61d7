// Internals shared by the gc/ sources: chunks, the heap's private state, and the
// relocate-mode quarantine. Not for use outside gc/.
//
// Threads: in v1 one mutator thread runs the VM and the collector runs on it, world
// stopped. Fields say who touches them so that per-worker mutators can come without
// re-auditing: "lock" means under Impl::mutex, "world stopped" means only during a
// collection (no mutator runs) or before mutator threads start.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gc/heap.h"

namespace weft::gc {

// A page-aligned mmap region. Objects lie contiguously in [base, top); top is exact for
// retired chunks and stale for a chunk a mutator is bumping in (flushMutators fixes it).
struct Chunk {
  char* base = nullptr;
  size_t size = 0;      // mapped bytes
  char* top = nullptr;  // end of the objects
  bool large = false;   // holds one object of at least kLargeObjectSize bytes
  bool dirty = false;   // recycled memory: must be zeroed before a mutator bumps in it
};

size_t pageSize();
// mmap / munmap a chunk; nullptr when the system is out of memory.
Chunk* mapChunk(size_t bytes);
void unmapChunk(Chunk* chunk);

// Relocate mode (stress.cpp): poisons and protects one collection's old chunks and
// records them for the fault handler; unmaps older ones beyond the budget. Takes
// ownership of the chunks.
void quarantineOldSpace(const std::vector<Chunk*>& chunks, uint64_t collection);
void installStaleReferenceHandler();
inline constexpr uint8_t kPoisonByte = 0xdb;

// The registry of heaps with verify on, which writeBarrierSlow consults (verify.cpp).
void registerVerifyHeap(Heap* heap);
void unregisterVerifyHeap(Heap* heap);

struct Heap::Impl {
  // The lock of the refill path and of the tables below marked "lock".
  mutable std::mutex mutex;

  std::vector<Chunk*> space;               // lock: current-space chunks
  std::map<uintptr_t, Chunk*> chunkIndex;  // lock: same chunks by base, for contains()
  std::vector<Chunk*> pool;                // lock: free standard chunks (dirty)
  size_t poolLimit = 16 * Heap::kChunkSize;  // world stopped: pool bound
  std::vector<Mutator*> mutators;          // lock: registered mutators

  // Bytes handed out: retired chunks' objects plus whole current bump buffers.
  // Written under the lock (refill) or world stopped; read lock-free by bytesInUse,
  // relaxed: it is a statistic and publishes no memory.
  std::atomic<size_t> usedBytes{0};
  size_t threshold = 0;        // lock: requested_ is raised when usedBytes exceeds it
  // Set with requested_ when the threshold is crossed; requested_ alone cannot tell,
  // since stress mode keeps it up. Relaxed for the same reason as requested_.
  std::atomic<bool> thresholdCrossed{false};
  // Set by grantEmergencyReserve, cleared by the next collection; relaxed like
  // thresholdCrossed (written and read by the owning thread, or the world stopped).
  std::atomic<bool> reserveOpen{false};
  size_t liveAfterLastGC = 0;  // world stopped
  uint8_t epoch = 0;           // world stopped: the epoch bit of current-space objects

  TypeInfo types[kMaxKinds];   // written at start-up, read by the collector
  bool registered[kMaxKinds] = {};

  // All below: owning (VM) thread or world stopped.
  std::vector<RootSource*> roots;
  std::vector<WeakRootSource*> weakRoots;
  std::vector<Object*> finalizable;  // registration order
  std::vector<Object*> externals;
  std::deque<Object*> pending;       // finalizers due, in the order they run

  std::vector<Object*> persistent;   // nullptr in free slots
  std::vector<size_t> persistentFree;

  uint64_t safepoints = 0;  // stress schedule
  uint64_t rngState = 0;
  uint64_t rngSeed = 0;
  bool verifyRegistered = false;  // in the barrier-check registry
  bool broken = false;            // a collection failed: the heap is not trusted
};

inline Object* forwardee(const Object* obj) {
  return *reinterpret_cast<Object* const*>(reinterpret_cast<const char*>(obj) + sizeof(ObjectHeader));
}

inline void setForwardee(Object* obj, Object* to) {
  obj->header.kind = kForwardedKind;
  *reinterpret_cast<Object**>(reinterpret_cast<char*>(obj) + sizeof(ObjectHeader)) = to;
}

inline size_t objectBytes(const TypeInfo& info, const Object* obj) {
  return roundObjectSize(info.fixedSize ? info.fixedSize : info.sizeOf(obj));
}

}  // namespace weft::gc
