// The collector, generational (docs/design/gc-v2.md): a copying nursery (Cheney) and a
// mark-region old generation, with Lua 5.4 weak tables and finalizers.
//
// Protocol (one collection, world stopped, run only from safepointMayGC/collectMayGC on
// the requesting mutator's thread, while every other attached mutator is parked and
// detached ones cannot attach: safepoint.cpp). Both kinds copy every reachable young
// object (no kBitOld) into the old generation: into the holes (free lines) of recycled
// old chunks first, else bumping in promotion chunks. A minor one stops there: an old
// object counts as reached and is neither moved nor traced, unless it is in the
// remembered set. A major one marks every reachable old object where it lies (the
// to-space epoch is the mark bit), but for those of the fragmented chunks it chose to
// evacuate (kBitEvacuate; every old chunk under relocate stress), which it copies out,
// then sweeps the old chunks: what it did not reach becomes fillers, the line marks are
// recomputed, and chunks left empty are freed. Every copy is old. So after either kind
// no object is young and the remembered set is empty. Non-moving objects
// (kBitNonMoving) and pinned ones are never copied. Objects reached in place and copies
// into holes are traced from a grey stack; copies into promotion chunks by the Cheney
// scan (gc-v2.md "Mark-region old generation", "Pinning and non-moving objects").
//  0. A major chooses the chunks it evacuates (region.cpp). Pinned objects next,
//     before anything could copy them: each is marked in place, and one in a nursery
//     chunk keeps its chunk (keepPinned).
//  1. Reach the roots (root sources, the handle slots of every registered mutator,
//     persistent handles, pending finalizers): copy them into holes or into the
//     promotion chunks (from where the last collection stopped), or mark them in place,
//     and scan breadth-first; a minor also traces every remembered holder (old objects
//     a barrier recorded, Thread objects whose stacks ran). Weak containers report
//     themselves with deferWeak instead of visiting weak parts.
//  2. Ephemeron fixpoint: trace the values of weak-key tables whose keys are live, until
//     a round copies nothing.
//  3. clearWeak(kClearValues): drop entries with dead weak values. This comes before
//     resurrection, because the manual (§2.5.4) removes resurrected objects from weak
//     values before their finalizers run.
//  4. Resurrect every unreachable registered finalizable object (all are chosen before
//     any is copied; a minor looks only at those registered since the last collection),
//     trace what they reach (fixpoint again), queue them in reverse order of
//     registration and drop their registration.
//  5. clearWeak(kClearKeys | kClearValues): drop entries with dead keys. Resurrected keys
//     count as live here: the manual removes them from weak keys only at the next
//     collection, after their finalizers ran. Containers first reached in step 4 get
//     their values cleared here too.
//  6. Sweep weak roots (the string table), release off-heap memory of dead registered
//     externals (a minor: only those registered since the last collection), free the
//     cells of dead non-moving objects (a minor: only young ones), then install: sweep
//     the old chunks (a major) and the nursery chunks kept for pinned objects, and free
//     (or, relocate mode, quarantine) the nursery, the chunks a major evacuated or left
//     empty, and the large objects nobody reached.
// To-space membership: in a major, the epoch bit in gcBits (every object in current
// space carries the heap's epoch; copies and objects marked in place get the flipped
// one); in a minor, kBitOld. So a slot visited twice is harmless and isLive needs no
// address lookup: an object reached in place is live and its slots stay, a moved one is
// forwarded, a dead one is neither.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "gc/fault.h"
#include "gc/heap_internal.h"
#include "gc/pass.h"

namespace weft::gc {

namespace {

// The free chunks kept at least (gc-v2.md "Pacing"): a small heap's nursery and the
// chunks its minors promote into.
constexpr size_t kMinPoolChunks = 4;

// The allocation allowed before the next collection: its work grows with the live heap
// and with the off-heap memory live objects own (stacks it walks), so both set the pace.
size_t nextGrowth(size_t live, int64_t external, const Config& config) {
  if (config.pauseMultiplier <= 100) return 0;
  size_t base = live + static_cast<size_t>(std::max<int64_t>(external, 0));
  return base / 100 * (config.pauseMultiplier - 100);
}

}  // namespace

class Collector final : public Visitor {
 public:
  Collector(Heap& heap, CollectionKind kind)
      : heap_(heap),
        impl_(*heap.impl_),
        minor_(kind == CollectionKind::kMinor),
        relocateAll_(!minor_ && heap.config_.stress == StressMode::kRelocate),
        toEpoch_(minor_ ? impl_.epoch : impl_.epoch ^ kBitEpoch) {}
  ~Collector() override;

  bool run();
  void install(uint64_t collection);
  const std::string& error() const { return error_; }
  size_t copiedBytes() const { return copiedBytes_; }
  size_t promotedBytes() const { return minor_ ? copiedBytes_ + keptBytes_ : 0; }
  bool minor() const { return minor_; }

  void visit(Object*& slot) override;
  void deferWeak(Object* container, bool weakKeys, bool weakValues) override;
  bool isLive(Object* obj) override;

 private:
  Object* copy(Object* obj);
  Object* keepLarge(Object* obj);
  Object* keepNonMoving(Object* obj);
  void markInPlace(Object* obj, size_t size);
  void keepPinned();
  size_t sweep(Chunk* chunk, bool poison) {
    return minor_ ? sweepChunk(chunk, impl_.types, kBitOld, kBitOld, poison)
                  : sweepChunk(chunk, impl_.types, kBitEpoch, toEpoch_, poison);
  }
  char* allocateTo(size_t size);
  void scan();
  void prefetchAlong();
  void ephemeronFixpoint();
  void traceRoots();
  void traceRemembered();
  void traceHolders(const std::vector<Object*>& holders);
  void clearWeak(int phase);
  void resurrectFinalizable();
  void sweepExternals();
  void fail(const char* what, const Object* obj);
  bool inToSpace(const Object* obj) const {
    return minor_ ? (obj->header.gcBits & kBitOld) != 0 : (obj->header.gcBits & kBitEpoch) == toEpoch_;
  }
  Object* current(Object* obj) const { return obj->header.kind == kForwardedKind ? forwardee(obj) : obj; }

  Heap& heap_;
  Heap::Impl& impl_;
  bool minor_;
  bool relocateAll_;  // a major under relocate stress: every old chunk is evacuated
  uint8_t toEpoch_;
  bool copying_ = true;  // false while clearing: a dead reference is then left alone
  bool installed_ = false;
  std::vector<Chunk*> toChunks_;  // standard chunks, in allocation order
  Chunk* reusedTail_ = nullptr;   // the old chunk promotion continued in (not ours)
  std::vector<Chunk*> toLarge_;   // one large object each
  // Reached objects the scan has not traced yet that it does not find in promotion
  // chunks: those marked where they lie (old ones in a major, non-moving cells, pinned
  // objects) and copies into holes. A stack: its depth, not the heap, bounds its size.
  std::vector<Object*> grey_;
  // The nursery chunks kept in place for pinned objects (install sweeps them: their
  // other objects become fillers), and the hole of a recycled old chunk copies go to.
  std::vector<Chunk*> keptChunks_;
  HoleCursor hole_{impl_.recycled, impl_.recycledNext};
  std::vector<Chunk*> emptiedCells_;  // a major: cell chunks its sweep left empty
  Chunk* current_ = nullptr;      // the chunk copies are bumped into
  size_t scanChunk_ = 0;          // Cheney scan position: toChunks_[scanChunk_] at scanPtr_
  char* scanPtr_ = nullptr;
  // Copies of kinds with TypeInfo::prefetch, in to-space order (standard chunks only),
  // and the index of the next one the scan will trace.
  std::vector<Object*> prefetchQueue_;
  size_t prefetchAt_ = 0;
  size_t scanLarge_ = 0;
  std::vector<Object*> weak_;        // every deferred weak container (to-space address)
  std::vector<Object*> ephemerons_;  // those with weak keys and strong values
  uint64_t copiedObjects_ = 0;
  size_t copiedBytes_ = 0;
  size_t keptBytes_ = 0;  // large objects kept in place
  size_t externalReleased_ = 0;  // off-heap bytes the releases of dead externals returned
  std::string error_;
};

Collector::~Collector() {
  if (installed_) return;
  for (Chunk* chunk : toChunks_)
    if (chunk != reusedTail_) unmapChunk(chunk);
  for (Chunk* chunk : toLarge_) {
    if (chunk->kept) chunk->kept = false;  // still old space's
    else unmapChunk(chunk);
  }
  for (Chunk* chunk : keptChunks_) chunk->kept = false;
}

void Collector::fail(const char* what, const Object* obj) {
  if (!error_.empty()) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s (object %p)", what, static_cast<const void*>(obj));
  error_ = buf;
}

void Collector::visit(Object*& slot) {
  Object* obj = slot;
  if (!obj) [[unlikely]] return;
  if (obj->header.kind == kForwardedKind) {
    slot = forwardee(obj);
    return;
  }
  if (inToSpace(obj) || !copying_) return;
  slot = copy(obj);
}

void Collector::deferWeak(Object* container, bool weakKeys, bool weakValues) {
  if (!weakKeys && !weakValues) return;
  weak_.push_back(container);
  if (weakKeys && !weakValues) ephemerons_.push_back(container);
}

bool Collector::isLive(Object* obj) {
  return obj && (obj->header.kind == kForwardedKind || inToSpace(obj));
}

// Most objects are a few words: copy them inline rather than through a memcpy call.
static inline void copyObject(char* to, const Object* from, size_t size) {
  if (size > 64) {
    std::memcpy(to, from, size);
    return;
  }
  const char* src = reinterpret_cast<const char*>(from);
  std::memcpy(to, src, 16);
  for (size_t i = 16; i < size; i += 8) std::memcpy(to + i, src + i, 8);
}

Object* Collector::copy(Object* obj) {
  if (!error_.empty()) return obj;
  uint8_t kind = obj->header.kind;
  if (kind >= kMaxKinds || !impl_.registered[kind]) {
    fail("reference to an object of unregistered kind", obj);
    return obj;
  }
  uint8_t bits = obj->header.gcBits;
  if (bits & kBitNonMoving) return keepNonMoving(obj);
  size_t size = objectBytes(impl_.types[kind], obj);
  bool large = size >= Heap::kLargeObjectSize;
  if (large && !relocateAll_) {
    if (Object* kept = keepLarge(obj)) return kept;
  }
  // A major marks an old object where it lies unless its chunk is being evacuated.
  if ((bits & kBitOld) && !large && !minor_ && !relocateAll_ && !(bits & kBitEvacuate)) {
    markInPlace(obj, size);
    return obj;
  }
  char* to = large ? nullptr : hole_.allocate(size);
  bool inHole = to != nullptr;
  if (!to && size < (size_t{1} << 47)) to = allocateTo(size);
  if (!to) {
    fail(minor_ ? "no memory to promote into (gc.promote)" : "no memory for to-space", obj);
    return obj;
  }
  copyObject(to, obj, size);
  Object* moved = reinterpret_cast<Object*>(to);
  moved->header.gcBits = static_cast<uint8_t>(
      (moved->header.gcBits & ~(kBitEpoch | kBitRemembered | kBitEvacuate)) | toEpoch_ | kBitOld);
  setForwardee(obj, moved);
  if (inHole) grey_.push_back(moved);
  else if (impl_.types[kind].prefetch && !large) prefetchQueue_.push_back(moved);
  copiedBytes_ += size;
  ++copiedObjects_;
  return moved;
}

// A large object has its chunk to itself: the chunk joins to-space as it is, and the
// object takes the to-space epoch where it lies, so nothing is copied and no page of a
// fresh mapping is touched. Relocate stress still copies it (every object moves there).
// nullptr when `obj` is not alone at the start of a large chunk.
Object* Collector::keepLarge(Object* obj) {
  Chunk* chunk;
  {
    std::lock_guard lock(impl_.mutex);
    auto it = impl_.chunkIndex.find(reinterpret_cast<uintptr_t>(obj));
    if (it == impl_.chunkIndex.end()) return nullptr;
    chunk = it->second;
  }
  if (!chunk->large || chunk->kept) return nullptr;
  obj->header.gcBits =
      static_cast<uint8_t>((obj->header.gcBits & ~(kBitEpoch | kBitRemembered)) | toEpoch_ | kBitOld);
  chunk->kept = true;
  toLarge_.push_back(chunk);
  keptBytes_ += static_cast<size_t>(chunk->top - chunk->base);
  ++copiedObjects_;  // progress for the ephemeron fixpoint, as a copy would be
  return obj;
}

// Marks `obj` reached where it lies: it takes the to-space epoch and becomes old (a
// young one is promoted in place), and the scan traces it as it does copies.
void Collector::markInPlace(Object* obj, size_t size) {
  obj->header.gcBits = static_cast<uint8_t>(
      (obj->header.gcBits & ~(kBitEpoch | kBitRemembered | kBitEvacuate)) | toEpoch_ | kBitOld);
  grey_.push_back(obj);
  keptBytes_ += size;
  ++copiedObjects_;  // progress for the ephemeron fixpoint, as a copy would be
}

// A non-moving object stays where it is whatever the mode: in a cell, or alone in a
// large chunk (which keepLarge keeps even under relocate stress).
Object* Collector::keepNonMoving(Object* obj) {
  size_t size = objectBytes(impl_.types[obj->header.kind], obj);
  if (size > kMaxCellSize) {
    if (Object* kept = keepLarge(obj)) return kept;
    fail("a big non-moving object is not alone in its chunk", obj);
    return obj;
  }
  markInPlace(obj, size);
  return obj;
}

// First of all (before anything is copied): every pinned object is reached where it
// lies. A non-moving or large one is kept as such; one in a nursery chunk keeps the
// whole chunk, which joins the old generation as it is (install sweeps it); one in an
// old chunk stays there, even in a chunk being evacuated (whose other objects still
// move out). Old objects in a minor are not moving anyway. The fault site forgets one
// pin (the object may then move or die), which --gc-verify reports (verify.cpp, the
// pinned roots).
void Collector::keepPinned() {
  std::lock_guard pinLock(impl_.pinLock);
  for (const auto& entry : impl_.pins) {
    Object* obj = const_cast<Object*>(entry.first);
    if (inToSpace(obj) || fault::hit("gc.pin-drop")) continue;
    if (obj->header.gcBits & kBitNonMoving) {
      keepNonMoving(obj);
      continue;
    }
    Chunk* chunk = nullptr;
    {
      std::lock_guard lock(impl_.mutex);
      auto it = impl_.chunkIndex.upper_bound(reinterpret_cast<uintptr_t>(obj));
      if (it != impl_.chunkIndex.begin()) chunk = std::prev(it)->second;
    }
    if (!chunk || reinterpret_cast<char*>(obj) >= chunk->top) {
      fail("a pinned object is not in the heap", obj);
      return;
    }
    if (chunk->large) {
      if (!keepLarge(obj)) fail("a pinned large object is not alone in its chunk", obj);
      continue;
    }
    markInPlace(obj, objectBytes(impl_.types[obj->header.kind], obj));
    chunk->evacuating = false;  // not empty after the collection: install sweeps it
    if (chunk->young && !chunk->kept) {
      chunk->kept = true;
      keptChunks_.push_back(chunk);
    }
  }
}

char* Collector::allocateTo(size_t size) {
  if (size >= Heap::kLargeObjectSize) {
    Chunk* chunk = mapChunk(impl_.chunkSource, size, true);
    if (!chunk) return nullptr;
    chunk->large = true;
    chunk->top = chunk->base + size;
    toLarge_.push_back(chunk);
    return chunk->base;
  }
  if (!current_ && impl_.promotionTail && !impl_.promotionTail->evacuating) {
    // Promotion continues where the last collection stopped, so old chunks fill up (in
    // a major too, unless that chunk is being evacuated; its sweep then covers the copies).
    current_ = reusedTail_ = impl_.promotionTail;
    toChunks_.push_back(current_);
    scanChunk_ = 0;
    scanPtr_ = current_->top;
  }
  if (!current_ || size > static_cast<size_t>(current_->base + current_->size - current_->top)) {
    // The fault site stands for a promotion (or a to-space chunk) the system refuses.
    if (minor_ && fault::hit("gc.promote")) return nullptr;
    Chunk* chunk;
    {
      std::lock_guard lock(impl_.mutex);
      chunk = heap_.takeChunkLocked(true);
    }
    if (!chunk) return nullptr;
    chunk->top = chunk->base;
    toChunks_.push_back(chunk);
    current_ = chunk;
  }
  char* p = current_->top;
  current_->top += size;
  return p;
}

// Breadth-first over to-space: promotion chunks in order (the last one grows while it is
// scanned; the lines of what it scans are marked), then large objects, then the grey
// stack; repeat until none advanced. No recursion, so a million-long list costs no
// stack.
void Collector::scan() {
  for (;;) {
    bool progress = false;
    while (scanChunk_ < toChunks_.size()) {
      Chunk* chunk = toChunks_[scanChunk_];
      if (!scanPtr_) scanPtr_ = chunk->base;
      while (scanPtr_ < chunk->top) {
        Object* obj = reinterpret_cast<Object*>(scanPtr_);
        const TypeInfo& info = impl_.types[obj->header.kind];
        size_t size = objectBytes(info, obj);
        markLines(chunk, scanPtr_, size);
        scanPtr_ += size;
        if (info.prefetch) prefetchAlong();
        if (info.trace) info.trace(obj, *this);
        progress = true;
      }
      if (scanChunk_ + 1 == toChunks_.size()) break;
      ++scanChunk_;
      scanPtr_ = nullptr;
    }
    while (scanLarge_ < toLarge_.size()) {
      Object* obj = reinterpret_cast<Object*>(toLarge_[scanLarge_++]->base);
      const TypeInfo& info = impl_.types[obj->header.kind];
      if (info.trace) info.trace(obj, *this);
      progress = true;
    }
    while (!grey_.empty()) {
      Object* obj = grey_.back();
      grey_.pop_back();
      const TypeInfo& info = impl_.types[obj->header.kind];
      if (info.trace) info.trace(obj, *this);
      progress = true;
    }
    if (!progress) return;
  }
}

// Tracing many small objects that point off the heap (threads: their data and stacks)
// costs a cache miss per pointer. Such objects are queued as they are copied, which is
// the order the scan reaches them, so tracing the i-th can prefetch for those kAhead and
// 2 * kAhead places further on.
void Collector::prefetchAlong() {
  constexpr size_t kAhead = 8;
  size_t i = prefetchAt_++;
  if (i + kAhead < prefetchQueue_.size()) {
    Object* obj = prefetchQueue_[i + kAhead];
    impl_.types[obj->header.kind].prefetch(obj, 1);
  }
  if (i + 2 * kAhead < prefetchQueue_.size()) {
    Object* obj = prefetchQueue_[i + 2 * kAhead];
    impl_.types[obj->header.kind].prefetch(obj, 0);
  }
}

void Collector::ephemeronFixpoint() {
  for (;;) {
    uint64_t before = copiedObjects_;
    for (size_t i = 0; i < ephemerons_.size(); ++i) {
      Object* table = ephemerons_[i];
      auto traceEphemeron = impl_.types[table->header.kind].traceEphemeron;
      if (traceEphemeron) traceEphemeron(table, *this);
    }
    scan();
    if (copiedObjects_ == before || !error_.empty()) return;
  }
}

// Every holder recorded this cycle loses its bit; a minor traces it whole (its young
// referents are promoted), a major reaches it like any object. Bits are cleared before
// any copy, so no copy carries one.
void Collector::traceRemembered() {
  std::vector<Object*> orphans;
  takeOrphanRemembered(heap_, orphans);
  auto take = [&](std::vector<Object*>& list) {
    for (Object* holder : list) holder->header.gcBits &= static_cast<uint8_t>(~kBitRemembered);
    if (minor_) traceHolders(list);
    list.clear();
  };
  for (Mutator* m : impl_.mutators) take(m->remembered_);
  take(orphans);
}

// Each dirty stack costs cache misses on its Thread object, its data and its stack (a
// minor after many tasks ran traces thousands): as the scan's prefetchAlong does, the
// holder kAhead places on is prefetched a stage further than the one 2 * kAhead on.
void Collector::traceHolders(const std::vector<Object*>& holders) {
  constexpr size_t kAhead = 8;
  size_t n = holders.size();
  auto prefetch = [&](size_t i, int stage) {
    Object* obj = holders[i];
    if (auto fetch = impl_.types[obj->header.kind].prefetch) fetch(obj, stage);
  };
  for (size_t i = 0; i < n; ++i) {
    if (i + 3 * kAhead < n) __builtin_prefetch(holders[i + 3 * kAhead]);
    if (i + 2 * kAhead < n) prefetch(i + 2 * kAhead, 0);
    if (i + kAhead < n) prefetch(i + kAhead, 1);
    Object* holder = holders[i];
    const TypeInfo& info = impl_.types[holder->header.kind];
    if (info.trace) info.trace(holder, *this);
  }
}

void Collector::traceRoots() {
  keepPinned();
  traceRemembered();
  for (RootSource* source : impl_.roots) source->traceRoots(*this);
  for (Mutator* m : impl_.mutators)
    for (Object** slot = m->handleBase_; slot < m->handleTop_; ++slot) visit(*slot);
  for (Object*& slot : impl_.persistent) visit(slot);
  for (Object*& slot : impl_.pending) visit(slot);
}

void Collector::clearWeak(int phase) {
  for (Object* table : weak_) {
    auto clear = impl_.types[table->header.kind].clearWeak;
    if (clear) clear(table, *this, phase);
  }
}

// A minor looks only at the registrations made since the last collection: the older
// ones are old objects, alive as far as a minor knows, so its cost does not grow with
// the finalizable objects a program keeps. The old list comes first in registration
// order, so the dying are gathered in that order whichever list they were on.
// Survivors of the young list join the old one.
void Collector::resurrectFinalizable() {
  std::vector<Object*>& old = impl_.finalizable;
  std::vector<Object*>& young = impl_.youngFinalizable;
  std::vector<Object*> dying;
  constexpr size_t kAhead = 8;  // each header is a cache miss: overlap them
  if (!minor_) {
    size_t kept = 0;
    for (size_t i = 0; i < old.size(); ++i) {
      if (i + kAhead < old.size()) __builtin_prefetch(old[i + kAhead]);
      Object* obj = old[i];
      if (isLive(obj)) old[kept++] = current(obj);
      else dying.push_back(obj);
    }
    old.resize(kept);
  }
  for (Object* obj : young) {
    if (isLive(obj)) old.push_back(current(obj));
    else dying.push_back(obj);
  }
  young.clear();
  if (dying.empty()) return;
  for (Object*& obj : dying) {
    visit(obj);
    obj->header.gcBits &= static_cast<uint8_t>(~kBitFinalizable);
  }
  scan();
  ephemeronFixpoint();
  for (auto it = dying.rbegin(); it != dying.rend(); ++it) impl_.pending.push_back(*it);
  impl_.pendingHint.store(!impl_.pending.empty(), std::memory_order_relaxed);
}

// A minor sweeps only the externals registered since the last collection: the old ones
// (a parked task's thread) are alive as far as a minor knows. Survivors join the old list.
void Collector::sweepExternals() {
  std::vector<Object*>& old = impl_.externals;
  auto sweep = [&](std::vector<Object*>& externals, size_t from, std::vector<Object*>& survivors) {
    size_t kept = from;
    constexpr size_t kAhead = 8;  // each header is a cache miss: overlap them
    for (size_t i = from; i < externals.size(); i++) {
      if (i + kAhead < externals.size()) __builtin_prefetch(externals[i + kAhead]);
      Object* obj = externals[i];
      if (isLive(obj)) {
        if (&survivors == &externals) externals[kept++] = current(obj);
        else survivors.push_back(current(obj));
        continue;
      }
      auto release = impl_.types[obj->header.kind].release;
      if (release) externalReleased_ += release(obj);
    }
    if (&survivors == &externals) externals.resize(kept);
  };
  if (!minor_) sweep(old, 0, old);
  sweep(impl_.youngExternals, 0, old);
  impl_.youngExternals.clear();
}

bool Collector::run() {
  if (!minor_) chooseEvacuation(impl_.space, impl_.types, relocateAll_);
  traceRoots();
  scan();
  ephemeronFixpoint();
  copying_ = false;
  clearWeak(kClearValues);
  copying_ = true;
  resurrectFinalizable();
  if (!error_.empty()) return false;
  copying_ = false;  // from here on nothing new becomes reachable
  clearWeak(kClearKeys | kClearValues);
  for (WeakRootSource* source : impl_.weakRoots) source->sweepWeakRoots(*this);
  sweepExternals();
  heap_.sweepCells(minor_, toEpoch_, heap_.config_.stress == StressMode::kRelocate, emptiedCells_);
  hole_.close();
  return error_.empty();
}

// Makes the collection's result current. The nursery's chunks (mutator buffers, young
// large objects nobody reached) are recycled, unmapped or (relocate, a major)
// quarantined, but for those kept for pinned objects, which are swept and join the old
// generation with the promotion chunks and the large chunks kept in place. A major also
// sweeps the old chunks and frees those it evacuated or left empty. No mutator gets a
// buffer in an old chunk: the next collection's promotion continues in the last
// promotion chunk, and the swept chunks' holes are listed for it. A minor touches only
// the nursery's chunks and those it promoted into: the old chunks stay listed and
// indexed as they are, and their bytes grow by what it promoted.
void Collector::install(uint64_t collection) {
  installed_ = true;
  const Config& config = heap_.config_;
  bool relocate = config.stress == StressMode::kRelocate;
  // The sweep touches only chunks no mutator can reach (world stopped): done before
  // taking the lock. A major sweeps every old chunk but those it evacuated (a chunk
  // still marked evacuating holds no pinned object, so nothing of it was kept).
  std::vector<Chunk*> swept;
  std::vector<Chunk*> old;  // to free
  if (!minor_) {
    for (Chunk* chunk : impl_.space) {
      if (chunk->kept || chunk->large || chunk->cellSize) continue;
      if (!chunk->evacuating && sweep(chunk, relocate) > 0) {
        swept.push_back(chunk);
      } else {
        chunk->evacuating = false;
        old.push_back(chunk);
      }
    }
  }
  for (Chunk* chunk : keptChunks_) sweep(chunk, relocate);
  std::unique_lock lock(impl_.mutex);
  for (Chunk* chunk : impl_.youngChunks)
    if (!chunk->kept) old.push_back(chunk);
  impl_.youngChunks.clear();
  // What joins the old generation: the promotion chunks, the large chunks kept in place
  // or copied to, and the nursery chunks kept for pinned objects (those and the young
  // large ones are indexed already). A minor's promotion adds exactly the bytes it
  // copied to the old chunks' count (a copy into a hole takes them from freeBytes).
  size_t joined = copiedBytes_;
  std::vector<Chunk*> added;
  for (Chunk* chunk : toChunks_)
    if (chunk != reusedTail_) added.push_back(chunk);
  added.insert(added.end(), toLarge_.begin(), toLarge_.end());
  for (Chunk* chunk : toLarge_)
    if (chunk->young) joined += static_cast<size_t>(chunk->top - chunk->base);
  for (Chunk* chunk : keptChunks_) joined += static_cast<size_t>(chunk->top - chunk->base) - chunk->freeBytes;
  added.insert(added.end(), keptChunks_.begin(), keptChunks_.end());
  // Cell chunks stay (a minor finds them old; a major takes them from their classes,
  // without those its sweep emptied). The chunks with holes are where the next
  // collections copy to first: a major lists those it swept, a minor adds the nursery
  // chunks it kept to the list, whose chunks before recycledNext are used up.
  if (minor_) {
    impl_.space.insert(impl_.space.end(), added.begin(), added.end());
    impl_.oldChunkBytes += joined;
  } else {
    for (Chunk* chunk : impl_.space)
      if (chunk->large && !chunk->kept) old.push_back(chunk);
    std::vector<Chunk*> space = added;
    for (const CellClass& c : impl_.cells) space.insert(space.end(), c.chunks.begin(), c.chunks.end());
    space.insert(space.end(), swept.begin(), swept.end());
    impl_.space = std::move(space);
    impl_.recycled.clear();
    impl_.recycledNext = 0;
    for (Chunk* chunk : swept)
      if (chunk->freeBytes >= kLineSize) impl_.recycled.push_back(chunk);
    impl_.oldChunkBytes = 0;
    for (Chunk* chunk : impl_.space)
      if (!chunk->cellSize) impl_.oldChunkBytes += static_cast<size_t>(chunk->top - chunk->base) - chunk->freeBytes;
  }
  impl_.recycled.insert(impl_.recycled.end(), keptChunks_.begin(), keptChunks_.end());
  for (Chunk* chunk : old) impl_.chunkIndex.erase(reinterpret_cast<uintptr_t>(chunk->base));
  for (Chunk* chunk : emptiedCells_) impl_.chunkIndex.erase(reinterpret_cast<uintptr_t>(chunk->base));
  // The fault site leaves a chunk that joins current space out of the index: the
  // negative test of verify's check of the index against the lists.
  for (Chunk* chunk : added) {
    chunk->kept = false;
    chunk->young = false;
    if (!fault::hit("gc.index-drop")) impl_.chunkIndex[reinterpret_cast<uintptr_t>(chunk->base)] = chunk;
  }
  size_t live = impl_.cellBytes + impl_.oldChunkBytes;
  for (Chunk* chunk : emptiedCells_) unmapChunk(chunk);
  if (!minor_) {
    impl_.epoch = toEpoch_;
    for (Mutator* m : impl_.mutators) m->gcBits_ = toEpoch_;
  }
  if (current_ || !minor_) impl_.promotionTail = current_;

  impl_.externalBytes -= static_cast<int64_t>(externalReleased_);
  impl_.externalAfterLastGC = impl_.externalBytes;
  // The nursery grows with the old generation: a minor swept the whole interned string
  // table (and walked every finalizer registration and channel buffer), so a fixed
  // nursery made that walk's cost per allocated byte grow with the live heap
  // (bench/strings.lua: 54 minors of 17 ms). Half of v1's growth keeps it a constant
  // share, as in v1; whether a fixed nursery now suffices is gc-v2.md's step (7).
  size_t nursery = std::max(config.initialThreshold, nextGrowth(live, 0, config) / 2);
  impl_.threshold = live + nursery;
  if (!minor_) impl_.majorThreshold = std::max(config.initialThreshold, live + nextGrowth(live, impl_.externalBytes, config));
  // Free chunks are kept for the next nursery and its promotion: the freed space was at
  // least that big, so keeping them adds nothing to the peak and spares the next
  // cycle's buffers the page faults. A major needs no to-space beyond that.
  impl_.poolLimit = std::max(kMinPoolChunks * Heap::kChunkSize, 2 * nursery);
  // A large chunk no allocation reused since the last collection is unlikely to fit
  // one soon (large objects of another size): unmapped, so the pool adds to the peak
  // RSS only what the next cycle actually reuses.
  for (Chunk* chunk : impl_.largePool) unmapChunk(chunk);
  impl_.largePool.clear();
  impl_.largePoolBytes = 0;
  std::vector<Chunk*> quarantined;
  if (relocate && !minor_) quarantined.swap(old);
  for (Chunk* chunk : old) {
    chunk->young = false;
    size_t pooled = impl_.pool.size() * Heap::kChunkSize + impl_.largePoolBytes;
    if (!chunk->large && chunk->size == Heap::kChunkSize && pooled < impl_.poolLimit) {
      chunk->dirty = true;
      impl_.pool.push_back(chunk);
    } else if (chunk->large && pooled + chunk->size <= impl_.poolLimit) {
      chunk->dirty = true;
      impl_.largePool.push_back(chunk);
      impl_.largePoolBytes += chunk->size;
    } else {
      unmapChunk(chunk);
    }
  }
  // Large chunks go first: only an object of about the same size can reuse one.
  while (!impl_.largePool.empty() &&
         impl_.pool.size() * Heap::kChunkSize + impl_.largePoolBytes > impl_.poolLimit) {
    impl_.largePoolBytes -= impl_.largePool.back()->size;
    unmapChunk(impl_.largePool.back());
    impl_.largePool.pop_back();
  }
  while (impl_.pool.size() * Heap::kChunkSize > impl_.poolLimit) {
    unmapChunk(impl_.pool.back());
    impl_.pool.pop_back();
  }

  impl_.usedBytes.store(live, std::memory_order_relaxed);
  impl_.liveAfterLastGC = live;
  impl_.lastWasMajor = !minor_;
  // Every registration left after a collection is old (a minor promotes the young
  // survivors): more than the last major left means finalizable objects that only a
  // major can find dead (chooseKind).
  if (!minor_) impl_.finalizableAfterMajor = impl_.finalizable.size();
  impl_.minorsSinceMajor = minor_ ? impl_.minorsSinceMajor + 1 : 0;
  impl_.oldFinalizableGrew = impl_.finalizable.size() > impl_.finalizableAfterMajor;
  impl_.thresholdCrossed.store(false, std::memory_order_relaxed);
  impl_.reserveOpen.store(false, std::memory_order_relaxed);
  heap_.requested_.store(config.stress != StressMode::kNone, std::memory_order_relaxed);
  // Poisoning is slow and touches only chunks no mutator can reach: keep the lock free
  // for detach and the registry meanwhile.
  lock.unlock();
  if (!quarantined.empty()) quarantineOldSpace(quarantined, collection);
}

// ---- The collection proper (safepoint.cpp runs it, world stopped) ----

Status Heap::failCollection(const char* what, const std::string& detail) {
  std::lock_guard lock(impl_->mutex);
  return failLocked(std::string(what) + ": " + detail, true);
}

// With verify on, or when the "gc.verify" fault site fires (which forces a verification
// for this collection and reports a fault even if the heap is sound).
static std::string verifyBefore(Heap& heap, bool enabled) {
  bool injected = fault::hit("gc.verify");
  if (!enabled && !injected) return "";
  std::string fault = heap.verifyHeap();
  if (fault.empty() && injected) fault = "fault injected (gc.verify)";
  return fault;
}

Pass passOf(const Visitor& visitor) {
  const auto* collector = dynamic_cast<const Collector*>(&visitor);
  if (!collector) return Pass::kCheck;
  return collector->minor() ? Pass::kMinor : Pass::kMajor;
}

// Relocate stress makes every collection a major one (every object moves); plain stress
// makes every eighth one major, so both kinds run under --gc-stress --gc-verify. An
// explicit request gets what it asked for; otherwise a major one comes when the old
// generation outgrew its threshold, when finalizable objects were promoted since the
// last major and a few minors passed, in incremental mode when finalizable objects were
// registered since the last collection (setWholeCycleFinalizers), when the heap limit is
// near, or after a memory error (the emergency reserve: old garbage must go).
CollectionKind Heap::chooseKind(bool force, CollectionKind asked) {
  Impl& impl = *impl_;
  if (config_.stress == StressMode::kRelocate) return CollectionKind::kMajor;
  if (force) return asked;
  if (config_.stress == StressMode::kCollect && ++impl.stressCollections % 8 == 0) return CollectionKind::kMajor;
  if (impl.reserveOpen.load(std::memory_order_relaxed)) return CollectionKind::kMajor;
  if (impl.liveAfterLastGC >= impl.majorThreshold) return CollectionKind::kMajor;
  // A finalizable object promoted and then dropped waits for a major, and a loop that
  // promotes nothing never grows the old generation to its threshold: Lua's
  // `repeat u = {} until finalized` would spin forever.
  if (impl.oldFinalizableGrew && impl.minorsSinceMajor >= kMinorsBeforeFinalizerMajor) return CollectionKind::kMajor;
  if (wholeCycleFinalizers_.load(std::memory_order_relaxed)) {
    if (!impl.youngFinalizable.empty()) return CollectionKind::kMajor;
    // Old ones (promoted by a major too) die unseen by minors: a few minors at most.
    if (!impl.finalizable.empty() && impl.minorsSinceMajor >= kMinorsBeforeFinalizerMajor) {
      return CollectionKind::kMajor;
    }
  }
  size_t limit = config_.heapLimit;
  if (limit && impl.liveAfterLastGC + config_.initialThreshold >= limit - limit / 4) return CollectionKind::kMajor;
  return CollectionKind::kMinor;
}

namespace {

uint64_t percentile(std::vector<uint64_t> pauses, double p) {
  if (pauses.empty()) return 0;
  auto at = pauses.begin() + static_cast<std::ptrdiff_t>(p * static_cast<double>(pauses.size() - 1) + 0.5);
  std::nth_element(pauses.begin(), at, pauses.end());
  return *at;
}

void notePause(PauseStats& stats, std::vector<uint64_t>& pauses, uint64_t nanos) {
  ++stats.count;
  stats.totalNanos += nanos;
  stats.longestNanos = std::max(stats.longestNanos, nanos);
  pauses.push_back(nanos);
}

}  // namespace

Stats Heap::stats() const {
  std::lock_guard lock(impl_->mutex);
  Stats out = stats_;
  out.minor.p50Nanos = percentile(impl_->minorPauses, 0.5);
  out.minor.p99Nanos = percentile(impl_->minorPauses, 0.99);
  out.major.p50Nanos = percentile(impl_->majorPauses, 0.5);
  out.major.p99Nanos = percentile(impl_->majorPauses, 0.99);
  return out;
}

Status Heap::collectNow(CollectionKind kind) {
  Impl& impl = *impl_;
  if (impl.broken.load(std::memory_order_relaxed)) return Status(StatusCode::kFatal);
  auto start = std::chrono::steady_clock::now();
  if (config_.stress == StressMode::kRelocate) installStaleReferenceHandler();
  flushMutators();
  uint64_t number;
  {
    // Not stats(): its percentiles sort every pause so far, which made each collection
    // cost in proportion to the collections before it.
    std::lock_guard lock(impl.mutex);
    number = stats_.collections + 1;
  }
  std::string fault = verifyBefore(*this, config_.verify);
  if (!fault.empty()) return failCollection("verify failed", "before collection #" + std::to_string(number) + ": " + fault);
  Collector run(*this, kind);
  if (!run.run()) return failCollection("collection failed", run.error());
  run.install(number);
  {
    std::lock_guard lock(impl.mutex);
    stats_.collections = number;
    stats_.bytesCopiedTotal += run.copiedBytes();
    stats_.bytesPromotedTotal += run.promotedBytes();
  }
  if (config_.verify) {
    fault = verifyHeapAfterCollection();
    if (!fault.empty()) return failCollection("verify failed", "after collection #" + std::to_string(number) + ": " + fault);
  }
  auto nanos = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  std::lock_guard lock(impl.mutex);
  stats_.totalPauseNanos += nanos;
  stats_.longestPauseNanos = std::max(stats_.longestPauseNanos, nanos);
  if (kind == CollectionKind::kMinor) notePause(stats_.minor, impl.minorPauses, nanos);
  else notePause(stats_.major, impl.majorPauses, nanos);
  return Status::ok();
}

}  // namespace weft::gc
