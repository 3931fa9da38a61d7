// Which pass visits a root source (docs/design/gc-v2.md): the collector's minor or major
// collection, or anything else (verification, which must see every reference and change
// nothing). A RootSource may skip, in a minor pass, the references it knows to be old:
// held since before the last collection and not written since (the runtime's parked
// task records). Kept out of heap.h: only such root sources need it.
#pragma once

#include <cstdint>

namespace weft::gc {

class Visitor;

enum class Pass : uint8_t {
  kCheck,  // verification or any other visitor: visit everything, keep every mark
  kMinor,  // a minor collection: old references may be skipped, then marks are dropped
  kMajor,  // a major collection: visit everything, then drop the marks
};

Pass passOf(const Visitor& visitor);

// In a check pass, a root source says which of the references it visits next a minor
// would skip (true) or trace (false); the verifier reports a young one among the
// skipped (a write into a record that was not noted: heap.h invariant 10). Any other
// visitor ignores it. A root source that says true says false before it returns.
void setSkippedByMinor(Visitor& visitor, bool skipped);

// While an incremental major marks, in a check pass: whether the references visited
// next belong to a root the cycle traced and that was not written since (heap.h
// RootSource::finishCycle); the verifier reports an old one that is not marked (the
// tricolour rule, heap.h invariant 15). The same protocol as setSkippedByMinor.
void setTracedByCycle(Visitor& visitor, bool traced);

}  // namespace weft::gc
