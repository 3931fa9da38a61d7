// Idle counters, sleepers and the futex parker (protocol in idle.h).
#include "runtime/sched/idle.h"

#include <algorithm>

namespace weft::runtime {

void Parker::park() {
  uint32_t expected = kNotified;
  if (state_.compare_exchange_strong(expected, kEmpty, std::memory_order_acquire)) return;
  expected = kEmpty;
  if (!state_.compare_exchange_strong(expected, kParked, std::memory_order_acquire)) {
    // An unpark slipped in between the two CAS: consume its token.
    state_.exchange(kEmpty, std::memory_order_acquire);
    return;
  }
  while (true) {
    state_.wait(kParked, std::memory_order_acquire);
    expected = kNotified;
    if (state_.compare_exchange_strong(expected, kEmpty, std::memory_order_acquire)) return;
  }
}

void Parker::unpark() {
  if (state_.exchange(kNotified, std::memory_order_release) == kParked) state_.notify_one();
}

Idle::Idle(unsigned workers)
    : workers_(workers), state_(workers * kUnparkedOne), reason_(workers, WakeReason::kPlain) {
  sleepers_.reserve(workers);
}

bool Idle::transitionToSearching() {
  uint32_t s = state_.load(std::memory_order_seq_cst);
  if ((s & kSearchMask) >= std::max(workers_ / 2, 1u)) return false;
  state_.fetch_add(1, std::memory_order_seq_cst);
  return true;
}

bool Idle::transitionFromSearching() {
  return (state_.fetch_sub(1, std::memory_order_seq_cst) & kSearchMask) == 1;
}

void Idle::markParked(unsigned worker, bool searching, bool& wasLastSearcher) {
  uint32_t dec = kUnparkedOne + (searching ? 1 : 0);
  uint32_t prev = state_.fetch_sub(dec, std::memory_order_seq_cst);
  wasLastSearcher = searching && (prev & kSearchMask) == 1;
  sleepers_.push_back(worker);
  reason_[worker] = WakeReason::kStillParked;
}

bool Idle::shouldWake(uint32_t s) const { return (s & kSearchMask) == 0 && (s >> 16) < workers_; }

int Idle::claimOneToWake() {
  // An RMW, not a load: it reads the latest value in state_'s modification order, which
  // gives the handshake its guarantee (see the protocol). The fast path of every
  // publication.
  if (!shouldWake(state_.fetch_add(0, std::memory_order_seq_cst))) return -1;
  std::lock_guard lock(mu_);
  if (!shouldWake(state_.load(std::memory_order_seq_cst)) || sleepers_.empty()) return -1;
  state_.fetch_add(kUnparkedOne + 1, std::memory_order_seq_cst);
  unsigned w = sleepers_.back();
  sleepers_.pop_back();
  reason_[w] = WakeReason::kAsSearcher;
  return static_cast<int>(w);
}

bool Idle::claimById(unsigned worker) {
  std::lock_guard lock(mu_);
  auto it = std::find(sleepers_.begin(), sleepers_.end(), worker);
  if (it == sleepers_.end()) return false;
  sleepers_.erase(it);
  state_.fetch_add(kUnparkedOne, std::memory_order_seq_cst);
  reason_[worker] = WakeReason::kPlain;
  return true;
}

std::vector<unsigned> Idle::claimAll() {
  std::lock_guard lock(mu_);
  std::vector<unsigned> out;
  out.swap(sleepers_);
  for (unsigned w : out) reason_[w] = WakeReason::kPlain;
  state_.fetch_add(static_cast<uint32_t>(out.size()) * kUnparkedOne, std::memory_order_seq_cst);
  return out;
}

WakeReason Idle::wakeReason(unsigned worker) {
  std::lock_guard lock(mu_);
  return reason_[worker];
}

unsigned Idle::sleeperCount() {
  std::lock_guard lock(mu_);
  return static_cast<unsigned>(sleepers_.size());
}

}  // namespace weft::runtime
