// The debug library (manual §6.10): traceback, getinfo, locals, upvalues, metatables,
// the registry and hooks.
#include <cstring>
#include <string>

#include "frontend/compiler.h"
#include "vm/api.h"
#include "vm/debug.h"
#include "vm/interp.h"
#include "vm/lib/libs.h"
#include "vm/meta.h"
#include "vm/string.h"
#include "vm/table.h"
#include "vm/thread.h"

namespace weft::vm {

namespace {

// The optional thread first argument, held for the call (DEVELOPERS.md invariant 6). A
// thread other than the caller's chain may belong to another task: a coroutine running
// there, or a suspended one that task may resume at any moment. A suspended one is held
// as a resume holds it (Suspended -> Normal, the same compare-exchange), so nobody
// resumes it meanwhile; one running in another task is refused (thread() is nullptr).
// `arg` becomes the index of the argument after the thread.
class ThreadArg {
 public:
  ThreadArg(CallContext& cx, uint32_t& arg) {
    ThreadData* self = cx.threadData();
    arg = cx.arg(1).isThread() ? 2 : 1;
    if (arg == 1) {
      t_ = self;
      return;
    }
    ThreadData* t = cx.arg(1).asThread()->data;
    for (ThreadData* r = self; r; r = r->resumer) {
      if (r == t) {
        t_ = t;
        return;
      }
    }
    ThreadStatus expected = ThreadStatus::Suspended;
    // acq_rel, as coroutine.resume's: we see what the last resume wrote, and the next
    // resume sees what setlocal or sethook wrote.
    if (t->status.compare_exchange_strong(expected, ThreadStatus::Normal, std::memory_order_acq_rel)) {
      held_ = true;
      t_ = t;
    } else if (expected == ThreadStatus::Dead) {
      t_ = t;  // nothing runs on it any more
    }
  }
  ~ThreadArg() {
    if (held_) t_->status.store(ThreadStatus::Suspended, std::memory_order_release);
  }
  ThreadArg(const ThreadArg&) = delete;
  ThreadArg& operator=(const ThreadArg&) = delete;
  ThreadData* thread() const { return t_; }

 private:
  ThreadData* t_ = nullptr;
  bool held_ = false;
};

constexpr const char* kForeignThread = "cannot inspect a coroutine running in another task";

bool setField(CallContext& cx, Table* t, const char* key, const Value& v) {
  String* k = cx.newString(key);
  return k && tableSetStr(cx.state(), t, k, v).isOk();
}

bool setStringField(CallContext& cx, Table* t, const char* key, std::string_view v) {
  String* s = cx.newString(v);
  return s && setField(cx, t, key, Value::string(s));
}

NativeResult dbTraceback(CallContext& cx) {
  uint32_t a;
  ThreadArg held(cx, a);
  ThreadData* t = held.thread();
  Value msg = cx.arg(a);
  if (!msg.isNil() && !msg.isString() && !msg.isNumber()) {
    cx.push(msg);
    return cx.results(1);
  }
  int64_t level;
  if (!cx.optInteger(a + 1, t == cx.threadData() ? 1 : 0, level)) return cx.failure();
  std::string m = msg.isNil() ? std::string() : defaultToString(cx.state(), msg);
  std::string tb = t ? traceback(cx.state(), t, m, int(level), !msg.isNil())
                     : (msg.isNil() ? m : m + "\n") + "stack traceback:\n\t(" + kForeignThread + ")";
  String* s = cx.newString(tb);
  if (!s) return cx.memoryError();
  cx.push(Value::string(s));
  return cx.results(1);
}

NativeResult dbGetInfo(CallContext& cx) {
  uint32_t a;
  ThreadArg held(cx, a);
  ThreadData* t = held.thread();
  if (!t) return cx.error("%s", kForeignThread);
  String* whatStr;
  if (!cx.optString(a + 1, nullptr, whatStr)) return cx.failure();
  std::string what = whatStr ? std::string(whatStr->view()) : "flnSrtu";
  if (!what.empty() && what[0] == '>') return cx.argError(a + 1, "invalid option '>'");
  Value fn;
  int frameIdx = -1;
  Value target = cx.arg(a);
  if (target.isFunction()) {
    fn = target;
  } else {
    int64_t level;
    if (!cx.checkInteger(a, level)) return cx.failure();
    frameIdx = level < 0 || level > INT32_MAX ? -1 : frameAtLevel(t, int(level));
    if (frameIdx < 0) {
      cx.push(Value::nil());
      return cx.results(1);
    }
    fn = t->stack[t->frames[frameIdx].func];
  }
  for (char c : what) {
    if (!std::strchr("SlnrutfL", c)) return cx.argError(a + 1, "invalid option");
  }
  Table* r = cx.newTable(0, 16);
  if (!r) return cx.memoryError();
  if (!cx.push(Value::table(r))) return cx.stackOverflow();
  bool isLua = fn.isLuaClosure();
  Proto* p = isLua ? fn.asLuaClosure()->proto : nullptr;
  bool ok = true;
  if (what.find('S') != std::string::npos) {
    if (isLua) {
      const auto& d = *p->data;
      std::string src = d.source;
      ok = ok && setStringField(cx, r, "source", src.empty() ? "=?" : src);
      ok = ok && setStringField(cx, r, "short_src", frontend::shortSourceName(src));
      ok = ok && setField(cx, r, "linedefined", Value::integer(d.lineDefined));
      ok = ok && setField(cx, r, "lastlinedefined", Value::integer(d.lastLineDefined));
      ok = ok && setStringField(cx, r, "what", d.lineDefined == 0 ? "main" : "Lua");
    } else {
      ok = ok && setStringField(cx, r, "source", "=[C]");
      ok = ok && setStringField(cx, r, "short_src", "[C]");
      ok = ok && setField(cx, r, "linedefined", Value::integer(-1));
      ok = ok && setField(cx, r, "lastlinedefined", Value::integer(-1));
      ok = ok && setStringField(cx, r, "what", "C");
    }
  }
  if (what.find('l') != std::string::npos) {
    int line = frameIdx >= 0 ? currentLine(t, t->frames[frameIdx]) : -1;
    ok = ok && setField(cx, r, "currentline", Value::integer(line));
  }
  if (what.find('u') != std::string::npos) {
    uint32_t nups = isLua ? fn.asLuaClosure()->numUpvalues
                          : (fn.tag == Tag::NativeClosure ? fn.asNativeClosure()->numUpvalues : 0);
    ok = ok && setField(cx, r, "nups", Value::integer(nups));
    ok = ok && setField(cx, r, "nparams", Value::integer(isLua ? p->numParams : 0));
    ok = ok && setField(cx, r, "isvararg", Value::boolean(isLua ? p->isVararg : true));
  }
  if (what.find('n') != std::string::npos) {
    std::string name;
    const char* kind = frameIdx >= 0 ? frameFunctionName(t, uint32_t(frameIdx), name) : nullptr;
    if (kind) {
      ok = ok && setStringField(cx, r, "name", name);
      ok = ok && setStringField(cx, r, "namewhat", kind);
    } else {
      ok = ok && setStringField(cx, r, "namewhat", "");
    }
  }
  if (what.find('t') != std::string::npos) {
    bool tail = frameIdx >= 0 && (t->frames[frameIdx].flags & kFrameTail);
    ok = ok && setField(cx, r, "istailcall", Value::boolean(tail));
  }
  if (what.find('r') != std::string::npos) {
    Transfer tr = hookTransfer(t, frameIdx);
    ok = ok && setField(cx, r, "ftransfer", Value::integer(tr.first));
    ok = ok && setField(cx, r, "ntransfer", Value::integer(tr.count));
  }
  if (what.find('f') != std::string::npos) ok = ok && setField(cx, r, "func", fn);
  if (what.find('L') != std::string::npos && isLua) {
    Table* lines = cx.newTable();
    ok = ok && lines;
    if (ok) {
      // A vararg function's VARARGPREP (its first instruction, as the verifier checks)
      // carries the line of the header, which is not a line the function runs. Line 0
      // is a stripped chunk's: it has no active lines.
      const std::vector<int>& info = p->data->lineinfo;
      for (size_t i = p->data->isVararg ? 1 : 0; i < info.size(); i++) {
        if (info[i] <= 0) continue;
        ok = ok && tableSetInt(cx.state(), lines, info[i], Value::boolean(true)).isOk();
      }
      ok = ok && setField(cx, r, "activelines", Value::table(lines));
    }
  }
  if (!ok) return cx.memoryError();
  return cx.results(1);
}

}  // namespace

const char* activeLocalName(const Proto* p, int64_t n, int pc) {
  int64_t count = 0;
  for (const auto& lv : p->data->locals) {
    if (lv.startPc > pc) break;
    if (pc < lv.endPc && ++count == n) return lv.name.c_str();
  }
  return nullptr;
}

namespace {

// Vararg -n of a Lua frame: the extra arguments sit just below the moved function.
const char* frameVararg(const CallFrame& f, const Proto* p, int64_t n, uint32_t& index) {
  if (!p->isVararg) return nullptr;
  uint32_t nextra = f.varargDelta ? f.varargDelta - p->numParams - 1 : 0;
  if (-n > int64_t(nextra)) return nullptr;
  index = f.func - nextra + uint32_t(-n - 1);
  return "(vararg)";
}

}  // namespace

const char* frameLocal(ThreadData* t, int frameIdx, int64_t n, uint32_t& index) {
  const CallFrame& f = t->frames[frameIdx];
  bool isLua = f.flags & kFrameLua;
  if (isLua) {
    Proto* p = frameProto(t, f);
    if (n < 0) return frameVararg(f, p, n, index);
    if (const char* name = activeLocalName(p, n, currentPc(f, p))) {
      index = f.base + uint32_t(n - 1);
      return name;
    }
  }
  uint32_t limit = uint32_t(frameIdx) + 1 < t->frameCount ? t->frames[frameIdx + 1].func : t->top;
  if (n <= 0 || limit < f.base || int64_t(limit - f.base) < n) return nullptr;
  index = f.base + uint32_t(n - 1);
  return isLua ? "(temporary)" : "(C temporary)";
}

namespace {

// The frame of the level argument at `a`, or -1 after recording the error.
int levelFrame(CallContext& cx, ThreadData* t, uint32_t a) {
  int64_t level;
  if (!cx.checkInteger(a, level)) return -1;
  int idx = level < 0 || level > INT32_MAX ? -1 : frameAtLevel(t, int(level));
  if (idx < 0) cx.argError(a, "level out of range");
  return idx;
}

NativeResult dbGetLocal(CallContext& cx) {
  uint32_t a;
  ThreadArg held(cx, a);
  ThreadData* t = held.thread();
  if (!t) return cx.error("%s", kForeignThread);
  int64_t n;
  if (!cx.checkInteger(a + 1, n)) return cx.failure();
  if (cx.arg(a).isFunction()) {
    // Function form: only parameter names (the locals active at the first instruction).
    Value f = cx.arg(a);
    const char* name = f.isLuaClosure() ? activeLocalName(f.asLuaClosure()->proto, n, 0) : nullptr;
    if (!name) {
      cx.push(Value::nil());
      return cx.results(1);
    }
    String* s = cx.newString(name);
    if (!s) return cx.memoryError();
    cx.push(Value::string(s));
    return cx.results(1);
  }
  int idx = levelFrame(cx, t, a);
  if (idx < 0) return cx.failure();
  uint32_t index;
  const char* name = frameLocal(t, idx, n, index);
  if (!name) {
    cx.push(Value::nil());
    return cx.results(1);
  }
  String* s = cx.newString(name);
  if (!s) return cx.memoryError();
  cx.push(Value::string(s));
  syncOpenUpvalueAt(t, index);  // a closure may have stored into the local since its frame ran
  cx.push(t->stack[index]);
  return cx.results(2);
}

NativeResult dbSetLocal(CallContext& cx) {
  uint32_t a;
  ThreadArg held(cx, a);
  ThreadData* t = held.thread();
  if (!t) return cx.error("%s", kForeignThread);
  int64_t n;
  if (!cx.checkInteger(a + 1, n) || !cx.checkAny(a + 2)) return cx.failure();
  int idx = levelFrame(cx, t, a);
  if (idx < 0) return cx.failure();
  uint32_t index;
  const char* name = frameLocal(t, idx, n, index);
  if (!name) {
    cx.push(Value::nil());
    return cx.results(1);
  }
  // Stack slots take no barrier (as for any register), but `t` may be a parked
  // coroutine whose stack a minor collection would not rescan: mark it dirty.
  // A captured local's cell gets the value too, before any closure reads it.
  markStackDirty(t);
  t->stack[index] = cx.arg(a + 2);
  syncOpenUpvalueAt(t, index);
  String* s = cx.newString(name);
  if (!s) return cx.memoryError();
  cx.push(Value::string(s));
  return cx.results(1);
}

NativeResult dbGetMetatable(CallContext& cx) {
  if (!cx.checkAny(1)) return cx.failure();
  Table* mt = metatableOf(cx.state(), cx.arg(1));
  cx.push(mt ? Value::table(mt) : Value::nil());
  return cx.results(1);
}

NativeResult dbSetMetatable(CallContext& cx) {
  Value mt = cx.arg(2);
  if (!mt.isNil() && !mt.isTable()) return cx.typeError(2, "nil or table");
  Value v = cx.arg(1);
  Table* m = mt.isNil() ? nullptr : mt.asTable();
  State& S = cx.state();
  if (v.isTable()) tableSetMetatable(v.asTable(), m);
  else if (v.tag == Tag::Userdata) storeRef(v.asUserdata(), v.asUserdata()->metatable, m);
  else S.typeMetatables[int(basicType(v))] = m;
  if (m && (v.isTable() || v.tag == Tag::Userdata) && !metaField(S, m, Meta::Gc).isNil()) {
    S.heap().registerFinalizable(v.asObject());
  }
  cx.push(v);
  return cx.results(1);
}

bool upvalueAt(const Value& f, int64_t n, Value*& slot, const char*& name) {
  if (f.isLuaClosure()) {
    LuaClosure* c = f.asLuaClosure();
    if (n < 1 || n > c->numUpvalues) return false;
    Upvalue* uv = c->upvalues[n - 1];
    slot = &uv->cell;
    const auto& ups = c->proto->data->upvalues;
    name = size_t(n - 1) < ups.size() && !ups[n - 1].name.empty() ? ups[n - 1].name.c_str() : "(no name)";
    return true;
  }
  if (f.tag == Tag::NativeClosure) {
    NativeClosure* c = f.asNativeClosure();
    if (n < 1 || n > c->numUpvalues) return false;
    slot = &c->upvalues[n - 1];
    name = "";
    return true;
  }
  return false;
}

NativeResult dbGetUpvalue(CallContext& cx) {
  int64_t n;
  if (!cx.checkType(1, Tag::LuaClosure) || !cx.checkInteger(2, n)) return cx.failure();
  Value* slot;
  const char* name;
  if (!upvalueAt(cx.arg(1), n, slot, name)) return cx.noResults();
  Value v = loadSlot(*slot);  // another task may share the upvalue
  String* s = cx.newString(name);
  if (!s) return cx.memoryError();
  cx.push(Value::string(s));
  cx.push(v);
  return cx.results(2);
}

NativeResult dbSetUpvalue(CallContext& cx) {
  int64_t n;
  if (!cx.checkType(1, Tag::LuaClosure) || !cx.checkInteger(2, n) || !cx.checkAny(3)) return cx.failure();
  Value* slot;
  const char* name;
  if (!upvalueAt(cx.arg(1), n, slot, name)) return cx.noResults();
  // Into the cell, as SETUPVAL stores (an open upvalue's thread is told).
  storeUpvalue(cx.threadData(), cx.arg(1).asLuaClosure()->upvalues[n - 1], cx.arg(3));
  String* s = cx.newString(name);
  if (!s) return cx.memoryError();
  cx.push(Value::string(s));
  return cx.results(1);
}

NativeResult dbUpvalueId(CallContext& cx) {
  int64_t n;
  if (!cx.checkType(1, Tag::LuaClosure) || !cx.checkInteger(2, n)) return cx.failure();
  Value f = cx.arg(1);
  if (f.isLuaClosure()) {
    LuaClosure* c = f.asLuaClosure();
    if (n >= 1 && n <= c->numUpvalues) {
      // The upvalue object moves with collections; its identity hash does not.
      cx.push(Value::lightUserdata(reinterpret_cast<void*>(uintptr_t(c->upvalues[n - 1]->header.hash) + 1)));
      return cx.results(1);
    }
  } else if (f.tag == Tag::NativeClosure && n >= 1 && n <= f.asNativeClosure()->numUpvalues) {
    cx.push(Value::lightUserdata(&f.asNativeClosure()->upvalues[n - 1]));
    return cx.results(1);
  }
  cx.push(Value::nil());  // no such upvalue: fail, not an error (as in Lua 5.4)
  return cx.results(1);
}

NativeResult dbUpvalueJoin(CallContext& cx) {
  int64_t n1, n2;
  if (!cx.checkType(1, Tag::LuaClosure) || !cx.checkInteger(2, n1) || !cx.checkType(3, Tag::LuaClosure) ||
      !cx.checkInteger(4, n2)) {
    return cx.failure();
  }
  Value f1 = cx.arg(1), f2 = cx.arg(3);
  if (!f1.isLuaClosure()) return cx.argError(1, "Lua function expected");
  if (!f2.isLuaClosure()) return cx.argError(3, "Lua function expected");
  LuaClosure* c1 = f1.asLuaClosure();
  LuaClosure* c2 = f2.asLuaClosure();
  if (n1 < 1 || n1 > c1->numUpvalues) return cx.argError(2, "invalid upvalue index");
  if (n2 < 1 || n2 > c2->numUpvalues) return cx.argError(4, "invalid upvalue index");
  storeRef(c1, c1->upvalues[n1 - 1], c2->upvalues[n2 - 1]);
  return cx.noResults();
}

NativeResult dbGetRegistry(CallContext& cx) {
  cx.push(Value::table(cx.state().registry));
  return cx.results(1);
}

uint8_t hookMaskOf(std::string_view letters, int64_t count) {
  uint8_t m = 0;
  for (char c : letters) {
    if (c == 'c') m |= kHookMaskCall;
    if (c == 'r') m |= kHookMaskReturn;
    if (c == 'l') m |= kHookMaskLine;
  }
  if (count > 0) m |= kHookMaskCount;
  return m;
}

void clearHook(ThreadData* t) {
  t->hookMask = 0;
  if (!t->rare) return;
  t->rare->hook = Value::nil();
  t->rare->hookCount = 0;
  t->rare->hookCounter = 0;
}

// The registry's _HOOKKEY table, made as Lua's debug library makes it (weak keys, its
// own metatable) if it is not a table yet; nullptr when memory is exhausted.
Table* hookTable(CallContext& cx) {
  State& S = cx.state();
  String* key = cx.newString("_HOOKKEY");
  if (!key) return nullptr;
  Value v = tableGetStr(S.registry, key);
  if (v.isTable()) return v.asTable();
  Table* h = cx.newTable(0, 1);
  String* mode = cx.newString("__mode");
  String* k = cx.newString("k");
  if (!h || !mode || !k || !tableSetStr(S, h, mode, Value::string(k)).isOk()) return nullptr;
  tableSetMetatable(h, h);
  if (!tableSetStr(S, S.registry, key, Value::table(h)).isOk()) return nullptr;
  return h;
}

// Lua keeps each thread's hook in the registry, in _HOOKKEY[thread] (scripts see that
// table: the 5.4 suite checks its mode). The interpreter calls ThreadData::hook; the
// table holds the same function (nil once the hook is off).
bool recordHook(CallContext& cx, ThreadData* t, const Value& hook) {
  Table* h = hookTable(cx);
  if (!h) return false;
  t->escaped = true;  // a script can reach it now: never recycled (thread.h)
  return tableSet(cx.state(), h, Value::thread(t->self), hook).isOk();
}

// debug.sethook([thread,] f, mask [, count]): any function may be the hook; no
// function, or an empty mask without a count, turns hooks off (as lua_sethook does).
NativeResult dbSetHook(CallContext& cx) {
  uint32_t a;
  ThreadArg held(cx, a);
  ThreadData* t = held.thread();
  if (!t) return cx.error("%s", kForeignThread);
  if (cx.arg(a).isNil()) {
    clearHook(t);
    if (!recordHook(cx, t, Value::nil())) return cx.memoryError();
    return cx.noResults();
  }
  String* letters;
  int64_t count;
  if (!cx.checkString(a + 1, letters)) return cx.failure();
  if (!cx.arg(a).isFunction()) return cx.typeError(a, "function");
  if (!cx.optInteger(a + 2, 0, count)) return cx.failure();
  uint8_t m = hookMaskOf(letters->view(), count);
  if (m == 0) {
    clearHook(t);
    if (!recordHook(cx, t, Value::nil())) return cx.memoryError();
    return cx.noResults();
  }
  markStackDirty(t);  // the hook is traced with t's stack (t may be a parked coroutine)
  ThreadRare* rare = makeThreadRare(t);
  if (!rare || !recordHook(cx, t, cx.arg(a))) return cx.memoryError();
  rare->hook = cx.arg(a);
  t->hookMask = m;
  rare->hookCount = int32_t(count);
  rare->hookCounter = int32_t(count);
  return cx.noResults();
}

// debug.gethook([thread]): fail without a hook, else the function, its mask letters
// and its count.
NativeResult dbGetHook(CallContext& cx) {
  uint32_t a;
  ThreadArg held(cx, a);
  ThreadData* t = held.thread();
  if (!t) return cx.error("%s", kForeignThread);
  if (!t->rare || t->rare->hook.isNil()) {
    cx.push(Value::nil());
    return cx.results(1);
  }
  std::string mask;
  if (t->hookMask & kHookMaskCall) mask += 'c';
  if (t->hookMask & kHookMaskReturn) mask += 'r';
  if (t->hookMask & kHookMaskLine) mask += 'l';
  if (!cx.ensureStack(3)) return cx.stackOverflow();
  cx.push(t->rare->hook);
  String* s = cx.newString(mask);
  if (!s) return cx.memoryError();
  cx.push(Value::string(s));
  cx.push(Value::integer(t->rare->hookCount));
  return cx.results(3);
}

// True when v is a full userdata with a user value n (its count is fixed at creation).
bool hasUserValue(const Value& v, int64_t n) {
  return v.tag == Tag::Userdata && n >= 1 && n <= int64_t(v.asUserdata()->userValues);
}

// debug.getuservalue(u [, n]): the value and true, or a single fail when u is not a
// full userdata or has no user value n.
NativeResult dbGetUserValue(CallContext& cx) {
  int64_t n;
  if (!cx.optInteger(2, 1, n)) return cx.failure();
  Value v = cx.arg(1);
  if (!hasUserValue(v, n)) {
    cx.push(Value::nil());
    return cx.results(1);
  }
  cx.push(loadSlot(userValueSlot(v.asUserdata(), uint32_t(n - 1))));
  cx.push(Value::boolean(true));
  return cx.results(2);
}

// debug.setuservalue(u, value [, n]): u, or fail when it has no user value n.
NativeResult dbSetUserValue(CallContext& cx) {
  int64_t n;
  if (!cx.optInteger(3, 1, n) || !cx.checkType(1, Tag::Userdata) || !cx.checkAny(2)) return cx.failure();
  if (!hasUserValue(cx.arg(1), n)) {
    cx.push(Value::nil());
    return cx.results(1);
  }
  Userdata* u = cx.arg(1).asUserdata();
  storeValue(u, userValueSlot(u, uint32_t(n - 1)), cx.arg(2));
  cx.push(cx.arg(1));
  return cx.results(1);
}

constexpr LibEntry kDebugFuncs[] = {
    {"gethook", dbGetHook},           {"getinfo", dbGetInfo},         {"getlocal", dbGetLocal},
    {"getmetatable", dbGetMetatable}, {"getregistry", dbGetRegistry}, {"getupvalue", dbGetUpvalue},
    {"getuservalue", dbGetUserValue}, {"sethook", dbSetHook},         {"setlocal", dbSetLocal},
    {"setmetatable", dbSetMetatable}, {"setupvalue", dbSetUpvalue},   {"setuservalue", dbSetUserValue},
    {"traceback", dbTraceback},       {"upvalueid", dbUpvalueId},     {"upvaluejoin", dbUpvalueJoin},
};

}  // namespace

Status openDebugLib(State& state) { return openLibrary(state, "debug", kDebugFuncs, nullptr); }

}  // namespace weft::vm
