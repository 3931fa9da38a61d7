// Metamethods and the opcodes' slow paths (vm/meta.h).
#include "vm/meta.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

using namespace frontend;

namespace {

constexpr int kMaxTagLoop = 2000;

bool isStrNum(const Value& v) { return v.isString() || v.isNumber(); }

ArithOp arithOpOf(Meta e) { return ArithOp(int(e) - int(Meta::Add)); }
bool isBitwise(Meta e) { return e >= Meta::BAnd && e <= Meta::Shr; }

// Calls a metamethod from an opcode: a Lua function becomes a frame marked
// kFrameFinishOp; a native runs now and the opcode is finished at once.
Status callMetaLoopMayGC(State& S, ThreadData* t, const Value& fn, const Value& a, const Value& b, const Value& c,
                         int nargs, int nresults) {
  uint32_t func = scratchTop(t);
  if (!ensureStackSlots(t, uint64_t(func) + 5 + kExtraStack)) return stackOverflowMayGC(S, t);
  Value* s = t->stack;
  s[func] = fn;
  s[func + 1] = a;
  s[func + 2] = b;
  if (nargs > 2) s[func + 3] = c;
  t->top = func + 1 + nargs;
  Status st = resolveCallableMayGC(S, t, func, -1);
  if (!st.isOk()) return st;
  if (t->stack[func].isLuaClosure()) {
    // Lua counts metamethod calls as C calls; so do we, for the same "C stack overflow".
    if (t->nativeDepth + t->cDepth >= S.options().maxNativeDepth) return runtimeErrorMayGC(S, t, "C stack overflow");
    st = pushLuaFrameMayGC(S, t, func, nresults, kFrameFinishOp);
    if (st.isOk()) t->cDepth++;
    return st;
  }
  st = callNativeMayGC(S, t, func, nresults, kFrameFinishOp);
  if (!st.isOk()) return st;
  return finishOpMayGC(S, t, func);
}

Status callMetaSyncMayGC(State& S, ThreadData* t, const Value& fn, const Value& a, const Value& b, const Value& c,
                         int nargs, Value& out) {
  Value args[3] = {a, b, c};
  return callValueMayGC(S, t, fn, args, nargs, out);
}

// Follows an __index chain without calling anything. Sets `fn` (and `self`) when a
// function must be called, otherwise `out`.
Status resolveIndexMayGC(State& S, ThreadData* t, const Value& obj, const Value& key, VarRef ref, Value& out,
                    Value& fn, Value& self) {
  Value cur = obj;
  fn = Value::nil();
  for (int loop = 0; loop < kMaxTagLoop; loop++) {
    Value tm;
    if (cur.isTable()) {
      Table* h = cur.asTable();
      Value v = tableGet(h, key);
      if (!v.isNil()) {
        out = v;
        return Status::ok();
      }
      tm = metaField(S, tableMetatable(h), Meta::Index);
      if (tm.isNil()) {
        out = Value::nil();
        return Status::ok();
      }
    } else {
      tm = metamethodOf(S, cur, Meta::Index);
      if (tm.isNil()) return typeErrorMayGC(S, t, cur, loop == 0 ? ref : VarRef::none(), "index");
    }
    if (tm.isFunction()) {
      fn = tm;
      self = cur;
      return Status::ok();
    }
    cur = tm;
  }
  return runtimeErrorMayGC(S, t, "'__index' chain too long; possible loop");
}

Status rawSetCheckedMayGC(State& S, ThreadData* t, Table* h, const Value& key, const Value& val) {
  Status st = tableSet(S, h, key, val);
  if (st.isOk()) return st;
  if (st.code() == StatusCode::kMemoryError) return memoryErrorStatus(S, t);
  // The only other failure: a nil or NaN key (table.h).
  if (key.isNil()) return runtimeErrorMayGC(S, t, "index is nil");
  return runtimeErrorMayGC(S, t, "index is NaN");
}

Status resolveNewIndexMayGC(State& S, ThreadData* t, const Value& obj, const Value& key, const Value& val, VarRef ref,
                       Value& fn, Value& self) {
  Value cur = obj;
  fn = Value::nil();
  for (int loop = 0; loop < kMaxTagLoop; loop++) {
    Value tm;
    if (cur.isTable()) {
      Table* h = cur.asTable();
      uint32_t seq = tableWriteBegin(h);
      if (Value* slot = tableFindSlot(h, key)) {
        storeValue(h, *slot, val);
        tableTouched(h);
        if (tableWriteHeld(h, seq)) [[likely]] return Status::ok();
        return rawSetCheckedMayGC(S, t, h, key, val);  // a racing rebuild may have copied the slot first
      }
      tm = metaField(S, tableMetatable(h), Meta::NewIndex);
      if (tm.isNil()) return rawSetCheckedMayGC(S, t, h, key, val);
    } else {
      tm = metamethodOf(S, cur, Meta::NewIndex);
      if (tm.isNil()) return typeErrorMayGC(S, t, cur, loop == 0 ? ref : VarRef::none(), "index");
    }
    if (tm.isFunction()) {
      fn = tm;
      self = cur;
      return Status::ok();
    }
    cur = tm;
  }
  return runtimeErrorMayGC(S, t, "'__newindex' chain too long; possible loop");
}

Status arithErrorMayGC(State& S, ThreadData* t, const Value& a, const Value& b, Meta event, VarRef ra, VarRef rb,
                  const ArithFailure& why) {
  if (why.divByZero) {
    return runtimeErrorMayGC(S, t, event == Meta::Mod ? "attempt to perform 'n%%0'" : "attempt to divide by zero");
  }
  if (isBitwise(event) || event == Meta::BNot) {
    if (a.isNumber() && b.isNumber()) {
      int64_t tmp;
      bool firstBad = !toInteger(a, tmp);
      std::string vi = varInfo(t, firstBad ? ra : rb);
      return runtimeErrorMayGC(S, t, "number%s has no integer representation", vi.c_str());
    }
    bool firstBad = !a.isNumber();
    return typeErrorMayGC(S, t, firstBad ? a : b, firstBad ? ra : rb, "perform bitwise operation on");
  }
  Value tmp;
  bool firstBad = !toNumeric(a, tmp);
  return typeErrorMayGC(S, t, firstBad ? a : b, firstBad ? ra : rb, "perform arithmetic on");
}

Status compareErrorMayGC(State& S, ThreadData* t, const Value& a, const Value& b) {
  std::string t1 = typeNameWithMeta(S, a), t2 = typeNameWithMeta(S, b);
  if (t1 == t2) return runtimeErrorMayGC(S, t, "attempt to compare two %s values", t1.c_str());
  return runtimeErrorMayGC(S, t, "attempt to compare %s with %s", t1.c_str(), t2.c_str());
}

// Decides a comparison without metamethods when possible.
bool compareRaw(const Value& a, const Value& b, Meta event, bool& out) {
  if (a.isNumber() && b.isNumber()) {
    out = event == Meta::Lt ? numLessThan(a, b) : numLessEqual(a, b);
    return true;
  }
  if (a.isString() && b.isString()) {
    int c = stringCompare(a.asString(), b.asString());
    out = event == Meta::Lt ? c < 0 : c <= 0;
    return true;
  }
  return false;
}

// Applies a decided comparison to the instruction just executed: skip its jump when
// the result differs from k.
Status condJump(ThreadData* t, bool res) {
  CallFrame& f = t->frame();
  if (res != getK(f.pc[-1])) f.pc++;
  return Status::ok();
}

Value eqMetamethod(State& S, const Value& a, const Value& b) {
  Value tm = metaField(S, metatableOf(S, a), Meta::Eq);
  if (tm.isNil()) tm = metaField(S, metatableOf(S, b), Meta::Eq);
  return tm;
}

// Concatenates the maximal run of strings/numbers ending at first+count-1; returns how
// many values were joined (at least 2), or 0 if memory ran out.
uint32_t joinRun(State& S, ThreadData* t, uint32_t first, uint32_t count) {
  Value* s = t->stack;
  uint32_t n = 2;
  while (n < count && isStrNum(s[first + count - 1 - n])) n++;
  std::string buf;
  char num[64];
  for (uint32_t j = first + count - n; j < first + count; j++) {
    if (s[j].isString()) {
      buf.append(s[j].asString()->view());
    } else {
      size_t len = formatNumber(s[j], num);
      buf.append(num, len);
    }
  }
  String* r = newString(S, buf);
  if (!r) return 0;
  s[first + count - n] = Value::string(r);
  return n;
}

Status concatErrorMayGC(State& S, ThreadData* t, uint32_t xi) {
  Value* s = t->stack;
  uint32_t bad = isStrNum(s[xi]) ? xi + 1 : xi;
  VarRef ref = VarRef::none();
  if (t->frameCount && (t->frame().flags & kFrameLua) && bad >= t->frame().base) ref = VarRef::reg(int(bad - t->frame().base));
  return typeErrorMayGC(S, t, s[bad], ref, "concatenate");
}

}  // namespace

Value binaryMetamethod(State& S, const Value& a, const Value& b, Meta event) {
  Value tm = metamethodOf(S, a, event);
  if (tm.isNil()) tm = metamethodOf(S, b, event);
  return tm;
}

Table* metatableOf(State& S, const Value& v) {
  switch (v.tag) {
    case Tag::Table: return tableMetatable(v.asTable());
    case Tag::Userdata: return v.asUserdata()->metatable;
    default: return S.typeMetatables[int(basicType(v))];
  }
}

Value metaField(State& S, Table* mt, Meta event) {
  if (!mt) return Value::nil();
  int e = int(event);
  if (e < kFastMetaCount) {
    if (metaKnownAbsent(mt, e)) return Value::nil();
    Value v = tableGetStr(mt, S.metaNames[e]);
    if (v.isNil()) noteMetaAbsent(mt, e);
    return v;
  }
  return tableGetStr(mt, S.metaNames[e]);
}

Value metamethodOf(State& S, const Value& v, Meta event) { return metaField(S, metatableOf(S, v), event); }

Meta metaOfEvent(MetaEvent e) { return Meta(uint8_t(e)); }

bool rawEquals(const Value& a, const Value& b) {
  if (a.isNumber() && b.isNumber()) return numEquals(a, b);
  if (a.identical(b)) return true;
  if (a.isString() && b.isString()) return stringEquals(a.asString(), b.asString());
  return false;
}

std::string typeNameWithMeta(State& S, const Value& v) {
  if (v.isTable() || v.tag == Tag::Userdata) {
    Value name = metaField(S, metatableOf(S, v), Meta::Name);
    if (name.isString()) return std::string(name.asString()->view());
  }
  return typeName(v);
}

Status typeErrorMayGC(State& S, ThreadData* t, const Value& v, VarRef ref, const char* op) {
  // A call is named by the instruction that makes it, whatever value it ended up calling
  // (a metamethod, the __call of a callee, a for iterator), as Lua names it.
  std::string vi = std::strcmp(op, "call") == 0 ? callInfo(t) : varInfo(t, ref);
  return runtimeErrorMayGC(S, t, "attempt to %s a %s value%s", op, typeNameWithMeta(S, v).c_str(), vi.c_str());
}

Status indexLoopMayGC(State& S, ThreadData* t, const Value& obj, const Value& key, VarRef ref, uint32_t dest) {
  Value out, fn, self;
  Status st = resolveIndexMayGC(S, t, obj, key, ref, out, fn, self);
  if (!st.isOk()) return st;
  if (fn.isNil()) {
    t->stack[dest] = out;
    return st;
  }
  return callMetaLoopMayGC(S, t, fn, self, key, Value::nil(), 2, 1);
}

Status newIndexLoopMayGC(State& S, ThreadData* t, const Value& obj, const Value& key, const Value& val, VarRef ref) {
  Value fn, self;
  Value k = key, v = val;
  Status st = resolveNewIndexMayGC(S, t, obj, k, v, ref, fn, self);
  if (!st.isOk() || fn.isNil()) return st;
  return callMetaLoopMayGC(S, t, fn, self, k, v, 3, 0);
}

Status arithLoopMayGC(State& S, ThreadData* t, const Value& a, const Value& b, Meta event, VarRef ra, VarRef rb,
                      uint32_t dest) {
  Value x = a, y = b;
  Value out;
  ArithFailure why;
  // Numbers and numeric strings: the string library's metamethods would compute the
  // same result, so arithmetic on them never needs a call.
  if (!isBitwise(event) || (x.isNumber() && y.isNumber())) {
    if ((isStrNum(x) && isStrNum(y)) && arithRaw(arithOpOf(event), x, y, out, why)) {
      t->stack[dest] = out;
      return Status::ok();
    }
  }
  Value tm = binaryMetamethod(S, x, y, event);
  if (!tm.isNil()) return callMetaLoopMayGC(S, t, tm, x, y, Value::nil(), 2, 1);
  if (!why.divByZero && arithRaw(arithOpOf(event), x, y, out, why) && !isBitwise(event)) {
    t->stack[dest] = out;
    return Status::ok();
  }
  return arithErrorMayGC(S, t, x, y, event, ra, rb, why);
}

Status unaryLoopMayGC(State& S, ThreadData* t, const Value& a, Meta event, VarRef ref, uint32_t dest) {
  Value x = a;
  if (event == Meta::Len) {
    if (x.isString()) {
      t->stack[dest] = Value::integer(int64_t(x.asString()->length));
      return Status::ok();
    }
    Value tm = metamethodOf(S, x, Meta::Len);
    if (tm.isNil()) {
      if (x.isTable()) {
        t->stack[dest] = Value::integer(int64_t(tableLength(x.asTable())));
        return Status::ok();
      }
      return typeErrorMayGC(S, t, x, ref, "get length of");
    }
    return callMetaLoopMayGC(S, t, tm, x, x, Value::nil(), 2, 1);
  }
  Value out;
  ArithFailure why;
  if (x.isNumber() || x.isString()) {
    if (event == Meta::Unm && arithRaw(ArithOp::Unm, x, x, out, why)) {
      t->stack[dest] = out;
      return Status::ok();
    }
    if (event == Meta::BNot && x.isNumber() && arithRaw(ArithOp::BNot, x, x, out, why)) {
      t->stack[dest] = out;
      return Status::ok();
    }
  }
  Value tm = metamethodOf(S, x, event);
  if (!tm.isNil()) return callMetaLoopMayGC(S, t, tm, x, x, Value::nil(), 2, 1);
  return arithErrorMayGC(S, t, x, x, event, ref, ref, why);
}

Status compareLoopMayGC(State& S, ThreadData* t, const Value& a, const Value& b, Meta event) {
  bool res;
  if (compareRaw(a, b, event, res)) return condJump(t, res);
  Value x = a, y = b;
  Value tm = binaryMetamethod(S, x, y, event);
  if (tm.isNil()) return compareErrorMayGC(S, t, x, y);
  return callMetaLoopMayGC(S, t, tm, x, y, Value::nil(), 2, 1);
}

Status equalsLoopMayGC(State& S, ThreadData* t, const Value& a, const Value& b) {
  Value x = a, y = b;
  Value tm = eqMetamethod(S, x, y);
  if (tm.isNil()) return condJump(t, false);
  return callMetaLoopMayGC(S, t, tm, x, y, Value::nil(), 2, 1);
}

bool concatStrNums(State& S, ThreadData* t, uint32_t first, uint32_t count) {
  for (uint32_t j = first; j < first + count; j++) {
    if (!isStrNum(t->stack[j])) return false;
  }
  return joinRun(S, t, first, count) != 0;
}

Status concatLoopMayGC(State& S, ThreadData* t, uint32_t first, uint32_t count) {
  while (count > 1) {
    Value* s = t->stack;
    uint32_t xi = first + count - 2;
    if (isStrNum(s[xi]) && isStrNum(s[xi + 1])) {
      uint32_t n = joinRun(S, t, first, count);
      if (n == 0) return memoryErrorStatus(S, t);
      count -= n - 1;
      continue;
    }
    Value x = s[xi], y = s[xi + 1];
    Value tm = binaryMetamethod(S, x, y, Meta::Concat);
    if (tm.isNil()) return concatErrorMayGC(S, t, xi);
    t->frame().extra = count;
    return callMetaLoopMayGC(S, t, tm, x, y, Value::nil(), 2, 1);
  }
  return Status::ok();
}

Status finishOpMayGC(State& S, ThreadData* t, uint32_t result) {
  CallFrame& f = t->frame();
  Instruction inst = f.pc[-1];
  Value res = t->stack[result];
  Value* base = t->stack + f.base;
  // The metamethod's frame lay at the scratch top, and its return left the thread's top
  // past its result: back to the frame's (as Lua's luaV_finishOp leaves L->top at
  // ci->top), or each call of a loop went a slot higher than the last, growing the
  // stack by a slot a call (a million additions of a vector: 196,608 slots).
  t->top = f.top;
  switch (getOp(inst)) {
    case Op::MMBIN:
    case Op::MMBINI:
    case Op::MMBINK:
      base[getA(f.pc[-2])] = res;
      break;
    case Op::UNM: case Op::BNOT: case Op::LEN: case Op::GETTABUP: case Op::GETTABLE:
    case Op::GETI: case Op::GETFIELD: case Op::SELF:
      base[getA(inst)] = res;
      break;
    case Op::LT: case Op::LE: case Op::LTI: case Op::LEI: case Op::GTI: case Op::GEI: case Op::EQ:
      return condJump(t, res.isTruthy());
    case Op::CONCAT: {
      uint32_t first = f.base + getA(inst);
      uint32_t count = f.extra;
      t->stack[first + count - 2] = res;
      return concatLoopMayGC(S, t, first, count - 1);
    }
    // A __close that yielded (closeTbcInFrameMayGC) returned: the instruction runs again
    // for the variables left, RETURN with its results where they were.
    case Op::RETURN:
      t->top = f.base + getA(inst) + f.extra;
      f.pc--;
      break;
    case Op::CLOSE:
      f.pc--;
      break;
    default:
      break;
  }
  return Status::ok();
}

Status callValueMayGC(State& S, ThreadData* t, const Value& fn, const Value* args, int nargs, Value& out) {
  uint32_t oldTop = t->top;
  uint32_t func = scratchTop(t);
  if (!ensureStackSlots(t, uint64_t(func) + 1 + nargs + kExtraStack)) return stackOverflowMayGC(S, t);
  t->stack[func] = fn;
  for (int j = 0; j < nargs; j++) t->stack[func + 1 + j] = args[j];
  t->top = func + 1 + nargs;
  Status st = callMayGC(S, t, func, 1);
  out = t->stack[func];
  t->top = oldTop;
  return st;
}

Status indexMayGC(State& S, ThreadData* t, const Value& obj, const Value& key, Value& out) {
  Value fn, self;
  Status st = resolveIndexMayGC(S, t, obj, key, VarRef::none(), out, fn, self);
  if (!st.isOk() || fn.isNil()) return st;
  return callMetaSyncMayGC(S, t, fn, self, key, Value::nil(), 2, out);
}

Status newIndexMayGC(State& S, ThreadData* t, const Value& obj, const Value& key, const Value& val) {
  Value fn, self, out;
  Status st = resolveNewIndexMayGC(S, t, obj, key, val, VarRef::none(), fn, self);
  if (!st.isOk() || fn.isNil()) return st;
  return callMetaSyncMayGC(S, t, fn, self, key, val, 3, out);
}

Status arithMayGC(State& S, ThreadData* t, const Value& a, const Value& b, Meta event, Value& out) {
  ArithFailure why;
  if ((!isBitwise(event) || (a.isNumber() && b.isNumber())) && isStrNum(a) && isStrNum(b) &&
      arithRaw(arithOpOf(event), a, b, out, why)) {
    return Status::ok();
  }
  Value tm = binaryMetamethod(S, a, b, event);
  if (!tm.isNil()) return callMetaSyncMayGC(S, t, tm, a, b, Value::nil(), 2, out);
  return arithErrorMayGC(S, t, a, b, event, VarRef::none(), VarRef::none(), why);
}

Status lengthMayGC(State& S, ThreadData* t, const Value& v, Value& out) {
  if (v.isString()) {
    out = Value::integer(int64_t(v.asString()->length));
    return Status::ok();
  }
  Value tm = metamethodOf(S, v, Meta::Len);
  if (tm.isNil()) {
    if (v.isTable()) {
      out = Value::integer(int64_t(tableLength(v.asTable())));
      return Status::ok();
    }
    return typeErrorMayGC(S, t, v, VarRef::none(), "get length of");
  }
  return callMetaSyncMayGC(S, t, tm, v, v, Value::nil(), 2, out);
}

Status lessMayGC(State& S, ThreadData* t, const Value& a, const Value& b, Meta event, bool& out) {
  if (compareRaw(a, b, event, out)) return Status::ok();
  Value tm = binaryMetamethod(S, a, b, event);
  if (tm.isNil()) return compareErrorMayGC(S, t, a, b);
  Value r;
  Status st = callMetaSyncMayGC(S, t, tm, a, b, Value::nil(), 2, r);
  out = r.isTruthy();
  return st;
}

Status equalsMayGC(State& S, ThreadData* t, const Value& a, const Value& b, bool& out) {
  if (rawEquals(a, b)) {
    out = true;
    return Status::ok();
  }
  out = false;
  if (!((a.isTable() && b.isTable()) || (a.tag == Tag::Userdata && b.tag == Tag::Userdata))) return Status::ok();
  Value tm = eqMetamethod(S, a, b);
  if (tm.isNil()) return Status::ok();
  Value r;
  Status st = callMetaSyncMayGC(S, t, tm, a, b, Value::nil(), 2, r);
  out = r.isTruthy();
  return st;
}

Status concatMayGC(State& S, ThreadData* t, uint32_t first, uint32_t count) {
  while (count > 1) {
    Value* s = t->stack;
    uint32_t xi = first + count - 2;
    if (isStrNum(s[xi]) && isStrNum(s[xi + 1])) {
      uint32_t n = joinRun(S, t, first, count);
      if (n == 0) return memoryErrorStatus(S, t);
      count -= n - 1;
      continue;
    }
    Value x = s[xi], y = s[xi + 1];
    Value tm = binaryMetamethod(S, x, y, Meta::Concat);
    if (tm.isNil()) return concatErrorMayGC(S, t, xi);
    Value r;
    Status st = callMetaSyncMayGC(S, t, tm, x, y, Value::nil(), 2, r);
    if (!st.isOk()) return st;
    t->stack[xi] = r;
    count--;
  }
  return Status::ok();
}

std::string defaultToString(State& S, const Value& v) {
  char buf[96];
  switch (v.tag) {
    case Tag::Nil: return "nil";
    case Tag::False: return "false";
    case Tag::True: return "true";
    case Tag::Int:
    case Tag::Float: {
      size_t n = formatNumber(v, buf);
      return std::string(buf, n);
    }
    case Tag::String: return std::string(v.asString()->view());
    case Tag::LightUserdata:
      std::snprintf(buf, sizeof buf, "userdata: %p", v.u.p);
      return buf;
    case Tag::LightNative:
    case Tag::LightCFunction:
      std::snprintf(buf, sizeof buf, "function: %p", reinterpret_cast<void*>(v.u.fn));
      return buf;
    default: {
      std::string name = typeNameWithMeta(S, v);
      // Objects move, so their address is no identity; the identity hash is.
      std::snprintf(buf, sizeof buf, ": 0x%08x", v.u.obj->header.hash);
      return name + buf;
    }
  }
}

Status toStringMayGC(State& S, ThreadData* t, const Value& v, String*& out) {
  Value tm = metamethodOf(S, v, Meta::ToString);
  if (!tm.isNil()) {
    Value r;
    Status st = callMetaSyncMayGC(S, t, tm, v, Value::nil(), Value::nil(), 1, r);
    if (!st.isOk()) return st;
    if (r.isString()) {
      out = r.asString();
      return Status::ok();
    }
    if (!r.isNumber()) return runtimeErrorMayGC(S, t, "'__tostring' must return a string");
    std::string s = defaultToString(S, r);
    out = newString(S, s);
    return out ? Status::ok() : memoryErrorStatus(S, t);
  }
  if (v.isString()) {
    out = v.asString();
    return Status::ok();
  }
  std::string s = defaultToString(S, v);
  out = newString(S, s);
  return out ? Status::ok() : memoryErrorStatus(S, t);
}

}  // namespace weft::vm
