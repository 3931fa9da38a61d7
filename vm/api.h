// The calling convention of native functions (the standard library and hosts).
//
// Protocol:
//  - A native receives a CallContext. Its arguments are stack slots of the running
//    thread: arg(1) .. arg(argCount()). It may push temporaries and results; it returns
//    `cx.results(n)`, meaning the top n pushed values are its results, or an error/yield
//    outcome made by the context (cx.error(...), cx.argError(...), cx.yield(n)).
//  - A native that does not call back into Lua (callMayGC and the *MayGC helpers below)
//    never sees a collection: raw String*/Table* pointers stay valid for its whole run.
//  - A native that re-enters Lua keeps every reference it needs afterwards in a stack
//    slot (push it) or a gc::Handle, and re-reads it after the call (invariant 1).
//    Stack indices are stable; Value* pointers into the stack are not (the stack may be
//    reallocated by any call).
//  - Errors are values: a native never throws; failures return through NativeResult.
//  - A native whose callee may yield calls it with callK or pcallK and a continuation
//    (docs/design/continuations.md): if the thread yields inside, the native's C++
//    activation ends at once (callK returns the yield) and the continuation ends the
//    native after the resume, with nothing but the stack, its arguments and the context
//    it gave. callMayGC's callee cannot yield ("attempt to yield across a C-call
//    boundary"), as lua_call's cannot.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "vm/object.h"
#include "vm/state.h"
#include "vm/thread.h"
#include "weft/status.h"

namespace weft::vm {

struct Thread;
struct ThreadData;

// What a native returns: a result count (>= 0) or a non-ok status. With kYield, the
// count is the number of values yielded (on top of the stack), or kYieldedInCallee.
struct NativeResult {
  int32_t count = 0;
  StatusCode status = StatusCode::kOk;
};
// The count of a kYield that a native passes on from its callee (callK, pcallK): the
// callee's own yield already recorded how many values it yields.
inline constexpr int32_t kYieldedInCallee = -1;

class CallContext {
 public:
  CallContext(State& state, Thread& thread, uint32_t func, uint32_t argCount);
  CallContext(State& state, ThreadData* t, uint32_t func, uint32_t argCount)
      : state_(state), t_(t), func_(func), argCount_(argCount) {}

  State& state() { return state_; }
  Thread& thread() { return *threadSelf(); }
  ThreadData* threadData() { return t_; }

  // Arguments, 1-based. Beyond argCount() they read as nil ("no value").
  uint32_t argCount() const { return argCount_; }
  Value arg(uint32_t i) const;
  bool hasArg(uint32_t i) const { return i >= 1 && i <= argCount_; }
  // Stack index of argument i (stable across calls).
  uint32_t argIndex(uint32_t i) const { return func_ + i; }
  // The function being called (for native closures: its upvalues).
  Value callee() const;
  Value upvalue(uint32_t i) const;            // native closure upvalue, 0-based
  void setUpvalue(uint32_t i, const Value& v);

  // Pushing values on the stack (temporaries or results). false if the stack cannot
  // grow (the caller then returns cx.stackOverflow()).
  bool push(const Value& v) {
    if (t_->top + 1 >= t_->stackSize) [[unlikely]] return pushSlow(v);
    t_->stack[t_->top++] = v;
    return true;
  }
  bool ensureStack(uint32_t n);  // room for n more pushes
  uint32_t top() const;          // stack index one past the last pushed value
  Value at(uint32_t stackIndex) const;
  void setAt(uint32_t stackIndex, const Value& v);
  void setTop(uint32_t stackIndex);

  // Outcomes.
  NativeResult results(int32_t n) { return NativeResult{n, StatusCode::kOk}; }
  NativeResult noResults() { return results(0); }
  // Raises a Lua error with value v (at the top of nothing: no position added).
  NativeResult raise(const Value& v);
  // Raises "position: message" like luaL_error (position of the calling Lua code).
  NativeResult error(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  // "bad argument #i to 'name' (message)"
  NativeResult argError(uint32_t i, std::string_view message);
  // "bad argument #i to 'name' (EXPECTED expected, got TYPE)"
  NativeResult typeError(uint32_t i, std::string_view expected);
  NativeResult memoryError();
  NativeResult stackOverflow();
  // Suspends the running coroutine, yielding the top n values (coroutine.yield).
  NativeResult yield(int32_t n);
  // As yield, and after the resume k(cx, kYield, ctx) ends the native, the values
  // resume passed on top of the stack (lua_yieldk).
  NativeResult yieldK(int32_t n, intptr_t ctx, NativeK k);

  // Calls with a continuation, as lua_callk does: calls the value at stack index `func`
  // with the nargs values above it (results as callMayGC leaves them), then ends the
  // native with k(cx, kOk, ctx). If the thread yields inside the callee (where
  // coroutine.isyieldable allows), this returns that yield at once, and the native must
  // return it untouched: after the resume and the callee's return, k(cx, kYield, ctx)
  // ends the native. An error is returned as is.
  NativeResult callK(uint32_t func, int32_t nargs, int32_t nresults, intptr_t ctx, NativeK k);
  // As callK, catching errors as protectedCallMayGC does, with the message handler at
  // stack index `errFunc` (0: none), as lua_pcallk does: k then gets the error's code
  // and finds the error value at `func`, the top after it.
  NativeResult pcallK(uint32_t func, int32_t nargs, int32_t nresults, uint32_t errFunc, intptr_t ctx, NativeK k);

  // Argument checks, like luaL_check*: on failure they record the error and return
  // false; the native then returns cx.failure(). The common case is inline.
  bool checkInteger(uint32_t i, int64_t& out) {
    Value v = arg(i);
    if (v.isInt()) [[likely]] {
      out = v.u.i;
      return true;
    }
    return checkIntegerSlow(i, out);
  }
  bool checkNumber(uint32_t i, double& out) {
    Value v = arg(i);
    if (v.isFloat()) [[likely]] {
      out = v.u.n;
      return true;
    }
    return checkNumberSlow(i, out);
  }
  bool checkString(uint32_t i, String*& out) {  // numbers are converted (allocates)
    Value v = arg(i);
    if (v.isString()) [[likely]] {
      out = v.asString();
      return true;
    }
    return checkStringSlow(i, out);
  }
  bool checkTable(uint32_t i, Table*& out) {
    Value v = arg(i);
    if (v.isTable()) [[likely]] {
      out = v.asTable();
      return true;
    }
    return checkTableSlow(i, out);
  }
  bool checkAny(uint32_t i);                   // "value expected"
  bool checkType(uint32_t i, Tag tag);
  bool optInteger(uint32_t i, int64_t def, int64_t& out);
  bool optNumber(uint32_t i, double def, double& out);
  bool optString(uint32_t i, String* def, String*& out);
  NativeResult failure() { return pending_; }

  // Allocation helpers (nullptr on exhaustion; then return cx.memoryError()).
  String* newString(std::string_view bytes);
  Table* newTable(uint32_t arrayHint = 0, uint32_t hashHint = 0);

  // Calls the value at stack index `func` with the nargs values above it; its results
  // replace them starting at `func` (nresults < 0: all results, top set after them).
  // Re-enters Lua: any collection may happen; re-read heap references afterwards.
  Status callMayGC(uint32_t func, int32_t nargs, int32_t nresults);
  // Like callMayGC but catches errors (pcall semantics); on error the error value is
  // left at `func` and the status says which error.
  Status protectedCallMayGC(uint32_t func, int32_t nargs, int32_t nresults);
  // (callK and pcallK above are the yieldable forms.)

  // Table access with metamethods (__index/__newindex/__len/__eq/__lt/__le/__concat
  // may run Lua code).
  Status getMayGC(const Value& object, const Value& key, Value& out);
  Status setMayGC(const Value& object, const Value& key, const Value& value);
  Status lengthMayGC(const Value& object, Value& out);
  Status lessThanMayGC(const Value& a, const Value& b, bool& out);
  Status equalsMayGC(const Value& a, const Value& b, bool& out);
  // tostring with __tostring/__name; pushes nothing, returns the string in out.
  Status toStringMayGC(const Value& v, String*& out);

  // The name Lua would give this function in error messages ("insert", "string.rep", "?").
  std::string functionName() const;

 private:
  State& state_;
  ThreadData* t_;  // off-heap thread data: stable while the Thread object moves
  uint32_t func_;
  uint32_t argCount_;
  NativeResult pending_;
  Thread* threadSelf() const;
  bool pushSlow(const Value& v);
  bool checkIntegerSlow(uint32_t i, int64_t& out);
  bool checkNumberSlow(uint32_t i, double& out);
  bool checkStringSlow(uint32_t i, String*& out);
  bool checkTableSlow(uint32_t i, Table*& out);
};

// Inline: every native reads its arguments through it.
inline Value CallContext::arg(uint32_t i) const {
  if (i < 1 || i > argCount_) return Value::nil();
  return t_->stack[func_ + i];
}

// A wait on the operating system. Between the two calls the caller touches no heap
// object (it may move): it reads into or writes from C++ buffers only. leaveOsWait
// returns kFatal when the runtime closed meanwhile.
inline void enterOsWait(State& state, OsWait kind = OsWait::kLong) {
  if (state.osWaitEnter) state.osWaitEnter(state, kind);
}
inline Status leaveOsWait(State& state, OsWait kind = OsWait::kLong) {
  return state.osWaitLeave ? state.osWaitLeave(state, kind) : Status::ok();
}

// Work that blocks on the operating system (a child process, a read from a pipe or a
// terminal), done without the heap: run() reads into or writes from the job's own C++
// buffers and touches no heap object, so it may run on any thread, detached from the
// collector. finish() then ends the native on the task's thread, with the results.
// Design: docs/design/blocking-pool.md.
class BlockingJob {
 public:
  virtual ~BlockingJob() = default;
  virtual void run() = 0;
  // The native's results from what run() left (cx is the native's own frame, its
  // arguments in place). May start another job with runBlockingMayGC.
  virtual NativeResult finishMayGC(CallContext& cx) = 0;
  // Set by whoever ran the job when run() threw: the exception's message. finish()
  // then does not run, and the native raises "blocking call failed: <panic>".
  std::string panic;
};

// Runs `job` without holding up a worker and ends the native with job->finishMayGC.
// The runtime's hook (State::blockingSubmit) runs it on the blocking pool while the
// task suspends, if the task can suspend here; otherwise (the main task, a wait under a
// native frame, a State without a runtime) it runs here, between enterOsWait and
// leaveOsWait. The native returns what this returns.
NativeResult runBlockingMayGC(CallContext& cx, std::shared_ptr<BlockingJob> job);
// Runs job.run() catching any C++ exception into job.panic (per-call isolation).
void runJobIsolated(BlockingJob& job);

// An effect on the world outside the program (output, files, processes, the clock, the
// collector's controls, loading code from files): in deterministic mode with parallel
// steps the step first waits at its gate, so that every such effect happens in decision
// order (runtime/sched/deterministic.h). A native whose result depends only on its
// arguments and the heap needs no gate. May collect (the gate waits detached).
template <NativeFn F>
NativeResult worldEffect(CallContext& cx) {
  if (const State::DeterministicHooks* det = cx.state().deterministic; det && det->gateMayGC) [[unlikely]] {
    if (Status st = det->gateMayGC(cx.state(), cx.threadData()); !st.isOk()) return NativeResult{0, st.code()};
  }
  return F(cx);
}

// Library registration.
struct LibEntry {
  const char* name;
  NativeFn fn;
};
// Creates a table of light natives, stores it as global `name` (unless null) and in
// package.loaded[name] (when the package library exists).
Status openLibrary(State& state, const char* name, std::span<const LibEntry> entries, Table** out);

// os.exit (lib/os.cpp) lets the embedder decide how the process ends: the hook gets the
// exit status and os.exit's `close` flag; it should close the state when asked (running
// pending finalizers, HostStack::closeMayGC) and end the process. Without a hook,
// os.exit closes the state when asked, flushes the C streams and calls std::exit.
// Process-wide; set once at start-up, before any script runs.
using ExitHook = void (*)(State& state, int status, bool close);
void setExitHook(ExitHook hook);

// Lua's type names ("nil", "number", ...), and luaL_typename-like naming with __name.
const char* typeName(const Value& v);

}  // namespace weft::vm
