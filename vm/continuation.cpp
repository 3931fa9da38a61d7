// Continuations: calls that natives make so that their callees may yield (callK, pcallK),
// catching errors in frames that outlive their C++ activation (pcall markers, natives
// in pcallK), closing to-be-closed variables in calls that may yield, and unrolling
// the frames of a resumed thread (docs/design/continuations.md; thread.h invariants 5
// and 6).
//
// Protocol: a yield inside a yieldable call returns kYield through every C++ activation
// up to the resume, leaving the frames in place. After the resume, the loop of the
// coroutine's bottom invocation runs whatever is on top; when a frame returns into a
// frame that is not a Lua frame, unrollMayGC finishes that frame (a pcall marker, a
// native's continuation, a catcher's closing) as its C++ activation would have.
#include <algorithm>

#include "vm/interp.h"
#include "vm/meta.h"

namespace weft::vm {

namespace {

// Where a catcher keeps the error it caught: its callee's slot, below every variable of
// the protected call.
// CallFrame::errStatus: the error's StatusCode, and whether a __close ran for it.
constexpr uint16_t kClosedSome = 0x100;

uint32_t catcherSlot(const CallFrame& c) {
  if (c.flags & kFrameProtected) return c.func + 1 + ((c.flags & kFrameXpcall) ? 1 : 0);
  return c.calleeSlot;
}

// Nils [from, end), skipping to-be-closed variables still to be closed: the failed
// frames' registers may lie inside an extent the collector traces, and left there, what
// they held (often what exhausted the heap) would stay alive until overwritten.
void clearDeadSlots(ThreadData* t, uint32_t from, uint32_t end) {
  end = std::min(end, t->stackSize);
  const uint32_t* tbc = t->rare ? t->rare->tbc : nullptr;
  uint32_t count = t->tbcCount();
  uint32_t i = count;
  while (i > 0 && tbc[i - 1] >= from) i--;
  for (uint32_t j = from; j < end; j++) {
    if (i < count && tbc[i] == j) {
      i++;
      continue;
    }
    t->stack[j] = Value::nil();
  }
}

// The top frame's extent, or the extent of the Lua frame below a non-Lua top frame.
uint32_t deadEndAbove(ThreadData* t) {
  uint32_t end = scratchTop(t);
  if (t->frameCount >= 2) {
    const CallFrame& below = t->frames[t->frameCount - 2];
    if ((below.flags & kFrameLua) && below.top > end) end = below.top;
  }
  return end;
}

// The marker on top ends its protected call with false and the error it caught.
void finishProtectedError(ThreadData* t) {
  CallFrame& m = t->frame();
  uint32_t func = m.func;
  Value err = t->stack[catcherSlot(m)];
  int32_t wanted = m.nresults;
  t->frameCount--;
  t->cDepth--;
  t->stack[func] = Value::boolean(false);
  t->stack[func + 1] = err;
  moveResults(t, func, func, 2, wanted);
}

// Runs the top native frame's continuation with `status`.
NativeResult runContinuationMayGC(State& S, ThreadData* t, StatusCode status) {
  CallFrame& f = t->frame();
  NativeK k = f.k;
  intptr_t ctx = f.ctx;
  if (f.flags & kFramePcallK) {
    t->errFunc = f.extra;
    f.flags &= uint16_t(~kFramePcallK);
  }
  f.k = nullptr;
  CallContext cx(S, t, f.func, f.top - f.func - 1);
  return k(cx, status, ctx);
}

// The top native frame ended with its top n values: they go to its caller as
// callNativeMayGC delivers them, and the frame is popped.
Status finishNativeMayGC(State& S, ThreadData* t, uint32_t n, uint32_t& dest, uint16_t& flags) {
  const CallFrame& f = t->frame();
  if (n > t->top - f.func - 1) n = t->top - f.func - 1;
  if (t->hookMask & kHookMaskReturn) [[unlikely]] {
    if (Status st = runHookMayGC(S, t, "return", -1); !st.isOk()) return st;
  }
  const CallFrame& nf = t->frame();
  dest = nf.func;
  flags = nf.flags;
  int32_t wanted = nf.nresults;
  if (wanted > 0 && !ensureStackSlots(t, uint64_t(dest) + uint32_t(wanted) + 1)) return stackOverflowMayGC(S, t);
  moveResults(t, dest, t->top - n, n, wanted);
  t->frameCount--;
  return Status::ok();
}

}  // namespace

Status callKMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, NativeK k, intptr_t ctx) {
  if (!k || t->nny > 0) return callMayGC(S, t, func, nresults);
  uint32_t self = t->frameCount - 1;
  t->frames[self].k = k;
  t->frames[self].ctx = ctx;
  Status st = callYieldableMayGC(S, t, func, nresults, 0);
  if (st.code() != StatusCode::kYield) t->frames[self].k = nullptr;
  return st;
}

Status pcallKMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint32_t errFunc, NativeK k,
                   intptr_t ctx) {
  if (!k || t->nny > 0) return pcallMayGC(S, t, func, nresults, errFunc);
  uint32_t self = t->frameCount - 1;
  CallFrame& f = t->frames[self];
  f.k = k;
  f.ctx = ctx;
  f.flags |= kFramePcallK;
  f.calleeSlot = func;
  f.extra = t->errFunc;
  t->errFunc = errFunc;
  Status st = callYieldableMayGC(S, t, func, nresults, 0);
  if (st.isError() && st.code() != StatusCode::kFatal) {
    // Caught before any yield: the variables close here, and may yield in turn.
    catchErrorAt(S, t, self, st);
    st = closeForErrorMayGC(S, t);
  }
  if (st.code() == StatusCode::kYield) return st;
  CallFrame& done = t->frames[self];
  t->errFunc = done.extra;
  done.flags &= uint16_t(~kFramePcallK);
  done.k = nullptr;
  return st;
}

void catchErrorAt(State& S, ThreadData* t, uint32_t idx, Status st) {
  normaliseErrorValue(S, t, st);
  uint32_t deadEnd = scratchTop(t);
  t->frameCount = idx + 1;
  recountCDepth(t);
  CallFrame& c = t->frames[idx];
  uint32_t slot = catcherSlot(c);
  closeUpvalues(t, slot);
  t->stack[slot] = t->error;
  uint16_t closed = (c.flags & kFrameErrClose) ? uint16_t(c.errStatus & kClosedSome) : 0;
  c.flags |= kFrameErrClose;
  c.errStatus = uint16_t(uint16_t(st.code()) | closed);
  clearDeadSlots(t, slot + 1, std::max(deadEnd, scratchTop(t)));
  t->top = slot + 1;
}

namespace {

// The end of closing for an error: the catcher on top leaves its closing state with its
// errFunc restored and the error in its callee's slot, the top after it.
StatusCode endErrorClose(ThreadData* t) {
  CallFrame& c = t->frame();
  uint32_t slot = catcherSlot(c);
  c.flags &= uint16_t(~kFrameErrClose);
  t->errFunc = c.extra;
  t->top = slot + 1;
  // What the __close calls left in registers the caller's frame spans.
  if (c.errStatus & kClosedSome) clearDeadSlots(t, slot + 1, deadEndAbove(t));
  return StatusCode(c.errStatus & 0xff);
}

}  // namespace

Status closeForErrorMayGC(State& S, ThreadData* t) {
  for (;;) {
    uint32_t idx = t->frameCount - 1;
    uint32_t slot = catcherSlot(t->frames[idx]);
    if (!t->hasTbcFrom(slot + 1)) break;
    uint32_t var = t->popTbc();
    Value obj = t->stack[var];
    Value tm = metamethodOf(S, obj, Meta::Close);
    uint32_t fn = std::max(scratchTop(t), var + 1);
    Status st;
    if (!ensureStackSlots(t, uint64_t(fn) + 3 + kExtraStack)) {
      st = stackOverflowMayGC(S, t);
    } else {
      t->stack[fn] = tm;
      t->stack[fn + 1] = obj;
      t->stack[fn + 2] = t->stack[slot];
      t->top = fn + 3;
      t->frames[idx].errStatus |= kClosedSome;
      st = callYieldableMayGC(S, t, fn, 0, 0);
    }
    if (st.code() == StatusCode::kYield || st.code() == StatusCode::kFatal) return st;
    // An error in a __close replaces the pending one, which the next variables see.
    if (!st.isOk()) catchErrorAt(S, t, idx, st);
    t->top = slot + 1;
  }
  return Status(endErrorClose(t));
}

Status unrollMayGC(State& S, ThreadData* t, bool& leave) {
  leave = false;
  for (;;) {
    CallFrame& f = t->frame();
    if (f.flags & kFrameLua) return Status::ok();
    if (f.flags & kFrameProtected) {
      if (f.flags & kFrameErrClose) {
        Status st = closeForErrorMayGC(S, t);
        if (st.code() == StatusCode::kYield || st.code() == StatusCode::kFatal) return st;
        finishProtectedError(t);
      } else {
        finishProtected(t);
      }
      continue;
    }
    NativeResult r;
    if (f.flags & kFrameErrClose) {
      Status st = closeForErrorMayGC(S, t);
      if (st.code() == StatusCode::kYield || st.code() == StatusCode::kFatal) return st;
      r = runContinuationMayGC(S, t, st.code());
    } else if (f.k) {
      r = runContinuationMayGC(S, t, StatusCode::kYield);
    } else {
      r = NativeResult{int32_t(t->resumeCount), StatusCode::kOk};  // a yield's results: what resume passed
    }
    if (r.status == StatusCode::kYield) {
      if (r.count != kYieldedInCallee) t->resumeCount = uint32_t(r.count);
      return Status(r.status);
    }
    if (r.status != StatusCode::kOk) return Status(r.status);
    uint32_t dest;
    uint16_t flags;
    Status st = finishNativeMayGC(S, t, uint32_t(r.count), dest, flags);
    if (!st.isOk()) return st;
    if (flags & kFrameEntry) {
      leave = true;
      return Status::ok();
    }
    if (flags & kFrameFinishOp) {
      st = finishOpMayGC(S, t, dest);
      if (!st.isOk()) return st;
    }
  }
}

Status closeTbcInFrameMayGC(State& S, ThreadData* t, uint32_t level) {
  while (t->hasTbcFrom(level)) {
    uint32_t var = t->popTbc();
    Value obj = t->stack[var];
    Value tm = metamethodOf(S, obj, Meta::Close);
    uint32_t oldTop = t->top;
    uint32_t fn = std::max(scratchTop(t), var + 1);
    if (!ensureStackSlots(t, uint64_t(fn) + 3 + kExtraStack)) return stackOverflowMayGC(S, t);
    t->stack[fn] = tm;
    t->stack[fn + 1] = obj;
    t->stack[fn + 2] = Value::nil();
    t->top = fn + 3;
    // A yield leaves the call to finish the instruction, which then runs again to close
    // the variables below (finishOpMayGC).
    Status st = callYieldableMayGC(S, t, fn, 0, kFrameFinishOp);
    if (!st.isOk()) return st;
    t->top = oldTop;
  }
  return Status::ok();
}

}  // namespace weft::vm
