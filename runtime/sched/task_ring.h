// A double-ended list of tasks in one power-of-two ring: deterministic mode's candidates
// (DetCoordinator::ready_). Its decisions index the list on every step and take mostly
// from the back, now and then from the middle, and a task that yields joins at the
// front: every one of these is a mask and a short move here, where std::deque's
// segmented iterators cost a division per index and a node allocation at every block
// boundary the list's end crosses. Not thread-safe: its owner's lock guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace weft::runtime {

class Task;

class TaskRing {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Task* operator[](size_t i) const { return slots_[(head_ + i) & mask()]; }

  void pushBack(Task* t) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & mask()] = t;
    size_++;
  }
  void pushFront(Task* t) {
    if (size_ == slots_.size()) grow();
    head_ = (head_ - 1) & mask();
    slots_[head_] = t;
    size_++;
  }
  // Removes the task at `i`; the others keep their order. Moves the shorter side.
  void erase(size_t i) {
    if (i < size_ / 2) {
      for (size_t j = i; j > 0; j--) at(j) = at(j - 1);
      head_ = (head_ + 1) & mask();
    } else {
      for (size_t j = i; j + 1 < size_; j++) at(j) = at(j + 1);
    }
    size_--;
  }
  // Index of `t`, searched from the back (the newest); size() if absent.
  size_t find(const Task* t) const {
    for (size_t i = size_; i-- > 0;) {
      if ((*this)[i] == t) return i;
    }
    return size_;
  }
  // Empties the ring into `out`, oldest first.
  void drainTo(std::vector<Task*>& out) {
    for (size_t i = 0; i < size_; i++) out.push_back((*this)[i]);
    head_ = 0;
    size_ = 0;
  }

 private:
  size_t mask() const { return slots_.size() - 1; }
  Task*& at(size_t i) { return slots_[(head_ + i) & mask()]; }
  void grow() {
    std::vector<Task*> bigger(slots_.empty() ? 64 : slots_.size() * 2);
    for (size_t i = 0; i < size_; i++) bigger[i] = (*this)[i];
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<Task*> slots_;  // a power of two long (or empty)
  size_t head_ = 0;           // the oldest's slot
  size_t size_ = 0;
};

}  // namespace weft::runtime
