// The stack of the C API (manual §4.1-4.6): indices and pseudo-indices, stack
// manipulation, pushing values and reading them back, arithmetic and comparison.
#include <cmath>
#include <cstring>
#include <optional>

#include "runtime/capi/internal.h"
#include "runtime/capi/lock.h"
#include "vm/meta.h"
#include "vm/number.h"
#include "vm/proto.h"
#include "vm/string.h"
#include "vm/table.h"

using namespace weft;
using namespace weft::capi;
using vm::Tag;
using vm::Value;

namespace weft::capi {

namespace {

// The running C closure of L (upvalue pseudo-indices), or nullptr.
vm::NativeClosure* runningClosure(vm::ThreadData* t) {
  if (t->frameCount == 0) return nullptr;
  Value f = t->stack[t->frames[t->frameCount - 1].func];
  return f.tag == Tag::NativeClosure ? f.asNativeClosure() : nullptr;
}

}  // namespace

bool isPseudo(int idx) { return idx <= LUA_REGISTRYINDEX; }

uint32_t slotOfMayGC(lua_State* L, int idx) {
  vm::ThreadData* t = threadOf(L);
  uint32_t base = baseOf(t);
  if (idx > 0) {
    uint32_t slot = base + uint32_t(idx) - 1;
    if (slot >= t->top) raiseMessageMayGC(L, "invalid stack index");
    return slot;
  }
  if (idx == 0 || isPseudo(idx) || uint32_t(-idx) > t->top - base) raiseMessageMayGC(L, "invalid stack index");
  return t->top - uint32_t(-idx);
}

Value valueAt(lua_State* L, int idx) {
  vm::ThreadData* t = threadOf(L);
  if (idx > 0) {
    uint32_t slot = baseOf(t) + uint32_t(idx) - 1;
    return slot < t->top ? t->stack[slot] : Value::nil();
  }
  if (!isPseudo(idx)) {
    if (idx == 0 || uint32_t(-idx) > t->top - baseOf(t)) return Value::nil();
    return t->stack[t->top - uint32_t(-idx)];
  }
  if (idx == LUA_REGISTRYINDEX) return Value::table(stateOf(L).registry);
  vm::NativeClosure* c = runningClosure(t);
  uint32_t n = uint32_t(LUA_REGISTRYINDEX - idx);
  if (!c || n > c->numUpvalues) return Value::nil();
  return vm::loadSlot(c->upvalues[n - 1]);
}

// Whether idx names no value (past the top, or an upvalue the closure lacks).
bool isNone(lua_State* L, int idx) {
  vm::ThreadData* t = threadOf(L);
  if (idx > 0) return baseOf(t) + uint32_t(idx) - 1 >= t->top;
  if (!isPseudo(idx)) return idx == 0 || uint32_t(-idx) > t->top - baseOf(t);
  if (idx == LUA_REGISTRYINDEX) return false;
  vm::NativeClosure* c = runningClosure(t);
  return !c || uint32_t(LUA_REGISTRYINDEX - idx) > c->numUpvalues;
}

void setValueAtMayGC(lua_State* L, int idx, const Value& v) {
  vm::ThreadData* t = threadOf(L);
  if (!isPseudo(idx)) {
    t->stack[slotOfMayGC(L, idx)] = v;
    return;
  }
  if (idx == LUA_REGISTRYINDEX) raiseMessageMayGC(L, "cannot replace the registry");
  vm::NativeClosure* c = runningClosure(t);
  uint32_t n = uint32_t(LUA_REGISTRYINDEX - idx);
  if (!c || n > c->numUpvalues) raiseMessageMayGC(L, "invalid upvalue index");
  vm::storeValue(c, c->upvalues[n - 1], v);
}

void pushMayGC(lua_State* L, const Value& v) {
  vm::ThreadData* t = threadOf(L);
  if (t->top + 1 >= t->stackSize) [[unlikely]] {
    if (!vm::ensureStackSlots(t, uint64_t(t->top) + 1 + vm::kMinCStack)) raiseMessageMayGC(L, "stack overflow");
  }
  t->stack[t->top++] = v;
}

[[noreturn]] void raiseMessageMayGC(lua_State* L, const char* message) {
  vm::State& S = stateOf(L);
  vm::String* s = vm::newString(S, message);
  if (!s) raiseMemory(L);
  raiseStatus(L, raiseValueUnlockedMayGC(L, Value::string(s)));
}

[[noreturn]] void raiseMemory(lua_State* L) { raiseStatus(L, vm::memoryErrorStatus(stateOf(L), threadOf(L))); }

}  // namespace weft::capi

namespace {

vm::String* newStringOrRaise(lua_State* L, std::string_view bytes) {
  vm::String* s = vm::newString(stateOf(L), bytes);
  if (!s) raiseMemory(L);
  return s;
}

// Pushes a new string and returns its bytes, pinned while it is on the stack.
const char* pushStringMayGC(lua_State* L, std::string_view bytes) {
  vm::String* s = newStringOrRaise(L, bytes);
  pushMayGC(L, Value::string(s));
  return pinnedBytes(L, threadOf(L)->top - 1, s);
}

void checkStatus(lua_State* L, Status st) {
  if (!st.isOk()) raiseStatus(L, st);
}

}  // namespace

// ---- Stack manipulation ----

LUA_API int lua_absindex(lua_State* L, int idx) {
  if (idx > 0 || isPseudo(idx)) return idx;
  vm::ThreadData* t = threadOf(L);
  return int(t->top - baseOf(t)) + idx + 1;
}

LUA_API int lua_gettop(lua_State* L) {
  vm::ThreadData* t = threadOf(L);
  return int(t->top - baseOf(t));
}

LUA_API void lua_settop(lua_State* L, int idx) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  uint32_t base = baseOf(t);
  uint32_t newTop;
  if (idx >= 0) {
    newTop = base + uint32_t(idx);
    if (newTop > t->top) {
      if (!vm::ensureStackSlots(t, uint64_t(newTop) + vm::kMinCStack)) raiseMessageMayGC(L, "stack overflow");
      for (uint32_t j = t->top; j < newTop; j++) t->stack[j] = Value::nil();
    }
  } else {
    if (uint32_t(-idx - 1) > t->top - base) raiseMessageMayGC(L, "invalid new top");
    newTop = t->top + uint32_t(idx + 1);
  }
  // Lua 5.4 closes pending to-be-closed variables that leave the stack.
  if (t->hasTbcFrom(newTop)) {
    Status st = vm::closeTbcMayGC(stateOf(L), t, newTop, Status::ok());
    if (!st.isOk()) raiseStatus(L, st);
  }
  if (newTop < t->top) unpinFrom(t, newTop);
  t->top = newTop;
}

LUA_API void lua_pushvalue(lua_State* L, int idx) {
  API_ENTRY(L);
  pushMayGC(L, valueAt(L, idx));
}

LUA_API void lua_rotate(lua_State* L, int idx, int n) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  uint32_t start = slotOfMayGC(L, idx);
  uint32_t end = t->top;  // exclusive
  uint32_t len = end - start;
  if (len == 0) return;
  uint32_t m = uint32_t(n >= 0 ? n % int64_t(len) : (len - uint32_t(-int64_t(n) % len)) % len);
  // Rotating right by m is three reversals: the whole, then both parts.
  // Rotating right by m is three reversals of half-open ranges: the whole, then both parts.
  auto reverse = [t](uint32_t a, uint32_t b) {
    for (; a + 1 < b; a++, b--) std::swap(t->stack[a], t->stack[b - 1]);
  };
  reverse(start, end);
  reverse(start, start + m);
  reverse(start + m, end);
}

LUA_API void lua_copy(lua_State* L, int fromidx, int toidx) {
  API_ENTRY(L);
  setValueAtMayGC(L, toidx, valueAt(L, fromidx));
}

LUA_API int lua_checkstack(lua_State* L, int n) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  if (n < 0) return 0;
  return vm::ensureStackSlots(t, uint64_t(t->top) + uint32_t(n) + vm::kExtraStack) ? 1 : 0;
}

LUA_API void lua_xmove(lua_State* from, lua_State* to, int n) {
  API_ENTRY(from);
  if (from == to || n <= 0) return;
  vm::ThreadData* a = threadOf(from);
  vm::ThreadData* b = threadOf(to);
  if (!vm::ensureStackSlots(b, uint64_t(b->top) + uint32_t(n) + vm::kMinCStack)) raiseMessageMayGC(to, "stack overflow");
  vm::markStackDirty(b);
  for (int j = 0; j < n; j++) b->stack[b->top + uint32_t(j)] = a->stack[a->top - uint32_t(n) + uint32_t(j)];
  b->top += uint32_t(n);
  a->top -= uint32_t(n);
}

// ---- Reading values ----

LUA_API int lua_type(lua_State* L, int idx) {
  API_ENTRY(L);
  if (isNone(L, idx)) return LUA_TNONE;
  return int(vm::basicType(valueAt(L, idx)));
}

LUA_API const char* lua_typename(lua_State*, int tp) {
  static const char* const kNames[] = {"no value", "nil",      "boolean", "userdata", "number",
                                       "string",   "table",    "function", "userdata", "thread"};
  return tp >= -1 && tp < LUA_NUMTYPES ? kNames[tp + 1] : "?";
}

LUA_API int lua_isnumber(lua_State* L, int idx) {
  API_ENTRY(L);
  Value out;
  return vm::toNumeric(valueAt(L, idx), out) ? 1 : 0;
}

LUA_API int lua_isstring(lua_State* L, int idx) {
  API_ENTRY(L);
  Value v = valueAt(L, idx);
  return v.isString() || v.isNumber();
}

LUA_API int lua_iscfunction(lua_State* L, int idx) {
  API_ENTRY(L);
  Value v = valueAt(L, idx);
  return v.isFunction() && !v.isLuaClosure();
}

LUA_API int lua_isinteger(lua_State* L, int idx) { return valueAt(L, idx).isInt(); }

LUA_API int lua_isuserdata(lua_State* L, int idx) { return valueAt(L, idx).isUserdata(); }

LUA_API lua_Number lua_tonumberx(lua_State* L, int idx, int* isnum) {
  API_ENTRY(L);
  double d = 0;
  bool ok = vm::toNumber(valueAt(L, idx), d);
  if (isnum) *isnum = ok;
  return ok ? d : 0;
}

LUA_API lua_Integer lua_tointegerx(lua_State* L, int idx, int* isnum) {
  API_ENTRY(L);
  int64_t i = 0;
  bool ok = vm::toInteger(valueAt(L, idx), i);
  if (isnum) *isnum = ok;
  return ok ? i : 0;
}

LUA_API int lua_toboolean(lua_State* L, int idx) { return valueAt(L, idx).isTruthy(); }

LUA_API const char* lua_tolstring(lua_State* L, int idx, size_t* len) {
  API_ENTRY(L);
  Value v = valueAt(L, idx);
  if (v.isNumber()) {
    // Converted in place, as Lua does (lua_next users beware).
    vm::String* s = newStringOrRaise(L, vm::numberToString(v));
    v = Value::string(s);
    setValueAtMayGC(L, idx, v);
  } else if (!v.isString()) {
    if (len) *len = 0;
    return nullptr;
  }
  vm::String* s = v.asString();
  if (len) *len = s->length;
  if (isPseudo(idx)) return pinnedBytes(L, UINT32_MAX, s);
  return pinnedBytes(L, slotOfMayGC(L, idx), s);
}

LUA_API lua_Unsigned lua_rawlen(lua_State* L, int idx) {
  API_ENTRY(L);
  Value v = valueAt(L, idx);
  switch (v.tag) {
    case Tag::String: return v.asString()->length;
    case Tag::Userdata: return v.asUserdata()->size;
    case Tag::Table: return vm::tableLength(v.asTable());
    default: return 0;
  }
}

LUA_API lua_CFunction lua_tocfunction(lua_State* L, int idx) {
  API_ENTRY(L);
  Value v = valueAt(L, idx);
  if (v.tag == Tag::LightCFunction) return reinterpret_cast<lua_CFunction>(v.u.p);
  if (v.tag == Tag::NativeClosure) return reinterpret_cast<lua_CFunction>(v.asNativeClosure()->cfunction);
  if (v.tag == Tag::LightNative) return thunkForBuiltin(v.asLightNative());
  return nullptr;
}

LUA_API void* lua_touserdata(lua_State* L, int idx) {
  API_ENTRY(L);
  Value v = valueAt(L, idx);
  if (v.tag == Tag::Userdata) return v.asUserdata()->data;
  if (v.tag == Tag::LightUserdata) return v.u.p;
  return nullptr;
}

LUA_API const void* lua_topointer(lua_State* L, int idx) {
  API_ENTRY(L);
  Value v = valueAt(L, idx);
  switch (v.tag) {
    case Tag::LightUserdata:
    case Tag::LightCFunction:
    case Tag::LightNative: return v.u.p;
    case Tag::Userdata: return v.asUserdata()->data;
    case Tag::String:
    case Tag::Table:
    case Tag::LuaClosure:
    case Tag::NativeClosure:
    case Tag::Thread:
      // Objects move: their identity hash is their stable identity (what tostring shows).
      return reinterpret_cast<const void*>(uintptr_t(v.isString() ? vm::stringIdentity(v.asString())
                                                                 : v.u.obj->header.hash));
    default: return nullptr;
  }
}

// ---- Pushing values ----

LUA_API void lua_pushnil(lua_State* L) {
  API_ENTRY(L);
  pushMayGC(L, Value::nil());
}
LUA_API void lua_pushnumber(lua_State* L, lua_Number n) {
  API_ENTRY(L);
  pushMayGC(L, Value::number(n));
}
LUA_API void lua_pushinteger(lua_State* L, lua_Integer n) {
  API_ENTRY(L);
  pushMayGC(L, Value::integer(n));
}
LUA_API void lua_pushboolean(lua_State* L, int b) {
  API_ENTRY(L);
  pushMayGC(L, Value::boolean(b != 0));
}
LUA_API void lua_pushlightuserdata(lua_State* L, void* p) {
  API_ENTRY(L);
  pushMayGC(L, Value::lightUserdata(p));
}

LUA_API const char* lua_pushlstring(lua_State* L, const char* s, size_t len) {
  API_ENTRY(L);
  return pushStringMayGC(L, std::string_view(len ? s : "", len));
}

LUA_API const char* lua_pushstring(lua_State* L, const char* s) {
  API_ENTRY(L);
  if (!s) {
    pushMayGC(L, Value::nil());
    return nullptr;
  }
  return pushStringMayGC(L, s);
}

LUA_API void lua_pushcclosure(lua_State* L, lua_CFunction fn, int n) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  if (n == 0) {
    vm::NativeFn builtin = builtinOfThunk(fn);
    pushMayGC(L, builtin ? Value::lightNative(builtin) : cFunctionValue(fn));
    return;
  }
  vm::ThreadData* t = threadOf(L);
  if (n < 0 || n > 255 || uint32_t(n) > t->top - baseOf(t)) raiseMessageMayGC(L, "upvalue index too large");
  vm::NativeClosure* c = vm::newNativeClosure(S, S.callLightC, nullptr, uint32_t(n));
  if (!c) raiseMemory(L);
  c->fn = [](vm::CallContext& cx) { return enterCMayGC(cx, reinterpret_cast<lua_CFunction>(cx.callee().asNativeClosure()->cfunction), nullptr, 0, 0); };
  c->cfunction = reinterpret_cast<void (*)()>(fn);
  for (int j = 0; j < n; j++) vm::storeValue(c, c->upvalues[j], t->stack[t->top - uint32_t(n) + uint32_t(j)]);
  t->top -= uint32_t(n);
  pushMayGC(L, Value::nativeClosure(c));
}

// ---- Arithmetic and comparison ----

LUA_API void lua_arith(lua_State* L, int op) {
  API_ENTRY(L);
  static const vm::Meta kEvents[] = {vm::Meta::Add, vm::Meta::Sub,  vm::Meta::Mul, vm::Meta::Mod, vm::Meta::Pow,
                                     vm::Meta::Div, vm::Meta::IDiv, vm::Meta::BAnd, vm::Meta::BOr, vm::Meta::BXor,
                                     vm::Meta::Shl, vm::Meta::Shr,  vm::Meta::Unm, vm::Meta::BNot};
  if (op < 0 || op > LUA_OPBNOT) raiseMessageMayGC(L, "invalid arithmetic operator");
  vm::ThreadData* t = threadOf(L);
  if (op == LUA_OPUNM || op == LUA_OPBNOT) pushMayGC(L, t->stack[t->top - 1]);  // a fake second operand
  if (t->top - baseOf(t) < 2) raiseMessageMayGC(L, "not enough elements in the stack");
  Value out;
  Status st = vm::arithMayGC(stateOf(L), t, t->stack[t->top - 2], t->stack[t->top - 1], kEvents[op], out);
  checkStatus(L, st);
  t->stack[t->top - 2] = out;
  t->top--;
}

LUA_API int lua_rawequal(lua_State* L, int idx1, int idx2) {
  API_ENTRY(L);
  if (isNone(L, idx1) || isNone(L, idx2)) return 0;
  return vm::rawEquals(valueAt(L, idx1), valueAt(L, idx2));
}

LUA_API int lua_compare(lua_State* L, int idx1, int idx2, int op) {
  API_ENTRY(L);
  if (isNone(L, idx1) || isNone(L, idx2)) return 0;
  Value a = valueAt(L, idx1);
  Value b = valueAt(L, idx2);
  vm::State& S = stateOf(L);
  bool out = false;
  Status st;
  switch (op) {
    case LUA_OPEQ: st = vm::equalsMayGC(S, threadOf(L), a, b, out); break;
    case LUA_OPLT: st = vm::lessMayGC(S, threadOf(L), a, b, vm::Meta::Lt, out); break;
    case LUA_OPLE: st = vm::lessMayGC(S, threadOf(L), a, b, vm::Meta::Le, out); break;
    default: raiseMessageMayGC(L, "invalid comparison operator");
  }
  checkStatus(L, st);
  return out;
}

LUA_API void lua_concat(lua_State* L, int n) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  if (n == 0) {
    pushStringMayGC(L, "");
    return;
  }
  if (n == 1) return;
  if (n < 0 || uint32_t(n) > t->top - baseOf(t)) raiseMessageMayGC(L, "not enough elements in the stack");
  uint32_t first = t->top - uint32_t(n);
  checkStatus(L, vm::concatMayGC(stateOf(L), t, first, uint32_t(n)));
  t->top = first + 1;
}

LUA_API void lua_len(lua_State* L, int idx) {
  API_ENTRY(L);
  Value out;
  checkStatus(L, vm::lengthMayGC(stateOf(L), threadOf(L), valueAt(L, idx), out));
  pushMayGC(L, out);
}

LUA_API size_t lua_stringtonumber(lua_State* L, const char* s) {
  API_ENTRY(L);
  std::optional<Value> v = vm::stringToNumber(s);
  if (!v) return 0;
  pushMayGC(L, *v);
  return std::strlen(s) + 1;
}

// ---- Formatted strings ----

namespace {

// Lua's own format subset (%% %c %d %I %f %p %s %U) into a new string. A separate
// function: its C++ locals are gone before the caller raises. On a bad conversion, `bad`
// gets the offending character and nothing is made.
vm::String* formatString(vm::State& S, const char* fmt, va_list ap, char& bad) {
  std::string out;
  char buf[64];
  for (const char* p = fmt; *p; p++) {
    if (*p != '%') {
      out += *p;
      continue;
    }
    switch (*++p) {
      case 's': {
        const char* s = va_arg(ap, const char*);
        out += s ? s : "(null)";
        break;
      }
      case 'c': out += char(va_arg(ap, int)); break;
      case 'd': out += vm::numberToString(Value::integer(va_arg(ap, int))); break;
      case 'I': out += vm::numberToString(Value::integer(int64_t(va_arg(ap, lua_Integer)))); break;
      case 'f': out += vm::numberToString(Value::number(double(va_arg(ap, lua_Number)))); break;
      case 'p': {
        int n = std::snprintf(buf, sizeof buf, "%p", va_arg(ap, void*));
        out.append(buf, size_t(n));
        break;
      }
      case 'U': {
        unsigned long x = va_arg(ap, unsigned long);
        // UTF-8 as Lua writes it (up to 6 bytes, for values up to 0x7FFFFFFF).
        char utf[8];
        int n = 1;
        if (x < 0x80) {
          utf[7] = char(x);
        } else {
          unsigned mfb = 0x3f;
          do {
            utf[8 - n++] = char(0x80 | (x & 0x3f));
            x >>= 6;
            mfb >>= 1;
          } while (x > mfb);
          utf[8 - n] = char((~mfb << 1) | x);
        }
        out.append(utf + 8 - n, size_t(n));
        break;
      }
      case '%': out += '%'; break;
      default: bad = *p ? *p : '%'; return nullptr;
    }
  }
  return vm::newString(S, out);
}

}  // namespace

LUA_API const char* lua_pushvfstring(lua_State* L, const char* fmt, va_list argp) {
  API_ENTRY(L);
  char bad = 0;
  va_list copy;
  va_copy(copy, argp);
  vm::String* s = formatString(stateOf(L), fmt, copy, bad);
  va_end(copy);
  if (bad) {
    char msg[64];
    std::snprintf(msg, sizeof msg, "invalid conversion '%%%c' to 'lua_pushfstring'", bad);
    raiseMessageMayGC(L, msg);
  }
  if (!s) raiseMemory(L);
  pushMayGC(L, Value::string(s));
  return pinnedBytes(L, threadOf(L)->top - 1, s);
}

LUA_API const char* lua_pushfstring(lua_State* L, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char* r = lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  return r;
}
