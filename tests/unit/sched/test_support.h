// Helpers for the scheduler tests: a task whose dispatch runs a lambda, an executor that
// counts its callbacks and the stress seed. Waits use waitUntil (tests/unit/wait_until.h).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/sched/internals.h"
#include "runtime/sched/scheduler.h"
#include "tests/unit/wait_until.h"

namespace weft::runtime::test {

using namespace std::chrono_literals;
using weft::test::waitUntil;

struct FnTask : Task {
  using Body = std::function<RunOutcome(Worker&, FnTask&)>;
  explicit FnTask(Body b = {}, std::atomic<int>* destroyedCounter = nullptr)
      : body(std::move(b)), destroyed(destroyedCounter) {}
  ~FnTask() override {
    if (destroyed) destroyed->fetch_add(1);
  }
  Body body;
  std::atomic<int> dispatches{0};
  int32_t cost = 0;              // work units each dispatch spends
  std::vector<int32_t> budgets;  // the budget each dispatch was given (one at a time)
  std::atomic<int>* destroyed;
};

// The creator's reference, released at scope end.
struct TaskRef {
  explicit TaskRef(FnTask* t) : task(t) {}
  TaskRef(TaskRef&& o) noexcept : task(o.task) { o.task = nullptr; }
  TaskRef(const TaskRef&) = delete;
  ~TaskRef() {
    if (task) task->release();
  }
  FnTask* operator->() const { return task; }
  FnTask* get() const { return task; }
  FnTask* task;
};

inline TaskRef makeTask(FnTask::Body body = {}, std::atomic<int>* destroyed = nullptr) {
  return TaskRef(new FnTask(std::move(body), destroyed));
}

class TestExecutor : public Executor {
 public:
  RunOutcome runTask(Worker& worker, Task& task, int32_t& budget) override {
    auto& t = static_cast<FnTask&>(task);
    t.dispatches.fetch_add(1);
    t.budgets.push_back(budget);
    budget = std::max(0, budget - t.cost);
    return t.body ? t.body(worker, t) : RunOutcome::kCompleted;
  }
  Status onThreadStart() override {
    int n = starts.fetch_add(1) + 1;
    bool fail = failStart || (failStartFrom > 0 && n >= failStartFrom);
    return fail ? Status(StatusCode::kFatal) : Status::ok();
  }
  void onThreadStop() override { stops.fetch_add(1); }
  void onIdle(Worker&) override { idles.fetch_add(1); }
  Status onBusy(Worker&) override {
    busies.fetch_add(1);
    return Status::ok();
  }
  void onAllBlocked() override {
    allBlocked.fetch_add(1);
    if (onAllBlockedHook) onAllBlockedHook();
  }
  void onHostLaneFilled() override { laneFills.fetch_add(1); }

  bool failStart = false;
  int failStartFrom = 0;  // > 0: the thread starts from this one on fail (spares)
  std::function<void()> onAllBlockedHook;
  std::atomic<int> starts{0}, stops{0}, idles{0}, busies{0}, allBlocked{0}, laneFills{0};
};

inline unsigned sleepers(Scheduler& s) { return SchedulerInternals::of(s).idle.sleeperCount(); }

inline bool allParked(Scheduler& s) { return sleepers(s) == s.workerCount(); }

// The stress seed: fixed by default, WEFT_STRESS_SEED overrides it.
inline uint64_t stressSeed() {
  const char* env = std::getenv("WEFT_STRESS_SEED");
  return env ? std::strtoull(env, nullptr, 0) : 0x5eed1234ull;
}

inline std::string seedNote(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (rerun with WEFT_STRESS_SEED=" + std::to_string(seed) + ")";
}

}  // namespace weft::runtime::test
