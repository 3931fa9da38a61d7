// The local ready queue (protocol in local_queue.h).
#include "runtime/sched/local_queue.h"

namespace weft::runtime {

namespace {

void spillOne(Task* task, bool migrated, TaskList& spill) {
  // Relaxed: the task is in no queue now; the injection queue's mutex publishes it.
  if (migrated) TaskAccess::bits(task).fetch_or(kMigrated, std::memory_order_relaxed);
  spill.push(task);
}

}  // namespace

LocalQueue::LocalQueue() {
  for (auto& s : slots_) s.store(0, std::memory_order_relaxed);
}

uint32_t LocalQueue::size() const {
  // Acquire: a reader that sees a length also sees the pushes behind it. Callers that
  // must not miss a concurrent push are ordered by the idle handshake (idle.h).
  uint32_t tail = tail_.load(std::memory_order_acquire);
  uint32_t real = realOf(head_.load(std::memory_order_acquire));
  return tail - real;
}

void LocalQueue::push(Task* task, bool migrated, TaskList& spill) {
  while (true) {
    uint64_t head = head_.load(std::memory_order_acquire);
    uint32_t steal = stealOf(head);
    uint32_t real = realOf(head);
    uint32_t tail = tail_.load(std::memory_order_relaxed);  // only this thread writes it
    if (tail - steal < kCapacity) {
      slots_[tail & kMask].store(encode(task, migrated), std::memory_order_relaxed);
      tail_.store(tail + 1, std::memory_order_release);  // publishes the slot to thieves
      return;
    }
    if (steal != real) {
      // A thief is copying: the queue empties soon, so this one task goes elsewhere.
      spillOne(task, migrated, spill);
      return;
    }
    if (spillHalf(real, task, migrated, spill)) return;
    // A thief moved the head since the load: there may be room now.
  }
}

bool LocalQueue::spillHalf(uint32_t real, Task* task, bool migrated, TaskList& spill) {
  constexpr uint32_t kHalf = kCapacity / 2;
  uint64_t expected = pack(real, real);
  if (!head_.compare_exchange_strong(expected, pack(real + kHalf, real + kHalf),
                                     std::memory_order_acq_rel, std::memory_order_relaxed)) {
    return false;
  }
  for (uint32_t i = 0; i < kHalf; ++i) {
    Item item = decode(slots_[(real + i) & kMask].load(std::memory_order_relaxed));
    spillOne(item.task, item.migrated, spill);
  }
  spillOne(task, migrated, spill);
  return true;
}

LocalQueue::Item LocalQueue::pop() {
  uint64_t head = head_.load(std::memory_order_acquire);
  while (true) {
    uint32_t steal = stealOf(head);
    uint32_t real = realOf(head);
    if (real == tail_.load(std::memory_order_relaxed)) return {};  // only this thread writes it
    uint32_t nextReal = real + 1;
    // Mid-steal, `steal` stays put: the thief still owns the slots from there.
    uint32_t nextSteal = steal == real ? nextReal : steal;
    if (head_.compare_exchange_weak(head, pack(nextSteal, nextReal), std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      return decode(slots_[real & kMask].load(std::memory_order_relaxed));
    }
  }
}

// Claims up to half of the unmarked prefix; returns the count and the first index.
uint32_t LocalQueue::claimForSteal(uint32_t& first) {
  uint64_t head = head_.load(std::memory_order_acquire);
  while (true) {
    uint32_t steal = stealOf(head);
    uint32_t real = realOf(head);
    if (steal != real) return 0;  // another thief is copying
    uint32_t avail = tail_.load(std::memory_order_acquire) - real;
    uint32_t n = avail - avail / 2;
    uint32_t unmarked = 0;
    while (unmarked < n &&
           (slots_[(real + unmarked) & kMask].load(std::memory_order_relaxed) & 1) == 0) {
      ++unmarked;
    }
    if (unmarked == 0) return 0;
    if (head_.compare_exchange_weak(head, pack(steal, real + unmarked), std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      first = real;
      return unmarked;
    }
  }
}

Task* LocalQueue::stealInto(LocalQueue& dst, uint32_t& stolen) {
  stolen = 0;
  uint32_t dstTail = dst.tail_.load(std::memory_order_relaxed);  // dst is ours
  uint32_t dstSteal = stealOf(dst.head_.load(std::memory_order_acquire));
  if (dstTail - dstSteal > kCapacity / 2) return nullptr;  // no room for a half
  uint32_t first = 0;
  uint32_t n = claimForSteal(first);
  if (n == 0) return nullptr;
  for (uint32_t i = 0; i + 1 < n; ++i) {
    uintptr_t v = slots_[(first + i) & kMask].load(std::memory_order_relaxed);
    dst.slots_[(dstTail + i) & kMask].store(v | 1, std::memory_order_relaxed);
  }
  Task* last = decode(slots_[(first + n - 1) & kMask].load(std::memory_order_relaxed)).task;
  // Release the claimed slots back to the owner: steal catches up with real.
  uint64_t head = head_.load(std::memory_order_acquire);
  while (!head_.compare_exchange_weak(head, pack(realOf(head), realOf(head)),
                                      std::memory_order_acq_rel, std::memory_order_acquire)) {
  }
  if (n > 1) dst.tail_.store(dstTail + n - 1, std::memory_order_release);
  stolen = n;
  return last;
}

}  // namespace weft::runtime
