// Timers: an indexed binary heap keyed by deadline and the thread that runs them.
//
// Protocol:
//  - Any thread adds or cancels a timer under `mu_`. The timer thread sleeps on `cv_`
//    until the earliest deadline (or forever when the heap is empty) and is notified only
//    when a new timer becomes the earliest, or on stop(). It never polls.
//  - A due timer leaves the heap under `mu_` and its callback runs with `mu_` released,
//    so a callback may add or cancel timers. cancel() returns true only for a timer still
//    in the heap: a running or finished timer cannot be cancelled.
//  - `pending_` counts timers in the heap plus the one whose callback is running. It is
//    decremented with release after the callback returns, so a thread that reads zero
//    (acquire) also sees whatever the callback published (the all-blocked check).
//  - When `pending_` drops to zero the `drained` hook runs (on the thread that made it
//    drop): the scheduler uses it to let a parked worker re-check for global idleness.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/sched/histogram.h"
#include "runtime/sched/scheduler.h"

namespace weft::runtime {

class TimerHeap {
 public:
  struct Entry {
    Clock::time_point deadline;
    TimerId id = 0;
    std::function<void()> fn;
  };
  void push(Entry e);
  bool remove(TimerId id);
  Entry pop();
  const Entry& top() const { return heap_.front(); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

 private:
  // Earlier deadline first; equal deadlines run in the order they were added.
  static bool before(const Entry& a, const Entry& b) {
    return a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id);
  }
  void place(size_t i, Entry e);
  void siftUp(size_t i, Entry e);
  void siftDown(size_t i, Entry e);
  Entry takeAt(size_t i);

  std::vector<Entry> heap_;
  std::unordered_map<TimerId, size_t> pos_;  // id -> index in heap_
};

class TimerService {
 public:
  struct Hooks {
    std::function<void()> drained;                      // pending() reached zero
    std::function<void(const char* what)> callbackThrew;
  };
  explicit TimerService(Hooks hooks) : hooks_(std::move(hooks)) {}
  ~TimerService() { stop(); }

  void start();
  // Joins the thread; timers still in the heap are dropped without running. Idempotent.
  void stop();
  TimerId add(Clock::time_point deadline, std::function<void()> fn);
  bool cancel(TimerId id);
  // Timers that may still run (acquire; see the protocol).
  uint64_t pending() const { return pending_.load(std::memory_order_acquire); }
  // How many times the timer thread woke up (tests check that it does not spin).
  uint64_t loopIterations() const { return loops_.load(std::memory_order_relaxed); }
  // How long after its deadline each timer's callback started (any thread).
  HistogramSnapshot lateness() const { return lateness_.snapshot(); }

 private:
  void run();
  void runDue(std::unique_lock<std::mutex>& lock);
  void dropPending();

  Hooks hooks_;
  std::mutex mu_;
  std::condition_variable cv_;
  TimerHeap heap_;                     // guarded by mu_
  TimerId nextId_ = 1;                 // guarded by mu_
  bool stopping_ = false;              // guarded by mu_
  std::thread thread_;                 // started and joined by the scheduler's owner
  std::atomic<uint64_t> pending_{0};   // any thread
  std::atomic<uint64_t> loops_{0};     // written by the timer thread; relaxed statistic
  LogHistogram lateness_;              // written by the timer thread
};

}  // namespace weft::runtime
