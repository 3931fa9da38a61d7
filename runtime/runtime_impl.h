// The runtime's internals shared by its sources: the executor that runs Lua tasks on the
// scheduler's workers (runtime.cpp), the registry of roots (registry.cpp), waits and
// channels (wait.cpp, channel.cpp) and the `task` library (tasklib.cpp).
//
// Threads: `state`, `options`, the metatables and `scheduler` are set before the workers
// start and read-only afterwards (the metatables are updated by the collector, world
// stopped). The registry's sets are guarded by regMutex. Flags say their own orderings.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "gc/heap.h"
#include "gc/spin_lock.h"
#include "runtime/blocking_pool.h"
#include "runtime/slot_list.h"
#include "runtime/runtime.h"
#include "runtime/task.h"
#include "vm/api.h"

namespace weft::runtime {

// One per scheduler thread (a worker's first thread or a spare; runtime.cpp's
// thread-local tlsContext): that thread only, so on cache lines of its own (the threads'
// contexts are allocated one after another, and each writes its own at every dispatch).
struct alignas(64) WorkerContext {
  vm::ExecContext exec;
  gc::Mutator* mutator = nullptr;
  bool attached = false;
  uint64_t reportedStops = 0;  // the mutator's pauses already given to the worker's stats
  uint64_t reportedNanos = 0;
  uint8_t registryShard = 0;   // where this thread registers the tasks and channels it makes
};

// An incremental major's walk of a registry shard's tasks or channels (registry.cpp):
// where its slices are in the slots, and the entries they must trace again
// (LuaTask::retraceSlot): written since traced, or added meanwhile.
template <typename T>
struct CycleWalk {
  size_t cursor = 0;
  std::vector<T*> retrace;
};

class RuntimeImpl final : public sched::Executor, public gc::RootSource {
 public:
  RuntimeImpl(vm::State& state, const RuntimeOptions& options);
  ~RuntimeImpl() override;

  vm::State& state;
  RuntimeOptions options;
  std::unique_ptr<sched::Scheduler> scheduler;
  BlockingPool blockingPool;  // any thread (blocking_pool.h)
  LuaTask* mainTask = nullptr;  // reference held until destruction
  vm::Table* taskMeta = nullptr;     // root
  vm::Table* channelMeta = nullptr;  // root

  // Executor (worker threads).
  sched::RunOutcome runTask(sched::Worker& worker, sched::Task& task, int32_t& budget) override;
  Status onThreadStart() override;
  void onThreadStop() override;
  void onIdle(sched::Worker& worker) override;
  Status onBusy(sched::Worker& worker) override;
  void onAllBlocked() override;
  void onHostLaneFilled() override;
  // The host ran the tasks of its lane and the lane is empty: the slice a fill started is
  // over (the main context's budget goes back to unlimited).
  void endHostLaneSlice();
  bool mayPublishFromOutside() override;
  void onDiverged(const std::string& what) override;
  void detachForStep() override;
  Status attachAfterStep() override;

  // Registry (registry.cpp): every task and channel, traced as roots; an incremental
  // major traces them in its slices.
  void traceRoots(gc::Visitor& visitor) override;
  void startCycle(gc::Visitor& visitor) override;
  bool traceCycleSlice(gc::Visitor& visitor, size_t& budget) override;
  void finishCycle(gc::Visitor& visitor) override;
  void addTask(LuaTask* task);
  void removeTask(LuaTask* task);
  // Before a reference is written into `task`'s record (its results, the value a claimer
  // delivers, a case's send value): the record joins its shard's dirty list, the only
  // records a minor collection traces (docs/design/gc-v2.md: a parked task's record is
  // as clean as its stack). Any thread; a lock only on the first write of a cycle.
  void noteRecordWritten(LuaTask& task);
  // The same for a channel, before a reference goes into its buffer: a minor traces
  // only the buffers of dirty channels. Any thread; the caller may hold the channel's
  // lock (a shard's lock is taken after it, never before).
  void noteChannelWritten(Channel& ch);
  void addChannel(Channel* ch);
  void removeChannel(Channel* ch);
  std::string describeBlockedTasks();
  // Tasks still alive at the end, and panicked ones nobody awaited.
  void cancelAllTasks();
  void reportUnobservedErrors();
  // A panicked task nobody awaited was freed: its report waits for the end.
  void noteUnobservedError(uint64_t id, const std::string& traceback);
  // After the workers stopped: the tasks and channels left are orphaned (their handles
  // release them later, without the runtime), and those no handle holds are freed.
  void releaseLeftovers();

  // Waking a task whose wait was claimed: a blocking waiter's condition variable, or
  // the scheduler.
  // Wakes a task whose wait the caller claimed; `blocking` is WaitState::holdForWake's
  // answer from before the claim (its reference is released here).
  void wakeTask(LuaTask* task, bool blocking);
  // Fail closed (invariant 5): the first reason wins. closeAll("") stops without a
  // failure (os.exit): workers stop, blocking waiters wake, spawns are refused.
  void failClosed(const std::string& reason);
  void closeAll(const std::string& reason);
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  std::string closeReason() const;

  // Telemetry (telemetry.cpp).
  std::string statsReport(StatsFormat format) const;
  Status writeTrace(const std::string& path, std::string& error) const;

  // Creates a task for `fn` with `nargs` arguments taken from the top of `from`, and its
  // handle (pushed on `from`). nullptr on exhaustion.
  LuaTask* newTask(vm::CallContext& cx, uint32_t fnIndex, uint32_t nargs);
  // Called by the worker that finished `task` (or by the main thread for the main task):
  // wakes its awaiters.
  void completeTask(LuaTask* task, sched::TaskState outcome);

  // The State's hooks for waits on the operating system (vm/api.h enterOsWait) and for
  // blocking jobs (runBlockingMayGC).
  void installOsWaitHooks();
  // The State's hooks for the host lane (sched/host_lane.cpp): binding the thread of each
  // call into the main context, and flushing the lane.
  void installHostLaneHooks();
  // State::blockingSubmit: the running task's job goes to the blocking pool and the task
  // suspends (true), or the caller runs it (false: it cannot suspend here).
  bool submitBlockingJob(vm::CallContext& cx, const std::shared_ptr<vm::BlockingJob>& job);
  // Detaching the calling thread around a blocking wait and re-attaching after it.
  void detachCurrent();
  Status attachCurrent();
  // On a scheduler thread, around a blocking wait (detached): releases the worker to a
  // spare, and takes it back before attachCurrent. A failed handoff closes the runtime.
  Status enterBlockingCurrent(sched::Blocking kind);
  void leaveBlockingCurrent();

  // Deterministic mode: `self` (the main task, or a task waiting under a native frame)
  // reached a schedule point with its frames on this thread's stack; other tasks run
  // their steps on other threads (sched/deterministic.h) until the chooser picks it, a
  // candidate whenever `enabled()`. A deadlock or a divergence ends the process here
  // (after writing the recording); kFatal when the runtime closed.
  Status runInlineMayGC(LuaTask& self, const std::function<bool()>& enabled);
  // Seconds on the scheduler's clock (task.now): steady, or logical when deterministic.
  double nowSeconds() const;
  // Deterministic mode (deterministic.cpp in this directory): the State's hooks, the end
  // of the program (every task runs to its end on this thread), and the recording
  // (written once; an error is reported on stderr).
  void installDeterministicHooks();
  Status finishDeterministicMayGC();
  // Parallel steps: `task`'s step reached a gate on this thread; returns once it is
  // committed, having waited detached (kFatal: the runtime closed meanwhile).
  Status detGateMayGC(LuaTask& task);
  // Whether a dispatch of `task` starts with its cancellation: a request seen at the
  // start; in deterministic mode, one made before the task became ready (a later one
  // reaches it at a gate, as its step may already run ahead).
  bool cancelAtStart(const LuaTask& task) const;
  void writeRecording();

  // Cancels a task: the scheduler's request, and a claim of its current wait.
  bool cancelTask(LuaTask* task);
  // Deadlock detection for the main task's blocking waits: the probe is a no-op task
  // whose dispatch makes the workers park again, so onAllBlocked re-evaluates.
  void probeForDeadlock();
  [[noreturn]] void reportDeadlockAndExit();
  // At the prompt (State::atPrompt) a deadlock of the host thread's waiter (the main task,
  // or hostWaiter) ends its wait instead, with the report as the error (kAborted;
  // finishWaitMayGC raises mainAbortReason).
  void abortPromptWait(LuaTask& waiter);
  std::string mainAbortReason;  // main thread only
  // A task the host thread ran (sched/host_lane.cpp) that sleeps in a wait under a native
  // frame, holding the host thread and so the main task (wait.cpp: blockMayGC). Written
  // by the host thread, read by the deadlock check (seq_cst, as WaitState::setBlocked).
  std::atomic<LuaTask*> hostWaiter{nullptr};
  // The main task is suspended in a wait at the bottom of its embedder's call
  // (driveMainMayGC): written by the host thread, read by the deadlock check (seq_cst).
  std::atomic<bool> mainSuspended{false};
  // The main task's code resumed inside hostWaiter's wait (wait.cpp: runMainNestedMayGC)
  // and ended there: how it ended, for the embedder's call below. Host thread only.
  bool mainEndedNested = false;
  Status mainNestedStatus;
  // The exec context the embedder's call into the main task was made in, and the host
  // binding it replaced (host thread).
  vm::ExecContext* mainExec = nullptr;
  sched::HostBinding outerHost;
  // Whether the main task's code can run on the host thread now (its suspended wait ended).
  bool mainResumable() const;

  // Starts the scheduler's threads at the first use that needs them (a spawn, the
  // deadlock probe, a timer), so a script without tasks starts none (start-up cost,
  // docs/design/scheduler.md). Any thread that runs Lua. A failure closes the runtime
  // with "worker registration: ..." (invariant 5) and is returned to every later call.
  Status ensureWorkers();

  // Ports (runtime/port.h): every port made, detached when the runtime ends. Any
  // thread; portsMutex_.
  void addPort(const std::shared_ptr<class Port>& port);
  void detachPorts();
  // Open ports: while one is, a post may still wake a task, so nothing is a deadlock.
  // Relaxed: read when every worker is idle, after the parking that orders it.
  std::atomic<int> openPorts{0};

  // Main-task blocking waits consult these (deadlock detection, shutdown).
  std::atomic<bool> deadlocked{false};
  std::atomic<int> aliveTasks{0};   // spawned tasks not yet terminal
  std::mutex finishMutex;           // with finishCv: the main thread waits for aliveTasks == 0
  std::condition_variable finishCv;

 private:
  std::mutex portsMutex_;
  std::vector<std::weak_ptr<class Port>> ports_;  // portsMutex_
  std::mutex workersMutex_;  // serializes the first start; startStatus_ under it
  Status startStatus_;
  // Set (release) under workersMutex_ once the start was tried; read (acquire) first, so
  // a caller that sees it also sees startStatus_ and the started threads.
  std::atomic<bool> workersTried_{false};
  sched::RunOutcome dispatchMayGC(WorkerContext& wc, LuaTask& task, int32_t& budget);
  // Serves a collection requested while no task runs on wc's thread; false (the runtime
  // closed) when the collector failed.
  bool servePendingCollectionMayGC(WorkerContext& wc);
  // A dispatch on the main task's thread (the host lane's: sched/host_lane.cpp), bound to
  // nestedContext_ for its duration; nested ones restore what they found.
  sched::RunOutcome dispatchNestedMayGC(LuaTask& task, int32_t& budget);
  // The main task's thread's context for the tasks it runs: the State's main mutator,
  // attached as long as the main context is. Created at the first nested dispatch.
  std::unique_ptr<WorkerContext> nestedContext_;
  vm::State::DeterministicHooks detHooks_;
  bool nativeWaitsOpen();
  sched::RunOutcome finishDispatchMayGC(LuaTask& task, Status st, int32_t& budget);
  Status startTaskMayGC(LuaTask& task);
  Status resumeTaskMayGC(LuaTask& task);
  sched::RunOutcome cancelTaskMayGC(LuaTask& task);

  // The registry, sharded by the thread that registers (registry.cpp): a worker that
  // spawns and finishes its own tasks takes a lock and touches an array no other worker
  // does. Code that walks it takes one shard's lock at a time.
  struct RegistryShard {
    alignas(64) gc::SpinLock mutex;  // a few instructions per hold (gc/spin_lock.h)
    SlotList<LuaTask> tasks;     // mutex
    SlotList<Channel> channels;  // mutex
    // mutex: the records and the channels written since the last collection
    // (LuaTask::gcDirty, Channel::gcDirty).
    std::vector<LuaTask*> dirty;
    std::vector<Channel*> dirtyChannels;
    // mutex: an incremental major's walk (registry.cpp "Incremental majors").
    uint16_t cycle = 0;  // the current or last cycle's number (never 0)
    bool cycleActive = false;
    CycleWalk<LuaTask> taskWalk;
    CycleWalk<Channel> channelWalk;
  };
  static constexpr size_t kRegistryShards = 8;
  RegistryShard& shardForNew();
  void traceShard(gc::Visitor& visitor, RegistryShard& shard);
  // Every registered task, retained, gathered one shard at a time (release them after).
  std::vector<LuaTask*> retainAllTasks();
  std::array<RegistryShard, kRegistryShards> shards_;
  std::atomic<uint32_t> nextShard_{0};   // round-robin for new worker threads
  std::atomic<bool> closed_{false};       // release/acquire: the reason is written first
  std::mutex reportMutex_;
  std::vector<std::pair<uint64_t, std::string>> unobserved_;  // reportMutex_
  mutable std::mutex reasonMutex_;
  std::string reason_;                    // reasonMutex_
};

// The registry shard of the calling thread: its worker context's, or 0 (the main thread).
uint8_t currentRegistryShard();

// The runtime of a State (set by Runtime::start; one runtime per State).
inline RuntimeImpl* runtimeOf(vm::State& state) { return static_cast<RuntimeImpl*>(state.runtime); }

// Waits (wait.cpp). waitMayGC is the last step of a blocking native: the wait's Waiters
// are registered; it arms the timeout (seconds, < 0: none) and suspends the task (the
// native returns kYield) or blocks the OS thread; blocking, it also finishes the wait.
vm::NativeResult waitMayGC(vm::CallContext& cx, LuaTask& self, double timeout);
// State::driveMainMayGC (the host lane's hook): the main task suspended in a wait at
// the bottom of its embedder's call on `t`, its thread: until that call's code ends,
// waits (running the host lane meanwhile) and resumes it, as a worker resumes a task.
Status driveMainMayGC(vm::State& S, vm::ThreadData* t);
// Step 4 of the protocol: removes the wait's Waiters, then pushes the operation's results
// on `t` (count in nresults) or returns kRuntimeError with the error value in `err`.
Status finishWaitMayGC(vm::State& S, vm::ThreadData* t, LuaTask& self, uint32_t& nresults, vm::Value& err);
// Whether a native running on `t` can suspend its task (the bottom of a task's own thread
// on a worker or in a host-lane dispatch, nothing native below); otherwise it blocks its
// OS thread.
bool canSuspend(vm::ThreadData* t);
// Whether a wait begun on `t` can suspend: canSuspend, or the main task's chain at the
// bottom of a call from its embedder on the host thread (no native frame but that
// call's; driveMainMayGC resumes it).
bool canSuspendWait(vm::ThreadData* t);
// await's outcome once `target` is done: its results pushed on `t`, or its error in `err`.
Status awaitResults(vm::State& S, vm::ThreadData* t, LuaTask& target, uint32_t& n, vm::Value& err);
// "chunk:line: message" as a string value raised at the native's caller.
vm::Value positionedError(vm::State& S, vm::ThreadData* t, const char* message);

// Channel operations (channel.cpp), each under the channel's lock. Without `self` they
// only try (kDone or kWouldBlock). With `self`, whose wait has begun, a ready case is
// performed only by claiming that wait first (kDone, or kLost when another case or a
// timer claimed it), and a case that is not ready registers a Waiter (kRegistered).
// kNoMemory: a buffered send without `self` could not grow the buffer.
enum class OpResult : uint8_t { kDone, kWouldBlock, kRegistered, kLost, kNoMemory };
// On a closed channel: kDone with `closed` set (the caller raises "send on closed channel").
OpResult channelSend(Channel& ch, const vm::Value& v, bool& closed, LuaTask* self = nullptr, int caseIndex = 0);
// ok is false when the channel is closed and drained.
bool opLikelyWaits(const Channel& ch, bool isSend);
OpResult channelRecv(Channel& ch, vm::Value& out, bool& ok, LuaTask* self = nullptr, int caseIndex = 0);
// Closes; false if it was already closed. Wakes every waiter.
bool channelClose(Channel& ch);

// The `task` library (tasklib.cpp).
Status openTaskLib(RuntimeImpl& rt);

}  // namespace weft::runtime
