// Incremental majors (docs/design/gc-v2.md "Incremental majors"): the old generation is
// marked in slices between which the mutators run, so that no pause traces the whole
// old heap.
//
// Protocol (every step below runs world stopped, inside a stop chooseWork chose):
//  - Start (Work::kStartCycle): the cycle becomes active with markEpoch = epoch ^
//    kBitEpoch (the bit a stop-the-world major would give what it reaches), the old
//    objects the roots refer to are marked and pushed grey, and gBarrierSlow is raised.
//    A root source with many roots (the runtime's registry) only starts its walk
//    (RootSource::startCycle): its slices trace them (traceCycleSlice).
//    Nothing is copied by a slice, ever: objects move only in minors (young ones) and in
//    the final pause.
//  - Mark: an old object is marked when its epoch bit is markEpoch; grey when it is
//    marked and on a grey list (the cycle's, or a mutator's markGrey_) not traced yet.
//    A slice (Work::kSlice) traces, until it spent its budget's bytes, the root
//    sources' walks, then the grey objects, then the holders listed for a rescan; a
//    kind with TypeInfo::tracePart (a table) is traced in parts, and an object traced
//    in part stays grey (Cycle::partial) until its last part. The old externals it
//    finds marked go to the front of their list (sortExternals). A young object is
//    never marked by a slice: the minor that promotes it gives it markEpoch and pushes
//    it grey (MarkPlan::promotedGrey), since its referents may still be white.
//  - Between stops, the barrier's marking half (writeBarrierSlow) keeps "no marked
//    object that is not grey refers to an unmarked old object" for heap stores: it
//    marks and greys the old value of every store (Dijkstra). Stacks and the runtime's
//    records are not barriered: a marked old holder written in bulk (a stack that ran,
//    writeBarrierBulk) is listed to be traced again (kBitRescan), and a record or
//    buffer written after the walk traced it is listed by its root source. A slice
//    that leaves nothing grey, listed or untraced asks for the final pause
//    (Cycle::finishDue), which retraces what was written since.
//  - Final (Work::kFinishCycle): a major collection whose marking starts from what the
//    cycle marked (collector.cpp, MarkPlan::finishing): it keeps the large chunks of
//    marked objects, traces the marked remembered holders (their young referents), the
//    rescan list, the grey lists and the weak containers the slices traced (their
//    mode may have changed), then the roots (RootSource::finishCycle: the registry's
//    written and untraced entries only), and goes on as any major (weak tables,
//    finalizers, the externals not found marked, sweep). It evacuates nothing: a marked object would not be copied.
//    Objects that died during the cycle after they were marked survive to the next
//    one (floating garbage); collectgarbage("collect") finishes the cycle and then
//    runs a full major, so it stays exact (that final pause leaves the finalizers it
//    found due to the major: CycleEnd::kBeforeMajor).
// Threads: the mutators push onto their own buffers (owning thread); every list of the
// cycle is touched world stopped only; each stop takes the buffers first
// (takeMarkingBuffers). Marks set by barriers are atomic byte operations (another
// worker may set kBitRemembered in the same byte); a slice writes headers plainly, with
// every mutator stopped.
#include <algorithm>
#include <mutex>
#include <tuple>
#include <utility>

#include "gc/fault.h"
#include "gc/heap_internal.h"

namespace weft::gc {

std::atomic<bool> gBarrierSlow{false};

namespace {

// The bytes a slice traces per byte allocated since the last one (kSliceStepBytes
// apart): a cycle ends after the mutators allocated about a quarter of the old heap (or
// a quarter of what the promotions added), whatever its size.
constexpr size_t kSliceWorkPerByte = 4;
constexpr size_t kSliceMinWork = 64u << 10;
// Under --gc-stress a slice runs at every other stop: a small one, so a cycle spans
// many safepoints and the barrier's marking half is exercised.
constexpr size_t kStressSliceWork = 4u << 10;

std::mutex gMarkingMutex;  // guards the three below
int gMarkingHeaps = 0;
std::vector<Object*> gOrphanGrey;    // values stored by a thread of another heap
std::vector<Object*> gOrphanRescan;  // holders written in bulk by such a thread

// Gives `obj` the mark epoch; false if it had it. Atomic: a barrier on another worker may
// set a bit of the same byte.
bool markOnce(Object* obj, uint8_t epoch) {
  std::atomic_ref<uint8_t> bits(obj->header.gcBits);
  uint8_t cur = bits.load(std::memory_order_relaxed);
  for (;;) {
    if ((cur & kBitEpoch) == epoch) return false;
    if (bits.compare_exchange_weak(cur, static_cast<uint8_t>((cur & ~kBitEpoch) | epoch), std::memory_order_relaxed))
      return true;
  }
}

bool setRescanOnce(Object* holder) {
  return !(std::atomic_ref<uint8_t>(holder->header.gcBits).fetch_or(kBitRescan, std::memory_order_relaxed) &
           kBitRescan);
}

}  // namespace

// A slice's tracer: marks old objects where they lie and traces them from the cycle's
// grey list. It visits what a check pass visits (passOf: kCheck), so root sources and
// carded arrays keep the marks a minor needs.
class SliceMarker final : public Visitor {
 public:
  explicit SliceMarker(Heap::Impl& impl) : impl_(impl), epoch_(impl.cycle.markEpoch) {}
  void visit(Object*& slot) override {
    Object* obj = slot;
    uint8_t bits = obj->header.gcBits;
    if (!(bits & kBitOld) || (bits & kBitEpoch) == epoch_) return;  // young: promoted grey later
    obj->header.gcBits = static_cast<uint8_t>((bits & ~kBitEpoch) | epoch_);
    impl_.cycle.grey.push_back(obj);
  }
  void deferWeak(Object* container, bool weakKeys, bool weakValues) override {
    if (weakKeys || weakValues) impl_.cycle.weak.push_back(container);
  }
  // Traces grey objects until `budget` bytes of them (a reference counted as a slot's
  // 16 bytes when the kind traces in parts) were traced or none is left. An object
  // traced in part goes on in the next slice, before any other.
  void trace(size_t budget) {
    Heap::Impl::Cycle& cycle = impl_.cycle;
    constexpr size_t kSlotBytes = 16;
    size_t done = 0;
    while (done < budget) {
      Object* obj;
      size_t from = 0;
      if (!cycle.partial.empty()) {
        std::tie(obj, from) = cycle.partial.back();
        cycle.partial.pop_back();
      } else if (!cycle.grey.empty()) {
        obj = cycle.grey.back();
        cycle.grey.pop_back();
      } else if (!cycle.rescan.empty()) {
        obj = cycle.rescan.back();
        cycle.rescan.pop_back();
        obj->header.gcBits &= static_cast<uint8_t>(~kBitRescan);
      } else {
        return;
      }
      const TypeInfo& info = impl_.types[obj->header.kind];
      if (from == 0) done += objectBytes(info, obj);
      if (info.tracePart) {
        size_t slots = std::max<size_t>((budget > done ? budget - done : 0) / kSlotBytes, 1);
        size_t left = slots;
        size_t next = info.tracePart(obj, *this, from, left);
        done += (slots - left) * kSlotBytes;
        if (next) cycle.partial.emplace_back(obj, next);
      } else if (info.trace) {
        info.trace(obj, *this);
      }
    }
  }

 private:
  Heap::Impl& impl_;
  const uint8_t epoch_;
};

void updateBarrierSlow(int markingDelta) {
  std::lock_guard lock(gMarkingMutex);
  gMarkingHeaps += markingDelta;
  gBarrierSlow.store(gMarkingHeaps > 0 || barrierChecksOn(), std::memory_order_relaxed);
  if (gMarkingHeaps == 0) {
    gOrphanGrey.clear();
    gOrphanRescan.clear();
  }
}

// The barrier's slow path: the checking part (verify) and the marking part. A young
// value needs no mark: the minor that promotes it greys it.
void writeBarrierSlow(Object* holder, Object* value) {
  if (barrierChecksOn()) checkBarrierStore(holder, value);
  if (!value || !(loadGcBits(value) & kBitOld)) return;
  if (Mutator* m = mutatorOf(holder)) {
    const Heap::Impl::Cycle& cycle = m->heap_.impl_->cycle;
    if (!cycle.active || (loadGcBits(value) & kBitEpoch) == cycle.markEpoch) return;
    // The fault site stands for a store whose barrier forgot the marking half: the
    // negative test of verify's tricolour check (gc-v2.md "Incremental majors").
    if (fault::hit("gc.mark-barrier-drop")) return;
    if (markOnce(value, cycle.markEpoch)) m->markGrey_.push_back(value);
    return;
  }
  std::lock_guard lock(gMarkingMutex);
  if (gMarkingHeaps > 0) gOrphanGrey.push_back(value);
}

// Only a marked holder is listed: an unmarked one is traced, with what it then holds, by
// whatever marks it later (a slice, or the final pause from the roots).
void writeBarrierBulkSlow(Object* holder) {
  uint8_t bits = loadGcBits(holder);
  if (!(bits & kBitOld)) return;  // young: promoted grey, traced after
  if (Mutator* m = mutatorOf(holder)) {
    const Heap::Impl::Cycle& cycle = m->heap_.impl_->cycle;
    if (cycle.active && (bits & kBitEpoch) == cycle.markEpoch && setRescanOnce(holder)) m->rescan_.push_back(holder);
    return;
  }
  std::lock_guard lock(gMarkingMutex);
  if (gMarkingHeaps > 0) gOrphanRescan.push_back(holder);
}

void takeOrphanMarking(Heap& heap, std::vector<Object*>& grey, std::vector<Object*>& rescan) {
  std::lock_guard lock(gMarkingMutex);
  auto take = [&](std::vector<Object*>& from, std::vector<Object*>& to) {
    size_t kept = 0;
    for (Object* obj : from) {
      if (heap.contains(obj)) to.push_back(obj);
      else from[kept++] = obj;
    }
    from.resize(kept);
  };
  take(gOrphanGrey, grey);
  take(gOrphanRescan, rescan);
}

bool Heap::marking() const { return impl_->cycle.active; }

// Every stop takes what the barriers recorded since the last one. The orphans' marks
// are set here (their threads could not know this heap's epoch).
void Heap::takeMarkingBuffers() {
  Impl::Cycle& cycle = impl_->cycle;
  for (Mutator* m : impl_->mutators) {
    cycle.grey.insert(cycle.grey.end(), m->markGrey_.begin(), m->markGrey_.end());
    cycle.rescan.insert(cycle.rescan.end(), m->rescan_.begin(), m->rescan_.end());
    m->markGrey_.clear();
    m->rescan_.clear();
  }
  if (!cycle.active) return;
  std::vector<Object*> grey, rescan;
  takeOrphanMarking(*this, grey, rescan);
  for (Object* obj : grey)
    if (markOnce(obj, cycle.markEpoch)) cycle.grey.push_back(obj);
  for (Object* obj : rescan)
    if ((obj->header.gcBits & kBitEpoch) == cycle.markEpoch && setRescanOnce(obj)) cycle.rescan.push_back(obj);
}

// The old objects the roots refer to are marked and pushed grey; a young one is left to
// the minor that promotes it (or to the final pause, which traces the roots again).
Status Heap::startCycle() {
  Impl& impl = *impl_;
  if (fault::hit("gc.slice")) {
    std::lock_guard lock(impl.mutex);
    return failLocked("incremental major: a cycle failed to start (fault injected: gc.slice)", true);
  }
  Impl::Cycle& cycle = impl.cycle;
  cycle.active = true;
  cycle.markEpoch = static_cast<uint8_t>(impl.epoch ^ kBitEpoch);
  {
    std::lock_guard lock(impl.mutex);
    cycle.allocatedAtSlice = stats_.bytesAllocatedTotal;
  }
  updateBarrierSlow(1);
  SliceMarker marker(impl);
  {
    std::lock_guard pinLock(impl.pinLock);
    for (const auto& entry : impl.pins) {
      Object* obj = const_cast<Object*>(entry.first);
      marker.visit(obj);
    }
  }
  for (RootSource* source : impl.roots) source->startCycle(marker);
  cycle.rootsLeft = true;
  for (Mutator* m : impl.mutators)
    for (Object** slot = m->handleBase_; slot < m->handleTop_; ++slot)
      if (*slot) marker.visit(*slot);
  for (Object*& slot : impl.persistent)
    if (slot) marker.visit(slot);
  for (Object*& slot : impl.pending) marker.visit(slot);
  return Status::ok();
}

// The work the next slice does: what the mutators allocated since the last one, times
// kSliceWorkPerByte. A slice that leaves nothing to trace asks for the final pause.
size_t Heap::sliceBudget() {
  std::lock_guard lock(impl_->mutex);
  if (size_t work = std::exchange(impl_->cycle.stepWork, 0)) return work;
  if (config_.stress == StressMode::kCollect) return kStressSliceWork;
  uint64_t allocated = stats_.bytesAllocatedTotal - impl_->cycle.allocatedAtSlice;
  return std::max(kSliceMinWork, static_cast<size_t>(allocated) * kSliceWorkPerByte);
}

// The root sources' slices come first, then the grey objects.
void Heap::markSlice(size_t budget) {
  Impl& impl = *impl_;
  SliceMarker marker(impl);
  bool rootsDone = true;
  for (RootSource* source : impl.roots) rootsDone &= source->traceCycleSlice(marker, budget);
  impl.cycle.rootsLeft = !rootsDone;
  sortExternals(budget);
  marker.trace(budget);
  std::lock_guard lock(impl.mutex);
  impl.cycle.allocatedAtSlice = stats_.bytesAllocatedTotal;
  bool done = impl.cycle.finishDue = impl.cycle.drained();
  impl.sliceDue.store(done, std::memory_order_relaxed);
  if (done) requested_.store(true, std::memory_order_relaxed);
}

// An old external the cycle marked survives it: the slices move those to the front of
// the list, so that the final pause sweeps only the rest (a million parked tasks'
// threads cost it 10 ms). Nothing old moves until the cycle ends, and minors only
// append to the list.
void Heap::sortExternals(size_t& budget) {
  constexpr size_t kExternalWork = 32;  // a header's cache miss, overlapped by the prefetch
  constexpr size_t kAhead = 16;
  Impl::Cycle& cycle = impl_->cycle;
  std::vector<Object*>& externals = impl_->externals;
  size_t& i = cycle.externalsCursor;
  for (; i < externals.size() && budget >= kExternalWork; ++i, budget -= kExternalWork) {
    if (i + kAhead < externals.size()) __builtin_prefetch(externals[i + kAhead]);
    if ((externals[i]->header.gcBits & kBitEpoch) == cycle.markEpoch)
      std::swap(externals[cycle.externalsLive++], externals[i]);
  }
}

// A step (world stopped, verified first like a collection): the start if no cycle
// marks, a slice of the step's work, and the final pause in the same stop when the
// slice left nothing to trace.
Status Heap::stepNow() {
  std::string fault = config_.verify ? verifyHeap() : "";
  if (!fault.empty()) return failCollection("verify failed", "before a marking step: " + fault);
  if (!impl_->cycle.active) {
    Status st = startCycle();
    if (!st.isOk()) return st;
  }
  markSlice(sliceBudget());
  if (!impl_->cycle.finishDue) return Status::ok();
  return collectOnce(CollectionKind::kMajor, CycleEnd::kFinal);
}

// Without incremental majors a step adds its work to a credit and runs a whole major
// once the credit covers the heap in use: a loop of steps until true still costs work
// proportional to the heap (gc-step.md).
Status Heap::stepMayGC(Mutator& m, size_t work, bool& cycleEnded) {
  cycleEnded = false;
  if (!config_.incrementalMajors || config_.stress == StressMode::kRelocate) {
    size_t inUse = bytesInUse(m);
    {
      std::lock_guard lock(impl_->mutex);
      impl_->cycle.stepCredit += work;
      if (impl_->cycle.stepCredit < inUse) return Status::ok();
      impl_->cycle.stepCredit = 0;
    }
    Status st = collectMayGC(m, CollectionKind::kMajor);
    cycleEnded = st.isOk();
    return st;
  }
  uint64_t before;
  {
    std::lock_guard lock(impl_->mutex);
    before = stats_.major.count;
    impl_->cycle.stepWork = std::max<size_t>(work, 1);
  }
  Status st = collectMayGC(m, CollectionKind::kStep);
  std::lock_guard lock(impl_->mutex);
  cycleEnded = stats_.major.count != before;
  return st;
}

void Heap::endCycle() {
  Impl::Cycle& cycle = impl_->cycle;
  if (!cycle.active) return;
  cycle.active = false;
  cycle.finishDue = false;
  cycle.externalsLive = cycle.externalsCursor = 0;
  // Sized for the biggest cycle so far otherwise: a heap that shrank keeps no grey
  // list of its former size.
  std::vector<Object*>().swap(cycle.grey);
  std::vector<std::pair<Object*, size_t>>().swap(cycle.partial);
  std::vector<Object*>().swap(cycle.weak);
  std::vector<Object*>().swap(cycle.rescan);
  impl_->sliceDue.store(false, std::memory_order_relaxed);
  updateBarrierSlow(-1);
}

}  // namespace weft::gc
