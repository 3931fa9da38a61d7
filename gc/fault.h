// Fault injection: make the n-th occurrence of a named transition fail, so every
// fail-closed path (DEVELOPERS.md invariant 5) can be driven by a test or from the
// command line.
//
// Protocol: the spec is "site[:n][,site[:n]]..." (n is 1-based, default 1): the n-th
// call of hit(site) returns true, every other call false. Sites are free strings; the
// collector's are "gc.register", "gc.attach", "gc.epoch-ack", "gc.deadline",
// "gc.verify", "gc.promote" (a minor collection cannot get a chunk to promote into),
// "gc.marker" (one of a major's markers fails: the collection fails closed, marker.cpp),
// "gc.remember" (a write barrier's append to its mutator's remembered buffer fails: the
// heap breaks at once, and the next safepoint fails closed) and
// "gc.barrier-drop" (a write barrier records nothing: the negative test of verify's
// remembered-set check) and "gc.pin-drop" (a collection forgets one pin: the negative
// test of verify's pinned-object check) and "gc.line-drop" (a major's sweep leaves a
// line that holds an object unmarked: the negative test of verify's line check) and
// "gc.finalizable-misfile" (a finalizable registration goes on the old list, which a
// minor does not walk: the negative test of verify's check of invariant 13) and
// "gc.index-drop" (a chunk joins current space without entering the chunk index: the
// negative test of verify's check of the index) and "gc.card-drop" (a table store
// leaves its array card clean: the negative test of verify's card check, vm/table.cpp) and
// "gc.mark-barrier-drop" (a store while an incremental major marks skips the barrier's
// marking half: the negative test of verify's tricolour check) and "gc.slice" (an
// incremental major fails to start: the heap fails closed) and "gc.carry-drop" (an
// ageing minor forgets an old object that refers to a survivor: the negative test of
// verify's remembered-set check after a collection); the
// runtime adds its own ("rt.attach"; "rt.channel-dirty-drop": a channel's buffer is
// written without joining the dirty list, the negative test of verify's check of what
// a minor skips), and the JIT "jit.reload-skip" (the n-th compiled code skips one
// reload of a heap reference after a safepoint: the negative test of relocation
// stress's stale-reference trap, jit/stale_reload.h) and "jit.compile-slow" (the n-th
// compilation takes 30 s longer: the CLI's exit does not wait for it). The spec comes from configure(), or at the
// first hit() from the environment variable WEFT_FAULT when configure() was never
// called. Every function is thread-safe; when nothing is configured hit() costs one
// relaxed atomic load.
#pragma once

#include <atomic>
#include <string>
#include <string_view>

namespace weft::gc::fault {

namespace detail {
// 0: not read yet, 1: nothing configured, 2: something is (fault.cpp). Any thread;
// relaxed: it only chooses between the free path and the locked one.
extern std::atomic<int> gMode;
bool hitSlow(const char* site);
}  // namespace detail

// Replaces the spec and resets every occurrence count; an empty spec injects nothing.
void configure(std::string_view spec);
// Counts one occurrence of `site`; true if this occurrence is configured to fail.
// Inline, as the runtime asks on every dispatch and publication.
inline bool hit(const char* site) {
  if (detail::gMode.load(std::memory_order_relaxed) == 1) [[likely]] return false;
  return detail::hitSlow(site);
}
// The spec in effect ("" when none), for messages and test diagnostics.
std::string describe();

}  // namespace weft::gc::fault
