// task.select and the runtime's telemetry (task.stats, --stats).
//
// select: the cases are tried in an order drawn from the scheduler's single seeded
// chooser (a uniform permutation, so among ready cases each is equally likely); if
// none is ready, the task waits on all of them at once (runtime/task.h protocol) and
// exactly one case fires.
#include <cinttypes>
#include <cstdio>
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
  self->beginWait(WaitOp::kSelect, cases.size(), !canSuspend(cx.threadData()));
  for (int i : order) {
    OpResult r = attempt(cases[size_t(i)], i, self, out, ok, closed);
    if (r == OpResult::kLost) break;
    if (r == OpResult::kDone) {
      rt.noteRecordWritten(*self);
      self->delivered = out;
      self->deliveredOk = ok;
      self->sendClosed = closed;
      break;
    }
  }
  return waitMayGC(cx, *self, timeout);
}

std::string RuntimeImpl::statsReport() const {
  std::vector<sched::WorkerStats> all = scheduler->stats();
  std::string out = "weft stats: " + std::to_string(all.size()) + " workers\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-7s %10s %10s %10s %8s %8s %8s %6s %6s %8s %12s %12s\n", "worker", "tasks",
                "migrations", "injected", "parks", "wakeups", "budget", "depth", "max", "gcpauses", "gc_total_us",
                "gc_max_us");
  out += line;
  for (size_t i = 0; i < all.size(); i++) {
    const sched::WorkerStats& w = all[i];
    std::snprintf(line, sizeof line,
                  "%-7zu %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %6" PRIu64
                  " %6" PRIu64 " %8" PRIu64 " %12.1f %12.1f\n",
                  i, w.tasksRun, w.migrations, w.stealsFromInjection, w.parks, w.wakeups, w.budgetExhaustions,
                  w.queueDepth, w.queueDepthMax, w.gcPauses, double(w.gcPauseTotalNanos) / 1e3,
                  double(w.gcPauseMaxNanos) / 1e3);
    out += line;
  }
  out += "steals (row: thief, column: victim)\n";
  for (size_t i = 0; i < all.size(); i++) {
    out += "  " + std::to_string(i) + ":";
    for (uint64_t n : all[i].stealsFrom) out += " " + std::to_string(n);
    out += '\n';
  }
  // The collector's pauses by generation (docs/design/gc-v2.md).
  gc::Stats gs = state.heap().stats();
  std::snprintf(line, sizeof line, "%-7s %8s %12s %10s %10s %10s\n", "gc", "count", "total_us", "p50_us", "p99_us",
                "max_us");
  out += line;
  for (const auto& [name, p] : {std::pair{"minor", gs.minor}, std::pair{"major", gs.major}}) {
    std::snprintf(line, sizeof line, "%-7s %8" PRIu64 " %12.1f %10.1f %10.1f %10.1f\n", name, p.count,
                  double(p.totalNanos) / 1e3, double(p.p50Nanos) / 1e3, double(p.p99Nanos) / 1e3,
                  double(p.longestNanos) / 1e3);
    out += line;
  }
  out += "gc promoted " + std::to_string(gs.bytesPromotedTotal) + " bytes, copied " +
         std::to_string(gs.bytesCopiedTotal) + " bytes\n";
  return out;
}

std::string Runtime::statsReport() const { return impl_->statsReport(); }

namespace {

Status setInt(vm::State& S, vm::Table* t, const char* name, uint64_t v) {
  vm::String* key = vm::newString(S, name);
  if (!key) return Status(StatusCode::kMemoryError);
  return vm::tableSetStr(S, t, key, Value::integer(int64_t(v)));
}

}  // namespace

// task.stats(): an array of per-worker tables (fields as in --stats; `steals` is the
// row of the steal matrix, indexed by victim worker + 1).
NativeResult taskStats(CallContext& cx) {
  vm::State& S = cx.state();
  std::vector<sched::WorkerStats> all = runtimeOf(S)->scheduler->stats();
  vm::Table* result = cx.newTable(uint32_t(all.size()), 0);
  if (!result || !cx.push(Value::table(result))) return cx.memoryError();
  for (size_t i = 0; i < all.size(); i++) {
    const sched::WorkerStats& w = all[i];
    vm::Table* row = vm::newTable(S, 0, 16);
    vm::Table* steals = vm::newTable(S, uint32_t(w.stealsFrom.size()), 0);
    if (!row || !steals) return cx.memoryError();
    const std::pair<const char*, uint64_t> fields[] = {
        {"tasks_run", w.tasksRun},       {"migrations", w.migrations},
        {"steals_from_injection", w.stealsFromInjection}, {"parks", w.parks},
        {"wakeups", w.wakeups},          {"budget_exhaustions", w.budgetExhaustions},
        {"queue_depth", w.queueDepth},   {"queue_depth_max", w.queueDepthMax},
        {"gc_pauses", w.gcPauses},       {"gc_pause_total_ns", w.gcPauseTotalNanos},
        {"gc_pause_max_ns", w.gcPauseMaxNanos},
    };
    for (const auto& [name, v] : fields)
      if (!setInt(S, row, name, v).isOk()) return cx.memoryError();
    for (size_t j = 0; j < w.stealsFrom.size(); j++)
      if (!vm::tableSetInt(S, steals, int64_t(j + 1), Value::integer(int64_t(w.stealsFrom[j]))).isOk())
        return cx.memoryError();
    vm::String* key = vm::newString(S, "steals");
    if (!key || !vm::tableSetStr(S, row, key, Value::table(steals)).isOk()) return cx.memoryError();
    if (!vm::tableSetInt(S, result, int64_t(i + 1), Value::table(row)).isOk()) return cx.memoryError();
  }
  return cx.results(1);
}

}  // namespace weft::runtime
