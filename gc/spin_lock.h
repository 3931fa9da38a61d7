// A spinlock for critical sections of a few dozen instructions that threads of every
// layer may contend on (string table shards, the task registry's shards).
//
// Protocol: `locked_` is taken with an exchange (acquire) and given back with a store
// (release), so everything written under the lock is seen by the next holder. A waiter
// spins on plain loads (no cache-line ping-pong) with a pause, and yields the processor
// after 64 spins, so a holder that was descheduled gets to run. Why not std::mutex: a
// contended mutex sleeps in the kernel and its unlock wakes the sleeper with another
// system call; for sections this short the two calls cost far more than the wait
// (spawn and await on two workers: 460 -> 327 ns per task with the registry's shards
// on this lock).
#pragma once

#include <atomic>
#include <thread>

namespace weft::gc {

// A spinning thread's hint to the core (and to its sibling hyperthread).
inline void cpuPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class SpinLock {
 public:
  void lock() {
    for (int spins = 0;; ++spins) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins > 64) std::this_thread::yield();
        else cpuPause();
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace weft::gc
