// The interpreter's entry points and the call/return/error machinery shared by the loop
// (vm/interp.cpp), the native calling convention (vm/call.cpp, vm/api.cpp), metamethods
// (vm/meta.cpp), continuations (vm/continuation.cpp) and coroutines (vm/coroutine.cpp).
//
// Protocol:
//  - Calls: the function sits at a stack index `func`, its arguments in [func+1, t->top).
//    Results replace them from `func` on; with nresults < 0 all results are kept and
//    t->top is set after the last one.
//  - Lua-to-Lua calls, returns and tail calls, pcall/xpcall called from Lua code and
//    metamethods called by opcodes are frames of the same loop invocation (no C++
//    recursion). Only natives that call back into Lua (callMayGC) nest the loop; each
//    nesting counts in nativeDepth ("C stack overflow" beyond maxNativeDepth) and, unless
//    it is yieldable (callKMayGC, pcallKMayGC, __close calls), in nny (a coroutine cannot
//    yield across it).
//  - Yields are Status values too: kYield returns through every C++ activation up to the
//    resume and leaves the frames in place. A yieldable nesting's entry frame then
//    returns into the frame below it, whose continuation (a native's k, a pcall marker,
//    a catcher closing variables, an opcode's finish) unrollMayGC runs after the resume
//    (docs/design/continuations.md).
//  - Errors are Status values. The error object is in t->error. A raise runs the active
//    message handler at once (xpcall), while the frames of the error point still exist;
//    the frames are cut back only by the protected boundary that catches the error (a
//    pcall marker frame or a native in pcallK: catchErrorAt; pcallMayGC;
//    coroutine.resume), which also closes upvalues and to-be-closed variables above its
//    level, the handler still active.
#pragma once

#include <cstdarg>
#include <string>

#include "vm/api.h"
#include "vm/thread.h"

namespace weft::vm {

// Runs the loop from the top frame until the frame marked kFrameEntry returns. The top
// frame is a Lua frame pushed by pushLuaFrameMayGC, or (resuming a coroutine) any frame
// a yield left on top: a native's is continued by unrollMayGC, with t->resumeCount
// values at the top of the stack.
Status executeMayGC(State& S, ThreadData* t);

// Calls the value at `func` with the arguments [func+1, t->top). Re-enters Lua.
// `frameFlags` are added to the callee's frame (kFrameHook for debug hooks). The callee
// cannot yield (it counts in nny).
Status callMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t frameFlags = 0);
// As callMayGC, catching errors with `errFunc` (a stack index, 0 for none) as the message
// handler: on error the frames, upvalues and to-be-closed variables above `func` are
// closed and the error value is left at `func` (t->top = func + 1). `frameFlags` as for
// callMayGC (kFrameFinalizer for a finalizer).
Status pcallMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint32_t errFunc = 0,
                  uint16_t frameFlags = 0);
// As callMayGC, but the callee may yield (when nothing below forbids it: nny == 0). On
// kYield the call's frames stay and its entry frame returns, after the resume, into the
// frame below with `resumeFlags` added (0: the frame below continues by unrollMayGC;
// kFrameFinishOp: it finishes the instruction that made the call).
Status callYieldableMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t resumeFlags);

// Continuations (vm/continuation.cpp; thread.h invariants 5 and 6). The top frame is the
// calling native's. callKMayGC: as callMayGC, but with k set and nny == 0 the callee may
// yield: kYield then means the native must return at once (CallContext::callK), and
// k(cx, kYield, ctx) ends it after the resume. Without k or when nny > 0, callMayGC.
Status callKMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, NativeK k, intptr_t ctx);
// As callKMayGC, catching errors as pcallMayGC does (lua_pcallk). An error caught before
// any yield returns its status here, the error value at `func`; caught after one, it
// goes to k with its code, the error value at `func` too.
Status pcallKMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint32_t errFunc, NativeK k,
                   intptr_t ctx);
// Catches an error at the catcher frame `idx` (a pcall marker or a native in pcallK):
// cuts the frames above it, closes the upvalues of its protected call, keeps the error
// in the call's slot and marks the catcher kFrameErrClose. Collects nothing.
void catchErrorAt(State& S, ThreadData* t, uint32_t idx, Status st);
// The top frame is a catcher marked kFrameErrClose: closes the protected call's
// to-be-closed variables, each in a call that may yield. Returns kYield (the catcher
// continues after the resume), kFatal, or the final error status with the error value
// in the call's slot (t->top after it) and the catcher's errFunc restored.
Status closeForErrorMayGC(State& S, ThreadData* t);
// Continues a thread whose top frame is not a Lua frame: a native resumed after its
// yield, a native whose callee returned after a yield (its continuation), a pcall marker
// whose callee returned, a catcher closing variables. Stops when a Lua frame is on top
// (ok), when a frame marked kFrameEntry ended (ok, `leave` set: the loop invocation
// returns), at a yield (kYield) or at an error (its status; the loop catches it).
Status unrollMayGC(State& S, ThreadData* t, bool& leave);
// OP_CLOSE and OP_RETURN: closes the to-be-closed variables at or above `level` with no
// error, each in a call that may yield; a yield leaves that call to finish the
// instruction (finishOpMayGC), which then runs again for the variables left.
Status closeTbcInFrameMayGC(State& S, ThreadData* t, uint32_t level);

// Pushes the frame of the Lua closure at `func` (arguments up to t->top), adjusting
// fixed parameters. Raises "stack overflow" (ok otherwise): only that raise may collect,
// as it runs the message handler.
Status pushLuaFrameMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t flags);
// Calls the native at `func` (arguments up to t->top) and moves its results to `func`.
// The frame stays on kYield (the resume finishes it: unrollMayGC).
Status callNativeMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t flags);
// OP_CALL of a value that is not a Lua closure: natives, the pcall/xpcall markers, and
// __call. May push a Lua frame for the loop to run.
Status callNonLuaMayGC(State& S, ThreadData* t, uint32_t func, int32_t nresults, uint16_t flags);
// Makes the value at `func` callable: if it is not a function, inserts its __call
// metamethod below the arguments (raises "attempt to call" otherwise).
Status resolveCallableMayGC(State& S, ThreadData* t, uint32_t func, int calleeReg);

// Copies n results from src to dest and adjusts them to `wanted` (nil padding); sets
// t->top after the kept results.
void moveResults(ThreadData* t, uint32_t dest, uint32_t src, uint32_t n, int32_t wanted);

// The pcall marker on top ends its protected call: `true` and the results on top.
void finishProtected(ThreadData* t);

// First free slot above everything the top frame uses.
uint32_t scratchTop(ThreadData* t);

// Raising errors (all return the status to propagate).
Status raiseValueMayGC(State& S, ThreadData* t, const Value& v);
Status runtimeErrorMayGC(State& S, ThreadData* t, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
Status vruntimeErrorMayGC(State& S, ThreadData* t, bool position, const char* fmt, va_list ap);
Status memoryErrorStatus(State& S, ThreadData* t);
Status stackOverflowMayGC(State& S, ThreadData* t);
// "chunk:line: " of the Lua frame `level` frames below the top (0 = top), or "". Like
// luaL_where, "" also when the frame's line is unknown (stripped debug information),
// unless `always` (the position of a runtime error, "?:-1: " there).
std::string wherePrefix(ThreadData* t, int level, bool always = false);

// Catching: cuts frames back to `frameLevel` (the catcher's frame count), closes upvalues
// and to-be-closed variables at or above `stackLevel` with the error, and returns the
// final error status (a __close may replace the error).
Status unwindForErrorMayGC(State& S, ThreadData* t, uint32_t frameLevel, uint32_t stackLevel, Status st);
// Replaces a memory/handler status by its error value in t->error.
void normaliseErrorValue(State& S, ThreadData* t, Status st);
// Closes to-be-closed variables at or above `level`, calling __close(value, err) in
// reverse order (err nil when `st` is ok). Returns the status after closing.
Status closeTbcMayGC(State& S, ThreadData* t, uint32_t level, Status st);

// Calls the thread's debug hook with (event, line), line < 0 passing nil, unless a hook
// is already running (hooks are off inside hooks). An error in the hook is the error of
// the hooked code. Re-enters Lua.
// Calls the hook of `t` for `event` ("call", "return", "line", ...) on the top frame;
// call and return hooks pass the values the frame transfers (thread.h, hookFtransfer).
Status runHookMayGC(State& S, ThreadData* t, const char* event, int line, uint32_t ftransfer = 0,
                    uint32_t ntransfer = 0);

// Runs due finalizers (__gc), each protected; errors become warnings.
void runFinalizersMayGC(State& S, ThreadData* t);
// A safepoint outside the loop (natives that allocate much, collectgarbage).
Status safepointMayGC(State& S, ThreadData* t);
// An explicit whole collection (collectgarbage, lua_gc) made by code running on `t`,
// then what safepointMayGC does after one: t's stack marked dirty, due finalizers run.
Status fullCollectMayGC(State& S, ThreadData* t);
// As fullCollectMayGC, with a minor collection (gc-v2.md): a generational step.
Status minorCollectMayGC(State& S, ThreadData* t);
// As fullCollectMayGC, with one step of an incremental major (gc::Heap::stepMayGC).
Status stepCollectMayGC(State& S, ThreadData* t, size_t work, bool& cycleEnded);
// Which registers of the top Lua frame a loop safepoint keeps for the collector: the whole
// frame; those of the locals active at the saved pc (a back-edge: it lands on a statement
// boundary); those a frame entered or resumed uses (its arguments at entry, else the
// results of the call that just returned); or, as any other value, those below that
// stack index (an allocating instruction: the registers above its target are free).
// Lua's collector sees the same, so an object left in a dead register is collected as
// it is there (docs/design/gc-dead-slots.md).
inline constexpr uint32_t kLiveFrame = 0;
inline constexpr uint32_t kLiveLocals = UINT32_MAX;
inline constexpr uint32_t kLiveResumed = UINT32_MAX - 1;
// The loop's safepoint: safepointMayGC, then the dispatch budget (thread.h): returns
// kYield with t->preempted set when a task's root thread should give up its worker.
Status loopSafepointMayGC(State& S, ThreadData* t, uint32_t live = kLiveFrame);

// pcall and xpcall, recognised by the loop to run them as marker frames.
NativeResult basePcall(CallContext& cx);
NativeResult baseXpcall(CallContext& cx);

// Emits a warning the way lua5.4 does ("Lua warning: ..."), honouring warn("@off").
void emitWarning(State& S, std::string_view message, bool toContinue);

// The State's running thread (the coroutine being resumed, or the main thread).
ThreadData* currentThread(State& S);
void setCurrentThread(State& S, ThreadData* t);

}  // namespace weft::vm

namespace weft::vm {
// Compiles (text) or undumps (binary) a chunk as `mode` allows and makes its main
// closure, whose first upvalue is the globals table (the caller may replace it). On
// failure returns the error status and sets `err` to Lua's message. Never collects.
Status loadChunk(State& S, std::string_view chunk, std::string_view chunkName, std::string_view mode, Value& fn,
                 std::string& err);
}  // namespace weft::vm

namespace weft::vm {
// Coroutines (vm/coroutine.cpp). Moves nargs values from the top of `from` to `co` and
// runs `co` until it yields, returns or fails. On kOk/kYield the co's results (`nres`
// of them) have been moved to the top of `from`; on an error the error value is in
// co->error and `co` is dead. Errors about the resume itself ("cannot resume dead
// coroutine") return kRuntimeError with `resumeError` set and touch nothing.
Status resumeMayGC(State& S, ThreadData* from, ThreadData* co, uint32_t nargs, uint32_t& nres, const char*& resumeError);
// Continues a coroutine whose wait suspended its task (from->suspendedChild), with the
// same outcomes as resumeMayGC. A kYield with from->suspendedChild == co means the task
// suspended again inside it.
Status continueResumeMayGC(State& S, ThreadData* from, ThreadData* co, uint32_t& nres, const char*& resumeError);
// coroutine.close: closes pending to-be-closed variables of a suspended or dead
// coroutine; returns the error status (error value in co->error) or ok, once: the
// coroutine is left dead without an error, so closing it again returns ok.
Status closeCoroutineMayGC(State& S, ThreadData* co);
}  // namespace weft::vm
