// The stop-the-world handshake between mutator threads (heap.h invariants 6 to 9;
// docs/design/stop-the-world.md).
//
// Protocol: every piece of handshake state lives under Impl::mutex, and every wait is on
// one of its two condition variables, so the lock alone orders the mutators' heap writes
// before the collection and the collection before their next reads: a parked mutator
// released the lock after its last heap access, the requester collects after taking it,
// and a released mutator takes it again before running on. stopRequested_, requested_
// and broken are relaxed hints that send a poll into the locked path; each decision is
// remade under the lock.
//  - A poll that finds a stop pending acknowledges its epoch (exactly once: the epoch is
//    newer than lastAckedEpoch_) and waits on releaseCv until doneEpoch reaches it. If
//    the requester posts a job meanwhile (a major's marking, then its sweep), it helps
//    with each once, outside the lock (helpStopJobLocked), and waits again.
//  - A poll that wants a collection (threshold, or its mutator's stress schedule,
//    counted before the lock; decided under the lock)
//    becomes the requester: ++stopEpoch, raise stopRequested_, wait on acksCv until no
//    other attached mutator lacks the epoch or the deadline passes, collect with the
//    lock released (attach and (un)registration wait while `requester` is set, so the
//    mutator list and every root stay still), then publish doneEpoch and wake everyone.
//  - detach clears attached_ under the lock and wakes the requester, so a detached
//    mutator never delays a stop; attach waits for the stop to end.
//  - Any failure (failLocked) records the first message, sets broken and wakes both
//    condition variables; every waiter checks broken, so nobody hangs.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "gc/fault.h"
#include "gc/heap_internal.h"
#include "gc/marker.h"

namespace weft::gc {

namespace {

using Clock = std::chrono::steady_clock;

uint64_t nanosSince(Clock::time_point start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

size_t indexOf(const std::vector<Mutator*>& mutators, const Mutator* m) {
  return static_cast<size_t>(std::find(mutators.begin(), mutators.end(), m) - mutators.begin());
}

}  // namespace

// ---- Failure (invariant 9) ----

Status Heap::failLocked(const std::string& message, bool report) {
  Impl& impl = *impl_;
  bool first = impl.failure.empty();
  if (first) impl.failure = message;
  impl.broken.store(true, std::memory_order_relaxed);
  // Keep the VM's poll up so every mutator reaches a safepoint and sees kFatal there.
  requested_.store(true, std::memory_order_relaxed);
  if (report && first) std::fprintf(stderr, "weft: gc: %s\n", message.c_str());
  impl.acksCv.notify_all();
  impl.releaseCv.notify_all();
  return Status(StatusCode::kFatal);
}

void Heap::closeHeap(const std::string& reason) {
  std::lock_guard lock(impl_->mutex);
  (void)failLocked("close: " + reason, false);
}

std::string Heap::failureReason() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->failure;
}

// ---- Registration and attachment ----

void Heap::waitForNoStopLocked(std::unique_lock<std::mutex>& lock) {
  // Not cut short by a failure: the requester still walks the mutator list until it
  // clears `requester`, which it does within the deadline or one collection.
  impl_->releaseCv.wait(lock, [this] { return impl_->requester == nullptr; });
}

Expected<Mutator*> Heap::registerMutator() {
  Impl& impl = *impl_;
  {
    std::lock_guard lock(impl.mutex);
    if (impl.broken.load(std::memory_order_relaxed))
      return Error{StatusCode::kFatal, "register: the heap is closed (" + impl.failure + ")"};
    if (fault::hit("gc.register")) {
      std::string message = "register: fault injected (gc.register)";
      (void)failLocked(message, true);
      return Error{StatusCode::kFatal, message};
    }
  }
  auto owned = std::make_unique<Mutator>(*this);
  Mutator* m = owned.get();
  std::lock_guard lock(impl.mutex);
  impl.owned.push_back(std::move(owned));
  return m;
}

void Heap::unregisterMutator(Mutator* m) {
  std::unique_ptr<Mutator> doomed;
  {
    std::lock_guard lock(impl_->mutex);
    WEFT_CHECK(!m->attached_, "unregisterMutator: the mutator must be detached");
    auto& owned = impl_->owned;
    auto it = std::find_if(owned.begin(), owned.end(), [m](const auto& p) { return p.get() == m; });
    WEFT_CHECK(it != owned.end(), "unregisterMutator: not made by registerMutator");
    doomed = std::move(*it);
    owned.erase(it);
  }
  // ~Mutator takes the lock again, waits out any stop and retires the buffer.
}

Status Heap::attach(Mutator& m) {
  Impl& impl = *impl_;
  {
    std::unique_lock lock(impl.mutex);
    WEFT_CHECK(!m.attached_, "attach: the mutator is already attached");
    impl.releaseCv.wait(lock, [&] { return impl.broken.load(std::memory_order_relaxed) || !impl.requester; });
    if (impl.broken.load(std::memory_order_relaxed)) return Status(StatusCode::kFatal);
    if (fault::hit("gc.attach"))
      return failLocked("attach: fault injected (gc.attach) for mutator " + std::to_string(indexOf(impl.mutators, &m)), true);
    m.attached_ = true;
    m.lastAckedEpoch_ = impl.stopEpoch;  // no stop is pending: nothing older to acknowledge
  }
  tCurrentMutator = &m;
  // Relocate mode's trap wants an alternate signal stack on every mutator thread.
  if (config_.stress == StressMode::kRelocate) installStaleReferenceHandler();
  return Status::ok();
}

void Heap::detach(Mutator& m) {
  std::lock_guard lock(impl_->mutex);
  WEFT_CHECK(m.attached_, "detach: the mutator is not attached");
  m.attached_ = false;
  if (tCurrentMutator == &m) tCurrentMutator = nullptr;
  if (impl_->requester) impl_->acksCv.notify_all();
}

// ---- The poll ----

Status Heap::safepointMayGC(Mutator& m) {
  Impl& impl = *impl_;
  if (impl.broken.load(std::memory_order_relaxed)) [[unlikely]] return Status(StatusCode::kFatal);
  // Every poll counts once in the stress schedule, whatever else it finds.
  bool stressDue = config_.stress != StressMode::kNone && stressSaysCollect(m);
  if (!stopRequested_.load(std::memory_order_relaxed) && !stressDue &&
      !impl.thresholdCrossed.load(std::memory_order_relaxed) && !impl.sliceDue.load(std::memory_order_relaxed))
    return Status::ok();
  return pollSlowMayGC(m, false, CollectionKind::kMinor, stressDue);
}

Status Heap::collectMayGC(Mutator& m, CollectionKind kind) { return pollSlowMayGC(m, true, kind, false); }

Status Heap::pollSlowMayGC(Mutator& m, bool force, CollectionKind kind, bool stressDue) {
  std::unique_lock lock(impl_->mutex);
  if (impl_->broken.load(std::memory_order_relaxed)) return Status(StatusCode::kFatal);
  WEFT_CHECK(m.attached_, "a safepoint of a detached mutator");
  if (impl_->requester) {
    // Take part in the pending stops; an explicit major request that met someone
    // else's minor makes its own after them.
    Status st;
    while (impl_->requester && st.isOk()) st = acknowledgeLocked(m, lock);
    if (!st.isOk() || !force || kind == CollectionKind::kMinor || impl_->lastWasMajor) return st;
  }
  if (!force && !wantsCollectionLocked(stressDue)) return Status::ok();
  return stopTheWorldLocked(m, lock, force, kind);
}

bool Heap::wantsCollectionLocked(bool stressDue) {
  Impl& impl = *impl_;
  // A stopped collector stops stress collections too: scripts rely on objects surviving
  // while it is stopped (collectgarbage "stop" promises no collection but explicit ones).
  if (stressDue && automatic()) return true;
  if (!impl.thresholdCrossed.load(std::memory_order_relaxed) && !impl.sliceDue.load(std::memory_order_relaxed))
    return false;
  if (automatic() || impl.reserveOpen.load(std::memory_order_relaxed)) return true;
  // Stopped: forget the request; the next refill past the threshold raises it again
  // (a marking cycle waits, its barrier on, until collection restarts).
  impl.thresholdCrossed.store(false, std::memory_order_relaxed);
  impl.sliceDue.store(false, std::memory_order_relaxed);
  requested_.store(config_.stress != StressMode::kNone, std::memory_order_relaxed);
  return false;
}

Status Heap::acknowledgeLocked(Mutator& m, std::unique_lock<std::mutex>& lock) {
  Impl& impl = *impl_;
  uint64_t epoch = impl.stopEpoch;
  WEFT_CHECK(m.lastAckedEpoch_ < epoch, "a mutator acknowledges each epoch exactly once (invariant 7)");
  if (fault::hit("gc.epoch-ack"))
    return failLocked("epoch acknowledgement: mutator " + std::to_string(indexOf(impl.mutators, &m)) +
                          " failed to acknowledge epoch " + std::to_string(epoch) + " (fault injected: gc.epoch-ack)",
                      true);
  m.lastAckedEpoch_ = epoch;
  auto start = Clock::now();
  impl.acksCv.notify_all();
  for (;;) {
    impl.releaseCv.wait(lock, [&] {
      return impl.broken.load(std::memory_order_relaxed) || impl.doneEpoch >= epoch ||
             (impl.stopJob && m.helpedJob_ != impl.stopJobNumber);
    });
    if (impl.broken.load(std::memory_order_relaxed) || impl.doneEpoch >= epoch) break;
    helpStopJobLocked(m, lock);
  }
  m.noteStop(nanosSince(start));
  return impl.broken.load(std::memory_order_relaxed) ? Status(StatusCode::kFatal) : Status::ok();
}

// A parked mutator's thread works with the requester (it marks, marker.h, then it
// sweeps, collector.cpp sweepOld): the job stays alive until stopJobHelpers is back to
// zero, which the requester waits for.
void Heap::helpStopJobLocked(Mutator& m, std::unique_lock<std::mutex>& lock) {
  Impl& impl = *impl_;
  StopJob* job = impl.stopJob;
  m.helpedJob_ = impl.stopJobNumber;
  ++impl.stopJobHelpers;
  lock.unlock();
  job->help();
  lock.lock();
  --impl.stopJobHelpers;
  impl.acksCv.notify_all();
}

size_t Heap::unacknowledgedLocked(uint64_t epoch) const {
  size_t n = 0;
  for (const Mutator* m : impl_->mutators) n += m->attached_ && m->lastAckedEpoch_ < epoch;
  return n;
}

Status Heap::stopTheWorldLocked(Mutator& m, std::unique_lock<std::mutex>& lock, bool force, CollectionKind kind) {
  Impl& impl = *impl_;
  auto start = Clock::now();
  uint64_t epoch = ++impl.stopEpoch;
  impl.requester = &m;
  m.lastAckedEpoch_ = epoch;
  stopRequested_.store(true, std::memory_order_relaxed);
  bool injected = fault::hit("gc.deadline");
  bool acked = !injected && impl.acksCv.wait_until(lock, start + std::chrono::milliseconds(config_.safepointDeadlineMs), [&] {
    return impl.broken.load(std::memory_order_relaxed) || unacknowledgedLocked(epoch) == 0;
  });
  Status status;
  if (impl.broken.load(std::memory_order_relaxed)) {
    status = Status(StatusCode::kFatal);
  } else if (!acked) {
    size_t attached = 0;
    for (const Mutator* other : impl.mutators) attached += other->attached_;
    status = failLocked("safepoint deadline: " + std::to_string(unacknowledgedLocked(epoch)) + " of " +
                            std::to_string(attached) + " attached mutators did not acknowledge epoch " +
                            std::to_string(epoch) + " within " + std::to_string(config_.safepointDeadlineMs) + " ms" +
                            (injected ? " (fault injected: gc.deadline)" : ""),
                        true);
  } else {
    lock.unlock();
    status = collectNow(chooseWork(force, kind));
    lock.lock();
  }
  impl.requester = nullptr;
  impl.doneEpoch = epoch;
  stopRequested_.store(false, std::memory_order_relaxed);
  impl.releaseCv.notify_all();
  m.noteStop(nanosSince(start));
  return status;
}

Heap::HandshakeState Heap::handshake() const {
  std::lock_guard lock(impl_->mutex);
  HandshakeState state;
  state.epoch = impl_->stopEpoch;
  state.stopPending = impl_->requester != nullptr;
  for (const Mutator* m : impl_->mutators) {
    state.attached += m->attached_;
    state.acknowledged += state.stopPending && m->attached_ && m->lastAckedEpoch_ == impl_->stopEpoch;
  }
  return state;
}

}  // namespace weft::gc
