// The wait protocol's transitions (runtime/wait_state.h gives the protocol).
#include "runtime/wait_state.h"

#include <thread>

#include "runtime/task.h"

namespace weft::runtime {

namespace {

uint64_t word(uint64_t gen, WaitPhase p) { return (gen << kPhaseBits) | uint64_t(p); }

}  // namespace

void WaitState::begin(WaitOp op, size_t cases, bool blocking) {
  op_ = op;
  firedCase_ = kNoCase;
  delivered_ = vm::Value::nil();
  deliveredOk_ = false;
  sendClosed_ = false;
  hasTimer_ = false;
  blockingWait_.store(blocking, std::memory_order_relaxed);
  if (cases > 1 && cases > moreCap_) {
    delete[] more_;
    more_ = new Waiter[cases];
    moreCap_ = uint16_t(cases);
  }
  count_ = uint16_t(cases);
  for (uint32_t i = 0; i < count_; i++) caseArray()[i] = Waiter{};
  // Release: the fields above are visible to any thread that claims this generation.
  write(gen() + 1, WaitPhase::kWaiting, std::memory_order_release);
}

Waiter& WaitState::fillWaiter(int caseIndex, LuaTask* task, WaitSourceKind kind, void* source, bool isSend,
                              const vm::Value& value) {
  Waiter& w = caseArray()[caseIndex];
  w.task = task;
  w.gen = gen();
  w.caseIndex = caseIndex;
  w.isSend = isSend;
  w.sourceKind = kind;
  w.source = source;
  w.value = value;
  return w;
}

Waiter& WaitState::addWaiter(int caseIndex, LuaTask* task, Channel* source, bool isSend, const vm::Value& value) {
  return fillWaiter(caseIndex, task, WaitSourceKind::kChannel, source, isSend, value);
}

Waiter& WaitState::addWaiter(LuaTask* task, LuaTask* awaited) {
  return fillWaiter(0, task, WaitSourceKind::kTask, awaited, false, vm::Value::nil());
}

Waiter& WaitState::addWaiter(int caseIndex, LuaTask* task, WaitSource* source, bool isSend, const vm::Value& value) {
  return fillWaiter(caseIndex, task, WaitSourceKind::kOther, source, isSend, value);
}

void WaitState::deliverOwn(const Delivery& d) {
  delivered_ = d.value;
  deliveredOk_ = d.ok;
  sendClosed_ = d.sendClosed;
}

void WaitState::noteTimer(sched::TimerId id) {
  timer_ = id;
  hasTimer_ = true;
}

bool WaitState::takeTimer(sched::TimerId& id) {
  if (!hasTimer_) return false;
  hasTimer_ = false;
  id = timer_;
  return true;
}

void WaitState::withdrawWaiters() {
  for (uint32_t i = 0; i < count_; i++) {
    Waiter& w = caseArray()[i];
    switch (w.sourceKind) {
      case WaitSourceKind::kChannel:
        static_cast<Channel*>(w.source)->removeWaiter(&w);
        break;
      case WaitSourceKind::kTask:
        static_cast<LuaTask*>(w.source)->removeWaiter(&w);
        break;
      case WaitSourceKind::kOther:
        static_cast<WaitSource*>(w.source)->removeWaiter(&w);
        break;
      case WaitSourceKind::kNone:
        break;
    }
  }
}

void WaitState::finish() {
  for (uint32_t i = 0; i < count_; i++) caseArray()[i].value = vm::Value::nil();
  count_ = 0;
  delivered_ = vm::Value::nil();
  op_ = WaitOp::kNone;
}

LuaTask* WaitState::takeAwaited() {
  LuaTask* task = awaited();
  first_.source = nullptr;
  first_.sourceKind = WaitSourceKind::kNone;
  return task;
}

WaitPhase WaitState::phase() const {
  return phaseOf(word_.load(std::memory_order_acquire));
}

bool WaitState::open() const {
  WaitPhase p = phase();
  return p == WaitPhase::kWaiting || p == WaitPhase::kClaiming;
}

// From (gen, kWaiting) to (gen, to). A tentative claim in progress (kClaiming) is waited
// out: its owner resolves it within a few instructions and waits for nothing meanwhile.
bool WaitState::leave(uint64_t gen, WaitPhase to) {
  uint64_t expected = word(gen, WaitPhase::kWaiting);
  for (;;) {
    // acq_rel: the claimer sees the wait's fields; the waiter, after its wake, sees
    // what the claimer delivered.
    if (word_.compare_exchange_weak(expected, word(gen, to), std::memory_order_acq_rel, std::memory_order_acquire)) {
      return true;
    }
    if (expected == word(gen, WaitPhase::kClaiming)) {
      std::this_thread::yield();
      expected = word(gen, WaitPhase::kWaiting);
      continue;
    }
    if (expected != word(gen, WaitPhase::kWaiting)) return false;
  }
}

void WaitState::write(uint64_t gen, WaitPhase p, std::memory_order order) { word_.store(word(gen, p), order); }

// Which case fired is written before the claim shows: a task in a blocking wait may see
// the claim and read it before any wake arrives.
bool WaitState::claim(uint64_t gen, int caseIndex) {
  if (!leave(gen, WaitPhase::kClaiming)) return false;
  firedCase_ = uint16_t(caseIndex);
  write(gen, WaitPhase::kClaimed, std::memory_order_release);
  return true;
}

bool WaitState::timeOut(uint64_t gen) { return leave(gen, WaitPhase::kTimedOut); }
bool WaitState::cancel(uint64_t gen) { return leave(gen, WaitPhase::kCancelled); }
bool WaitState::abort(uint64_t gen) { return leave(gen, WaitPhase::kAborted); }
bool WaitState::claimTentatively(uint64_t gen) { return leave(gen, WaitPhase::kClaiming); }

// The release publishes the delivery and the case to the owner, whose acquire saw the
// wait end.
void WaitState::confirmClaim(uint64_t gen, int caseIndex, const Delivery& d) {
  delivered_ = d.value;
  deliveredOk_ = d.ok;
  sendClosed_ = d.sendClosed;
  firedCase_ = uint16_t(caseIndex);
  write(gen, WaitPhase::kClaimed, std::memory_order_release);
}

// Release: what the undoing peer read of the wait happened before another claimer wins it.
void WaitState::undoClaim(uint64_t gen) { write(gen, WaitPhase::kWaiting, std::memory_order_release); }

bool WaitState::holdForWake(sched::Task& owner) {
  bool blocking = blocksThread();
  if (blocking) owner.retain();
  return blocking;
}

// Release: the change that ended the wait (made before the call) is visible to the
// sleeper that sees the bump.
void WaitState::signalBlocked() {
  signal_.fetch_add(1, std::memory_order_release);
  signal_.notify_all();
}

// Acquire: a bump orders what the waker did before it (its claim) before the sleeper's
// next check.
void WaitState::sleepUntilSignalled(uint32_t seen) const { signal_.wait(seen, std::memory_order_acquire); }

}  // namespace weft::runtime
