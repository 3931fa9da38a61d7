// Lua tasks, channels and the waits between them (the runtime's internals; the CLI uses
// runtime/runtime.h). Design: docs/design/tasks.md.
//
// Every blocking operation is a wait, whose protocol and state are one type, WaitState
// (runtime/wait_state.h): a task's `wait`.
//
// Heap references held here (thread, handle, the wait's, channel buffers) are roots:
// the Registry traces them while the world is stopped. They are written only by attached
// threads (so never during a collection), under the owning lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gc/spin_lock.h"
#include "runtime/sched/scheduler.h"
#include "runtime/wait_state.h"
#include "vm/api.h"
#include "vm/thread.h"

namespace weft::runtime {

class RuntimeImpl;
struct LuaTask;
struct Channel;

// A claimed task to wake once the claimer's locks are released (RuntimeImpl::wakeTask).
struct Wake {
  LuaTask* task = nullptr;
  bool blocking = false;  // its wait blocks a thread; then WaitState::holdForWake retained it
};

// The waiters of one direction of a channel, oldest first: a doubly linked list threaded
// through the Waiters themselves, so queueing, dequeueing and removing one from the
// middle allocate nothing. The channel's lock guards it.
class WaiterQueue {
 public:
  bool empty() const { return head_ == nullptr; }
  Waiter* front() const { return head_; }
  void pushBack(Waiter* w);
  void pushFront(Waiter* w);
  void remove(Waiter* w);  // w must be queued here
  // Without the lock: whether the queue held waiters a moment ago. Only a hint for
  // choosing a path (channel.cpp: opLikelyWaits); relaxed, as no decision rests on it.
  bool mayHaveWaiters() const { return size_.load(std::memory_order_relaxed) != 0; }

 private:
  Waiter* head_ = nullptr;
  Waiter* tail_ = nullptr;
  std::atomic<uint32_t> size_{0};  // written under the channel's lock
};

// A channel's buffered values in arrival order: a ring that grows by doubling up to the
// channel's capacity, so an unbuffered or idle channel holds no buffer at all.
class ValueRing {
 public:
  uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const vm::Value& front() const { return slots_[head_]; }
  bool reserveOne();                  // room for one more; false when memory is exhausted
  void pushBack(const vm::Value& v);  // after reserveOne
  void popFront();
  template <typename F>
  void forEach(F&& f) {
    for (uint32_t i = 0; i < count_; i++) f(slots_[(head_ + i) & (uint32_t(slots_.size()) - 1)]);
  }

 private:
  std::vector<vm::Value> slots_;  // a power of two in size
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

// What few tasks need, kept out of LuaTask (a suspended task's memory, docs/design/tasks.md)
// and made by the first that writes it (LuaTask::makeAside).
struct TaskAside {
  // The error of kPanicked (a root: with `done`, under doneLock) and the traceback the
  // message handler recorded for it.
  vm::Value error = vm::Value::nil();
  std::string traceback;
  // kBlocking: the job on the blocking pool (blocking_pool.h), kept until the task's
  // next job or its end, because the native's continuation reads it after the wait.
  std::shared_ptr<vm::BlockingJob> blockingJob;
};

struct LuaTask final : sched::Task {
  LuaTask(RuntimeImpl& rt, vm::Thread* th);
  ~LuaTask() override;

  // The fields are ordered so that a LuaTask takes 256 bytes, an allocator size class
  // (the size check in registry.cpp guards it; the next class is 320) with no padding:
  // the bytes first, where the Itanium C++ ABI places them in sched::Task's tail padding,
  // then the pointers and the wait, then the 32-bit and 16-bit fields and the rest of the
  // bytes. Comments say what each is for.
  uint8_t regShard = 0;  // the registry shard it is in (set once, at creation)
  // In its shard's dirty list: written under the shard's lock, read relaxed first by
  // noteRecordWritten (a stale false only takes the lock).
  std::atomic<bool> gcDirty{false};
  bool isMain = false;
  bool started = false;  // first dispatch done
  // Deterministic mode: the last dispatch ended only because an ordered operation ends
  // a step (tasklib.cpp), which a cancellation does not take as a suspension point.
  bool stepEnded = false;
  std::atomic<bool> mainCancel{false};  // cancel() of the main task (it is not scheduled)
  // How the last dispatch ended (worker only).
  enum class Suspend : uint8_t { kNone, kYield, kWait } suspend = Suspend::kNone;

  RuntimeImpl& rt;
  vm::Thread* thread;  // root; re-read after every safepoint; nullptr once done
  // The current wait (runtime/wait_state.h: its fields, transitions and protocol); an
  // await's Waiter names the task awaited and holds a reference to it. At a 16-byte
  // boundary (its Values' alignment), and its last 8 bytes of padding hold `handle`
  // (no_unique_address lets the next field use a member's tail padding).
  [[no_unique_address]] WaitState wait;
  vm::Userdata* handle = nullptr;  // the task's userdata while the task is alive (root)
  // The results of kCompleted, kept so that the thread can be collected at once (roots,
  // written with `done`, under doneLock).
  std::unique_ptr<vm::Value[]> results;
  std::unique_ptr<TaskAside> aside;  // nullptr until makeAside
  // The Waiters of the tasks awaiting this one (doneLock), oldest first: a list through
  // their links, the head's `prev` naming the last (addAwaiter, removeWaiter).
  Waiter* awaiters = nullptr;

  uint32_t resultCount = 0;     // results' length (doneLock)
  uint32_t regSlot = 0;         // the registry's index (its lock; runtime/slot_list.h)
  uint32_t dirtySlot = 0;       // 1 + its index in the shard's dirty list (the shard's lock)
  // An incremental major's walk of the registry (registry.cpp), under the shard's lock:
  // the number of the cycle that last traced the record, and 1 + its index in the
  // shard's list of records to trace again (0: not listed).
  uint32_t retraceSlot = 0;
  uint16_t cycleTraced = 0;

  bool done = false;                                    // doneLock
  sched::TaskState outcome = sched::TaskState::kReady;  // doneLock; set with `done`
  bool errorObserved = false;   // an await saw the error (doneLock)
  // Outlived its runtime (RuntimeImpl::releaseLeftovers): the handles that still hold
  // it release it without the runtime.
  bool orphaned = false;
  // In the registry: from construction until its end when nothing of it needs tracing
  // (RuntimeImpl::completeTask), else until destruction (regMutex).
  bool registered = true;
  // Completion: awaiters wait for `done`. Taken after a registry shard's lock when both
  // are held, never before it; held for a few fields, a list walk or a copy of results.
  gc::SpinLock doneLock;

  // The thread's off-heap data (stable while the thread lives), or nullptr once done
  // (never for the main task). By the thread running the task, or under the registry
  // shard's lock (RuntimeImpl::removeTask): the collector rewrites `thread` when it
  // moves, and traces the record under that lock.
  vm::ThreadData* data() const { return thread ? thread->data : nullptr; }

  // `done`, for a thread that does not hold doneLock: the task may be completing on
  // another worker meanwhile (completeTask writes it under the lock).
  bool isDone() {
    std::lock_guard lock(doneLock);
    return done;
  }

  // The aside record, made on first use. Only the task's own course writes it (its
  // message handler, its blocking job, its completion), so never two threads at once.
  TaskAside& makeAside();

  // Awaiting this task is a wait on it: a Waiter joins with addAwaiter (under doneLock)
  // and leaves through removeWaiter.
  void addAwaiter(Waiter* w);
  void removeWaiter(Waiter* w);

  // What the current wait waits for, for the deadlock report ("recv on channel 0x..").
  std::string describeWait() const;
};

// A channel. Values are roots traced through the Registry; a value goes into the buffer
// only after RuntimeImpl::noteChannelWritten.
struct Channel final {
  Channel(RuntimeImpl& rt, uint32_t capacity);
  ~Channel();
  void removeWaiter(Waiter* w);
  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release();

  RuntimeImpl& rt;
  uint32_t capacity;
  std::atomic<uint32_t> refs{1};
  std::mutex mutex;
  ValueRing buffer;                // mutex
  WaiterQueue recvq;               // mutex
  WaiterQueue sendq;               // mutex
  bool closed = false;             // mutex
  std::atomic<uint32_t> length{0}; // buffer.size(), for #ch without the lock
  uint32_t regSlot = 0;            // the registry's index (its lock; runtime/slot_list.h)
  uint32_t dirtySlot = 0;          // 1 + its index in the shard's dirty channels (the shard's lock)
  uint8_t regShard = 0;            // the registry shard it is in (set once, at creation)
  // In its shard's dirty channels: as LuaTask::gcDirty, for the buffer (a minor traces
  // only the buffers written since the last collection).
  std::atomic<bool> gcDirty{false};
  bool orphaned = false;           // as LuaTask::orphaned
  uint16_t cycleTraced = 0;        // as LuaTask's, for the buffer
  uint32_t retraceSlot = 0;
};

// The task a native runs in: the running thread's task, or the main task.
LuaTask* currentTask(RuntimeImpl& rt, vm::ThreadData* t);

}  // namespace weft::runtime
