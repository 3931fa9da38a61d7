// One collection's tracer (collector.cpp runs it; gc-v2.md "Parallel majors"): a Visitor
// that copies what it reaches into the old generation or marks it where it lies, and
// traces what it reached. A collection has one Marker; a parallel major has one more per
// stopped mutator that helps (MarkJob), all tracing the same heap at once.
//
// Protocol of a parallel major (world stopped; every marker runs on its own thread):
//  - An object is claimed by exactly one marker, with one compare-and-swap of its header
//    word (gc/object.h): to the to-space epoch (marked in place) or to a forwarded
//    header naming a copy the marker made first (a marker that loses the race gives its
//    copy's memory back and takes the winner's address). So each object is traced by
//    one marker, which alone writes its slots; every marker allocates copies in its own
//    chunks and holes (HoleCursor takes whole chunks).
//  - A copy is published by the release of that CAS; a marker reads a header with
//    acquire (loadHeaderWord) before reading any object it reached, so a copy's bytes
//    are visible to whoever finds its address. An old image keeps its body, so a marker
//    still reading it (vm's weakMode) sees consistent data.
//  - Slots are written with release stores: only weakMode reads a slot of an object
//    another marker traces (with acquire, so it sees the copy the slot names), and
//    either address is good for it.
//  - Grey objects are shared through the job's batches (below), not stolen one by one:
//    a marker with work gives half of its stack (up to kShareBatch) when some marker is
//    idle, between objects and while one object's trace pushes many; an idle marker
//    spins briefly for a batch before it sleeps. The phase ends when every participant
//    is idle and no batch is left (decided under the job's mutex, so no batch is in
//    flight then).
// With one marker none of this costs anything: plain header writes and a Cheney scan of
// the promotion chunks, as before parallel marking.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gc/heap_internal.h"

namespace weft::gc {

class MarkJob;

// What every marker of one collection shares, fixed at its start.
struct MarkPlan {
  Heap& heap;
  Heap::Impl& impl;
  bool minor;
  bool relocateAll;  // a major under relocate stress: every old chunk is evacuated
  uint8_t toEpoch;
  bool parallel;  // claims by compare-and-swap, copies traced from the grey stack
  // A minor while an incremental major marks: what it promotes takes the cycle's mark
  // epoch (toEpoch) and is pushed here, grey (gc-v2.md "Incremental majors").
  std::vector<Object*>* promotedGrey = nullptr;
  // The major that finishes an incremental one: it starts from the cycle's marks.
  bool finishing = false;
  // A full major follows it at once: the finalizable objects it finds dead stay
  // registered (kept alive with what they reach), so that major queues them with the
  // ones that died since, in one reverse registration order (gc-v2.md "Explicit requests").
  bool keepFinalizable = false;
  // A minor that may keep young objects young once (gc-v2.md "Survivor age"): from
  // Marker::startAgeing on, a young object reached for the first time is copied into a
  // survivor chunk; an old object that then refers to one is carried (recorded for the
  // next collection).
  bool ageing = false;
};

class Marker final : public Visitor {
 public:
  // `first`: the collection's own marker, which continues promotion in the chunk the
  // last collection stopped in (helpers take fresh chunks).
  Marker(const MarkPlan& plan, bool first);
  Marker(const Marker&) = delete;
  Marker& operator=(const Marker&) = delete;

  void visit(Object*& slot) override;
  void deferWeak(Object* container, bool weakKeys, bool weakValues) override;
  bool isLive(Object* obj) override;

  // Traces everything reached so far, transitively, on this thread alone.
  void scan();
  // The same in a parallel phase: traces and shares until the job ends.
  void scanShared(MarkJob& job);
  // Marks `obj` reached where it lies (pinned and non-moving objects), or keeps the
  // large chunk it has to itself; nullptr from keepLarge if it is not alone there.
  void markInPlace(Object* obj, size_t size);
  Object* keepLarge(Object* obj);
  Object* keepNonMoving(Object* obj);
  // The final pause of an incremental major: a large chunk whose object the cycle
  // marked is kept as keepLarge keeps one (before anything else reached a large one),
  // and the cycle's objects to trace again join the grey stack.
  void adoptLarge(Chunk* chunk);
  void pushGrey(Object* obj);
  // An object's current address during the collection (forwarded or not).
  Object* current(Object* obj) const { return currentAddress(obj); }
  bool inToSpace(uint8_t bits) const {
    return plan_.minor ? (bits & kBitOld) != 0 : (bits & kBitEpoch) == plan_.toEpoch;
  }
  // False while weak entries are cleared: a dead reference is then left alone.
  void setCopying(bool copying) { copying_ = copying; }
  // An ageing minor, once everything that must be promoted was traced (collector.cpp
  // traceRoots): what is reached from here on may stay young.
  void startAgeing() { ageing_ = plan_.ageing; }
  // Runs `trace` (which visits `obj`'s references) and, once ageing, carries `obj` if it
  // is old and then refers to a young object: every trace of an object goes through it.
  template <typename Trace>
  void traceHolder(Object* obj, Trace&& trace) {
    if (!ageing_) return trace();
    bool outer = std::exchange(sawYoung_, false);
    trace();
    if (sawYoung_ && (obj->header.gcBits & kBitOld)) carry(obj);
    sawYoung_ = outer;
  }
  std::vector<Object*>& carried() { return carried_; }
  const std::vector<Chunk*>& survivorChunks() const { return survivorChunks_; }
  size_t survivorBytes() const { return survivorBytes_; }
  void fail(const char* what, const Object* obj);
  // The hole copies go to becomes fillers again (the end of the collection proper).
  void closeHole() { hole_.close(); }
  // Takes another marker's results after a parallel phase: its weak containers, counts
  // and first error (its chunks stay its own until install, chunks()).
  void absorb(Marker& other);

  const std::string& error() const { return error_; }
  bool minor() const { return plan_.minor; }
  uint64_t reached() const { return reached_; }
  size_t copiedBytes() const { return copiedBytes_; }
  size_t keptBytes() const { return keptBytes_; }
  std::vector<Object*>& weak() { return weak_; }
  std::vector<Object*>& ephemerons() { return ephemerons_; }
  // The chunks this marker copied into, for install: standard ones in allocation order
  // (the first may be the promotion tail, reusedTail, which is not new), large ones,
  // and the one it bumps in now.
  const std::vector<Chunk*>& toChunks() const { return toChunks_; }
  const std::vector<Chunk*>& toLarge() const { return toLarge_; }
  Chunk* reusedTail() const { return reusedTail_; }
  Chunk* bumpChunk() const { return current_; }
  // The collection failed: the chunks it copied into go to `out`, to be unmapped only
  // with the heap (roots and forwarded headers may name copies in them).
  void abandonTo(std::vector<Chunk*>& out);

 private:
  Object* copy(Object* obj, uint64_t word);
  Object* age(Object* obj, uint64_t word, size_t size);
  char* allocateSurvivor(size_t size);
  bool isSurvivorCopy(const Object* obj) const;
  void carry(Object* obj);
  // Once ageing: whether `to`, where a slot now points, is young.
  void noteTarget(const Object* to) {
    if (ageing_ && !(__atomic_load_n(&to->header.gcBits, __ATOMIC_RELAXED) & kBitOld)) sawYoung_ = true;
  }
  Object* claimInPlace(Object* obj, uint64_t word, uint8_t bits);
  Object* publishCopy(Object* obj, uint64_t word, Object* moved, size_t size, bool inHole);
  char* allocateTo(size_t size);
  void traceOne(Object* obj);
  // Whether objects of the header word's kind hold references. One that does not (a
  // string) is reached but never traced, so it stays off the grey stack: a major of
  // bench/tables.lua marked 200,000 old strings in place, and the stack grew to 3 MB.
  bool traced(uint64_t word) const { return impl_.types[kindOfWord(word)].trace != nullptr; }
  bool scanCopies();  // the Cheney part of scan(), one marker only
  void prefetchAlong();
  void share(MarkJob& job);
  void notePromoted(Object* obj) {
    if (plan_.promotedGrey) plan_.promotedGrey->push_back(obj);
  }
  void storeSlot(Object*& slot, Object* to) {
    if (plan_.parallel)
      __atomic_store_n(&slot, to, __ATOMIC_RELEASE);
    else
      slot = to;
  }

  const MarkPlan plan_;
  Heap::Impl& impl_;
  bool first_;
  bool copying_ = true;
  std::vector<Chunk*> toChunks_;
  Chunk* reusedTail_ = nullptr;
  std::vector<Chunk*> toLarge_;
  // Reached objects not traced yet that the Cheney scan does not find: those marked
  // where they lie and copies into holes (with one marker), or all of them (parallel).
  // A stack: its depth, not the heap, bounds its size.
  std::vector<Object*> grey_;
  MarkJob* job_ = nullptr;  // the parallel phase this marker is in (scanShared)
  HoleCursor hole_;
  Chunk* current_ = nullptr;  // the chunk copies are bumped into
  size_t scanChunk_ = 0;      // Cheney scan position: toChunks_[scanChunk_] at scanPtr_
  char* scanPtr_ = nullptr;
  size_t scanLarge_ = 0;
  // Copies of kinds with TypeInfo::prefetch, in to-space order (standard chunks only),
  // and the index of the next one the scan will trace.
  std::vector<Object*> prefetchQueue_;
  size_t prefetchAt_ = 0;
  std::vector<Object*> weak_;        // every deferred weak container (to-space address)
  std::vector<Object*> ephemerons_;  // those with weak keys and strong values
  uint64_t reached_ = 0;             // objects copied or marked: the fixpoints' progress
  size_t copiedBytes_ = 0;
  size_t keptBytes_ = 0;  // marked in place, or large objects kept where they lie
  std::string error_;
  // Survivor age (an ageing minor only; one marker): the phase, whether the object being
  // traced reached a young one, the survivor chunks (the last one bumped in) and their
  // bytes, and the old objects carried.
  bool ageing_ = false;
  bool sawYoung_ = false;
  std::vector<Chunk*> survivorChunks_;
  size_t survivorBytes_ = 0;
  std::vector<Object*> carried_;
};

// The shared state of one parallel marking phase. The requester posts it (Heap::Impl::
// stopJob), runs its own marker in it, then closes it; each stopped mutator that wakes
// for it joins with a marker of its own (safepoint.cpp acknowledgeLocked).
class MarkJob final : public StopJob {
 public:
  explicit MarkJob(const MarkPlan& plan) : plan_(plan) {}
  // Runs `marker` as one participant until the phase ends.
  void run(Marker& marker);
  // A stopped mutator's thread helping: a marker of its own, unless the phase is over.
  void help() override;
  // Every helper's marker, once no helper runs (the requester waited for that).
  std::vector<std::unique_ptr<Marker>>& helpers() { return helpers_; }
  size_t participants() const { return joined_; }

 private:
  friend class Marker;
  // Some participant waits for work: markers with work share (relaxed: a hint; the
  // exchange itself is under mutex_).
  bool hungry() const { return hungry_.load(std::memory_order_relaxed); }
  void give(std::vector<Object*>&& batch);
  // A batch into `grey`, waiting while others may still make some; false when the
  // phase is over (everyone idle, no batch left, or a marker failed).
  bool take(std::vector<Object*>& grey);
  void stop();  // a marker failed: everyone leaves

  const MarkPlan plan_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::vector<Object*>> batches_;  // mutex_
  size_t joined_ = 1;                          // mutex_: participants so far (the requester too)
  size_t idle_ = 0;                            // mutex_: participants waiting in take
  bool over_ = false;                          // mutex_: the phase ended
  // Read by every busy marker for every object it traces: a line of their own, apart
  // from the mutex and the batches the exchanges write. Relaxed: hints; the exchange
  // itself is under mutex_.
  alignas(64) std::atomic<bool> hungry_{false};  // idle_ > batches_.size() and !over_
  std::atomic<uint64_t> events_{0};              // batches given, and the end: for spinners
  alignas(64) std::vector<std::unique_ptr<Marker>> helpers_;  // mutex_; on the next line
};

}  // namespace weft::gc
