// The wait protocol: one task's current wait, and the transitions that start, end and
// finish it. Every blocking operation is a wait: channel send/recv, select, await,
// sleep, a port's next value, a blocking job on the pool (whose end is its only
// claimer: blocking_pool.h). Design: docs/design/tasks.md, "Waits are claimed once".
//
//  1. The waiting task (the owner) starts a wait (begin): a new generation in the claim
//     word with phase kWaiting (release: the fields of the wait, written before, are
//     visible to whoever claims).
//  2. It registers one Waiter per case with the case's source (a channel queue, an
//     awaited task, a port: addWaiter), each under that source's lock, re-checking
//     readiness there: a case that became ready is performed at once by claiming its
//     own wait (claim, then deliverOwn).
//  3. A peer that finds a Waiter claims it with one compare-exchange of the word from
//     (gen, kWaiting) to (gen, kClaimed), under the source's lock; only the winner
//     delivers and then wakes the task. A timer claims with kTimedOut (timeOut), a
//     cancellation with kCancelled (cancel), a deadlock at the prompt with kAborted
//     (abort). Exactly one outcome per wait.
//     Once a claim shows, the task may start its next wait and rewrite its Waiters and
//     wait fields, and a task blocking its thread may see the claim by polling and run
//     on: so a claimer reads the Waiter, and writes the fired case and the delivery,
//     before its claim shows (kClaimed goes through kClaiming: claim, or
//     claimTentatively then confirmClaim), and holds a blocking task (holdForWake)
//     until it has signalled it (ThreadSanitizer found the reads after the claim).
//     A peer that must still claim its own wait (a select's case) claims tentatively;
//     if it then loses its own wait it undoes the claim (undoClaim), and the wait is
//     open again. A claim meeting kClaiming waits it out: it resolves within a few
//     instructions of its owner, who waits for nothing meanwhile.
//  4. Woken, the task removes its remaining Waiters from their sources, under their
//     locks (withdrawWaiters), reads the outcome (phase, delivered, firedCase) and
//     finishes the operation (finish): results, or an error raised at the call.
// A task on a worker at the bottom of its own thread suspends (the native yields, the
// worker runs others); the main task and waits nested in a coroutine or a native
// re-entry block their OS thread (blocksThread), detached from the collector, sleeping
// on the signal word (signalSeen, sleepUntilSignalled, signalBlocked); in deterministic
// mode they run the other tasks' steps on that thread instead
// (runtime/sched/deterministic.h).
//
// Heap references held here (delivered, the Waiters' send values) are roots: the
// Registry traces them (forEachRoot) while the world is stopped. They are written only by
// attached threads (so never during a collection), under the owning lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "runtime/sched/scheduler.h"
#include "vm/value.h"

namespace weft::runtime {

// The scheduler core shares this namespace; `sched::` marks its names here (and in the
// files that include this one).
namespace sched = ::weft::runtime;

struct LuaTask;

// The phase in the low bits of the claim word; the generation above them.
enum class WaitPhase : uint64_t { kIdle = 0, kWaiting, kClaiming, kClaimed, kTimedOut, kCancelled, kAborted };
inline constexpr int kPhaseBits = 3;

// What a task waits for (the operation to finish when the wait ends).
enum class WaitOp : uint8_t { kNone, kSleep, kRecv, kSend, kSelect, kAwait, kPort, kBlocking };

struct Channel;

// A source other than a channel or a task (a port): it keeps Waiters and removes them on
// request. Channels and tasks, which number in the millions, are named by a kind in their
// Waiters instead (WaitSourceKind): a virtual table pointer in each would cost every
// task record 8 bytes (docs/design/tasks.md, a suspended task's memory).
class WaitSource {
 public:
  virtual ~WaitSource() = default;
  virtual void removeWaiter(struct Waiter* w) = 0;
};

// What a Waiter's `source` points to: withdrawWaiters removes it there.
enum class WaitSourceKind : uint8_t { kNone, kChannel, kTask, kOther };

// A select takes at most this many cases (a case's index and the count are 16 bits in
// a task's WaitState, as Go's select takes at most 65,536).
inline constexpr size_t kMaxWaitCases = 65535;

// One case of a wait, registered with its source. The owner fills it in (addWaiter)
// before the source can see it; a claimer reads it under the source's lock and before
// its claim shows.
struct Waiter {
  LuaTask* task = nullptr;
  uint64_t gen = 0;
  int caseIndex = 0;
  bool isSend = false;
  // In a channel's WaiterQueue: written under the channel's lock (through atomic_ref,
  // release); read without it by the waiting task once its wait ended (acquire), to
  // skip the lock when a peer already took it out (channel.cpp).
  bool queued = false;
  WaitSourceKind sourceKind = WaitSourceKind::kNone;
  void* source = nullptr;     // a Channel, a LuaTask (awaited) or a WaitSource, by sourceKind
  Waiter* prev = nullptr;     // the source's list: a WaiterQueue, a task's awaiters (its lock)
  Waiter* next = nullptr;
  vm::Value value = vm::Value::nil();  // a send's value (root)
};

// What the winner of a claim hands the waiting task: a received value (ok: a value,
// not the end of a closed channel), or whether a send failed on a closed channel.
struct Delivery {
  vm::Value value = vm::Value::nil();
  bool ok = false;
  bool sendClosed = false;

  static Delivery received(const vm::Value& v) { return {v, true, false}; }
  static Delivery recvClosed() { return {}; }
  static Delivery sent() { return {}; }
  static Delivery sendFailedClosed() { return {vm::Value::nil(), false, true}; }
};

class WaitState {
 public:
  // --- The owner (the waiting task's thread) ------------------------------------------

  // Step 1: a new generation, phase kWaiting, `cases` (at most kMaxWaitCases) empty
  // Waiters; `blocking` says whether the wait will block its thread (runtime_impl.h:
  // canSuspend).
  void begin(WaitOp op, size_t cases, bool blocking);
  // Step 1's end, for a select: case `caseIndex` sends. Every case's kind is set before
  // any is tried: the fired case's kind decides the results (wait.cpp: claimedResults),
  // and a case the owner performs itself never reaches addWaiter.
  void markSendCase(int caseIndex) { caseArray()[caseIndex].isSend = true; }
  // Step 2: fills in case `caseIndex`'s Waiter for its source (a channel; the task
  // awaited, whose reference the wait holds until finish; another source), which the
  // caller then registers there under the source's lock.
  Waiter& addWaiter(int caseIndex, LuaTask* task, Channel* source, bool isSend, const vm::Value& value);
  Waiter& addWaiter(LuaTask* task, LuaTask* awaited);
  Waiter& addWaiter(int caseIndex, LuaTask* task, WaitSource* source, bool isSend = false,
                    const vm::Value& value = vm::Value::nil());
  // After the owner claimed its own wait (a case it performed itself): the outcome, as
  // a claimer would have delivered it.
  void deliverOwn(const Delivery& d);
  // The wait's timer, cancelled when the wait finishes (takeTimer).
  void noteTimer(sched::TimerId id);
  bool takeTimer(sched::TimerId& id);
  // Step 4: removes every registered Waiter from its source (under the source's lock).
  void withdrawWaiters();
  // Step 4's end: drops the wait's references (the delivered value, send values); the
  // caller then releases the awaited task's (takeAwaited).
  void finish();
  // The task an await waits for (its Waiter's source), or nullptr; takeAwaited also
  // hands over the reference the wait holds (begun to be held by the caller of
  // addWaiter(task, awaited)), once: the wait no longer names it.
  LuaTask* awaited() const { return op_ == WaitOp::kAwait ? static_cast<LuaTask*>(first_.source) : nullptr; }
  LuaTask* takeAwaited();

  // The current generation: the owner's (relaxed; others change only the phase bits),
  // or a thread that an acquire (a lock) orders after the owner's begin.
  uint64_t gen() const { return word_.load(std::memory_order_relaxed) >> kPhaseBits; }
  WaitOp op() const { return op_; }
  std::span<const Waiter> waiters() const { return {caseArray(), count_}; }
  // Whether the current wait blocks its thread (set by begin).
  bool blocksThread() const { return blockingWait_.load(std::memory_order_relaxed); }

  // The outcome, read by the owner once it saw the wait end (the acquire of phase()
  // orders the claimer's delivery before these reads).
  const vm::Value& delivered() const { return delivered_; }
  bool deliveredOk() const { return deliveredOk_; }
  bool sendClosed() const { return sendClosed_; }
  int firedCase() const { return firedCase_ == kNoCase ? -1 : firedCase_; }

  // --- Any thread -----------------------------------------------------------------------

  // Acquire: a caller that sees the wait ended sees what its claimer delivered.
  WaitPhase phase() const;
  // Still open: waiting, or a peer's tentative claim may yet be undone.
  bool open() const;
  // The current generation, for a thread not ordered after the owner's begin: acquire,
  // so a claim of it sees that wait's fields.
  uint64_t observedGen() const { return word_.load(std::memory_order_acquire) >> kPhaseBits; }
  // The whole claim word (acquire), for the deadlock check: one value names one wait in
  // one phase, so reading it again tells whether that wait went on meanwhile.
  uint64_t observedWord() const { return word_.load(std::memory_order_acquire); }
  static WaitPhase phaseOf(uint64_t word) { return WaitPhase(word & ((uint64_t(1) << kPhaseBits) - 1)); }

  // Step 3's transitions from (gen, kWaiting); false when the wait `gen` has already
  // ended (or a later one began). kClaiming met on the way is waited out.
  bool claim(uint64_t gen, int caseIndex);  // kClaimed, through kClaiming
  bool timeOut(uint64_t gen);
  bool cancel(uint64_t gen);
  bool abort(uint64_t gen);
  // A peer's tentative claim (kClaiming), ended by confirmClaim (after delivering: the
  // delivery and the case are written before kClaimed shows) or undoClaim (kWaiting).
  bool claimTentatively(uint64_t gen);
  void confirmClaim(uint64_t gen, int caseIndex, const Delivery& d);
  void undoClaim(uint64_t gen);

  // Called by a claimer before its claim can show: whether the wait blocks a thread and,
  // if so, a reference that keeps `owner` (this wait's task) alive until the claimer has
  // signalled it (the thread may see the claim by polling, finish the task and drop it
  // first). A claimer whose claim then fails releases that reference, outside any lock
  // it holds.
  bool holdForWake(sched::Task& owner);

  // A blocking waiter sleeps on the signal word until its wait is no longer open (or the
  // runtime closes): it reads the word (signalSeen), checks, and sleeps only while the
  // word is unchanged (sleepUntilSignalled); whoever ends the wait bumps it after doing so
  // (signalBlocked), so a wake between the check and the sleep is never missed.
  // Acquire: a bump orders what the waker did before it (its claim) before the check.
  uint32_t signalSeen() const { return signal_.load(std::memory_order_acquire); }
  void sleepUntilSignalled(uint32_t seen) const;
  void signalBlocked();

  // The owner's thread sleeps in a blocking wait (status, the deadlock check). seq_cst,
  // as the other flags the deadlock check reads (RuntimeImpl::hostWaiter, mainSuspended):
  // it reads them all in one total order with their writes.
  void setBlocked(bool b) { blocked_.store(b, std::memory_order_seq_cst); }
  // Deterministic mode: every step runs on the one thread that sets and reads it.
  void setBlockedInline(bool b) { blocked_.store(b, std::memory_order_relaxed); }
  bool isBlocked() const { return blocked_.load(std::memory_order_seq_cst); }

  // Roots for the Registry's trace (the world is stopped).
  template <typename F>
  void forEachRoot(F&& f) {
    f(delivered_);
    for (uint32_t i = 0; i < count_; i++) f(caseArray()[i].value);
  }

  WaitState() = default;
  ~WaitState() { delete[] more_; }
  WaitState(const WaitState&) = delete;
  WaitState& operator=(const WaitState&) = delete;

 private:
  static constexpr uint16_t kNoCase = 0xffff;  // firedCase_ before a claim names one

  Waiter& fillWaiter(int caseIndex, LuaTask* task, WaitSourceKind kind, void* source, bool isSend,
                     const vm::Value& value);
  Waiter* caseArray() { return count_ > 1 ? more_ : &first_; }
  const Waiter* caseArray() const { return count_ > 1 ? more_ : &first_; }
  bool leave(uint64_t gen, WaitPhase to);
  void write(uint64_t gen, WaitPhase p, std::memory_order order);

  // The claimer's delivery: written by the winner of the claim between its winning
  // (kClaiming) and its claim showing (the release of kClaimed), or by the owner after
  // claiming its own wait; read by the owner after it saw the wait end. Reset by begin.
  vm::Value delivered_ = vm::Value::nil();  // root
  // The claim word: (generation << kPhaseBits) | phase. The owner writes a new
  // generation (begin, release); claimers change the phase (compare-exchange, acq_rel;
  // confirm and undo: release).
  std::atomic<uint64_t> word_{0};
  // A select's cases (two or more), kept for the task's next select: an array that only
  // grows, written by the owner before registration (so never moved while registered)
  // and read by claimers under their source's lock, as first_.
  Waiter* more_ = nullptr;
  // The case of every other wait, in place: a task suspended on one channel, task or
  // timer allocates nothing for its wait (docs/design/tasks.md, a suspended task's memory).
  Waiter first_;
  sched::TimerId timer_ = 0;  // owner only
  std::atomic<uint32_t> signal_{0};
  // The fields below are 16 bits and bytes so that a WaitState takes 120 bytes (a
  // LuaTask's size class: task.h).
  uint16_t firedCase_ = kNoCase;  // as delivered_
  uint16_t count_ = 0;            // the current wait's cases (owner; claimers read their own Waiter)
  uint16_t moreCap_ = 0;          // more_'s length (owner only)
  WaitOp op_ = WaitOp::kNone;  // owner; read by others only for a report (describeWait)
  bool hasTimer_ = false;      // owner only
  bool deliveredOk_ = false;   // as delivered_
  bool sendClosed_ = false;    // as delivered_
  // Set by begin before the wait is published; read by a claimer (holdForWake) that
  // found this wait through an acquire (a lock or the word), when the owner may already
  // be starting its next wait: atomic, relaxed. It reads this wait's value, or a later
  // wait's when its claim is about to fail (and it releases what it held).
  std::atomic<bool> blockingWait_{false};
  std::atomic<bool> blocked_{false};  // the owner's thread (setBlocked)
};

}  // namespace weft::runtime
