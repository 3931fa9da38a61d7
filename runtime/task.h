// Lua tasks, channels and the waits between them (the runtime's internals; the CLI uses
// runtime/runtime.h). Design: docs/design/tasks.md.
//
// Protocol of a wait (every blocking operation: channel send/recv, select, await, sleep,
// a blocking job on the pool, whose end is its only claimer: blocking_pool.h):
//  1. The waiting task starts a wait: a new generation in `waitWord` with phase kWaiting
//     (release: the fields of the wait, written before, are visible to whoever claims).
//  2. It registers one Waiter per case with the case's source (a channel queue or an
//     awaited task), each under that source's lock, re-checking readiness there: a case
//     that became ready is performed at once by claiming its own wait.
//  3. A peer that finds a Waiter claims it with one compare-exchange of waitWord from
//     (gen, kWaiting) to (gen, kClaimed), under the source's lock; only the winner
//     delivers (delivered/firedCase) and then wakes the task. A timer claims with
//     kTimedOut, a cancellation with kCancelled. Exactly one outcome per wait.
//     Once a claim shows, the task may start its next wait and rewrite its Waiters and
//     wait fields, and a task blocking its thread may see the claim by polling and run
//     on: so a claimer reads the Waiter and writes firedCase before its claim shows
//     (kClaimed goes through kClaiming), and holds a blocking task (holdForWake) until
//     it has signalled it (ThreadSanitizer found the reads after the claim).
//  4. Woken, the task removes its remaining Waiters from their sources (under their locks)
//     and finishes the operation: results, or an error raised at the call.
// A task on a worker at the bottom of its own thread suspends (the native yields, the
// worker runs others); the main task and waits nested in a coroutine or a native
// re-entry block their OS thread, detached from the collector, on the task's condition
// variable; in deterministic mode they run the other tasks' steps on that thread
// instead (runtime/sched/deterministic.h).
//
// Heap references held here (thread, handle, delivered, waiter values, channel buffers)
// are roots: the Registry traces them while the world is stopped. They are written only
// by attached threads (so never during a collection), under the owning lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/sched/scheduler.h"
#include "vm/api.h"
#include "vm/thread.h"

namespace weft::runtime {

// The scheduler core shares this namespace; `sched::` marks its names here.
namespace sched = ::weft::runtime;

class RuntimeImpl;
struct LuaTask;
struct Channel;

// The phase in the low bits of LuaTask::waitWord; the generation above them.
enum class WaitPhase : uint64_t { kIdle = 0, kWaiting, kClaiming, kClaimed, kTimedOut, kCancelled, kAborted };
inline constexpr int kPhaseBits = 3;

// What a task waits for (the operation to finish when the wait ends).
enum class WaitOp : uint8_t { kNone, kSleep, kRecv, kSend, kSelect, kAwait, kPort, kBlocking };

// Something a task can wait on: it keeps Waiters and removes them on request.
class WaitSource {
 public:
  virtual ~WaitSource() = default;
  virtual void removeWaiter(struct Waiter* w) = 0;
};

// A claimed task to wake once the claimer's locks are released (RuntimeImpl::wakeTask).
struct Wake {
  LuaTask* task = nullptr;
  bool blocking = false;  // its wait blocks a thread; then holdForWake retained it
};

struct Waiter {
  LuaTask* task = nullptr;
  uint64_t gen = 0;
  int caseIndex = 0;
  bool isSend = false;
  // In a channel's WaiterQueue: written under the channel's lock (through atomic_ref,
  // release); read without it by the waiting task once its wait ended (acquire), to
  // skip the lock when a peer already took it out (channel.cpp).
  bool queued = false;
  WaitSource* source = nullptr;
  Waiter* prev = nullptr;     // the WaiterQueue's links (its lock)
  Waiter* next = nullptr;
  vm::Value value = vm::Value::nil();  // a send's value (root)
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

struct LuaTask final : sched::Task, WaitSource {
  LuaTask(RuntimeImpl& rt, vm::Thread* th);
  ~LuaTask() override;

  RuntimeImpl& rt;
  vm::Thread* thread;       // root; re-read after every safepoint; nullptr once done
  vm::ThreadData* data;     // off-heap, stable; nullptr once done (not for the main task)
  // The fields are grouped by size (the 16-byte Values first, the flags last) so that a
  // suspended task's LuaTask fits a 384-byte allocation; comments say what each is for.
  vm::Value handle = vm::Value::nil();     // the task's userdata while the task is alive (root)
  vm::Value delivered = vm::Value::nil();  // root; by the claimer between its claim and the wake
  // What await reports, kept at the end so that the thread can be collected at once
  // (roots, written with `done`): the error of kPanicked, the results of kCompleted.
  vm::Value error = vm::Value::nil();
  std::vector<vm::Value> results;

  // The current wait (protocol above).
  std::atomic<uint64_t> waitWord{0};
  // The current wait's generation (owner thread; others change only the phase bits).
  uint64_t waitGen() const { return waitWord.load(std::memory_order_relaxed) >> kPhaseBits; }
  std::vector<Waiter> waiters;  // the cases; reserved before registration, so never moved
  LuaTask* awaited = nullptr;   // kAwait: the task awaited (a reference is held)
  sched::TimerId timer = 0;
  int firedCase = -1;           // by the claimer, like `delivered`
  // A blocking waiter (main task, nested waits) sleeps on this futex word until its wait
  // is no longer open (or the runtime closes): it reads the word, checks, and sleeps
  // only while the word is unchanged; whoever ends the wait bumps it after doing so
  // (signalBlocked), so a wake between the check and the sleep is never missed.
  std::atomic<uint32_t> blockSignal{0};
  void signalBlocked();
  // Called by a claimer before its claim can show: whether the wait blocks a thread and,
  // if so, a reference that keeps this task alive until wakeTask has signalled it (the
  // thread may see the claim by polling, finish the task and drop it first). A claimer
  // whose claim then fails releases that reference, outside any lock it holds.
  bool holdForWake();

  // Completion (doneMutex): awaiters wait for `done`.
  std::mutex doneMutex;
  std::vector<Waiter*> awaiters;
  std::unique_ptr<std::string> traceback;  // of an error, recorded by the message handler
  // kBlocking: the job on the blocking pool (blocking_pool.h), kept until the task's
  // next job or its end, because the native's continuation reads it after the wait.
  std::shared_ptr<vm::BlockingJob> blockingJob;

  uint32_t regSlot = 0;         // the registry's index (its lock; runtime/slot_list.h)
  uint32_t dirtySlot = 0;       // 1 + its index in the shard's dirty list (the shard's lock)
  uint8_t regShard = 0;         // the registry shard it is in (set once, at creation)
  // In its shard's dirty list: written under the shard's lock, read relaxed first by
  // noteRecordWritten (a stale false only takes the lock).
  std::atomic<bool> gcDirty{false};

  bool isMain = false;
  bool started = false;         // first dispatch done
  WaitOp op = WaitOp::kNone;
  bool hasTimer = false;
  // Deterministic mode: the last dispatch ended only because an ordered operation ends
  // a step (tasklib.cpp), which a cancellation does not take as a suspension point.
  bool stepEnded = false;
  bool deliveredOk = false;     // by the claimer, like `delivered`
  bool sendClosed = false;      // a send case failed because its channel closed
  // Set before the wait is published; read by a claimer after its claim (wakeTask), when
  // the waiter may already be starting its next wait: atomic, relaxed. A value from the
  // next wait only makes the wake stale, which both wake paths tolerate.
  std::atomic<bool> blockingWait{false};
  std::atomic<bool> blocked{false};     // sleeps in a blocking wait (status, deadlock check)
  std::atomic<bool> mainCancel{false};  // cancel() of the main task (it is not scheduled)
  // How the last dispatch ended (worker only).
  enum class Suspend : uint8_t { kNone, kYield, kWait } suspend = Suspend::kNone;
  bool done = false;                                    // doneMutex
  sched::TaskState outcome = sched::TaskState::kReady;  // doneMutex; set with `done`
  bool errorObserved = false;   // an await saw the error (doneMutex)
  // Outlived its runtime (RuntimeImpl::releaseLeftovers): the handles that still hold
  // it release it without the runtime.
  bool orphaned = false;
  // In the registry: from construction until its end when nothing of it needs tracing
  // (RuntimeImpl::completeTask), else until destruction (regMutex).
  bool registered = true;

  // `done`, for a thread that does not hold doneMutex: the task may be completing on
  // another worker meanwhile (completeTask writes it under the lock).
  bool isDone() {
    std::lock_guard lock(doneMutex);
    return done;
  }

  // Awaiting this task is a wait on it: awaiters leave through removeWaiter.
  void removeWaiter(Waiter* w) override;

  // Step 1 of the protocol: a new generation, phase kWaiting, `cases` empty Waiters;
  // `blocking` says how the task will wait (runtime_impl.h: canSuspend).
  void beginWait(WaitOp op, size_t cases, bool blocking);
  // What the current wait waits for, for the deadlock report ("recv on channel 0x..").
  std::string describeWait() const;
  // Step 3: from (gen, kWaiting) to (gen, to), recording the case on success. A claim
  // in progress elsewhere (kClaiming) is waited out: it resolves within a few
  // instructions of its owner, who waits for nothing meanwhile.
  bool claim(uint64_t gen, WaitPhase to, int caseIndex);
  // A tentative claim by a peer that must still claim its own wait (channel.cpp); it
  // ends with confirmClaim or undoClaim.
  bool claimTentatively(uint64_t gen);
  bool leaveWaiting(uint64_t gen, WaitPhase to);
  void confirmClaim(uint64_t gen, int caseIndex);
  void undoClaim(uint64_t gen);
  WaitPhase phase() const;
  // The wait is still open: waiting, or a peer's tentative claim may yet be undone.
  bool waitOpen() const;
};

// A channel. Values are roots traced through the Registry.
struct Channel final : WaitSource {
  Channel(RuntimeImpl& rt, uint32_t capacity);
  ~Channel() override;
  void removeWaiter(Waiter* w) override;
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
  uint8_t regShard = 0;            // the registry shard it is in (set once, at creation)
  bool orphaned = false;           // as LuaTask::orphaned
};

// The task a native runs in: the running thread's task, or the main task.
LuaTask* currentTask(RuntimeImpl& rt, vm::ThreadData* t);

}  // namespace weft::runtime
