// Calling C functions and calling Lua from C (manual §4.5-4.7): the trampoline that
// runs every lua_CFunction and continuation, errors (lua_error and the API's own), the
// continuations of lua_callk/lua_pcallk/lua_yieldk, lua_load and lua_dump.
//
// Protocol (docs/design/c-api.md): enterCMayGC is the only C++ frame between the VM and a C
// function. It records a CCall (with a jmp_buf) on the OS thread's chain; a raise inside
// any lua_* function stores its outcome there and longjmps back, so the C function's
// activation (and any lua_* frames above it) ends without C++ unwinding. A yield leaves
// the same way, its continuation recorded in the native frame by the VM (callK, pcallK,
// yieldK), and a continuation later runs through enterCMayGC again.
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include "frontend/chunkio.h"
#include "runtime/capi/internal.h"
#include "runtime/capi/lock.h"
#include "vm/proto.h"
#include "vm/string.h"

using namespace weft;
using namespace weft::capi;
using vm::Value;

namespace weft::capi {

thread_local constinit CCall* tlsCCall = nullptr;

[[noreturn]] void raiseStatus(lua_State* L, vm::NativeResult outcome) {
  CCall* c = tlsCCall;
  vm::ThreadData* t = threadOf(L);
  if (c && c->thread == t) {
    c->outcome = outcome;
    std::longjmp(c->jump, 1);
  }
  // Unprotected: nothing catches it. The panic function sees the error on top.
  CApiState& cs = capiOf(L);
  if (outcome.status != StatusCode::kYield && t->top < t->stackSize) t->stack[t->top++] = t->error;
  if (cs.panic) cs.panic(L);
  std::abort();
}

vm::NativeResult enterCMayGC(vm::CallContext& cx, lua_CFunction f, lua_KFunction k, int status, lua_KContext ctx) {
  CCall c;
  c.prev = tlsCCall;
  c.thread = cx.threadData();
  c.cx = &cx;
  c.outcome = vm::NativeResult{0, StatusCode::kOk};
  uint32_t base = cx.argIndex(1);
  // A C function may push LUA_MINSTACK values unchecked; a built-in native's call
  // reserves fewer (vm/thread.h, kMinNativeStack).
  if (!vm::ensureStackSlots(c.thread, uint64_t(c.thread->top) + vm::kMinCStack)) return cx.stackOverflow();
  LibraryLock* lock = f ? enterLibrary(cx.state(), reinterpret_cast<void*>(f)) : enterLibrary(cx.state(), reinterpret_cast<void*>(k));
  tlsCCall = &c;
  if (setjmp(c.jump) == 0) {
    lua_State* L = luaStateOf(c.thread);
    int n = f ? f(L) : k(L, status, ctx);
    vm::ThreadData* t = c.thread;
    if (n < 0 || uint32_t(n) > t->top - base) n = int(t->top - base);
    c.outcome = vm::NativeResult{n, StatusCode::kOk};
  }
  CCall* self = tlsCCall;  // re-read after a longjmp: the record is in memory
  tlsCCall = self->prev;
  leaveLibrary(cx.state(), lock);
  unpinFrom(self->thread, base);
  vm::ThreadData* t = self->thread;
  if (self->outcome.status == StatusCode::kOk && t->hasTbcFrom(base)) {
    // Slots the function marked with lua_toclose close when it returns, below its results.
    uint32_t n = uint32_t(self->outcome.count);
    uint32_t first = t->top - n;
    Status st = vm::closeTbcMayGC(cx.state(), t, base, Status::ok());
    if (!st.isOk()) return vm::NativeResult{0, st.code()};
    t->top = first + n;
  }
  return self->outcome;
}

namespace {

// Continuations: a frame records a NativeK and a context, and a C continuation needs a
// lua_KFunction too. Each distinct lua_KFunction gets a slot here and the NativeK that
// calls it; they are static code, so a program has few (kMaxContinuations is plenty; past
// it a call is made without a continuation: not yieldable).
constexpr size_t kMaxContinuations = 512;
std::array<std::atomic<lua_KFunction>, kMaxContinuations> gContinuations{};
std::atomic<size_t> gContinuationCount{0};
std::mutex gContinuationMutex;

template <size_t I>
vm::NativeResult runContinuationMayGC(vm::CallContext& cx, StatusCode status, intptr_t ctx) {
  // acquire: pairs with the release store that published slot I.
  return enterCMayGC(cx, nullptr, gContinuations[I].load(std::memory_order_acquire), luaStatusOf(status), ctx);
}

template <size_t... I>
constexpr std::array<vm::NativeK, sizeof...(I)> makeContinuations(std::index_sequence<I...>) {
  return {&runContinuationMayGC<I>...};
}
constexpr auto kContinuationRunners = makeContinuations(std::make_index_sequence<kMaxContinuations>());

}  // namespace

vm::NativeK nativeKFor(lua_KFunction k) {
  size_t n = gContinuationCount.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; i++) {
    if (gContinuations[i].load(std::memory_order_relaxed) == k) return kContinuationRunners[i];
  }
  std::lock_guard<std::mutex> lock(gContinuationMutex);
  n = gContinuationCount.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; i++) {
    if (gContinuations[i].load(std::memory_order_relaxed) == k) return kContinuationRunners[i];
  }
  if (n == kMaxContinuations) return nullptr;
  gContinuations[n].store(k, std::memory_order_release);
  gContinuationCount.store(n + 1, std::memory_order_release);
  return kContinuationRunners[n];
}

namespace {

constexpr size_t kMaxBuiltinThunks = 512;  // Weft's libraries have about 200 built-ins
std::array<std::atomic<vm::NativeFn>, kMaxBuiltinThunks> gBuiltins{};
std::atomic<size_t> gBuiltinCount{0};
std::mutex gBuiltinMutex;

template <size_t I>
int builtinThunkMayGC(lua_State* L) {
  int n = lua_gettop(L);
  // acquire: pairs with the release store that published slot I.
  pushMayGC(L, Value::lightNative(gBuiltins[I].load(std::memory_order_acquire)));
  lua_insert(L, 1);
  lua_call(L, n, LUA_MULTRET);
  return lua_gettop(L);
}

template <size_t... I>
constexpr std::array<lua_CFunction, sizeof...(I)> makeBuiltinThunks(std::index_sequence<I...>) {
  return {&builtinThunkMayGC<I>...};
}
constexpr auto kBuiltinThunks = makeBuiltinThunks(std::make_index_sequence<kMaxBuiltinThunks>());

}  // namespace

lua_CFunction thunkForBuiltin(vm::NativeFn f) {
  std::lock_guard<std::mutex> lock(gBuiltinMutex);
  size_t n = gBuiltinCount.load(std::memory_order_relaxed);
  for (size_t i = 0; i < n; i++) {
    if (gBuiltins[i].load(std::memory_order_relaxed) == f) return kBuiltinThunks[i];
  }
  if (n == kMaxBuiltinThunks) return nullptr;
  gBuiltins[n].store(f, std::memory_order_release);
  gBuiltinCount.store(n + 1, std::memory_order_release);
  return kBuiltinThunks[n];
}

vm::NativeFn builtinOfThunk(lua_CFunction f) {
  // acquire: a slot below the count is published (thunkForBuiltin's release stores).
  size_t n = gBuiltinCount.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; i++) {
    if (kBuiltinThunks[i] == f) return gBuiltins[i].load(std::memory_order_relaxed);
  }
  return nullptr;
}

}  // namespace weft::capi

namespace {

// The CCall of the C function running on L, if L is running one (not inside a guard).
CCall* runningCall(lua_State* L) {
  CCall* c = tlsCCall;
  return c && c->thread == threadOf(L) && c->cx ? c : nullptr;
}

uint32_t callSlotMayGC(lua_State* L, int nargs) {
  vm::ThreadData* t = threadOf(L);
  if (nargs < 0 || uint32_t(nargs) + 1 > t->top - baseOf(t)) raiseMessageMayGC(L, "not enough elements in the stack");
  return t->top - uint32_t(nargs) - 1;
}

// Runs `body` (C code that may raise: a reader, a writer) with its raises caught here
// rather than unwinding past the caller's malloc'd buffer: returns the outcome (kOk when
// body returned; an error's value is in t->error). The guard is no C function: yields
// inside it are refused, and runningCall does not report it. Not inlined: setjmp stays
// in this frame, so what body writes into its caller's variables is read from memory.
template <class Body>
[[gnu::noinline]] vm::NativeResult catchRaises(lua_State* L, Body&& body) {
  CCall guard;
  guard.prev = tlsCCall;
  guard.thread = threadOf(L);
  guard.cx = nullptr;
  guard.outcome = vm::NativeResult{0, StatusCode::kOk};
  tlsCCall = &guard;
  if (setjmp(guard.jump) == 0) body();
  CCall* self = tlsCCall;  // re-read after a longjmp, as the trampoline does
  tlsCCall = self->prev;
  return self->outcome;
}

}  // namespace

vm::NativeResult weft::capi::raiseValueUnlockedMayGC(lua_State* L, const Value& v) {
  vm::State& S = stateOf(L);
  LibraryLock* held = releaseLibrary(S);
  Status st = vm::raiseValueMayGC(S, threadOf(L), v);
  reacquireLibrary(S, held);
  return vm::NativeResult{0, st.code()};
}

LUA_API int lua_error(lua_State* L) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  Value v = t->top > baseOf(t) ? t->stack[t->top - 1] : Value::nil();
  raiseStatus(L, raiseValueUnlockedMayGC(L, v));
}

LUA_API void lua_callk(lua_State* L, int nargs, int nresults, lua_KContext ctx, lua_KFunction k) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  vm::ThreadData* t = threadOf(L);
  uint32_t func = callSlotMayGC(L, nargs);
  CCall* c = runningCall(L);
  vm::NativeK nk = k && c ? nativeKFor(k) : nullptr;
  LibraryLock* held = releaseLibrary(S);
  Status st = nk ? vm::callKMayGC(S, t, func, nresults, nk, ctx) : vm::callMayGC(S, t, func, nresults);
  reacquireLibrary(S, held);
  if (st.code() == StatusCode::kYield) raiseStatus(L, vm::NativeResult{vm::kYieldedInCallee, StatusCode::kYield});
  if (!st.isOk()) raiseStatus(L, st);
}

LUA_API int lua_pcallk(lua_State* L, int nargs, int nresults, int errfunc, lua_KContext ctx, lua_KFunction k) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  vm::ThreadData* t = threadOf(L);
  uint32_t func = callSlotMayGC(L, nargs);
  uint32_t handler = errfunc == 0 ? 0 : slotOfMayGC(L, errfunc);
  CCall* c = runningCall(L);
  vm::NativeK nk = k && c ? nativeKFor(k) : nullptr;
  LibraryLock* held = releaseLibrary(S);
  Status st = nk ? vm::pcallKMayGC(S, t, func, nresults, handler, nk, ctx) : vm::pcallMayGC(S, t, func, nresults, handler);
  reacquireLibrary(S, held);
  if (st.code() == StatusCode::kYield) raiseStatus(L, vm::NativeResult{vm::kYieldedInCallee, StatusCode::kYield});
  if (st.code() == StatusCode::kFatal) raiseStatus(L, st);
  return luaStatusOf(st.code());
}

LUA_API int lua_yieldk(lua_State* L, int nresults, lua_KContext ctx, lua_KFunction k) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  if (t->inHook() && (t->frame().flags & vm::kFrameHook)) {
    // A C hook (its runHook frame): the yield happens once the hook returns (thread.h).
    // Refused as Lua refuses it: an error at the hooked function's position. A plain
    // buffer: the raise skips destructors.
    if (!t->rare->hookYieldable) {
      char msg[512];
      std::snprintf(msg, sizeof msg, "%s%s", vm::wherePrefix(t, 1).c_str(),
                    t->isMain || t->taskRoot ? "attempt to yield from outside a coroutine"
                                             : "attempt to yield across a C-call boundary");
      raiseMessageMayGC(L, msg);
    }
    if (nresults != 0) raiseMessageMayGC(L, "hooks cannot yield values");
    if (k) raiseMessageMayGC(L, "hooks cannot continue after yielding");
    t->rare->hookYieldRequested = true;
    return 0;
  }
  CCall* c = runningCall(L);
  if (!c) {
    bool guarded = tlsCCall && tlsCCall->thread == threadOf(L);  // a reader or writer
    raiseMessageMayGC(L, guarded ? "attempt to yield across a C-call boundary" : "attempt to yield from outside a coroutine");
  }
  vm::NativeK nk = k ? nativeKFor(k) : nullptr;
  vm::NativeResult r = nk ? c->cx->yieldK(nresults, ctx, nk) : c->cx->yield(nresults);
  raiseStatus(L, r);
}

// ---- Loading and dumping ----

namespace {

// Compiles the chunk and makes its closure; on failure `err` gets the message string.
// A separate function: its C++ locals are gone before the caller may raise.
Status compileChunk(vm::State& S, const char* bytes, size_t n, const char* chunkname, const char* mode, Value& fn,
                    vm::String*& err) {
  std::string message;
  Status st = vm::loadChunk(S, std::string_view(bytes, n), chunkname ? chunkname : "?", mode ? mode : "bt", fn, message);
  err = st.isOk() ? nullptr : vm::newString(S, message);
  return st;
}

// The chunk's bytes in a malloc'd buffer (*size of them): freed by the caller.
char* dumpChunk(const frontend::ProtoData& data, bool strip, size_t* size) {
  std::string bytes = frontend::dumpChunk(data, strip);
  char* copy = static_cast<char*>(std::malloc(bytes.size() ? bytes.size() : 1));
  if (copy) std::memcpy(copy, bytes.data(), bytes.size());
  *size = bytes.size();
  return copy;
}

}  // namespace

LUA_API int lua_load(lua_State* L, lua_Reader reader, void* data, const char* chunkname, const char* mode) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  // The reader is C code and may raise: caught here, as Lua loads in protected mode, so
  // the buffer (plain malloc, no destructor) is freed and the error is lua_load's result.
  size_t size = 0, cap = 0;
  char* buf = nullptr;
  bool noMemory = false;
  vm::NativeResult read = catchRaises(L, [&] {
    for (;;) {
      size_t n = 0;
      const char* piece = reader(L, data, &n);
      if (!piece || n == 0) return;
      if (size + n > cap) {
        size_t grown = cap ? cap * 2 : 4096;
        while (grown < size + n) grown *= 2;
        char* nb = static_cast<char*>(std::realloc(buf, grown));
        if (!nb) {
          noMemory = true;
          return;
        }
        buf = nb;
        cap = grown;
      }
      std::memcpy(buf + size, piece, n);
      size += n;
    }
  });
  if (noMemory || read.status != StatusCode::kOk) {
    std::free(buf);
    if (noMemory) raiseMemory(L);
    pushMayGC(L, threadOf(L)->error);
    return luaStatusOf(read.status);
  }
  Value fn;
  vm::String* err = nullptr;
  Status st = compileChunk(S, buf ? buf : "", size, chunkname, mode, fn, err);
  std::free(buf);
  if (!st.isOk()) {
    if (!err) raiseMemory(L);
    pushMayGC(L, Value::string(err));
    return luaStatusOf(st.code());
  }
  pushMayGC(L, fn);
  return LUA_OK;
}

LUA_API int lua_dump(lua_State* L, lua_Writer writer, void* data, int strip) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  Value f = t->stack[t->top - 1];
  if (!f.isLuaClosure() || !f.asLuaClosure()->proto->data) return 1;
  size_t size = 0;
  char* bytes = dumpChunk(*f.asLuaClosure()->proto->data, strip != 0, &size);
  if (!bytes) raiseMemory(L);
  // The writer is C code and may raise: caught, the bytes freed, and raised again (Lua's
  // lua_dump does not protect its writer).
  int status = 0;
  vm::NativeResult wrote = catchRaises(L, [&] { status = writer(L, bytes, size, data); });
  std::free(bytes);
  if (wrote.status != StatusCode::kOk) raiseStatus(L, wrote);
  return status;
}
