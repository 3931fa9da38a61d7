// A worker's spawn stack: the tasks its own dispatches spawned while no sibling was
// hungry, run newest batch first (design: docs/design/scheduler.md, "Spawn stack").
//
// Protocol:
//  - Owner only: the thread holding the worker pushes, pops, seals and spills; nobody
//    steals from it. Siblings get its work through spills into the local queue: the
//    worker spills the oldest half when the stack is full and, at a dispatch boundary,
//    when a sibling is hungry (parked or searching) and its local queue is empty.
//  - A batch is what one dispatch pushed. sealBatch() (at the end of the dispatch)
//    reverses the batch in place, so pops run a batch in spawn order while a newer
//    batch runs before an older one: depth first across batches (fork-join order), the
//    spawn order within one.
//  - `size_` is an atomic only for stats() and siblings' load checks, which read it from
//    any thread (relaxed: a snapshot); every other access is the owner's.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

#include "runtime/sched/task_list.h"

namespace weft::runtime {

class SpawnStack {
 public:
  static constexpr uint32_t kCapacity = 64;
  // A dispatch pushes at most this many: later spawns of the same dispatch go to the
  // local queue, so a loop spawning many tasks keeps them in spawn order there.
  static constexpr uint32_t kBatchLimit = 16;

  uint32_t size() const { return size_.load(std::memory_order_relaxed); }
  bool empty() const { return size() == 0; }
  bool full() const { return size() == kCapacity; }
  bool batchFull() const { return size() - batchStart_ >= kBatchLimit; }

  // Owner. The caller made room (spillOldest) when full().
  void push(Task* t) {
    uint32_t n = size();
    items_[n] = t;
    size_.store(n + 1, std::memory_order_relaxed);
  }

  // Owner, between dispatches. The top task, or nullptr.
  Task* pop() {
    uint32_t n = size();
    if (n == 0) return nullptr;
    size_.store(n - 1, std::memory_order_relaxed);
    batchStart_ = std::min(batchStart_, n - 1);
    return items_[n - 1];
  }

  // Owner: ends the current dispatch's batch (idempotent).
  void sealBatch() {
    uint32_t n = size();
    std::reverse(items_.begin() + batchStart_, items_.begin() + n);
    batchStart_ = n;
  }

  // Owner: moves up to `count` of the oldest tasks, oldest first, into `out`; never
  // tasks of the open batch, whose order sealBatch has not fixed yet.
  void spillOldest(uint32_t count, TaskList& out) {
    uint32_t n = size();
    count = std::min(count, batchStart_);
    for (uint32_t i = 0; i < count; ++i) out.push(items_[i]);
    std::copy(items_.begin() + count, items_.begin() + n, items_.begin());
    batchStart_ -= count;
    size_.store(n - count, std::memory_order_relaxed);
  }

 private:
  std::array<Task*, kCapacity> items_{};
  std::atomic<uint32_t> size_{0};
  uint32_t batchStart_ = 0;  // owner: where the open batch starts
};

}  // namespace weft::runtime
