// The table library (manual §6.6). Element access follows lua_geti/lua_seti: through
// __index/__newindex/__len when the table has a metatable (or for non-tables that have
// those metamethods), raw otherwise. Metamethods and sort comparators re-enter Lua, so
// any of them may collect: the table is always re-read from its argument slot, and
// values held across a call live in stack slots.
#include <algorithm>
#include <cstring>
#include <vector>

#include "vm/lib/libs.h"
#include "vm/lib/string.h"
#include "vm/meta.h"
#include "vm/number.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

namespace {

constexpr int kNeedRead = 1, kNeedWrite = 2, kNeedLength = 4;

NativeResult statusResult(Status st) { return NativeResult{0, st.code()}; }

Value rawGetInt(Table* t, int64_t i) {
  const Value* slot = tableArraySlot(t, i);
  return slot ? loadSlot(*slot) : tableGetInt(t, i);
}

// Element access to the sequence in argument `arg`.
class Seq {
 public:
  Seq(CallContext& cx, uint32_t arg) : cx_(cx), arg_(arg) {}

  Value object() const { return cx_.arg(arg_); }
  Table* rawTable() const {
    Value v = object();
    return v.isTable() && !tableMetatable(v.asTable()) ? v.asTable() : nullptr;
  }
  Status getMayGC(int64_t i, Value& out) {
    if (Table* t = rawTable()) {
      out = rawGetInt(t, i);
      return Status::ok();
    }
    return cx_.getMayGC(object(), Value::integer(i), out);
  }
  Status setMayGC(int64_t i, const Value& v) {
    if (Table* t = rawTable()) {
      Status st = tableSetInt(cx_.state(), t, i, v);
      if (!st.isOk()) return Status(cx_.memoryError().status);
      return st;
    }
    return cx_.setMayGC(object(), Value::integer(i), v);
  }
  // luaL_len: the length must be an integer.
  bool lengthMayGC(int64_t& n, NativeResult& outcome) {
    if (Table* t = rawTable()) {
      n = int64_t(tableLength(t));
      return true;
    }
    Value len;
    if (Status st = cx_.lengthMayGC(object(), len); !st.isOk()) {
      outcome = statusResult(st);
      return false;
    }
    if (!len.isInt() && !(len.isFloat() && floatToInteger(len.asFloat(), n))) {
      outcome = cx_.error("object length is not an integer");
      return false;
    }
    if (len.isInt()) n = len.asInt();
    return true;
  }

 private:
  CallContext& cx_;
  uint32_t arg_;
};

// A table, or a value whose metatable provides every metamethod the function needs.
bool checkTab(CallContext& cx, uint32_t arg, int needs, NativeResult& outcome) {
  Value v = cx.arg(arg);
  if (v.isTable()) return true;
  Table* mt = metatableOf(cx.state(), v);
  if (mt && (!(needs & kNeedRead) || !metaField(cx.state(), mt, Meta::Index).isNil()) &&
      (!(needs & kNeedWrite) || !metaField(cx.state(), mt, Meta::NewIndex).isNil()) &&
      (!(needs & kNeedLength) || !metaField(cx.state(), mt, Meta::Len).isNil()))
    return true;
  outcome = cx.typeError(arg, "table");
  return false;
}

bool getNMayGC(CallContext& cx, Seq& seq, int needs, int64_t& n, NativeResult& outcome) {
  return checkTab(cx, 1, needs | kNeedLength, outcome) && seq.lengthMayGC(n, outcome);
}

// ---- concat ------------------------------------------------------------------------

bool appendItem(CallContext& cx, const Value& v, int64_t i, std::string& out, NativeResult& outcome) {
  if (v.isString()) {
    out.append(v.asString()->view());
  } else if (v.isNumber()) {
    char buf[64];
    out.append(buf, formatNumber(v, buf));
  } else {
    outcome = cx.error("invalid value (%s) at index %lld in table for 'concat'", typeName(v), static_cast<long long>(i));
    return false;
  }
  if (!bufferMayGrow(cx, out.size())) {
    outcome = cx.memoryError();
    return false;
  }
  return true;
}

NativeResult tabConcat(CallContext& cx) {
  Seq seq(cx, 1);
  NativeResult outcome;
  int64_t last;
  if (!getNMayGC(cx, seq, kNeedRead, last, outcome)) return outcome;
  String* sep = nullptr;
  int64_t first;
  if (!cx.optString(2, nullptr, sep) || !cx.optInteger(3, 1, first) || !cx.optInteger(4, last, last)) return cx.failure();
  // Keep the separator on the stack: a metamethod may move it.
  uint32_t sepSlot = cx.top();
  if (!cx.push(sep ? Value::string(sep) : Value::nil())) return cx.stackOverflow();
  BufferLease lease;
  std::string& out = lease.get();
  for (int64_t i = first; i <= last; i++) {
    Value v;
    if (Status st = seq.getMayGC(i, v); !st.isOk()) return statusResult(st);
    if (!appendItem(cx, v, i, out, outcome)) return outcome;
    Value s = cx.at(sepSlot);
    if (i != last && s.isString()) out.append(s.asString()->view());
    if (i == INT64_MAX) break;
  }
  return returnString(cx, out);
}

// ---- insert / remove / move ------------------------------------------------------------

NativeResult tabInsert(CallContext& cx) {
  Seq seq(cx, 1);
  NativeResult outcome;
  int64_t n;
  if (!getNMayGC(cx, seq, kNeedRead | kNeedWrite, n, outcome)) return outcome;
  int64_t e = int64_t(uint64_t(n) + 1);  // first empty slot
  int64_t pos;
  uint32_t valueArg;
  switch (cx.argCount()) {
    case 2:
      pos = e;
      valueArg = 2;
      break;
    case 3: {
      if (!cx.checkInteger(2, pos)) return cx.failure();
      // pos in [1, e], checked as unsigned so negative positions fail too.
      if (uint64_t(pos) - 1u >= uint64_t(e)) return cx.argError(2, "position out of bounds");
      for (int64_t i = e; i > pos; i--) {
        Value v;
        if (Status st = seq.getMayGC(i - 1, v); !st.isOk()) return statusResult(st);
        if (Status st = seq.setMayGC(i, v); !st.isOk()) return statusResult(st);
      }
      valueArg = 3;
      break;
    }
    default: return cx.error("wrong number of arguments to 'insert'");
  }
  if (Status st = seq.setMayGC(pos, cx.arg(valueArg)); !st.isOk()) return statusResult(st);
  return cx.results(0);
}

NativeResult tabRemove(CallContext& cx) {
  Seq seq(cx, 1);
  NativeResult outcome;
  int64_t size;
  if (!getNMayGC(cx, seq, kNeedRead | kNeedWrite, size, outcome)) return outcome;
  int64_t pos;
  if (!cx.optInteger(2, size, pos)) return cx.failure();
  // Lua 5.4.4 blames argument #1 here; later releases (and the manual's intent) #2.
  if (pos != size && uint64_t(pos) - 1u > uint64_t(size)) return cx.argError(2, "position out of bounds");
  Value result;
  if (Status st = seq.getMayGC(pos, result); !st.isOk()) return statusResult(st);
  uint32_t resultSlot = cx.top();
  if (!cx.push(result)) return cx.stackOverflow();
  for (; pos < size; pos++) {
    Value v;
    if (Status st = seq.getMayGC(pos + 1, v); !st.isOk()) return statusResult(st);
    if (Status st = seq.setMayGC(pos, v); !st.isOk()) return statusResult(st);
  }
  if (Status st = seq.setMayGC(pos, Value::nil()); !st.isOk()) return statusResult(st);
  cx.setTop(resultSlot + 1);
  return cx.results(1);
}

NativeResult tabMove(CallContext& cx) {
  int64_t f, e, t;
  if (!cx.checkInteger(2, f) || !cx.checkInteger(3, e) || !cx.checkInteger(4, t)) return cx.failure();
  uint32_t dest = cx.arg(5).isNil() ? 1 : 5;
  NativeResult outcome;
  if (!checkTab(cx, 1, kNeedRead, outcome) || !checkTab(cx, dest, kNeedWrite, outcome)) return outcome;
  Seq src(cx, 1), dst(cx, dest);
  if (e >= f) {
    if (!(f > 0 || e < INT64_MAX + f)) return cx.argError(3, "too many elements to move");
    int64_t n = e - f + 1;
    if (t > INT64_MAX - n + 1) return cx.argError(4, "destination wrap around");
    bool sameTable = dest == 1;
    if (!sameTable) {
      bool eq;
      if (Status st = cx.equalsMayGC(cx.arg(1), cx.arg(dest), eq); !st.isOk()) return statusResult(st);
      sameTable = eq;
    }
    bool forward = t > e || t <= f || !sameTable;
    for (int64_t k = 0; k < n; k++) {
      int64_t i = forward ? k : n - 1 - k;
      Value v;
      if (Status st = src.getMayGC(f + i, v); !st.isOk()) return statusResult(st);
      if (Status st = dst.setMayGC(t + i, v); !st.isOk()) return statusResult(st);
    }
  }
  if (!cx.push(cx.arg(dest))) return cx.stackOverflow();
  return cx.results(1);
}

// ---- pack / unpack -----------------------------------------------------------------

NativeResult tabPack(CallContext& cx) {
  uint32_t n = cx.argCount();
  Table* t = cx.newTable(n, 1);
  if (!t) return cx.memoryError();
  for (uint32_t i = 1; i <= n; i++)
    if (!tableSetInt(cx.state(), t, i, cx.arg(i)).isOk()) return cx.memoryError();
  String* key = cx.newString("n");
  if (!key || !tableSetStr(cx.state(), t, key, Value::integer(n)).isOk()) return cx.memoryError();
  if (!cx.push(Value::table(t))) return cx.stackOverflow();
  return cx.results(1);
}

NativeResult tabUnpack(CallContext& cx) {
  Seq seq(cx, 1);
  int64_t i, e;
  if (!cx.optInteger(2, 1, i)) return cx.failure();
  if (cx.arg(3).isNil()) {
    NativeResult outcome;
    if (!seq.lengthMayGC(e, outcome)) return outcome;
  } else if (!cx.checkInteger(3, e)) {
    return cx.failure();
  }
  if (i > e) return cx.results(0);
  uint64_t n = uint64_t(e) - uint64_t(i);
  if (n >= 0x7fffffffu || !cx.ensureStack(uint32_t(n + 1))) return cx.error("too many results to unpack");
  for (int64_t k = i;; k++) {
    Value v;
    if (Status st = seq.getMayGC(k, v); !st.isOk()) return statusResult(st);
    cx.push(v);
    if (k == e) break;
  }
  return cx.results(int32_t(n + 1));
}

// ---- sort ---------------------------------------------------------------------------

enum class SortResult : uint8_t { kOk, kInvalidOrder, kFailed };

// Quicksort with median-of-three pivots and bounded scans. Whatever `lessMayGC` answers, each
// scan stops inside [lo, hi] (the median-of-three leaves a sentinel at each end for a
// consistent order; an inconsistent one is detected when a scan reaches its bound), and
// each partition shrinks the range, so the sort terminates and never leaves the range.
// Recursion goes to the smaller part only: depth stays below 64.
template <typename Ops>
SortResult quickSortMayGC(Ops& ops, int64_t lo, int64_t hi, uint32_t seed) {
  while (hi > lo) {
    bool lt;
    if (!ops.lessMayGC(hi, lo, lt)) return SortResult::kFailed;
    if (lt && !ops.swapMayGC(lo, hi)) return SortResult::kFailed;
    if (hi - lo == 1) break;
    int64_t mid = lo + (hi - lo) / 2;
    // Large ranges pick a pseudo-random pivot position to defeat adversarial inputs.
    if (hi - lo > 100) {
      seed = seed * 1103515245u + 12345u;
      mid = lo + 1 + int64_t(seed % uint64_t(hi - lo - 1));
    }
    if (!ops.lessMayGC(mid, lo, lt)) return SortResult::kFailed;
    if (lt) {
      if (!ops.swapMayGC(mid, lo)) return SortResult::kFailed;
    } else {
      if (!ops.lessMayGC(hi, mid, lt)) return SortResult::kFailed;
      if (lt && !ops.swapMayGC(mid, hi)) return SortResult::kFailed;
    }
    if (hi - lo == 2) break;
    int64_t p = hi - 1;
    if (!ops.swapMayGC(mid, p)) return SortResult::kFailed;
    int64_t i = lo, j = p;
    while (true) {
      while (true) {
        if (!ops.lessMayGC(++i, p, lt)) return SortResult::kFailed;
        if (!lt) break;
        if (i == p) return SortResult::kInvalidOrder;
      }
      while (true) {
        if (!ops.lessMayGC(p, --j, lt)) return SortResult::kFailed;
        if (!lt) break;
        if (j == lo) return SortResult::kInvalidOrder;
      }
      if (j < i) break;
      if (!ops.swapMayGC(i, j)) return SortResult::kFailed;
    }
    if (i != p && !ops.swapMayGC(i, p)) return SortResult::kFailed;
    if (i - lo < hi - i) {
      SortResult r = quickSortMayGC(ops, lo, i - 1, seed);
      if (r != SortResult::kOk) return r;
      lo = i + 1;
    } else {
      SortResult r = quickSortMayGC(ops, i + 1, hi, seed);
      if (r != SortResult::kOk) return r;
      hi = i - 1;
    }
  }
  return SortResult::kOk;
}

// The elements of a plain table of numbers or strings: comparing them runs no Lua code,
// so nothing can collect while the sort runs. They are sorted where they lie, in the
// table's array part, when no other task can reach the table (State::tablesShared is
// still false); else in a copy written back through tableSetInt, so that a racing
// writer's rebuild (another key's) loses none of the sort's stores (DEVELOPERS.md
// invariant 6). The copy doubled the memory of a sort: 16 MB more for a million values.
struct FastOps {
  Table* table = nullptr;  // in place: its array part holds elements 1..n
  Value* base = nullptr;   // element i at base[i - 1]: the array part, or `copy`
  std::vector<Value> copy;
  bool strings = false;
  Value& at(int64_t i) { return base[i - 1]; }
  bool lessMayGC(int64_t a, int64_t b, bool& out) {
    out = strings ? stringCompare(at(a).asString(), at(b).asString()) < 0 : numLessThan(at(a), at(b));
    return true;
  }
  bool swapMayGC(int64_t a, int64_t b) {
    if (!table) {
      std::swap(at(a), at(b));
      return true;
    }
    // A string moved to another slot of an old part may need that slot's card.
    Value va = at(a);
    storeValue(table, at(a), at(b));
    storeValue(table, at(b), va);
    return true;
  }
};

// Elements stay in the table; a comparison pushes the comparator (if any) and both
// elements and calls it, so every reference held across it lives on the stack.
struct TableOps {
  CallContext& cx;
  Seq& seq;
  uint32_t compArg;  // 0: use '<'
  Status status;
  bool fail(Status st) {
    status = st;
    return false;
  }
  bool lessMayGC(int64_t a, int64_t b, bool& out) {
    uint32_t base = cx.top();
    if (!cx.ensureStack(3)) return fail(Status(cx.stackOverflow().status));
    if (compArg) cx.push(cx.arg(compArg));
    Value va, vb;
    if (Table* raw = seq.rawTable()) {
      // Raw reads cannot collect, so both values can be read before pushing.
      cx.push(rawGetInt(raw, a));
      cx.push(rawGetInt(raw, b));
    } else {
      if (Status st = seq.getMayGC(a, va); !st.isOk()) return fail(st);
      cx.push(va);
      if (Status st = seq.getMayGC(b, vb); !st.isOk()) return fail(st);
      cx.push(vb);
    }
    if (compArg) {
      if (Status st = cx.callMayGC(base, 2, 1); !st.isOk()) return fail(st);
      out = cx.at(base).isTruthy();
    } else if (Status st = cx.lessThanMayGC(cx.at(base), cx.at(base + 1), out); !st.isOk()) {
      return fail(st);
    }
    cx.setTop(base);
    return true;
  }
  bool swapMayGC(int64_t a, int64_t b) {
    uint32_t base = cx.top();
    Value va, vb;
    if (Status st = seq.getMayGC(a, va); !st.isOk()) return fail(st);
    if (!cx.push(va)) return fail(Status(cx.stackOverflow().status));
    if (Status st = seq.getMayGC(b, vb); !st.isOk()) return fail(st);
    if (!cx.push(vb)) return fail(Status(cx.stackOverflow().status));
    if (Status st = seq.setMayGC(a, cx.at(base + 1)); !st.isOk()) return fail(st);
    if (Status st = seq.setMayGC(b, cx.at(base)); !st.isOk()) return fail(st);
    cx.setTop(base);
    return true;
  }
};

// Whether elements 1..n of a plain table are all numbers or all strings; if so, `ops`
// reaches them (in place or copied: FastOps).
bool collectFast(State& state, Table* t, int64_t n, FastOps& ops) {
  const ValueArray* a = tableArrayPart(t);
  bool inPlace = !state.tablesShared.load(std::memory_order_relaxed) && a && uint64_t(n) <= tableArraySize(t) &&
                 uint64_t(n) <= a->capacity;
  if (!inPlace) ops.copy.resize(size_t(n));
  bool numbers = true, strings = true;
  for (int64_t i = 1; i <= n; i++) {
    const Value* slot = inPlace ? &a->data[i - 1] : tableArraySlot(t, i);
    Value v = slot ? loadSlot(*slot) : tableGetInt(t, i);
    numbers &= v.isNumber();
    strings &= v.isString();
    if (!numbers && !strings) return false;
    if (!inPlace) ops.copy[size_t(i - 1)] = v;
  }
  ops.strings = strings && !numbers;
  ops.table = inPlace ? t : nullptr;
  ops.base = inPlace ? const_cast<Value*>(a->data) : ops.copy.data();
  return true;
}

NativeResult tabSort(CallContext& cx) {
  Seq seq(cx, 1);
  NativeResult outcome;
  int64_t n;
  if (!getNMayGC(cx, seq, kNeedRead | kNeedWrite, n, outcome)) return outcome;
  if (n <= 1) return cx.results(0);
  if (n >= 0x7fffffff) return cx.argError(1, "array too big");
  uint32_t compArg = 0;
  if (!cx.arg(2).isNil()) {
    if (!cx.arg(2).isFunction()) return cx.typeError(2, "function");
    compArg = 2;
  }
  SortResult r;
  Table* raw = seq.rawTable();
  if (!compArg && raw && n <= 0x7ffffff) {
    FastOps fast;
    if (collectFast(cx.state(), raw, n, fast)) {
      r = quickSortMayGC(fast, 1, n, 0x2545f491u);
      if (r == SortResult::kInvalidOrder) return cx.error("invalid order function for sorting");
      for (int64_t i = 1; !fast.table && i <= n; i++)
        if (Status st = tableSetInt(cx.state(), raw, i, fast.at(i)); !st.isOk()) return cx.memoryError();
      return cx.results(0);
    }
  }
  TableOps ops{cx, seq, compArg, Status::ok()};
  r = quickSortMayGC(ops, 1, n, 0x2545f491u);
  if (r == SortResult::kInvalidOrder) return cx.error("invalid order function for sorting");
  if (r == SortResult::kFailed) return statusResult(ops.status);
  return cx.results(0);
}

constexpr LibEntry kTableLib[] = {
    {"concat", tabConcat}, {"insert", tabInsert}, {"move", tabMove},     {"pack", tabPack},
    {"remove", tabRemove}, {"sort", tabSort},     {"unpack", tabUnpack},
};

}  // namespace

Status openTableLib(State& state) { return openLibrary(state, "table", kTableLib, nullptr); }

}  // namespace weft::vm
