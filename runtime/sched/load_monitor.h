// A worker's load monitor: whether its spawns should leave it for the injection queue
// (design: docs/design/scheduler.md, "Load balancing").
//
// Protocol:
//  - Owner only, like the rest of a worker's policy state: the holder calls check() at
//    every kInjectionInterval-th dispatch with its own queue depth, the lightest
//    sibling's (relaxed snapshots of the siblings' queues: a stale depth delays or
//    prolongs a retarget by one check, which costs nothing but balance) and its count of
//    spent budgets so far, and reset() when it runs out of work (an empty worker is not
//    overloaded).
//  - It retargets after kChecks consecutive checks found the worker overloaded: at least
//    kMinDepth queued, more than kRatio times the lightest sibling, and at least
//    kMinSpentSlices of the dispatches since the previous check spent a whole slice. One
//    check that does not find it so ends the retarget.
//  - Why the slices: a deep queue of tasks that end or wait within their slice (a
//    fork-join tree, skynet) drains in microseconds, and a sibling that runs dry steals
//    from it; sending such spawns away only breaks their depth-first order (skynet took
//    0.85-1.6 s instead of 0.6-0.9 s when depth alone decided). Tasks that use whole
//    slices keep their siblings' queues from running dry, so stealing never comes, and a
//    queue of them waits a slice per task ahead: that is the imbalance worth a lock per
//    spawn.
#pragma once

#include <cstdint>

namespace weft::runtime {

class LoadMonitor {
 public:
  // A task queued behind fewer CPU-bound ones waits at most this many slices (2-3 ms
  // at 10,000 safepoints), which a lock per spawn would not improve by much.
  static constexpr uint32_t kMinDepth = 16;
  static constexpr uint32_t kRatio = 4;
  // Two checks (a check interval apart) so that a burst of spawns that the worker's next
  // dispatches run at once does not send later spawns away.
  static constexpr uint32_t kChecks = 2;
  // A quarter of a check interval's dispatches (Scheduler::kInjectionInterval).
  static constexpr uint64_t kMinSpentSlices = 16;

  void check(uint32_t own, uint32_t lightest, uint64_t budgetsSpent) {
    bool cpuBound = budgetsSpent - spentAtLastCheck_ >= kMinSpentSlices;
    spentAtLastCheck_ = budgetsSpent;
    bool overloaded = cpuBound && own >= kMinDepth && own > uint64_t{kRatio} * lightest;
    overloadedChecks_ = overloaded ? overloadedChecks_ + 1 : 0;
    retargeting_ = overloadedChecks_ >= kChecks;
  }
  void reset() {
    overloadedChecks_ = 0;
    retargeting_ = false;
  }
  bool retargeting() const { return retargeting_; }

 private:
  uint64_t spentAtLastCheck_ = 0;
  uint32_t overloadedChecks_ = 0;
  bool retargeting_ = false;
};

}  // namespace weft::runtime
