// Internals shared by the gc/ sources: chunks, the heap's private state, and the
// relocate-mode quarantine. Not for use outside gc/.
//
// Threads: every attached mutator runs on its own thread; the collector runs on the
// requesting mutator's thread while every other attached mutator is parked in the
// handshake (safepoint.cpp). "lock" means under Impl::mutex. "world stopped" means only
// during a collection or before mutator threads start. "attached" means any attached
// mutator's thread, under the lock; the collector then reads without it, ordered by
// the handshake (each parked mutator released the lock after its last write).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "gc/heap.h"
#include "gc/spin_lock.h"

namespace weft::gc {

// The old generation's lines (gc-v2.md "Mark-region old generation"): a standard old
// chunk is a block of kLinesPerChunk lines of kLineSize bytes, with a mark bit per line.
inline constexpr size_t kLineSize = 128;
inline constexpr size_t kLinesPerChunk = Heap::kChunkSize / kLineSize;
inline constexpr size_t kLineWords = kLinesPerChunk / 64;

// A page-aligned mmap region. Objects lie contiguously in [base, top); top is exact for
// retired chunks and stale for a chunk a mutator is bumping in (flushMutators fixes it).
struct Chunk {
  char* base = nullptr;
  size_t size = 0;      // mapped bytes
  char* top = nullptr;  // end of the objects
  bool large = false;   // holds one object of at least kLargeObjectSize bytes
  // Recycled memory: [base, base + dirtyBytes) may hold a former life's bytes, which are
  // zeroed (zeroRecycled) before a mutator bumps in them; beyond, the pages are zero as
  // mmap left them, and untouched ones are not resident. A chunk pooled after holding a
  // few objects costs the next user a few pages, not its whole size (RSS and time).
  size_t dirtyBytes = 0;
  // [base, base + residentBytes) was written or populated (populateChunk) since the
  // chunk was mapped, so its pages are resident (zeroing keeps them so). The pool hands
  // the most resident chunks to bump buffers and the least resident to the collector
  // (Heap::takeChunkLocked).
  size_t residentBytes = 0;
  bool kept = false;    // during a collection: a large chunk that joined to-space in place
  uint8_t idleCollections = 0;  // a pooled large chunk: collections since it joined the pool
  // The nursery: a mutator's bump buffer, or a large object allocated since the last
  // collection. Its objects are young (no kBitOld); an old chunk's are all old.
  bool young = false;
  // Non-zero: a chunk of the non-moving space, cut into cells of this many bytes
  // (nonmoving.cpp). Never young (its objects carry their own generation), never moved.
  uint32_t cellSize = 0;
  // A standard old chunk (neither young, large nor cells) is a mark-region block: a line
  // is marked exactly when an object (not a filler) overlaps it, and a run of unmarked
  // lines below top is covered by fillers that neither start nor end inside a marked
  // line, so promotion may copy into it (a hole). freeBytes: the fillers' bytes in
  // [base, top). holeLine: where the search for the next hole resumes. World stopped.
  bool evacuating = false;  // during a major: chosen for evacuation (kBitEvacuate)
  uint32_t holeLine = 0;
  size_t freeBytes = 0;
  uint64_t lines[kLineWords] = {};
  // From an embedder's allocator (Config::chunkSource): the block base lies in, which
  // unmapChunk returns to it. Null: mmap'd.
  ChunkSource source;
  void* block = nullptr;
  size_t blockSize = 0;
};

// Survival pacing's bounds (collector.cpp survivalNursery): the nursery starts at a
// quarter of the floor (Config::initialThreshold), and doubles at most three times past
// the floor.
inline constexpr int8_t kMinNurseryScale = -2;
inline constexpr int8_t kMaxNurseryScale = 3;

// Makes [base, base + bytes) of `chunk` resident ahead of its use, with one system call
// (Chunk::residentBytes): a page faulted in by a first write cost 13-16 us on this
// virtual machine, one populated ahead 0.9 us (gc-v2.md "Pages populated ahead").
void populateChunk(Chunk* chunk, size_t bytes);
// How far ahead of the `used` bytes of a chunk a bump buffer or the collector's copies
// populate it: as much again, from 16 KiB to 64 KiB, so a chunk that takes a few objects
// (an idle worker's buffer, a minor's survivors) stays a few pages.
inline size_t populateTarget(size_t used) { return used + std::clamp(used, size_t{16} << 10, size_t{64} << 10); }
// A copy that bumped `chunk`'s top past its resident part populates the next step.
inline void populateAhead(Chunk* chunk) {
  size_t used = static_cast<size_t>(chunk->top - chunk->base);
  if (used > chunk->residentBytes) [[unlikely]]
    populateChunk(chunk, populateTarget(used));
}

// Zeroes what a recycled chunk may hold of its first `bytes` (Chunk::dirtyBytes).
inline void zeroRecycled(Chunk* chunk, size_t bytes) {
  std::memset(chunk->base, 0, std::min(bytes, chunk->dirtyBytes));
  if (bytes >= chunk->dirtyBytes) chunk->dirtyBytes = 0;
}
// A chunk that joins a free pool may hold bytes below its top (objects, fillers, cells
// cut so far) and whatever it held before. Nothing writes past top: a copy a parallel
// marker takes back is zeroed (Marker::publishCopy).
inline void noteRecycled(Chunk* chunk) {
  chunk->dirtyBytes = std::max(chunk->dirtyBytes, static_cast<size_t>(chunk->top - chunk->base));
  chunk->residentBytes = std::max(chunk->residentBytes, chunk->dirtyBytes);
}

// Headers the collector writes over memory no object occupies (gc-v2.md "Pinning and
// non-moving objects", "Mark-region old generation"). Neither is a registered kind, so
// a reference to one is caught by verify and by the checking barrier as a reference to
// a freed object.
//  - A free cell of the non-moving space: the next free cell's address at +8.
//  - A filler: a dead part of an old chunk (objects that moved out or died, the unused
//    end of the chunk, a hole), its size in bytes at +8.
inline constexpr uint8_t kFreeCellKind = 0xfe;
inline constexpr uint8_t kFillerKind = 0xfd;
inline bool lineMarked(const Chunk* chunk, size_t line) { return (chunk->lines[line / 64] >> (line % 64)) & 1; }
// Marks the lines [p, p + size) overlaps.
inline void markLines(Chunk* chunk, const char* p, size_t size) {
  size_t first = static_cast<size_t>(p - chunk->base) / kLineSize;
  size_t last = static_cast<size_t>(p + size - 1 - chunk->base) / kLineSize;
  for (size_t line = first; line <= last; ++line) chunk->lines[line / 64] |= uint64_t{1} << (line % 64);
}
inline char*& nextFreeCell(char* cell) { return *reinterpret_cast<char**>(cell + sizeof(ObjectHeader)); }
inline size_t& fillerBytes(char* p) { return *reinterpret_cast<size_t*>(p + sizeof(ObjectHeader)); }
inline size_t fillerBytes(const char* p) { return *reinterpret_cast<const size_t*>(p + sizeof(ObjectHeader)); }

// The non-moving space's size classes (nonmoving.cpp): the class of a rounded object
// size (-1 above kMaxCellSize) and the cell size of a class.
int cellClassOf(size_t size);
size_t cellSizeOf(int cls);

// Work the requester of a major shares with the mutators parked in its stop
// (safepoint.cpp acknowledgeLocked): it posts the job (Impl::stopJob), does its own
// part, then waits until no helper is inside before the job goes (Collector::runShared).
// help() runs on a parked mutator's thread, outside the heap lock, at most once per job.
class StopJob {
 public:
  virtual void help() = 0;

 protected:
  ~StopJob() = default;
};

// One size class of the non-moving space. Lock, or world stopped.
struct CellClass {
  std::vector<Chunk*> chunks;  // every chunk of the class, in the order they were mapped
  Chunk* carve = nullptr;      // the newest: [top, base + size) is not cut into cells yet
  char* free = nullptr;        // free cells, linked through nextFreeCell
};

size_t pageSize();
// Maps a chunk (mmap, or a page-aligned part of a block of `source`) and unmaps it;
// nullptr when the system or the source refuses the memory. `collecting`: for a
// collection's to-space, which falls back to mmap when the source refuses (a copying
// collection needs room that Lua's in-place one does not; failing would close the
// runtime for the host's limit, which the mutator's next allocation reports instead).
Chunk* mapChunk(const ChunkSource& source, size_t bytes, bool collecting = false);
void unmapChunk(Chunk* chunk);

// Relocate mode (stress.cpp): poisons and protects one collection's old chunks and
// records them for the fault handler; unmaps older ones beyond the budget. Takes
// ownership of the chunks.
void quarantineOldSpace(const std::vector<Chunk*>& chunks, uint64_t collection);
void installStaleReferenceHandler();
inline constexpr uint8_t kPoisonByte = 0xdb;
// Minors after which promoted finalizable objects make the next collection a major:
// enough that a burst of registrations costs few majors, few enough that a dropped
// one's finalizer runs soon (Heap::chooseWork).
inline constexpr uint32_t kMinorsBeforeFinalizerMajor = 4;
// Bytes the mutators allocate between two slices of an incremental major (incremental.cpp).
inline constexpr uint64_t kSliceStepBytes = 256u << 10;

// The registry of heaps with verify on, which writeBarrierSlow consults (verify.cpp).
void registerVerifyHeap(Heap* heap);
void unregisterVerifyHeap(Heap* heap);
// The checking barrier's part (verify.cpp): true while some heap has verify on, and the
// check of one store.
bool barrierChecksOn();
void checkBarrierStore(Object* holder, Object* value);
// The marking barrier's records of a thread whose current mutator is not the holder's
// heap's, under a global lock (as the orphan remembered records): each pause of a
// marking heap takes those in its space (incremental.cpp).
// Recomputes gBarrierSlow after a heap starts (+1) or ends (-1) marking, or after verify
// was turned on or off for some heap (0).
void updateBarrierSlow(int markingDelta);
// The calling thread's mutator if it belongs to `holder`'s heap, else nullptr (several
// heaps in the process: a thread's current mutator may be another heap's).
Mutator* mutatorOf(const Object* holder);
void takeOrphanMarking(Heap& heap, std::vector<Object*>& grey, std::vector<Object*>& rescan);

// The attached mutator of the calling thread (attach sets it, detach clears it; a heap's
// constructor sets its main mutator's): where rememberSlow records. Thread-local.
extern thread_local constinit Mutator* tCurrentMutator;
// Holders recorded by a thread with no attached mutator, or whose current mutator is
// another heap's (several States on one thread), under a global lock; each collection
// takes those of its own heap (collector.cpp).
void takeOrphanRemembered(Heap& heap, std::vector<Object*>& out);
// The orphans recorded for `heap`, for verify (which also reads the mutators' buffers).
void forEachOrphanRemembered(Heap& heap, const std::function<void(Object*)>& f);

struct Heap::Impl {
  // The lock of the refill path and of the tables below marked "lock".
  mutable std::mutex mutex;

  // Current space is two lists, so that a minor touches only the nursery's chunks and
  // those it promotes into (gc-v2.md "Minor and major collections"). lock:
  std::vector<Chunk*> space;        // the old generation's chunks (standard, large, cells)
  std::vector<Chunk*> youngChunks;  // the nursery's: mutator buffers, new large objects
  // lock: the chunks of both lists by base, for contains() and the collector's lookups.
  // Kept as chunks join (addChunkLocked, install) and leave (install), never rebuilt.
  std::map<uintptr_t, Chunk*> chunkIndex;
  // World stopped: what the old generation's standard and large chunks hold (top - base
  // - freeBytes, summed): a minor adds what it promotes, a major recounts it.
  size_t oldChunkBytes = 0;
  // World stopped: what the last minor kept young (gc-v2.md "Survivor age"): the bytes
  // of its survivor chunks' objects, and the old holders that refer to one, recorded
  // (kBitRemembered) for the next collection as a barrier records a holder.
  size_t survivorBytes = 0;
  std::vector<Object*> carriedRemembered;
  std::deque<Chunk*> pool;                 // lock: free standard chunks, by residentBytes
  std::vector<Chunk*> abandoned;           // lock: a failed collection's copies (~Heap unmaps)
  std::vector<Chunk*> largePool;           // lock: free large chunks (Chunk::dirtyBytes)
  size_t largePoolBytes = 0;               // lock: their mapped bytes
  size_t poolLimit = 4 * Heap::kChunkSize;  // world stopped: bound of each pool's bytes
  // World stopped: the nursery the last collection gave (threshold - live), and how many
  // times survival pacing doubled it, or (negative) halved the floor (collector.cpp
  // survivalNursery).
  size_t nurseryBytes = 0;
  int8_t nurseryScale = kMinNurseryScale;
  // lock: registered mutators (attached or not). Changes only while no stop is
  // pending, so the collector may walk it unlocked.
  std::vector<Mutator*> mutators;
  std::vector<std::unique_ptr<Mutator>> owned;  // lock: made by registerMutator

  // Bytes handed out: retired chunks' objects plus whole current bump buffers.
  // Written under the lock (refill) or world stopped; read lock-free by bytesInUse,
  // relaxed: it is a statistic and publishes no memory.
  std::atomic<size_t> usedBytes{0};
  // lock (or world stopped): the whole capacities of the mutators' current bump buffers,
  // counted in usedBytes, which the threshold leaves out (gc-v2.md "Nursery sizing":
  // buffers held, not filled, by parked workers and waiting threads ran a minor per task
  // in bench/tasks/skynet.lua).
  size_t openBuffers = 0;
  size_t threshold = 0;  // lock: requested_ is raised when the bytes filled exceed it
  // lock (or world stopped): off-heap bytes noted by mutators (flushed batches) less
  // what releases returned, and its value after the last collection. Growth beyond
  // that counts against the threshold like usedBytes.
  int64_t externalBytes = 0;
  int64_t externalAfterLastGC = 0;
  // Set with requested_ when the threshold is crossed; requested_ alone cannot tell,
  // since stress mode keeps it up. Relaxed for the same reason as requested_.
  std::atomic<bool> thresholdCrossed{false};
  // Set by grantEmergencyReserve, cleared by the next collection; relaxed like
  // thresholdCrossed (written and read by the owning thread, or the world stopped).
  std::atomic<bool> reserveOpen{false};

  // The stop-the-world handshake (safepoint.cpp). The requester waits on acksCv for
  // acknowledgements and detaches; acknowledgers, attach and (un)registration wait on
  // releaseCv for the stop to end. Every wait also ends when the heap breaks.
  std::condition_variable acksCv;
  std::condition_variable releaseCv;
  uint64_t stopEpoch = 0;        // lock: newest epoch requested; only increases
  uint64_t doneEpoch = 0;        // lock: newest epoch released
  Mutator* requester = nullptr;  // lock: non-null while a stop is pending or collecting
  std::string failure;           // lock: the first failed transition's message
  // A parallel major's shared work (StopJob: its marking, then its sweep): the job
  // parked mutators join while it is posted, its number (each mutator helps a job once)
  // and the helpers inside it, for which the requester waits on acksCv before the job
  // goes. Lock.
  StopJob* stopJob = nullptr;
  uint64_t stopJobNumber = 0;
  size_t stopJobHelpers = 0;
  // A transition failed: the heap is not trusted. Written under the lock; the
  // safepoint's fast path reads it relaxed (a late read reaches the locked path, which
  // rereads it, at the next poll), and every decision is rechecked under the lock.
  std::atomic<bool> broken{false};
  size_t liveAfterLastGC = 0;  // written world stopped, read under the lock: the old generation's bytes
  // World stopped: the old generation's size past which the next collection is major.
  size_t majorThreshold = 0;
  // World stopped: the old chunk promotion continues in (its top is exact), or nullptr.
  Chunk* promotionTail = nullptr;
  // World stopped: old chunks with holes (free lines), in the order collections copy
  // into them; those before recycledNext are used up. A major rebuilds the list from
  // its sweep; a minor adds the chunks it kept for pinned objects.
  std::vector<Chunk*> recycled;
  std::atomic<size_t> recycledNext{0};  // atomic: a parallel major's markers take chunks
  uint64_t stressCollections = 0;   // world stopped: collections the stress schedule asked for
  bool lastWasMajor = false;        // lock: the kind of the newest collection
  ChunkSource chunkSource;          // lock, or world stopped: where new chunks come from
  // World stopped: the pacing of majors for finalizable objects (Heap::chooseWork).
  size_t finalizableAfterMajor = 0;  // registrations the newest major left
  uint32_t minorsSinceMajor = 0;
  bool oldFinalizableGrew = false;   // the newest collection left more than that major
  std::vector<uint64_t> minorPauses;  // lock: every pause, for --stats percentiles
  std::vector<uint64_t> majorPauses;
  std::vector<uint64_t> slicePauses;
  uint8_t epoch = 0;           // world stopped: the epoch bit of current-space objects
  // An incremental major (gc-v2.md "Incremental majors"; incremental.cpp). Written
  // world stopped; mutators read `active` and `markEpoch` in the barrier's slow path
  // between stops (the handshake's lock orders those reads after the writes).
  struct Cycle {
    bool active = false;   // marking between stops: the barrier's marking half is on
    uint8_t markEpoch = 0;  // the epoch bit of what it marked (epoch ^ kBitEpoch)
    std::vector<Object*> grey;    // marked, not traced yet
    // Marked objects traced in part (TypeInfo::tracePart), with where to go on: grey too.
    std::vector<std::pair<Object*, size_t>> partial;
    std::vector<Object*> weak;    // weak containers its slices traced (the final pause retraces them)
    // Marked old holders written in bulk since a slice traced them (kBitRescan): traced
    // again by the next slices, after the grey ones, or by the final pause.
    std::vector<Object*> rescan;
    uint64_t allocatedAtSlice = 0;  // lock: Stats::bytesAllocatedTotal at the last slice
    size_t stepWork = 0;  // lock: the work Heap::stepMayGC asked its step to do
    size_t stepCredit = 0;  // lock: the steps' work without incremental majors
    bool rootsLeft = false;  // a root source's traceCycleSlice had roots left to trace
    // The old externals the slices found marked (they survive the cycle) are moved to
    // the front of Impl::externals, whose first externalsLive the final pause does not
    // sweep; the slices have looked at those before externalsCursor.
    size_t externalsLive = 0;
    size_t externalsCursor = 0;
    bool drained() const { return grey.empty() && partial.empty() && rescan.empty() && !rootsLeft; }
    // The last slice left it drained: the next stop is the final pause. (By then the
    // running stacks are listed again: the final pause retraces those.)
    bool finishDue = false;
  } cycle;
  // A slice (or the final pause) is due: set under the lock when the mutators allocated
  // a slice's step since the last one (noteGrowthLocked), or by the slice that emptied
  // the grey stack. Relaxed, as thresholdCrossed.
  std::atomic<bool> sliceDue{false};

  TypeInfo types[kMaxKinds];   // written at start-up, read by the collector
  bool registered[kMaxKinds] = {};

  // Attached (under the lock) or world stopped.
  std::vector<RootSource*> roots;
  std::vector<WeakRootSource*> weakRoots;
  // Finalizable objects, in registration order, split as externals are: a minor finds
  // dead only objects registered since the last collection (an old registration's
  // object is old, and old objects die only at majors), so it walks only those.
  // Every registration in `finalizable` precedes every one in `youngFinalizable`, so
  // the two lists together keep Lua's order (finalizers run in reverse registration).
  std::vector<Object*> finalizable;       // before the last collection: old objects
  std::vector<Object*> youngFinalizable;  // since it (every collection sweeps them)
  std::vector<Object*> externals;       // old objects (a major sweeps them)
  std::vector<Object*> youngExternals;  // registered since the last collection (every collection sweeps them)
  std::deque<Object*> pending;       // finalizers due, in the order they run
  // !pending.empty(), for the poll after every safepoint (Heap::hasPendingFinalizers)
  // without the lock. Written under the lock as pending changes; relaxed: a collection
  // fills pending world-stopped, and the lock that releases the mutators orders it.
  std::atomic<bool> pendingHint{false};

  // Slots: created and freed by attached mutators under the lock; each slot is read and
  // written by its handle's owner; the collector visits them world stopped.
  std::vector<Object*> persistent;   // nullptr in free slots
  std::vector<size_t> persistentFree;

  // The non-moving space (nonmoving.cpp). Lock, or world stopped.
  CellClass cells[kCellClasses];
  // Bytes of cells handed to mutators (allocated or in their caches): the part of
  // usedBytes the cell chunks account for.
  size_t cellBytes = 0;
  // Cells allocated since the last collection (handed back by retireCellsLocked): a
  // minor frees those it did not reach, without walking the old ones.
  std::vector<Object*> youngCells;

  // Pin counts (Heap::pin): attached mutators under pinLock; the collector reads them
  // world stopped (under it too, for the verifier's sake).
  mutable SpinLock pinLock;
  std::unordered_map<const Object*, uint32_t> pins;

  bool verifyRegistered = false;  // before mutator threads start: in the barrier-check registry
};

// The mark-region old generation (region.cpp). World stopped, inside a collection.
//
// After the collection proper (nothing reads a forwarding address any more), for an old
// chunk in a major and a nursery chunk kept for pinned objects: everything but the
// objects the collection reached (gcBits & liveMask == liveBits) becomes fillers (a
// copy's old image, a dead object, the unused end of the chunk), poisoned under
// relocate stress as old space is; the line marks and freeBytes are recomputed and
// top becomes the chunk's end. Returns the bytes of the objects it keeps. Fault site
// "gc.line-drop": the sweep forgets the chunk's first marked line.
size_t sweepChunk(Chunk* chunk, const TypeInfo* types, uint8_t liveMask, uint8_t liveBits, bool poison);
// A major's sweep of one chunk of the non-moving space (nonmoving.cpp): the cells of
// objects whose epoch is not `liveEpoch` become free cells (poisoned under relocate
// stress), linked from `head` (the highest) down to `tail` (the lowest), whose link the
// caller sets to join the class's list. Returns the bytes of the live cells.
struct CellSweep {
  size_t live = 0;
  char* head = nullptr;
  char* tail = nullptr;
};
CellSweep sweepCellChunk(Chunk* chunk, uint8_t liveEpoch, bool poison);
// A major's start: marks the old chunks of `space` it evacuates (Chunk::evacuating,
// and kBitEvacuate on their objects unless `everyChunk`, relocate stress, where every
// old chunk is evacuated and the collector needs no bits).
void chooseEvacuation(const std::vector<Chunk*>& space, const TypeInfo* types, bool everyChunk);
// Whether the half-empty old chunks chooseEvacuation would pick hold holes of a quarter
// of the old generation's bytes (two chunks at least): the next major should then be
// a stop-the-world one, which evacuates them, not an incremental one, which cannot.
bool fragmented(const std::vector<Chunk*>& space);
// Where a collection copies next: the current hole of the recycled old chunks
// (Impl::recycled from Impl::recycledNext on, never a chunk being evacuated). A cursor
// takes a whole chunk at a time (fetch_add on `next`), so the cursors of a parallel
// major's markers copy into disjoint chunks.
class HoleCursor {
 public:
  HoleCursor(std::vector<Chunk*>& recycled, std::atomic<size_t>& next) : recycled_(recycled), next_(next) {}
  // `size` bytes in the current hole or the next one, their lines marked; nullptr when
  // no hole fits. A copy bigger than a line that does not fit the rest of the current
  // hole gets nullptr too (it goes to a promotion chunk) rather than giving the hole up.
  char* allocate(size_t size);
  // Gives back the newest allocation (a parallel marker lost the race to copy it); its
  // lines stay marked, which only makes that chunk's holes look smaller until a major
  // sweeps it.
  void undo(char* p, size_t size);
  // The unused rest of the current hole becomes fillers again, split where the line of
  // the last copy ends, and the next search in its chunk starts at its first free line.
  // The chunk goes back to `next` if no later one was taken, so the next collection
  // continues in it. Before anything walks the chunk (the end of the collection proper).
  void close();

 private:
  bool nextHole();
  bool holeIn(Chunk* chunk);
  void closeHole();
  std::vector<Chunk*>& recycled_;
  std::atomic<size_t>& next_;
  size_t taken_ = SIZE_MAX;  // the index of the chunk this cursor took last
  Chunk* chunk_ = nullptr;
  char* cursor_ = nullptr;
  char* limit_ = nullptr;
};

inline Object* forwardee(const Object* obj) { return forwardeeOfWord(loadHeaderWord(obj)); }

// Release: whoever reads the forwarded header with acquire (loadHeaderWord) sees the
// copy's bytes.
inline void setForwardee(Object* obj, Object* to) {
  __atomic_store_n(reinterpret_cast<HeaderWord*>(&obj->header), forwardedWord(to), __ATOMIC_RELEASE);
}

inline size_t objectBytes(const TypeInfo& info, const Object* obj) {
  return roundObjectSize(info.fixedSize ? info.fixedSize : info.sizeOf(obj));
}

}  // namespace weft::gc
