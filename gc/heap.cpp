// Heap spaces, allocation and accounting.
//
// Protocol: memory comes from page-aligned mmap chunks. A mutator bumps in a private
// buffer (one chunk, zero-filled when handed out); its slow path (refill) takes the
// heap lock, retires the old buffer (recording where its objects end) and takes a chunk
// from the pool of recycled ones or from the system (the most resident first). The
// buffer's pages are populated a step ahead of its allocations: its slow path without
// the lock extends the populated part (limit_) towards the buffer's end (end_), which
// is what accounting counts. Objects of kLargeObjectSize bytes
// or more get a chunk of their own, so big strings do not waste buffer tails. The heap
// limit is checked at refill against usedBytes, so a buffer handed out near the limit is
// shortened rather than refused: allocation fails only when the object itself would not
// fit. Crossing the threshold raises requested_; allocation never collects. Mutators
// join and leave the registry under the lock and only while no stop is pending; each
// reserves its own handle stack. Root, finalizer and external registrations are shared
// by every mutator thread and change under the lock.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "gc/fault.h"
#include "gc/heap_internal.h"

namespace weft::gc {

thread_local constinit Mutator* tCurrentMutator = nullptr;

namespace {
// Heaps alive in the process. With more than one (a host with several States), the
// calling thread's current mutator may belong to another heap than the object it
// remembers (rememberSlow checks). Relaxed: a heap is created and destroyed by its owner
// before and after any thread uses it, and a stale count only costs a lookup.
std::atomic<int> gLiveHeaps{0};
}  // namespace

size_t pageSize() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

Chunk* mapChunk(const ChunkSource& source, size_t bytes, bool collecting) {
  size_t page = pageSize();
  size_t size = (bytes + page - 1) & ~(page - 1);
  // From the source, a page more than asked: the chunk starts at the block's first page
  // boundary, so its pages are whole and inside the block.
  size_t blockSize = size + page;
  void* block = source.fn ? source.fn(source.ud, nullptr, 0, blockSize) : nullptr;
  if (source.fn && !block && !collecting) return nullptr;
  Chunk* chunk = new Chunk;
  if (block) {
    chunk->base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(block) + page - 1) & ~uintptr_t(page - 1));
    chunk->source = source;
    chunk->block = block;
    chunk->blockSize = blockSize;
    std::memset(chunk->base, 0, size);  // as fresh mmap'd pages are
    chunk->residentBytes = size;
  } else {
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      delete chunk;
      return nullptr;
    }
    chunk->base = static_cast<char*>(p);
  }
  chunk->size = size;
  chunk->top = chunk->base;
  return chunk;
}

void populateChunk(Chunk* chunk, size_t bytes) {
  bytes = std::min(bytes, chunk->size);
  if (bytes <= chunk->residentBytes) return;
  size_t page = pageSize();
  size_t from = chunk->residentBytes & ~(page - 1);
  size_t to = (bytes + page - 1) & ~(page - 1);
  // An older kernel refuses the advice (EINVAL): the pages then fault in as they are used.
  madvise(chunk->base + from, to - from, MADV_POPULATE_WRITE);
  chunk->residentBytes = std::min(to, chunk->size);
}

void unmapChunk(Chunk* chunk) {
  if (chunk->block) {
    chunk->source.fn(chunk->source.ud, chunk->block, chunk->blockSize, 0);  // never protected: stress.cpp
  } else {
    munmap(chunk->base, chunk->size);
  }
  delete chunk;
}

// ---- Mutator ----

Mutator::Mutator(Heap& heap) : heap_(heap) {
  void* handles = mmap(nullptr, kMaxHandles * sizeof(Object*), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  WEFT_CHECK(handles != MAP_FAILED, "cannot reserve the handle stack");
  handleBase_ = handleTop_ = static_cast<Object**>(handles);
  handleEnd_ = handleBase_ + kMaxHandles;
  Heap::Impl& impl = *heap.impl_;
  std::unique_lock lock(impl.mutex);
  heap.waitForNoStopLocked(lock);  // the collector walks `mutators` unlocked
  // Distinct hash streams per mutator; xorshift32 needs a non-zero state.
  hashState_ ^= static_cast<uint32_t>(impl.mutators.size()) * 0x85ebca6bu;
  if (hashState_ == 0) hashState_ = 0x9e3779b9u;
  gcBits_ = impl.epoch;
  lastAckedEpoch_ = impl.stopEpoch;
  impl.mutators.push_back(this);
}

Mutator::~Mutator() {
  if (tCurrentMutator == this) tCurrentMutator = nullptr;
  Heap::Impl& impl = *heap_.impl_;
  {
    std::unique_lock lock(impl.mutex);
    heap_.waitForNoStopLocked(lock);
    heap_.retireLocked(*this);
    heap_.retireCellsLocked(*this);
    impl.mutators.erase(std::find(impl.mutators.begin(), impl.mutators.end(), this));
  }
  munmap(handleBase_, kMaxHandles * sizeof(Object*));
}

void Mutator::noteStop(uint64_t nanos) {
  ++stats_.stops;
  stats_.stoppedNanosTotal += nanos;
  stats_.stoppedNanosMax = std::max(stats_.stoppedNanosMax, nanos);
}

Object* Mutator::allocateSlow(uint8_t kind, size_t bytes) {
  if (bytes > (size_t{1} << 47)) return nullptr;  // no address space is that big
  size_t size = roundObjectSize(bytes);
  if (size <= static_cast<size_t>(end_ - cursor_)) {
    // The buffer goes on past its populated part (its chunk is this mutator's alone).
    size_t need = static_cast<size_t>(cursor_ + size - chunk_->base);
    populateChunk(chunk_, std::min(static_cast<size_t>(end_ - chunk_->base), populateTarget(need)));
    limit_ = std::min(end_, chunk_->base + chunk_->residentBytes);
    char* p = cursor_;
    cursor_ += size;
    return initObject(p, kind);
  }
  char* p = heap_.refill(*this, size, heap_.impl_->types[kind].writtenWhole);
  return p ? initObject(p, kind) : nullptr;
}

// ---- Heap ----

Heap::Heap(const Config& config) : impl_(std::make_unique<Impl>()), config_(config) {
  // Survival pacing starts from a quarter of the floor (collector.cpp survivalNursery),
  // one chunk, and half a chunk more for what start-up notes beside it (non-moving cells,
  // stacks): without it, `weft -e ''` ran a minor, 0.1 ms and 128 KB of the collector's
  // text.
  impl_->threshold = config_.survivalPacing ? (config_.initialThreshold >> -kMinNurseryScale) + kChunkSize / 2
                                            : config_.initialThreshold;
  impl_->majorThreshold = config_.majorFloor;
  impl_->chunkSource = config_.chunkSource;
  mainMutator_ = std::make_unique<Mutator>(*this);
  mainMutator_->attached_ = true;  // no other thread exists yet
  tCurrentMutator = mainMutator_.get();
  gLiveHeaps.fetch_add(1, std::memory_order_relaxed);
  if (config_.verify) setVerify(true);
  if (config_.stress != StressMode::kNone) requested_.store(true, std::memory_order_relaxed);
  if (config_.stress == StressMode::kRelocate) installStaleReferenceHandler();
}

// Every mutator thread has finished with the heap by now.
Heap::~Heap() {
  gLiveHeaps.fetch_sub(1, std::memory_order_relaxed);
  setVerify(false);
  endCycle();
  flushMutators();  // the externals still in the mutators' own lists
  for (auto* list : {&impl_->externals, &impl_->youngExternals}) {
    for (Object* listed : *list) {
      Object* obj = currentAddress(listed);  // a failed collection may have moved it
      auto release = impl_->types[obj->header.kind].release;
      if (release) impl_->externalBytes -= static_cast<int64_t>(release(obj));
    }
  }
  impl_->owned.clear();
  mainMutator_.reset();
  // Orphan records of this heap that no collection took: a later heap mapped at these
  // addresses must not inherit them.
  std::vector<Object*> orphans, rescan;
  takeOrphanRemembered(*this, orphans);
  takeOrphanMarking(*this, orphans, rescan);
  for (Chunk* chunk : impl_->space) unmapChunk(chunk);
  for (Chunk* chunk : impl_->youngChunks) unmapChunk(chunk);
  for (Chunk* chunk : impl_->pool) unmapChunk(chunk);
  for (Chunk* chunk : impl_->largePool) unmapChunk(chunk);
  for (Chunk* chunk : impl_->abandoned) unmapChunk(chunk);
}

void Heap::setHeapLimit(size_t bytes) {
  {
    std::lock_guard lock(impl_->mutex);
    config_.heapLimit = bytes;
  }
  flushMutators();
}

void Heap::setVerify(bool on) {
  config_.verify = on;
  if (on != impl_->verifyRegistered) {
    impl_->verifyRegistered = on;
    if (on) registerVerifyHeap(this);
    else unregisterVerifyHeap(this);
  }
}

void Mutator::noteExternalBytes(int64_t delta) {
  externalPending_ += delta;
  if (externalPending_ < kExternalBatch && externalPending_ > -kExternalBatch) return;
  std::lock_guard lock(heap_.impl_->mutex);
  heap_.flushExternalLocked(*this);
  heap_.noteGrowthLocked();
}

void Heap::flushExternalLocked(Mutator& m) {
  impl_->externalBytes += std::exchange(m.externalPending_, 0);
  if (!m.externals_.empty()) {
    impl_->youngExternals.insert(impl_->youngExternals.end(), m.externals_.begin(), m.externals_.end());
    m.externals_.clear();
  }
}

// The bits are set atomically: a barrier on another worker may set kBitRemembered in
// the same byte at the same moment.
static bool setBitOnce(Object* obj, uint8_t bit) {
  return !(std::atomic_ref<uint8_t>(obj->header.gcBits).fetch_or(bit, std::memory_order_relaxed) & bit);
}

void Mutator::registerExternal(Object* obj) {
  if (!setBitOnce(obj, kBitExternal)) return;  // release must run once
  externals_.push_back(obj);
}

void Mutator::discardLarge(Object* obj, size_t bytes) {
  WEFT_CHECK(bytes >= Heap::kLargeObjectSize, "only a large object has its chunk's pages to itself");
  discarded_.emplace_back(obj, bytes);
  discardedBytes_ += bytes;
  if (discardedBytes_ >= kDiscardSoonBytes) {
    discardedBytes_ = 0;
    heap_.requestCollectionSoon();
  }
}

// At every stop (collectNow), world stopped: no reader is inside a dropped part, and
// nothing moved or freed it since it was dropped (a stop empties every list).
void Heap::discardDropped() {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  for (Mutator* m : impl_->mutators) {
    for (auto [obj, bytes] : m->discarded_) {
      uintptr_t from = (reinterpret_cast<uintptr_t>(obj) + Mutator::kDiscardKeptBytes + page - 1) & ~(page - 1);
      uintptr_t to = (reinterpret_cast<uintptr_t>(obj) + bytes) & ~(page - 1);
      if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
    }
    m->discarded_.clear();
    m->discardedBytes_ = 0;
  }
}

void Heap::retireLocked(Mutator& m) {
  flushExternalLocked(m);
  if (m.chunk_) {
    stats_.bytesAllocatedTotal += static_cast<size_t>(m.cursor_ - m.chunk_->top);
    m.chunk_->top = m.cursor_;
    impl_->usedBytes.fetch_sub(static_cast<size_t>(m.end_ - m.cursor_), std::memory_order_relaxed);
    impl_->openBuffers -= static_cast<size_t>(m.end_ - m.chunk_->base);
  }
  m.cursor_ = m.limit_ = m.end_ = nullptr;
  m.chunk_ = nullptr;
}

void Heap::addChunkLocked(Chunk* chunk) {
  (chunk->young ? impl_->youngChunks : impl_->space).push_back(chunk);
  impl_->chunkIndex[reinterpret_cast<uintptr_t>(chunk->base)] = chunk;
}

size_t Heap::collectionThresholdLocked() const {
  // Under a limit, collect well before it: a collection can only run at a safepoint, and
  // an allocation that finds the heap full of garbage fails. Once the live data passes
  // that mark, every buffer refilled would collect (each time a major copying all of it:
  // 526 majors copying 15 GB for 130 MB allocated, fuzz_undump's timeout at 83e371f), so
  // then the collection comes when half the room left above the live data is used.
  size_t threshold = impl_->threshold;
  if (size_t limit = config_.heapLimit) {
    size_t early = limit - limit / 4;
    size_t live = impl_->liveAfterLastGC;
    if (live >= early && live < limit) early = live + (limit - live) / 2;
    threshold = std::min(threshold, early);
  }
  return threshold;
}

// The bytes the threshold is held against: usedBytes without the mutators' open buffers
// (a buffer counts once it is retired, as far as it was filled), and off-heap growth.
size_t Heap::filledBytesLocked() const {
  size_t filled = impl_->usedBytes.load(std::memory_order_relaxed) - impl_->openBuffers;
  int64_t externalGrowth = impl_->externalBytes - impl_->externalAfterLastGC;
  if (externalGrowth > 0) filled += static_cast<size_t>(externalGrowth);
  return filled;
}

void Heap::noteGrowthLocked(size_t pending) {
  if (filledBytesLocked() + pending > collectionThresholdLocked()) {
    impl_->thresholdCrossed.store(true, std::memory_order_relaxed);
    requested_.store(true, std::memory_order_relaxed);
  }
  // An incremental major marks a slice per step the mutators allocate (incremental.cpp).
  if (impl_->cycle.active && stats_.bytesAllocatedTotal - impl_->cycle.allocatedAtSlice >= kSliceStepBytes) {
    impl_->sliceDue.store(true, std::memory_order_relaxed);
    requested_.store(true, std::memory_order_relaxed);
  }
}

// As a crossed threshold, without the lock (rememberSlow runs inside a store): relaxed,
// as noteGrowthLocked's stores, since a late read only delays the minor to a later
// safepoint. Reached once per cycle per mutator (the buffer is emptied by every
// collection); while automatic collection is stopped, wantsCollectionLocked drops it.
// A minor at the next safepoint: a mutator's remembered records reached their budget, or
// its dropped large objects their discardLarge bytes.
void Heap::requestCollectionSoon() {
  impl_->thresholdCrossed.store(true, std::memory_order_relaxed);
  requested_.store(true, std::memory_order_relaxed);
}

void Heap::grantEmergencyReserve() {
  impl_->reserveOpen.store(true, std::memory_order_relaxed);
  impl_->thresholdCrossed.store(true, std::memory_order_relaxed);
  requested_.store(true, std::memory_order_relaxed);
}

size_t Heap::currentLimitLocked() const {
  size_t limit = config_.heapLimit;
  if (limit && impl_->reserveOpen.load(std::memory_order_relaxed)) limit += std::max(limit / 8, 2 * kChunkSize);
  return limit;
}

// A mapped large chunk of kHugePageBytes or more asks for transparent huge pages: its
// object is filled from one end to the other as soon as it exists (an array part that
// doubled, a rebuilt node array), and a fresh mapping faulted in page by page spent more
// time in the kernel than in the copy (bench/sparse_keys.lua building its three arrays
// of 1.5 million keys: 0.50 -> 0.16-0.30 s). At most the object's last huge page is
// resident beyond what it touched. A pooled chunk keeps its advice; an embedder's
// source's blocks get none (their memory is the embedder's).
namespace {
constexpr size_t kHugePageBytes = size_t(2) << 20;  // x86-64's and arm64's (4 KiB pages)
void adviseHugePages(Chunk* chunk) {
  if (!chunk->block && chunk->size >= kHugePageBytes) madvise(chunk->base, chunk->size, MADV_HUGEPAGE);
}
// A new large object is mostly written at once: an array part that doubled takes the
// old one's values into its first half, a rebuilt node array its keys. Its first half is
// populated ahead: a buffer that doubled fills its second half only as it grows
// (bench/gsub.lua, populated whole: 400 KB more of peak RSS), and an object that asked
// for huge pages faults in 2 MiB at a time (bench/sparse_keys.lua, populated whole: 23 MB
// more). A kind written whole (TypeInfo::writtenWhole, a string's bytes) is populated
// whole: its second half faulted in page by page otherwise.
void populateLarge(Chunk* chunk, size_t size, bool writtenWhole) {
  if (size < kHugePageBytes) populateChunk(chunk, writtenWhole ? size : size / 2);
}
}  // namespace

// A young chunk of its own for one object of `size` bytes, zero-filled; nullptr past
// the limit or when the system refuses.
char* Heap::allocateLargeLocked(size_t size, bool writtenWhole, std::unique_lock<std::mutex>& lock) {
  Impl& impl = *impl_;
  size_t used = impl.usedBytes.load(std::memory_order_relaxed);
  size_t heapLimit = currentLimitLocked();
  if (heapLimit && (used > heapLimit || size > heapLimit - used)) return nullptr;
  Chunk* chunk = takeLargeChunkLocked(size);
  if (chunk) {
    // The chunk is this mutator's alone now, and no collection starts before the
    // allocation returns: zero it without holding up other mutators' refills. Its
    // bytes count as used first, so their limit checks see them.
    impl.usedBytes.fetch_add(size, std::memory_order_relaxed);
    lock.unlock();
    populateLarge(chunk, size, writtenWhole);
    zeroRecycled(chunk, size);
    lock.lock();
  } else {
    chunk = mapChunk(impl.chunkSource, size);
    if (!chunk) return nullptr;
    adviseHugePages(chunk);
    impl.usedBytes.fetch_add(size, std::memory_order_relaxed);
    lock.unlock();
    populateLarge(chunk, size, writtenWhole);
    lock.lock();
  }
  chunk->large = true;
  chunk->young = true;
  chunk->top = chunk->base + size;
  addChunkLocked(chunk);
  stats_.bytesAllocatedTotal += size;
  noteGrowthLocked();
  return chunk->base;
}

char* Heap::refill(Mutator& m, size_t size, bool writtenWhole) {
  Impl& impl = *impl_;
  std::unique_lock lock(impl.mutex);
  if (size >= kLargeObjectSize) return allocateLargeLocked(size, writtenWhole, lock);
  size_t heapLimit = currentLimitLocked();
  size_t used;
  retireLocked(m);
  used = impl.usedBytes.load(std::memory_order_relaxed);
  size_t capacity = kChunkSize;
  if (heapLimit) {
    size_t room = used >= heapLimit ? 0 : heapLimit - used;
    if (room < size) return nullptr;
    capacity = std::min(capacity, room & ~(kObjectAlignment - 1));
  }
  Chunk* chunk = takeChunkLocked(ChunkUse::kBumpBuffer);
  if (!chunk) return nullptr;
  populateChunk(chunk, std::min(capacity, populateTarget(size)));
  zeroRecycled(chunk, capacity);
  chunk->young = true;
  chunk->top = chunk->base;
  addChunkLocked(chunk);
  m.chunk_ = chunk;
  m.cursor_ = chunk->base + size;
  m.end_ = chunk->base + capacity;
  m.limit_ = std::min(m.end_, chunk->base + chunk->residentBytes);
  impl.usedBytes.fetch_add(capacity, std::memory_order_relaxed);
  impl.openBuffers += capacity;
  // The buffer handed out counts as half filled: the minor comes about when the
  // nursery's bytes are, as with buffers counted whole from the first, less a few cells
  // that then crossed the threshold with the nursery empty.
  noteGrowthLocked(capacity / 2);
  return chunk->base;
}

// A freed large chunk of about `size` bytes, or nullptr: an allocation zeroes it (zeroRecycled),
// a promotion's copy overwrites the object's bytes (Marker::allocateTo).
// Zeroing memory already mapped costs a fraction of faulting in a fresh mapping page by
// page (a table's rebuilt node array, an array part that doubled: bench/sparse_keys.lua).
// At most 1/8 of the chunk is left over, so a big chunk never serves a much smaller
// object.
Chunk* Heap::takeLargeChunkLocked(size_t size) {
  auto& pool = impl_->largePool;
  for (size_t i = 0; i < pool.size(); ++i) {
    Chunk* chunk = pool[i];
    if (chunk->size < size || chunk->size - size > chunk->size / 8) continue;
    pool[i] = pool.back();
    pool.pop_back();
    impl_->largePoolBytes -= chunk->size;
    return chunk;
  }
  return nullptr;
}

// A bump buffer gets the most resident pooled chunk and the others the least: a buffer
// fills its chunk before the next minor, and a minor's survivors and promotions fill
// little of theirs. Taken from one end, the chunks swapped roles, so two or three
// nursery-sized chunks came to be resident where one is used (bench/format.lua: its
// 256 KiB nursery, its survivors' chunk and the next one, 520 KiB). The most resident
// chunk also spares the buffer its page faults.
Chunk* Heap::takeChunkLocked(ChunkUse use) {
  auto& pool = impl_->pool;
  if (pool.empty()) return mapChunk(impl_->chunkSource, kChunkSize, use == ChunkUse::kCopies);
  Chunk* chunk;
  if (use == ChunkUse::kBumpBuffer) {
    chunk = pool.back();
    pool.pop_back();
  } else {
    chunk = pool.front();
    pool.pop_front();
  }
  chunk->freeBytes = 0;  // its lines and fillers were an old chunk's
  chunk->holeLine = 0;
  chunk->evacuating = false;
  std::memset(chunk->lines, 0, sizeof chunk->lines);
  return chunk;
}

void Heap::setChunkSource(ChunkSource source) {
  std::lock_guard lock(impl_->mutex);
  impl_->chunkSource = source;
}

void Heap::flushMutators() {
  std::lock_guard lock(impl_->mutex);
  for (Mutator* m : impl_->mutators) {
    retireLocked(*m);
    retireCellsLocked(*m);
  }
}

void Heap::registerType(uint8_t kind, const TypeInfo& info) {
  WEFT_CHECK(kind < kMaxKinds, "object kind out of range");
  WEFT_CHECK(info.fixedSize || info.sizeOf, "a kind needs fixedSize or sizeOf");
  impl_->types[kind] = info;
  impl_->registered[kind] = true;
}

const TypeInfo& Heap::typeInfo(uint8_t kind) const {
  WEFT_CHECK(kind < kMaxKinds && impl_->registered[kind], "unregistered object kind");
  return impl_->types[kind];
}

void Heap::pin(Object* obj) {
  std::lock_guard lock(impl_->pinLock);
  ++impl_->pins[obj];
}

void Heap::unpin(Object* obj) {
  std::lock_guard lock(impl_->pinLock);
  auto it = impl_->pins.find(obj);
  WEFT_CHECK(it != impl_->pins.end(), "unpin of an object that is not pinned");
  if (--it->second == 0) impl_->pins.erase(it);
}

uint32_t Heap::pinCount(const Object* obj) const {
  std::lock_guard lock(impl_->pinLock);
  auto it = impl_->pins.find(obj);
  return it == impl_->pins.end() ? 0 : it->second;
}

void Heap::addRootSource(RootSource* source) {
  std::lock_guard lock(impl_->mutex);
  impl_->roots.push_back(source);
}

void Heap::removeRootSource(RootSource* source) {
  std::lock_guard lock(impl_->mutex);
  auto& v = impl_->roots;
  v.erase(std::remove(v.begin(), v.end(), source), v.end());
}

void Heap::addWeakRootSource(WeakRootSource* source) {
  std::lock_guard lock(impl_->mutex);
  impl_->weakRoots.push_back(source);
}

void Heap::removeWeakRootSource(WeakRootSource* source) {
  std::lock_guard lock(impl_->mutex);
  auto& v = impl_->weakRoots;
  v.erase(std::remove(v.begin(), v.end(), source), v.end());
}

// The header bits belong to the caller's own object; the list is shared.
void Heap::registerExternal(Object* obj) {
  if (!setBitOnce(obj, kBitExternal)) return;  // release must run once
  std::lock_guard lock(impl_->mutex);
  impl_->youngExternals.push_back(obj);
}

// A new registration is young whatever its object's age (a minor must look at it); the
// fault site files it with the old ones, which verify reports (invariant 13).
void Heap::registerFinalizable(Object* obj) {
  if (!setBitOnce(obj, kBitFinalizable)) return;  // Lua marks an object once
  std::lock_guard lock(impl_->mutex);
  (fault::hit("gc.finalizable-misfile") ? impl_->finalizable : impl_->youngFinalizable).push_back(obj);
}

Object* Heap::takePendingFinalizer() {
  std::lock_guard lock(impl_->mutex);
  if (impl_->pending.empty()) return nullptr;
  Object* obj = impl_->pending.front();
  impl_->pending.pop_front();
  impl_->pendingHint.store(!impl_->pending.empty(), std::memory_order_relaxed);
  return obj;
}

bool Heap::hasPendingFinalizers() const { return impl_->pendingHint.load(std::memory_order_relaxed); }

// In reverse registration order: the young list's registrations are the newer ones.
void Heap::queueAllFinalizers() {
  std::lock_guard lock(impl_->mutex);
  for (auto* list : {&impl_->youngFinalizable, &impl_->finalizable}) {
    for (auto it = list->rbegin(); it != list->rend(); ++it) {
      (*it)->header.gcBits &= static_cast<uint8_t>(~kBitFinalizable);
      impl_->pending.push_back(*it);
    }
    list->clear();
  }
  impl_->pendingHint.store(!impl_->pending.empty(), std::memory_order_relaxed);
}

size_t Heap::bytesInUse(const Mutator& m) const {
  return impl_->usedBytes.load(std::memory_order_relaxed) - static_cast<size_t>(m.end_ - m.cursor_) - m.cellCached_;
}

bool Heap::contains(const void* p) const {
  auto addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->chunkIndex.upper_bound(addr);
  if (it == impl_->chunkIndex.begin()) return false;
  --it;
  return addr < it->first + it->second->size;
}

// The checking barrier calls this while other workers' barriers set bits of the same
// header (rememberSlow): the bits are read as the barrier reads them, atomically.
bool Heap::isCurrentObject(const Object* obj) const {
  if (!obj || (reinterpret_cast<uintptr_t>(obj) & (kObjectAlignment - 1)) || !contains(obj)) return false;
  uint8_t kind = obj->header.kind;
  uint8_t bits = loadGcBits(obj);
  // An old object an incremental major marked carries the epoch it marks with.
  bool marked = impl_->cycle.active && (bits & kBitOld) && (bits & kBitEpoch) == impl_->cycle.markEpoch;
  return kind < kMaxKinds && impl_->registered[kind] && ((bits & kBitEpoch) == impl_->epoch || marked);
}

// ---- The remembered set (gc-v2.md) ----

namespace {
std::mutex gOrphanMutex;
std::vector<Object*> gOrphans;  // gOrphanMutex
}  // namespace

// Once per old holder per cycle: the bit is set first (atomically, so of two workers
// storing into one holder at once at least one records it; both may, harmlessly), then
// the holder joins the calling thread's mutator's buffer. The fault site drops the
// record but keeps the bit, as a missing barrier would leave the set: the negative test
// of --gc-verify's remembered-set check.
// The thread's current mutator is that of the heap it last attached to or created; with
// several heaps (States) in the process, it must be the holder's.
Mutator* mutatorOf(const Object* holder) {
  Mutator* m = tCurrentMutator;
  if (m && (gLiveHeaps.load(std::memory_order_relaxed) == 1 || m->heap_.contains(holder))) return m;
  return nullptr;
}

void rememberSlow(Object* holder) {
  if (!setBitOnce(holder, kBitRemembered)) return;
  if (fault::hit("gc.barrier-drop")) return;
  if (Mutator* m = mutatorOf(holder)) {
    // The fault site stands for an append the system refuses: the record is lost, so
    // the heap fails closed rather than run on with a remembered set it cannot trust
    // (invariant 9); the next safepoint returns kFatal.
    if (fault::hit("gc.remember")) [[unlikely]] {
      (void)m->heap_.failCollection("remember", "a remembered-set append failed (fault injected: gc.remember)");
      return;
    }
    m->remembered_.push_back(holder);
    if (m->remembered_.size() == m->heap_.config_.rememberedBudget) [[unlikely]] m->heap_.requestCollectionSoon();
    return;
  }
  std::lock_guard lock(gOrphanMutex);
  gOrphans.push_back(holder);
}

void takeOrphanRemembered(Heap& heap, std::vector<Object*>& out) {
  std::lock_guard lock(gOrphanMutex);
  if (gOrphans.empty()) return;
  size_t kept = 0;
  for (Object* obj : gOrphans) {
    if (heap.contains(obj)) out.push_back(obj);
    else gOrphans[kept++] = obj;
  }
  gOrphans.resize(kept);
}

void forEachOrphanRemembered(Heap& heap, const std::function<void(Object*)>& f) {
  std::lock_guard lock(gOrphanMutex);
  for (Object* obj : gOrphans)
    if (heap.contains(obj)) f(obj);
}

}  // namespace weft::gc
