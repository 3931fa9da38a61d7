// A worker's bounded local ready queue: a lock-free single-producer ring that siblings
// steal half of in one batch.
//
// Protocol:
//  - The owner worker pushes at the tail and pops at the head; thieves only steal. Only
//    the owner writes slots and `tail_`.
//  - `head_` packs two 32-bit indices: `real` (the next slot to pop) and `steal` (the
//    first slot a thief is still copying). Outside a steal they are equal. A thief claims
//    [real, real + n) by moving `real` alone with a CAS, copies the slots, then sets
//    `steal = real`. While steal != real no other thief starts, and the owner does not
//    overwrite slots from `steal` on (its room is `capacity - (tail - steal)`).
//  - Indices grow without bound and wrap; slot = index & mask. A 32-bit wrap between a
//    thief's load and its CAS (the ABA window) would need 2^32 operations meanwhile.
//  - A slot holds a task pointer whose low bit is the migration mark: the task was stolen
//    since its last publication. Thieves read marks before claiming, which they may, as
//    they never dereference a task they have not claimed; a thief claims only the
//    unmarked prefix, so a task migrates at most once per publication.
//  - Orderings: the owner publishes a slot with a release store of `tail_`, and thieves
//    acquire `tail_` before reading slots. Every CAS on `head_` is acq_rel so that a
//    thief's slot reads happen before the owner may reuse those slots, and so that the
//    owner's pops see the thieves' progress.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "runtime/sched/task_list.h"

namespace weft::runtime {

class LocalQueue {
 public:
  static constexpr uint32_t kCapacity = Scheduler::kLocalQueueCapacity;
  static constexpr uint32_t kMask = kCapacity - 1;
  static_assert((kCapacity & kMask) == 0, "the capacity is a power of two");

  struct Item {
    Task* task = nullptr;
    bool migrated = false;
  };

  LocalQueue();

  // Owner only. Pushes at the tail. When the queue is full, half of it and `task` go
  // into `spill` (for the injection queue) instead; when a thief is mid-steal, only
  // `task` does. Tasks leaving with a mark carry it as kMigrated.
  void push(Task* task, bool migrated, TaskList& spill);
  // Owner only. The oldest task, or an empty Item.
  Item pop();
  // A thief (the owner of `dst`, which should be empty). Claims half of this queue's
  // unmarked prefix (rounded up), puts all but one into `dst` marked, and returns that
  // one; `stolen` says how many were claimed. nullptr when nothing could be taken.
  Task* stealInto(LocalQueue& dst, uint32_t& stolen);

  // Any thread: the length now (a snapshot).
  uint32_t size() const;
  bool empty() const { return size() == 0; }

 private:
  static uint64_t pack(uint32_t steal, uint32_t real) { return (uint64_t{steal} << 32) | real; }
  static uint32_t stealOf(uint64_t h) { return static_cast<uint32_t>(h >> 32); }
  static uint32_t realOf(uint64_t h) { return static_cast<uint32_t>(h); }
  static uintptr_t encode(Task* t, bool migrated) {
    return reinterpret_cast<uintptr_t>(t) | (migrated ? 1u : 0u);
  }
  static Item decode(uintptr_t v) { return {reinterpret_cast<Task*>(v & ~uintptr_t{1}), (v & 1) != 0}; }

  bool spillHalf(uint32_t real, Task* task, bool migrated, TaskList& spill);
  uint32_t claimForSteal(uint32_t& first);

  std::atomic<uint64_t> head_{0};   // CAS by the owner (pop, spill) and by thieves
  std::atomic<uint32_t> tail_{0};   // stored by the owner; loaded by thieves
  std::array<std::atomic<uintptr_t>, kCapacity> slots_;  // written by the owner only
};

}  // namespace weft::runtime
