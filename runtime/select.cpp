// task.select.
//
// select: the cases are tried in an order drawn from the scheduler's single seeded
// chooser (a uniform permutation, so among ready cases each is equally likely); if
// none is ready, the task waits on all of them at once (runtime/wait_state.h) and
// exactly one case fires.
#include <vector>

#include "runtime/runtime_impl.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::runtime {

using vm::CallContext;
using vm::NativeResult;
using vm::Value;

namespace {

struct Case {
  Channel* ch = nullptr;
  bool isSend = false;
  Value value;
};

Channel* channelOf(RuntimeImpl& rt, const Value& v) {
  if (!v.isUserdata()) return nullptr;
  vm::Userdata* u = v.asUserdata();
  if (u->metatable != rt.channelMeta || u->size < sizeof(Channel*)) return nullptr;
  return *reinterpret_cast<Channel**>(u->data);
}

// Reads the cases table; false with an argument error recorded in `error`.
bool parseCases(CallContext& cx, RuntimeImpl& rt, std::vector<Case>& cases, std::string& error) {
  vm::Table* t;
  if (!cx.checkTable(1, t)) return false;
  for (int64_t i = 1;; i++) {
    Value c = vm::tableGetInt(t, i);
    if (c.isNil()) break;
    if (size_t(i) > kMaxWaitCases) {
      error = "too many cases (at most " + std::to_string(kMaxWaitCases) + ")";
      return false;
    }
    if (!c.isTable()) {
      error = "case " + std::to_string(i) + " is not a table";
      return false;
    }
    vm::Table* ct = c.asTable();
    Case k;
    k.ch = channelOf(rt, vm::tableGetInt(ct, 1));
    Value op = vm::tableGetInt(ct, 2);
    std::string_view opName = op.isString() ? op.asString()->view() : std::string_view();
    if (!k.ch || (opName != "recv" && opName != "send")) {
      error = "case " + std::to_string(i) + " must be {channel, \"recv\"} or {channel, \"send\", value}";
      return false;
    }
    k.isSend = opName == "send";
    k.value = vm::tableGetInt(ct, 3);
    cases.push_back(k);
  }
  if (cases.empty()) {
    error = "no cases";
    return false;
  }
  return true;
}

NativeResult pushValues(CallContext& cx, std::initializer_list<Value> values) {
  if (!cx.ensureStack(uint32_t(values.size()))) return cx.stackOverflow();
  for (const Value& v : values) cx.push(v);
  return cx.results(int32_t(values.size()));
}

// One case: a try without `self`, or a registration with it. Records a completed
// case's outcome in self's delivery fields when self performed it.
OpResult attempt(Case& k, int index, LuaTask* self, Value& out, bool& ok, bool& closed) {
  closed = false;
  if (k.isSend) return channelSend(*k.ch, k.value, closed, self, index);
  return channelRecv(*k.ch, out, ok, self, index);
}

}  // namespace

NativeResult taskSelect(CallContext& cx) {
  RuntimeImpl& rt = *runtimeOf(cx.state());
  std::vector<Case> cases;
  std::string error;
  if (!parseCases(cx, rt, cases, error)) {
    if (error.empty()) return cx.failure();
    return cx.argError(1, error);
  }
  double timeout = -1;
  if (!cx.arg(2).isNil()) {
    if (!cx.checkNumber(2, timeout)) return cx.failure();
    if (timeout < 0) timeout = 0;
  }
  std::vector<int> order(cases.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = int(i);
  for (size_t i = order.size(); i > 1; i--) std::swap(order[i - 1], order[rt.scheduler->choose(i)]);

  Value out;
  bool ok = false, closed = false;
  for (int i : order) {
    OpResult r = attempt(cases[size_t(i)], i, nullptr, out, ok, closed);
    if (r == OpResult::kNoMemory) return cx.memoryError();
    if (r != OpResult::kDone) continue;
    if (closed) return cx.error("send on closed channel");
    if (cases[size_t(i)].isSend) return pushValues(cx, {Value::integer(i + 1)});
    return pushValues(cx, {Value::integer(i + 1), out, Value::boolean(ok)});
  }
  if (timeout == 0) return pushValues(cx, {Value::nil()});

  LuaTask* self = currentTask(rt, cx.threadData());
  self->wait.begin(WaitOp::kSelect, cases.size(), !canSuspendWait(cx.threadData()));
  for (size_t i = 0; i < cases.size(); i++) {
    if (cases[i].isSend) self->wait.markSendCase(int(i));
  }
  for (int i : order) {
    OpResult r = attempt(cases[size_t(i)], i, self, out, ok, closed);
    if (r == OpResult::kLost) break;
    if (r == OpResult::kDone) {
      rt.noteRecordWritten(*self);
      self->wait.deliverOwn({out, ok, closed});
      break;
    }
  }
  return waitMayGC(cx, *self, timeout);
}

}  // namespace weft::runtime
