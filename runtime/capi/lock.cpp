// Library locks and detached C code (lock.h; docs/design/c-api.md, "Threads").
#include "runtime/capi/lock.h"

#include <dlfcn.h>

#include <mutex>
#include <unordered_map>

#include "runtime/capi/capi.h"
#include "vm/api.h"

namespace weft::capi {

struct LibraryLock {
  std::mutex mutex;
};

thread_local constinit bool tlsDetachedForC = false;

namespace {

// The lock the innermost C function on this OS thread holds (nullptr: none).
thread_local LibraryLock* tlsHeld = nullptr;

// Locks by library base address; never freed (a library, once loaded, may be called
// again until the process ends, and a lock is a few bytes). The maps are never destroyed
// either, so no thread still running at exit finds them gone, and the locks stay
// reachable (not leaks) for LeakSanitizer.
std::mutex gLocksMutex;
auto& gLocksByCode = *new std::unordered_map<const void*, LibraryLock*>();     // function -> lock
auto& gLocksByLibrary = *new std::unordered_map<const void*, LibraryLock*>();  // library base -> lock

LibraryLock* lockFor(const void* code) {
  std::lock_guard<std::mutex> guard(gLocksMutex);
  auto it = gLocksByCode.find(code);
  if (it != gLocksByCode.end()) return it->second;
  Dl_info info{};
  const void* base = dladdr(code, &info) && info.dli_fbase ? info.dli_fbase : nullptr;
  LibraryLock*& lock = gLocksByLibrary[base];
  if (!lock) lock = new LibraryLock();
  gLocksByCode[code] = lock;
  return lock;
}

void acquire(vm::State& S, LibraryLock* lock) {
  if (lock->mutex.try_lock()) return;
  // Another worker runs this library: wait as for the operating system, handing the
  // worker on, so the wait delays neither other tasks nor a collection.
  vm::enterOsWait(S, vm::OsWait::kLong);
  lock->mutex.lock();
  (void)vm::leaveOsWait(S, vm::OsWait::kLong);
}

bool parallel(vm::State& S) { return S.osWaitEnter && S.tablesShared.load(std::memory_order_relaxed); }

}  // namespace

LibraryLock* enterLibrary(vm::State& S, void* code) {
  if (!parallel(S)) {
    tlsHeld = nullptr;
    tlsDetachedForC = false;
    return nullptr;
  }
  LibraryLock* lock = lockFor(code);
  acquire(S, lock);
  tlsHeld = lock;
  vm::enterOsWait(S, vm::OsWait::kShort);
  tlsDetachedForC = true;
  return lock;
}

void leaveLibrary(vm::State& S, LibraryLock* lock) {
  if (!lock) return;
  if (tlsDetachedForC) (void)vm::leaveOsWait(S, vm::OsWait::kShort);
  lock->mutex.unlock();
  // The enclosing C function's state (if any) is restored by its own trampoline's
  // bookkeeping: it was running Lua (attached, lock released) when this one started.
  tlsHeld = nullptr;
  tlsDetachedForC = false;
}

LibraryLock* releaseLibrary(vm::State&) {
  LibraryLock* held = tlsHeld;
  if (held) held->mutex.unlock();
  tlsHeld = nullptr;
  return held;
}

void reacquireLibrary(vm::State& S, LibraryLock* lock) {
  if (!lock) return;
  acquire(S, lock);
  tlsHeld = lock;
}

ApiToken apiEnter(lua_State* L) {
  vm::State& S = stateOf(L);
  (void)vm::leaveOsWait(S, vm::OsWait::kShort);
  tlsDetachedForC = false;
  return ApiToken{&S};
}

void apiLeave(ApiToken* token) {
  if (!token->detachAgain) return;
  vm::enterOsWait(*token->detachAgain, vm::OsWait::kShort);
  tlsDetachedForC = true;
}

}  // namespace weft::capi
