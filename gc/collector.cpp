// The collector, generational (docs/design/gc-v2.md): a copying nursery (Cheney) and a
// mark-region old generation, with Lua 5.4 weak tables and finalizers.
//
// Protocol (one collection, world stopped, run only from safepointMayGC/collectMayGC on
// the requesting mutator's thread, while every other attached mutator is parked and
// detached ones cannot attach: safepoint.cpp). Both kinds copy every reachable young
// object (no kBitOld) into the old generation: into the holes (free lines) of recycled
// old chunks first, else bumping in promotion chunks; but an ageing minor copies what
// only the running stacks and the handles reach, the first time, into survivor chunks
// (young, kBitSurvivor; traceRoots, gc-v2.md "Survivor age"). A minor one stops there: an old
// object counts as reached and is neither moved nor traced, unless it is in the
// remembered set. A major one marks every reachable old object where it lies (the
// to-space epoch is the mark bit), but for those of the fragmented chunks it chose to
// evacuate (kBitEvacuate; every old chunk under relocate stress), which it copies out,
// then sweeps the old chunks: what it did not reach becomes fillers, the line marks are
// recomputed, and chunks left empty are freed. Every copy but a survivor is old. So after
// either kind no object is young but the survivors, and the remembered set holds only
// the old objects that refer to one (carried). Non-moving objects
// (kBitNonMoving) and pinned ones are never copied. The copying and tracing are a
// Marker's (marker.h): objects reached in place and copies into holes are traced from
// a grey stack, copies into promotion chunks by the Cheney scan (gc-v2.md "Mark-region
// old generation", "Pinning and non-moving objects"); in a major with other mutators
// parked, everything from a grey stack, shared with their markers (step 1).
//  0. A major chooses the chunks it evacuates (region.cpp). Pinned objects next,
//     before anything could copy them: each is marked in place, and one in a nursery
//     chunk keeps its chunk (keepPinned).
//  1. Reach the roots (root sources, the handle slots of every registered mutator,
//     persistent handles, pending finalizers): copy them into holes or into the
//     promotion chunks (from where the last collection stopped), or mark them in place,
//     and scan breadth-first; a minor also traces every remembered holder (old objects
//     a barrier recorded, Thread objects whose stacks ran). Weak containers report
//     themselves with deferWeak instead of visiting weak parts. A major's scan is
//     shared with the parked mutators (markInParallel); every later step is the
//     requester's marker's alone.
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
//     externals (a minor: only those registered since the last collection), then
//     sweepOld: free the cells of dead non-moving objects (a minor: only young ones),
//     sweep the old chunks (a major) and the nursery chunks kept for pinned objects (a
//     parallel major shares these with the parked mutators), then install: free (or,
//     relocate mode, quarantine) the nursery, the chunks a major evacuated or left
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
#include "gc/marker.h"
#include "gc/pass.h"

namespace weft::gc {

namespace {

// The free chunks kept at least (gc-v2.md "Pacing"): a small heap's nursery and the
// chunks its minors promote into.
constexpr size_t kMinPoolChunks = 4;
constexpr uint8_t kLargePoolCollections = 16;  // install: how long a free large chunk waits for reuse
constexpr uint8_t kBigPoolCollections = 1;     // ... and one of a standard chunk's size or more
// Survival pacing (Collector::survivalNursery).
constexpr size_t kSurvivalNurseryCap = 4u << 20;

// The allocation allowed before the next collection: its work grows with the live heap
// and with the off-heap memory live objects own (stacks it walks), so both set the pace.
size_t nextGrowth(size_t live, int64_t external, const Config& config) {
  if (config.pauseMultiplier <= 100) return 0;
  size_t base = live + static_cast<size_t>(std::max<int64_t>(external, 0));
  return base / 100 * (config.pauseMultiplier - 100);
}

// Work in parts that write disjoint state (chunks, string table shards), each run once
// by whichever participant claims it: the requester, or in a parallel major a mutator
// parked in its stop (Collector::runParts). Protocol: the requester sets the parts up
// before posting the job (under the heap lock, which orders them and the marking before
// every helper's reads); each participant claims the next part with one relaxed
// fetch_add, which hands each index to exactly one of them; the requester reads the
// results once no helper is inside (it waits for that under the lock).
template <typename Part>
class PartsJob final : public StopJob {
 public:
  PartsJob(size_t count, Part& part) : count_(count), part_(part) {}
  // Runs parts until none is left; returns how many.
  size_t run() {
    size_t ran = 0;
    for (size_t i = next_.fetch_add(1, std::memory_order_relaxed); i < count_;
         i = next_.fetch_add(1, std::memory_order_relaxed), ++ran)
      part_(i);
    return ran;
  }
  void help() override { helped_.fetch_add(run(), std::memory_order_relaxed); }
  // Read once no helper is inside (the heap lock ordered their counts before).
  size_t helped() const { return helped_.load(std::memory_order_relaxed); }

 private:
  const size_t count_;
  Part& part_;
  std::atomic<size_t> next_{0};
  std::atomic<size_t> helped_{0};  // parts the helpers ran
};

}  // namespace

class Collector final {
 public:
  Collector(Heap& heap, CollectionKind kind, Heap::CycleEnd end)
      : heap_(heap), impl_(*heap.impl_), plan_(planFor(heap, kind, end)), main_(plan_, true) {}
  ~Collector();

  bool run();
  void install(uint64_t collection);
  const std::string& error() const { return main_.error(); }
  size_t copiedBytes() const { return main_.copiedBytes() + main_.survivorBytes(); }
  size_t promotedBytes() const { return minor() ? main_.copiedBytes() + main_.keptBytes() : 0; }
  bool minor() const { return plan_.minor; }
  size_t markers() const { return markers_; }
  size_t chunksHelpersSwept() const { return chunksHelpersSwept_; }

 private:
  MarkPlan planFor(Heap& heap, CollectionKind kind, Heap::CycleEnd end) const;
  size_t survivalNursery(size_t floor, size_t growth, size_t promoted);
  bool helpersAttached() const;
  void seedFromCycle();
  void keepPinned();
  template <typename Own>
  void runShared(StopJob& job, Own own);
  template <typename Part>
  size_t runParts(size_t count, Part part);
  void markAll();
  void markInParallel();
  void ephemeronFixpoint();
  void traceRoots();
  void traceRemembered();
  void traceHolders(const std::vector<Object*>& holders);
  void clearWeak(int phase);
  void resurrectFinalizable();
  void keepDyingFinalizable();
  void sweepWeakRoots();
  void sweepExternals();
  void updateRunningHints();
  void sweepOld();
  std::vector<Marker*> allMarkers();

  Heap& heap_;
  Heap::Impl& impl_;
  const MarkPlan plan_;
  Marker main_;  // the requester's: roots, weak tables and finalizers are its alone
  // A parallel major's helpers' markers (their copies join to-space at install).
  std::vector<std::unique_ptr<Marker>> helpers_;
  size_t markers_ = 1;
  size_t chunksHelpersSwept_ = 0;
  bool installed_ = false;
  // The nursery chunks kept in place for pinned objects (install sweeps them: their
  // other objects become fillers).
  std::vector<Chunk*> keptChunks_;
  std::vector<Chunk*> emptiedCells_;    // a major: cell chunks its sweep left empty
  std::vector<Chunk*> swept_;           // a major: the old chunks its sweep kept objects in
  std::vector<Chunk*> freed_;           // a major: the old chunks it evacuated or emptied
  size_t externalReleased_ = 0;         // off-heap bytes the releases of dead externals returned
  std::vector<Object*> ageingHolders_;  // an ageing minor: the running stacks recorded
};

// Uninstalled means failed: the heap is broken, and roots the collection updated name
// copies in its chunks, which the host may still read while it closes. They are kept
// mapped until the heap goes (Impl::abandoned).
Collector::~Collector() {
  if (installed_) return;
  for (Chunk* chunk : keptChunks_) chunk->kept = false;
  std::lock_guard lock(impl_.mutex);
  for (Marker* marker : allMarkers()) marker->abandonTo(impl_.abandoned);
}

// A minor during an incremental major promotes into the cycle's marks (gc-v2.md
// "Incremental majors"); the final pause marks with the same epoch, the one any major
// flips to.
MarkPlan Collector::planFor(Heap& heap, CollectionKind kind, Heap::CycleEnd end) const {
  bool minor = kind == CollectionKind::kMinor;
  Heap::Impl::Cycle& cycle = impl_.cycle;
  MarkPlan plan{heap, impl_, minor, !minor && heap.config_.stress == StressMode::kRelocate,
                static_cast<uint8_t>(impl_.epoch ^ kBitEpoch), !minor && helpersAttached()};
  if (minor) {
    plan.toEpoch = cycle.active ? cycle.markEpoch : impl_.epoch;
    if (cycle.active) plan.promotedGrey = &cycle.grey;
    plan.ageing = !cycle.active && heap.config_.survivorAge;
  }
  plan.finishing = end != Heap::CycleEnd::kNone;
  plan.keepFinalizable = end == Heap::CycleEnd::kBeforeMajor;
  return plan;
}

// Other attached mutators are parked in the handshake and can help a major mark
// (world stopped: the list is still).
bool Collector::helpersAttached() const {
  size_t attached = 0;
  for (const Mutator* m : impl_.mutators) attached += m->attached_;
  return attached > 1 && heap_.config_.parallelMajors;
}

std::vector<Marker*> Collector::allMarkers() {
  std::vector<Marker*> all{&main_};
  for (auto& helper : helpers_) all.push_back(helper.get());
  return all;
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
    if (main_.isLive(obj) || fault::hit("gc.pin-drop")) continue;
    if (obj->header.gcBits & kBitNonMoving) {
      main_.keepNonMoving(obj);
      continue;
    }
    Chunk* chunk = nullptr;
    {
      std::lock_guard lock(impl_.mutex);
      auto it = impl_.chunkIndex.upper_bound(reinterpret_cast<uintptr_t>(obj));
      if (it != impl_.chunkIndex.begin()) chunk = std::prev(it)->second;
    }
    if (!chunk || reinterpret_cast<char*>(obj) >= chunk->top) {
      main_.fail("a pinned object is not in the heap", obj);
      return;
    }
    if (chunk->large) {
      if (!main_.keepLarge(obj)) main_.fail("a pinned large object is not alone in its chunk", obj);
      continue;
    }
    main_.markInPlace(obj, objectBytes(impl_.types[obj->header.kind], obj));
    chunk->evacuating = false;  // not empty after the collection: install sweeps it
    if (chunk->young && !chunk->kept) {
      chunk->kept = true;
      keptChunks_.push_back(chunk);
    }
  }
}

void Collector::ephemeronFixpoint() {
  std::vector<Object*>& ephemerons = main_.ephemerons();
  for (;;) {
    uint64_t before = main_.reached();
    for (size_t i = 0; i < ephemerons.size(); ++i) {
      Object* table = ephemerons[i];
      auto traceEphemeron = impl_.types[table->header.kind].traceEphemeron;
      if (traceEphemeron) main_.traceHolder(table, [&] { traceEphemeron(table, main_); });
    }
    main_.scan();
    if (main_.reached() == before || !main_.error().empty()) return;
  }
}

// Every holder recorded this cycle loses its bit; a minor traces it whole (its young
// referents are promoted), a major reaches it like any object. Bits are cleared before
// any copy, so no copy carries one.
void Collector::traceRemembered() {
  std::vector<Object*> orphans;
  takeOrphanRemembered(heap_, orphans);
  std::vector<Object*> running;
  if (plan_.ageing) {
    for (Mutator* m : impl_.mutators)
      if (m->running_) running.push_back(m->running_);
  }
  auto take = [&](std::vector<Object*>& list) {
    for (Object* holder : list) holder->header.gcBits &= static_cast<uint8_t>(~kBitRemembered);
    // The running stacks wait for the ageing phase (traceRoots).
    if (!running.empty()) {
      auto runs = [&](Object* holder) {
        if (std::find(running.begin(), running.end(), holder) == running.end()) return false;
        ageingHolders_.push_back(holder);
        return true;
      };
      list.erase(std::remove_if(list.begin(), list.end(), runs), list.end());
    }
    // The final pause of an incremental major traces those the cycle marked: they are
    // not reached again, and their young referents were not marked. An unmarked one is
    // traced if something reaches it, like any object; tracing it here would keep what
    // a dead holder refers to.
    if (plan_.finishing) {
      auto unmarked = [&](Object* holder) { return (holder->header.gcBits & kBitEpoch) != plan_.toEpoch; };
      list.erase(std::remove_if(list.begin(), list.end(), unmarked), list.end());
    }
    if (minor() || plan_.finishing) traceHolders(list);
    list.clear();
  };
  for (Mutator* m : impl_.mutators) take(m->remembered_);
  take(orphans);
  take(impl_.carriedRemembered);
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
    if (info.trace) main_.traceHolder(holder, [&] { info.trace(holder, main_); });
  }
}

// An ageing minor (gc-v2.md "Survivor age") first promotes everything that what it
// traces only now and then reaches (the root sources' records, the stacks that ran and
// stopped, old holders), then ages what only the running stacks and the handles reach:
// those are traced by every minor, so what they hold young is found again.
void Collector::traceRoots() {
  keepPinned();
  traceRemembered();
  for (RootSource* source : impl_.roots) {
    if (plan_.finishing) source->finishCycle(main_);
    else source->traceRoots(main_);
  }
  for (Object*& slot : impl_.persistent) main_.visit(slot);
  for (Object*& slot : impl_.pending) main_.visit(slot);
  if (plan_.ageing) {
    main_.scan();
    main_.startAgeing();
    traceHolders(ageingHolders_);
  }
  for (Mutator* m : impl_.mutators)
    for (Object** slot = m->handleBase_; slot < m->handleTop_; ++slot) main_.visit(*slot);
}

void Collector::clearWeak(int phase) {
  for (Object* table : main_.weak()) {
    auto clear = impl_.types[table->header.kind].clearWeak;
    if (clear) main_.traceHolder(table, [&] { clear(table, main_, phase); });
  }
}

// A minor looks only at the registrations made since the last collection: the older
// ones are old objects, alive as far as a minor knows, so its cost does not grow with
// the finalizable objects a program keeps. The old list comes first in registration
// order, so the dying are gathered in that order whichever list they were on.
// Survivors of the young list join the old one.
void Collector::resurrectFinalizable() {
  if (plan_.keepFinalizable) return keepDyingFinalizable();
  std::vector<Object*>& old = impl_.finalizable;
  std::vector<Object*>& young = impl_.youngFinalizable;
  std::vector<Object*> dying;
  constexpr size_t kAhead = 8;  // each header is a cache miss: overlap them
  if (!minor()) {
    size_t kept = 0;
    for (size_t i = 0; i < old.size(); ++i) {
      if (i + kAhead < old.size()) __builtin_prefetch(old[i + kAhead]);
      Object* obj = old[i];
      if (main_.isLive(obj)) old[kept++] = main_.current(obj);
      else dying.push_back(obj);
    }
    old.resize(kept);
  }
  for (Object* obj : young) {
    if (main_.isLive(obj)) old.push_back(main_.current(obj));
    else dying.push_back(obj);
  }
  young.clear();
  if (dying.empty()) return;
  for (Object*& obj : dying) {
    main_.visit(obj);
    obj->header.gcBits &= static_cast<uint8_t>(~kBitFinalizable);
  }
  main_.scan();
  ephemeronFixpoint();
  for (auto it = dying.rbegin(); it != dying.rend(); ++it) impl_.pending.push_back(*it);
  impl_.pendingHint.store(!impl_.pending.empty(), std::memory_order_relaxed);
}

// The final pause that a full major follows: the dying are reached, as if resurrected,
// but stay registered in their places (young ones after the old), so the major finds
// them dead again with those that died since and queues them all in one order. Weak
// values to them were cleared before this, as a resurrection's are.
void Collector::keepDyingFinalizable() {
  std::vector<Object*>& old = impl_.finalizable;
  std::vector<Object*>& young = impl_.youngFinalizable;
  bool reached = false;
  for (auto* list : {&old, &young}) {
    for (Object* obj : *list) {
      if (main_.isLive(obj)) continue;
      main_.visit(obj);
      reached = true;
    }
  }
  if (reached) {
    main_.scan();
    ephemeronFixpoint();
  }
  for (Object*& obj : old) obj = main_.current(obj);
  for (Object* obj : young) old.push_back(main_.current(obj));
  young.clear();
}

// A minor sweeps only the externals registered since the last collection: the old ones
// (a parked task's thread) are alive as far as a minor knows. Survivors join the old list.
// A hint names a Thread object: where it moved, or nothing once it died.
void Collector::updateRunningHints() {
  for (Mutator* m : impl_.mutators)
    if (m->running_) m->running_ = main_.isLive(m->running_) ? main_.current(m->running_) : nullptr;
}

void Collector::sweepExternals() {
  std::vector<Object*>& old = impl_.externals;
  auto sweep = [&](std::vector<Object*>& externals, size_t from, std::vector<Object*>& survivors) {
    size_t kept = from;
    constexpr size_t kAhead = 8;  // each header is a cache miss: overlap them
    for (size_t i = from; i < externals.size(); i++) {
      if (i + kAhead < externals.size()) __builtin_prefetch(externals[i + kAhead]);
      Object* obj = externals[i];
      if (main_.isLive(obj)) {
        if (&survivors == &externals) externals[kept++] = main_.current(obj);
        else survivors.push_back(main_.current(obj));
        continue;
      }
      auto release = impl_.types[obj->header.kind].release;
      if (release) externalReleased_ += release(obj);
    }
    if (&survivors == &externals) externals.resize(kept);
  };
  // The final pause of a cycle skips those its slices found marked (Heap::sortExternals).
  if (!minor()) sweep(old, plan_.finishing ? impl_.cycle.externalsLive : 0, old);
  sweep(impl_.youngExternals, 0, old);
  impl_.youngExternals.clear();
}

// Roots first (the requester's marker alone), then everything they reach: a major with
// other mutators stopped shares that with them (markInParallel).
void Collector::markAll() {
  if (plan_.finishing) seedFromCycle();
  traceRoots();
  if (minor()) {
    main_.scan();
    return;
  }
  if (plan_.parallel) {
    markInParallel();
    return;
  }
  MarkJob alone(plan_);
  alone.run(main_);
}

// The final pause of an incremental major, before the roots: the large chunks of marked
// objects stay (the scan would not reach them), the rescan bits go, and the marker
// starts from every marked object of the cycle's lists (gc/incremental.cpp): the grey
// ones (those traced in part too), the holders written in bulk and the weak containers.
void Collector::seedFromCycle() {
  Heap::Impl::Cycle& cycle = impl_.cycle;
  auto marked = [&](const Object* obj) { return (obj->header.gcBits & kBitEpoch) == plan_.toEpoch; };
  for (Chunk* chunk : impl_.space)
    if (chunk->large && marked(reinterpret_cast<Object*>(chunk->base))) main_.adoptLarge(chunk);
  for (Object* obj : cycle.rescan) obj->header.gcBits &= static_cast<uint8_t>(~kBitRescan);
  for (auto* list : {&cycle.grey, &cycle.rescan, &cycle.weak})
    for (Object* obj : *list)
      if (marked(obj)) main_.pushGrey(obj);
  for (const auto& entry : cycle.partial) main_.pushGrey(entry.first);
}

// Posts `job` for the stopped mutators (safepoint.cpp acknowledgeLocked), does the
// requester's part (`own`), then waits until no helper is inside the job any more.
template <typename Own>
void Collector::runShared(StopJob& job, Own own) {
  {
    std::lock_guard lock(impl_.mutex);
    impl_.stopJob = &job;
    ++impl_.stopJobNumber;
  }
  impl_.releaseCv.notify_all();
  own();
  std::unique_lock lock(impl_.mutex);
  impl_.stopJob = nullptr;
  impl_.acksCv.wait(lock, [&] { return impl_.stopJobHelpers == 0; });
}

// part(i) for every i < count, shared with the parked mutators in a parallel major
// when there are several parts (waking them for one costs more than it saves: under
// relocate stress a major leaves one chunk to sweep); how many parts they ran.
template <typename Part>
size_t Collector::runParts(size_t count, Part part) {
  PartsJob<Part> job(count, part);
  if (plan_.parallel && count > 1) runShared(job, [&] { job.run(); });
  else job.run();
  return job.helped();
}

// The requester's marker runs in the shared job. The helpers' weak containers and
// counts go to the requester's marker, which alone does the rest of the collection;
// their chunks stay theirs until install.
void Collector::markInParallel() {
  MarkJob job(plan_);
  runShared(job, [&] { job.run(main_); });
  helpers_ = std::move(job.helpers());
  markers_ = 1 + helpers_.size();
  for (auto& helper : helpers_) main_.absorb(*helper);
}

// Survival pacing (gc-v2.md "Pacing"): a heap whose minors promote much of what they
// find gives its young objects more time to die before the next minor. A minor that
// promoted more than an eighth of its nursery doubles the nursery (at most
// kMaxNurseryScale times, and not past kSurvivalNurseryCap unless the base is bigger); one
// that promoted less than a thirty-second halves it back. bench/cd.lua (objects that
// live for a frame) promoted 178 MB in 618 minors with the 1 MiB floor; with 8 MiB, 42
// MB in 85, and ran 9% fewer instructions (7% with the 4 MiB cap, which keeps its peak
// RSS at 12 MB instead of 16).
// The first nursery is a quarter of the floor (kMinNurseryScale), and stays so while
// minors find little alive: garbage that dies young dies as well in it, and the peak
// RSS drops by the difference (bench/format.lua 5.6 -> 4.0 MB). Minors whose survivors,
// aged or promoted, exceed an eighth of it double it, up to the floor for good. A nursery
// past the cache is slower, not faster, for scripts whose objects live a while
// (bench/list.lua: 0.62 s at 1 MiB, 1.0 at 2 MiB fixed), so survivors alone never grow
// it past the floor.
size_t Collector::survivalNursery(size_t floor, size_t growth, size_t promoted) {
  int8_t& scale = impl_.nurseryScale;
  size_t base = std::max(floor, growth);
  if (!heap_.config_.survivalPacing) return base;
  if (minor()) {
    size_t last = impl_.nurseryBytes ? impl_.nurseryBytes : floor;  // the first one's
    size_t survived = promoted + impl_.survivorBytes;
    if (promoted > last / 8 && scale < kMaxNurseryScale) {
      ++scale;
    } else if (scale < 0 && survived > last / 8) {
      ++scale;  // the small start, outgrown
    } else if (scale > 0 && promoted < last / 32) {
      --scale;
    }
  }
  size_t scaled =
      scale >= 0 ? std::max(base, std::min(base << scale, kSurvivalNurseryCap)) : std::max(floor >> -scale, growth);
  impl_.nurseryBytes = scaled;
  return scaled;
}

bool Collector::run() {
  // The final pause of an incremental major evacuates nothing: what the cycle marked
  // would not be copied (gc-v2.md "Incremental majors").
  if (!minor() && !plan_.finishing) chooseEvacuation(impl_.space, impl_.types, plan_.relocateAll);
  markAll();
  ephemeronFixpoint();
  main_.setCopying(false);
  clearWeak(kClearValues);
  main_.setCopying(true);
  resurrectFinalizable();
  if (!main_.error().empty()) return false;
  main_.setCopying(false);  // from here on nothing new becomes reachable
  clearWeak(kClearKeys | kClearValues);
  sweepWeakRoots();
  sweepExternals();
  updateRunningHints();
  for (Marker* marker : allMarkers()) marker->closeHole();
  if (!main_.error().empty()) return false;
  sweepOld();
  return true;
}

// After every marker closed its hole (the rest of an open one has no headers yet): the
// cells of dead non-moving objects (a minor: only young ones), a major's old chunks but
// those it evacuated and its cell chunks, and the nursery chunks kept for pinned
// objects. The chunks touch only memory no mutator can reach (world stopped); a
// parallel major shares them with the parked mutators (runParts), then the cells' free
// lists are linked in the chunks' order.
void Collector::sweepOld() {
  bool poison = heap_.config_.stress == StressMode::kRelocate;
  if (minor()) heap_.sweepYoungCells(poison);
  uint8_t liveMask = minor() ? kBitOld : kBitEpoch;
  uint8_t liveBits = minor() ? kBitOld : plan_.toEpoch;
  auto region = [](const Chunk* chunk) { return !chunk->kept && !chunk->large && !chunk->cellSize; };
  std::vector<Chunk*> chunks;
  if (!minor()) {
    for (Chunk* chunk : impl_.space)
      if (region(chunk) && !chunk->evacuating) chunks.push_back(chunk);
  }
  chunks.insert(chunks.end(), keptChunks_.begin(), keptChunks_.end());
  size_t cellsFrom = chunks.size();
  if (!minor()) {
    for (const CellClass& c : impl_.cells) chunks.insert(chunks.end(), c.chunks.begin(), c.chunks.end());
  }
  std::vector<CellSweep> results(chunks.size());  // a mark-region chunk's: only `live`
  chunksHelpersSwept_ = runParts(chunks.size(), [&](size_t i) {
    if (chunks[i]->cellSize) results[i] = sweepCellChunk(chunks[i], liveBits, poison);
    else results[i].live = sweepChunk(chunks[i], impl_.types, liveMask, liveBits, poison);
  });
  if (minor()) return;
  heap_.linkSweptCells(results.data() + cellsFrom, emptiedCells_);
  // A chunk still marked evacuating holds no pinned object, so nothing of it was kept.
  const CellSweep* result = results.data();
  for (Chunk* chunk : impl_.space) {
    if (!region(chunk)) continue;
    if (chunk->evacuating) {
      chunk->evacuating = false;
      freed_.push_back(chunk);
    } else {
      ((result++)->live > 0 ? swept_ : freed_).push_back(chunk);
    }
  }
}

// The weak roots (the string table), part by part, shared in a parallel major: the
// requester's marker copies nothing any more, so its visit and isLive only read.
void Collector::sweepWeakRoots() {
  std::vector<std::pair<size_t, size_t>> parts;  // (source, part)
  std::vector<size_t> counts;                    // each source's parts
  for (WeakRootSource* source : impl_.weakRoots) {
    counts.push_back(source->weakRootParts());
    for (size_t part = 0; part < counts.back(); ++part) parts.emplace_back(counts.size() - 1, part);
  }
  runParts(parts.size(), [&](size_t i) {
    auto [source, part] = parts[i];
    impl_.weakRoots[source]->sweepWeakRootPart(part, counts[source], main_);
  });
}

// Makes the collection's result current. The nursery's chunks (mutator buffers, young
// large objects nobody reached) are recycled, unmapped or (relocate, a major)
// quarantined, but for those kept for pinned objects, which join the old generation
// with the promotion chunks and the large chunks kept in place. A major also frees the
// old chunks it evacuated or its sweep left empty. No mutator gets a
// buffer in an old chunk: the next collection's promotion continues in the last
// promotion chunk, and the swept chunks' holes are listed for it. A minor touches only
// the nursery's chunks and those it promoted into: the old chunks stay listed and
// indexed as they are, and their bytes grow by what it promoted.
void Collector::install(uint64_t collection) {
  installed_ = true;
  std::vector<Marker*> markers = allMarkers();
  const Config& config = heap_.config_;
  bool relocate = config.stress == StressMode::kRelocate;
  std::vector<Chunk*> old = std::move(freed_);  // to free
  const std::vector<Chunk*>& swept = swept_;
  std::unique_lock lock(impl_.mutex);
  for (Chunk* chunk : impl_.youngChunks)
    if (!chunk->kept) old.push_back(chunk);
  impl_.youngChunks.clear();
  // What an ageing minor kept young is the next nursery's start (gc-v2.md "Survivor age").
  for (Chunk* chunk : main_.survivorChunks()) {
    impl_.youngChunks.push_back(chunk);
    impl_.chunkIndex[reinterpret_cast<uintptr_t>(chunk->base)] = chunk;
  }
  impl_.survivorBytes = main_.survivorBytes();
  impl_.carriedRemembered = std::move(main_.carried());
  // What joins the old generation: the promotion chunks, the large chunks kept in place
  // or copied to, and the nursery chunks kept for pinned objects (those and the young
  // large ones are indexed already). A minor's promotion adds exactly the bytes it
  // copied to the old chunks' count (a copy into a hole takes them from freeBytes).
  size_t joined = main_.copiedBytes();
  std::vector<Chunk*> added;
  for (Marker* marker : markers) {
    for (Chunk* chunk : marker->toChunks())
      if (chunk != marker->reusedTail()) added.push_back(chunk);
    added.insert(added.end(), marker->toLarge().begin(), marker->toLarge().end());
    for (Chunk* chunk : marker->toLarge())
      if (chunk->young) joined += static_cast<size_t>(chunk->top - chunk->base);
  }
  for (Chunk* chunk : keptChunks_) joined += static_cast<size_t>(chunk->top - chunk->base) - chunk->freeBytes;
  added.insert(added.end(), keptChunks_.begin(), keptChunks_.end());
  // Cell chunks stay (a minor finds them old; a major takes them from their classes,
  // without those its sweep emptied). The chunks with holes are where the next
  // collections copy to first: a major lists those it swept, a minor adds the nursery
  // chunks it kept to the list, whose chunks before recycledNext are used up.
  if (minor()) {
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
    impl_.recycledNext.store(0, std::memory_order_relaxed);
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
  // Emptied cell chunks are freed as the other chunks are: pooled (under relocate
  // stress, a major quarantines them). Unmapped at once and mapped afresh for the next
  // cells, each cost a munmap, which shoots down the TLB of every worker's CPU
  // (bench/cd.lua: 771 in one run).
  for (Chunk* chunk : emptiedCells_) {
    chunk->cellSize = 0;
    old.push_back(chunk);
  }
  if (!minor()) {
    impl_.epoch = plan_.toEpoch;
    for (Mutator* m : impl_.mutators) m->gcBits_ = plan_.toEpoch;
  }
  if (main_.bumpChunk() || !minor()) impl_.promotionTail = main_.bumpChunk();

  impl_.externalBytes -= static_cast<int64_t>(externalReleased_);
  impl_.externalAfterLastGC = impl_.externalBytes;
  // The nursery grows with the old generation: a minor swept the whole interned string
  // table (and walked every finalizer registration and channel buffer), so a fixed
  // nursery made that walk's cost per allocated byte grow with the live heap
  // (bench/strings.lua: 54 minors of 17 ms). Half of v1's growth keeps it a constant
  // share, as in v1. A fixed one, measured again once minors swept only new strings, was
  // slower (bench/tables.lua 30%, binarytrees 9%: gc-v2.md "Pacing").
  size_t nursery = survivalNursery(config.initialThreshold, nextGrowth(live, 0, config) / 2, joined);
  impl_.threshold = live + impl_.survivorBytes + nursery;
  if (!minor())
    impl_.majorThreshold = std::max(config.majorFloor, live + nextGrowth(live, impl_.externalBytes, config));
  // Free chunks are kept for the next nursery and its promotion: the freed space was at
  // least that big, so keeping them adds nothing to the peak and spares the next
  // cycle's buffers the page faults. A major needs no to-space beyond that. The survivor
  // chunks a minor filled will be freed by the next one while it fills as many: without
  // room for both, bench/cd.lua unmapped and mapped again a chunk or two per minor (+10%
  // time: page faults and zeroing).
  impl_.poolLimit = std::max(kMinPoolChunks * Heap::kChunkSize, 2 * nursery) +
                    2 * main_.survivorChunks().size() * Heap::kChunkSize;
  // A large chunk no allocation or promotion reused for kLargePoolCollections
  // collections is unlikely to fit one soon (large objects of another size): unmapped,
  // so the pool adds to the peak RSS little that the next cycles do not reuse. Unmapped
  // at the first collection, those a major freed (old voxel maps of bench/cd.lua, one a
  // frame) went while a later minor's promotion mapped a chunk for the next one; after
  // four, those the next major freed came back between majors more than four collections
  // apart (cd.lua: 84 unmapped so). A chunk of a standard chunk's size or more is
  // unmapped by the next collection unless an allocation took it before: a big object is
  // made again within a cycle or not soon (a string result each round of bench/gsub.lua,
  // an array part that doubled), and sixteen collections kept 1-7 MB of them resident
  // for nothing (gsub.lua's peak RSS 23.1 -> 21.6 MB).
  size_t keptPool = 0;
  for (Chunk* chunk : impl_.largePool) {
    uint8_t wait = chunk->size >= Heap::kChunkSize ? kBigPoolCollections : kLargePoolCollections;
    if (++chunk->idleCollections < wait) {
      impl_.largePool[keptPool++] = chunk;
    } else {
      impl_.largePoolBytes -= chunk->size;
      unmapChunk(chunk);
    }
  }
  impl_.largePool.resize(keptPool);
  std::vector<Chunk*> quarantined;
  if (relocate && !minor()) quarantined.swap(old);
  // Each pool has the budget: sharing one, the large chunks went first whenever a major
  // freed enough standard chunks to fill it, and bench/cd.lua mapped and unmapped 109
  // chunks of 36 KiB (a frame's voxel map, promoted at a minor, freed at a major), each
  // munmap a TLB shootdown of the other CPUs (69 us each with the JIT's thread on one,
  // 8 us with the JIT off). A quarter of the budget for large chunks kept no copy of
  // bench/gsub.lua's 1 MB strings.
  for (Chunk* chunk : old) {
    chunk->young = false;
    if (!chunk->large && chunk->size == Heap::kChunkSize && impl_.pool.size() * Heap::kChunkSize < impl_.poolLimit) {
      noteRecycled(chunk);
      impl_.pool.push_back(chunk);
    } else if (chunk->large && impl_.largePoolBytes + chunk->size <= impl_.poolLimit) {
      noteRecycled(chunk);
      chunk->idleCollections = 0;
      impl_.largePool.push_back(chunk);
      impl_.largePoolBytes += chunk->size;
    } else {
      unmapChunk(chunk);
    }
  }
  while (impl_.largePoolBytes > impl_.poolLimit) {
    impl_.largePoolBytes -= impl_.largePool.back()->size;
    unmapChunk(impl_.largePool.back());
    impl_.largePool.pop_back();
  }
  // Least resident first (Heap::takeChunkLocked); past the limit, the most resident
  // chunks go back to the system.
  std::sort(impl_.pool.begin(), impl_.pool.end(),
            [](const Chunk* a, const Chunk* b) { return a->residentBytes < b->residentBytes; });
  while (impl_.pool.size() * Heap::kChunkSize > impl_.poolLimit) {
    unmapChunk(impl_.pool.back());
    impl_.pool.pop_back();
  }

  WEFT_CHECK(impl_.openBuffers == 0, "a collection starts with every bump buffer retired (collectNow)");
  impl_.usedBytes.store(live + impl_.survivorBytes, std::memory_order_relaxed);
  impl_.liveAfterLastGC = live;
  // A final pause keeps what died during its cycle: an explicit major asked meanwhile
  // still runs (safepoint.cpp pollSlowMayGC).
  impl_.lastWasMajor = !minor() && !plan_.finishing;
  // Every registration left after a collection is old (a minor promotes the young
  // survivors): more than the last major left means finalizable objects that only a
  // major can find dead (chooseWork).
  if (!minor()) impl_.finalizableAfterMajor = impl_.finalizable.size();
  impl_.minorsSinceMajor = minor() ? impl_.minorsSinceMajor + 1 : 0;
  impl_.oldFinalizableGrew = impl_.finalizable.size() > impl_.finalizableAfterMajor;
  impl_.thresholdCrossed.store(false, std::memory_order_relaxed);
  impl_.reserveOpen.store(false, std::memory_order_relaxed);
  // A slice (or a final pause) a marking cycle still waits for keeps the request up.
  heap_.requested_.store(config.stress != StressMode::kNone || impl_.sliceDue.load(std::memory_order_relaxed),
                         std::memory_order_relaxed);
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
  const auto* marker = dynamic_cast<const Marker*>(&visitor);
  if (!marker) return Pass::kCheck;
  return marker->minor() ? Pass::kMinor : Pass::kMajor;
}

// Relocate stress makes every collection a stop-the-world major (every object moves);
// plain stress makes every eighth one a major, every other of those incremental, and
// while a cycle marks alternates minors and small slices, so every kind runs under
// --gc-stress --gc-verify. An explicit request gets what it asked for (a major finishes
// a cycle first). Otherwise, while a cycle marks: a minor when the nursery is full, the
// final pause once a slice left nothing to trace (or the heap limit is near), else a
// slice. Without a cycle, a major comes when the old generation outgrew its threshold
// (incremental, unless Config::incrementalMajors is off, the old generation is below
// Config::incrementalMinBytes or its old chunks are fragmented enough to want
// evacuation, region.cpp fragmented), or, stop-the-world, when finalizable
// objects were promoted since the last major and a few minors passed, in incremental
// mode when finalizable objects were registered since the last collection
// (setWholeCycleFinalizers), when the heap limit is near, or after a memory error (the
// emergency reserve: old garbage must go).
Heap::Work Heap::chooseWork(bool force, CollectionKind asked) {
  Impl& impl = *impl_;
  takeMarkingBuffers();
  bool marking = impl.cycle.active;
  bool incremental = config_.incrementalMajors;
  if (config_.stress == StressMode::kRelocate) return Work::kMajor;
  if (force && asked == CollectionKind::kStep) return Work::kStep;
  if (force) return asked == CollectionKind::kMajor ? Work::kMajor : Work::kMinor;
  if (impl.reserveOpen.load(std::memory_order_relaxed)) return Work::kMajor;
  size_t limit = config_.heapLimit;
  bool nearLimit = limit && impl.liveAfterLastGC + config_.initialThreshold >= limit - limit / 4;
  if (config_.stress == StressMode::kCollect) {
    uint64_t n = ++impl.stressCollections;
    if (marking) return impl.cycle.finishDue ? Work::kFinishCycle : n % 2 ? Work::kMinor : Work::kSlice;
    if (n % 8 == 0) return incremental && n % 16 == 0 ? Work::kStartCycle : Work::kMajor;
  }
  if (marking) {
    if (impl.cycle.finishDue || nearLimit) return Work::kFinishCycle;
    return impl.thresholdCrossed.load(std::memory_order_relaxed) ? Work::kMinor : Work::kSlice;
  }
  if (impl.liveAfterLastGC >= impl.majorThreshold) {
    bool big = impl.liveAfterLastGC >= config_.incrementalMinBytes;
    return incremental && big && !fragmented(impl.space) ? Work::kStartCycle : Work::kMajor;
  }
  // A finalizable object promoted and then dropped waits for a major, and a loop that
  // promotes nothing never grows the old generation to its threshold: Lua's
  // `repeat u = {} until finalized` would spin forever.
  if (impl.oldFinalizableGrew && impl.minorsSinceMajor >= kMinorsBeforeFinalizerMajor) return Work::kMajor;
  if (wholeCycleFinalizers_.load(std::memory_order_relaxed)) {
    if (!impl.youngFinalizable.empty()) return Work::kMajor;
    // Old ones (promoted by a major too) die unseen by minors: a few minors at most.
    if (!impl.finalizable.empty() && impl.minorsSinceMajor >= kMinorsBeforeFinalizerMajor) return Work::kMajor;
  }
  if (nearLimit) return Work::kMajor;
  return Work::kMinor;
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
  out.slice.p50Nanos = percentile(impl_->slicePauses, 0.5);
  out.slice.p99Nanos = percentile(impl_->slicePauses, 0.99);
  return out;
}

// One collection, verified before and after when verify is on; `end`: whether it is the
// final pause of an incremental major.
Status Heap::collectOnce(CollectionKind kind, CycleEnd end) {
  bool finishing = end != CycleEnd::kNone;
  Impl& impl = *impl_;
  uint64_t number;
  {
    // Not stats(): its percentiles sort every pause so far, which made each collection
    // cost in proportion to the collections before it.
    std::lock_guard lock(impl.mutex);
    number = stats_.collections + 1;
  }
  std::string fault = verifyBefore(*this, config_.verify);
  if (!fault.empty()) return failCollection("verify failed", "before collection #" + std::to_string(number) + ": " + fault);
  {
    Collector run(*this, kind, end);
    bool ok = run.run();
    if (finishing) endCycle();
    if (!ok) return failCollection("collection failed", run.error());
    run.install(number);
    std::lock_guard lock(impl.mutex);
    stats_.collections = number;
    stats_.bytesCopiedTotal += run.copiedBytes();
    stats_.bytesPromotedTotal += run.promotedBytes();
    if (!run.minor()) stats_.majorMarkersTotal += run.markers();
    stats_.majorChunksHelpersSweptTotal += run.chunksHelpersSwept();
    stats_.incrementalCycles += finishing;
  }
  if (config_.verify) {
    fault = verifyHeapAfterCollection();
    if (!fault.empty()) return failCollection("verify failed", "after collection #" + std::to_string(number) + ": " + fault);
  }
  return Status::ok();
}

// A slice is verified before it runs, as a collection is (the tricolour check among
// verify's).
Status Heap::collectNow(Work work) {
  Impl& impl = *impl_;
  if (impl.broken.load(std::memory_order_relaxed)) return Status(StatusCode::kFatal);
  auto start = std::chrono::steady_clock::now();
  if (config_.stress == StressMode::kRelocate) installStaleReferenceHandler();
  flushMutators();
  discardDropped();
  Status st = Status::ok();
  PauseStats* stats = &stats_.slice;
  std::vector<uint64_t>* pauses = &impl.slicePauses;
  switch (work) {
    case Work::kMinor:
      st = collectOnce(CollectionKind::kMinor, CycleEnd::kNone);
      stats = &stats_.minor;
      pauses = &impl.minorPauses;
      break;
    case Work::kMajor:
      // A major asked while a cycle marks finishes the cycle, then collects what died
      // during it (and the finalizable objects the final pause found dead).
      if (impl.cycle.active) st = collectOnce(CollectionKind::kMajor, CycleEnd::kBeforeMajor);
      if (st.isOk()) st = collectOnce(CollectionKind::kMajor, CycleEnd::kNone);
      stats = &stats_.major;
      pauses = &impl.majorPauses;
      break;
    case Work::kFinishCycle:
      st = collectOnce(CollectionKind::kMajor, CycleEnd::kFinal);
      stats = &stats_.major;
      pauses = &impl.majorPauses;
      break;
    case Work::kStartCycle: {
      std::string fault = verifyBefore(*this, config_.verify);
      if (!fault.empty()) return failCollection("verify failed", "before a cycle's start: " + fault);
      st = startCycle();
      if (st.isOk()) markSlice(sliceBudget());
      break;
    }
    case Work::kSlice: {
      std::string fault = verifyBefore(*this, config_.verify);
      if (!fault.empty()) return failCollection("verify failed", "before a marking slice: " + fault);
      markSlice(sliceBudget());
      break;
    }
    case Work::kStep:
      st = stepNow();
      if (!impl.cycle.active) {
        stats = &stats_.major;
        pauses = &impl.majorPauses;
      }
      break;
  }
  if (!st.isOk()) return st;
  if (work == Work::kSlice || work == Work::kStartCycle || (work == Work::kStep && impl.cycle.active)) {
    bool due = impl.sliceDue.load(std::memory_order_relaxed) || impl.thresholdCrossed.load(std::memory_order_relaxed);
    requested_.store(due || config_.stress != StressMode::kNone, std::memory_order_relaxed);
  }
  auto nanos = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  std::lock_guard lock(impl.mutex);
  stats_.totalPauseNanos += nanos;
  stats_.longestPauseNanos = std::max(stats_.longestPauseNanos, nanos);
  notePause(*stats, *pauses, nanos);
  return Status::ok();
}

}  // namespace weft::gc
