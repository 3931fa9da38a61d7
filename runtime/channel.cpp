// Channels: a buffer and two queues of waiting tasks under one lock (runtime/wait_state.h
// has the wait protocol). A receiver finds a value in the buffer, else takes it from a
// blocked sender; a sender hands its value to a blocked receiver, else buffers it, else
// waits. Wakes happen after the lock is released.
#include <atomic>
#include <new>
#include <thread>

#include "runtime/runtime_impl.h"

namespace weft::runtime {

namespace {

using vm::Value;

// The first waiter of `q` (not one of self's own cases) that claims, tentatively: the
// caller delivers to it and then confirms (deliverTo), so that its task, whose wait
// stays open while the claim is tentative, never sees the claim before the delivery
// (even from a stale dispatch). Claimed ones and stale ones (their wait already
// ended) leave the queue before the claim, so a task that sees its wait ended sees
// its Waiter out of the queue too.
Waiter* claimPeer(WaiterQueue& q, LuaTask* self) {
  for (Waiter* w = q.front(); w;) {
    Waiter* next = w->next;
    if (w->task != self) {
      q.remove(w);
      if (w->task->wait.claimTentatively(w->gen)) return w;
    }
    w = next;
  }
  return nullptr;
}

// The second half of a peer's claim: the delivery, published by confirmClaim's release.
// The Waiter is read before it: once the claim shows, its task may start another wait
// and rewrite it (ThreadSanitizer caught the read after).
Wake deliverTo(Waiter* peer, const Delivery& d) {
  LuaTask* task = peer->task;
  bool blocking = task->wait.holdForWake(*task);  // the tentative claim holds its wait open
  task->wait.confirmClaim(peer->gen, peer->caseIndex, d);
  return {task, blocking};
}

bool claimSelf(LuaTask* self, int caseIndex) { return !self || self->wait.claim(self->wait.gen(), caseIndex); }

// A peer claimed tentatively becomes ours only if our own wait is still open; if not,
// it goes back to the front of its queue before its claim is undone, so that once its
// wait has ended for good nobody queues it again.
bool settlePeer(Waiter* peer, WaiterQueue& q, LuaTask* self, int caseIndex) {
  if (claimSelf(self, caseIndex)) return true;
  q.pushFront(peer);
  peer->task->wait.undoClaim(peer->gen);
  return false;
}

void registerWaiter(Channel& ch, WaiterQueue& q, LuaTask* self, int caseIndex, bool isSend, const Value& v) {
  if (v.isCollectable()) self->rt.noteRecordWritten(*self);
  q.pushBack(&self->wait.addWaiter(caseIndex, self, &ch, isSend, v));
}

}  // namespace

Channel::Channel(RuntimeImpl& r, uint32_t cap) : rt(r), capacity(cap) {}
Channel::~Channel() = default;

void Channel::release() {
  if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (!orphaned) rt.removeChannel(this);
    delete this;
  }
}

// Called by the waiting task once its wait ended: a Waiter a peer took out (the usual
// case: that peer ended the wait) needs no lock (claimPeer, settlePeer).
void Channel::removeWaiter(Waiter* w) {
  if (!std::atomic_ref(w->queued).load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex);
  if (w->queued) (w->isSend ? sendq : recvq).remove(w);
}

void WaiterQueue::pushBack(Waiter* w) {
  w->prev = tail_;
  w->next = nullptr;
  (tail_ ? tail_->next : head_) = w;
  tail_ = w;
  size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_ref(w->queued).store(true, std::memory_order_release);
}

void WaiterQueue::pushFront(Waiter* w) {
  w->prev = nullptr;
  w->next = head_;
  (head_ ? head_->prev : tail_) = w;
  head_ = w;
  size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_ref(w->queued).store(true, std::memory_order_release);
}

void WaiterQueue::remove(Waiter* w) {
  (w->prev ? w->prev->next : head_) = w->next;
  (w->next ? w->next->prev : tail_) = w->prev;
  w->prev = w->next = nullptr;
  size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  std::atomic_ref(w->queued).store(false, std::memory_order_release);
}

bool ValueRing::reserveOne() {
  auto cap = uint32_t(slots_.size());
  if (count_ < cap) return true;
  try {
    std::vector<Value> grown(cap ? size_t(cap) * 2 : 4, Value::nil());
    for (uint32_t i = 0; i < count_; i++) grown[i] = slots_[(head_ + i) & (cap - 1)];
    slots_.swap(grown);
  } catch (const std::bad_alloc&) {
    return false;
  }
  head_ = 0;
  return true;
}

void ValueRing::pushBack(const Value& v) {
  slots_[(head_ + count_) & (uint32_t(slots_.size()) - 1)] = v;
  ++count_;
}

void ValueRing::popFront() {
  slots_[head_] = Value::nil();  // no stale reference for the collector to keep
  head_ = (head_ + 1) & (uint32_t(slots_.size()) - 1);
  --count_;
}

OpResult channelSend(Channel& ch, const Value& v, bool& closed, LuaTask* self, int caseIndex) {
  Wake wake;
  OpResult result;
  {
    std::lock_guard lock(ch.mutex);
    closed = false;
    if (ch.closed) {
      if (!claimSelf(self, caseIndex)) return OpResult::kLost;
      closed = true;
      return OpResult::kDone;
    }
    if (Waiter* r = claimPeer(ch.recvq, self)) {
      if (self && !settlePeer(r, ch.recvq, self, caseIndex)) return OpResult::kLost;
      if (v.isCollectable()) r->task->rt.noteRecordWritten(*r->task);
      wake = deliverTo(r, Delivery::received(v));
      result = OpResult::kDone;
    } else if (ch.buffer.size() < ch.capacity && ch.buffer.reserveOne()) {
      if (!claimSelf(self, caseIndex)) return OpResult::kLost;
      if (v.isCollectable()) ch.rt.noteChannelWritten(ch);
      ch.buffer.pushBack(v);
      ch.length.store(ch.buffer.size(), std::memory_order_relaxed);
      result = OpResult::kDone;
    } else if (!self && ch.buffer.size() < ch.capacity) {
      return OpResult::kNoMemory;  // a waiting send treats the channel as full instead
    } else if (!self) {
      return OpResult::kWouldBlock;
    } else {
      registerWaiter(ch, ch.sendq, self, caseIndex, true, v);
      return OpResult::kRegistered;
    }
  }
  if (wake.task) ch.rt.wakeTask(wake.task, wake.blocking);
  return result;
}

OpResult channelRecv(Channel& ch, Value& out, bool& ok, LuaTask* self, int caseIndex) {
  Wake wake;
  {
    std::lock_guard lock(ch.mutex);
    if (!ch.buffer.empty()) {
      if (!claimSelf(self, caseIndex)) return OpResult::kLost;
      out = ch.buffer.front();
      ch.buffer.popFront();
      ok = true;
      // A blocked sender's value takes the freed place.
      if (Waiter* s = claimPeer(ch.sendq, self)) {
        if (s->value.isCollectable()) ch.rt.noteChannelWritten(ch);
        ch.buffer.pushBack(s->value);
        wake = deliverTo(s, Delivery::sent());
      }
      ch.length.store(ch.buffer.size(), std::memory_order_relaxed);
    } else if (Waiter* s = claimPeer(ch.sendq, self)) {
      if (self && !settlePeer(s, ch.sendq, self, caseIndex)) return OpResult::kLost;
      out = s->value;
      ok = true;
      wake = deliverTo(s, Delivery::sent());
    } else if (ch.closed) {
      if (!claimSelf(self, caseIndex)) return OpResult::kLost;
      out = Value::nil();
      ok = false;
    } else if (!self) {
      return OpResult::kWouldBlock;
    } else {
      registerWaiter(ch, ch.recvq, self, caseIndex, false, Value::nil());
      return OpResult::kRegistered;
    }
  }
  if (wake.task) ch.rt.wakeTask(wake.task, wake.blocking);
  return OpResult::kDone;
}

// A receive finds nothing buffered and no blocked sender, or a send no blocked receiver
// and no room: it will wait, so it may skip the locked attempt without a wait and go
// straight to the one that registers (a ping-pong's receives always wait: this halves
// their lock round trips). A stale hint costs only that skipped attempt's shortcut:
// the registering attempt completes at once when a peer or room turned up.
bool opLikelyWaits(const Channel& ch, bool isSend) {
  if (isSend) return !ch.recvq.mayHaveWaiters() && ch.length.load(std::memory_order_relaxed) >= ch.capacity;
  return !ch.sendq.mayHaveWaiters() && ch.length.load(std::memory_order_relaxed) == 0;
}

bool channelClose(Channel& ch) {
  std::vector<Wake> wake;
  {
    std::lock_guard lock(ch.mutex);
    if (ch.closed) return false;
    ch.closed = true;
    while (Waiter* r = claimPeer(ch.recvq, nullptr)) wake.push_back(deliverTo(r, Delivery::recvClosed()));
    while (Waiter* s = claimPeer(ch.sendq, nullptr)) wake.push_back(deliverTo(s, Delivery::sendFailedClosed()));
  }
  for (const Wake& w : wake) ch.rt.wakeTask(w.task, w.blocking);
  return true;
}

}  // namespace weft::runtime
