// Deterministic mode on the runtime's side (docs/design/deterministic.md): the State's
// hooks (logical time, the main context's schedule points, per-task random seeds, the
// gates of parallel steps), the
// end of a deterministic program, and its recording. The coordinator itself is the
// scheduler's (runtime/sched/deterministic.h).
#include <cstdio>

#include "runtime/runtime_impl.h"
#include "runtime/sched/schedule_file.h"

namespace weft::runtime {
namespace {

uint64_t logicalNanos(vm::State& S) {
  auto since = runtimeOf(S)->scheduler->now().time_since_epoch();
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(since).count());
}

// The main context spent its budget (a slice of work units, which the logical clock is
// charged) or finished an ordered operation.
Status schedulePointMayGC(vm::State& S, vm::ThreadData*) {
  RuntimeImpl& rt = *runtimeOf(S);
  rt.scheduler->chargeInline(rt.options.budget);
  return rt.runInlineMayGC(*rt.mainTask, [] { return true; });
}

// The run's seed mixed with the task's id (counted from the run's first task): each task
// draws its own sequence, the same in every run with the same seed.
uint64_t randomSeed(vm::State& S, vm::ThreadData* root) {
  RuntimeImpl& rt = *runtimeOf(S);
  LuaTask* task = root->task ? static_cast<LuaTask*>(root->task) : rt.mainTask;
  uint64_t runId = task ? task->id() - rt.options.deterministic.firstId + 1 : 0;
  return rt.options.deterministic.seed ^ decisionMemberHash(runId);
}

// A world effect of the code on `t` (vm/api.h worldEffect): the task's step waits for
// its commit. The main task's steps are committed while they run.
Status gateMayGC(vm::State& S, vm::ThreadData* t) {
  RuntimeImpl& rt = *runtimeOf(S);
  LuaTask* task = currentTask(rt, t);
  return task->isMain ? Status::ok() : rt.detGateMayGC(*task);
}

// A task's step ends at a loop safepoint (vm/state.h continueStep). A cancellation
// requested meanwhile ends the step the usual way (finishDispatchMayGC), as does a
// decision for another task.
bool continueStep(vm::State& S, vm::ThreadData* t) {
  RuntimeImpl& rt = *runtimeOf(S);
  LuaTask* task = currentTask(rt, t);
  if (task->isMain || task->cancelRequested() || !rt.scheduler->continueStep(task, t->budget)) return false;
  // What the next dispatch would do first (dispatchMayGC), and the safepoint its resumed
  // frame passes (the interpreter's startFrame): the steps end where they did.
  t->budget = rt.options.budget - 1;
  task->stepEnded = false;
  return true;
}

}  // namespace

Status RuntimeImpl::detGateMayGC(LuaTask& task) {
  if (scheduler->passGate(&task)) return Status::ok();
  detachCurrent();
  bool committed = scheduler->waitCommitted(&task);
  Status st = attachCurrent();
  if (!st.isOk()) return st;
  return committed ? Status::ok() : Status(StatusCode::kFatal);
}

void RuntimeImpl::detachForStep() { detachCurrent(); }

Status RuntimeImpl::attachAfterStep() { return attachCurrent(); }

void RuntimeImpl::installDeterministicHooks() {
  detHooks_.slice = options.budget;
  detHooks_.nowNanos = logicalNanos;
  detHooks_.schedulePointMayGC = schedulePointMayGC;
  detHooks_.randomSeed = randomSeed;
  detHooks_.continueStep = continueStep;
  if (scheduler->workerCount() > 1) detHooks_.gateMayGC = gateMayGC;
  state.deterministic = &detHooks_;
  // The main context's budget counts down from here, as a task's does.
  state.mainThread->data->budget = options.budget;
}

Status RuntimeImpl::finishDeterministicMayGC() {
  // Every task was cancelled: each ends at its next step, run here.
  Status st = closed() ? Status(StatusCode::kFatal) : runInlineMayGC(*mainTask, [this] {
    return aliveTasks.load(std::memory_order_acquire) == 0;
  });
  writeRecording();
  scheduler->shutdown();
  blockingPool.stop();
  reportUnobservedErrors();
  if (closed() || !st.isOk()) return Status(StatusCode::kFatal);
  return Status::ok();
}

void RuntimeImpl::writeRecording() {
  if (!scheduler) return;
  std::string error = scheduler->finishRecording();
  if (!error.empty()) std::fprintf(stderr, "weft: %s\n", error.c_str());
}

}  // namespace weft::runtime
