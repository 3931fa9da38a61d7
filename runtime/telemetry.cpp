// The runtime's telemetry: one document, four renderings
// (docs/design/telemetry.md).
//
// `takeDocument` snapshots the scheduler's per-worker counters and histograms
// and the collector's pause statistics into a tree (schema version
// kStatsSchemaVersion). The text of --stats, the JSON of --stats=json and the
// table task.stats() returns are all drawn from that tree, so they share names,
// units (durations in microseconds, suffix _us) and 0-based worker numbers.
// Prometheus text (--stats=prom) follows its own naming conventions (weft_
// prefix, seconds, _total counters) over the same snapshot.
//
// Threads: any thread may take a document; the counters are relaxed snapshots.
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/runtime_impl.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::runtime {

using vm::CallContext;
using vm::NativeResult;
using vm::Value;

namespace {

constexpr int64_t kStatsSchemaVersion = 1;

// A node of the document: a number (integer or microseconds), an object with
// ordered fields, or an array.
struct Field;
struct Node {
  enum class Kind : uint8_t { kInt, kFloat, kObject, kArray };
  Kind kind = Kind::kObject;
  int64_t i = 0;
  double f = 0;
  std::vector<Field> fields;  // a vector of an incomplete type: complete before use
  std::vector<Node> items;

  static Node integer(uint64_t v);
  static Node micros(uint64_t nanos);
  static Node array();
  Node& add(std::string name, Node v);
  const Node* find(const std::string& name) const;
};

struct Field {
  std::string first;  // the name
  Node second;        // the value
};

Node Node::integer(uint64_t v) {
  Node n;
  n.kind = Kind::kInt;
  n.i = int64_t(v);
  return n;
}

Node Node::micros(uint64_t nanos) {
  Node n;
  n.kind = Kind::kFloat;
  n.f = double(nanos) / 1e3;
  return n;
}

Node Node::array() {
  Node n;
  n.kind = Kind::kArray;
  return n;
}

Node& Node::add(std::string name, Node v) {
  fields.push_back(Field{std::move(name), std::move(v)});
  return fields.back().second;
}

const Node* Node::find(const std::string& name) const {
  for (const auto& [k, v] : fields)
    if (k == name) return &v;
  return nullptr;
}

// The per-worker counters, in the order every rendering lists them.
struct WorkerMetric {
  const char* name;  // the document's key (without the _us suffix of durations)
  uint64_t sched::WorkerStats::*field;
  bool nanos;        // a duration: microseconds in the document, seconds in Prometheus
  const char* prom;  // the Prometheus metric (seconds for durations, _total for
                     // counters)
  bool gauge;        // its type
  const char* help;
};

constexpr WorkerMetric kWorkerMetrics[] = {
    {"tasks_run", &sched::WorkerStats::tasksRun, false, "weft_tasks_run_total", false,
     "Task dispatches run by the worker."},
    {"migrations", &sched::WorkerStats::migrations, false, "weft_migrations_total", false,
     "Dispatches of a task whose previous dispatch ran on another worker."},
    {"steals_from_injection", &sched::WorkerStats::stealsFromInjection, false, "weft_steals_from_injection_total",
     false, "Tasks the worker took from the injection queue."},
    {"parks", &sched::WorkerStats::parks, false, "weft_parks_total", false, "Times the worker parked with no work."},
    {"wakeups", &sched::WorkerStats::wakeups, false, "weft_wakeups_total", false,
     "Times a publication unparked the worker."},
    {"budget_exhaustions", &sched::WorkerStats::budgetExhaustions, false, "weft_budget_exhaustions_total", false,
     "Dispatches that ran their whole time slice."},
    {"queue_depth", &sched::WorkerStats::queueDepth, false, "weft_queue_depth", true,
     "Tasks in the worker's local queues now."},
    {"queue_depth_max", &sched::WorkerStats::queueDepthMax, false, "weft_queue_depth_max", true,
     "The deepest the worker's local queues have been."},
    {"spawns_retargeted", &sched::WorkerStats::spawnsRetargeted, false, "weft_spawns_retargeted_total", false,
     "Spawns the load monitor sent to the injection queue instead of the worker's own queues."},
    {"gc_pauses", &sched::WorkerStats::gcPauses, false, "weft_worker_gc_pauses_total", false,
     "Collections the worker stopped for."},
    {"gc_pause_total", &sched::WorkerStats::gcPauseTotalNanos, true, "weft_worker_gc_pause_seconds_total", false,
     "Time the worker spent stopped for collections."},
    {"gc_pause_max", &sched::WorkerStats::gcPauseMaxNanos, true, "weft_worker_gc_pause_max_seconds", true,
     "The worker's longest stop for a collection."},
};

std::string keyOf(const WorkerMetric& m) { return m.nanos ? std::string(m.name) + "_us" : m.name; }

Node histogramNode(const sched::HistogramSnapshot& h) {
  Node n;
  n.add("count", Node::integer(h.count));
  n.add("sum_us", Node::micros(h.sumNanos));
  n.add("p50_us", Node::micros(h.quantileNanos(0.5)));
  n.add("p99_us", Node::micros(h.quantileNanos(0.99)));
  n.add("max_us", Node::micros(h.maxNanos));
  Node& bounds = n.add("bounds_us", Node::array());
  Node& counts = n.add("counts", Node::array());
  for (unsigned i = 0; i < sched::kHistogramBuckets; ++i) {
    if (uint64_t b = sched::histogramBound(i)) bounds.items.push_back(Node::micros(b));
    counts.items.push_back(Node::integer(h.counts[i]));
  }
  return n;
}

Node pauseNode(const gc::PauseStats& p) {
  Node n;
  n.add("count", Node::integer(p.count));
  n.add("total_us", Node::micros(p.totalNanos));
  n.add("p50_us", Node::micros(p.p50Nanos));
  n.add("p99_us", Node::micros(p.p99Nanos));
  n.add("max_us", Node::micros(p.longestNanos));
  return n;
}

struct Snapshot {
  std::vector<sched::WorkerStats> workers;
  uint64_t hostTasksRun = 0;  // dispatches of the main task's thread (the host lane)
  sched::HistogramSnapshot readyDelay;  // every worker's, merged
  sched::HistogramSnapshot timerLateness;
  BlockingPoolStats pool;
  gc::Stats gc;
};

Snapshot takeSnapshot(const RuntimeImpl& rt) {
  Snapshot s;
  s.workers = rt.scheduler->stats();
  s.hostTasksRun = rt.scheduler->hostTasksRun();
  for (const auto& w : s.workers) s.readyDelay.merge(w.readyDelay);
  s.timerLateness = rt.scheduler->timerLateness();
  s.pool = rt.blockingPool.stats();
  s.gc = rt.state.heap().stats();
  return s;
}

Node takeDocument(const Snapshot& s) {
  Node doc;
  doc.add("version", Node::integer(kStatsSchemaVersion));
  Node& workers = doc.add("workers", Node::array());
  for (size_t i = 0; i < s.workers.size(); ++i) {
    const sched::WorkerStats& w = s.workers[i];
    Node row;
    row.add("worker", Node::integer(i));
    for (const WorkerMetric& m : kWorkerMetrics)
      row.add(keyOf(m), m.nanos ? Node::micros(w.*m.field) : Node::integer(w.*m.field));
    Node& steals = row.add("steals_from", Node::array());
    for (size_t v = 0; v < w.stealsFrom.size(); ++v) {
      if (w.stealsFrom[v] == 0) continue;
      Node e;
      e.add("worker", Node::integer(v));
      e.add("tasks", Node::integer(w.stealsFrom[v]));
      steals.items.push_back(std::move(e));
    }
    workers.items.push_back(std::move(row));
  }
  doc.add("host_tasks_run", Node::integer(s.hostTasksRun));
  doc.add("ready_delay", histogramNode(s.readyDelay));
  doc.add("timer_lateness", histogramNode(s.timerLateness));
  doc.add("blocking_wait", histogramNode(s.pool.wait));
  Node& pool = doc.add("blocking_pool", Node());
  pool.add("size", Node::integer(s.pool.size));
  pool.add("threads", Node::integer(s.pool.threads));
  pool.add("busy", Node::integer(s.pool.busy));
  pool.add("queued", Node::integer(s.pool.queued));
  pool.add("queue_depth_max", Node::integer(s.pool.queueDepthMax));
  pool.add("jobs_run", Node::integer(s.pool.jobsRun));
  pool.add("panics", Node::integer(s.pool.panics));
  Node& gcNode = doc.add("gc", Node());
  gcNode.add("minor", pauseNode(s.gc.minor));
  gcNode.add("major", pauseNode(s.gc.major));
  gcNode.add("slice", pauseNode(s.gc.slice));
  gcNode.add("incremental_cycles", Node::integer(s.gc.incrementalCycles));
  gcNode.add("promoted_bytes", Node::integer(s.gc.bytesPromotedTotal));
  gcNode.add("copied_bytes", Node::integer(s.gc.bytesCopiedTotal));
  gcNode.add("major_markers", Node::integer(s.gc.majorMarkersTotal));
  gcNode.add("major_helper_swept_chunks", Node::integer(s.gc.majorChunksHelpersSweptTotal));
  return doc;
}

// --- JSON
// ----------------------------------------------------------------------------

std::string formatNumber(const Node& n) {
  char buf[48];
  if (n.kind == Node::Kind::kInt)
    std::snprintf(buf, sizeof buf, "%" PRId64, n.i);
  else
    std::snprintf(buf, sizeof buf, "%.3f", n.f);
  return buf;
}

void writeJson(const Node& n, std::string& out) {
  switch (n.kind) {
    case Node::Kind::kInt:
    case Node::Kind::kFloat:
      out += formatNumber(n);
      return;
    case Node::Kind::kArray:
      out += '[';
      for (size_t i = 0; i < n.items.size(); ++i) {
        if (i) out += ',';
        writeJson(n.items[i], out);
      }
      out += ']';
      return;
    case Node::Kind::kObject:
      out += '{';
      for (size_t i = 0; i < n.fields.size(); ++i) {
        if (i) out += ',';
        out += '"' + n.fields[i].first + "\":";  // keys are fixed identifiers: no escapes
        writeJson(n.fields[i].second, out);
      }
      out += '}';
      return;
  }
}

// --- text
// ----------------------------------------------------------------------------

void appendCell(std::string& out, const std::string& text, size_t width) {
  out += ' ';
  if (text.size() < width) out.append(width - text.size(), ' ');
  out += text;
}

// A table whose columns are the fields of `rows` (objects with the same scalar
// fields; arrays are left out), each column as wide as its name or its widest
// value.
std::string formatTable(const std::string& first, const std::vector<std::pair<std::string, const Node*>>& rows) {
  if (rows.empty()) return {};
  std::vector<std::string> columns;
  for (const auto& [k, v] : rows[0].second->fields)
    if (v.kind != Node::Kind::kArray && v.kind != Node::Kind::kObject) columns.push_back(k);
  std::vector<size_t> widths;
  for (const std::string& c : columns) {
    size_t w = c.size();
    for (const auto& row : rows) w = std::max(w, formatNumber(*row.second->find(c)).size());
    widths.push_back(w);
  }
  size_t firstWidth = first.size();
  for (const auto& row : rows) firstWidth = std::max(firstWidth, row.first.size());
  std::string out = first + std::string(firstWidth - first.size(), ' ');
  for (size_t i = 0; i < columns.size(); ++i) appendCell(out, columns[i], widths[i]);
  out += '\n';
  for (const auto& [label, node] : rows) {
    out += label + std::string(firstWidth - label.size(), ' ');
    for (size_t i = 0; i < columns.size(); ++i) appendCell(out, formatNumber(*node->find(columns[i])), widths[i]);
    out += '\n';
  }
  return out;
}

std::string formatText(const Node& doc) {
  const Node& workers = *doc.find("workers");
  std::string out = "weft stats: " + std::to_string(workers.items.size()) + " workers\n";
  std::vector<std::pair<std::string, const Node*>> rows;
  for (const Node& w : workers.items) rows.emplace_back(formatNumber(*w.find("worker")), &w);
  // The worker number is the row label, not a column.
  std::vector<Node> trimmed;
  for (const Node& w : workers.items) {
    Node t;
    for (const auto& [k, v] : w.fields)
      if (k != "worker") t.add(k, v);
    trimmed.push_back(std::move(t));
  }
  for (size_t i = 0; i < rows.size(); ++i) rows[i].second = &trimmed[i];
  out += formatTable("worker", rows);
  out += "host_tasks_run " + formatNumber(*doc.find("host_tasks_run")) + " (run by the main task's thread)\n";
  out += "steals_from (row: thief, column: victim)\n";
  for (const Node& w : workers.items) {
    std::vector<uint64_t> row(workers.items.size());
    for (const Node& e : w.find("steals_from")->items) row[size_t(e.find("worker")->i)] = uint64_t(e.find("tasks")->i);
    out += "  " + formatNumber(*w.find("worker")) + ":";
    for (uint64_t n : row) out += " " + std::to_string(n);
    out += '\n';
  }
  std::vector<std::pair<std::string, const Node*>> hists = {{"ready_delay", doc.find("ready_delay")},
                                                            {"timer_lateness", doc.find("timer_lateness")},
                                                            {"blocking_wait", doc.find("blocking_wait")}};
  out += formatTable("histogram", hists);
  out += formatTable("pool", {{"blocking", doc.find("blocking_pool")}});
  const Node& gcNode = *doc.find("gc");
  out += formatTable("gc", {{"minor", gcNode.find("minor")},
                            {"major", gcNode.find("major")},
                            {"slice", gcNode.find("slice")}});
  out += "gc promoted_bytes " + formatNumber(*gcNode.find("promoted_bytes")) + ", copied_bytes " +
         formatNumber(*gcNode.find("copied_bytes")) + "\n";
  return out;
}

// --- Prometheus text exposition
// ------------------------------------------------------

struct PromWriter {
  std::string out;
  void header(const std::string& name, const char* type, const char* help) {
    out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& name, const std::string& labels, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    out += name + (labels.empty() ? "" : "{" + labels + "}") + " " + buf + "\n";
  }
  void histogram(const std::string& name, const char* help, const sched::HistogramSnapshot& h) {
    header(name, "histogram", help);
    uint64_t cumulative = 0;
    for (unsigned i = 0; i < sched::kHistogramBuckets; ++i) {
      cumulative += h.counts[i];
      uint64_t b = sched::histogramBound(i);
      char le[32];
      if (b) std::snprintf(le, sizeof le, "%.9g", double(b) / 1e9);
      sample(name + "_bucket", std::string("le=\"") + (b ? le : "+Inf") + "\"", double(cumulative));
    }
    sample(name + "_sum", "", double(h.sumNanos) / 1e9);
    sample(name + "_count", "", double(cumulative));
  }
};

std::string formatPrometheus(const Snapshot& s) {
  PromWriter p;
  for (const WorkerMetric& m : kWorkerMetrics) {
    std::string name = m.prom;
    p.header(name, m.gauge ? "gauge" : "counter", m.help);
    for (size_t i = 0; i < s.workers.size(); ++i) {
      uint64_t v = s.workers[i].*m.field;
      p.sample(name, "worker=\"" + std::to_string(i) + "\"", m.nanos ? double(v) / 1e9 : double(v));
    }
  }
  p.header("weft_host_tasks_run_total", "counter", "Dispatches the main task's thread ran while it waited.");
  p.sample("weft_host_tasks_run_total", "", double(s.hostTasksRun));
  p.header("weft_steals_total", "counter", "Tasks a worker (thief) stole from another (victim).");
  for (size_t i = 0; i < s.workers.size(); ++i)
    for (size_t v = 0; v < s.workers[i].stealsFrom.size(); ++v)
      p.sample("weft_steals_total", "thief=\"" + std::to_string(i) + "\",victim=\"" + std::to_string(v) + "\"",
               double(s.workers[i].stealsFrom[v]));
  p.histogram("weft_ready_delay_seconds", "Time from a task's ready publication to its dispatch (sampled).",
              s.readyDelay);
  p.histogram("weft_timer_lateness_seconds", "Time from a timer's deadline to its callback.", s.timerLateness);
  p.histogram("weft_blocking_wait_seconds", "Time a blocking job waited for a thread of the blocking pool.",
              s.pool.wait);
  const std::tuple<const char*, const char*, const char*, uint64_t> poolMetrics[] = {
      {"weft_blocking_pool_size", "gauge", "The most threads the blocking pool may start.", s.pool.size},
      {"weft_blocking_pool_threads", "gauge", "Threads the blocking pool started.", s.pool.threads},
      {"weft_blocking_pool_busy", "gauge", "Blocking jobs running now.", s.pool.busy},
      {"weft_blocking_pool_queued", "gauge", "Blocking jobs waiting for a thread now.", s.pool.queued},
      {"weft_blocking_pool_queue_depth_max", "gauge", "The most blocking jobs that waited at once.",
       s.pool.queueDepthMax},
      {"weft_blocking_jobs_total", "counter", "Blocking jobs run.", s.pool.jobsRun},
      {"weft_blocking_panics_total", "counter", "Blocking jobs whose C++ code threw.", s.pool.panics},
  };
  for (const auto& [name, type, help, v] : poolMetrics) {
    p.header(name, type, help);
    p.sample(name, "", double(v));
  }
  const std::pair<const char*, const gc::PauseStats*> gens[] = {
      {"minor", &s.gc.minor}, {"major", &s.gc.major}, {"slice", &s.gc.slice}};
  p.header("weft_gc_collections_total", "counter", "Collections by generation.");
  for (const auto& [g, ps] : gens)
    p.sample("weft_gc_collections_total", std::string("generation=\"") + g + "\"", double(ps->count));
  p.header("weft_gc_pause_seconds_total", "counter", "Time the world was stopped for collections, by generation.");
  for (const auto& [g, ps] : gens)
    p.sample("weft_gc_pause_seconds_total", std::string("generation=\"") + g + "\"", double(ps->totalNanos) / 1e9);
  p.header("weft_gc_pause_max_seconds", "gauge", "The longest collection pause, by generation.");
  for (const auto& [g, ps] : gens)
    p.sample("weft_gc_pause_max_seconds", std::string("generation=\"") + g + "\"", double(ps->longestNanos) / 1e9);
  p.header("weft_gc_incremental_cycles_total", "counter", "Incremental major collections finished.");
  p.sample("weft_gc_incremental_cycles_total", "", double(s.gc.incrementalCycles));
  p.header("weft_gc_promoted_bytes_total", "counter", "Bytes minor collections moved to the old generation.");
  p.sample("weft_gc_promoted_bytes_total", "", double(s.gc.bytesPromotedTotal));
  p.header("weft_gc_copied_bytes_total", "counter", "Bytes collections copied.");
  p.sample("weft_gc_copied_bytes_total", "", double(s.gc.bytesCopiedTotal));
  p.header("weft_gc_major_markers_total", "counter", "Markers that traced in major collections.");
  p.sample("weft_gc_major_markers_total", "", double(s.gc.majorMarkersTotal));
  p.header("weft_gc_major_helper_swept_chunks_total", "counter",
           "Chunks that stopped workers swept in major collections.");
  p.sample("weft_gc_major_helper_swept_chunks_total", "", double(s.gc.majorChunksHelpersSweptTotal));
  return p.out;
}

// --- task.stats()
// --------------------------------------------------------------------

// Allocation never collects (collections run only at safepoints), so the raw
// pointers of the tables made here stay valid until the native returns.
bool toLua(vm::State& S, const Node& n, Value& out) {
  switch (n.kind) {
    case Node::Kind::kInt:
      out = Value::integer(n.i);
      return true;
    case Node::Kind::kFloat:
      out = Value::number(n.f);
      return true;
    case Node::Kind::kArray: {
      vm::Table* t = vm::newTable(S, uint32_t(n.items.size()), 0);
      if (!t) return false;
      for (size_t i = 0; i < n.items.size(); ++i) {
        Value v;
        if (!toLua(S, n.items[i], v) || !vm::tableSetInt(S, t, int64_t(i + 1), v).isOk()) return false;
      }
      out = Value::table(t);
      return true;
    }
    case Node::Kind::kObject: {
      vm::Table* t = vm::newTable(S, 0, uint32_t(n.fields.size()));
      if (!t) return false;
      for (const auto& [k, child] : n.fields) {
        Value v;
        vm::String* key = vm::newString(S, k.c_str());
        if (!key || !toLua(S, child, v) || !vm::tableSetStr(S, t, key, v).isOk()) return false;
      }
      out = Value::table(t);
      return true;
    }
  }
  return false;
}

}  // namespace

std::string RuntimeImpl::statsReport(StatsFormat format) const {
  Snapshot s = takeSnapshot(*this);
  switch (format) {
    case StatsFormat::kJson: {
      std::string out;
      writeJson(takeDocument(s), out);
      return out + "\n";
    }
    case StatsFormat::kPrometheus:
      return formatPrometheus(s);
    case StatsFormat::kText:
      break;
  }
  return formatText(takeDocument(s));
}

std::string Runtime::statsReport(StatsFormat format) const { return impl_->statsReport(format); }

// The trace as Chrome trace-event JSON: one track (tid) per worker, one
// complete event
// ("ph":"X") per span, times in microseconds since the scheduler was made.
Status RuntimeImpl::writeTrace(const std::string& path, std::string& error) const {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return Status(StatusCode::kRuntimeError);
  }
  static const char* const kHow[] = {"yielded",   "budget spent", "suspended", "completed",
                                     "cancelled", "panicked",     "blocked"};
  uint64_t droppedTotal = 0;
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f);
  std::fputs(
      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{"
      "\"name\":\"weft\"}}",
      f);
  // One track per worker, then the main task's thread's (the tasks it ran while waiting).
  for (unsigned w = 0; w <= scheduler->workerCount(); ++w) {
    std::string track = w < scheduler->workerCount() ? "worker " + std::to_string(w) : "main thread";
    std::fprintf(f,
                 ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%"
                 "u,\"args\":{\"name\":\"%s\"}}",
                 w, track.c_str());
    uint64_t dropped = 0;
    for (const sched::TraceEvent& e : scheduler->trace(w, dropped)) {
      std::fprintf(f,
                   ",\n{\"name\":\"task %" PRIu64
                   "\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,"
                   "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"task\":%" PRIu64 ",\"end\":\"%s\"}}",
                   e.task, w, double(e.startNanos) / 1e3, double(e.endNanos - e.startNanos) / 1e3, e.task,
                   kHow[size_t(e.how)]);
    }
    droppedTotal += dropped;
  }
  std::fprintf(f, "\n],\"otherData\":{\"version\":\"weft-trace/1\",\"dropped\":%" PRIu64 "}}\n", droppedTotal);
  bool ok = !std::ferror(f);
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    error = "cannot write " + path;
    return Status(StatusCode::kRuntimeError);
  }
  return Status::ok();
}

Expected<void> Runtime::writeTrace(const std::string& path) const {
  std::string error;
  if (!impl_->writeTrace(path, error).isOk()) return Error{StatusCode::kRuntimeError, error};
  return {};
}

// task.stats(): the document of --stats=json as a Lua table (arrays 1-based,
// worker numbers 0-based as in every rendering).
NativeResult taskStats(CallContext& cx) {
  Node doc = takeDocument(takeSnapshot(*runtimeOf(cx.state())));
  Value v;
  if (!toLua(cx.state(), doc, v) || !cx.push(v)) return cx.memoryError();
  return cx.results(1);
}

}  // namespace weft::runtime
