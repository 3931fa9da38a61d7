// The blocking pool's threads and queue (protocol in blocking_pool.h).
#include "runtime/blocking_pool.h"

#include <algorithm>
#include <system_error>

namespace weft::runtime {

bool BlockingPool::startThreadLocked() {
  try {
    threads_.emplace_back([this] { run(); });
    ++started_;
    return true;
  } catch (const std::system_error&) {
    return false;  // out of threads: the ones already started take the queue
  }
}

bool BlockingPool::submit(Entry entry, const std::function<bool()>& admit) {
  std::unique_lock lock(mu_);
  if (stopping_) return false;
  bool needThread = idle_ == 0 && threads_.size() < size_;
  if (needThread && !startThreadLocked() && threads_.empty()) return false;
  if (!admit()) return false;
  entry.queuedAt = Clock::now();
  queue_.push_back(std::move(entry));
  queueDepthMax_ = std::max<uint64_t>(queueDepthMax_, queue_.size());
  inFlight_.fetch_add(1, std::memory_order_relaxed);
  lock.unlock();
  cv_.notify_one();
  return true;
}

BlockingPool::Cancel BlockingPool::cancel(const void* owner) {
  std::unique_lock lock(mu_);
  if (std::find(running_.begin(), running_.end(), owner) != running_.end()) return Cancel::kRunning;
  auto it = std::find_if(queue_.begin(), queue_.end(), [&](const Entry& e) { return e.owner == owner; });
  if (it == queue_.end()) return Cancel::kNotHere;
  Entry e = std::move(*it);
  queue_.erase(it);
  lock.unlock();
  e.done(false);
  countOut();
  return Cancel::kRemoved;
}

void BlockingPool::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    ++idle_;
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping, nothing left to run
    Entry e = std::move(queue_.front());
    queue_.pop_front();
    auto waited = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - e.queuedAt).count();
    wait_.record(waited > 0 ? uint64_t(waited) : 0);
    running_.push_back(e.owner);
    lock.unlock();
    vm::runJobIsolated(*e.job);
    jobsRun_.fetch_add(1, std::memory_order_relaxed);
    if (!e.job->panic.empty()) panics_.fetch_add(1, std::memory_order_relaxed);
    e.done(true);
    e.job.reset();
    e.done = nullptr;  // what it captured goes before the entry counts as done
    lock.lock();
    running_.erase(std::find(running_.begin(), running_.end(), e.owner));
    lock.unlock();
    countOut();
    lock.lock();
  }
}

void BlockingPool::stop() {
  std::vector<std::thread> threads;
  std::deque<Entry> dropped;
  {
    std::lock_guard lock(mu_);
    if (stopping_ && threads_.empty() && queue_.empty()) return;
    stopping_ = true;
    dropped.swap(queue_);
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (std::thread& t : threads) t.join();
  for (Entry& e : dropped) {
    e.done(false);
    countOut();
  }
}

// acq_rel: release orders what `done` did (the task's wake) before a reader of zero
// (the deadlock check); acquire makes the last one see the others' before its hook.
void BlockingPool::countOut() {
  if (inFlight_.fetch_sub(1, std::memory_order_acq_rel) == 1 && drained_) drained_();
}

BlockingPoolStats BlockingPool::stats() const {
  std::lock_guard lock(mu_);
  BlockingPoolStats s;
  s.size = size_;
  s.threads = started_;
  s.busy = uint32_t(running_.size());
  s.queued = queue_.size();
  s.queueDepthMax = queueDepthMax_;
  s.jobsRun = jobsRun_.load(std::memory_order_relaxed);
  s.panics = panics_.load(std::memory_order_relaxed);
  s.wait = wait_.snapshot();
  return s;
}

}  // namespace weft::runtime
