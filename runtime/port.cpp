// Ports: the external-event path (runtime/port.h gives the protocol).
#include "runtime/port.h"

#include "runtime/runtime_impl.h"
#include "vm/proto.h"
#include "vm/string.h"

namespace weft::runtime {

using vm::Value;

Port::Port(RuntimeImpl& rt) : rt_(&rt) { rt.openPorts.fetch_add(1, std::memory_order_relaxed); }

Port::~Port() { close(); }

// Under mutex_ (so the runtime cannot end meanwhile: detach takes the lock): ends the
// courier's wait, if it waits. Its Waiter stays valid until the courier removes it,
// which also takes the lock.
void Port::wakeCourierLocked() {
  if (!waiter_) return;
  LuaTask* task = waiter_->task;
  bool blocking = task->wait.holdForWake(*task);
  if (task->wait.claim(waiter_->gen, -1)) task->rt.wakeTask(task, blocking);
  else if (blocking) task->release();
}

bool Port::post(PortValue v) {
  std::lock_guard lock(mutex_);
  if (closed_ || !rt_ || rt_->closed()) return false;
  queue_.push_back(std::move(v));
  wakeCourierLocked();
  return true;
}

void Port::close() {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  closed_ = true;
  if (!rt_) return;
  rt_->openPorts.fetch_sub(1, std::memory_order_relaxed);
  wakeCourierLocked();
}

void Port::detach() {
  std::lock_guard lock(mutex_);
  if (!closed_ && rt_) rt_->openPorts.fetch_sub(1, std::memory_order_relaxed);
  closed_ = true;
  rt_ = nullptr;
  queue_.clear();
}

void Port::removeWaiter(Waiter* w) {
  std::lock_guard lock(mutex_);
  if (waiter_ == w) waiter_ = nullptr;
}

namespace {

// A posted value on the courier's heap; false when memory ran out.
bool materialise(vm::State& S, const PortValue& v, Value& out) {
  switch (v.index()) {
    case 1: out = Value::boolean(std::get<1>(v)); return true;
    case 2: out = Value::integer(std::get<2>(v)); return true;
    case 3: out = Value::number(std::get<3>(v)); return true;
    case 4: {
      vm::String* s = vm::newString(S, std::get<4>(v));
      if (!s) return false;
      out = Value::string(s);
      return true;
    }
    default: out = Value::nil(); return true;
  }
}

}  // namespace

// Returns (true, v) for the oldest value, (false) once closed and drained, and nothing
// after a wait (the courier asks again).
vm::NativeResult Port::nextMayGC(vm::CallContext& cx) {
  RuntimeImpl& rt = *runtimeOf(cx.state());
  LuaTask* self = currentTask(rt, cx.threadData());
  PortValue v;
  bool wait = false;
  {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) {
      if (closed_ || !rt_) return cx.results(cx.push(Value::boolean(false)) ? 1 : 0);
      self->wait.begin(WaitOp::kPort, 1, !canSuspendWait(cx.threadData()));
      waiter_ = &self->wait.addWaiter(0, self, this);
      wait = true;  // outside the lock, below
    } else {
      v = std::move(queue_.front());
      queue_.pop_front();
    }
  }
  if (wait) return waitMayGC(cx, *self, -1);
  Value value;
  if (!materialise(cx.state(), v, value)) return cx.memoryError();
  if (!cx.push(Value::boolean(true)) || !cx.push(value)) return cx.stackOverflow();
  return cx.results(2);
}

namespace {

size_t releasePortBox(vm::Userdata* u) {
  reinterpret_cast<PortBox*>(static_cast<void*>(u->data))->~PortBox();
  return 0;
}

PortBox* boxOf(const Value& v) { return reinterpret_cast<PortBox*>(static_cast<void*>(v.asUserdata()->data)); }

// next(): the courier's step; next(true) closes the port (the courier gives up).
vm::NativeResult portNextMayGC(vm::CallContext& cx) {
  Port& port = *boxOf(cx.upvalue(0))->port;
  if (cx.arg(1).isTruthy()) {
    port.close();
    return cx.noResults();
  }
  return port.nextMayGC(cx);
}

}  // namespace

vm::NativeResult portMakeMayGC(vm::CallContext& cx) {
  RuntimeImpl* rt = runtimeOf(cx.state());
  vm::Userdata* u = vm::newHostUserdata(cx.state(), sizeof(PortBox), releasePortBox);
  if (!u) return cx.memoryError();
  auto port = std::make_shared<Port>(*rt);
  void* payload = u->data;
  new (payload) PortBox{port};
  rt->addPort(port);
  if (!cx.push(Value::userdata(u))) return cx.stackOverflow();  // rooted while the closure is made
  vm::NativeClosure* fn = vm::newNativeClosure(cx.state(), portNextMayGC, "next", 1);
  if (!fn) return cx.memoryError();
  uint32_t boxSlot = cx.top() - 1;
  vm::storeValue(fn, fn->upvalues[0], cx.at(boxSlot));
  if (!cx.push(Value::nativeClosure(fn)) || !cx.push(cx.at(boxSlot))) return cx.stackOverflow();
  return cx.results(2);
}

}  // namespace weft::runtime
