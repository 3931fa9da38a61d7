// The non-moving space (docs/design/gc-v2.md "Pinning and non-moving objects"): objects
// allocated with Mutator::allocateNonMoving never move, so native code may keep their
// address for as long as they live (userdata payloads handed to C).
//
// Protocol: objects of up to kMaxCellSize bytes live in cells of chunks that
// belong to one size class each (Chunk::cellSize); a bigger one gets a chunk of its own,
// as a large object does, which every collection keeps in place. A mutator takes a
// batch of free cells of a class under the heap lock (refillCells: first the class's
// free list, then cells cut from its newest chunk, then a new chunk from the pool,
// zeroed) and allocates from that private list with no lock; the batch counts as used
// bytes at once, as a bump buffer does, and the cells it did not use go back
// (retireCellsLocked) whenever the heap flushes its mutators (a collection,
// verification, a limit change). A collection
// marks the non-moving objects it reaches where they lie (collector.cpp markInPlace:
// kBitOld, the to-space epoch) and traces them like copies, then frees the cells of
// those it did not reach, after the releases of dead externals ran: a minor only the
// cells allocated since the last collection (Impl::youngCells, so its cost does not grow
// with the old non-moving objects), a major every cell, rebuilding the free lists and
// freeing chunks left empty (pooled as the nursery's are: collector.cpp install). A free cell's header has kind kFreeCellKind (its body is
// poisoned under relocate stress), so a stale reference to it fails verification.
#include <algorithm>
#include <cstring>

#include "gc/heap_internal.h"

namespace weft::gc {

namespace {

// Steps of 16 bytes up to 128, then four classes per doubling: at most a quarter of a
// cell is lost to rounding.
constexpr size_t kCellSizes[kCellClasses] = {16,  32,  48,  64,  80,  96,   112,  128,
                                                      160, 192, 224, 256, 320, 384,  448,  512,
                                                      640, 768, 896, 1024, 1280, 1536, 1792, 2048};
static_assert(kCellSizes[kCellClasses - 1] == kMaxCellSize);

// Cells a refill hands out: about a page's worth, at least one.
size_t cellBatch(size_t cell) { return std::max<size_t>(1, 4096 / cell); }

void formatFreeCell(char* p, size_t cell, char* next, bool poison) {
  auto* obj = reinterpret_cast<Object*>(p);
  obj->header = ObjectHeader{kFreeCellKind, 0, 0, 0};
  nextFreeCell(p) = next;
  if (poison && cell > 2 * sizeof(ObjectHeader))
    std::memset(p + 2 * sizeof(ObjectHeader), kPoisonByte, cell - 2 * sizeof(ObjectHeader));
}

}  // namespace

int cellClassOf(size_t size) {
  if (size <= 128) return static_cast<int>((size + 15) / 16) - 1;  // size >= kMinObjectSize
  for (int cls = 8; cls < kCellClasses; ++cls)
    if (size <= kCellSizes[cls]) return cls;
  return -1;
}

size_t cellSizeOf(int cls) { return kCellSizes[cls]; }

Object* Mutator::allocateNonMoving(uint8_t kind, size_t bytes) {
  if (bytes > (size_t{1} << 47)) return nullptr;  // no address space is that big
  size_t size = roundObjectSize(bytes);
  int cls = cellClassOf(size);
  char* p;
  if (cls < 0) {
    std::unique_lock lock(heap_.impl_->mutex);
    p = heap_.allocateLargeLocked(size, heap_.impl_->types[kind].writtenWhole, lock);
    if (!p) return nullptr;
  } else {
    p = cellFree_[cls];
    if (!p && !(p = heap_.refillCells(*this, cls))) return nullptr;
    cellFree_[cls] = nextFreeCell(p);
    cellCached_ -= kCellSizes[cls];
    std::memset(p, 0, size);
  }
  Object* obj = initObject(p, kind);
  obj->header.gcBits |= kBitNonMoving;
  if (cls >= 0) youngCells_.push_back(obj);
  return obj;
}

// A batch of free cells of class `cls` for `m`'s list; returns its head, or nullptr
// when the limit leaves no room for one cell or the system refuses a chunk.
char* Heap::refillCells(Mutator& m, int cls) {
  Impl& impl = *impl_;
  size_t cell = kCellSizes[cls];
  size_t want = cellBatch(cell);
  std::lock_guard lock(impl.mutex);
  if (size_t limit = currentLimitLocked()) {
    size_t used = impl.usedBytes.load(std::memory_order_relaxed);
    want = std::min(want, used >= limit ? 0 : (limit - used) / cell);
    if (want == 0) return nullptr;
  }
  CellClass& c = impl.cells[cls];
  char* head = nullptr;
  size_t got = 0;
  for (; got < want && c.free; ++got) {
    char* p = c.free;
    c.free = nextFreeCell(p);
    nextFreeCell(p) = head;
    head = p;
  }
  for (; got < want; ++got) {
    Chunk* chunk = c.carve;
    if (!chunk || chunk->top + cell > chunk->base + chunk->size) {
      chunk = takeChunkLocked(ChunkUse::kCells);
      if (!chunk) break;
      zeroRecycled(chunk, chunk->size);  // cells are cut from zeroed memory
      chunk->top = chunk->base;
      chunk->cellSize = static_cast<uint32_t>(cell);
      addChunkLocked(chunk);
      c.chunks.push_back(chunk);
      c.carve = chunk;
    }
    char* p = chunk->top;
    chunk->top += cell;
    formatFreeCell(p, cell, head, false);  // fresh memory: zero but for the header
    head = p;
  }
  if (!got) return nullptr;
  size_t bytes = got * cell;
  impl.usedBytes.fetch_add(bytes, std::memory_order_relaxed);
  impl.cellBytes += bytes;
  stats_.bytesAllocatedTotal += bytes;
  m.cellCached_ += bytes;
  m.cellFree_[cls] = head;
  noteGrowthLocked();
  return head;
}

// The cells `m` took and did not use go back to their classes' lists; the cells it
// allocated join the heap's young list.
void Heap::retireCellsLocked(Mutator& m) {
  Impl& impl = *impl_;
  for (int cls = 0; cls < kCellClasses; ++cls) {
    char* head = std::exchange(m.cellFree_[cls], nullptr);
    if (!head) continue;
    char* tail = head;
    while (nextFreeCell(tail)) tail = nextFreeCell(tail);
    nextFreeCell(tail) = impl.cells[cls].free;
    impl.cells[cls].free = head;
  }
  impl.usedBytes.fetch_sub(m.cellCached_, std::memory_order_relaxed);
  impl.cellBytes -= m.cellCached_;
  stats_.bytesAllocatedTotal -= m.cellCached_;
  m.cellCached_ = 0;
  if (!m.youngCells_.empty()) {
    impl.youngCells.insert(impl.youngCells.end(), m.youngCells_.begin(), m.youngCells_.end());
    m.youngCells_.clear();
  }
}

// World stopped, after tracing and the releases of dead externals. A minor frees the
// young cells it did not reach (they are still young); a major every cell whose object
// does not carry `liveEpoch`, and returns in `emptied` the chunks (other than a class's
// newest) left with no object, which it drops from their classes.
// A minor frees the cells of the young non-moving objects it did not reach.
void Heap::sweepYoungCells(bool poison) {
  Impl& impl = *impl_;
  for (Object* obj : impl.youngCells) {
    if (obj->header.gcBits & kBitOld) continue;
    int cls = cellClassOf(objectBytes(impl.types[obj->header.kind], obj));
    char* p = reinterpret_cast<char*>(obj);
    formatFreeCell(p, kCellSizes[cls], impl.cells[cls].free, poison);
    impl.cells[cls].free = p;
    impl.cellBytes -= kCellSizes[cls];
  }
  impl.youngCells.clear();
}

CellSweep sweepCellChunk(Chunk* chunk, uint8_t liveEpoch, bool poison) {
  size_t cell = chunk->cellSize;
  CellSweep out;
  for (char* p = chunk->base; p + cell <= chunk->top; p += cell) {
    auto* obj = reinterpret_cast<Object*>(p);
    if (obj->header.kind != kFreeCellKind && (obj->header.gcBits & kBitEpoch) == liveEpoch) {
      out.live += cell;
      continue;
    }
    if (obj->header.kind != kFreeCellKind) formatFreeCell(p, cell, out.head, poison);
    else nextFreeCell(p) = out.head;
    if (!out.tail) out.tail = p;
    out.head = p;
  }
  return out;
}

// A major, after sweepCellChunk ran on every cell chunk (`swept`: their results, in
// the classes' order, then the chunks' order): rebuilds each class's free list, the
// newest chunk's cells first, and hands back the chunks left empty but a class's
// carving one.
void Heap::linkSweptCells(const CellSweep* swept, std::vector<Chunk*>& emptied) {
  Impl& impl = *impl_;
  impl.youngCells.clear();
  size_t live = 0;
  for (CellClass& c : impl.cells) {
    c.free = nullptr;
    size_t kept = 0;
    for (Chunk* chunk : c.chunks) {
      const CellSweep& s = *swept++;
      if (s.live == 0 && chunk != c.carve) {
        emptied.push_back(chunk);
        continue;
      }
      if (s.head) {
        nextFreeCell(s.tail) = c.free;
        c.free = s.head;
      }
      c.chunks[kept++] = chunk;
      live += s.live;
    }
    c.chunks.resize(kept);
  }
  impl.cellBytes = live;
}

}  // namespace weft::gc
