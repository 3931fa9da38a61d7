// Heap verification (--gc-verify) and the checking write barrier: the checkers of heap.h
// invariants 2, 3 and 10.
//
// Protocol: verifyHeap first walks every current-space chunk object by object (kind
// registered, not forwarded, current epoch, size inside its chunk), recording object
// starts; then it checks every reference held by roots, registrations, every mutator's
// handles, the pending-finalizer queue and every object (strong parts via trace, weak
// parts via clearWeak with an isLive that is always true, which keeps every entry). It
// runs world stopped (inside a collection) or while no other mutator thread runs. A
// reference must be non-null, aligned and exactly the start of a current-space object,
// so stale pointers and interior pointers are both caught. Headers of unknown memory are never
// read: a stale reference into protected old space is reported, not faulted on.
// Generations (gc-v2.md): an object's kBitOld must match its chunk's generation; an old
// object with kBitRemembered must be in some mutator's remembered buffer; an old object
// without it must hold no young reference (for a Thread object: its stack is clean).
// After a collection no object may be young or remembered, and every buffer is empty.
// Pinning and non-moving objects (gc-v2.md): cell chunks are walked cell by cell (an
// object of kBitNonMoving or a free cell each); a filler is skipped; an object with
// kBitNonMoving anywhere but a cell or alone in a large chunk has moved. A reference
// to a free cell or a filler is a reference to a freed object. Every pinned object must
// be an object of current space where it was pinned (so a pinned object that moved or
// died, gc.pin-drop, is reported).
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string_view>
#include <unistd.h>

#include "gc/heap_internal.h"

namespace weft::gc {

bool gBarrierChecks = false;

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

 private:
  void gatherRemembered();
  void walkSpace();
  void walkChunk(const Chunk* chunk);
  void walkCells(const Chunk* chunk);
  bool checkHeader(const Chunk* chunk, const Object* obj, bool young);
  void checkRoots();
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
  bool after_;  // right after a collection: nothing young, nothing remembered
  std::vector<const Object*> starts_;  // sorted: chunks are walked in address order
  std::vector<const char*> freed_;     // free cells and fillers, sorted the same way
  std::vector<const Object*> recorded_;  // sorted: every remembered buffer's holders
  bool holderClean_ = false;  // the holder is old and not remembered: no young referent
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
  std::sort(recorded_.begin(), recorded_.end());
  if (after_ && !recorded_.empty()) report("remembered buffers still hold %p after the collection", recorded_.front());
}

void Verifier::walkSpace() {
  for (const auto& [base, chunk] : impl_.chunkIndex) {
    if (chunk->top < chunk->base || chunk->top > chunk->base + chunk->size) {
      report("chunk %p has its top outside the chunk", chunk->base);
      return;
    }
    walkChunk(chunk);
    if (!fault_.empty()) return;
  }
}

// The checks every object's header passes; `young`: whether its chunk says it must be
// young (cell chunks hold both generations: pass the object's own).
bool Verifier::checkHeader(const Chunk* chunk, const Object* obj, bool young) {
  uint8_t kind = obj->header.kind;
  if (kind == kForwardedKind) return report("object %p in current space is forwarded", obj), false;
  if (kind >= kMaxKinds || !impl_.registered[kind])
    return report("object %p in current space has unregistered kind %zu", obj, kind), false;
  if ((obj->header.gcBits & kBitEpoch) != impl_.epoch)
    return report("object %p in current space carries the previous epoch", obj), false;
  bool old = obj->header.gcBits & kBitOld;
  if (old == young)
    return report(old ? "object %p in a nursery chunk is old" : "object %p in an old chunk is young", obj), false;
  if (after_ && !old) return report("object %p is young after the collection", obj), false;
  if (after_ && (obj->header.gcBits & kBitRemembered))
    return report("object %p is remembered after the collection", obj), false;
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
      freed_.push_back(p);
      continue;
    }
    if (!checkHeader(chunk, obj, !(obj->header.gcBits & kBitOld))) return;
    size_t size = objectBytes(impl_.types[obj->header.kind], obj);
    if (size > cell) return report("non-moving object %p of %zu bytes overruns its cell", obj, size);
    starts_.push_back(obj);
  }
}

void Verifier::walkChunk(const Chunk* chunk) {
  if (chunk->cellSize) return walkCells(chunk);
  for (const char* p = chunk->base; p < chunk->top;) {
    const Object* obj = reinterpret_cast<const Object*>(p);
    uint8_t kind = obj->header.kind;
    if (kind == kFillerKind) {
      size_t size = fillerBytes(p);
      if (size < kMinObjectSize || size > static_cast<size_t>(chunk->top - p))
        return report("filler %p of %zu bytes overruns its chunk", p, size);
      freed_.push_back(p);
      p += size;
      continue;
    }
    if (!checkHeader(chunk, obj, chunk->young)) return;
    size_t size = objectBytes(impl_.types[kind], obj);
    if (size > static_cast<size_t>(chunk->top - p))
      return report("object %p of %zu bytes overruns its chunk (sizeOf disagrees with allocation)", obj, size);
    starts_.push_back(obj);
    p += size;
  }
}

void Verifier::check(const Object* ref) {
  if (!fault_.empty()) return;
  const char* problem = nullptr;
  if (!ref) problem = "null reference";
  else if (reinterpret_cast<uintptr_t>(ref) & (kObjectAlignment - 1)) problem = "misaligned reference";
  else if (!std::binary_search(starts_.begin(), starts_.end(), ref))
    problem = std::binary_search(freed_.begin(), freed_.end(), reinterpret_cast<const char*>(ref))
                  ? "reference to a freed object (a free non-moving cell or a filler)"
              : heap_.contains(ref) ? "reference into the middle of an object or past allocated space"
                                    : "reference outside current space (stale or foreign)";
  if (!problem && holderClean_ && !(ref->header.gcBits & kBitOld)) {
    char buf[240];
    std::snprintf(buf, sizeof buf,
                  "remembered set: %s holds young reference %p, but no write barrier recorded it%s", holderText().c_str(),
                  static_cast<const void*>(ref),
                  std::string_view(kindName(holder_->header.kind)) == "thread" ? " (a clean stack holds a young reference)" : "");
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
  rootKind_ = "finalizable registration";
  for (rootIndex_ = 0; rootIndex_ < impl_.finalizable.size(); ++rootIndex_) check(impl_.finalizable[rootIndex_]);
  rootKind_ = "external registration";
  for (rootIndex_ = 0; rootIndex_ < impl_.externals.size(); ++rootIndex_) check(impl_.externals[rootIndex_]);
  // A pinned object that moved leaves its key behind: no object starts there any more.
  rootKind_ = "pinned object (moved or freed while pinned)";
  rootIndex_ = 0;
  std::lock_guard lock(impl_.pinLock);
  for (const auto& entry : impl_.pins) {
    check(entry.first);
    ++rootIndex_;
  }
}

void Verifier::checkObjects() {
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
    if (info.trace) info.trace(obj, *this);
    if (weakDeferred_ && info.clearWeak) info.clearWeak(obj, *this, kClearKeys | kClearValues);
  }
  holderClean_ = false;
}

std::string Heap::verifyHeap() { return Verifier(*this, false).run(); }
std::string Heap::verifyHeapAfterCollection() { return Verifier(*this, true).run(); }

// ---- The checking write barrier ----

namespace {
std::mutex gVerifyMutex;            // guards gVerifyHeaps
std::vector<Heap*> gVerifyHeaps;    // heaps with verify on

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
  gBarrierChecks = true;
}

void unregisterVerifyHeap(Heap* heap) {
  std::lock_guard lock(gVerifyMutex);
  gVerifyHeaps.erase(std::remove(gVerifyHeaps.begin(), gVerifyHeaps.end(), heap), gVerifyHeaps.end());
  gBarrierChecks = !gVerifyHeaps.empty();
}

void writeBarrierSlow(Object* holder, Object* value) {
  std::lock_guard lock(gVerifyMutex);
  auto current = [](const Object* obj) {
    return std::any_of(gVerifyHeaps.begin(), gVerifyHeaps.end(), [obj](Heap* h) { return h->isCurrentObject(obj); });
  };
  if (!current(holder)) barrierFailed("holder", holder);
  if (value && !current(value)) barrierFailed("stored value", value);
}

}  // namespace weft::gc
