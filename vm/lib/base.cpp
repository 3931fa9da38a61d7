// The base library (manual §6.1).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "frontend/numparse.h"
#include "vm/api.h"
#include "vm/debug.h"
#include "vm/interp.h"
#include "vm/jit_abi.h"
#include "vm/lib/libs.h"
#include "vm/meta.h"
#include "vm/number.h"
#include "vm/proto.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

namespace {

NativeResult fail(Status st) { return NativeResult{0, st.code()}; }

NativeResult pushString(CallContext& cx, std::string_view s) {
  String* str = cx.newString(s);
  if (!str) return cx.memoryError();
  if (!cx.push(Value::string(str))) return cx.stackOverflow();
  return cx.results(1);
}

NativeResult basePrint(CallContext& cx) {
  std::string line;
  for (uint32_t i = 1; i <= cx.argCount(); i++) {
    String* s;
    Status st = cx.toStringMayGC(cx.arg(i), s);
    if (!st.isOk()) return fail(st);
    if (i > 1) line += '\t';
    line.append(s->view());
  }
  line += '\n';
  // A terminal or a pipe may block (a slow reader): detached, so no collection waits.
  bool detach = stdoutMayWait();
  if (detach) enterOsWait(cx.state(), OsWait::kShort);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
  if (detach && !leaveOsWait(cx.state(), OsWait::kShort).isOk()) return NativeResult{0, StatusCode::kFatal};
  return cx.noResults();
}

NativeResult baseType(CallContext& cx) {
  if (!cx.checkAny(1)) return cx.failure();
  if (!cx.push(Value::string(cx.state().typeNames[int(basicType(cx.arg(1)))]))) return cx.stackOverflow();
  return cx.results(1);
}

NativeResult baseToString(CallContext& cx) {
  if (!cx.checkAny(1)) return cx.failure();
  String* s;
  Status st = cx.toStringMayGC(cx.arg(1), s);
  if (!st.isOk()) return fail(st);
  cx.push(Value::string(s));
  return cx.results(1);
}

NativeResult baseToNumber(CallContext& cx) {
  if (cx.arg(2).isNil()) {
    Value v = cx.arg(1);
    if (v.isNumber()) {
      cx.push(v);
      return cx.results(1);
    }
    if (v.isString()) {
      if (auto n = stringToNumber(v.asString()->view())) {
        cx.push(*n);
        return cx.results(1);
      }
    } else if (!cx.checkAny(1)) {
      return cx.failure();
    }
    cx.push(Value::nil());
    return cx.results(1);
  }
  int64_t base;
  if (!cx.checkInteger(2, base)) return cx.failure();
  if (!cx.checkType(1, Tag::String)) return cx.failure();
  if (base < 2 || base > 36) return cx.argError(2, "base out of range");
  int64_t out;
  if (frontend::parseIntegerInBase(cx.arg(1).asString()->view(), int(base), out)) cx.push(Value::integer(out));
  else cx.push(Value::nil());
  return cx.results(1);
}

NativeResult baseNext(CallContext& cx) {
  Table* t;
  if (!cx.checkTable(1, t)) return cx.failure();
  Value key = cx.arg(2), val;
  bool found = false;
  Status st = tableNext(t, key, val, found);
  if (!st.isOk()) {
    String* msg = cx.newString("invalid key to 'next'");
    if (!msg) return cx.memoryError();
    return cx.raise(Value::string(msg));
  }
  if (!found) {
    cx.push(Value::nil());
    return cx.results(1);
  }
  cx.push(key);
  cx.push(val);
  return cx.results(2);
}

// __pairs may yield (as in Lua 5.4): its three results end pairs.
NativeResult pairsCont(CallContext& cx, StatusCode, intptr_t) { return cx.results(3); }

NativeResult basePairs(CallContext& cx) {
  if (!cx.checkAny(1)) return cx.failure();
  Value v = cx.arg(1);
  Value tm = metamethodOf(cx.state(), v, Meta::Pairs);
  if (tm.isNil()) {
    cx.push(Value::lightNative(baseNext));
    cx.push(v);
    cx.push(Value::nil());
    return cx.results(3);
  }
  uint32_t func = cx.top();
  cx.push(tm);
  cx.push(v);
  return cx.callK(func, 1, 3, 0, pairsCont);
}

NativeResult ipairsAux(CallContext& cx) {
  int64_t i;
  if (!cx.checkInteger(2, i)) return cx.failure();
  i = int64_t(uint64_t(i) + 1);  // wraps at math.maxinteger, as Lua's integer arithmetic does
  Value v;
  Value t = cx.arg(1);
  if (t.isTable()) {
    const Value* slot = tableArraySlot(t.asTable(), i);
    v = slot ? loadSlot(*slot) : Value::nil();
    if (v.isNil()) {
      Status st = cx.getMayGC(t, Value::integer(i), v);
      if (!st.isOk()) return fail(st);
    }
  } else {
    Status st = cx.getMayGC(t, Value::integer(i), v);
    if (!st.isOk()) return fail(st);
  }
  if (v.isNil()) {
    cx.push(v);
    return cx.results(1);
  }
  cx.push(Value::integer(i));
  cx.push(v);
  return cx.results(2);
}

NativeResult baseIpairs(CallContext& cx) {
  if (!cx.checkAny(1)) return cx.failure();
  Value v = cx.arg(1);
  cx.push(Value::lightNative(ipairsAux));
  cx.push(v);
  cx.push(Value::integer(0));
  return cx.results(3);
}

NativeResult baseSelect(CallContext& cx) {
  uint32_t n = cx.argCount();
  Value a = cx.arg(1);
  if (a.isString() && a.asString()->length == 1 && a.asString()->data[0] == '#') {
    cx.push(Value::integer(int64_t(n) - 1));
    return cx.results(1);
  }
  int64_t i;
  if (!cx.checkInteger(1, i)) return cx.failure();
  if (i < 0) i = int64_t(n) + i;
  else if (i > int64_t(n)) i = int64_t(n);
  if (i < 1) return cx.argError(1, "index out of range");
  return cx.results(int32_t(int64_t(n) - i));
}

NativeResult baseRawEqual(CallContext& cx) {
  if (!cx.checkAny(1) || !cx.checkAny(2)) return cx.failure();
  cx.push(Value::boolean(rawEquals(cx.arg(1), cx.arg(2))));
  return cx.results(1);
}

NativeResult baseRawGet(CallContext& cx) {
  Table* t;
  if (!cx.checkTable(1, t) || !cx.checkAny(2)) return cx.failure();
  cx.push(tableGet(t, cx.arg(2)));
  return cx.results(1);
}

NativeResult baseRawSet(CallContext& cx) {
  Table* t;
  if (!cx.checkTable(1, t) || !cx.checkAny(2) || !cx.checkAny(3)) return cx.failure();
  Value key = cx.arg(2);
  Status st = tableSet(cx.state(), t, key, cx.arg(3));
  bool badKey = key.isNil() || (key.isFloat() && key.asFloat() != key.asFloat());
  if (!st.isOk() && !badKey) return cx.memoryError();
  if (!st.isOk()) {
    String* msg = cx.newString(key.isNil() ? "index is nil" : "index is NaN");
    if (!msg) return cx.memoryError();
    return cx.raise(Value::string(msg));
  }
  cx.push(cx.arg(1));
  return cx.results(1);
}

NativeResult baseRawLen(CallContext& cx) {
  Value v = cx.arg(1);
  if (v.isTable()) cx.push(Value::integer(int64_t(tableLength(v.asTable()))));
  else if (v.isString()) cx.push(Value::integer(int64_t(v.asString()->length)));
  else return cx.typeError(1, "table or string");
  return cx.results(1);
}

NativeResult baseSetMetatable(CallContext& cx) {
  Table* t;
  if (!cx.checkTable(1, t)) return cx.failure();
  Value mt = cx.arg(2);
  if (!mt.isNil() && !mt.isTable()) return cx.typeError(2, "nil or table");
  State& S = cx.state();
  if (!metaField(S, tableMetatable(t), Meta::Metatable).isNil()) return cx.error("cannot change a protected metatable");
  Table* m = mt.isNil() ? nullptr : mt.asTable();
  tableSetMetatable(t, m);
  if (m && !metaField(S, m, Meta::Gc).isNil()) S.heap().registerFinalizable(asGc(t));
  cx.push(cx.arg(1));
  return cx.results(1);
}

NativeResult baseGetMetatable(CallContext& cx) {
  if (!cx.checkAny(1)) return cx.failure();
  State& S = cx.state();
  Table* mt = metatableOf(S, cx.arg(1));
  if (!mt) {
    cx.push(Value::nil());
    return cx.results(1);
  }
  Value protectedMt = metaField(S, mt, Meta::Metatable);
  cx.push(protectedMt.isNil() ? Value::table(mt) : protectedMt);
  return cx.results(1);
}

NativeResult baseError(CallContext& cx) {
  int64_t level;
  if (!cx.optInteger(2, 1, level)) return cx.failure();
  Value v = cx.arg(1);
  if (v.isString() && level > 0) {
    std::string msg = wherePrefix(cx.threadData(), int(level));
    msg.append(v.asString()->view());
    String* s = cx.newString(msg);
    if (!s) return cx.memoryError();
    v = Value::string(s);
  }
  return cx.raise(v);
}

NativeResult baseAssert(CallContext& cx) {
  if (cx.arg(1).isTruthy()) return cx.results(int32_t(cx.argCount()));
  if (!cx.checkAny(1)) return cx.failure();
  // The message (given or default) is raised as error(message) would raise it: a string
  // is placed at assert's caller (no position when that is not Lua code).
  Value v = cx.hasArg(2) ? cx.arg(2) : Value::nil();
  if (cx.hasArg(2) && !v.isString()) return cx.raise(v);
  std::string msg = wherePrefix(cx.threadData(), 1);
  if (cx.hasArg(2)) {
    msg.append(v.asString()->view());
  } else {
    msg.append("assertion failed!");
  }
  String* s = cx.newString(msg);
  if (!s) return cx.memoryError();
  return cx.raise(Value::string(s));
}

}  // namespace

namespace {

// The end of pcall and xpcall, at once or after a yield in the protected call (their
// continuation): `true` sits in slot `ctx`, the results above it; or the error value
// is on top, and false and it are the results.
NativeResult finishPcall(CallContext& cx, StatusCode status, intptr_t ctx) {
  uint32_t first = uint32_t(ctx);
  if (status != StatusCode::kOk && status != StatusCode::kYield) {
    Value err = cx.at(cx.top() - 1);
    cx.setAt(first, Value::boolean(false));
    cx.setAt(first + 1, err);
    cx.setTop(first + 2);
    return cx.results(2);
  }
  return cx.results(int32_t(cx.top() - first));
}

// Opens n slots at `at`, moving what is above them up.
bool openSlots(CallContext& cx, uint32_t at, uint32_t n) {
  uint32_t top = cx.top();
  if (!cx.ensureStack(n)) return false;
  cx.setTop(top + n);
  for (uint32_t j = top; j-- > at;) cx.setAt(j + n, cx.at(j));
  return true;
}

}  // namespace

// pcall called by a native or as a coroutine's body (Lua code runs it as a marker frame):
// true goes below the function, which is called in place with its arguments.
NativeResult basePcall(CallContext& cx) {
  if (!cx.checkAny(1)) return cx.failure();
  uint32_t first = cx.argIndex(1);
  if (!openSlots(cx, first, 1)) return cx.stackOverflow();
  cx.setAt(first, Value::boolean(true));
  return cx.pcallK(first + 1, int32_t(cx.argCount()) - 1, -1, 0, first, finishPcall);
}

// xpcall(f, msgh, ...): true and a copy of f go above the handler, the arguments above
// them.
NativeResult baseXpcall(CallContext& cx) {
  if (!cx.checkType(2, Tag::LuaClosure)) return cx.failure();
  uint32_t first = cx.argIndex(3);
  Value f = cx.arg(1);
  if (!openSlots(cx, first, 2)) return cx.stackOverflow();
  cx.setAt(first, Value::boolean(true));
  cx.setAt(first + 1, f);
  return cx.pcallK(first + 1, int32_t(cx.argCount()) - 2, -1, cx.argIndex(2), first, finishPcall);
}

namespace {

NativeResult loadResult(CallContext& cx, Status st, Value fn, const std::string& err, uint32_t envArg) {
  if (!st.isOk()) {
    cx.push(Value::nil());
    String* s = cx.newString(err);
    if (!s) return cx.memoryError();
    cx.push(Value::string(s));
    return cx.results(2);
  }
  if (envArg && cx.hasArg(envArg)) {
    LuaClosure* c = fn.asLuaClosure();
    if (c->numUpvalues > 0) {
      Upvalue* uv = newUpvalueClosed(cx.state(), cx.arg(envArg));
      if (!uv) return cx.memoryError();
      storeRef(c, c->upvalues[0], uv);
    }
  }
  cx.push(fn);
  return cx.results(1);
}

NativeResult baseLoad(CallContext& cx) {
  Value chunk = cx.arg(1);
  String* mode;
  String* name = nullptr;
  if (!cx.optString(3, nullptr, mode)) return cx.failure();
  std::string modeStr = mode ? std::string(mode->view()) : "bt";
  std::string text;
  std::string chunkName;
  if (chunk.isString() || chunk.isNumber()) {
    // A number is a string here, as lua_tolstring makes it.
    String* source;
    if (!cx.checkString(1, source)) return cx.failure();
    text = std::string(source->view());
    if (!cx.optString(2, nullptr, name)) return cx.failure();
    chunkName = name ? std::string(name->view()) : text;
  } else if (chunk.isFunction()) {
    if (!cx.optString(2, nullptr, name)) return cx.failure();
    chunkName = name ? std::string(name->view()) : "=(load)";
    uint32_t fnIndex = cx.argIndex(1);
    for (;;) {
      uint32_t func = cx.top();
      cx.push(cx.at(fnIndex));
      Status st = cx.callMayGC(func, 0, 1);
      if (!st.isOk()) {
        Value err = cx.at(cx.top() > func ? func : func);
        cx.setTop(func);
        cx.push(Value::nil());
        cx.push(cx.threadData()->error.isNil() ? err : cx.threadData()->error);
        return cx.results(2);
      }
      Value piece = cx.at(func);
      cx.setTop(func);
      if (piece.isNil()) break;
      if (!piece.isString()) {
        cx.push(Value::nil());
        String* s = cx.newString("reader function must return a string");
        if (!s) return cx.memoryError();
        cx.push(Value::string(s));
        return cx.results(2);
      }
      if (piece.asString()->length == 0) break;
      text.append(piece.asString()->view());
    }
  } else {
    return cx.typeError(1, "function");
  }
  Value fn;
  std::string err;
  Status st = loadChunk(cx.state(), text, chunkName, modeStr, fn, err);
  return loadResult(cx, st, fn, err, 4);
}

bool readFile(const char* path, std::string& out, std::string& err) {
  FILE* f = path ? std::fopen(path, "rb") : stdin;
  if (!f) {
    err = std::string("cannot open ") + path + ": " + std::strerror(errno);
    return false;
  }
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  bool bad = std::ferror(f);
  if (path) std::fclose(f);
  if (bad) {
    err = std::string("cannot read ") + (path ? path : "stdin");
    return false;
  }
  // As Lua's loadfile: a UTF-8 byte-order mark is skipped, then a first line starting
  // with '#' (a shebang), keeping the line count unless a binary chunk follows.
  size_t pos = out.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  bool comment = pos < out.size() && out[pos] == '#';
  if (comment) {
    size_t nl = out.find('\n', pos);
    pos = nl == std::string::npos ? out.size() : nl + 1;
  }
  bool binary = pos < out.size() && out[pos] == '\x1b';
  out.erase(0, pos);
  if (comment && !binary) out.insert(0, 1, '\n');
  return true;
}

NativeResult baseLoadFile(CallContext& cx) {
  String* fname;
  String* mode;
  if (!cx.optString(1, nullptr, fname) || !cx.optString(2, nullptr, mode)) return cx.failure();
  std::string path = fname ? std::string(fname->view()) : std::string();
  std::string text, err;
  if (!readFile(fname ? path.c_str() : nullptr, text, err)) {
    Value fn = Value::nil();
    return loadResult(cx, Status(StatusCode::kRuntimeError), fn, err, 0);
  }
  Value fn;
  std::string chunkName = fname ? "@" + path : "=stdin";
  Status st = loadChunk(cx.state(), text, chunkName, mode ? std::string(mode->view()) : "bt", fn, err);
  return loadResult(cx, st, fn, err, 3);
}

// The chunk's results, from slot `ctx` on, end dofile (at once, or after a yield in it).
NativeResult doFileCont(CallContext& cx, StatusCode, intptr_t ctx) {
  return cx.results(int32_t(cx.top() - uint32_t(ctx)));
}

NativeResult baseDoFile(CallContext& cx) {
  String* fname;
  if (!cx.optString(1, nullptr, fname)) return cx.failure();
  std::string path = fname ? std::string(fname->view()) : std::string();
  std::string text, err;
  Value fn;
  Status st = Status(StatusCode::kRuntimeError);
  if (readFile(fname ? path.c_str() : nullptr, text, err)) {
    st = loadChunk(cx.state(), text, fname ? "@" + path : "=stdin", "bt", fn, err);
  }
  if (!st.isOk()) {
    String* s = cx.newString(err);
    if (!s) return cx.memoryError();
    return cx.raise(Value::string(s));
  }
  uint32_t func = cx.top();
  cx.push(fn);
  return cx.callK(func, 0, -1, func, doFileCont);
}

// collectgarbage("step", n) (docs/design/gc-step.md). Incremental mode: one step of an
// incremental major, which traces about n KB (a basic step of kBasicStepBytes for
// n == 0), starting a cycle if none marks, and returns true when the step ran the
// cycle's final pause. A loop of steps until true costs work proportional to the heap.
// In generational mode a step is one minor collection (a young one in Lua), whatever
// the old generation holds, and reports no cycle end, as lua 5.4 does. Steps run while
// automatic collection is stopped and leave it stopped.
constexpr uint64_t kBasicStepBytes = uint64_t(1) << 20;  // about lua 5.4's default basic step

}  // namespace

Status gcStepMayGC(State& S, ThreadData* t, int64_t kb, bool& cycleEnded) {
  cycleEnded = false;
  if (S.gcGenerational) return minorCollectMayGC(S, t);
  kb = std::clamp<int64_t>(kb, 0, INT32_MAX);  // lua reads n as a C int
  uint64_t work = kb == 0 ? kBasicStepBytes : uint64_t(kb) * 1024;
  return stepCollectMayGC(S, t, static_cast<size_t>(work), cycleEnded);
}

namespace {

NativeResult gcStep(CallContext& cx) {
  int64_t kb;
  if (!cx.optInteger(2, 0, kb)) return cx.failure();
  bool cycleEnded;
  Status st = gcStepMayGC(cx.state(), cx.threadData(), kb, cycleEnded);
  if (!st.isOk()) return fail(st);
  cx.push(Value::boolean(cycleEnded));
  return cx.results(1);
}

NativeResult baseCollectGarbage(CallContext& cx) {
  static const char* const kOptions[] = {"collect", "stop", "restart", "count", "step", "setpause",
                                         "setstepmul", "isrunning", "generational", "incremental"};
  String* opt;
  if (!cx.optString(1, nullptr, opt)) return cx.failure();
  std::string o = opt ? std::string(opt->view()) : "collect";
  int which = -1;
  for (int j = 0; j < 10; j++) if (o == kOptions[j]) which = j;
  if (which < 0) return cx.argError(1, "invalid option '" + o + "'");
  // Inside a finalizer the collector is busy: every option fails, as in lua 5.4.
  if (cx.threadData()->runningFinalizers) {
    cx.push(Value::nil());
    return cx.results(1);
  }
  State& S = cx.state();
  gc::Heap& heap = S.heap();
  switch (which) {
    case 0: {
      Status st = fullCollectMayGC(S, cx.threadData());
      if (!st.isOk()) return fail(st);
      cx.push(Value::integer(0));
      return cx.results(1);
    }
    case 4: return gcStep(cx);
    case 1: heap.setAutomatic(false); cx.push(Value::integer(0)); return cx.results(1);
    case 2: heap.setAutomatic(true); cx.push(Value::integer(0)); return cx.results(1);
    case 3: cx.push(Value::number(double(heap.bytesInUse(cx.state().mutator())) / 1024.0)); return cx.results(1);
    case 5:
    case 6: {
      int64_t value;
      if (!cx.optInteger(2, 0, value)) return cx.failure();
      int64_t& param = which == 5 ? S.gcPauseQuarters : S.gcStepMulQuarters;
      cx.push(Value::integer(param * 4));
      param = value / 4;
      return cx.results(1);
    }
    case 7: cx.push(Value::boolean(heap.automatic())); return cx.results(1);
    default: {
      int64_t pause, stepMul;
      if (!cx.optInteger(2, 0, pause) || !cx.optInteger(3, 0, stepMul)) return cx.failure();
      if (which == 9 && pause != 0) S.gcPauseQuarters = pause / 4;
      if (which == 9 && stepMul != 0) S.gcStepMulQuarters = stepMul / 4;
      bool wasGen = S.gcGenerational;
      S.setGcMode(which == 8);
      return pushString(cx, wasGen ? "generational" : "incremental");
    }
  }
}

NativeResult baseWarn(CallContext& cx) {
  uint32_t n = cx.argCount();
  String* s;
  if (!cx.checkString(1, s)) return cx.failure();
  for (uint32_t i = 2; i <= n; i++) if (!cx.checkString(i, s)) return cx.failure();
  State& S = cx.state();
  String* first = cx.arg(1).asString();
  if (n == 1 && first->length > 0 && first->data[0] == '@' && !S.warningContinues && !S.warnHook) {
    std::string_view ctl = first->view();
    if (ctl == "@on") S.warningsOn = true;
    else if (ctl == "@off") S.warningsOn = false;
    return cx.noResults();
  }
  for (uint32_t i = 1; i <= n; i++) emitWarning(S, cx.arg(i).asString()->view(), i < n);
  return cx.noResults();
}

constexpr LibEntry kBaseFuncs[] = {
    {"assert", baseAssert},
    {"collectgarbage", worldEffect<baseCollectGarbage>},
    {"dofile", worldEffect<baseDoFile>},
    {"error", baseError},
    {"getmetatable", baseGetMetatable},
    {"ipairs", baseIpairs},
    {"load", baseLoad},
    {"loadfile", worldEffect<baseLoadFile>},
    {"next", baseNext},
    {"pairs", basePairs},
    {"pcall", basePcall},
    {"print", worldEffect<basePrint>},
    {"rawequal", baseRawEqual},
    {"rawget", baseRawGet},
    {"rawlen", baseRawLen},
    {"rawset", baseRawSet},
    {"select", baseSelect},
    {"setmetatable", baseSetMetatable},
    {"tonumber", baseToNumber},
    {"tostring", baseToString},
    {"type", baseType},
    {"warn", worldEffect<baseWarn>},
    {"xpcall", baseXpcall},
};

}  // namespace

Status openBaseLib(State& state) {
  const Status noMemory(StatusCode::kMemoryError);
  Table* g = state.globals;
  for (const LibEntry& e : kBaseFuncs) {
    String* key = newString(state, e.name);
    if (!key || !tableSetStr(state, g, key, Value::lightNative(e.fn)).isOk()) return noMemory;
  }
  String* gKey = newString(state, "_G");
  String* vKey = newString(state, "_VERSION");
  String* version = newString(state, "Lua 5.4");
  if (!gKey || !vKey || !version) return noMemory;
  if (!tableSetStr(state, g, gKey, Value::table(g)).isOk() ||
      !tableSetStr(state, g, vKey, Value::string(version)).isOk()) {
    return noMemory;
  }
  // package.loaded._G
  String* loadedKey = newString(state, "_LOADED");
  if (!loadedKey) return noMemory;
  Value loaded = tableGetStr(state.registry, loadedKey);
  if (!loaded.isTable()) {
    Table* l = newTable(state, 0, 16);
    if (!l || !tableSetStr(state, state.registry, loadedKey, Value::table(l)).isOk()) return noMemory;
    loaded = Value::table(l);
  }
  if (!tableSetStr(state, loaded.asTable(), gKey, Value::table(g)).isOk()) return noMemory;
  return Status::ok();
}

NativeFn baseKnownNative(uint8_t id) {
  switch (id) {
    case kWeftJitNativeIpairs: return baseIpairs;
    case kWeftJitNativePairs: return basePairs;
    case kWeftJitNativeIpairsAux: return ipairsAux;
    case kWeftJitNativeNext: return baseNext;
    default: return nullptr;
  }
  return nullptr;
}

}  // namespace weft::vm
