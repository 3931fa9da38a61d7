// Calls, protected calls, raising and catching errors, to-be-closed variables,
// finalizers and warnings (vm/interp.h).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "frontend/compiler.h"
#include "vm/debug.h"
#include "vm/interp.h"
#include "vm/meta.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

ThreadData* currentThread(State& S) {
  ExecContext& ctx = S.context();
  if (!ctx.running) {
    ThreadData* main = S.mainThread->data;
    main->isMain = true;
    main->status = ThreadStatus::Running;
    ctx.running = main;
    markRunning(ctx, main);
  }
  return ctx.running;
}

void setCurrentThread(State& S, ThreadData* t) {
  ExecContext& ctx = S.context();
  ctx.running = t;
  if (t) markRunning(ctx, t);
}

uint32_t scratchTop(ThreadData* t) {
  if (t->frameCount == 0) return t->top;
  uint32_t ft = t->frame().top;
  return t->top > ft ? t->top : ft;
}

std::string wherePrefix(ThreadData* t, int level, bool always) {
  int idx = frameAtLevel(t, level);
  if (idx < 0) return {};
  const CallFrame& f = t->frames[idx];
  if (!(f.flags & kFrameLua)) return {};
  Proto* p = frameProto(t, f);
  int line = currentLine(t, f);
  if (line <= 0 && !always) return {};
  std::string out = frontend::shortSourceName(p->data->source);
  out += ':';
  out += std::to_string(line);
  out += ": ";
  return out;
}

Status raiseValueMayGC(State& S, ThreadData* t, const Value& v) {
  t->error = v;
  if (t->errFunc == 0 || t->inErrorHandler) return Status(StatusCode::kRuntimeError);
  // xpcall: the message handler runs now, at the error point, before any unwinding.
  t->inErrorHandler = true;
  uint32_t oldTop = t->top;
  uint32_t fn = scratchTop(t);
  Status st;
  if (!ensureStackSlots(t, uint64_t(fn) + 2 + kMinNativeStack)) {
    st = Status(StatusCode::kErrorInHandler);
  } else {
    t->stack[fn] = t->stack[t->errFunc];
    t->stack[fn + 1] = t->error;
    t->top = fn + 2;
    st = callMayGC(S, t, fn, 1);
  }
  t->inErrorHandler = false;
  if (st.isOk()) {
    t->error = t->stack[fn];
    t->top = oldTop;
    return Status(StatusCode::kRuntimeError);
  }
  t->top = oldTop;
  if (st.code() == StatusCode::kFatal) return st;
  String* msg = newString(S, "error in error handling");
  t->error = msg ? Value::string(msg) : Value::nil();
  return Status(StatusCode::kErrorInHandler);
}

Status vruntimeErrorMayGC(State& S, ThreadData* t, bool position, const char* fmt, va_list ap) {
  char buf[512];
  va_list copy;
  va_copy(copy, ap);
  int n = std::vsnprintf(buf, sizeof buf, fmt, copy);
  va_end(copy);
  std::string msg = position ? wherePrefix(t, 0, true) : std::string();
  if (n >= int(sizeof buf)) {
    std::string big(size_t(n) + 1, '\0');
    std::vsnprintf(big.data(), big.size(), fmt, ap);
    big.resize(size_t(n));
    msg += big;
  } else if (n > 0) {
    msg.append(buf, size_t(n));
  }
  String* s = newString(S, msg);
  if (!s) return memoryErrorStatus(S, t);
  return raiseValueMayGC(S, t, Value::string(s));
}

Status runtimeErrorMayGC(State& S, ThreadData* t, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Status st = vruntimeErrorMayGC(S, t, true, fmt, ap);
  va_end(ap);
  return st;
}

Status memoryErrorStatus(State& S, ThreadData* t) {
  S.heap().grantEmergencyReserve();
  t->error = S.memoryErrorMessage ? Value::string(S.memoryErrorMessage) : Value::nil();
  return Status(StatusCode::kMemoryError);
}

Status stackOverflowMayGC(State& S, ThreadData* t) {
  if (t->inErrorHandler) {
    String* msg = newString(S, "error in error handling");
    t->error = msg ? Value::string(msg) : Value::nil();
    return Status(StatusCode::kErrorInHandler);
  }
  return runtimeErrorMayGC(S, t, "stack overflow");
}

void normaliseErrorValue(State& S, ThreadData* t, Status st) {
  if (st.code() == StatusCode::kMemoryError && S.memoryErrorMessage) t->error = Value::string(S.memoryErrorMessage);
}

Status resolveCallableMayGC(State& S, ThreadData* t, uint32_t func, int calleeReg) {
  for (int guard = 0; !t->stack[func].isFunction(); guard++) {
    Value v = t->stack[func];
    Value tm = metamethodOf(S, v, Meta::Call);
    if (tm.isNil() || guard >= 100) {
      return typeErrorMayGC(S, t, v, guard == 0 && calleeReg >= 0 ? VarRef::reg(calleeReg) : VarRef::none(), "call");
    }
    if (!ensureStackSlots(t, uint64_t(t->top) + 1 + kExtraStack)) return stackOverflowMayGC(S, t);
    for (uint32_t j = t->top; j > func; j--) t->stack[j] = t->stack[j - 1];
    t->top++;
    t->stack[func] = tm;
  }
  return Status::ok();
}

Status callNativeMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t flags) {
  uint32_t limit = S.options().maxCallDepth + (t->inErrorHandler ? 250 : 0);
  if (t->frameCount >= limit) return stackOverflowMayGC(S, t);
  if (!ensureStackSlots(t, uint64_t(t->top) + kMinNativeStack)) return stackOverflowMayGC(S, t);
  uint32_t nargs = t->top - func - 1;
  CallFrame* f = pushFrame(t);
  if (!f) return memoryErrorStatus(S, t);
  f->func = func;
  f->base = func + 1;
  f->top = t->top;
  f->k = nullptr;
  f->nresults = nresults;
  f->flags = flags;
  if (t->hookMask & kHookMaskCall) [[unlikely]] {
    if (Status st = runHookMayGC(S, t, "call", -1, 1, nargs); !st.isOk()) return st;
  }
  Value fv = t->stack[func];
  NativeFn fn = fv.tag == Tag::LightNative ? fv.u.fn : fv.tag == Tag::NativeClosure ? fv.asNativeClosure()->fn : S.callLightC;
  CallContext cx(S, t, func, nargs);
  NativeResult r = fn(cx);
  if (r.status == StatusCode::kOk) [[likely]] {
    uint32_t n = uint32_t(r.count);
    if (n > t->top - func - 1) n = t->top - func - 1;
    if (t->hookMask & kHookMaskReturn) [[unlikely]] {
      if (Status st = runHookMayGC(S, t, "return", -1, t->top - n - func, n); !st.isOk()) return st;
    }
    if (nresults == 1) [[likely]] {  // the usual call in an expression: the slot exists
      t->stack[func] = n ? t->stack[t->top - n] : Value::nil();
      t->top = func + 1;
      t->frameCount--;
      return Status::ok();
    }
    if (nresults > 0 && !ensureStackSlots(t, uint64_t(func) + uint32_t(nresults) + 1)) return stackOverflowMayGC(S, t);
    moveResults(t, func, t->top - n, n, nresults);
    t->frameCount--;
    return Status::ok();
  }
  if (r.status == StatusCode::kYield && r.count != kYieldedInCallee) t->resumeCount = uint32_t(r.count);
  return Status(r.status);
}

void finishProtected(ThreadData* t) {
  CallFrame& m = t->frame();
  uint32_t x = (m.flags & kFrameXpcall) ? 1 : 0;
  uint32_t start = m.func + x;  // `true` goes here, the results follow
  t->stack[start] = Value::boolean(true);
  uint32_t n = t->top - start;
  t->errFunc = m.extra;
  int32_t wanted = m.nresults;
  uint32_t func = m.func;
  t->frameCount--;
  t->cDepth--;
  moveResults(t, func, start, n, wanted);
}

namespace {

// pcall/xpcall called by OP_CALL: a marker frame instead of a native activation.
Status beginProtectedMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t flags, bool isX) {
  uint32_t nargs = t->top - func - 1;
  // Bad arguments: the native reports them.
  if (nargs < (isX ? 2u : 1u) || (isX && !t->stack[func + 2].isFunction())) {
    return callNativeMayGC(S, t, func, nresults, flags);
  }
  uint32_t limit = S.options().maxCallDepth + (t->inErrorHandler ? 250 : 0);
  if (t->frameCount >= limit) return stackOverflowMayGC(S, t);
  if (t->nativeDepth + t->cDepth + 1 >= S.options().maxNativeDepth) {
    // Lua raises this inside pcall itself: no position.
    String* msg = newString(S, "C stack overflow");
    if (!msg) return memoryErrorStatus(S, t);
    return raiseValueMayGC(S, t, Value::string(msg));
  }
  CallFrame* m = pushFrame(t);
  if (!m) return memoryErrorStatus(S, t);
  m->func = func;
  m->base = func + 1;
  m->top = t->top;
  m->pc = nullptr;
  m->nresults = nresults;
  m->flags = kFrameProtected | (isX ? kFrameXpcall : 0) | flags;
  m->extra = t->errFunc;
  t->cDepth++;
  uint32_t target = func + 1;
  if (isX) {
    Value f = t->stack[func + 1];
    t->stack[func + 1] = t->stack[func + 2];
    t->stack[func + 2] = f;
    t->errFunc = func + 1;
    target = func + 2;
  } else {
    t->errFunc = 0;  // a plain pcall hides any outer message handler
  }
  Status st = resolveCallableMayGC(S, t, target, -1);
  if (!st.isOk()) return st;
  if (t->stack[target].isLuaClosure()) return pushLuaFrameMayGC(S, t, target, -1, 0);
  st = callNativeMayGC(S, t, target, -1, 0);
  if (!st.isOk()) return st;
  finishProtected(t);
  return Status::ok();
}

}  // namespace

Status callNonLuaMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t flags) {
  Value fv = t->stack[func];
  if (fv.tag == Tag::LightNative) {
    if (fv.u.fn == basePcall) return beginProtectedMayGC(S, t, func, nresults, flags, false);
    if (fv.u.fn == baseXpcall) return beginProtectedMayGC(S, t, func, nresults, flags, true);
    return callNativeMayGC(S, t, func, nresults, flags);
  }
  if (!fv.isFunction()) {
    int reg = -1;
    if (t->frameCount && (t->frame().flags & kFrameLua)) reg = int(func - t->frame().base);
    Status st = resolveCallableMayGC(S, t, func, reg);
    if (!st.isOk()) return st;
    fv = t->stack[func];
  }
  if (fv.isLuaClosure()) return pushLuaFrameMayGC(S, t, func, nresults, flags);
  return callNativeMayGC(S, t, func, nresults, flags);
}

namespace {

// A nested loop invocation for the call at `func` (callMayGC). `yieldable`: nny is left
// as it is, so the callee may yield when nothing below forbids it; a yield then leaves
// the invocation's frames in place and turns its entry frame into one that returns
// into the frame below (with `resumeFlags` added), to be continued after the resume
// (thread.h invariant 5). Otherwise the call counts in nny and cannot be yielded across.
Status invokeMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t frameFlags, bool yieldable,
                   uint16_t resumeFlags) {
  uint32_t maxDepth = S.options().maxNativeDepth + (t->inErrorHandler ? 20 : 0);
  uint32_t depth = t->nativeDepth + t->cDepth;
  if (depth >= maxDepth) {
    if (depth >= maxDepth + 20 || t->inErrorHandler) {
      String* msg = newString(S, "error in error handling");
      t->error = msg ? Value::string(msg) : Value::nil();
      return Status(StatusCode::kErrorInHandler);
    }
    return runtimeErrorMayGC(S, t, "C stack overflow");
  }
  Status st = resolveCallableMayGC(S, t, func, -1);
  if (!st.isOk()) return st;
  if (nresults > 0 && !ensureStackSlots(t, uint64_t(func) + uint32_t(nresults) + kExtraStack)) return stackOverflowMayGC(S, t);
  uint32_t savedFrames = t->frameCount;
  uint32_t nny = yieldable ? 0 : 1;
  bool hostCall = t->nativeDepth == 0 && t->isMain && S.hostCall;
  if (hostCall) S.hostCall(S, true);
  t->nativeDepth++;
  t->nny += nny;
  if (t->stack[func].isLuaClosure()) {
    st = pushLuaFrameMayGC(S, t, func, nresults, kFrameEntry | frameFlags);
    if (st.isOk()) st = executeMayGC(S, t);
    // Only a wait of the main task suspends here: the call is not yieldable.
    if (hostCall && st.code() == StatusCode::kYield && S.driveMainMayGC) st = S.driveMainMayGC(S, t);
  } else {
    st = callNativeMayGC(S, t, func, nresults, frameFlags);
  }
  t->nativeDepth--;
  t->nny -= nny;
  if (hostCall) S.hostCall(S, false);
  if (st.code() == StatusCode::kYield && yieldable) {
    CallFrame& entry = t->frames[savedFrames];
    entry.flags = uint16_t((entry.flags & ~kFrameEntry) | resumeFlags);
    if ((resumeFlags & kFrameFinishOp) && (entry.flags & kFrameLua)) t->cDepth++;
    return st;
  }
  // The handler already ran at the error point; the frames of this invocation go, so
  // that the caller's own search for a protected frame starts at its own level.
  if (!st.isOk()) {
    t->frameCount = savedFrames;
    recountCDepth(t);
  }
  if (st.code() == StatusCode::kYield) {
    // Only a yieldable invocation may suspend (cx.yield checks nny).
    return runtimeErrorMayGC(S, t, "attempt to yield across a C-call boundary");
  }
  return st;
}

}  // namespace

Status callMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t frameFlags) {
  return invokeMayGC(S, t, func, nresults, frameFlags, false, 0);
}

Status callYieldableMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t resumeFlags) {
  return invokeMayGC(S, t, func, nresults, 0, true, resumeFlags);
}

Status pcallMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint32_t errFunc, uint16_t frameFlags) {
  uint32_t savedFrames = t->frameCount;
  uint32_t savedErrFunc = t->errFunc;
  t->errFunc = errFunc;
  Status st = callMayGC(S, t, func, nresults, frameFlags);
  if (!st.isOk()) {
    // The handler stays active while the variables close, as in Lua: an error in a
    // __close goes through it too.
    st = unwindForErrorMayGC(S, t, savedFrames, func, st);
    t->stack[func] = t->error;
    t->top = func + 1;
  }
  t->errFunc = savedErrFunc;
  return st;
}

Status unwindForErrorMayGC(State& S, ThreadData* t, uint32_t frameLevel, uint32_t stackLevel, Status st) {
  uint32_t deadEnd = scratchTop(t);
  t->frameCount = frameLevel;
  recountCDepth(t);
  closeUpvalues(t, stackLevel);
  st = closeTbcMayGC(S, t, stackLevel, st);
  // The failed frames' registers may lie inside the catcher's frame extent, which the
  // collector traces: left there, what they held (often what exhausted the heap) would
  // stay alive until overwritten.
  deadEnd = std::max(deadEnd, scratchTop(t));
  for (uint32_t j = stackLevel; j < deadEnd && j < t->stackSize; j++) t->stack[j] = Value::nil();
  return st;
}

Status closeTbcMayGC(State& S, ThreadData* t, uint32_t level, Status st) {
  if (!t->hasTbcFrom(level)) return st;
  uint32_t oldTop = t->top;
  // The pending error waits in a slot above every variable to close: a __close may
  // catch errors of its own, and each of those overwrites t->error.
  uint32_t errSlot = std::max(scratchTop(t), t->innermostTbc() + 1);
  if (!ensureStackSlots(t, uint64_t(errSlot) + 1 + kExtraStack)) return stackOverflowMayGC(S, t);
  t->stack[errSlot] = st.isOk() ? Value::nil() : t->error;
  t->top = errSlot + 1;
  while (t->hasTbcFrom(level)) {
    uint32_t idx = t->popTbc();
    Value obj = t->stack[idx];
    Value tm = metamethodOf(S, obj, Meta::Close);
    uint32_t fn = scratchTop(t);
    if (!ensureStackSlots(t, uint64_t(fn) + 3 + kExtraStack)) return stackOverflowMayGC(S, t);
    t->stack[fn] = tm;
    t->stack[fn + 1] = obj;
    t->stack[fn + 2] = t->stack[errSlot];
    t->top = fn + 3;
    if (st.isOk()) {
      Status cs = callMayGC(S, t, fn, 0);
      if (!cs.isOk()) {
        t->top = oldTop;
        return cs;
      }
    } else {
      Status cs = pcallMayGC(S, t, fn, 0);
      if (cs.code() == StatusCode::kFatal) return cs;
      if (!cs.isOk()) {
        t->stack[errSlot] = t->stack[fn];
        st = cs;
      }
    }
    t->top = errSlot + 1;
  }
  if (!st.isOk()) t->error = t->stack[errSlot];
  t->top = oldTop;
  return st;
}

Status runHookMayGC(State& S, ThreadData* t, const char* event, int line, uint32_t ftransfer,
                    uint32_t ntransfer) {
  if (!t->rare || t->rare->inHook || t->rare->hook.isNil()) return Status::ok();
  uint32_t oldTop = t->top;
  uint32_t fn = scratchTop(t);
  if (!ensureStackSlots(t, uint64_t(fn) + 3 + kMinNativeStack)) return stackOverflowMayGC(S, t);
  String* name = newString(S, event);
  if (!name) return memoryErrorStatus(S, t);
  t->stack[fn] = t->rare->hook;
  t->stack[fn + 1] = Value::string(name);
  t->stack[fn + 2] = line >= 0 ? Value::integer(line) : Value::nil();
  t->top = fn + 3;
  t->rare->inHook = true;
  t->rare->hookFtransfer = uint16_t(std::min<uint32_t>(ftransfer, UINT16_MAX));  // Lua's are 16 bits too
  t->rare->hookNtransfer = uint16_t(std::min<uint32_t>(ntransfer, UINT16_MAX));
  // Only count and line events may yield, in a coroutine that could yield here.
  t->rare->hookYieldable = (line >= 0 || std::strcmp(event, "count") == 0) && !t->isMain && !t->taskRoot && t->nny == 0;
  Status st = callMayGC(S, t, fn, 0, kFrameHook);
  t->rare->inHook = false;
  t->top = oldTop;
  if (st.isOk() && t->rare->hookYieldRequested) {
    t->rare->hookYieldRequested = false;
    return Status(StatusCode::kYield);
  }
  return st;
}

void emitWarning(State& S, std::string_view message, bool toContinue) {
  if (S.warnHook) {
    S.warnHook(S, message, toContinue);
    return;
  }
  if (!S.warningsOn) {
    S.warningContinues = toContinue;
    return;
  }
  if (!S.warningContinues) std::fputs("Lua warning: ", stderr);
  std::fwrite(message.data(), 1, message.size(), stderr);
  if (!toContinue) std::fputs("\n", stderr);
  std::fflush(stderr);
  S.warningContinues = toContinue;
}

void runFinalizersMayGC(State& S, ThreadData* t) {
  if (t->runningFinalizers) return;
  t->runningFinalizers = true;
  while (gc::Object* o = S.heap().takePendingFinalizer()) {
    Value v = Value::object(o, Tag(uint8_t(Tag::kFirstHeap) + o->header.kind));
    Value tm = metamethodOf(S, v, Meta::Gc);
    if (tm.isNil()) continue;
    uint32_t oldTop = t->top;
    uint32_t fn = scratchTop(t);
    if (!ensureStackSlots(t, uint64_t(fn) + 2 + kExtraStack)) break;
    t->stack[fn] = tm;
    t->stack[fn + 1] = v;
    t->top = fn + 2;
    Status st = pcallMayGC(S, t, fn, 0, 0, kFrameFinalizer);  // named "__gc", a metamethod
    if (!st.isOk() && st.code() != StatusCode::kFatal) {
      Value err = t->stack[fn];
      std::string msg = "error in __gc (";
      msg += err.isString() ? std::string(err.asString()->view()) : std::string("error object is not a string");
      msg += ")";
      emitWarning(S, msg, false);
    }
    t->top = oldTop;
  }
  t->runningFinalizers = false;
}

namespace {

// After a safepoint passed: a collection may have cleaned t's stack while it runs (the
// parked-stack rule), and finalizers it found due run now.
Status afterSafepointMayGC(State& S, ThreadData* t, Status st) {
  if (!st.isOk()) return st;
  markStackDirty(t);
  if (S.heap().hasPendingFinalizers()) runFinalizersMayGC(S, t);
  return Status::ok();
}

}  // namespace

Status safepointMayGC(State& S, ThreadData* t) {
  return afterSafepointMayGC(S, t, S.heap().safepointMayGC(S.mutator()));
}

Status fullCollectMayGC(State& S, ThreadData* t) {
  return afterSafepointMayGC(S, t, S.heap().collectMayGC(S.mutator()));
}

Status minorCollectMayGC(State& S, ThreadData* t) {
  return afterSafepointMayGC(S, t, S.heap().collectMayGC(S.mutator(), gc::CollectionKind::kMinor));
}

Status stepCollectMayGC(State& S, ThreadData* t, size_t work, bool& cycleEnded) {
  return afterSafepointMayGC(S, t, S.heap().stepMayGC(S.mutator(), work, cycleEnded));
}

namespace {

// The stack index below which the top Lua frame's registers are live (see kLiveFrame),
// or 0 to keep the whole frame.
uint32_t liveRegisters(ThreadData* t, uint32_t live) {
  const CallFrame& f = t->frames[t->frameCount - 1];
  const frontend::ProtoData* p = frameProto(t, f)->data;
  if (!p->fromSource) return kLiveFrame;
  int pc = int(f.pc - p->code.data());
  if (live == kLiveLocals) {
    uint32_t active = 0;
    for (const auto& lv : p->locals) {
      if (lv.startPc > pc) break;
      if (pc < lv.endPc) active++;
    }
    return f.base + active;
  }
  if (live != kLiveResumed) return live;
  if (pc == 0) return t->top;  // entered: the arguments (setupLuaFrameMayGC)
  using frontend::getA, frontend::getC, frontend::Op;
  frontend::Instruction i = f.pc[-1];
  switch (frontend::getOp(i)) {
    case Op::CALL: return getC(i) == 0 ? t->top : f.base + uint32_t(getA(i) + getC(i) - 1);
    case Op::TFORCALL: return f.base + uint32_t(getA(i) + 4 + getC(i));
    default: return kLiveFrame;
  }
}

// safepointMayGC with the top frame's extent (and the thread's top) lowered to `live`
// while the collector may trace it, so the registers above are dropped (thread.h
// invariant 2) as Lua's collector drops the slots above its top.
Status narrowedSafepointMayGC(State& S, ThreadData* t, uint32_t live) {
  CallFrame& f = t->frame();
  uint32_t frameTop = f.top, top = t->top;
  if (live < f.top) f.top = live;
  if (live < t->top) t->top = live;
  Status st = S.heap().safepointMayGC(S.mutator());
  f.top = frameTop;
  t->top = top;
  return afterSafepointMayGC(S, t, st);
}

}  // namespace

Status loopSafepointMayGC(State& S, ThreadData* t, uint32_t live) {
  uint32_t keep = live != kLiveFrame && S.heap().collectionRequested() ? liveRegisters(t, live) : kLiveFrame;
  Status st = keep == kLiveFrame ? safepointMayGC(S, t) : narrowedSafepointMayGC(S, t, keep);
  if (!st.isOk() || t->budget >= 0) return st;
  if (S.interruptPending.load(std::memory_order_relaxed) && t == S.mainRunning()) [[unlikely]] {
    S.interruptPending.store(false, std::memory_order_relaxed);
    t->budget = t->task ? kBudgetRecheck : kUnlimitedBudget;
    return runtimeErrorMayGC(S, t, "interrupted!");
  }
  // The host lane holds a task the main context's code woke a slice ago: publish it.
  // The flag is the main thread's: the context test comes first (ThreadSanitizer saw a
  // worker read it).
  if (S.onMainContext() && S.hostLanePending) [[unlikely]] S.flushHostLane(S);
  // Deterministic mode: the main context's schedule point (other tasks run their steps).
  if (const State::DeterministicHooks* det = S.deterministic;
      det && S.onMainContext() && !t->inHook() && !t->runningFinalizers) [[unlikely]] {
    t->budget = det->slice;
    return det->schedulePointMayGC(S, t);
  }
  // Only code at the bottom of its loop, in a chain of coroutines up to a task's root,
  // can give up its worker; a native re-entry inside a task checks again soon.
  if (!t->inHook() && !t->runningFinalizers && taskChainSuspendable(t)) {
    if (S.deterministic && S.deterministic->continueStep(S, t)) return Status::ok();
    t->preempted = true;
    t->taskSuspending = true;
    return Status(StatusCode::kYield);
  }
  t->budget = t->task ? kBudgetRecheck : kUnlimitedBudget;
  return Status::ok();
}

}  // namespace weft::vm
