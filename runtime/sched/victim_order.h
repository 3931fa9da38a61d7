// Seeded pseudo-random numbers and the order in which a worker visits its siblings.
//
// Protocol: both are plain data owned by one thread (a worker's VictimOrder by that
// worker; the scheduler's chooser Rng behind the scheduler's mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace weft::runtime {

// SplitMix64: tiny, full-period over 2^64, good enough to spread victims and choices.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0: rejects the short top range so that no value is favoured.
  uint64_t below(uint64_t n) {
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do v = next();
    while (v >= limit);
    return v % n;
  }

 private:
  uint64_t state_;
};

// Each search visits every sibling exactly once: tier by tier (topology.h: same node,
// same package, the rest), each tier in a fresh seeded permutation.
class VictimOrder {
 public:
  VictimOrder(const std::vector<std::vector<unsigned>>& tiers, uint64_t seed) : rng_(seed) { retier(tiers); }
  // The same siblings in new tiers (the scheduler's topology, read when it starts).
  void retier(const std::vector<std::vector<unsigned>>& tiers) {
    order_.clear();
    tierEnds_.clear();
    for (const auto& tier : tiers) {
      order_.insert(order_.end(), tier.begin(), tier.end());
      tierEnds_.push_back(order_.size());
    }
  }
  // A new permutation within each tier (Fisher-Yates over the previous one).
  const std::vector<unsigned>& next() {
    size_t begin = 0;
    for (size_t end : tierEnds_) {
      for (size_t i = end - begin; i > 1; --i) {
        size_t j = rng_.below(i);
        std::swap(order_[begin + i - 1], order_[begin + j]);
      }
      begin = end;
    }
    return order_;
  }

 private:
  Rng rng_;
  std::vector<unsigned> order_;
  std::vector<size_t> tierEnds_;  // where each tier ends in order_
};

}  // namespace weft::runtime
