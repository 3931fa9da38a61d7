// The heap and its collector: precise, generational (docs/design/gc-v2.md), with a
// copying nursery (Cheney) and a mark-region old generation, stop-the-world, run only at
// safepoints, shared by many mutator threads.
//
// Protocol:
//  - Each thread that touches the heap owns a Mutator (registerMutator) and is attached
//    (attach) while it does; a detached thread runs no heap code. Mutators allocate with
//    Mutator::allocate, which never collects. When the heap grows past its threshold,
//    allocation raises `collectionRequested`; the VM polls it at its safepoints
//    (Heap::safepointMayGC) and the collection runs there.
//  - Stop the world (docs/design/stop-the-world.md): the mutator whose safepoint decides
//    to collect becomes the requester. It raises the epoch, waits until every other
//    attached mutator acknowledged that epoch at its own safepoint (or detached), runs
//    the collection on its thread and releases everyone. Attaching waits while a stop is
//    pending. All handshake state lives under the heap lock; the atomics are hints.
//  - A collection traces the roots (RootSources, every registered mutator's handles,
//    persistent handles, pending finalizers), copies every reachable young object into
//    the old generation, processes weak containers and finalizable objects (Lua 5.4
//    manual §2.5), sweeps weak roots (the string table), releases off-heap memory of
//    dead registered objects, and frees the nursery.
//  - Generations (gc-v2.md): objects are young from allocation (the mutators' bump
//    buffers, new large objects) until a collection promotes them (kBitOld): the first
//    that finds them alive, but a minor that reaches one only from a running stack or a
//    handle copies it within the nursery (kBitSurvivor) and the next collection
//    promotes it ("Survivor age"). A minor collection evacuates only the young
//    objects, starting from the roots and the remembered set: the old objects that
//    writeBarrier recorded as holding a young reference this cycle, and the Thread
//    objects whose stacks ran or were written (the parked-stack rule: a stack that did
//    neither is not rescanned). A major collection also marks every reachable old
//    object where it lies and sweeps the old chunks (mark-region: 128-byte lines with a
//    mark bit each; dead objects become fillers, runs of free lines are holes that
//    promotion copies into), evacuating only the chunks its previous sweep found
//    fragmented (every old chunk under relocate stress, so every movable object still
//    moves there). After any collection the only young objects are a minor's survivors,
//    and the only remembered holders those it carried: the old objects that refer to a
//    survivor. A major the old generation's growth calls for is incremental
//    (gc/incremental.cpp): it starts from the roots, marks the old
//    generation in slices between which the mutators run (the barrier's marking half
//    greys what they store), and its final pause is a major collection that starts
//    from what the slices marked.
//  - Between safepoints no object moves, so code that cannot reach a safepoint may hold
//    raw Object pointers freely.
//  - Pacing (gc-v1.md, gc-v2.md): the next collection comes when the bytes allocated
//    since the last one, on the heap plus the off-heap bytes that objects own and only
//    a collection frees (Mutator::noteExternalBytes: stacks, task records), exceed the
//    nursery budget: max(Config::initialThreshold, live * (pause - 100) / 200). A major
//    comes when the old generation grew past Config::majorFloor and (live after the last
//    major + live off-heap) * pause / 100; while an incremental one marks, a slice
//    comes after every kSliceStepBytes the mutators allocate. A mutator whose remembered
//    buffer reaches Config::rememberedBudget holders requests a minor too, which bounds
//    the remembered set a minor traces.
//
// Invariants (each has a checker: --gc-verify, or a named unit test):
//  1. Collections happen only inside safepointMayGC/collectMayGC (a function that may
//     collect says MayGC in its name).
//  2. After a collection no root and no reachable object refers to old space, no object
//     is young but a minor's survivors (kBitSurvivor) and no remembered bit is set but
//     on the holders it carried; with verify on, verifyHeap() checks every
//     reference before and after each collection (valid kind, inside current space, not
//     forwarded, generation matching its chunk's), and that the chunk index, kept as
//     chunks join and leave rather than rebuilt, names exactly the chunks of current
//     space (negative test: fault site "gc.index-drop").
//  3. Every reference store into a heap object goes through writeBarrier(), so every old
//     object holding a young reference is in the remembered set (kBitRemembered set and
//     recorded in a mutator's buffer), and a holder type that keeps cards (a big table
//     array, gc-v2.md "Cards") has the card of every slot holding a young value set;
//     verify checks both before every collection.
//  4. Identity hashes survive moves (object.h invariant 2).
//  5. Allocation beyond the heap limit fails with nullptr; it never aborts.
//  6. A collection runs only while every other attached mutator is parked inside
//     safepointMayGC/collectMayGC, having acknowledged the collection's epoch; a
//     mutator that attaches during a stop waits until it ends. Two requesters at once
//     make one collection.
//  7. Epochs only increase, and an attached mutator acknowledges each epoch exactly once
//     (checked on every acknowledgement).
//  8. A detached mutator never delays a collection; its handle stack and bump buffer
//     are still part of the heap.
//  9. Fail closed, never hang: a failed transition (register, attach, acknowledgement,
//     deadline, collection, verify, a remembered-set append, close) breaks the heap
//     and records its reason; every
//     waiter wakes, and every later attach, register and safepoint returns kFatal. A
//     requester waits at most Config::safepointDeadlineMs for acknowledgements.
// 10. A minor collection traces no old object outside the remembered set: a thread's
//     stack that did not run and was not written since the last collection is not
//     rescanned, and holds no young reference; nor are the references a root source
//     skips in a minor pass (gc/pass.h: task records and channel buffers not written
//     since), and none of them is young (verify checks both "no young reference"
//     parts, before and after each collection; negative tests: fault sites
//     "gc.barrier-drop", "rt.channel-dirty-drop", "gc.carry-drop").
// 11. An object allocated non-moving never moves, and a pinned object does not move
//     while its pin count is above zero; no reference points at a freed cell or a
//     filler (verify checks all three: every kBitNonMoving object lies in a non-moving
//     cell or alone in a large chunk, every pinned address is an object of current
//     space; negative test: fault site "gc.pin-drop").
// 12. Mark-region (gc-v2.md): in every old standard chunk a line is marked exactly when
//     an object overlaps it, a filler that touches a free line covers whole free lines
//     only, and no reference points into a free line or a filler; a major moves no old
//     object outside the chunks it evacuates (verify checks the first three: negative
//     tests fault site "gc.line-drop" and GcRegion.ReferenceIntoAFreeLineIsCaught; the
//     last: GcRegion.MajorMarksADenseOldGenerationInPlace).
// 13. Finalizable registrations are in two lists: those made since the last collection
//     (the only ones a minor looks at) and the older ones, which hold only old objects;
//     so every young finalizable object is on the young list, and finalizers run in
//     reverse registration order across both (verify checks the first part: negative
//     test fault site "gc.finalizable-misfile"; the order: GcFinalizer.*).
// 14. A major marked and swept by several threads (the requester and the mutators
//     parked in its stop, gc/marker.h, collector.cpp PartsJob) leaves the heap one
//     thread leaves: each reached object is claimed, copied or marked, by exactly one
//     of them, every reference to it names that one copy, and each chunk and each
//     part of a weak root source is swept by exactly one of them (verify after each collection, GcParallelMark.* with real
//     threads, under ThreadSanitizer in tools/tsan.sh; a marker that fails fails the
//     collection: fault site "gc.marker").
// 15. While an incremental major marks, no old object that is marked, not grey and not
//     listed for a rescan (kBitRescan) refers strongly to an unmarked old object: every
//     store goes through writeBarrier, whose marking half marks and greys the old value,
//     and every bulk write of a marked holder (a stack) lists it to be traced again; nor
//     does a root the cycle traced and that was not written since (RootSource) (verify
//     checks both before every collection and slice; negative tests: fault site
//     "gc.mark-barrier-drop", GcIncremental.Invariant15_AnUnrecordedStackWriteIsCaught,
//     RuntimeGc.ChannelWriteThatIsNotNotedIsCaughtByTheCycle).
//
// Pinning (the contract issue 13's C API builds on; gc-v2.md "Pinning and non-moving
// objects"): an object that native code must see at a stable address is allocated
// non-moving (Mutator::allocateNonMoving) or pinned (Heap::pin / Heap::unpin) for as
// long as the native code holds its address. Non-moving objects live in size-classed
// cells (nonmoving.cpp; over kMaxCellSize bytes, a chunk of their own) that
// collections mark in place and sweep; a pinned object is a root marked in place, and
// the chunk it lies in is kept whole, its other contents turned into fillers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gc/object.h"
#include "weft/status.h"

namespace weft::gc {

class Heap;

// What the stress mode does at safepoints.
enum class StressMode : uint8_t {
  kNone,
  kCollect,   // --gc-stress: collect at every (or every N-th / seeded random) safepoint
  kRelocate,  // --gc-stress=relocate: as kCollect, and every collection is a major
              // one that moves every movable object; old space is poisoned and
              // protected so a stale pointer faults at once and is reported
};

// Which generations a collection evacuates (gc-v2.md).
enum class CollectionKind : uint8_t {
  kMinor,  // the young objects only, from the roots and the remembered set
  kMajor,  // everything: old objects are marked in place, but for those of fragmented
           // chunks, which are evacuated, as young ones are (all of them under relocate stress)
  kStep,   // one step of an incremental major (Heap::stepMayGC)
};

// Where chunks come from: by default mmap; an embedder's allocator otherwise (the
// lua_Alloc of lua_newstate: fn(ud, ptr, osize, nsize) allocates when ptr is null,
// frees when nsize is 0, and returns nullptr when it refuses). Chunks are carved
// page-aligned from its blocks, so a host that counts or limits memory sees the heap.
struct ChunkSource {
  void* (*fn)(void* ud, void* ptr, size_t osize, size_t nsize) = nullptr;
  void* ud = nullptr;
};

struct Config {
  ChunkSource chunkSource;      // {nullptr, ...}: mmap
  StressMode stress = StressMode::kNone;
  bool verify = false;          // --gc-verify
  uint64_t interval = 1;        // --gc-interval=N: stress collects every N-th safepoint
  uint64_t seed = 0;            // --gc-seed=S (non-zero): at random safepoints, 1 in N on average
  size_t heapLimit = 0;         // --heap-limit in bytes; 0 means none
  // The nursery's floor: bytes allocated, heap and noted off-heap, between collections
  // (survival pacing starts at a quarter of it).
  size_t initialThreshold = 1u << 20;
  // The old generation's size below which no major is automatic. Half the nursery's
  // floor: a small heap's garbage promoted by its minors is freed at 512 KiB, not 1 MiB
  // (bench/json.lua peak RSS 5.3 -> 4.5 MB: one major more; cd.lua 26 -> 48 majors,
  // 9 ms more of its 600, 8.1 -> 7.8 MB).
  size_t majorFloor = 512u << 10;
  // The old generation may grow by (live after the last major + live off-heap) *
  // (pause - 100) / 100 before the next collection is a major one.
  unsigned pauseMultiplier = 200;
  // Holders one mutator may record in the remembered set before it requests a minor
  // (0: no bound). A minor traces every recorded holder, a dirty stack whole, so the
  // records, not only the bytes allocated, bound its pause: a million tasks that each
  // ran once since the last minor made one minor rescan a million stacks (gc-v2.md
  // "Pacing").
  size_t rememberedBudget = 4096;
  // A requester that waits longer than this for acknowledgements fails the collection
  // (invariant 9) instead of hanging on a mutator that stopped polling.
  uint32_t safepointDeadlineMs = 10000;
  // A major shares its marking and its sweep with the mutators parked in its stop
  // (gc-v2.md "Parallel majors"); off, the requester does both alone (tests compare).
  bool parallelMajors = true;
  // A major the old generation's growth calls for marks incrementally (gc-v2.md
  // "Incremental majors"): slices between which tasks run, then a final pause; off,
  // every major is one stop-the-world pause (tests compare). Relocate stress never
  // marks incrementally.
  bool incrementalMajors = true;
  // The old generation that a growth major must reach to mark incrementally: below it a
  // stop-the-world major pauses a few milliseconds, and a cycle would keep what its
  // promotions brought in until the next one (bench/binarytrees.lua: peak RSS 31 MB
  // against 17 MB stop-the-world, and slower). 0: every growth major is incremental.
  size_t incrementalMinBytes = size_t{32} << 20;
  // The nursery starts at a quarter of the floor while minors find little alive, and
  // minors that promote much of it double it, up to 4 MiB (gc-v2.md "Pacing", survival
  // pacing); off, the nursery follows the live heap alone (tests that count collections).
  bool survivalPacing = true;
  // A minor copies a young object it reaches from the running threads' stacks or the
  // handles for the first time within the nursery, and promotes it only when a later
  // minor finds it alive again (gc-v2.md "Survivor age"); off, every survivor is
  // promoted at once (tests that count promotions).
  bool survivorAge = true;
};

// Written by the collector and the refill path under the heap lock; Heap::stats()
// returns a snapshot taken under it, so any thread may read it.
struct PauseStats {
  uint64_t count = 0;
  uint64_t totalNanos = 0;
  uint64_t p50Nanos = 0;  // the median pause (0 with none)
  uint64_t p99Nanos = 0;
  uint64_t longestNanos = 0;
};
struct Stats {
  uint64_t collections = 0;          // minors and majors
  uint64_t bytesAllocatedTotal = 0;  // up to the last buffer refill or collection
  uint64_t bytesCopiedTotal = 0;
  uint64_t bytesPromotedTotal = 0;   // copied (or kept in place) into the old generation by minors
  // Markers that traced in majors, the requester's included: above major.count when
  // parked mutators helped (gc-v2.md "Parallel majors").
  uint64_t majorMarkersTotal = 0;
  // Chunks the parked mutators swept in majors (gc-v2.md "Parallel majors").
  uint64_t majorChunksHelpersSweptTotal = 0;
  uint64_t totalPauseNanos = 0;
  uint64_t longestPauseNanos = 0;
  PauseStats minor;
  PauseStats major;  // stop-the-world majors and the final pauses of incremental ones
  // The other pauses of incremental majors: their starts and their marking slices.
  PauseStats slice;
  uint64_t incrementalCycles = 0;  // incremental majors finished
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
  // Incremental majors (gc-v2.md "Incremental majors"): a source with many roots (the
  // runtime's task records) may trace them in a cycle's slices rather than in its start
  // and again in its final pause, which then costs what was written since. All three
  // run world stopped; the defaults trace every root at the start and at the end.
  //  - startCycle: the start, with a visitor that marks.
  //  - traceCycleSlice: traces roots the cycle has not traced, or that were written
  //    since it traced them, taking their work from `budget` (bytes) until it is spent;
  //    true when none is left.
  //  - finishCycle: the final pause's marker visits every root the cycle did not trace
  //    or that was written since; the source keeps tracing every root again from then
  //    on. A root the cycle traced and that was not written since refers only to
  //    marked objects (heap.h invariant 15; the source tells verify which: pass.h).
  virtual void startCycle(Visitor& visitor) { traceRoots(visitor); }
  virtual bool traceCycleSlice(Visitor& visitor, size_t& budget) { return true; }
  virtual void finishCycle(Visitor& visitor) { traceRoots(visitor); }
};

// Weak roots (the interned string table): after tracing, sweepWeakRoots must drop every
// entry whose object is dead (!visitor.isLive) and update the rest (visitor.visit). A
// minor pass (gc/pass.h) may skip entries it knows to be old; verification passes a
// visitor whose isLive is always true, and every entry must then be visited.
// A source may split its sweep into parts that write disjoint state: a parallel major
// sweeps different parts at once on the requester and the parked mutators (gc-v2.md
// "Parallel majors"), all with the requester's marker, which copies nothing by then
// (its visit and isLive only read the heap). Each part should be worth a thread's
// wake-up: a small source is one part. sweepWeakRoots is every part. The sweep asks
// weakRootParts once, before its first part, and passes the answer to each part: a part
// may change what that count depends on (the string table shrinks its shards).
class WeakRootSource {
 public:
  virtual ~WeakRootSource() = default;
  virtual void sweepWeakRoots(Visitor& visitor) = 0;
  virtual size_t weakRootParts() const { return 1; }
  virtual void sweepWeakRootPart(size_t part, size_t parts, Visitor& visitor) {
    (void)part;
    (void)parts;
    sweepWeakRoots(visitor);
  }
};

// Runs finalizers: the VM drains pending finalizable objects at its safepoints.
// (Heap::takePendingFinalizer.)

// Header bits owned by the collector (ObjectHeader::gcBits).
inline constexpr uint8_t kBitEpoch = 0x01;        // which space generation the object is in
inline constexpr uint8_t kBitFinalizable = 0x02;  // registered with registerFinalizable
inline constexpr uint8_t kBitExternal = 0x04;     // registered with registerExternal
// Generations (gc-v2.md). kBitOld: promoted (or in an old chunk). kBitRemembered: an old
// object recorded in a mutator's remembered buffer this cycle (writeBarrier); for a
// Thread object, its stack's dirty flag. Both are read and set by mutators with atomic
// byte operations (two workers may store into one shared table), cleared world stopped.
inline constexpr uint8_t kBitOld = 0x08;
inline constexpr uint8_t kBitRemembered = 0x10;
// Allocated by Mutator::allocateNonMoving: the object never moves (gc-v2.md). Set at
// allocation, never cleared.
inline constexpr uint8_t kBitNonMoving = 0x20;
// Only during a major collection: the object lies in an old chunk chosen for evacuation
// (gc-v2.md "Mark-region old generation"), so reaching it copies it out instead of
// marking it in place. Set world stopped, gone after the collection.
inline constexpr uint8_t kBitEvacuate = 0x40;
// The same bit on a young object: it survived one minor, which copied it within the
// nursery (a survivor chunk) instead of promoting it; the next collection that reaches
// it promotes it (gc-v2.md "Survivor age"). Set world stopped, by minors only.
inline constexpr uint8_t kBitSurvivor = 0x40;
// Only while an incremental major marks (gc-v2.md "Incremental majors"): a marked old
// holder written in bulk since it was traced (a thread's stack that ran), which a slice
// or the final pause traces again. Set by mutators with an atomic byte operation,
// cleared world stopped by the pause that traces it.
inline constexpr uint8_t kBitRescan = 0x80;

// Bytes a request of `bytes` occupies: rounded up to alignment, at least kMinObjectSize.
constexpr size_t roundObjectSize(size_t bytes) {
  return bytes < kMinObjectSize ? kMinObjectSize : (bytes + kObjectAlignment - 1) & ~(kObjectAlignment - 1);
}

struct Chunk;
struct CellSweep;

// The non-moving space's size classes (nonmoving.cpp): cells of 16 bytes up to
// kMaxCellSize; a bigger non-moving object gets a chunk of its own.
inline constexpr int kCellClasses = 24;
inline constexpr size_t kMaxCellSize = 2048;

// The pauses one mutator experienced, as requester or as a parked acknowledger.
struct MutatorStats {
  uint64_t stops = 0;
  uint64_t stoppedNanosTotal = 0;
  uint64_t stoppedNanosMax = 0;
};

// A thread's allocation context: a private bump buffer refilled from the shared heap and
// a handle stack. Created detached (Heap::registerMutator for worker threads; the heap's
// mainMutator starts attached). Threads: the bump fields, the handle stack and stats_ are
// touched by the owning thread, and by the collector while the world is stopped (the
// owner is then parked or detached, and the heap lock orders the two). attached_ and
// lastAckedEpoch_ are written by the owner under the heap lock and read by a requester
// under it.
// Cache-line aligned: each attached thread bumps its own mutator's cursor at every
// allocation, and mutators made one after another must not share a line.
class alignas(64) Mutator {
 public:
  explicit Mutator(Heap& heap);
  ~Mutator();
  Mutator(const Mutator&) = delete;
  Mutator& operator=(const Mutator&) = delete;

  // Allocates `bytes` (header included) of kind `kind`, zero-filled, with a fresh
  // identity hash. Never collects. Returns nullptr if the heap limit would be exceeded
  // (or the system is out of memory).
  inline Object* allocate(uint8_t kind, size_t bytes);
  // As allocate, for an object that never moves, not even under relocate stress (which
  // verifies it in place instead): its address stays valid for as long as it lives
  // (userdata payloads handed to C). It is young until the first collection that finds
  // it alive, which promotes it where it lies. Never collects; nullptr on exhaustion.
  // Owning thread, attached.
  Object* allocateNonMoving(uint8_t kind, size_t bytes);

  Heap& heap() { return heap_; }
  // As Heap::registerExternal, without a lock: the object joins this mutator's own list,
  // which the heap takes over (under its lock) when the mutator's buffer is retired, at
  // the latest when a collection starts, before anything moves. Owning thread, attached.
  void registerExternal(Object* obj);
  // Off-heap memory that a registered external object owns and that only the object's
  // release frees (a thread's stack, a task's record): positive when allocated,
  // negative when freed before the object dies. It paces collections as heap
  // allocation does; TypeInfo::release returns what it frees of it. Batched per
  // mutator, so the heap lock is taken once per kExternalBatch bytes. Owning thread.
  void noteExternalBytes(int64_t delta);
  // `obj` (`bytes` long, at least Heap::kLargeObjectSize: a chunk of its own) was just
  // dropped by its only holder (a table's replaced part): at the next stop, before
  // anything moves, its whole pages past the first kDiscardKeptBytes go back to the
  // system and read as zeros from then on, which must be a state of the object that its
  // type accepts until a collection frees it. Not at once: a racing reader may read it
  // until its next safepoint (DEVELOPERS.md invariant 6). A MiB of them requests that
  // stop (kDiscardSoonBytes). Owning thread, attached.
  void discardLarge(Object* obj, size_t bytes);
  static constexpr size_t kDiscardKeptBytes = 64;
  // `holder` (a Thread object) runs on this mutator's thread now: a minor may keep what
  // its stack holds young for one more minor, since a running stack is traced again
  // (gc-v2.md "Survivor age"). A hint: any holder is safe, nullptr disables it. The
  // collector updates it when the holder moves. Owning thread, or world stopped.
  void noteRunning(Object* holder) { running_ = holder; }
  // Owning thread only.
  bool attached() const { return attached_; }
  const MutatorStats& stats() const { return stats_; }
  // The newest epoch this mutator acknowledged (or requested, or found on attaching).
  uint64_t lastAckedEpoch() const { return lastAckedEpoch_; }

 private:
  friend class Heap;
  friend class Collector;
  friend class Verifier;
  friend class HandleScope;
  Object* allocateSlow(uint8_t kind, size_t bytes);
  inline Object* initObject(char* p, uint8_t kind);
  void noteStop(uint64_t nanos);
  friend void rememberSlow(Object* holder);
  friend void writeBarrierSlow(Object* holder, Object* value);
  friend void writeBarrierBulkSlow(Object* holder);
  friend Mutator* mutatorOf(const Object* holder);
  static constexpr int64_t kExternalBatch = 64 << 10;
  Heap& heap_;
  int64_t externalPending_ = 0;  // noted, not yet added to the heap's count
  std::vector<Object*> externals_;  // owning thread; taken over by Heap::retireLocked
  char* cursor_ = nullptr;  // bump region [cursor_, limit_) owned by this mutator
  char* limit_ = nullptr;   // the buffer's populated part ends here (allocateSlow extends it)
  char* end_ = nullptr;     // the buffer's end
  Chunk* chunk_ = nullptr;  // the chunk the bump region lies in
  uint32_t hashState_ = 0x9e3779b9u;  // xorshift32 state: never 0, so hashes never 0
  uint64_t stressSafepoints_ = 0;     // the stress schedule (gc/stress.cpp): owning thread
  uint64_t stressRng_ = 0;            // its seeded generator
  uint64_t stressSeed_ = 0;           // the seed stressRng_ started from
  uint8_t gcBits_ = 0;                // current epoch bit, stamped into every new header
  Object* running_ = nullptr;         // noteRunning's hint: owning thread, or world stopped
  // The handle stack: one reserved region (kMaxHandles slots, committed as touched), so
  // slots never move.
  static constexpr size_t kMaxHandles = size_t{1} << 20;
  Object** handleBase_ = nullptr;
  Object** handleTop_ = nullptr;
  Object** handleEnd_ = nullptr;
  bool attached_ = false;
  uint64_t lastAckedEpoch_ = 0;
  // The newest job of a parallel major this mutator helped with (Impl::stopJobNumber):
  // under the heap lock.
  uint64_t helpedJob_ = 0;
  MutatorStats stats_;
  // The remembered set's part this mutator recorded (old holders of young references,
  // dirty stacks' Thread objects): owning thread, or world stopped.
  std::vector<Object*> remembered_;
  // An incremental major's marking (gc-v2.md "Incremental majors"): the old objects this
  // mutator's barrier marked (grey: not traced yet), and the old holders it wrote in
  // bulk (kBitRescan), since the last pause took them. Owning thread, or world stopped.
  std::vector<Object*> markGrey_;
  std::vector<Object*> rescan_;
  // Free cells of the non-moving space this mutator took from the heap, one list per
  // size class (linked through the cells), their bytes (counted as used, like a bump
  // buffer's tail) and the cells it allocated since they were last handed back: owning
  // thread, or world stopped (Heap::retireNonMovingLocked gives them back).
  char* cellFree_[kCellClasses] = {};
  size_t cellCached_ = 0;
  std::vector<Object*> youngCells_;
  // discardLarge's objects and their sizes: owning thread, or world stopped
  // (Heap::discardDropped empties it at every stop).
  std::vector<std::pair<Object*, size_t>> discarded_;
  size_t discardedBytes_ = 0;  // since the last request for a stop
  // Dropped bytes that ask for a stop (a minor) at once rather than at the nursery's
  // pace: one that promotes nothing costs little, and an array doubling to millions of
  // values allocates nothing else (sort_numbers kept 14 MB of dropped parts waiting).
  static constexpr size_t kDiscardSoonBytes = size_t(1) << 20;
};

class Heap {
 public:
  explicit Heap(const Config& config = {});
  // Calls TypeInfo::release for every still-registered external object (state close).
  ~Heap();
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  // Mutators for worker threads, created detached and owned by the heap.
  // registerMutator waits while a stop is pending and fails (kFatal) once the heap is
  // broken; fault site "gc.register". The three calls that wait for a stop (register,
  // unregister, attach) belong on a thread with no attached mutator: one that stays
  // attached without polling makes the requester fail at the deadline.
  Expected<Mutator*> registerMutator();
  // `m` must be detached; its buffer is retired (its objects stay) and it is freed.
  void unregisterMutator(Mutator* m);
  // On the calling thread, which then owns `m` until detach. Waits while a stop is
  // pending or a collection runs; kFatal if the heap is broken (fault site "gc.attach").
  Status attach(Mutator& m);
  // Never waits for a collection: a requester waiting for `m` goes on without it.
  void detach(Mutator& m);

  // Start-up only (before mutator threads run): kinds are read unlocked.
  void registerType(uint8_t kind, const TypeInfo& info);
  const TypeInfo& typeInfo(uint8_t kind) const;

  // Pinning (gc-v2.md): while its pin count is above zero, `obj` is a root and does not
  // move, in minor and major collections, relocate stress included (invariant 11). A
  // young pinned object keeps its nursery chunk, which becomes old. Counted: every pin
  // needs one unpin (an unpin without a pin is a fatal misuse). Any attached mutator's
  // thread; a hash-map update under a spin lock, never a collection.
  void pin(Object* obj);
  void unpin(Object* obj);
  // The pin count of `obj` (0 when not pinned), for tests and verification.
  uint32_t pinCount(const Object* obj) const;

  // Root registrations: any attached mutator (under the heap lock).
  void addRootSource(RootSource* source);
  void removeRootSource(RootSource* source);
  void addWeakRootSource(WeakRootSource* source);
  void removeWeakRootSource(WeakRootSource* source);

  // The object owns off-heap memory: call TypeInfo::release when it dies. Objects found
  // dead by the same collection (or still registered when the heap goes) are released
  // in no particular order. Mutator::registerExternal does the same without the lock.
  void registerExternal(Object* obj);
  // The object has a finalizer (__gc): when unreachable it is resurrected once and
  // queued; the VM takes it with takePendingFinalizer and runs the finalizer. A minor
  // finds dead only objects registered since the last collection (invariant 13).
  void registerFinalizable(Object* obj);
  // Next object whose finalizer is due, or nullptr. Queued objects are roots until taken.
  // Any attached mutator.
  Object* takePendingFinalizer();
  // Whether one is queued, without the lock (polled after every safepoint): a hint set
  // as the queue changes, exact once the collection that queued it released this thread.
  bool hasPendingFinalizers() const;
  // At close: every registered finalizable object, reachable or not, is queued (Lua
  // calls all pending finalizers when the state closes).
  void queueAllFinalizers();

  // Cheap poll for the interpreter's safepoints: true when a collection is wanted or
  // another mutator requested a stop. With stress on it stays true, so the VM (which
  // calls safepointMayGC only when it is) lets the stress schedule count every
  // safepoint; set `stress` in the constructor's Config (a change through
  // mutableConfig() takes effect after the next collection).
  bool collectionRequested() const {
    return requested_.load(std::memory_order_relaxed) || stopRequested_.load(std::memory_order_relaxed);
  }
  // True while a requester waits for acknowledgements or collects. Relaxed: a late read
  // only delays the acknowledgement to the next safepoint, within the deadline.
  bool stopRequested() const { return stopRequested_.load(std::memory_order_relaxed); }
  // The two flags collectionRequested() reads, for compiled code's back-edge polls
  // (docs/design/jit.md, "The safepoint and reload rule"): it reads them relaxed too.
  const std::atomic<bool>* requestFlagForJit() const { return &requested_; }
  const std::atomic<bool>* stopFlagForJit() const { return &stopRequested_; }
  // The poll of attached mutator `m`: if another mutator requested a stop, acknowledge
  // its epoch and wait until the collection is done; else, if a collection is wanted
  // (threshold or stress), stop the world and collect (invariant 6). kFatal if a
  // transition failed or the heap is broken (invariant 9), otherwise ok.
  Status safepointMayGC(Mutator& m);
  // A collection now (collectgarbage("collect") wants a major one), through the same
  // handshake; if another mutator's stop is pending, `m` takes part in that one first,
  // and collects again if that was not a major one but a major one was asked for.
  Status collectMayGC(Mutator& m, CollectionKind kind = CollectionKind::kMajor);
  // One step of an incremental major (collectgarbage("step"), gc-step.md): starts a
  // cycle if none marks (from the roots), then traces about `work` bytes, and
  // runs the cycle's final pause if nothing is left to trace; `cycleEnded` tells whether a
  // major finished in it. With incremental majors off (or relocate stress) a step is a
  // whole stop-the-world major.
  Status stepMayGC(Mutator& m, size_t work, bool& cycleEnded);
  // For mainMutator(): single-threaded users.
  Status safepointMayGC() { return safepointMayGC(*mainMutator_); }
  Status collectMayGC(CollectionKind kind = CollectionKind::kMajor) { return collectMayGC(*mainMutator_, kind); }

  // Fail closed from outside (the runtime closing): breaks the heap with reason
  // "close: <reason>" and wakes every waiter; they and every later call return kFatal.
  void closeHeap(const std::string& reason);
  // The first failed transition's message ("" while the heap is sound); it starts with
  // the transition's name, e.g. "safepoint deadline: ...".
  std::string failureReason() const;

  // A consistent view of the handshake, for diagnostics and tests.
  struct HandshakeState {
    uint64_t epoch = 0;        // newest epoch requested
    size_t attached = 0;       // attached mutators
    size_t acknowledged = 0;   // of those, how many hold the pending epoch (0 if none)
    bool stopPending = false;
  };
  HandshakeState handshake() const;

  // The VM raises a memory error for a failed allocation: until the next collection the
  // limit is raised by a reserve (an eighth of it, at least two chunks), so the code that
  // catches the error can run before a safepoint; that collection is requested at once
  // and runs even while automatic collection is stopped (Lua's emergency collection).
  // Without a grant the limit stays exact (invariant 5).
  void grantEmergencyReserve();

  // Stop / restart automatic collection (collectgarbage "stop"/"restart"), stress
  // collections included; explicit collections still run. Any thread; relaxed: a flag
  // read at the next safepoint, publishing nothing.
  void setAutomatic(bool on) { automatic_.store(on, std::memory_order_relaxed); }
  bool automatic() const { return automatic_.load(std::memory_order_relaxed); }

  // lua_setallocf: chunks mapped from now on come from `source` (each chunk is freed
  // through the source it came from). The owner thread, attached, tasks not running.
  void setChunkSource(ChunkSource source);

  // Lua's incremental mode (collectgarbage "incremental"): a finalizer runs only after a
  // whole cycle, so a collection that may find a finalizable object dead (one registered
  // since the last collection) is a major, and the weak entries it clears go with it;
  // while old finalizable objects exist, every few minors are followed by a major
  // (chooseWork). Generational mode lets a minor finalize young objects, and old
  // garbage waits for the old generation's growth, as in Lua. Any thread; relaxed, as
  // setAutomatic.
  void setWholeCycleFinalizers(bool on) { wholeCycleFinalizers_.store(on, std::memory_order_relaxed); }

  // Allocated bytes, live or not yet collected: every buffer counts whole except the
  // unused tail of `self`'s own (the caller's mutator; its owning thread only).
  size_t bytesInUse(const Mutator& self) const;
  size_t bytesInUse() const { return bytesInUse(*mainMutator_); }
  size_t heapLimit() const { return config_.heapLimit; }
  // Takes effect at once: the mutators' current buffers are retired. Like
  // mutableConfig(), only while no other mutator thread runs.
  void setHeapLimit(size_t bytes);
  const Config& config() const { return config_; }
  // Change stress/interval/seed/limits here; use setVerify for verify (it also arms the
  // write-barrier checks). Before mutator threads start (fields are read unlocked).
  Config& mutableConfig() { return config_; }
  void setVerify(bool on);
  Stats stats() const;

  // Walks every root and object and checks every reference (invariant 2) and the
  // remembered set (invariants 3 and 10). Returns an empty string when the heap is
  // sound, otherwise a description of the first fault. World stopped, or no other
  // mutator thread running.
  std::string verifyHeap();

  // True if `p` points into space the heap currently allocates from.
  bool contains(const void* p) const;

  // The mutator of single-threaded users, attached by the constructor to its thread. A
  // runtime that runs Lua on worker threads detaches it (or keeps polling with it).
  Mutator& mainMutator() { return *mainMutator_; }

  // Chunk geometry: a mutator's bump buffer is one chunk; an object of at least
  // kLargeObjectSize bytes gets a chunk of its own, which a collection keeps in place
  // (collector.cpp keepLarge) except under relocate stress (a non-moving or pinned one
  // stays even then).
  static constexpr size_t kChunkSize = 256u << 10;
  static constexpr size_t kLargeObjectSize = kChunkSize / 8;

 private:
  friend class Mutator;
  friend class Collector;
  friend class Marker;
  friend struct MarkPlan;
  friend class Verifier;
  friend class HandleScope;
  friend class PersistentHandle;
  friend void writeBarrierSlow(Object* holder, Object* value);
  friend void writeBarrierBulkSlow(Object* holder);
  friend void rememberSlow(Object* holder);
  friend void checkBarrierStore(Object* holder, Object* value);
  friend class SliceMarker;
  // What one stop does (collector.cpp chooseWork): a minor, a stop-the-world major, or
  // a part of an incremental major (its start, a marking slice, its final pause).
  enum class Work : uint8_t { kMinor, kMajor, kStartCycle, kSlice, kFinishCycle, kStep };
  // Whether a collection ends an incremental cycle: not, as its final pause, or as the
  // final pause that a full major follows at once (collectgarbage("collect") during a
  // cycle), which leaves finalizers to that major so they run in one cycle's order.
  enum class CycleEnd : uint8_t { kNone, kFinal, kBeforeMajor };
  char* refill(Mutator& mutator, size_t size, bool writtenWhole);
  char* allocateLargeLocked(size_t size, bool writtenWhole, std::unique_lock<std::mutex>& lock);
  char* refillCells(Mutator& m, int cls);
  void retireCellsLocked(Mutator& m);
  void sweepYoungCells(bool poison);
  void linkSweptCells(const CellSweep* swept, std::vector<Chunk*>& emptied);
  void retireLocked(Mutator& mutator);
  void flushExternalLocked(Mutator& mutator);
  void addChunkLocked(Chunk* chunk);
  // Raises the request when the bytes filled, with `pending` more (part of a buffer just
  // handed out), cross the threshold (heap_internal.h openBuffers).
  void noteGrowthLocked(size_t pending = 0);
  size_t collectionThresholdLocked() const;
  size_t filledBytesLocked() const;
  void requestCollectionSoon();
  size_t currentLimitLocked() const;
  // Who takes a standard chunk: a bump buffer fills it whole, cells and the collector's
  // copies (survivors, promotions, evacuations) mostly fill a part of it.
  enum class ChunkUse : uint8_t { kBumpBuffer, kCells, kCopies };
  Chunk* takeChunkLocked(ChunkUse use);
  Chunk* takeLargeChunkLocked(size_t size);
  void flushMutators();
  void discardDropped();
  bool stressSaysCollect(Mutator& m);
  bool wantsCollectionLocked(bool stressDue);
  Status pollSlowMayGC(Mutator& m, bool force, CollectionKind kind, bool stressDue);
  Status acknowledgeLocked(Mutator& m, std::unique_lock<std::mutex>& lock);
  void helpStopJobLocked(Mutator& m, std::unique_lock<std::mutex>& lock);
  Status stopTheWorldLocked(Mutator& m, std::unique_lock<std::mutex>& lock, bool force, CollectionKind kind);
  size_t unacknowledgedLocked(uint64_t epoch) const;
  void waitForNoStopLocked(std::unique_lock<std::mutex>& lock);
  Status collectNow(Work work);
  Status collectOnce(CollectionKind kind, CycleEnd end);
  Work chooseWork(bool force, CollectionKind asked);
  // Incremental majors (incremental.cpp), world stopped.
  bool marking() const;
  void takeMarkingBuffers();
  Status startCycle();
  void markSlice(size_t budget);
  void sortExternals(size_t& budget);
  Status stepNow();
  size_t sliceBudget();
  void endCycle();
  std::string verifyHeapAfterCollection();
  Status failCollection(const char* what, const std::string& detail);
  Status failLocked(const std::string& message, bool report);
  bool isCurrentObject(const Object* obj) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Config config_;  // written before mutator threads start (setHeapLimit under the lock)
  Stats stats_;    // lock
  // Written by allocating mutators, read at safepoints; relaxed: a late read only delays
  // a collection to the next safepoint.
  std::atomic<bool> requested_{false};
  // Raised and lowered by a requester under the heap lock, polled by every mutator;
  // relaxed, since the handshake itself synchronizes through the lock.
  std::atomic<bool> stopRequested_{false};
  std::atomic<bool> automatic_{true};
  std::atomic<bool> wholeCycleFinalizers_{false};
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

// The one write-barrier entry (heap.h invariant 3; gc-v2.md "The write barrier"). Called
// before every store of a reference `value` (may be null) into heap object `holder`.
// Fast path, the sequence the JIT inlines too: one byte load of the holder's gcBits;
// only an old holder not yet remembered this cycle loads the value's gcBits, and only
// a young value takes the slow path, which records the holder once per cycle. Relaxed
// atomic byte loads (plain loads on x86): another worker may set the holder's
// remembered bit at the same moment, and either outcome is correct. Then one flag,
// gBarrierSlow, sends every store to writeBarrierSlow while some heap has verify on
// (the checking barrier of version 1: holder and value live, current) or marks
// incrementally (the marking half: an old value the cycle has not marked is marked and
// greyed, Dijkstra's insertion barrier, gc-v2.md "Incremental majors"). Relaxed: the
// flag is raised and lowered while the heap it concerns has its world stopped (the
// handshake orders that heap's mutators), and a store into another heap that reads it
// late only takes the slow path for nothing.
void writeBarrierSlow(Object* holder, Object* value);
void writeBarrierBulkSlow(Object* holder);
void rememberSlow(Object* holder);
extern std::atomic<bool> gBarrierSlow;
inline bool barrierSlowPath() { return gBarrierSlow.load(std::memory_order_relaxed); }
inline uint8_t loadGcBits(const Object* obj) {
  return std::atomic_ref<uint8_t>(const_cast<uint8_t&>(obj->header.gcBits)).load(std::memory_order_relaxed);
}
// Card marking (gc-v2.md "Cards"): a holder whose type keeps a card byte per range of
// its slots (a big table array) passes `cardOf`, which returns the byte of the slot
// written, or nullptr; it runs only when an old holder receives a young value, and the
// card is set even when the holder is already remembered, since a minor then traces
// only the holder's dirty cards. Relaxed: cards are read by the collector alone, with
// every mutator stopped.
struct NoCard {
  uint8_t* operator()() const { return nullptr; }
};
// The fast path's test, as data: a store goes on to the value's age only when the
// holder's gcBits masked with the holder mask equal kBitOld (carded holders: old,
// remembered or not; others: old and not yet remembered), and to the slow path only
// when the value's gcBits lack kBitOld. One definition: writeBarrier tests these, and
// the JIT emits the same test from them (vm/jit.cpp jitLayout, docs/design/jit.md).
inline constexpr uint8_t kBarrierHolderMask = kBitOld | kBitRemembered;
inline constexpr uint8_t kBarrierCardedHolderMask = kBitOld;
// The slow path, for a young `value` stored into an old `holder` whose gcBits were
// `bits`: the card of the slot written, then the holder's record unless it has one.
template <typename CardOf>
[[gnu::always_inline]] inline void rememberYoungValue(Object* holder, uint8_t bits, CardOf cardOf) {
  if constexpr (!std::is_same_v<CardOf, NoCard>) {
    if (uint8_t* card = cardOf()) std::atomic_ref<uint8_t>(*card).store(1, std::memory_order_relaxed);
  }
  if (!(bits & kBitRemembered)) rememberSlow(holder);
}
template <typename CardOf>
[[gnu::always_inline]] inline void writeBarrier(Object* holder, Object* value, CardOf cardOf) {
  constexpr uint8_t kMask = std::is_same_v<CardOf, NoCard> ? kBarrierHolderMask : kBarrierCardedHolderMask;
  uint8_t bits = loadGcBits(holder);
  if ((bits & kMask) == kBitOld) [[unlikely]] {
    if (value && !(loadGcBits(value) & kBitOld)) rememberYoungValue(holder, bits, cardOf);
  }
  if (barrierSlowPath()) [[unlikely]] writeBarrierSlow(holder, value);
}
[[gnu::always_inline]] inline void writeBarrier(Object* holder, Object* value) {
  writeBarrier(holder, value, NoCard{});
}
// Records an old `holder` whatever was stored: for code that writes references into
// memory the holder owns off the heap without a barrier per store (a thread's stack:
// the parked-stack rule, gc-v2.md), or copies many references at once. While a cycle
// marks, a marked holder is also listed to be traced again.
inline void writeBarrierBulk(Object* holder) {
  if ((loadGcBits(holder) & (kBitOld | kBitRemembered)) == kBitOld) [[unlikely]] rememberSlow(holder);
  if (barrierSlowPath()) [[unlikely]] writeBarrierBulkSlow(holder);
}

// Scoped handles: a stack of slots per mutator that the collector treats as roots. A
// native that holds a heap reference across a safepoint keeps it in a Handle and
// re-reads it afterwards. Scopes nest LIFO; a slot may hold nullptr. Slots never move
// (one reserved region), so a Handle stays valid while its scope lives. Owning thread of
// the mutator only.
class HandleScope {
 public:
  explicit HandleScope(Mutator& m) : m_(m), mark_(static_cast<size_t>(m.handleTop_ - m.handleBase_)) {}
  explicit HandleScope(Heap& heap) : HandleScope(heap.mainMutator()) {}
  ~HandleScope() { m_.handleTop_ = m_.handleBase_ + mark_; }
  HandleScope(const HandleScope&) = delete;
  HandleScope& operator=(const HandleScope&) = delete;
  Object** newSlot(Object* obj) {
    Object** slot = m_.handleTop_;
    WEFT_CHECK(slot < m_.handleEnd_, "handle stack overflow (a handle leak in a loop?)");
    m_.handleTop_ = slot + 1;
    *slot = obj;
    return slot;
  }

 private:
  Mutator& m_;
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
// nullptr. Created and destroyed under the heap's lock by an attached mutator's thread;
// get/set by the owning thread.
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
