// The os library (manual §6.9). Failures of the C library come back as Lua's
// (nil, message, errno) triple; date tables are read and written with metamethods, as
// lua_getfield/lua_setfield do.
#include "vm/lib/os.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "vm/host.h"
#include "vm/lib/libs.h"
#include "vm/lib/string.h"
#include "vm/number.h"

namespace weft::vm {

namespace {

// Single-letter conversions, then the E- and O-modified ones (C99).
constexpr std::string_view kDateSingle = "aAbBcCdDeFgGhHIjmMnprRStTuUVwWxXyYzZ%";
constexpr std::string_view kDateE = "cCxXyY";
constexpr std::string_view kDateO = "deHImMSuUVwWy";

// Length of the conversion at fmt[i] (after '%'), or 0 if invalid.
size_t conversionLength(std::string_view fmt, size_t i) {
  if (i >= fmt.size()) return 0;
  char c = fmt[i];
  if (c != 0 && kDateSingle.find(c) != std::string_view::npos) return 1;
  if (i + 1 >= fmt.size()) return 0;
  char m = fmt[i + 1];
  if (m == 0) return 0;
  if (c == 'E' && kDateE.find(m) != std::string_view::npos) return 2;
  if (c == 'O' && kDateO.find(m) != std::string_view::npos) return 2;
  return 0;
}

ExitHook gExitHook = nullptr;  // written once at start-up (api.h)

}  // namespace

bool formatDate(std::string& out, std::string_view fmt, const std::tm& tm, std::string& rest) {
  size_t i = 0;
  while (i < fmt.size()) {
    if (fmt[i] != '%') {
      out += fmt[i++];
      continue;
    }
    size_t len = conversionLength(fmt, i + 1);
    if (len == 0) {
      rest.assign(fmt.substr(i));
      return false;
    }
    char spec[4] = {'%', fmt[i + 1], len == 2 ? fmt[i + 2] : '\0', '\0'};
    char buf[256];
    size_t n = std::strftime(buf, sizeof buf, spec, &tm);
    out.append(buf, n);
    i += 1 + len;
  }
  return true;
}

void setExitHook(ExitHook hook) { gExitHook = hook; }

namespace {

NativeResult pushOne(CallContext& cx, const Value& v) {
  if (!cx.push(v)) return cx.stackOverflow();
  return cx.results(1);
}

bool checkTime(CallContext& cx, uint32_t arg, std::time_t& out) {
  int64_t t;
  if (!cx.checkInteger(arg, t)) return false;
  out = std::time_t(t);
  return true;
}

// Deterministic mode's logical clock (vm/state.h), from a fixed start: 2026-01-01 UTC.
constexpr std::time_t kLogicalEpoch = 1767225600;

std::time_t timeNow(CallContext& cx) {
  const State::DeterministicHooks* det = cx.state().deterministic;
  return det ? kLogicalEpoch + std::time_t(det->nowNanos(cx.state()) / 1000000000) : std::time(nullptr);
}

NativeResult osClock(CallContext& cx) {
  if (const State::DeterministicHooks* det = cx.state().deterministic) {
    return pushOne(cx, Value::number(double(det->nowNanos(cx.state())) / 1e9));
  }
  return pushOne(cx, Value::number(double(std::clock()) / double(CLOCKS_PER_SEC)));
}

Status setFieldMayGC(CallContext& cx, uint32_t tableSlot, const char* key, const Value& v) {
  String* k = cx.newString(key);
  if (!k) return Status(cx.memoryError().status);
  return cx.setMayGC(cx.at(tableSlot), Value::string(k), v);
}

// Writes every field of `tm` into the table at stack slot `slot` (os.date "*t" and the
// normalisation os.time does).
Status setAllFieldsMayGC(CallContext& cx, uint32_t slot, const std::tm& tm) {
  const struct {
    const char* key;
    int64_t value;
  } fields[] = {
      {"year", int64_t(tm.tm_year) + 1900}, {"month", int64_t(tm.tm_mon) + 1}, {"day", tm.tm_mday},
      {"hour", tm.tm_hour}, {"min", tm.tm_min}, {"sec", tm.tm_sec},
      {"yday", int64_t(tm.tm_yday) + 1}, {"wday", int64_t(tm.tm_wday) + 1},
  };
  for (const auto& f : fields)
    if (Status st = setFieldMayGC(cx, slot, f.key, Value::integer(f.value)); !st.isOk()) return st;
  if (tm.tm_isdst >= 0) return setFieldMayGC(cx, slot, "isdst", Value::boolean(tm.tm_isdst != 0));
  return Status::ok();
}

NativeResult osDate(CallContext& cx) {
  String* fmtString;
  if (!cx.optString(1, nullptr, fmtString)) return cx.failure();
  std::string fmt = fmtString ? std::string(fmtString->view()) : "%c";
  std::time_t t;
  if (cx.arg(2).isNil()) t = timeNow(cx);
  else if (!checkTime(cx, 2, t)) return cx.failure();
  std::string_view f = fmt;
  bool utc = !f.empty() && f[0] == '!';
  if (utc) f.remove_prefix(1);
  std::tm tm;
  bool ok = utc ? gmtime_r(&t, &tm) != nullptr : localtime_r(&t, &tm) != nullptr;
  if (!ok) return cx.error("date result cannot be represented in this installation");
  if (f.substr(0, 2) == "*t") {
    Table* table = cx.newTable(0, 9);
    if (!table) return cx.memoryError();
    uint32_t slot = cx.top();
    if (!cx.push(Value::table(table))) return cx.stackOverflow();
    if (Status st = setAllFieldsMayGC(cx, slot, tm); !st.isOk()) return NativeResult{0, st.code()};
    cx.setTop(slot + 1);
    return cx.results(1);
  }
  BufferLease lease;
  std::string rest;
  if (!formatDate(lease.get(), f, tm, rest)) return cx.argError(1, "invalid conversion specifier '" + rest + "'");
  return returnString(cx, lease.get());
}

// Reads an integer field of the date table at `slot`: `def` < 0 means required;
// `delta` is subtracted (1900 for years, 1 for months) with Lua's bound checks.
bool getFieldMayGC(CallContext& cx, uint32_t slot, const char* key, int def, int delta, int& out, NativeResult& outcome) {
  String* k = cx.newString(key);
  if (!k) {
    outcome = cx.memoryError();
    return false;
  }
  Value v;
  if (Status st = cx.getMayGC(cx.at(slot), Value::string(k), v); !st.isOk()) {
    outcome = NativeResult{0, st.code()};
    return false;
  }
  int64_t res;
  if (!((v.isNumber() || v.isString()) && toInteger(v, res))) {
    if (!v.isNil()) {
      outcome = cx.error("field '%s' is not an integer", key);
      return false;
    }
    if (def < 0) {
      outcome = cx.error("field '%s' missing in date table", key);
      return false;
    }
    out = def;
    return true;
  }
  bool inRange = res >= 0 ? res - delta <= INT32_MAX : INT32_MIN + int64_t(delta) <= res;
  if (!inRange) {
    outcome = cx.error("field '%s' is out-of-bound", key);
    return false;
  }
  out = int(res - delta);
  return true;
}

NativeResult osTime(CallContext& cx) {
  if (cx.arg(1).isNil()) return pushOne(cx, Value::integer(int64_t(timeNow(cx))));
  Table* unused;
  if (!cx.checkTable(1, unused)) return cx.failure();
  uint32_t slot = cx.argIndex(1);
  std::tm tm{};
  NativeResult outcome;
  if (!getFieldMayGC(cx, slot, "year", -1, 1900, tm.tm_year, outcome) || !getFieldMayGC(cx, slot, "month", -1, 1, tm.tm_mon, outcome) ||
      !getFieldMayGC(cx, slot, "day", -1, 0, tm.tm_mday, outcome) || !getFieldMayGC(cx, slot, "hour", 12, 0, tm.tm_hour, outcome) ||
      !getFieldMayGC(cx, slot, "min", 0, 0, tm.tm_min, outcome) || !getFieldMayGC(cx, slot, "sec", 0, 0, tm.tm_sec, outcome))
    return outcome;
  String* k = cx.newString("isdst");
  if (!k) return cx.memoryError();
  Value dst;
  if (Status st = cx.getMayGC(cx.at(slot), Value::string(k), dst); !st.isOk()) return NativeResult{0, st.code()};
  tm.tm_isdst = dst.isNil() ? -1 : dst.isTruthy();
  std::time_t t = std::mktime(&tm);
  // Like Lua, -1 is taken as mktime's failure even though it names a valid second.
  if (t == std::time_t(-1))
    return cx.error("time result cannot be represented in this installation");
  if (Status st = setAllFieldsMayGC(cx, slot, tm); !st.isOk()) return NativeResult{0, st.code()};
  return pushOne(cx, Value::integer(int64_t(t)));
}

NativeResult osDifftime(CallContext& cx) {
  std::time_t a, b;
  if (!checkTime(cx, 1, a) || !checkTime(cx, 2, b)) return cx.failure();
  return pushOne(cx, Value::number(std::difftime(a, b)));
}

// The child of os.execute, waited for off the heap (on the blocking pool when the task
// can suspend).
struct ExecuteJob final : BlockingJob {
  std::string command;
  int stat = 0;
  int err = 0;
  void run() override {
    errno = 0;
    stat = std::system(command.c_str());
    err = errno;
  }
  NativeResult finishMayGC(CallContext& cx) override {
    errno = err;
    return execResultOf(cx, stat);
  }
};

NativeResult osExecute(CallContext& cx) {
  String* cmd;
  if (!cx.optString(1, nullptr, cmd)) return cx.failure();
  if (!cmd) return pushOne(cx, Value::boolean(std::system(nullptr) != 0));
  auto job = std::make_shared<ExecuteJob>();
  job->command = std::string(cmd->view());
  return runBlockingMayGC(cx, std::move(job));
}

NativeResult osExit(CallContext& cx) {
  int64_t status;
  Value v = cx.arg(1);
  if (v.isBoolean()) status = v.isTruthy() ? EXIT_SUCCESS : EXIT_FAILURE;
  else if (!cx.optInteger(1, EXIT_SUCCESS, status)) return cx.failure();
  bool close = cx.arg(2).isTruthy();
  if (gExitHook) gExitHook(cx.state(), int(status), close);
  if (close) HostStack(cx.state()).closeMayGC();
  std::fflush(nullptr);
  std::exit(int(status));
}

NativeResult osGetenv(CallContext& cx) {
  String* name;
  if (!cx.checkString(1, name)) return cx.failure();
  const char* v = std::getenv(std::string(name->view()).c_str());
  if (!v) return pushOne(cx, Value::nil());
  return returnString(cx, v);
}

NativeResult osRemove(CallContext& cx) {
  String* name;
  if (!cx.checkString(1, name)) return cx.failure();
  std::string path(name->view());
  errno = 0;
  return fileResult(cx, std::remove(path.c_str()) == 0, path.c_str());
}

NativeResult osRename(CallContext& cx) {
  String* from;
  String* to;
  if (!cx.checkString(1, from) || !cx.checkString(2, to)) return cx.failure();
  std::string a(from->view()), b(to->view());
  errno = 0;
  return fileResult(cx, std::rename(a.c_str(), b.c_str()) == 0, nullptr);
}

NativeResult osSetlocale(CallContext& cx) {
  static constexpr int kCategories[] = {LC_ALL, LC_COLLATE, LC_CTYPE, LC_MONETARY, LC_NUMERIC, LC_TIME};
  static constexpr const char* kNames[] = {"all", "collate", "ctype", "monetary", "numeric", "time"};
  String* locale;
  String* category;
  if (!cx.optString(1, nullptr, locale) || !cx.optString(2, nullptr, category)) return cx.failure();
  int index = 0;
  if (category) {
    index = -1;
    for (int i = 0; i < 6; i++)
      if (category->view() == kNames[i]) index = i;
    if (index < 0) return cx.argError(2, "invalid option '" + std::string(category->view()) + "'");
  }
  std::string l = locale ? std::string(locale->view()) : std::string();
  const char* r = std::setlocale(kCategories[index], locale ? l.c_str() : nullptr);
  if (!r) return pushOne(cx, Value::nil());
  return returnString(cx, r);
}

NativeResult osTmpname(CallContext& cx) {
  char name[] = "/tmp/lua_XXXXXX";
  int fd = mkstemp(name);
  if (fd == -1) return cx.error("unable to generate a unique filename");
  ::close(fd);
  return returnString(cx, name);
}

constexpr LibEntry kOsLib[] = {
    {"clock", worldEffect<osClock>}, {"date", worldEffect<osDate>}, {"difftime", osDifftime},
    {"execute", worldEffect<osExecute>}, {"exit", worldEffect<osExit>}, {"getenv", osGetenv},
    {"remove", worldEffect<osRemove>}, {"rename", worldEffect<osRename>}, {"setlocale", worldEffect<osSetlocale>},
    {"time", worldEffect<osTime>}, {"tmpname", worldEffect<osTmpname>},
};

}  // namespace

Status openOsLib(State& state) { return openLibrary(state, "os", kOsLib, nullptr); }

}  // namespace weft::vm
