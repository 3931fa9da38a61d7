// A doubly linked list threaded through its elements' own `regPrev`/`regNext` fields:
// insertion and removal in O(1) without allocating, so registering a task costs two
// pointer writes under the registry lock. Not thread-safe: its owner's lock guards it.
#pragma once

#include <cstddef>
#include <vector>

namespace weft::runtime {

template <typename T>
class IntrusiveList {
 public:
  class Iterator {
   public:
    explicit Iterator(T* at) : at_(at) {}
    T* operator*() const { return at_; }
    Iterator& operator++() {
      at_ = at_->regNext;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return at_ != o.at_; }

   private:
    T* at_;
  };

  void insert(T* x) {
    x->regPrev = nullptr;
    x->regNext = head_;
    if (head_) head_->regPrev = x;
    head_ = x;
    ++size_;
  }
  void erase(T* x) {
    if (x->regPrev) {
      x->regPrev->regNext = x->regNext;
    } else {
      head_ = x->regNext;
    }
    if (x->regNext) x->regNext->regPrev = x->regPrev;
    x->regPrev = x->regNext = nullptr;
    --size_;
  }
  bool contains(const T* x) const { return x->regPrev || head_ == x; }
  // Empties the list; its elements, unlinked, in list order.
  std::vector<T*> takeAll() {
    std::vector<T*> out;
    out.reserve(size_);
    for (T* x = head_; x;) {
      T* next = x->regNext;
      x->regPrev = x->regNext = nullptr;
      out.push_back(x);
      x = next;
    }
    head_ = nullptr;
    size_ = 0;
    return out;
  }
  size_t size() const { return size_; }
  Iterator begin() const { return Iterator(head_); }
  Iterator end() const { return Iterator(nullptr); }

 private:
  T* head_ = nullptr;
  size_t size_ = 0;
};

}  // namespace weft::runtime
