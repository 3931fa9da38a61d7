// Heap verification (--gc-verify) and the checking write barrier: the checkers of heap.h
// invariants 2, 3, 10, 11, 12 and 13.
//
// Protocol: verifyHeap first walks every current-space chunk object by object (kind
// registered, not forwarded, current epoch, size inside its chunk), recording object
// starts; then it checks every reference held by roots, registrations, every mutator's
// handles, the pending-finalizer queue, the weak roots' entries (the string table) and
// every object (strong parts via trace, weak parts via clearWeak with an isLive that is
// always true, which keeps every entry). It
// runs world stopped (inside a collection) or while no other mutator thread runs. A
// reference must be non-null, aligned and exactly the start of a current-space object,
// so stale pointers and interior pointers are both caught. Headers of unknown memory are never
// read: a stale reference into protected old space is reported, not faulted on.
// Generations (gc-v2.md): an object's kBitOld must match its chunk's generation; an old
// object with kBitRemembered must be in some mutator's remembered buffer; an old object
// without it must hold no young reference (for a Thread object: its stack is clean),
// and so must what a root source says a minor would skip (gc/pass.h: a task record or
// a channel's buffer not written since the last collection). Finalizable registrations
// (invariant 13): the old list holds only old objects and every young finalizable
// object is on the young list, which is empty after a collection.
// After a collection every buffer is empty, and the only young objects are the survivors
// a minor kept (kBitSurvivor), the only remembered ones the holders it carried.
// Pinning and non-moving objects (gc-v2.md): cell chunks are walked cell by cell (an
// object of kBitNonMoving or a free cell each); a filler is skipped; an object with
// kBitNonMoving anywhere but a cell or alone in a large chunk has moved. A reference
// to a free cell or a filler is a reference to a freed object. Every pinned object must
// be an object of current space where it was pinned (so a pinned object that moved or
// died, gc.pin-drop, is reported).
// Current space: the chunk index names exactly the chunks of the nursery's and the old
// generation's lists (each chunk once, none overlapping the next), the lists agree
// with their chunks' generation, and the old chunks' bytes are what the heap counted.
// Mark-region (gc-v2.md): in every old standard chunk the line marks are exactly the
// lines its objects overlap (so a referenced object never lies in a free line), a
// filler that touches a free line covers whole free lines only (so promotion can copy
// into the hole), freeBytes is the fillers' total, every chunk on the recycled list is
// such a chunk of current space, and no object carries kBitEvacuate outside a major.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string_view>
#include <unistd.h>

#include <iterator>
#include <utility>

#include "gc/heap_internal.h"
#include "gc/pass.h"

namespace weft::gc {


class Verifier final : public Visitor {
 public:
  Verifier(Heap& heap, bool afterCollection) : heap_(heap), impl_(*heap.impl_), after_(afterCollection) {}

  std::string run() {
    heap_.flushMutators();
    gatherRemembered();
    walkSpace();
    checkRoots();
    checkObjects();
    return fault_;
  }

  void visit(Object*& slot) override { check(slot); }
  void deferWeak(Object* container, bool weakKeys, bool weakValues) override {
    if (weakKeys || weakValues) weakDeferred_ = true;
  }
  bool isLive(Object*) override { return true; }
  void setRootSkipped(bool skipped) { rootSkipped_ = skipped; }
  void setRootTraced(bool traced) { rootTraced_ = traced; }

 private:
  void gatherRemembered();
  bool checkChunkLists();
  void walkSpace();
  void walkChunk(const Chunk* chunk);
  void walkCells(const Chunk* chunk);
  void checkLines(const Chunk* chunk, const uint64_t* lines, size_t freeBytes);
  bool fillerKeepsLines(const Chunk* chunk, const char* p, size_t size) const;
  bool checkHeader(const Chunk* chunk, const Object* obj, bool young);
  void checkRoots();
  void checkFinalizable();
  void checkObjects();
  void check(const Object* ref);
  void report(const char* fmt, const void* p, size_t n = 0);
  std::string holderText() const;
  const char* kindName(uint8_t kind) const {
    const char* name = impl_.types[kind].name;
    return name ? name : "?";
  }

  Heap& heap_;
  Heap::Impl& impl_;
  bool after_;  // right after a collection: nothing young or remembered but survivors, carried holders
  std::vector<const Object*> starts_;  // sorted: chunks are walked in address order
  // Free cells and fillers (start, end), sorted the same way.
  std::vector<std::pair<const char*, const char*>> freed_;
  bool isFreed(const char* p) const {
    auto it = std::upper_bound(freed_.begin(), freed_.end(), p,
                               [](const char* q, const auto& range) { return q < range.first; });
    return it != freed_.begin() && p < std::prev(it)->second;
  }
  std::vector<const Object*> recorded_;  // sorted: every remembered buffer's holders
  std::vector<const Object*> youngFinalizable_;  // sorted: the young registrations
  bool holderClean_ = false;  // the holder is old and not remembered: no young referent
  // While an incremental major marks: the holder is marked, not grey and not listed for
  // a rescan, so every old object it refers to strongly is marked (the tricolour rule
  // the barrier's marking half keeps).
  bool holderBlack_ = false;
  std::vector<const Object*> grey_;  // sorted: the cycle's and the mutators' grey objects
  // A root source visits references a minor would skip (gc/pass.h): no young referent.
  bool rootSkipped_ = false;
  // A root source visits a root the marking cycle traced, not written since: no
  // unmarked old referent.
  bool rootTraced_ = false;
  // Who holds the reference being checked (formatted only on failure).
  const Object* holder_ = nullptr;
  const char* rootKind_ = nullptr;
  size_t rootIndex_ = 0;
  bool weakDeferred_ = false;
  std::string fault_;
};

std::string Verifier::holderText() const {
  char buf[96];
  if (holder_)
    std::snprintf(buf, sizeof buf, "object %p (%s)", static_cast<const void*>(holder_), kindName(holder_->header.kind));
  else
    std::snprintf(buf, sizeof buf, "%s #%zu", rootKind_, rootIndex_);
  return buf;
}

void Verifier::report(const char* fmt, const void* p, size_t n) {
  if (!fault_.empty()) return;
  char buf[200];
  std::snprintf(buf, sizeof buf, fmt, p, n);
  fault_ = buf;
}

void Verifier::gatherRemembered() {
  for (const Mutator* m : impl_.mutators) recorded_.insert(recorded_.end(), m->remembered_.begin(), m->remembered_.end());
  forEachOrphanRemembered(heap_, [this](Object* obj) { recorded_.push_back(obj); });
  if (after_ && !recorded_.empty()) report("remembered buffers still hold %p after the collection", recorded_.front());
  for (const Object* obj : impl_.carriedRemembered) {
    if (!(obj->header.gcBits & kBitOld) || !(obj->header.gcBits & kBitRemembered))
      report("carried holder %p is young or not remembered", obj);
    recorded_.push_back(obj);
  }
  std::sort(recorded_.begin(), recorded_.end());
}

// The chunk index is kept as chunks join and leave current space, never rebuilt, and
// a minor adds its promotion's bytes to the old chunks' count rather than recounting:
// both are checked against the lists, whose chunks are read only once the index names
// exactly them (an entry left behind may name a chunk already unmapped).
bool Verifier::checkChunkLists() {
  std::vector<const Chunk*> listed;
  size_t oldBytes = 0;
  for (const Chunk* chunk : impl_.youngChunks) {
    if (!chunk->young) return report("chunk %p on the nursery list is old", chunk->base), false;
    listed.push_back(chunk);
  }
  for (const Chunk* chunk : impl_.space) {
    if (chunk->young) return report("chunk %p of the old generation is young", chunk->base), false;
    if (!chunk->cellSize) oldBytes += static_cast<size_t>(chunk->top - chunk->base) - chunk->freeBytes;
    listed.push_back(chunk);
  }
  std::sort(listed.begin(), listed.end());
  if (auto twice = std::adjacent_find(listed.begin(), listed.end()); twice != listed.end())
    return report("chunk %p is listed twice", (*twice)->base), false;
  for (const auto& [base, chunk] : impl_.chunkIndex) {
    if (!std::binary_search(listed.begin(), listed.end(), chunk))
      return report("the chunk index holds %p, which is no chunk of current space", reinterpret_cast<void*>(base)),
             false;
  }
  for (const Chunk* chunk : listed) {
    auto it = impl_.chunkIndex.find(reinterpret_cast<uintptr_t>(chunk->base));
    if (it == impl_.chunkIndex.end() || it->second != chunk)
      return report("chunk %p of current space is not in the chunk index", chunk->base), false;
  }
  const Chunk* previous = nullptr;
  for (const auto& [base, chunk] : impl_.chunkIndex) {
    if (previous && previous->base + previous->size > chunk->base)
      return report("chunk %p overlaps the next one", previous->base), false;
    previous = chunk;
  }
  if (oldBytes != impl_.oldChunkBytes) {
    char buf[120];
    std::snprintf(buf, sizeof buf, "the old chunks hold %zu bytes, not the %zu counted", oldBytes, impl_.oldChunkBytes);
    if (fault_.empty()) fault_ = buf;
    return false;
  }
  return true;
}

void Verifier::walkSpace() {
  if (!checkChunkLists()) return;
  for (const auto& [base, chunk] : impl_.chunkIndex) {
    if (chunk->top < chunk->base || chunk->top > chunk->base + chunk->size) {
      report("chunk %p has its top outside the chunk", chunk->base);
      return;
    }
    walkChunk(chunk);
    if (!fault_.empty()) return;
  }
  for (const Chunk* chunk : impl_.recycled) {
    auto it = impl_.chunkIndex.find(reinterpret_cast<uintptr_t>(chunk->base));
    if (it == impl_.chunkIndex.end() || it->second != chunk || chunk->young || chunk->large || chunk->cellSize)
      return report("recycled chunk %p is not an old chunk of current space", chunk->base);
  }
}

// The checks every object's header passes; `young`: whether its chunk says it must be
// young (cell chunks hold both generations: pass the object's own).
bool Verifier::checkHeader(const Chunk* chunk, const Object* obj, bool young) {
  uint8_t kind = obj->header.kind;
  if (kind == kForwardedKind) return report("object %p in current space is forwarded", obj), false;
  if (kind >= kMaxKinds || !impl_.registered[kind])
    return report("object %p in current space has unregistered kind %zu", obj, kind), false;
  bool old = obj->header.gcBits & kBitOld;
  // An old object the marking cycle reached carries the epoch the cycle marks with.
  bool markedOk = impl_.cycle.active && old && (obj->header.gcBits & kBitEpoch) == impl_.cycle.markEpoch;
  if ((obj->header.gcBits & kBitEpoch) != impl_.epoch && !markedOk)
    return report("object %p in current space carries the previous epoch", obj), false;
  if ((obj->header.gcBits & kBitRescan) && (!impl_.cycle.active || !old))
    return report("object %p is listed for a rescan outside a marking cycle, or young", obj), false;
  if (old == young)
    return report(old ? "object %p in a nursery chunk is old" : "object %p in an old chunk is young", obj), false;
  // What a minor kept young is a survivor; what it carried is the only thing remembered.
  if (after_ && !old && !(obj->header.gcBits & kBitSurvivor))
    return report("object %p is young after the collection, and no survivor", obj), false;
  if (after_ && (obj->header.gcBits & kBitRemembered) &&
      !std::binary_search(recorded_.begin(), recorded_.end(), obj))
    return report("object %p is remembered after the collection, and not carried", obj), false;
  if (old && (obj->header.gcBits & kBitEvacuate))
    return report("object %p is marked for evacuation outside a major", obj), false;
  bool nonMoving = obj->header.gcBits & kBitNonMoving;
  if (nonMoving != (chunk->cellSize != 0) && !(nonMoving && chunk->large))
    return report(nonMoving ? "non-moving object %p has moved out of the non-moving space"
                            : "movable object %p lies in a non-moving cell",
                  obj),
           false;
  return true;
}

void Verifier::walkCells(const Chunk* chunk) {
  size_t cell = chunk->cellSize;
  for (const char* p = chunk->base; p + cell <= chunk->top; p += cell) {
    const Object* obj = reinterpret_cast<const Object*>(p);
    if (obj->header.kind == kFreeCellKind) {
      freed_.emplace_back(p, p + cell);
      continue;
    }
    if (!checkHeader(chunk, obj, !(obj->header.gcBits & kBitOld))) return;
    size_t size = objectBytes(impl_.types[obj->header.kind], obj);
    if (size > cell) return report("non-moving object %p of %zu bytes overruns its cell", obj, size);
    starts_.push_back(obj);
  }
}

// A filler in a mark-region chunk lies in marked lines only, or covers whole unmarked
// lines only.
bool Verifier::fillerKeepsLines(const Chunk* chunk, const char* p, size_t size) const {
  size_t offset = static_cast<size_t>(p - chunk->base);
  size_t first = offset / kLineSize;
  size_t last = (offset + size - 1) / kLineSize;
  size_t marked = 0;
  for (size_t line = first; line <= last; ++line) marked += lineMarked(chunk, line);
  if (marked == last - first + 1) return true;
  return marked == 0 && offset % kLineSize == 0 && (offset + size) % kLineSize == 0;
}

void Verifier::checkLines(const Chunk* chunk, const uint64_t* lines, size_t freeBytes) {
  for (size_t w = 0; w < kLineWords; ++w) {
    uint64_t diff = lines[w] ^ chunk->lines[w];
    if (!diff) continue;
    size_t line = w * 64 + static_cast<size_t>(__builtin_ctzll(diff));
    return report(lineMarked(chunk, line) ? "line marks: chunk %p marks line %zu, which no object overlaps"
                                          : "line marks: chunk %p leaves line %zu unmarked, but an object overlaps it",
                  chunk->base, line);
  }
  if (freeBytes != chunk->freeBytes)
    report("line marks: chunk %p counts free bytes its fillers disagree with (%zu by the fillers)", chunk->base, freeBytes);
}

void Verifier::walkChunk(const Chunk* chunk) {
  if (chunk->cellSize) return walkCells(chunk);
  bool region = !chunk->young && !chunk->large;  // an old mark-region block: check its lines
  uint64_t lines[kLineWords] = {};
  size_t freeBytes = 0;
  for (const char* p = chunk->base; p < chunk->top;) {
    const Object* obj = reinterpret_cast<const Object*>(p);
    uint8_t kind = obj->header.kind;
    if (kind == kFillerKind) {
      size_t size = fillerBytes(p);
      if (size < kMinObjectSize || size > static_cast<size_t>(chunk->top - p))
        return report("filler %p of %zu bytes overruns its chunk", p, size);
      if (region && !fillerKeepsLines(chunk, p, size))
        return report("line marks: filler %p of %zu bytes straddles the edge of a free line", p, size);
      freed_.emplace_back(p, p + size);
      freeBytes += size;
      p += size;
      continue;
    }
    if (!checkHeader(chunk, obj, chunk->young)) return;
    size_t size = objectBytes(impl_.types[kind], obj);
    if (size > static_cast<size_t>(chunk->top - p))
      return report("object %p of %zu bytes overruns its chunk (sizeOf disagrees with allocation)", obj, size);
    starts_.push_back(obj);
    if (region) {
      size_t offset = static_cast<size_t>(p - chunk->base);
      for (size_t line = offset / kLineSize; line <= (offset + size - 1) / kLineSize; ++line)
        lines[line / 64] |= uint64_t{1} << (line % 64);
    }
    p += size;
  }
  if (region) checkLines(chunk, lines, freeBytes);
}

void Verifier::check(const Object* ref) {
  if (!fault_.empty()) return;
  const char* problem = nullptr;
  if (!ref) problem = "null reference";
  else if (reinterpret_cast<uintptr_t>(ref) & (kObjectAlignment - 1)) problem = "misaligned reference";
  else if (!std::binary_search(starts_.begin(), starts_.end(), ref))
    problem = isFreed(reinterpret_cast<const char*>(ref))
                  ? "reference to a freed object (a free non-moving cell, a free line or a filler)"
              : heap_.contains(ref) ? "reference into the middle of an object or past allocated space"
                                    : "reference outside current space (stale or foreign)";
  if (!problem && rootSkipped_ && !(ref->header.gcBits & kBitOld)) {
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "%s holds young reference %p in a record a minor skips (written without being noted)",
                  holderText().c_str(), static_cast<const void*>(ref));
    fault_ = buf;
    return;
  }
  if (!problem && holderClean_ && !(ref->header.gcBits & kBitOld)) {
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "remembered set: %s holds young reference %p, but no write barrier recorded it%s", holderText().c_str(),
                  static_cast<const void*>(ref),
                  std::string_view(kindName(holder_->header.kind)) == "thread" ? " (a clean stack holds a young reference)" : "");
    fault_ = buf;
    return;
  }
  // The tricolour rule: a holder the cycle is done with (a marked object, not grey and
  // not listed; a root its walk traced, not written since) refers to no unmarked old one.
  bool rootDone = rootTraced_ && impl_.cycle.active;
  if (!problem && (holderBlack_ || rootDone) && (ref->header.gcBits & kBitOld) &&
      (ref->header.gcBits & kBitEpoch) != impl_.cycle.markEpoch) {
    char buf[240];
    std::snprintf(buf, sizeof buf, "incremental marking: %s %s, but holds unmarked old reference %p (%s: %s)",
                  holderText().c_str(), rootDone ? "was traced by the cycle and not written since" : "is marked and not grey",
                  static_cast<const void*>(ref), kindName(ref->header.kind),
                  rootDone ? "a write into a root was not noted" : "a store missed the barrier's marking half");
    fault_ = buf;
    return;
  }
  if (!problem) return;
  char buf[240];
  std::snprintf(buf, sizeof buf, "%s %p held by %s", problem, static_cast<const void*>(ref), holderText().c_str());
  fault_ = buf;
}

void Verifier::checkRoots() {
  holder_ = nullptr;
  rootKind_ = "root source";
  for (rootIndex_ = 0; rootIndex_ < impl_.roots.size(); ++rootIndex_) impl_.roots[rootIndex_]->traceRoots(*this);
  rootSkipped_ = false;
  rootTraced_ = false;
  rootKind_ = "handle slot";  // numbered across every mutator's stack, in registration order
  rootIndex_ = 0;
  for (const Mutator* m : impl_.mutators)
    for (Object** slot = m->handleBase_; slot < m->handleTop_; ++slot, ++rootIndex_)
      if (*slot) check(*slot);
  rootKind_ = "persistent handle";
  for (rootIndex_ = 0; rootIndex_ < impl_.persistent.size(); ++rootIndex_)
    if (Object* obj = impl_.persistent[rootIndex_]) check(obj);
  rootKind_ = "pending finalizer";
  for (rootIndex_ = 0; rootIndex_ < impl_.pending.size(); ++rootIndex_) check(impl_.pending[rootIndex_]);
  checkFinalizable();
  // Weak roots (the string table) see a visitor whose isLive is always true: they keep
  // every entry, and a stale one (a minor that failed to update or drop a young
  // string) is reported here.
  rootKind_ = "weak root source";
  for (rootIndex_ = 0; rootIndex_ < impl_.weakRoots.size(); ++rootIndex_) impl_.weakRoots[rootIndex_]->sweepWeakRoots(*this);
  rootKind_ = "external registration";
  for (rootIndex_ = 0; rootIndex_ < impl_.externals.size(); ++rootIndex_) check(impl_.externals[rootIndex_]);
  if (!fault_.empty()) return;
  for (size_t i = 0; impl_.cycle.active && i < impl_.cycle.externalsLive; ++i)
    if ((impl_.externals[i]->header.gcBits & kBitEpoch) != impl_.cycle.markEpoch)
      return report("incremental marking: external %p is counted among the marked ones, but is not marked",
                    impl_.externals[i]);
  // A pinned object that moved leaves its key behind: no object starts there any more.
  rootKind_ = "pinned object (moved or freed while pinned)";
  rootIndex_ = 0;
  std::lock_guard lock(impl_.pinLock);
  for (const auto& entry : impl_.pins) {
    check(entry.first);
    ++rootIndex_;
  }
}

// Invariant 13: a minor walks only the young list, so the old one must hold only old
// objects, and every young finalizable object must be on the young list.
void Verifier::checkFinalizable() {
  auto checkList = [this](const std::vector<Object*>& list, const char* kind, bool old) {
    rootKind_ = kind;
    for (rootIndex_ = 0; rootIndex_ < list.size(); ++rootIndex_) {
      const Object* obj = list[rootIndex_];
      check(obj);
      if (!fault_.empty()) return;
      uint8_t bits = obj->header.gcBits;
      if (!(bits & kBitFinalizable)) report("finalizable registration: %p lacks its bit", obj);
      else if (old && !(bits & kBitOld))
        report("finalizable registration: young object %p is on the old list, which a minor does not walk", obj);
    }
  };
  checkList(impl_.finalizable, "finalizable registration", true);
  checkList(impl_.youngFinalizable, "young finalizable registration", false);
  if (!fault_.empty()) return;
  if (after_ && !impl_.youngFinalizable.empty())
    return report("finalizable registration: %p is still on the young list after the collection",
                  impl_.youngFinalizable[0]);
  youngFinalizable_.assign(impl_.youngFinalizable.begin(), impl_.youngFinalizable.end());
  std::sort(youngFinalizable_.begin(), youngFinalizable_.end());
}

void Verifier::checkObjects() {
  if (impl_.cycle.active) {
    grey_.assign(impl_.cycle.grey.begin(), impl_.cycle.grey.end());
    for (const auto& entry : impl_.cycle.partial) grey_.push_back(entry.first);
    for (const Mutator* m : impl_.mutators) grey_.insert(grey_.end(), m->markGrey_.begin(), m->markGrey_.end());
    std::sort(grey_.begin(), grey_.end());
  }
  for (const Object* start : starts_) {
    if (!fault_.empty()) return;
    Object* obj = const_cast<Object*>(start);
    const TypeInfo& info = impl_.types[obj->header.kind];
    holder_ = obj;
    weakDeferred_ = false;
    uint8_t bits = obj->header.gcBits;
    bool remembered = bits & kBitRemembered;
    if (remembered && !std::binary_search(recorded_.begin(), recorded_.end(), obj))
      return report("remembered set: object %p has its remembered bit but is in no remembered buffer", obj);
    holderClean_ = (bits & kBitOld) && !remembered;
    holderBlack_ = impl_.cycle.active && (bits & kBitOld) && (bits & kBitEpoch) == impl_.cycle.markEpoch &&
                   !(bits & kBitRescan) && !std::binary_search(grey_.begin(), grey_.end(), obj);
    if ((bits & kBitFinalizable) && !(bits & kBitOld) &&
        !std::binary_search(youngFinalizable_.begin(), youngFinalizable_.end(), obj))
      return report("finalizable registration: young object %p is not on the young list", obj);
    if (info.trace) info.trace(obj, *this);
    holderBlack_ = false;  // weak parts may refer to what the cycle did not mark
    if (weakDeferred_ && info.clearWeak) info.clearWeak(obj, *this, kClearKeys | kClearValues);
  }
  holderClean_ = false;
}

void setSkippedByMinor(Visitor& visitor, bool skipped) {
  if (auto* verifier = dynamic_cast<Verifier*>(&visitor)) verifier->setRootSkipped(skipped);
}

void setTracedByCycle(Visitor& visitor, bool traced) {
  if (auto* verifier = dynamic_cast<Verifier*>(&visitor)) verifier->setRootTraced(traced);
}

std::string Heap::verifyHeap() { return Verifier(*this, false).run(); }
std::string Heap::verifyHeapAfterCollection() { return Verifier(*this, true).run(); }

// ---- The checking write barrier ----

namespace {
std::mutex gVerifyMutex;            // guards gVerifyHeaps
std::vector<Heap*> gVerifyHeaps;    // heaps with verify on
std::atomic<bool> gVerifyOn{false};  // !gVerifyHeaps.empty(), read by the barrier without the lock

[[noreturn]] void barrierFailed(const char* what, const Object* p) {
  std::fprintf(stderr, "weft: gc: verify failed: write barrier: %s %p is not a live object in current space\n",
               what, static_cast<const void*>(p));
  std::fflush(stderr);
  _exit(3);
}
}  // namespace

void registerVerifyHeap(Heap* heap) {
  std::lock_guard lock(gVerifyMutex);
  gVerifyHeaps.push_back(heap);
  gVerifyOn.store(true, std::memory_order_relaxed);
  updateBarrierSlow(0);
}

void unregisterVerifyHeap(Heap* heap) {
  std::lock_guard lock(gVerifyMutex);
  gVerifyHeaps.erase(std::remove(gVerifyHeaps.begin(), gVerifyHeaps.end(), heap), gVerifyHeaps.end());
  gVerifyOn.store(!gVerifyHeaps.empty(), std::memory_order_relaxed);
  updateBarrierSlow(0);
}

bool barrierChecksOn() { return gVerifyOn.load(std::memory_order_relaxed); }

void checkBarrierStore(Object* holder, Object* value) {
  std::lock_guard lock(gVerifyMutex);
  auto current = [](const Object* obj) {
    return std::any_of(gVerifyHeaps.begin(), gVerifyHeaps.end(), [obj](Heap* h) { return h->isCurrentObject(obj); });
  };
  if (!current(holder)) barrierFailed("holder", holder);
  if (value && !current(value)) barrierFailed("stored value", value);
}

}  // namespace weft::gc
