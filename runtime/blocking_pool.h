// The blocking pool: a bounded set of threads that run vm::BlockingJobs (a child
// process, a read from a pipe) for tasks suspended meanwhile, so that work which blocks
// on the operating system never holds a worker, and the threads it needs stay bounded.
// Design: docs/design/blocking-pool.md.
//
// Protocol:
//  - submit() runs `admit` and queues the entry under `mu_`, oldest first; it wakes an
//    idle pool thread, or starts one while fewer than `size` exist. `admit` lets the
//    caller decide under the same lock (the runtime begins the task's wait there and
//    declines for a task whose cancellation it sees: see cancel()).
//  - A pool thread takes the oldest entry under `mu_` (recording how long it waited) and
//    moves it to `running_`; runs the job outside the lock (runJobIsolated: a throw is
//    kept in the job, never crosses the thread); calls `done(true)` outside the lock;
//    then, under the lock, removes it from `running_` and counts it out of inFlight().
//  - cancel(owner) under `mu_`: a queued entry of `owner` is removed (its `done(false)`
//    runs after the lock is released), a running one is reported and left alone: the
//    job may be using what the owner would free when it ends (a FILE*).
//  - When inFlight() drops to zero the `drained` hook runs on the thread that made it
//    drop (the runtime re-evaluates whether every task is blocked: until then a job in
//    flight counted as possible future work).
//  - stop() (the runtime's end) wakes every thread and joins them; running jobs finish
//    first, queued ones get `done(false)`. Later submits are declined.
//  - Threads never touch the heap and never register with the collector.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/sched/histogram.h"
#include "runtime/sched/scheduler.h"
#include "vm/api.h"

namespace weft::runtime {

struct BlockingPoolStats {
  uint32_t size = 0;     // the most threads it may start
  uint32_t threads = 0;  // started so far
  uint32_t busy = 0;     // running a job now
  uint64_t queued = 0;   // waiting for a thread now
  uint64_t queueDepthMax = 0;
  uint64_t jobsRun = 0;
  uint64_t panics = 0;     // jobs whose run() threw
  HistogramSnapshot wait;  // from submit to a thread taking the job
};

class BlockingPool {
 public:
  struct Entry {
    std::shared_ptr<vm::BlockingJob> job;
    const void* owner = nullptr;  // what cancel() finds it by
    // After the job ran (true), or when it is dropped unrun (false: cancelled, stopped).
    std::function<void(bool ran)> done;
    Clock::time_point queuedAt{};
  };
  enum class Cancel : uint8_t { kNotHere, kRemoved, kRunning };

  explicit BlockingPool(uint32_t size, std::function<void()> drained = {})
      : size_(size < 1 ? 1 : size), drained_(std::move(drained)) {}
  ~BlockingPool() { stop(); }
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  // false when stopped, when `admit` declined, or when no thread exists and none could
  // be started (the caller then runs the job itself).
  bool submit(Entry entry, const std::function<bool()>& admit);
  Cancel cancel(const void* owner);
  void stop();
  // Entries queued or running (any thread; acquire pairs with the release after done).
  uint64_t inFlight() const { return inFlight_.load(std::memory_order_acquire); }
  BlockingPoolStats stats() const;

 private:
  void run();
  bool startThreadLocked();
  void countOut();  // one entry fewer in flight; the drained hook at zero

  const uint32_t size_;
  const std::function<void()> drained_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> queue_;           // mu_
  std::vector<const void*> running_;  // mu_: owners of the jobs running now
  std::vector<std::thread> threads_;  // mu_ (joined by stop())
  uint32_t started_ = 0;              // mu_
  uint32_t idle_ = 0;                 // mu_: threads waiting for an entry
  bool stopping_ = false;             // mu_
  uint64_t queueDepthMax_ = 0;        // mu_
  // Counted by the thread that ran the job before its `done` (relaxed: `done` wakes the
  // task with a release that a reader after the wake acquires).
  std::atomic<uint64_t> jobsRun_{0}, panics_{0};
  LogHistogram wait_;  // written under mu_ (one writer at a time)
  std::atomic<uint64_t> inFlight_{0};
};

}  // namespace weft::runtime
