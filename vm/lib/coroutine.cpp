// The coroutine library (manual §6.2).
#include "vm/api.h"
#include "vm/debug.h"
#include "vm/interp.h"
#include "vm/lib/libs.h"
#include "vm/proto.h"
#include "vm/string.h"
#include "vm/thread.h"

namespace weft::vm {

namespace {

bool checkCoroutine(CallContext& cx, uint32_t i, ThreadData*& out) {
  if (!cx.checkType(i, Tag::Thread)) return false;
  out = cx.arg(i).asThread()->data;
  return true;
}

NativeResult pushMessage(CallContext& cx, const char* msg) {
  String* s = cx.newString(msg);
  if (!s) return cx.memoryError();
  cx.push(Value::string(s));
  return cx.results(1);
}

NativeResult coCreate(CallContext& cx) {
  if (!cx.checkType(1, Tag::LuaClosure)) return cx.failure();
  Thread* th = newThread(cx.state());
  if (!th) return cx.memoryError();
  ThreadData* co = th->data;
  co->stack[0] = cx.arg(1);
  co->top = 1;
  cx.push(Value::thread(th));
  return cx.results(1);
}

// After a resume (or its continuation): leaves true/false and the values on top of
// `first`. If the task suspended inside `co`, this native yields too and `k` continues it.
NativeResult afterResume(CallContext& cx, ThreadData* co, uint32_t first, Status st, uint32_t nres,
                         const char* resumeError, bool& failed, NativeK k) {
  failed = false;
  ThreadData* t = cx.threadData();
  if (st.code() == StatusCode::kYield && t->suspendedChild == co) {
    t->frame().k = k;
    t->taskSuspending = true;
    return NativeResult{0, StatusCode::kYield};
  }
  if (st.code() == StatusCode::kFatal) return NativeResult{0, st.code()};
  if (resumeError) {
    failed = true;
    cx.setTop(first);
    cx.push(Value::boolean(false));
    return pushMessage(cx, resumeError).status == StatusCode::kOk ? cx.results(2) : cx.memoryError();
  }
  if (st.isError()) {
    failed = true;
    cx.setTop(first);
    cx.push(Value::boolean(false));
    cx.push(co->error);
    return cx.results(2);
  }
  // Results are on top of our stack now; put `true` below them.
  uint32_t top = cx.top();
  uint32_t start = top - nres;
  if (!cx.ensureStack(1)) return cx.stackOverflow();
  cx.setTop(top + 1);
  for (uint32_t j = top; j > start; j--) cx.setAt(j, cx.at(j - 1));
  cx.setAt(start, Value::boolean(true));
  return cx.results(int32_t(nres + 1));
}

// Resumes with the arguments above `first`.
NativeResult auxResumeMayGC(CallContext& cx, ThreadData* co, uint32_t first, bool& failed, NativeK k) {
  uint32_t nargs = cx.top() - first;
  uint32_t nres = 0;
  const char* resumeError = nullptr;
  Status st = resumeMayGC(cx.state(), cx.threadData(), co, nargs, nres, resumeError);
  return afterResume(cx, co, first, st, nres, resumeError, failed, k);
}

// Continues the coroutine the task suspended in (thread.h).
NativeResult auxContinueMayGC(CallContext& cx, bool& failed, NativeK k) {
  ThreadData* co = cx.threadData()->suspendedChild;
  uint32_t first = cx.top();
  uint32_t nres = 0;
  const char* resumeError = nullptr;
  Status st = continueResumeMayGC(cx.state(), cx.threadData(), co, nres, resumeError);
  return afterResume(cx, co, first, st, nres, resumeError, failed, k);
}

NativeResult coResumeContinue(CallContext& cx, StatusCode, intptr_t) {
  bool failed;
  return auxContinueMayGC(cx, failed, coResumeContinue);
}

NativeResult coResume(CallContext& cx) {
  ThreadData* co;
  if (!checkCoroutine(cx, 1, co)) return cx.failure();
  bool failed;
  return auxResumeMayGC(cx, co, cx.argIndex(2), failed, coResumeContinue);
}

// wrap's outcome: the results, or the coroutine's error raised (closing it first).
NativeResult wrapOutcomeMayGC(CallContext& cx, ThreadData* co, NativeResult r, bool failed) {
  if (r.status != StatusCode::kOk) return r;
  uint32_t top = cx.top();
  if (failed) {
    Value err = cx.at(top - 1);
    if (co->status == ThreadStatus::Dead && co->failed) {
      Status cs = closeCoroutineMayGC(cx.state(), co);
      if (!cs.isOk()) err = co->error;
    }
    if (err.isString()) {
      std::string msg = wherePrefix(cx.threadData(), 1);
      msg.append(err.asString()->view());
      String* s = cx.newString(msg);
      if (!s) return cx.memoryError();
      err = Value::string(s);
    }
    return cx.raise(err);
  }
  return cx.results(r.count - 1);
}

NativeResult coWrapContinue(CallContext& cx, StatusCode, intptr_t) {
  ThreadData* co = cx.threadData()->suspendedChild;
  bool failed;
  NativeResult r = auxContinueMayGC(cx, failed, coWrapContinue);
  return wrapOutcomeMayGC(cx, co, r, failed);
}

NativeResult coWrapAux(CallContext& cx) {
  ThreadData* co = cx.upvalue(0).asThread()->data;
  bool failed;
  NativeResult r = auxResumeMayGC(cx, co, cx.argIndex(1), failed, coWrapContinue);
  return wrapOutcomeMayGC(cx, co, r, failed);
}

NativeResult coWrap(CallContext& cx) {
  if (!cx.checkType(1, Tag::LuaClosure)) return cx.failure();
  Thread* th = newThread(cx.state());
  if (!th) return cx.memoryError();
  th->data->stack[0] = cx.arg(1);
  th->data->top = 1;
  NativeClosure* c = newNativeClosure(cx.state(), coWrapAux, "wrap", 1);
  if (!c) return cx.memoryError();
  storeValue(c, c->upvalues[0], Value::thread(th));
  cx.push(Value::nativeClosure(c));
  return cx.results(1);
}

NativeResult coYield(CallContext& cx) { return cx.yield(int32_t(cx.argCount())); }

const char* statusName(CallContext& cx, ThreadData* co) {
  if (co == cx.threadData()) return "running";
  switch (co->status) {
    case ThreadStatus::Suspended: return "suspended";
    case ThreadStatus::Normal: return "normal";
    case ThreadStatus::Running: return "running";
    case ThreadStatus::Dead: return "dead";
  }
  return "dead";
}

NativeResult coStatus(CallContext& cx) {
  ThreadData* co;
  if (!checkCoroutine(cx, 1, co)) return cx.failure();
  return pushMessage(cx, statusName(cx, co));
}

NativeResult coRunning(CallContext& cx) {
  ThreadData* t = cx.threadData();
  t->escaped = true;
  cx.push(Value::thread(t->self));
  cx.push(Value::boolean(t->isMain));
  return cx.results(2);
}

NativeResult coIsYieldable(CallContext& cx) {
  ThreadData* t = cx.threadData();
  if (cx.hasArg(1) && !checkCoroutine(cx, 1, t)) return cx.failure();
  cx.push(Value::boolean(!t->isMain && !t->taskRoot && t->nny == 0));
  return cx.results(1);
}

NativeResult coClose(CallContext& cx) {
  ThreadData* co;
  if (!checkCoroutine(cx, 1, co)) return cx.failure();
  const char* st = statusName(cx, co);
  if (co->status != ThreadStatus::Dead && co->status != ThreadStatus::Suspended) {
    return cx.error("cannot close a %s coroutine", st);
  }
  if (co == cx.threadData()) return cx.error("cannot close a running coroutine");
  Status s = closeCoroutineMayGC(cx.state(), co);
  if (s.isOk()) {
    cx.push(Value::boolean(true));
    return cx.results(1);
  }
  cx.push(Value::boolean(false));
  cx.push(co->error);
  return cx.results(2);
}

constexpr LibEntry kCoFuncs[] = {
    {"close", coClose},       {"create", coCreate}, {"isyieldable", coIsYieldable},
    {"resume", coResume},     {"running", coRunning}, {"status", coStatus},
    {"wrap", coWrap},         {"yield", coYield},
};

}  // namespace

Status openCoroutineLib(State& state) { return openLibrary(state, "coroutine", kCoFuncs, nullptr); }

}  // namespace weft::vm
