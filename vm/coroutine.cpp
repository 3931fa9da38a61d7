// Resuming and closing coroutines. A coroutine runs in its own loop invocation (a
// nested executeMayGC on its ThreadData); a yield returns kYield out of that invocation
// and leaves the coroutine as frames only (thread.h invariant 3).
#include "vm/interp.h"
#include "vm/thread.h"

namespace weft::vm {

namespace {

bool moveValues(ThreadData* from, ThreadData* to, uint32_t n) {
  if (!ensureStackSlots(to, uint64_t(to->top) + n + kMinNativeStack)) return false;
  for (uint32_t j = 0; j < n; j++) to->stack[to->top + j] = from->stack[from->top - n + j];
  to->top += n;
  from->top -= n;
  return true;
}

Status finishResume(State& S, ThreadData* from, ThreadData* co, Status st, uint32_t& nres, const char*& resumeError);

}  // namespace

Status resumeMayGC(State& S, ThreadData* from, ThreadData* co, uint32_t nargs, uint32_t& nres,
                   const char*& resumeError) {
  resumeError = nullptr;
  if (co->status == ThreadStatus::Dead) {
    resumeError = "cannot resume dead coroutine";
    return Status(StatusCode::kRuntimeError);
  }
  // Claim the coroutine: a task on another worker may be resuming it at this moment, so
  // its stack is read only once the claim holds.
  ThreadStatus expected = ThreadStatus::Suspended;
  if (co == from || !co->status.compare_exchange_strong(expected, ThreadStatus::Running)) {
    resumeError = expected == ThreadStatus::Dead ? "cannot resume dead coroutine" : "cannot resume non-suspended coroutine";
    return Status(StatusCode::kRuntimeError);
  }
  if (co->frameCount == 0 && co->top == 0) {  // no body left to run
    co->status = ThreadStatus::Suspended;
    resumeError = "cannot resume dead coroutine";
    return Status(StatusCode::kRuntimeError);
  }
  if (from->nativeDepth + 1 >= S.options().maxNativeDepth) {
    co->status = ThreadStatus::Suspended;
    resumeError = "C stack overflow";
    return Status(StatusCode::kRuntimeError);
  }
  if (!moveValues(from, co, nargs)) {
    co->status = ThreadStatus::Suspended;
    resumeError = "too many arguments to resume";
    return Status(StatusCode::kRuntimeError);
  }
  co->nativeDepth = from->nativeDepth + 1;
  from->status = ThreadStatus::Normal;
  co->task = from->task;
  co->budget = from->budget;
  co->resumer = from;
  setCurrentThread(S, co);
  Status st;
  if (co->frameCount == 0) {
    // First resume: the body is at slot 0, the arguments above it.
    if (co->stack[0].isLuaClosure()) {
      st = pushLuaFrameMayGC(S, co, 0, -1, kFrameEntry);
      if (st.isOk()) st = executeMayGC(S, co);
    } else {
      st = resolveCallableMayGC(S, co, 0, -1);
      if (st.isOk()) st = callNativeMayGC(S, co, 0, -1, kFrameEntry);
    }
  } else {
    co->resumeCount = nargs;
    if (co->rare && co->rare->hookYielded) {  // a C hook yielded: the values go nowhere, as in Lua
      co->rare->hookYielded = false;
      co->rare->hookSkipOnce = true;
      co->top -= nargs;
    }
    st = executeMayGC(S, co);
  }
  return finishResume(S, from, co, st, nres, resumeError);
}

Status continueResumeMayGC(State& S, ThreadData* from, ThreadData* co, uint32_t& nres, const char*& resumeError) {
  resumeError = nullptr;
  from->suspendedChild = nullptr;
  from->status = ThreadStatus::Normal;
  co->budget = from->budget;
  co->resumer = from;
  setCurrentThread(S, co);
  return finishResume(S, from, co, executeMayGC(S, co), nres, resumeError);
}

namespace {

Status finishResume(State& S, ThreadData* from, ThreadData* co, Status st, uint32_t& nres, const char*& resumeError) {
  setCurrentThread(S, from);
  from->status = ThreadStatus::Running;
  from->budget = co->budget;
  if (st.code() == StatusCode::kYield && co->taskSuspending) {
    // The task suspended inside `co`: it stays running, part of the suspended chain.
    co->taskSuspending = false;
    from->suspendedChild = co;
    nres = 0;
    return st;
  }
  co->resumer = nullptr;
  if (!st.isOk() && st.code() != StatusCode::kYield) {
    co->failed = true;
    co->status = ThreadStatus::Dead;
    return st;
  }
  nres = st.isOk() ? co->top : co->resumeCount;
  bool moved = moveValues(co, from, nres);
  // Only now, with the results read off its stack: once a yielded coroutine shows as
  // suspended, a task on another worker may resume it and rewrite that stack.
  co->status = st.isOk() ? ThreadStatus::Dead : ThreadStatus::Suspended;
  if (!moved) {
    resumeError = "too many results to resume";
    return Status(StatusCode::kRuntimeError);
  }
  return st;
}

}  // namespace

Status closeCoroutineMayGC(State& S, ThreadData* co) {
  Status st = co->failed ? Status(StatusCode::kRuntimeError) : Status::ok();
  co->frameCount = 0;
  co->errFunc = 0;
  closeUpvalues(co, 0);
  ThreadData* prev = S.context().running;
  // The __close calls nest inside the closer's native depth, as a resume's would: a chain
  // of closes that close other coroutines ends in "C stack overflow", not a crash.
  co->nativeDepth = prev && prev != co ? prev->nativeDepth + 1 : 0;
  co->status = ThreadStatus::Running;
  setCurrentThread(S, co);
  // An error raised by a __close while no error is pending leaves the variables below it
  // open; like Lua, close those too, each seeing the latest error (co->error).
  st = closeTbcMayGC(S, co, 0, st);
  while (co->tbcCount() > 0 && (st.code() == StatusCode::kRuntimeError || st.code() == StatusCode::kMemoryError ||
                                st.code() == StatusCode::kErrorInHandler)) {
    st = closeTbcMayGC(S, co, 0, st);
  }
  setCurrentThread(S, prev);
  co->status = ThreadStatus::Dead;
  co->failed = false;  // this close reports the error; a later close finds it clean
  co->top = 0;
  return st;
}

}  // namespace weft::vm
