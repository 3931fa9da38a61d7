// Which workers are searching for work and which are parked, and each worker's futex.
//
// Protocol (Tokio's idle counters):
//  - `state_` packs num_unparked (high 16 bits) and num_searching (low 16 bits). A worker
//    is unparked from when it is woken until it adds itself to `sleepers_`; it is
//    searching from transitionToSearching (or from being woken by claimOneToWake, which
//    counts it as searching on its behalf) until it finds work or parks.
//  - A publication stores the task (release), then reads `state_` with an RMW
//    (claimOneToWake): it wakes a sleeper only when nobody searches and somebody sleeps.
//    A searcher going to park decrements `state_` (an RMW) and, if it was the last
//    searcher, then re-reads every queue (acquire). RMWs on one atomic are totally
//    ordered and each reads the one before it: if the publisher's comes first, the
//    parker's acquires it and sees the task; if the parker's comes first, the publisher
//    sees one searcher fewer and wakes someone. No wakeup is lost, without fences (which
//    ThreadSanitizer cannot model). A non-searching worker may park freely: somebody
//    searches, and the last of them to park runs the re-check.
//  - At most half the workers (at least one) search at once; the check is racy by design
//    (it only bounds contention).
//  - `sleepers_` and each worker's wake reason are guarded by `mu_`. A worker is removed
//    from `sleepers_` exactly once per park, by whoever wakes it (a publication, a pinned
//    push for it, close, itself on finding work, or the blocked thread that released it
//    taking it back), and learns the reason from wakeReason(). A worker released by a
//    blocked thread sleeps here too; the scheduler's resume() wakes it on a spare thread
//    instead of its futex (handoff.cpp). Parker tokens are separate: an unpark before the futex wait is not
//    lost, and a stale token only costs one more loop of the park loop.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace weft::runtime {

// A one-token futex: unpark() leaves a token that the next park() consumes.
class Parker {
 public:
  void park();
  void unpark();

 private:
  static constexpr uint32_t kEmpty = 0, kParked = 1, kNotified = 2;
  // Owner parks; any thread unparks. Release on unpark and acquire on park: the parked
  // worker sees what its waker wrote before waking it.
  std::atomic<uint32_t> state_{kEmpty};
};

enum class WakeReason : uint8_t { kStillParked, kAsSearcher, kPlain };

class Idle {
 public:
  explicit Idle(unsigned workers);

  bool transitionToSearching();
  // true if the caller was the last searcher (then it must wake another if work remains).
  bool transitionFromSearching();
  // Adds `worker` to the sleepers. Returns true if it was the last searcher. When every
  // worker now sleeps, `allParked()` is evaluated under the lock (so no worker can be
  // woken meanwhile) and, when it holds, `onAllBlocked()` runs under the same lock: a
  // publication that would end the quiet moment must take the lock to wake a sleeper,
  // so the callback never acts on a stale decision. It may close the scheduler.
  template <typename F, typename G>
  bool transitionToParked(unsigned worker, bool searching, F&& allParked, G&& onAllBlocked);
  // A publication's wake: a sleeper to unpark (counted as searching), or -1 when nobody
  // needs waking (a searcher exists or nobody sleeps).
  int claimOneToWake();
  // Removes `worker` from the sleepers (not searching); false if it was not there.
  bool claimById(unsigned worker);
  // Removes every sleeper (close): the caller unparks them.
  std::vector<unsigned> claimAll();
  WakeReason wakeReason(unsigned worker);
  // Whether some worker is parked or searching: a hint for keeping spawned work private
  // (relaxed: a stale answer only delays sharing to the next dispatch boundary).
  bool someoneHungry() const {
    uint32_t s = state_.load(std::memory_order_relaxed);
    return (s & kSearchMask) != 0 || (s >> 16) < workers_;
  }
  unsigned sleeperCount();

 private:
  static constexpr uint32_t kSearchMask = 0xffff;
  static constexpr uint32_t kUnparkedOne = 1u << 16;
  bool shouldWake(uint32_t state) const;
  void markParked(unsigned worker, bool searching, bool& wasLastSearcher);

  const unsigned workers_;
  std::atomic<uint32_t> state_;          // any thread; seq_cst (see the protocol)
  // Recursive: onAllBlocked runs under it and may close the scheduler (claimAll).
  std::recursive_mutex mu_;
  std::vector<unsigned> sleepers_;       // guarded by mu_
  std::vector<WakeReason> reason_;       // guarded by mu_; indexed by worker
};

template <typename F, typename G>
bool Idle::transitionToParked(unsigned worker, bool searching, F&& allParked, G&& onAllBlocked) {
  std::lock_guard lock(mu_);
  bool wasLastSearcher = false;
  markParked(worker, searching, wasLastSearcher);
  if (sleepers_.size() == workers_ && allParked()) onAllBlocked();
  return wasLastSearcher;
}

}  // namespace weft::runtime
