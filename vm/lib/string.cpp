// The string library (manual §6.4) except format and pack: byte/char/len/sub/rep and
// friends, the pattern functions over lpattern.h, the string metatable with the 5.4
// string-arithmetic metamethods, and the helpers string.h declares.
#include "vm/lib/string.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "frontend/chunkio.h"
#include "vm/jit_abi.h"
#include "vm/lib/libs.h"
#include "vm/lib/lpattern.h"
#include "vm/meta.h"
#include "vm/number.h"
#include "vm/proto.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

// ---- shared helpers ---------------------------------------------------------------

namespace {
// Buffers above this capacity are freed rather than pooled (one huge gsub should not
// pin its memory for the life of the thread).
constexpr size_t kMaxPooledCapacity = size_t(1) << 20;
thread_local std::vector<std::unique_ptr<std::string>> tBufferPool;
}  // namespace

BufferLease::BufferLease() {
  if (tBufferPool.empty()) {
    buf_ = new std::string();
  } else {
    buf_ = tBufferPool.back().release();
    tBufferPool.pop_back();
  }
  buf_->clear();
}

BufferLease::~BufferLease() {
  if (buf_->capacity() > kMaxPooledCapacity) {
    delete buf_;
    return;
  }
  tBufferPool.emplace_back(buf_);
}

bool pushString(CallContext& cx, std::string_view s) {
  String* str = cx.newString(s);
  if (!str) {
    cx.memoryError();
    return false;
  }
  if (!cx.push(Value::string(str))) {
    cx.stackOverflow();
    return false;
  }
  return true;
}

NativeResult returnString(CallContext& cx, std::string_view s) {
  if (!pushString(cx, s)) return cx.failure();
  return cx.results(1);
}

bool pushValue(CallContext& cx, const Value& v, NativeResult& outcome) {
  if (cx.push(v)) return true;
  outcome = cx.stackOverflow();
  return false;
}

NativeResult failResult(CallContext& cx, std::string_view message, int errnum) {
  if (!cx.push(Value::nil()) || !pushString(cx, message)) return cx.failure();
  if (errnum == 0) return cx.results(2);
  if (!cx.push(Value::integer(errnum))) return cx.stackOverflow();
  return cx.results(3);
}

NativeResult fileResult(CallContext& cx, bool ok, const char* fname) {
  int en = errno;
  if (ok) {
    if (!cx.push(Value::boolean(true))) return cx.stackOverflow();
    return cx.results(1);
  }
  std::string msg = fname ? std::string(fname) + ": " + std::strerror(en) : std::string(std::strerror(en));
  return failResult(cx, msg, en);
}

bool bufferMayGrow(CallContext& cx, size_t bytes) {
  size_t limit = cx.state().heap().heapLimit();
  return bytes <= kMaxLibString && (limit == 0 || bytes <= limit);
}

size_t startPosition(int64_t pos, size_t len) {
  if (pos > 0) return size_t(pos);
  if (pos == 0) return 1;
  if (pos < -int64_t(len)) return 1;
  return size_t(int64_t(len) + pos + 1);
}

size_t endPosition(int64_t pos, size_t len) {
  if (pos > int64_t(len)) return len;
  if (pos >= 0) return size_t(pos);
  if (pos < -int64_t(len)) return 0;
  return size_t(int64_t(len) + pos + 1);
}

namespace {

// ---- simple functions ------------------------------------------------------------

NativeResult strLen(CallContext& cx) {
  String* s;
  if (!cx.checkString(1, s)) return cx.failure();
  if (!cx.push(Value::integer(int64_t(s->length)))) return cx.stackOverflow();
  return cx.results(1);
}

NativeResult strSub(CallContext& cx) {
  String* s;
  int64_t i, j;
  if (!cx.checkString(1, s) || !cx.optInteger(2, 1, i) || !cx.optInteger(3, -1, j)) return cx.failure();
  size_t len = s->length;
  size_t start = startPosition(i, len);
  size_t end = endPosition(j, len);
  if (start > end) return returnString(cx, "");
  if (start == 1 && end == len) {
    if (!cx.push(Value::string(s))) return cx.stackOverflow();
    return cx.results(1);
  }
  return returnString(cx, s->view().substr(start - 1, end - start + 1));
}

NativeResult strByte(CallContext& cx) {
  String* s;
  int64_t i;
  if (!cx.checkString(1, s) || !cx.optInteger(2, 1, i)) return cx.failure();
  size_t len = s->length;
  size_t first = startPosition(i, len);
  int64_t j;  // defaults to i as given, not as clamped: byte("hi", -3) is empty
  if (!cx.optInteger(3, i, j)) return cx.failure();
  size_t last = endPosition(j, len);
  if (first > last) return cx.results(0);
  if (last - first >= 0x7fffffff || !cx.ensureStack(uint32_t(last - first + 1))) return cx.error("string slice too long");
  for (size_t k = first; k <= last; k++) cx.push(Value::integer(static_cast<unsigned char>(s->data[k - 1])));
  return cx.results(int32_t(last - first + 1));
}

NativeResult strChar(CallContext& cx) {
  BufferLease lease;
  std::string& out = lease.get();
  for (uint32_t i = 1; i <= cx.argCount(); i++) {
    int64_t c;
    if (!cx.checkInteger(i, c)) return cx.failure();
    if (uint64_t(c) > 255) return cx.argError(i, "value out of range");
    out += char(c);
  }
  return returnString(cx, out);
}

template <int (*Map)(int)>
NativeResult mapBytes(CallContext& cx) {
  String* s;
  if (!cx.checkString(1, s)) return cx.failure();
  if (s->length <= kMaxShortString) {
    // A short result is usually interned already (a comparator lowering the same keys
    // again): map into a buffer and look it up before allocating anything.
    char buf[kMaxShortString];
    for (size_t i = 0; i < s->length; i++) buf[i] = char(Map(static_cast<unsigned char>(s->data[i])));
    String* r = newString(cx.state(), std::string_view(buf, s->length));
    if (!r) return cx.memoryError();
    if (!cx.push(Value::string(r))) return cx.stackOverflow();
    return cx.results(1);
  }
  String* r = newStringUninit(cx.state(), s->length);
  if (!r) return cx.memoryError();
  for (size_t i = 0; i < s->length; i++) r->data[i] = char(Map(static_cast<unsigned char>(s->data[i])));
  r = finishString(cx.state(), r);
  if (!r) return cx.memoryError();
  if (!cx.push(Value::string(r))) return cx.stackOverflow();
  return cx.results(1);
}

// The C locale's case mapping (ASCII letters only), whatever os.setlocale says, like the
// pattern classes (docs/design/stdlib.md): no libc call per byte.
int toLowerByte(int c) { return unsigned(c - 'A') < 26u ? c + ('a' - 'A') : c; }
int toUpperByte(int c) { return unsigned(c - 'a') < 26u ? c - ('a' - 'A') : c; }

NativeResult strReverse(CallContext& cx) {
  String* s;
  if (!cx.checkString(1, s)) return cx.failure();
  String* r = newStringUninit(cx.state(), s->length);
  if (!r) return cx.memoryError();
  for (size_t i = 0; i < s->length; i++) r->data[i] = s->data[s->length - 1 - i];
  r = finishString(cx.state(), r);
  if (!r) return cx.memoryError();
  if (!cx.push(Value::string(r))) return cx.stackOverflow();
  return cx.results(1);
}

NativeResult strRep(CallContext& cx) {
  String* s;
  int64_t n;
  String* sep = nullptr;
  if (!cx.checkString(1, s) || !cx.checkInteger(2, n)) return cx.failure();
  if (cx.hasArg(3) && !cx.arg(3).isNil() && !cx.checkString(3, sep)) return cx.failure();
  size_t len = s->length, sepLen = sep ? sep->length : 0;
  if (n <= 0 || len + sepLen == 0) return returnString(cx, "");
  // Check the total before allocating: huge counts fail cleanly.
  if (len + sepLen > kMaxLibString / uint64_t(n)) return cx.error("resulting string too large");
  size_t total = len * size_t(n) + sepLen * size_t(n - 1);
  String* r = newStringUninit(cx.state(), total);
  if (!r) return cx.memoryError();
  // One unit (s, then sep if another follows), then the written prefix doubles: the
  // result has period len + sepLen, so copying from its start continues it. log(n)
  // copies instead of n (a one-byte string repeated 16,384 times made 16,384 calls).
  char* p = r->data;
  std::memcpy(p, s->data, len);
  size_t filled = len;
  if (n > 1 && sepLen) {
    std::memcpy(p + len, sep->data, sepLen);
    filled += sepLen;
  }
  while (filled < total) {
    size_t chunk = std::min(filled, total - filled);
    std::memcpy(p + filled, p, chunk);
    filled += chunk;
  }
  r = finishString(cx.state(), r);
  if (!r) return cx.memoryError();
  if (!cx.push(Value::string(r))) return cx.stackOverflow();
  return cx.results(1);
}

NativeResult strDump(CallContext& cx) {
  Value f = cx.arg(1);
  if (!f.isFunction()) return cx.typeError(1, "function");
  if (!f.isLuaClosure()) return cx.error("unable to dump given function");
  bool strip = cx.arg(2).isTruthy();
  const frontend::ProtoData* data = f.asLuaClosure()->proto->data;
  if (!data) return cx.error("unable to dump given function");
  std::string bytes = frontend::dumpChunk(*data, strip);
  return returnString(cx, bytes);
}

// ---- pattern functions -----------------------------------------------------------

NativeResult patternError(CallContext& cx, const PatternMatcher& m) {
  return cx.error("%s", m.errorMessage().c_str());
}

// Pushes capture i (or the whole match when the pattern has no captures and i == 0).
bool pushCapture(CallContext& cx, const PatternMatcher& m, std::string_view subject, int i, size_t start, size_t end,
                 NativeResult& outcome) {
  if (i >= m.captureCount()) {
    if (i != 0) {
      outcome = cx.error("invalid capture index %%%d", i + 1);
      return false;
    }
    if (!pushString(cx, subject.substr(start, end - start))) {
      outcome = cx.failure();
      return false;
    }
    return true;
  }
  PatternCapture c = m.capture(i);
  if (c.kind == PatternCapture::Kind::Unfinished) {
    outcome = cx.error("unfinished capture");
    return false;
  }
  if (c.kind == PatternCapture::Kind::Position) return pushValue(cx, Value::integer(int64_t(c.start) + 1), outcome);
  if (!pushString(cx, subject.substr(c.start, c.length))) {
    outcome = cx.failure();
    return false;
  }
  return true;
}

// Pushes every capture (or the whole match when wholeIfNone and there are none).
bool pushCaptures(CallContext& cx, const PatternMatcher& m, std::string_view subject, size_t start, size_t end,
                  bool wholeIfNone, int& count, NativeResult& outcome) {
  count = (m.captureCount() == 0 && wholeIfNone) ? 1 : m.captureCount();
  if (!cx.ensureStack(uint32_t(count))) {
    outcome = cx.error("too many captures");
    return false;
  }
  for (int i = 0; i < count; i++)
    if (!pushCapture(cx, m, subject, i, start, end, outcome)) return false;
  return true;
}

NativeResult findAux(CallContext& cx, bool find) {
  String* s;
  String* p;
  int64_t init;
  if (!cx.checkString(1, s) || !cx.checkString(2, p) || !cx.optInteger(3, 1, init)) return cx.failure();
  std::string_view subject = s->view(), pattern = p->view();
  size_t start = startPosition(init, subject.size()) - 1;
  if (start > subject.size()) {
    cx.push(Value::nil());
    return cx.results(1);
  }
  if (find && (cx.arg(4).isTruthy() || patternIsPlain(pattern))) {
    size_t at = findPlain(subject, pattern, start);
    if (at == std::string_view::npos) {
      cx.push(Value::nil());
      return cx.results(1);
    }
    cx.push(Value::integer(int64_t(at) + 1));
    cx.push(Value::integer(int64_t(at + pattern.size())));
    return cx.results(2);
  }
  PatternMatcher m(subject, pattern);
  size_t pos = start;
  do {
    size_t end;
    if (m.matchAt(pos, end)) {
      NativeResult outcome;
      int count;
      if (find) {
        if (!cx.ensureStack(2)) return cx.stackOverflow();
        cx.push(Value::integer(int64_t(pos) + 1));
        cx.push(Value::integer(int64_t(end)));
        if (!pushCaptures(cx, m, subject, pos, end, false, count, outcome)) return outcome;
        return cx.results(count + 2);
      }
      if (!pushCaptures(cx, m, subject, pos, end, true, count, outcome)) return outcome;
      return cx.results(count);
    }
    if (m.error()) return patternError(cx, m);
  } while (pos++ < subject.size() && !m.anchored());
  cx.push(Value::nil());
  return cx.results(1);
}

NativeResult strFind(CallContext& cx) { return findAux(cx, true); }
NativeResult strMatch(CallContext& cx) { return findAux(cx, false); }

// gmatch's iterator: upvalues 0 subject, 1 pattern, 2 next position, 3 end of the last
// match (-1 before the first), so an empty match cannot repeat at the same place.
NativeResult gmatchStep(CallContext& cx) {
  std::string_view subject = cx.upvalue(0).asString()->view();
  std::string_view pattern = cx.upvalue(1).asString()->view();
  int64_t lastMatch = cx.upvalue(3).asInt();
  PatternMatcher m(subject, pattern, false);
  for (size_t pos = size_t(cx.upvalue(2).asInt()); pos <= subject.size(); pos++) {
    size_t end;
    if (m.matchAt(pos, end)) {
      if (int64_t(end) == lastMatch) continue;
      cx.setUpvalue(2, Value::integer(int64_t(end)));
      cx.setUpvalue(3, Value::integer(int64_t(end)));
      NativeResult outcome;
      int count;
      if (!pushCaptures(cx, m, subject, pos, end, true, count, outcome)) return outcome;
      return cx.results(count);
    }
    if (m.error()) return patternError(cx, m);
  }
  cx.setUpvalue(2, Value::integer(int64_t(subject.size()) + 1));
  return cx.results(0);
}

NativeResult strGmatch(CallContext& cx) {
  String* s;
  String* p;
  int64_t init;
  if (!cx.checkString(1, s) || !cx.checkString(2, p) || !cx.optInteger(3, 1, init)) return cx.failure();
  size_t start = startPosition(init, s->length) - 1;
  if (start > s->length) start = s->length + 1;
  NativeClosure* c = newNativeClosure(cx.state(), gmatchStep, "gmatch iterator", 4);
  if (!c) return cx.memoryError();
  storeValue(c, c->upvalues[0], Value::string(s));
  storeValue(c, c->upvalues[1], Value::string(p));
  c->upvalues[2] = Value::integer(int64_t(start));
  c->upvalues[3] = Value::integer(-1);
  if (!cx.push(Value::nativeClosure(c))) return cx.stackOverflow();
  return cx.results(1);
}

// Appends a string replacement with its %0-%9 and %% escapes.
bool addReplacementString(CallContext& cx, const PatternMatcher& m, std::string_view subject, std::string_view repl,
                          size_t start, size_t end, std::string& out, NativeResult& outcome) {
  size_t i = 0;
  while (i < repl.size()) {
    const void* hit = std::memchr(repl.data() + i, '%', repl.size() - i);
    size_t pct = hit ? size_t(static_cast<const char*>(hit) - repl.data()) : repl.size();
    out.append(repl.substr(i, pct - i));
    if (pct == repl.size()) break;
    i = pct + 1;
    char c = i < repl.size() ? repl[i] : 0;
    i++;
    if (c == '%') {
      out += '%';
    } else if (c >= '0' && c <= '9') {
      if (c == '0') {
        out.append(subject.substr(start, end - start));
        continue;
      }
      int idx = c - '1';
      if (idx >= m.captureCount()) {
        if (idx != 0) {
          outcome = cx.error("invalid capture index %%%d", idx + 1);
          return false;
        }
        out.append(subject.substr(start, end - start));
        continue;
      }
      PatternCapture cap = m.capture(idx);
      if (cap.kind == PatternCapture::Kind::Unfinished) {
        outcome = cx.error("unfinished capture");
        return false;
      }
      if (cap.kind == PatternCapture::Kind::Position) out += std::to_string(cap.start + 1);
      else out.append(subject.substr(cap.start, cap.length));
    } else {
      outcome = cx.error("invalid use of '%%' in replacement string");
      return false;
    }
  }
  return true;
}

// Appends the value a table or function replacement produced (at stack slot `slot`).
bool addReplacementValue(CallContext& cx, const Value& v, std::string_view whole, std::string& out, NativeResult& outcome) {
  if (v.isFalsy()) {
    out.append(whole);
  } else if (v.isString()) {
    out.append(v.asString()->view());
  } else if (v.isNumber()) {
    char buf[64];
    out.append(buf, formatNumber(v, buf));
  } else {
    outcome = cx.error("invalid replacement value (a %s)", typeName(v));
    return false;
  }
  return true;
}

struct GsubState {
  uint32_t subjectSlot;
  uint32_t patternSlot;
  uint32_t replSlot;
  // Whether some match was replaced by other text; a gsub that changed nothing returns
  // its subject itself, as Lua does (its identity shows through %p).
  bool changed = false;
};

// Computes the replacement for one match; may call Lua (the matcher is rebound after).
bool addReplacementMayGC(CallContext& cx, PatternMatcher& m, GsubState& g, size_t start, size_t end, std::string& out,
                    NativeResult& outcome) {
  std::string_view subject = cx.at(g.subjectSlot).asString()->view();
  Value repl = cx.at(g.replSlot);
  if (repl.isString()) {
    g.changed = true;
    return addReplacementString(cx, m, subject, repl.asString()->view(), start, end, out, outcome);
  }
  uint32_t base = cx.top();
  Value result;
  if (repl.isTable()) {
    if (!pushCapture(cx, m, subject, 0, start, end, outcome)) return false;
    Table* t = repl.asTable();
    Value key = cx.at(base);
    if (!tableMetatable(t)) {
      result = tableGet(t, key);
    } else if (Status st = cx.getMayGC(repl, key, result); !st.isOk()) {
      outcome = NativeResult{0, st.code()};
      return false;
    }
  } else {
    int count;
    if (!pushValue(cx, repl, outcome)) return false;
    if (!pushCaptures(cx, m, subject, start, end, true, count, outcome)) return false;
    if (Status st = cx.callMayGC(base, count, 1); !st.isOk()) {
      outcome = NativeResult{0, st.code()};
      return false;
    }
    result = cx.at(base);
  }
  subject = cx.at(g.subjectSlot).asString()->view();
  m.rebind(subject, cx.at(g.patternSlot).asString()->view());
  g.changed = g.changed || !result.isFalsy();
  bool ok = addReplacementValue(cx, result, subject.substr(start, end - start), out, outcome);
  cx.setTop(base);
  return ok;
}

NativeResult strGsub(CallContext& cx) {
  String* s;
  String* p;
  if (!cx.checkString(1, s) || !cx.checkString(2, p)) return cx.failure();
  Value repl = cx.arg(3);
  if (repl.isNumber()) {
    String* r;
    if (!cx.checkString(3, r)) return cx.failure();
    repl = Value::string(r);
  } else if (!repl.isString() && !repl.isTable() && !repl.isFunction()) {
    return cx.typeError(3, "string/function/table");
  }
  int64_t maxN;
  if (!cx.optInteger(4, int64_t(s->length) + 1, maxN)) return cx.failure();
  // The subject, pattern and replacement live in stack slots: a replacement function
  // may trigger a collection that moves them.
  if (!cx.ensureStack(3)) return cx.stackOverflow();
  GsubState g{cx.top(), cx.top() + 1, cx.top() + 2};
  cx.push(Value::string(s));
  cx.push(Value::string(p));
  cx.push(repl);
  BufferLease lease;
  std::string& out = lease.get();
  PatternMatcher m(s->view(), p->view());
  size_t pos = 0;
  size_t copied = 0;  // subject bytes before this offset are already in `out`
  size_t subjectSize = s->length;
  int64_t n = 0;
  int64_t lastMatch = -1;
  while (n < maxN) {
    size_t end;
    if (m.matchAt(pos, end) && int64_t(end) != lastMatch) {
      // The result is about the subject's size: reserved at the first match, the buffer
      // does not double into place with the old block and the new one both resident
      // (bench/patterns.lua's last gsub, over 2.7 MB, held 2 MB beside 4 at its peak).
      if (n++ == 0 && bufferMayGrow(cx, subjectSize)) out.reserve(subjectSize);
      // Unmatched bytes are copied in one run per match, read from the slot because
      // a replacement function may have moved the subject.
      out.append(cx.at(g.subjectSlot).asString()->view().substr(copied, pos - copied));
      NativeResult outcome;
      if (!addReplacementMayGC(cx, m, g, pos, end, out, outcome)) return outcome;
      if (!bufferMayGrow(cx, out.size())) return cx.memoryError();
      pos = copied = end;
      lastMatch = int64_t(end);
    } else if (m.error()) {
      return patternError(cx, m);
    } else if (pos < subjectSize) {
      pos++;
    } else {
      break;
    }
    if (m.anchored()) break;
  }
  std::string_view subject = cx.at(g.subjectSlot).asString()->view();
  if (!g.changed) {
    cx.push(cx.at(g.subjectSlot));
  } else {
    out.append(subject.substr(copied));
    if (!bufferMayGrow(cx, out.size())) return cx.memoryError();
    if (!pushString(cx, out)) return cx.failure();
  }
  if (!cx.push(Value::integer(n))) return cx.stackOverflow();
  return cx.results(2);
}

// ---- string arithmetic metamethods -----------------------------------------------

bool toArithOperand(const Value& v, Value& out) {
  if (v.isNumber()) {
    out = v;
    return true;
  }
  if (!v.isString()) return false;
  std::optional<Value> n = stringToNumber(v.asString()->view());
  if (!n) return false;
  out = *n;
  return true;
}

// Without two numeric operands, defers to the second operand's metamethod (the string's
// own one ran first) or raises the error 5.4 raises.
NativeResult arithFallbackMayGC(CallContext& cx, Meta event, const char* opName) {
  Value a = cx.arg(1), b = cx.arg(2);
  Value mm = b.isString() ? Value::nil() : metamethodOf(cx.state(), b, event);
  if (mm.isNil()) return cx.error("attempt to %s a '%s' with a '%s'", opName, typeName(a), typeName(b));
  uint32_t base = cx.top();
  if (!cx.ensureStack(3)) return cx.stackOverflow();
  cx.push(mm);
  cx.push(a);
  cx.push(b);
  if (Status st = cx.callMayGC(base, 2, 1); !st.isOk()) return NativeResult{0, st.code()};
  return cx.results(1);
}

template <ArithOp Op, Meta Event>
NativeResult stringArith(CallContext& cx) {
  static constexpr const char* kNames[] = {"add", "sub", "mul", "mod", "pow", "div", "idiv", "", "", "", "", "", "unm"};
  Value a, b, out;
  if (toArithOperand(cx.arg(1), a) && toArithOperand(cx.arg(2), b)) {
    ArithFailure why;
    if (arithRaw(Op, a, b, out, why)) {
      if (!cx.push(out)) return cx.stackOverflow();
      return cx.results(1);
    }
    // Raised inside the metamethod, so like lua5.4 the message carries no position.
    if (why.divByZero) {
      String* msg = cx.newString(Op == ArithOp::Mod ? "attempt to perform 'n%0'" : "attempt to divide by zero");
      if (!msg) return cx.memoryError();
      return cx.raise(Value::string(msg));
    }
  }
  return arithFallbackMayGC(cx, Event, kNames[int(Op)]);
}

constexpr LibEntry kStringLib[] = {
    {"byte", strByte},     {"char", strChar},         {"dump", strDump},       {"find", strFind},
    {"format", strFormat}, {"gmatch", strGmatch},     {"gsub", strGsub},       {"len", strLen},
    {"lower", mapBytes<toLowerByte>}, {"match", strMatch}, {"pack", strPack},  {"packsize", strPackSize},
    {"rep", strRep},       {"reverse", strReverse},   {"sub", strSub},         {"unpack", strUnpack},
    {"upper", mapBytes<toUpperByte>},
};

constexpr LibEntry kStringMeta[] = {
    {"__add", stringArith<ArithOp::Add, Meta::Add>},   {"__sub", stringArith<ArithOp::Sub, Meta::Sub>},
    {"__mul", stringArith<ArithOp::Mul, Meta::Mul>},   {"__mod", stringArith<ArithOp::Mod, Meta::Mod>},
    {"__pow", stringArith<ArithOp::Pow, Meta::Pow>},   {"__div", stringArith<ArithOp::Div, Meta::Div>},
    {"__idiv", stringArith<ArithOp::IDiv, Meta::IDiv>}, {"__unm", stringArith<ArithOp::Unm, Meta::Unm>},
};

Status setField(State& state, Table* t, std::string_view name, const Value& v) {
  String* key = newString(state, name);
  if (!key) return Status(StatusCode::kMemoryError);
  return tableSetStr(state, t, key, v);
}

}  // namespace

Status openStringLib(State& state) {
  Table* lib;
  if (Status st = openLibrary(state, "string", kStringLib, &lib); !st.isOk()) return st;
  Table* mt = newTable(state, 0, 16);
  if (!mt) return Status(StatusCode::kMemoryError);
  state.typeMetatables[int(BasicType::String)] = mt;
  for (const LibEntry& e : kStringMeta)
    if (Status st = setField(state, mt, e.name, Value::lightNative(e.fn)); !st.isOk()) return st;
  return setField(state, mt, "__index", Value::table(lib));
}

NativeFn stringKnownNative(uint8_t id) {
  if (id == kWeftJitNativeStrLen) return strLen;
  if (id == kWeftJitNativeByte) return strByte;
  return nullptr;
}

}  // namespace weft::vm
