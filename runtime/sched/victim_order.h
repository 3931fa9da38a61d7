// Seeded pseudo-random numbers and the order in which a worker visits its siblings.
//
// Protocol: both are plain data owned by one thread (a worker's VictimOrder by that
// worker; the scheduler's chooser Rng behind the scheduler's mutex).
#pragma once

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

// Each search visits every sibling exactly once, in a fresh seeded permutation.
class VictimOrder {
 public:
  VictimOrder(unsigned self, unsigned workers, uint64_t seed) : rng_(seed) {
    for (unsigned w = 0; w < workers; ++w)
      if (w != self) order_.push_back(w);
  }
  // A new permutation of the siblings (Fisher-Yates over the previous one).
  const std::vector<unsigned>& next() {
    for (size_t i = order_.size(); i > 1; --i) {
      size_t j = rng_.below(i);
      std::swap(order_[i - 1], order_[j]);
    }
    return order_;
  }

 private:
  Rng rng_;
  std::vector<unsigned> order_;
};

}  // namespace weft::runtime
