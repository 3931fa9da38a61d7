// Fixed logarithmic histograms of durations (telemetry: ready-to-run delay,
// timer lateness; docs/design/telemetry.md).
//
// Protocol: a LogHistogram has one writer (a worker's owner, or the timer
// thread), which updates its counters with relaxed load + store (no
// read-modify-write is needed with one writer); any thread may take a snapshot
// at any time (relaxed loads: a snapshot is a statistic, not a synchronisation
// point, and may be a few records behind or mix two records' fields).
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

namespace weft::runtime {

// Bucket i counts durations below kHistogramBound(i) and at or above the
// previous bound: bucket 0 is [0, 256 ns), bucket i is [2^(i+7), 2^(i+8)) ns,
// and the last one has no upper bound (17 s and more). Powers of two keep the
// bucket index one bit count.
constexpr unsigned kHistogramBuckets = 28;
constexpr unsigned kHistogramFirstBit = 8;  // bucket 0 ends at 2^8 ns

// The exclusive upper bound of bucket i in nanoseconds; 0 for the last
// (unbounded) one.
constexpr uint64_t histogramBound(unsigned i) {
  return i + 1 < kHistogramBuckets ? uint64_t(1) << (i + kHistogramFirstBit) : 0;
}

constexpr unsigned histogramBucket(uint64_t nanos) {
  unsigned width = unsigned(std::bit_width(nanos));
  if (width <= kHistogramFirstBit) return 0;
  unsigned i = width - kHistogramFirstBit;
  return i < kHistogramBuckets ? i : kHistogramBuckets - 1;
}

struct HistogramSnapshot {
  std::array<uint64_t, kHistogramBuckets> counts{};
  uint64_t count = 0;
  uint64_t sumNanos = 0;
  uint64_t maxNanos = 0;

  void merge(const HistogramSnapshot& other) {
    for (unsigned i = 0; i < kHistogramBuckets; ++i) counts[i] += other.counts[i];
    count += other.count;
    sumNanos += other.sumNanos;
    if (other.maxNanos > maxNanos) maxNanos = other.maxNanos;
  }
  // An upper estimate of quantile q in [0, 1]: the bound of the bucket that
  // holds it, never above the largest value seen. 0 when empty.
  uint64_t quantileNanos(double q) const {
    uint64_t total = 0;
    for (uint64_t c : counts) total += c;
    if (total == 0) return 0;
    uint64_t rank = uint64_t(q * double(total));
    if (rank >= total) rank = total - 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < kHistogramBuckets; ++i) {
      seen += counts[i];
      if (seen > rank) {
        uint64_t bound = histogramBound(i);
        return bound != 0 && bound < maxNanos ? bound : maxNanos;
      }
    }
    return maxNanos;
  }
};

class LogHistogram {
 public:
  // The single writer's record.
  void record(uint64_t nanos) {
    bump(counts_[histogramBucket(nanos)], 1);
    bump(count_, 1);
    bump(sum_, nanos);
    if (nanos > max_.load(std::memory_order_relaxed)) max_.store(nanos, std::memory_order_relaxed);
  }
  HistogramSnapshot snapshot() const {
    HistogramSnapshot s;
    for (unsigned i = 0; i < kHistogramBuckets; ++i) s.counts[i] = counts_[i].load(std::memory_order_relaxed);
    s.count = count_.load(std::memory_order_relaxed);
    s.sumNanos = sum_.load(std::memory_order_relaxed);
    s.maxNanos = max_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  static void bump(std::atomic<uint64_t>& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::array<std::atomic<uint64_t>, kHistogramBuckets> counts_{};
  std::atomic<uint64_t> count_{0}, sum_{0}, max_{0};
};

}  // namespace weft::runtime
