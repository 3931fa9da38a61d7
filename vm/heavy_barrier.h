// The heavy side of an asymmetric memory barrier (docs/design/shared-tables.md).
//
// Protocol: a thread that stores and then loads with only a compiler fence between
// (the light side, e.g. tableWriteHeld) may have its load pass its store in the
// processor. A thread that calls heavyBarrier after a store of its own is guaranteed,
// once the call returns, that every other thread of the process either has its earlier
// stores visible here, or will see this thread's store in its later loads: every other
// thread executed a full fence at some point during the call. This moves the cost of
// a store-load fence from every light-side store to the rare heavy-side event.
//
// Linux membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) interrupts each processor that runs
// a thread of this process (a thread not running was fenced by its context switch).
// Where that command is unavailable, changing the protection of a private page that
// every thread may have cached in its TLB forces a shootdown with the same effect on
// x86-64 (the only target that runs tasks: value.h's slotAccessIsAtomic).
#pragma once

namespace weft::vm {

// Never fails: falls back as the file comment says. Takes microseconds (a system call and
// inter-processor interrupts), so only rare events call it.
void heavyBarrier();

// For tests: whether the membarrier command is in use, and the page-protection fallback
// run directly.
bool heavyBarrierUsesMembarrier();
void heavyBarrierByPageProtection();

}  // namespace weft::vm
