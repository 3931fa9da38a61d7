// Strings whose bytes C holds (lua_tolstring, lua_pushstring, ...): pinned in the heap
// (gc::Heap::pin) so that no collection moves them, from the moment C gets the pointer
// until the stack slot that holds the string is popped (lua_settop) or the C function
// that asked returns (enterCMayGC): Lua's rule that the pointer is valid while the value is on
// the stack. A pin without a slot (a pseudo-index) lasts until the C function returns.
#include <algorithm>

#include "runtime/capi/internal.h"

namespace weft::capi {

namespace {

// The pins of one State, by thread: every access holds CApiState::pinsMutex. A vector
// per State: threads with pins are few, and each entry names its thread.
bool samePin(const CApiState::Pin& p, vm::ThreadData* t, uint32_t slot, gc::Object* o) {
  return p.thread == t && p.slot == slot && p.object == o;
}

}  // namespace

// World stopped: no mutator is inside pinnedBytes or unpinFrom (neither has a safepoint).
void CApiState::traceRoots(gc::Visitor& visitor) {
  for (Pin& p : pins) visitor.visit(p.object);
}

const char* pinnedBytes(lua_State* L, uint32_t slot, vm::String* s) {
  vm::State& S = stateOf(L);
  CApiState& c = capiOf(S);
  vm::ThreadData* t = threadOf(L);
  gc::Object* o = vm::asGc(s);
  {
    std::lock_guard<std::mutex> lock(c.pinsMutex);
    for (auto it = c.pins.rbegin(); it != c.pins.rend() && it - c.pins.rbegin() < 8; ++it) {
      if (samePin(*it, t, slot, o)) return s->data;
    }
    c.pins.push_back(CApiState::Pin{t, slot, o});
    c.pinCount.store(c.pins.size(), std::memory_order_relaxed);
  }
  S.heap().pin(o);
  return s->data;
}

void unpinFrom(vm::ThreadData* t, uint32_t from) {
  vm::State& S = *t->state;
  if (!S.capi) return;
  CApiState& c = capiOf(S);
  if (c.pinCount.load(std::memory_order_relaxed) == 0) return;  // every C call ends here
  std::lock_guard<std::mutex> lock(c.pinsMutex);
  auto keep = std::stable_partition(c.pins.begin(), c.pins.end(),
                                    [&](const CApiState::Pin& p) { return p.thread != t || p.slot < from; });
  for (auto it = keep; it != c.pins.end(); ++it) S.heap().unpin(it->object);
  c.pins.erase(keep, c.pins.end());
  c.pinCount.store(c.pins.size(), std::memory_order_relaxed);
}

}  // namespace weft::capi
