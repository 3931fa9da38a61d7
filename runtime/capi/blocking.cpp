// weft_blockingk (include/weft/lua/lweft.h): a C function's blocking work on the
// runtime's blocking pool (docs/design/blocking-pool.md), its continuation a C one.
//
// The work becomes a vm::BlockingJob whose finish runs the C continuation through the
// trampoline (nativeKFor's NativeK), exactly as lua_yieldk's continuation runs after a
// resume; runBlockingMayGC decides whether the task suspends or the work runs here.
#include <memory>

#include "lweft.h"
#include "runtime/capi/internal.h"
#include "runtime/capi/lock.h"

using namespace weft;
using namespace weft::capi;

namespace {

struct CWork final : vm::BlockingJob {
  CWork(weft_Work w, void* u, vm::NativeK k, lua_KContext c) : work(w), ud(u), next(k), ctx(c) {}
  void run() override { work(ud); }
  vm::NativeResult finishMayGC(vm::CallContext& cx) override { return next(cx, StatusCode::kYield, ctx); }
  weft_Work work;
  void* ud;
  vm::NativeK next;
  lua_KContext ctx;
};

}  // namespace

LUA_API int weft_blockingk(lua_State* L, weft_Work work, void* ud, lua_KContext ctx, lua_KFunction k) {
  API_ENTRY(L);
  CCall* c = tlsCCall;
  if (!c || c->thread != threadOf(L) || !c->cx) raiseMessageMayGC(L, "weft_blockingk outside a C function called by Lua");
  if (!work || !k) raiseMessageMayGC(L, "weft_blockingk needs work and a continuation");
  vm::NativeK next = nativeKFor(k);
  if (!next) raiseMessageMayGC(L, "weft_blockingk: too many distinct continuations");
  // The library's lock is released meanwhile, as around lua_callk: the work may take a
  // while, and where it runs here the continuation's trampoline takes the lock again.
  vm::State& S = stateOf(L);
  LibraryLock* held = releaseLibrary(S);
  vm::NativeResult r = vm::runBlockingMayGC(*c->cx, std::make_shared<CWork>(work, ud, next, ctx));
  reacquireLibrary(S, held);
  raiseStatus(L, r);
}
