// The tracer of a collection, alone or as one of a parallel major's markers: protocol
// in marker.h.
#include "gc/marker.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "gc/fault.h"

namespace weft::gc {

namespace {

// Grey objects a marker hands to an idle one at most at a time: enough work (each
// object reaches a few more) that the taker's wake-up, some microseconds, is paid
// rarely, few enough that the last batches still balance.
constexpr size_t kShareBatch = 1024;
// How long an idle marker spins for a batch before it sleeps on the condition variable
// (pauses of some tens of cycles each: tens of microseconds).
constexpr int kIdleSpins = 2000;
constexpr uint8_t kBitsCleared = kBitEpoch | kBitRemembered | kBitEvacuate;

HeaderWord* headerWordOf(Object* obj) { return reinterpret_cast<HeaderWord*>(&obj->header); }

// The body only: another marker may claim the header meanwhile (a CAS), and the copy's
// header is the word the claim compares against (publishCopy). Most objects are a few
// words: copied inline rather than through a memcpy call.
inline void copyBody(char* to, const Object* from, size_t size) {
  constexpr size_t kHeader = sizeof(ObjectHeader);
  const char* src = reinterpret_cast<const char*>(from);
  if (size > 64) {
    std::memcpy(to + kHeader, src + kHeader, size - kHeader);
    return;
  }
  for (size_t i = kHeader; i < size; i += 8) std::memcpy(to + i, src + i, 8);
}

}  // namespace

Marker::Marker(const MarkPlan& plan, bool first)
    : plan_(plan), impl_(plan.impl), first_(first), hole_(plan.impl.recycled, plan.impl.recycledNext) {}

void Marker::abandonTo(std::vector<Chunk*>& out) {
  for (Chunk* chunk : toChunks_)
    if (chunk != reusedTail_) out.push_back(chunk);
  for (Chunk* chunk : toLarge_) {
    if (chunk->kept)
      chunk->kept = false;  // still old space's
    else
      out.push_back(chunk);
  }
  out.insert(out.end(), survivorChunks_.begin(), survivorChunks_.end());
  toChunks_.clear();
  toLarge_.clear();
  survivorChunks_.clear();
}

void Marker::fail(const char* what, const Object* obj) {
  if (!error_.empty()) return;
  if (!obj) {
    error_ = what;
    return;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s (object %p)", what, static_cast<const void*>(obj));
  error_ = buf;
}

void Marker::visit(Object*& slot) {
  Object* obj = slot;
  if (!obj) [[unlikely]]
    return;
  uint64_t word = loadHeaderWord(obj);
  if (kindOfWord(word) == kForwardedKind) {
    Object* to = forwardeeOfWord(word);
    storeSlot(slot, to);
    noteTarget(to);
    return;
  }
  uint8_t bits = gcBitsOfWord(word);
  if (inToSpace(bits)) return;
  if (ageing_ && (bits & kBitSurvivor) && isSurvivorCopy(obj)) {
    sawYoung_ = true;  // a slot updated already
    return;
  }
  if (!copying_) return;
  Object* to = copy(obj, word);
  storeSlot(slot, to);
  noteTarget(to);
}

void Marker::deferWeak(Object* container, bool weakKeys, bool weakValues) {
  if (!weakKeys && !weakValues) return;
  weak_.push_back(container);
  if (weakKeys && !weakValues) ephemerons_.push_back(container);
}

bool Marker::isLive(Object* obj) {
  if (!obj) return false;
  uint64_t word = loadHeaderWord(obj);
  if (kindOfWord(word) == kForwardedKind) return true;
  uint8_t bits = gcBitsOfWord(word);
  return inToSpace(bits) || (ageing_ && (bits & kBitSurvivor) && isSurvivorCopy(obj));
}

Object* Marker::copy(Object* obj, uint64_t word) {
  if (!error_.empty()) return obj;
  uint8_t kind = kindOfWord(word);
  if (kind >= kMaxKinds || !impl_.registered[kind]) {
    fail("reference to an object of unregistered kind", obj);
    return obj;
  }
  uint8_t bits = gcBitsOfWord(word);
  if (bits & kBitNonMoving) return keepNonMoving(obj);
  size_t size = objectBytes(impl_.types[kind], obj);
  bool large = size >= Heap::kLargeObjectSize;
  if (large && !plan_.relocateAll) {
    if (Object* kept = keepLarge(obj)) return kept;
  }
  // A major marks an old object where it lies unless its chunk is being evacuated.
  if ((bits & kBitOld) && !large && !plan_.minor && !plan_.relocateAll && !(bits & kBitEvacuate)) {
    markInPlace(obj, size);
    return obj;
  }
  // An ageing minor keeps a young object young the first time it survives, unless it is
  // registered as finalizable or external: those lists of the young are emptied by
  // every collection (gc-v2.md "Survivor age").
  constexpr uint8_t kPromoteAtOnce = kBitSurvivor | kBitFinalizable | kBitExternal;
  if (ageing_ && !large && !(bits & kPromoteAtOnce)) {
    if (Object* kept = age(obj, word, size)) return kept;
  }
  char* to = large ? nullptr : hole_.allocate(size);
  bool inHole = to != nullptr;
  if (!to && size < (size_t{1} << 47)) to = allocateTo(size);
  if (!to) {
    fail(plan_.minor ? "no memory to promote into (gc.promote)" : "no memory for to-space", obj);
    return obj;
  }
  copyBody(to, obj, size);
  return publishCopy(obj, word, reinterpret_cast<Object*>(to), size, inHole);
}

// The copy's header is `word`'s (what the claim compares against), old, in the
// to-space epoch. One marker: forwarded at once. Parallel: forwarded by the claim, or,
// if another marker's copy won, the copy's memory goes back and the winner's address
// is the answer (both copied: whether an object moves depends only on its header).
Object* Marker::publishCopy(Object* obj, uint64_t word, Object* moved, size_t size, bool inHole) {
  uint8_t bits = static_cast<uint8_t>((gcBitsOfWord(word) & ~kBitsCleared) | plan_.toEpoch | kBitOld);
  __atomic_store_n(headerWordOf(moved), withGcBits(word, bits), __ATOMIC_RELAXED);
  bool large = size >= Heap::kLargeObjectSize;
  char* to = reinterpret_cast<char*>(moved);
  if (!plan_.parallel) {
    setForwardee(obj, moved);
  } else if (!__atomic_compare_exchange_n(headerWordOf(obj), &word, forwardedWord(moved), false, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE)) {
    if (inHole) {
      hole_.undo(to, size);
    } else if (large) {
      unmapChunk(toLarge_.back());
      toLarge_.pop_back();
    } else {
      current_->top -= size;
      std::memset(current_->top, 0, size);  // nothing past top is dirty (noteRecycled)
    }
    return kindOfWord(word) == kForwardedKind ? forwardeeOfWord(word) : obj;
  }
  if (plan_.parallel) {
    if (!inHole && !large) markLines(current_, to, size);
    if (traced(word)) pushGrey(moved);
  } else if (inHole) {
    if (traced(word)) grey_.push_back(moved);
  } else if (impl_.types[kindOfWord(word)].prefetch && !large) {
    prefetchQueue_.push_back(moved);
  }
  notePromoted(moved);
  copiedBytes_ += size;
  ++reached_;
  return moved;
}

// Copies a young object that survives its first minor into a survivor chunk: young
// still, with kBitSurvivor, traced from the grey stack. nullptr if no chunk could be
// had (the object is then promoted).
Object* Marker::age(Object* obj, uint64_t word, size_t size) {
  char* to = allocateSurvivor(size);
  if (!to) return nullptr;
  copyBody(to, obj, size);
  auto* moved = reinterpret_cast<Object*>(to);
  uint8_t bits = static_cast<uint8_t>((gcBitsOfWord(word) & ~kBitsCleared) | plan_.toEpoch | kBitSurvivor);
  __atomic_store_n(headerWordOf(moved), withGcBits(word, bits), __ATOMIC_RELAXED);
  setForwardee(obj, moved);
  if (traced(word)) grey_.push_back(moved);
  survivorBytes_ += size;
  ++reached_;
  return moved;
}

char* Marker::allocateSurvivor(size_t size) {
  Chunk* chunk = survivorChunks_.empty() ? nullptr : survivorChunks_.back();
  if (!chunk || size > static_cast<size_t>(chunk->base + chunk->size - chunk->top)) {
    {
      std::lock_guard lock(impl_.mutex);
      chunk = plan_.heap.takeChunkLocked(Heap::ChunkUse::kCopies);
    }
    if (!chunk) return nullptr;
    chunk->top = chunk->base;
    chunk->young = true;
    survivorChunks_.push_back(chunk);
  }
  char* p = chunk->top;
  chunk->top += size;
  populateAhead(chunk);
  return p;
}

// Survivor copies of this minor are young, as are the survivors of the last one it
// reaches for the first time (and promotes): only the address tells them apart. A
// minor's survivors fill a few chunks.
bool Marker::isSurvivorCopy(const Object* obj) const {
  const char* p = reinterpret_cast<const char*>(obj);
  for (const Chunk* chunk : survivorChunks_)
    if (p >= chunk->base && p < chunk->top) return true;
  return false;
}

// The fault site forgets one holder: the negative test of verify's check after the
// minor (an old object without kBitRemembered holds no young reference).
void Marker::carry(Object* obj) {
  if ((obj->header.gcBits & kBitRemembered) || fault::hit("gc.carry-drop")) return;
  obj->header.gcBits |= kBitRemembered;
  carried_.push_back(obj);
}

// Claims `obj` where it lies: it takes the to-space epoch and becomes old (a young one
// is promoted in place). nullptr when another marker claimed it first.
Object* Marker::claimInPlace(Object* obj, uint64_t word, uint8_t bits) {
  for (;;) {
    // Checked before every attempt: a CAS of a header already claimed would succeed
    // (it writes the same word) and two markers would trace the object.
    if (plan_.parallel && (kindOfWord(word) == kForwardedKind || inToSpace(bits))) return nullptr;
    uint64_t marked = withGcBits(word, static_cast<uint8_t>((bits & ~kBitsCleared) | plan_.toEpoch | kBitOld));
    if (!plan_.parallel) {
      obj->header.gcBits = gcBitsOfWord(marked);
      return obj;
    }
    if (__atomic_compare_exchange_n(headerWordOf(obj), &word, marked, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return obj;
    bits = gcBitsOfWord(word);
  }
}

// Marks `obj` reached where it lies, and the scan traces it as it does copies.
void Marker::markInPlace(Object* obj, size_t size) {
  uint64_t word = loadHeaderWord(obj);
  if (!claimInPlace(obj, word, gcBitsOfWord(word))) return;
  if (traced(word)) pushGrey(obj);
  notePromoted(obj);
  keptBytes_ += size;
  ++reached_;
}

// A large object has its chunk to itself: the chunk joins to-space as it is, and the
// object takes the to-space epoch where it lies, so nothing is copied and no page of a
// fresh mapping is touched. Relocate stress still copies it (every object moves there).
// nullptr when `obj` is not alone at the start of a large chunk.
Object* Marker::keepLarge(Object* obj) {
  Chunk* chunk;
  {
    std::lock_guard lock(impl_.mutex);
    auto it = impl_.chunkIndex.find(reinterpret_cast<uintptr_t>(obj));
    if (it == impl_.chunkIndex.end()) return nullptr;
    chunk = it->second;
  }
  if (!chunk->large) return nullptr;
  uint64_t word = loadHeaderWord(obj);
  if (!claimInPlace(obj, word, gcBitsOfWord(word))) return obj;  // another marker kept it
  chunk->kept = true;
  toLarge_.push_back(chunk);
  keptBytes_ += static_cast<size_t>(chunk->top - chunk->base);
  ++reached_;
  if (plan_.parallel && traced(word)) pushGrey(obj);  // one marker: the scan walks toLarge_
  notePromoted(obj);
  return obj;
}

// Traced already by the cycle's slices: the scan skips it.
void Marker::adoptLarge(Chunk* chunk) {
  chunk->kept = true;
  toLarge_.push_back(chunk);
  keptBytes_ += static_cast<size_t>(chunk->top - chunk->base);
  if (!plan_.parallel) scanLarge_ = toLarge_.size();
}

// A non-moving object stays where it is whatever the mode: in a cell, or alone in a
// large chunk (which keepLarge keeps even under relocate stress).
Object* Marker::keepNonMoving(Object* obj) {
  size_t size = objectBytes(impl_.types[kindOfWord(loadHeaderWord(obj))], obj);
  if (size > kMaxCellSize) {
    if (Object* kept = keepLarge(obj)) return kept;
    fail("a big non-moving object is not alone in its chunk", obj);
    return obj;
  }
  markInPlace(obj, size);
  return obj;
}

char* Marker::allocateTo(size_t size) {
  if (size >= Heap::kLargeObjectSize) {
    // A pooled large chunk first: copies of large objects the mutators bumped into the
    // nursery (their buffer had room) mapped a chunk each, and majors unmapped them
    // (bench/cd.lua: a frame's voxel map, 162 of its 199 munmaps, each a TLB shootdown
    // of the other workers' and the compile thread's CPUs). The copy overwrites the
    // object's bytes; the chunk's dirty extent covers the rest (Chunk::dirtyBytes).
    Chunk* chunk;
    {
      std::lock_guard lock(impl_.mutex);
      chunk = plan_.heap.takeLargeChunkLocked(size);
    }
    if (!chunk) chunk = mapChunk(impl_.chunkSource, size, true);
    if (!chunk) return nullptr;
    chunk->large = true;
    chunk->top = chunk->base + size;
    populateChunk(chunk, size);  // the copy writes it whole
    toLarge_.push_back(chunk);
    return chunk->base;
  }
  if (first_ && !current_ && impl_.promotionTail && !impl_.promotionTail->evacuating) {
    // Promotion continues where the last collection stopped, so old chunks fill up (in
    // a major too, unless that chunk is being evacuated; its sweep then covers the copies).
    current_ = reusedTail_ = impl_.promotionTail;
    toChunks_.push_back(current_);
    scanChunk_ = 0;
    scanPtr_ = current_->top;
  }
  if (!current_ || size > static_cast<size_t>(current_->base + current_->size - current_->top)) {
    // The fault site stands for a promotion (or a to-space chunk) the system refuses.
    if (plan_.minor && fault::hit("gc.promote")) return nullptr;
    Chunk* chunk;
    {
      std::lock_guard lock(impl_.mutex);
      chunk = plan_.heap.takeChunkLocked(Heap::ChunkUse::kCopies);
    }
    if (!chunk) return nullptr;
    chunk->top = chunk->base;
    toChunks_.push_back(chunk);
    current_ = chunk;
  }
  char* p = current_->top;
  current_->top += size;
  populateAhead(current_);
  return p;
}

// An atomic read, though this marker claimed `obj`: a marker that lost the race to
// claim it may still be failing its compare-and-swap, which ThreadSanitizer counts as a
// write.
void Marker::traceOne(Object* obj) {
  const TypeInfo& info = impl_.types[kindOfWord(loadHeaderWord(obj))];
  if (info.trace) traceHolder(obj, [&] { info.trace(obj, *this); });
}

// Breadth-first over to-space: promotion chunks in order (the last one grows while it is
// scanned; the lines of what it scans are marked), then large objects, then the grey
// stack; repeat until none advanced. No recursion, so a million-long list costs no
// stack. With several markers (plan_.parallel) every reached object is pushed grey
// (publishCopy, markInPlace, keepLarge), from the shared phase to the collection's end,
// so only the grey stack is walked: the copies were traced from it already.
void Marker::scan() {
  for (;;) {
    bool progress = !plan_.parallel && scanCopies();
    while (!grey_.empty()) {
      Object* obj = grey_.back();
      grey_.pop_back();
      traceOne(obj);
      progress = true;
    }
    if (!progress) return;
  }
}

// One marker's Cheney scan of its promotion chunks and large objects; whether it
// traced anything.
bool Marker::scanCopies() {
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
      if (info.trace) traceHolder(obj, [&] { info.trace(obj, *this); });
      progress = true;
    }
    if (scanChunk_ + 1 == toChunks_.size()) break;
    ++scanChunk_;
    scanPtr_ = nullptr;
  }
  while (scanLarge_ < toLarge_.size()) {
    traceOne(reinterpret_cast<Object*>(toLarge_[scanLarge_++]->base));
    progress = true;
  }
  return progress;
}

// Tracing many small objects that point off the heap (threads: their data and stacks)
// costs a cache miss per pointer. Such objects are queued as they are copied, which is
// the order the scan reaches them, so tracing the i-th can prefetch for those kAhead and
// 2 * kAhead places further on.
void Marker::prefetchAlong() {
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

// Shares while the trace of one object runs too: tracing a table with a 400,000-slot
// array part took 15 ms, and the helper stayed idle through it (2 cores: the helper
// traced a quarter of the objects and idled half the phase; a little under half, idle
// for a few percent, once it could share here).
void Marker::pushGrey(Object* obj) {
  grey_.push_back(obj);
  if (job_ && grey_.size() >= 2 * kShareBatch && job_->hungry()) share(*job_);
}

void Marker::scanShared(MarkJob& job) {
  job_ = &job;
  do {
    while (!grey_.empty()) {
      if (!error_.empty()) {
        job.stop();
        break;
      }
      if (grey_.size() > 1 && job.hungry()) share(job);
      Object* obj = grey_.back();
      grey_.pop_back();
      traceOne(obj);
    }
  } while (error_.empty() && job.take(grey_));
  job_ = nullptr;  // the job ends with the phase; later steps trace alone
}

// The newest half of the stack (at most kShareBatch objects): cheap to cut, and as
// good a share as any for trees.
void Marker::share(MarkJob& job) {
  size_t n = std::min(grey_.size() / 2, kShareBatch);
  std::vector<Object*> batch(grey_.end() - static_cast<std::ptrdiff_t>(n), grey_.end());
  grey_.resize(grey_.size() - n);
  job.give(std::move(batch));
}

void Marker::absorb(Marker& other) {
  weak_.insert(weak_.end(), other.weak_.begin(), other.weak_.end());
  ephemerons_.insert(ephemerons_.end(), other.ephemerons_.begin(), other.ephemerons_.end());
  reached_ += other.reached_;
  copiedBytes_ += other.copiedBytes_;
  keptBytes_ += other.keptBytes_;
  if (error_.empty()) error_ = other.error_;
  other.weak_.clear();
  other.ephemerons_.clear();
  other.reached_ = other.copiedBytes_ = other.keptBytes_ = 0;
}

// ---- MarkJob ----

void MarkJob::run(Marker& marker) {
  if (fault::hit("gc.marker")) {
    marker.fail("a parallel marker failed (fault injected: gc.marker)", nullptr);
    stop();
    return;
  }
  if (plan_.parallel)
    marker.scanShared(*this);
  else
    marker.scan();  // alone: the Cheney scan finds the copies
}

void MarkJob::help() {
  Marker* marker;
  {
    std::lock_guard lock(mutex_);
    if (over_) return;
    helpers_.push_back(std::make_unique<Marker>(plan_, false));
    marker = helpers_.back().get();
    ++joined_;
  }
  run(*marker);
}

void MarkJob::give(std::vector<Object*>&& batch) {
  std::lock_guard lock(mutex_);
  batches_.push_back(std::move(batch));
  hungry_.store(idle_ > batches_.size(), std::memory_order_relaxed);
  events_.fetch_add(1, std::memory_order_relaxed);
  cv_.notify_one();
}

bool MarkJob::take(std::vector<Object*>& grey) {
  std::unique_lock lock(mutex_);
  ++idle_;
  for (;;) {
    if (over_) return false;
    if (!batches_.empty()) {
      grey = std::move(batches_.back());
      batches_.pop_back();
      --idle_;
      hungry_.store(idle_ > batches_.size(), std::memory_order_relaxed);
      return true;
    }
    if (idle_ == joined_) {
      over_ = true;
      hungry_.store(false, std::memory_order_relaxed);
      events_.fetch_add(1, std::memory_order_relaxed);
      cv_.notify_all();
      return false;
    }
    hungry_.store(true, std::memory_order_relaxed);
    // A batch usually comes within microseconds: spin for it before sleeping. events_
    // changes with every batch given and when the phase ends.
    uint64_t seen = events_.load(std::memory_order_relaxed);
    lock.unlock();
    for (int i = 0; i < kIdleSpins && events_.load(std::memory_order_relaxed) == seen; ++i) cpuPause();
    lock.lock();
    if (events_.load(std::memory_order_relaxed) == seen && !over_ && batches_.empty()) cv_.wait(lock);
  }
}

void MarkJob::stop() {
  std::lock_guard lock(mutex_);
  over_ = true;
  hungry_.store(false, std::memory_order_relaxed);
  events_.fetch_add(1, std::memory_order_relaxed);
  cv_.notify_all();
}

}  // namespace weft::gc
