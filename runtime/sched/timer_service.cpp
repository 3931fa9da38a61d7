// The timer heap and thread (protocol in timer_service.h).
#include "runtime/sched/timer_service.h"

#include <utility>

namespace weft::runtime {

void TimerHeap::place(size_t i, Entry e) {
  heap_[i] = std::move(e);
  pos_[heap_[i].id] = i;
}

void TimerHeap::siftUp(size_t i, Entry e) {
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!before(e, heap_[parent])) break;
    place(i, std::move(heap_[parent]));
    i = parent;
  }
  place(i, std::move(e));
}

void TimerHeap::siftDown(size_t i, Entry e) {
  size_t n = heap_.size();
  while (true) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], e)) break;
    place(i, std::move(heap_[child]));
    i = child;
  }
  place(i, std::move(e));
}

void TimerHeap::push(Entry e) {
  heap_.emplace_back();
  siftUp(heap_.size() - 1, std::move(e));
}

TimerHeap::Entry TimerHeap::takeAt(size_t i) {
  Entry out = std::move(heap_[i]);
  pos_.erase(out.id);
  Entry last = std::move(heap_.back());
  heap_.pop_back();
  if (i < heap_.size()) {
    if (i > 0 && before(last, heap_[(i - 1) / 2])) siftUp(i, std::move(last));
    else siftDown(i, std::move(last));
  }
  return out;
}

TimerHeap::Entry TimerHeap::pop() { return takeAt(0); }

bool TimerHeap::remove(TimerId id) {
  auto it = pos_.find(id);
  if (it == pos_.end()) return false;
  takeAt(it->second);
  return true;
}

void TimerService::start() { thread_ = std::thread([this] { run(); }); }

void TimerService::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  while (!heap_.empty()) heap_.pop();
}

TimerId TimerService::add(Clock::time_point deadline, std::function<void()> fn) {
  bool earliest;
  TimerId id;
  {
    std::lock_guard lock(mu_);
    id = nextId_++;
    earliest = heap_.empty() || deadline < heap_.top().deadline;
    heap_.push({deadline, id, std::move(fn)});
    // Under the lock, so the thread that runs the timer sees the count that covers it.
    pending_.fetch_add(1, std::memory_order_relaxed);
  }
  // Only a new earliest deadline changes how long the thread must sleep.
  if (earliest) cv_.notify_one();
  return id;
}

bool TimerService::cancel(TimerId id) {
  bool removed;
  {
    std::lock_guard lock(mu_);
    removed = heap_.remove(id);
  }
  if (removed) dropPending();
  return removed;
}

void TimerService::dropPending() {
  // acq_rel: release publishes the callback's effects to a reader of zero; acquire makes
  // the last decrementer see the others' before it runs the hook.
  if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1 && hooks_.drained) hooks_.drained();
}

void TimerService::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    loops_.fetch_add(1, std::memory_order_relaxed);
    if (heap_.empty()) {
      cv_.wait(lock);
      continue;
    }
    Clock::time_point deadline = heap_.top().deadline;  // copied: the heap may change while we wait
    if (deadline > Clock::now()) {
      cv_.wait_until(lock, deadline);
      continue;
    }
    runDue(lock);
  }
}

void TimerService::runDue(std::unique_lock<std::mutex>& lock) {
  TimerHeap::Entry e = heap_.pop();
  lock.unlock();
  auto late = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - e.deadline).count();
  lateness_.record(late > 0 ? uint64_t(late) : 0);
  try {
    e.fn();
  } catch (...) {
    if (hooks_.callbackThrew) hooks_.callbackThrew("a timer callback threw");
  }
  e.fn = nullptr;  // whatever it captured goes before the count says the timer is done
  dropPending();
  lock.lock();
}

}  // namespace weft::runtime
