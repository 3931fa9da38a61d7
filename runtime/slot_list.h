// The registry's sets of tasks and channels: a dense array of pointers with holes, each
// element keeping its own index (`regSlot`, 1-based, 0 when not in a list). Insertion
// and removal are O(1) amortized; walking the set reads consecutive pointers, so a
// collection can prefetch the elements some steps ahead of the one it traces (the
// linked list it replaced made that walk one dependent cache miss per element).
// Not thread-safe: its owner's lock guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft::runtime {

template <typename T>
class SlotList {
 public:
  void insert(T* x) {
    if (!free_.empty()) {
      x->regSlot = free_.back();
      free_.pop_back();
      slots_[x->regSlot - 1] = x;
    } else {
      slots_.push_back(x);
      x->regSlot = uint32_t(slots_.size());
    }
    ++size_;
  }
  void erase(T* x) {
    slots_[x->regSlot - 1] = nullptr;
    free_.push_back(x->regSlot);
    x->regSlot = 0;
    --size_;
    if (!held_ && slots_.size() > kCompactFloor && size_ * 4 < slots_.size()) compact();
  }
  // While held, no element changes its index (an incremental major's cursor walks the
  // slots: registry.cpp); a later erase compacts.
  void holdOrder(bool held) { held_ = held; }
  bool contains(const T* x) const { return x->regSlot != 0; }
  size_t size() const { return size_; }

  // Slot access for walks that prefetch ahead: at(i) is nullptr for a hole.
  size_t slotCount() const { return slots_.size(); }
  T* at(size_t i) const { return slots_[i]; }
  // Iteration in slot order, skipping holes.
  class Iterator {
   public:
    Iterator(T* const* at, T* const* end) : at_(at), end_(end) { skipHoles(); }
    T* operator*() const { return *at_; }
    Iterator& operator++() {
      ++at_;
      skipHoles();
      return *this;
    }
    bool operator!=(const Iterator& o) const { return at_ != o.at_; }

   private:
    void skipHoles() {
      while (at_ != end_ && !*at_) ++at_;
    }
    T* const* at_;
    T* const* end_;
  };
  Iterator begin() const { return Iterator(slots_.data(), slots_.data() + slots_.size()); }
  Iterator end() const { return Iterator(slots_.data() + slots_.size(), slots_.data() + slots_.size()); }
  // Empties the list; its elements, in slot order.
  std::vector<T*> takeAll() {
    std::vector<T*> out;
    out.reserve(size_);
    for (T* x : slots_) {
      if (!x) continue;
      x->regSlot = 0;
      out.push_back(x);
    }
    slots_.clear();
    free_.clear();
    size_ = 0;
    return out;
  }

 private:
  static constexpr size_t kCompactFloor = 1024;
  // Mostly holes: close them up, so a walk never reads many times more slots than
  // elements. Renumbers the elements it moves.
  void compact() {
    size_t kept = 0;
    for (T* x : slots_) {
      if (!x) continue;
      slots_[kept++] = x;
      x->regSlot = uint32_t(kept);
    }
    slots_.resize(kept);
    free_.clear();
  }

  std::vector<T*> slots_;
  std::vector<uint32_t> free_;  // 1-based indices of holes
  size_t size_ = 0;
  bool held_ = false;
};

}  // namespace weft::runtime
