// The Weft runtime: Lua tasks on the work-stealing scheduler (runtime/sched/), whose
// workers are the collector's mutators. Created by the CLI (or a host) on a State; it
// opens the `task` library and runs every spawned task on its workers. The thread that
// created it runs the main chunk: the main task, which blocks its OS thread (detached
// from the collector) when it waits. In deterministic mode (RuntimeOptions::deterministic)
// that thread runs every task, one step at a time, while the main task waits or at its
// schedule points, still attached (docs/design/deterministic.md).
//
// Protocol with the collector (docs/design/tasks.md):
//  - The scheduler's threads start at the first spawn, deadlock probe or timer
//    (RuntimeImpl::ensureWorkers), so a script without tasks starts no thread.
//  - Each worker registers a gc::Mutator at start and binds a vm::ExecContext to its
//    thread; it is attached only while it dispatches tasks (Executor::onBusy/onIdle) and
//    detached around blocking waits. A failed attach or registration closes the runtime.
//  - Every task, running or not, is reachable from the Registry (a gc::RootSource): its
//    thread (whose frames the collector traces and updates in place), its handle, the
//    values of its waits; so are channel buffers. Nothing off-heap keeps a heap pointer
//    that the Registry does not trace.
//  - Fail closed: a collector failure (kFatal), a failed transition or a fault injected
//    through WEFT_FAULT ("rt.publish", "rt.restore", "rt.attach") closes the runtime:
//    the scheduler stops, the heap is closed, every waiter is woken, later spawns fail,
//    and the CLI exits with status 3.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/sched/scheduler.h"
#include "vm/state.h"
#include "weft/status.h"

namespace weft::runtime {

// Renderings of the telemetry (docs/design/telemetry.md).
enum class StatsFormat : uint8_t { kText, kJson, kPrometheus };

struct RuntimeOptions {
  unsigned workers = 0;       // 0: WEFT_WORKERS, else the number of processors
  uint64_t seed = 0;          // the scheduler's chooser; 0: from the clock
  int32_t budget = 10000;     // safepoints per dispatch before a task is requeued
  bool trace = false;         // record the scheduler trace (Runtime::writeTrace)
  uint32_t blockingThreads = 64;  // the blocking pool's most threads (docs/tasks.md)
  // Deterministic mode (docs/design/deterministic.md): every task runs on the thread
  // that runs the main task, one step at a time, by the seeded chooser's decisions.
  DeterministicOptions deterministic;
};

class RuntimeImpl;

class Runtime {
 public:
  // Opens the `task` library in `state`; the workers start at the first use that needs
  // them (their registration failing then closes the runtime). The state must outlive
  // the runtime; the calling thread becomes the main task's thread.
  static Expected<std::unique_ptr<Runtime>> start(vm::State& state, const RuntimeOptions& options);
  ~Runtime();

  // The end of the program (the main chunk returned or failed): cancels every task still
  // alive, waits for them, reports errors nobody awaited (with their tracebacks) on
  // stderr, and stops the workers. kFatal if the runtime was closed by a failure.
  Status finishMayGC();
  // Stops the workers (os.exit): no task runs afterwards. false when called on a worker
  // thread, which cannot wait for itself: the state must then not be closed.
  bool stopNow();

  // Set when a collector transition failed: the first failure's message.
  bool failed() const;
  std::string failureReason() const;

  // The telemetry document (scheduler and collector counters, histograms) as --stats
  // prints it: text, JSON (schema in docs/tasks.md) or Prometheus text exposition.
  std::string statsReport(StatsFormat format = StatsFormat::kText) const;
  // With RuntimeOptions::trace: writes the scheduler's trace so far to `path` as Chrome
  // trace-event JSON (each worker a track, each dispatch a span).
  Expected<void> writeTrace(const std::string& path) const;

  RuntimeImpl& impl() { return *impl_; }

 private:
  explicit Runtime(std::unique_ptr<RuntimeImpl> impl);
  std::unique_ptr<RuntimeImpl> impl_;
};

}  // namespace weft::runtime
