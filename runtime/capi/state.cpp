// States and threads of the C API: lua_newstate and lua_close, threads and coroutines
// (lua_newthread, lua_resume, lua_yieldk, lua_status, lua_closethread), the panic and
// warning functions, lua_gc and lua_version.
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <new>

#include "runtime/capi/internal.h"
#include "runtime/capi/lock.h"
#include "vm/host.h"
#include "vm/lib/libs.h"
#include "vm/proto.h"
#include "vm/string.h"

using namespace weft;
using namespace weft::capi;

const char lua_ident[] = "$LuaVersion: " LUA_RELEASE " $";

namespace weft::capi {

namespace {

// A warning for the State's warn function (lua_setwarnf), as the VM's hook.
void warnThroughC(vm::State& S, std::string_view message, bool toContinue) {
  CApiState& c = capiOf(S);
  if (!c.warnf) return;
  std::string m(message);
  c.warnf(c.warnUd, m.c_str(), toContinue ? 1 : 0);
}

// The stress and verification modes a C host asks for through the environment, as the
// weft CLI's --gc-stress and --gc-verify do.
void readGcEnvironment(vm::StateOptions& options) {
  if (const char* s = std::getenv("WEFT_GC_STRESS")) {
    if (std::strcmp(s, "relocate") == 0) options.gc.stress = gc::StressMode::kRelocate;
    else if (std::strcmp(s, "collect") == 0 || std::strcmp(s, "1") == 0) options.gc.stress = gc::StressMode::kCollect;
  }
  if (const char* v = std::getenv("WEFT_GC_VERIFY")) options.gc.verify = std::strcmp(v, "1") == 0;
}

// lua_getallocf's allocator for a State the C API did not create (the CLI's, a C++
// host's): modules allocate their own memory through it (lpeg's compiled patterns).
void* defaultAlloc(void*, void* ptr, size_t, size_t nsize) {
  if (nsize == 0) {
    std::free(ptr);
    return nullptr;
  }
  return std::realloc(ptr, nsize);
}

}  // namespace

CApiState& capiOf(vm::State& S) { return *static_cast<CApiState*>(S.capi); }

const char* internName(CApiState& c, std::string_view name) {
  std::lock_guard<std::mutex> lock(c.namesMutex);
  return c.names.emplace(name).first->c_str();
}

int luaStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return LUA_OK;
    case StatusCode::kYield: return LUA_YIELD;
    case StatusCode::kSyntaxError: return LUA_ERRSYNTAX;
    case StatusCode::kMemoryError: return LUA_ERRMEM;
    case StatusCode::kErrorInHandler: return LUA_ERRERR;
    default: return LUA_ERRRUN;
  }
}

namespace {

// The native of every light C function value (State::callLightC).
vm::NativeResult runLightCMayGC(vm::CallContext& cx) {
  return enterCMayGC(cx, reinterpret_cast<lua_CFunction>(cx.callee().u.p), nullptr, 0, 0);
}

// Makes `state` run C functions and gives its main thread a reserved slot 0.
void prepareState(vm::State& state) {
  state.heap().addRootSource(&capiOf(state));
  state.callLightC = runLightCMayGC;
  vm::ThreadData* main = state.mainThread->data;
  if (main->top == 0) {  // slot 0 of the main thread stays reserved (vm/host.cpp)
    main->stack[0] = vm::Value::nil();
    main->top = 1;
  }
}

}  // namespace

bool attachCApi(vm::State& state) {
  if (state.capi) return true;
  auto* c = new (std::nothrow) CApiState();
  if (!c) return false;
  c->state = &state;
  c->alloc = defaultAlloc;
  state.capi = c;
  state.capiRelease = [](vm::State& S) {
    auto* record = static_cast<CApiState*>(S.capi);
    S.heap().removeRootSource(record);
    S.capi = nullptr;
    delete record;
  };
  prepareState(state);
  return true;
}

}  // namespace weft::capi

// ---- States ----

LUA_API lua_State* lua_newstate(lua_Alloc f, void* ud) {
  // The allocator gives the C API's own record of the State and every chunk of the
  // collector's heap (docs/design/c-api.md); it gets them back at lua_close.
  void* block = f ? f(ud, nullptr, LUA_TTHREAD, sizeof(CApiState)) : nullptr;
  if (f && !block) return nullptr;
  vm::StateOptions options;
  readGcEnvironment(options);
  options.gc.chunkSource = gc::ChunkSource{f, ud};
  auto* S = new (std::nothrow) vm::State(options);
  if (!S || !S->initStatus().isOk()) {
    delete S;
    if (block) f(ud, block, sizeof(CApiState), 0);
    return nullptr;
  }
  auto* c = block ? new (block) CApiState() : new (std::nothrow) CApiState();
  if (!c) {
    delete S;
    return nullptr;
  }
  S->capi = c;
  c->state = S;
  c->ownsState = true;
  S->hostLevel = false;
  S->setGcMode(false);  // lua_newstate's collector starts incremental (lua.c switches)
  c->alloc = f;
  c->allocUd = ud;
  vm::currentThread(*S);
  prepareState(*S);
  return luaStateOf(S->mainThread->data);
}

LUA_API void lua_close(lua_State* L) {
  vm::State& S = stateOf(L);
  CApiState& c = capiOf(S);
  vm::HostStack(S).closeMayGC();
  if (!c.ownsState) return;
  S.heap().removeRootSource(&c);
  lua_Alloc f = c.alloc;
  void* ud = c.allocUd;
  S.capi = nullptr;
  delete &S;
  if (f) {
    c.~CApiState();
    f(ud, &c, sizeof(CApiState), 0);
  } else {
    delete &c;
  }
}

LUA_API lua_CFunction lua_atpanic(lua_State* L, lua_CFunction panicf) {
  CApiState& c = capiOf(L);
  lua_CFunction old = c.panic;
  c.panic = panicf;
  return old;
}

LUA_API lua_Number lua_version(lua_State*) { return LUA_VERSION_NUM; }

LUA_API lua_Alloc lua_getallocf(lua_State* L, void** ud) {
  CApiState& c = capiOf(L);
  if (ud) *ud = c.allocUd;
  return c.alloc;
}

LUA_API void lua_setallocf(lua_State* L, lua_Alloc f, void* ud) {
  API_ENTRY(L);
  CApiState& c = capiOf(L);
  c.alloc = f;
  c.allocUd = ud;
  // The heap of a State lua_newstate made takes new chunks from it too; a host's own
  // State (the CLI's, a C++ host's) keeps mapping them: its workers may run in parallel,
  // and C allocators are written for one thread.
  if (c.ownsState) stateOf(L).heap().setChunkSource(gc::ChunkSource{f, ud});
}

LUA_API void lua_setwarnf(lua_State* L, lua_WarnFunction f, void* ud) {
  API_ENTRY(L);
  CApiState& c = capiOf(L);
  c.warnf = f;
  c.warnUd = ud;
  c.warnfSet = true;
  stateOf(L).warnHook = warnThroughC;
}

LUA_API void lua_warning(lua_State* L, const char* msg, int tocont) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  if (S.warnHook) {
    S.warnHook(S, msg, tocont != 0);
    return;
  }
  std::string_view m(msg);
  if (!S.warningContinues && !tocont && !m.empty() && m[0] == '@') {
    if (m == "@on") S.warningsOn = true;
    else if (m == "@off") S.warningsOn = false;
    return;
  }
  vm::emitWarning(S, m, tocont != 0);
}

// ---- Threads ----

LUA_API lua_State* lua_newthread(lua_State* L) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  vm::Thread* th = vm::newThread(S);
  if (!th) raiseMemory(L);
  th->data->escaped = true;  // C holds it: never recycled
  pushMayGC(L, vm::Value::thread(th));
  return luaStateOf(th->data);
}

LUA_API int lua_pushthread(lua_State* L) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  t->escaped = true;
  pushMayGC(L, vm::Value::thread(t->self));
  return t->isMain ? 1 : 0;
}

LUA_API lua_State* lua_tothread(lua_State* L, int idx) {
  API_ENTRY(L);
  vm::Value v = valueAt(L, idx);
  if (!v.isThread()) return nullptr;
  vm::ThreadData* t = v.asThread()->data;
  t->escaped = true;
  return luaStateOf(t);
}

LUA_API int lua_status(lua_State* L) {
  vm::ThreadData* t = threadOf(L);
  if (t->failed) return LUA_ERRRUN;
  if (t->status.load() == vm::ThreadStatus::Suspended && t->frameCount > 0) return LUA_YIELD;
  return LUA_OK;
}

LUA_API int lua_isyieldable(lua_State* L) {
  vm::ThreadData* t = threadOf(L);
  return !t->isMain && !t->taskRoot && t->nny == 0;
}

LUA_API int lua_resume(lua_State* L, lua_State* from, int narg, int* nres) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  vm::ThreadData* co = threadOf(L);
  vm::ThreadData* fr = from ? threadOf(from) : vm::currentThread(S);
  if (fr == co) fr = S.mainThread->data;
  uint32_t n = uint32_t(narg);
  // A first resume runs the function below the arguments; the VM wants it at slot 0.
  if (co->frameCount == 0 && co->top > n + 1) {
    uint32_t start = co->top - n - 1;
    for (uint32_t j = 0; j <= n; j++) co->stack[j] = co->stack[start + j];
    co->top = n + 1;
  }
  // resumeMayGC takes the arguments from the resumer's stack and leaves the results
  // there; lua_resume's caller finds both on the coroutine's.
  if (!vm::ensureStackSlots(fr, uint64_t(fr->top) + n + vm::kMinCStack)) {
    *nres = 0;
    lua_pushliteral(L, "stack overflow");
    return LUA_ERRRUN;
  }
  for (uint32_t j = 0; j < n; j++) fr->stack[fr->top + j] = co->stack[co->top - n + j];
  fr->top += n;
  co->top -= n;
  uint32_t count = 0;
  const char* resumeError = nullptr;
  Status st = vm::resumeMayGC(S, fr, co, n, count, resumeError);
  if (resumeError) {
    fr->top -= std::min(fr->top, n);
    *nres = 0;
    pushMayGC(L, vm::Value::string(vm::newString(S, resumeError)));
    return LUA_ERRRUN;
  }
  if (st.isError()) {
    *nres = 0;
    vm::normaliseErrorValue(S, co, st);
    pushMayGC(L, co->error);
    return luaStatusOf(st.code());
  }
  if (!vm::ensureStackSlots(co, uint64_t(co->top) + count + vm::kMinCStack)) raiseMessageMayGC(from ? from : L, "stack overflow");
  for (uint32_t j = 0; j < count; j++) co->stack[co->top + j] = fr->stack[fr->top - count + j];
  co->top += count;
  fr->top -= count;
  *nres = int(count);
  return luaStatusOf(st.code());
}

LUA_API int lua_closethread(lua_State* L, lua_State* from) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  vm::ThreadData* co = threadOf(L);
  Status st = vm::closeCoroutineMayGC(S, co);
  co->frameCount = 0;
  co->top = 0;
  if (st.isError()) {
    vm::normaliseErrorValue(S, co, st);
    pushMayGC(L, co->error);
    return luaStatusOf(st.code());
  }
  return LUA_OK;
}

LUA_API int lua_resetthread(lua_State* L) { return lua_closethread(L, nullptr); }

// ---- The collector ----

LUA_API int lua_gc(lua_State* L, int what, ...) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  gc::Heap& heap = S.heap();
  va_list ap;
  va_start(ap, what);
  int result = 0;
  switch (what) {
    case LUA_GCSTOP: heap.setAutomatic(false); break;
    case LUA_GCRESTART: heap.setAutomatic(true); break;
    case LUA_GCCOLLECT: (void)vm::fullCollectMayGC(S, threadOf(L)); break;
    case LUA_GCSTEP: {
      bool cycleEnded = false;
      (void)vm::gcStepMayGC(S, threadOf(L), va_arg(ap, int), cycleEnded);
      result = cycleEnded ? 1 : 0;
      break;
    }
    case LUA_GCCOUNT: result = int(heap.bytesInUse(S.mutator()) >> 10); break;
    case LUA_GCCOUNTB: result = int(heap.bytesInUse(S.mutator()) & 0x3ff); break;
    case LUA_GCSETPAUSE:
    case LUA_GCSETSTEPMUL: {
      int value = va_arg(ap, int);
      int64_t& param = what == LUA_GCSETPAUSE ? S.gcPauseQuarters : S.gcStepMulQuarters;
      result = int(param * 4);
      param = value / 4;
      break;
    }
    case LUA_GCISRUNNING: result = heap.automatic() ? 1 : 0; break;
    case LUA_GCGEN:
    case LUA_GCINC: {
      int a = va_arg(ap, int);
      int b = va_arg(ap, int);
      if (what == LUA_GCINC) {
        (void)va_arg(ap, int);
        if (a != 0) S.gcPauseQuarters = a / 4;
        if (b != 0) S.gcStepMulQuarters = b / 4;
      }
      result = S.gcGenerational ? LUA_GCGEN : LUA_GCINC;
      S.setGcMode(what == LUA_GCGEN);
      break;
    }
    default: result = -1;
  }
  va_end(ap);
  return result;
}
