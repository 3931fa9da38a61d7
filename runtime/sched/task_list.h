// Intrusive task lists linked through Task::next_, the task bit layout, and the
// mutex-guarded queue built on the lists (the injection queue and each pinned queue).
//
// Protocol:
//  - A TaskList is plain data owned by one thread at a time (its holder, or whoever
//    holds the lock of the SharedTaskQueue it sits in).
//  - A SharedTaskQueue is pushed and popped by any thread under its mutex. Its length is
//    mirrored in an atomic so that emptiness checks need no lock (the parking and
//    all-blocked checks); the idle handshake (idle.h) orders those reads after the
//    pushes they must see. seq_cst keeps the mirror simple to reason about; it is
//    written under the mutex, so it costs nothing extra there.
//  - After close() a SharedTaskQueue refuses pushes: the pusher keeps the task and drops
//    the scheduler's reference, so nothing is queued after shutdown has drained it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "runtime/sched/scheduler.h"

namespace weft::runtime {

// Task::bits_: the state in the low byte and three flags.
inline constexpr uint32_t kStateMask = 0xff;
inline constexpr uint32_t kNotified = 1u << 8;  // woken while running: requeue on kSuspended
inline constexpr uint32_t kCancel = 1u << 9;    // cancellation requested
// Stolen since its last publication; carried while the task sits in a list, because a
// list (unlike a local queue slot) has no room for the mark (local_queue.h).
inline constexpr uint32_t kMigrated = 1u << 10;

inline uint32_t stateBits(TaskState s) { return static_cast<uint32_t>(s); }
inline TaskState stateOf(uint32_t bits) { return static_cast<TaskState>(bits & kStateMask); }

// The scheduler's view of a Task's private fields.
struct TaskAccess {
  static Task*& next(Task* t) { return t->next_; }
  static std::atomic<uint32_t>& bits(Task* t) { return t->bits_; }
  static std::atomic<int>& last(Task* t) { return t->last_; }
  static void setHome(Task* t, int home) { t->home_ = home; }
  static uint64_t& readySince(Task* t) { return t->readySince_; }
};

class TaskList {
 public:
  TaskList() = default;
  TaskList(TaskList&& other) noexcept { *this = static_cast<TaskList&&>(other); }
  TaskList& operator=(TaskList&& other) noexcept {
    head_ = other.head_;
    tail_ = other.tail_;
    size_ = other.size_;
    other.head_ = other.tail_ = nullptr;
    other.size_ = 0;
    return *this;
  }

  bool empty() const { return head_ == nullptr; }
  size_t size() const { return size_; }
  void push(Task* t) {
    TaskAccess::next(t) = nullptr;
    if (tail_) TaskAccess::next(tail_) = t;
    else head_ = t;
    tail_ = t;
    ++size_;
  }
  void append(TaskList&& other) {
    if (other.empty()) return;
    if (tail_) TaskAccess::next(tail_) = other.head_;
    else head_ = other.head_;
    tail_ = other.tail_;
    size_ += other.size_;
    other.head_ = other.tail_ = nullptr;
    other.size_ = 0;
  }
  Task* pop() {
    Task* t = head_;
    if (!t) return nullptr;
    head_ = TaskAccess::next(t);
    if (!head_) tail_ = nullptr;
    TaskAccess::next(t) = nullptr;
    --size_;
    return t;
  }

 private:
  Task* head_ = nullptr;
  Task* tail_ = nullptr;
  size_t size_ = 0;
};

class SharedTaskQueue {
 public:
  // false when closed: the caller still owns the task (or the whole list).
  bool push(Task* t) {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    list_.push(t);
    len_.store(list_.size(), std::memory_order_seq_cst);
    return true;
  }
  bool pushAll(TaskList& list) {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    list_.append(static_cast<TaskList&&>(list));
    len_.store(list_.size(), std::memory_order_seq_cst);
    return true;
  }
  Task* pop() {
    if (empty()) return nullptr;  // the common case takes no lock
    std::lock_guard lock(mu_);
    Task* t = list_.pop();
    len_.store(list_.size(), std::memory_order_seq_cst);
    return t;
  }
  // Up to `max` tasks from the head, in order.
  TaskList popBatch(size_t max) {
    TaskList out;
    if (empty()) return out;
    std::lock_guard lock(mu_);
    while (out.size() < max && !list_.empty()) out.push(list_.pop());
    len_.store(list_.size(), std::memory_order_seq_cst);
    return out;
  }
  size_t size() const { return len_.load(std::memory_order_seq_cst); }
  bool empty() const { return size() == 0; }
  // Refuses later pushes and hands back what was queued.
  TaskList close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    len_.store(0, std::memory_order_seq_cst);
    return static_cast<TaskList&&>(list_);
  }

 private:
  mutable std::mutex mu_;
  TaskList list_;                // guarded by mu_
  bool closed_ = false;          // guarded by mu_
  std::atomic<size_t> len_{0};   // written under mu_; read by any thread
};

}  // namespace weft::runtime
