// The mark-region old generation (docs/design/gc-v2.md "Mark-region old generation";
// heap.h invariant 12): the lines of old chunks, the sweep that turns what a collection
// did not reach into fillers and recomputes the line marks, the holes (runs of free
// lines) that collections copy into, and a major's choice of the chunks it evacuates.
//
// Protocol: everything here runs world stopped, inside a collection (collector.cpp).
// A standard old chunk holds objects and fillers from base to top. A line is marked
// exactly when an object overlaps it; a run of unmarked lines below top is covered by
// fillers that start and end on line boundaries (a hole), so a copy may be written at
// any free line's start without breaking the chunk's walk. Three things change lines:
// the sweep (from scratch, from the objects it keeps), a copy into a hole (marks the
// lines it fills; the rest of the hole becomes fillers again when the collection leaves
// it) and the Cheney scan of promotion chunks (collector.cpp, marks what it scans).
#include <algorithm>
#include <cstring>

#include "gc/fault.h"
#include "gc/heap_internal.h"

namespace weft::gc {

namespace {

void formatFiller(char* p, size_t size, bool poison) {
  reinterpret_cast<Object*>(p)->header = ObjectHeader{kFillerKind, 0, 0, 0};
  fillerBytes(p) = size;
  if (poison && size > 2 * sizeof(ObjectHeader))
    std::memset(p + 2 * sizeof(ObjectHeader), kPoisonByte, size - 2 * sizeof(ObjectHeader));
}

char* lineUp(const Chunk* chunk, const char* p) {
  return chunk->base + (static_cast<size_t>(p - chunk->base) + kLineSize - 1) / kLineSize * kLineSize;
}

char* lineDown(const Chunk* chunk, const char* p) {
  return chunk->base + static_cast<size_t>(p - chunk->base) / kLineSize * kLineSize;
}

// [from, to) holds no live object, and a live object (or a chunk edge) lies on each
// side: it becomes fillers that keep the free lines inside it (a hole) apart from the
// marked lines at its ends. Returns its bytes.
size_t formatDead(const Chunk* chunk, char* from, char* to, bool poison) {
  char* first = lineUp(chunk, from);
  char* last = lineDown(chunk, to);
  if (first >= last) {
    formatFiller(from, static_cast<size_t>(to - from), poison);
  } else {
    if (from < first) formatFiller(from, static_cast<size_t>(first - from), poison);
    formatFiller(first, static_cast<size_t>(last - first), poison);
    if (last < to) formatFiller(last, static_cast<size_t>(to - last), poison);
  }
  return static_cast<size_t>(to - from);
}

}  // namespace

size_t sweepChunk(Chunk* chunk, const TypeInfo* types, uint8_t liveMask, uint8_t liveBits, bool poison) {
  std::memset(chunk->lines, 0, sizeof chunk->lines);
  char* end = chunk->base + chunk->size;
  char* dead = nullptr;
  size_t live = 0;
  size_t free = 0;
  for (char* p = chunk->base; p < chunk->top;) {
    auto* obj = reinterpret_cast<Object*>(p);
    size_t size;
    bool reached = false;
    if (obj->header.kind == kFillerKind) {
      size = fillerBytes(p);
    } else if (obj->header.kind == kForwardedKind) {
      Object* to = forwardee(obj);
      size = objectBytes(types[to->header.kind], to);
    } else {
      size = objectBytes(types[obj->header.kind], obj);
      reached = (obj->header.gcBits & liveMask) == liveBits;
    }
    if (reached) {
      if (dead) free += formatDead(chunk, dead, p, poison);
      dead = nullptr;
      markLines(chunk, p, size);
      live += size;
    } else if (!dead) {
      dead = p;
    }
    p += size;
  }
  if (!dead && chunk->top < end) dead = chunk->top;
  if (dead) free += formatDead(chunk, dead, end, poison);
  // The negative test of verify's line check: the sweep forgets the chunk's first
  // marked line.
  if (live && fault::hit("gc.line-drop")) {
    size_t w = 0;
    while (!chunk->lines[w]) ++w;
    chunk->lines[w] &= chunk->lines[w] - 1;
  }
  chunk->top = end;
  chunk->freeBytes = free;
  chunk->holeLine = 0;
  chunk->evacuating = false;
  return live;
}

char* HoleCursor::allocate(size_t size) {
  for (;;) {
    if (size <= static_cast<size_t>(limit_ - cursor_)) {
      char* p = cursor_;
      cursor_ += size;
      markLines(chunk_, p, size);
      chunk_->freeBytes -= size;
      return p;
    }
    if (chunk_ && size > kLineSize) return nullptr;
    if (!nextHole()) return nullptr;
  }
}

void HoleCursor::undo(char* p, size_t size) {
  cursor_ = p;
  chunk_->freeBytes += size;
}

// The next hole of `chunk` from its holeLine on, made current; false when none is left.
bool HoleCursor::holeIn(Chunk* chunk) {
  if (chunk->evacuating) return false;
  size_t end = static_cast<size_t>(chunk->top - chunk->base) / kLineSize;
  size_t line = chunk->holeLine;
  while (line < end && lineMarked(chunk, line)) ++line;
  size_t last = line;
  while (last < end && !lineMarked(chunk, last)) ++last;
  chunk->holeLine = static_cast<uint32_t>(last);
  if (line >= end) return false;
  chunk_ = chunk;
  cursor_ = chunk->base + line * kLineSize;
  limit_ = chunk->base + last * kLineSize;
  return true;
}

bool HoleCursor::nextHole() {
  Chunk* chunk = chunk_;
  closeHole();
  if (chunk && holeIn(chunk)) return true;
  for (;;) {
    if (next_.load(std::memory_order_relaxed) >= recycled_.size()) return false;
    // Relaxed: the list and the chunks do not change while markers run (world
    // stopped, and the requester published them before starting any marker).
    taken_ = next_.fetch_add(1, std::memory_order_relaxed);
    if (taken_ >= recycled_.size()) return false;
    if (holeIn(recycled_[taken_])) return true;
  }
}

void HoleCursor::closeHole() {
  if (cursor_ < limit_) {
    char* free = lineUp(chunk_, cursor_);
    if (free > cursor_ && free < limit_) {
      formatFiller(cursor_, static_cast<size_t>(free - cursor_), false);
    } else {
      free = cursor_;
    }
    formatFiller(free, static_cast<size_t>(limit_ - free), false);
    chunk_->holeLine = static_cast<uint32_t>(static_cast<size_t>(lineUp(chunk_, cursor_) - chunk_->base) / kLineSize);
  }
  chunk_ = nullptr;
  cursor_ = limit_ = nullptr;
}

void HoleCursor::close() {
  bool holding = chunk_ != nullptr;
  closeHole();
  if (holding) {
    size_t after = taken_ + 1;
    next_.compare_exchange_strong(after, taken_, std::memory_order_relaxed);
  }
}

// Whether the old generation's half-empty chunks hold holes of a quarter of its bytes:
// an incremental major, which evacuates nothing, would leave them so; a stop-the-world
// one evacuates them (chooseWork). World stopped.
bool fragmented(const std::vector<Chunk*>& space) {
  size_t oldBytes = 0;
  size_t sparseFree = 0;
  for (const Chunk* chunk : space) {
    if (chunk->young || chunk->large || chunk->cellSize) continue;
    oldBytes += static_cast<size_t>(chunk->top - chunk->base) - chunk->freeBytes;
    if (chunk->freeBytes >= chunk->size / 2) sparseFree += chunk->freeBytes;
  }
  return sparseFree >= std::max(2 * Heap::kChunkSize, oldBytes / 4);
}

// A major evacuates the old chunks that its predecessor's sweep (and the promotions
// since) left at least half free, the emptiest first, up to an eighth of the old
// generation's bytes (two chunks at least): the copies fill holes of the other chunks
// first, so they add at most that to the peak. One such chunk alone is evacuated only
// if the other chunks' room (free bytes, and the unused end of the chunk promotion
// bumps in) could hold its objects: moving them to a fresh chunk would free nothing. Their objects get kBitEvacuate, so reaching one copies it. Under
// relocate stress every old chunk is evacuated (no bits: everyChunk says it), so
// every movable object moves. World stopped: the caller reads Impl::space without the
// lock.
void chooseEvacuation(const std::vector<Chunk*>& space, const TypeInfo* types, bool everyChunk) {
  auto used = [](const Chunk* chunk) { return static_cast<size_t>(chunk->top - chunk->base) - chunk->freeBytes; };
  auto room = [&](const Chunk* chunk) { return chunk->size - used(chunk); };
  std::vector<Chunk*> sparse;
  size_t oldBytes = 0;
  size_t roomBytes = 0;
  for (Chunk* chunk : space) {
    if (chunk->young || chunk->large || chunk->cellSize) continue;
    oldBytes += used(chunk);
    roomBytes += room(chunk);
    if (everyChunk || chunk->freeBytes >= chunk->size / 2) sparse.push_back(chunk);
  }
  if (everyChunk) {
    for (Chunk* chunk : sparse) chunk->evacuating = true;
    return;
  }
  std::sort(sparse.begin(), sparse.end(), [&](const Chunk* a, const Chunk* b) { return used(a) < used(b); });
  size_t budget = std::max(2 * Heap::kChunkSize, oldBytes / 8);
  size_t chosen = 0;
  size_t moving = 0;
  while (chosen < sparse.size() && moving + used(sparse[chosen]) <= budget) moving += used(sparse[chosen++]);
  if (chosen == 1 && moving > roomBytes - room(sparse[0])) chosen = 0;
  for (size_t i = 0; i < chosen; ++i) {
    Chunk* chunk = sparse[i];
    chunk->evacuating = true;
    for (char* p = chunk->base; p < chunk->top;) {
      auto* obj = reinterpret_cast<Object*>(p);
      if (obj->header.kind == kFillerKind) {
        p += fillerBytes(p);
        continue;
      }
      obj->header.gcBits |= kBitEvacuate;
      p += objectBytes(types[obj->header.kind], obj);
    }
  }
}

}  // namespace weft::gc
