// Shared internals of the lua_* implementation (runtime/capi/*.cpp); not for other
// helpers (they use capi.h and the public API). docs/design/c-api.md explains the design.
//
// Protocol:
//  - Every C function runs under a trampoline (enterCMayGC, call.cpp): a CCall record on the
//    calling OS thread's chain holds the jmp_buf that lua_error and every failing lua_*
//    function leave by (raiseStatus), with the outcome (an error or a yield) for the
//    trampoline to return to the VM. Between setjmp and the C call the trampoline owns
//    nothing with a destructor, and so does every lua_* function where it may raise.
//  - The stack of a lua_State is its ThreadData's: indices count from baseOf(t), the
//    first slot of the running C function (or of the thread's bottom level).
//  - Values are read into locals only between safepoints; anything kept across a call
//    into Lua lives on the stack.
#pragma once

#include <atomic>
#include <csetjmp>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/capi/capi.h"
#include "vm/api.h"
#include "vm/interp.h"
#include "vm/object.h"

namespace weft::capi {

// The per-State data of the C API (vm::State::capi). A root source: the pinned strings'
// entries are traced (and updated should a collection ever move one).
struct CApiState : gc::RootSource {
  void traceRoots(gc::Visitor& visitor) override;
  vm::State* state = nullptr;
  bool ownsState = false;  // made by lua_newstate: lua_close deletes it
  lua_Alloc alloc = nullptr;
  void* allocUd = nullptr;
  lua_CFunction panic = nullptr;
  lua_WarnFunction warnf = nullptr;
  void* warnUd = nullptr;
  bool warnfSet = false;  // lua_setwarnf was called (even with NULL: no warnings)
  // Names handed to C by lua_getinfo/lua_getlocal that have no stable storage of their
  // own: interned here for the State's life (node-based: addresses never change).
  std::mutex namesMutex;
  std::unordered_set<std::string> names;
  // Strings pinned for C (lua_tolstring and friends): the object and the thread and
  // slot that made it visible; unpinned when that slot is popped or the C function
  // that asked returns (pins.cpp).
  struct Pin {
    vm::ThreadData* thread;
    uint32_t slot;
    gc::Object* object;
  };
  std::mutex pinsMutex;
  std::vector<Pin> pins;
  // pins.size(), written under pinsMutex. A thread reads it unlocked to skip the lock when
  // nothing is pinned: its own pins, the only ones it unpins, it wrote itself.
  std::atomic<size_t> pinCount{0};
};

CApiState& capiOf(vm::State& S);
inline CApiState& capiOf(lua_State* L) { return capiOf(stateOf(L)); }
const char* internName(CApiState& c, std::string_view name);

// A running C function's trampoline record (call.cpp).
struct CCall {
  std::jmp_buf jump;
  CCall* prev;
  vm::ThreadData* thread;
  vm::CallContext* cx;  // nullptr: a guard of lua_load/lua_dump around C code, no C function
  vm::NativeResult outcome;
};
// The innermost C call on this OS thread.
extern thread_local constinit CCall* tlsCCall;

// First stack slot of the running C function of `t` (index 1), or of its bottom level.
inline uint32_t baseOf(const vm::ThreadData* t) {
  if (t->frameCount == 0) return t->isMain ? 1 : 0;
  return t->frames[t->frameCount - 1].func + 1;
}

// Leaves the running C function of L with `st` (an error whose value is in t->error, or
// a yield); without a C function to leave, the panic function runs and the process aborts.
[[noreturn]] void raiseStatus(lua_State* L, vm::NativeResult outcome);
[[noreturn]] inline void raiseStatus(lua_State* L, Status st) { raiseStatus(L, vm::NativeResult{0, st.code()}); }
// Raises v as a Lua error: the message handler runs (lock.h) with the C library's lock
// released, as any call back into Lua does, since the handler may be a C function of
// the same library (the C++ API's traceback handler is); the outcome for raiseStatus.
vm::NativeResult raiseValueUnlockedMayGC(lua_State* L, const vm::Value& v);
// Raises a Lua error with a message (no position), as the API's own errors are.
[[noreturn]] void raiseMessageMayGC(lua_State* L, const char* message);
[[noreturn]] void raiseMemory(lua_State* L);

// Index resolution. A pseudo-index (registry, upvalue) has no slot.
bool isPseudo(int idx);
// The slot of a valid stack index (positive or negative); raises on an invalid one.
uint32_t slotOfMayGC(lua_State* L, int idx);
// The value at any acceptable index (nil for "none" past the top).
vm::Value valueAt(lua_State* L, int idx);
// Stores into any valid index, pseudo-indices included.
void setValueAtMayGC(lua_State* L, int idx, const vm::Value& v);
// Pushes, growing the stack (raises "stack overflow" past the limit).
void pushMayGC(lua_State* L, const vm::Value& v);

// Pins the string at stack slot `slot` of L for C and returns its bytes (pins.cpp).
const char* pinnedBytes(lua_State* L, uint32_t slot, vm::String* s);
// Unpins what was pinned for slots at or above `from` of `t`.
void unpinFrom(vm::ThreadData* t, uint32_t from);

// Runs a C function (or a continuation: f null, k set) as the native of cx (call.cpp).
vm::NativeResult enterCMayGC(vm::CallContext& cx, lua_CFunction f, lua_KFunction k, int status, lua_KContext ctx);
// The NativeK that runs the C continuation `k` (nullptr when too many distinct
// continuations exist: the call is then not yieldable).
vm::NativeK nativeKFor(lua_KFunction k);
// lua_tocfunction of a built-in (Tag::LightNative, no lua_CFunction): a thunk that calls
// it with the thunk's arguments, one per distinct built-in (nullptr past the table);
// builtinOfThunk is the built-in of such a thunk (nullptr for any other function), so
// lua_pushcfunction of a thunk pushes the built-in itself and the round trip is equal.
lua_CFunction thunkForBuiltin(vm::NativeFn f);
vm::NativeFn builtinOfThunk(lua_CFunction f);

// lua_Debug.i_ci holds 1 + the frame index it describes.
inline struct CallInfo* frameToken(uint32_t frameIdx) {
  return reinterpret_cast<struct CallInfo*>(uintptr_t(frameIdx) + 1);
}
inline int frameOfToken(const lua_Debug* ar) { return int(reinterpret_cast<uintptr_t>(ar->i_ci)) - 1; }

// Lua's status code of a VM status.
int luaStatusOf(StatusCode code);

}  // namespace weft::capi
