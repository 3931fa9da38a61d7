// The loops of a prototype's bytecode as the JIT tier sees them (vm/jit.cpp: cold
// loops; vm/jit_loops.cpp: short loops), found from the back-edges alone: a FORLOOP, a
// TFORLOOP or a backward JMP (a while, a repeat, a goto) closes the loop from its
// target, the header, to itself, the latch. And the VM's coarse test of what is worth
// compiling, which follows them (docs/design/jit.md, "Guards and exits").
#pragma once

#include <cstdint>

#include "vm/object.h"

namespace weft::vm {

// The header of the loop whose back-edge is instruction `latch`, or -1.
int64_t loopHeaderOf(const Proto* p, uint32_t latch);
// The last back-edge to `header` (a loop's latch).
uint32_t loopLatch(const Proto* p, uint32_t header);
// The number of instructions of the loop at `header` that the interpreter profiles and
// whose feedback is still empty.
uint32_t unseenInLoop(const Proto* p, uint32_t header);

// Whether the loop from `header` to its back-edge `latch` may go round without leaving
// compiled code (the coarse test: a superset of the compiler's).
bool loopMayIterate(const Proto* p, uint32_t header, uint32_t latch);
// Whether some loop of p may.
bool mayIterate(const Proto* p);
// Whether the loop at `header` or one nested in it may: code for it would run more than
// a round before leaving.
bool loopNestMayIterate(const Proto* p, uint32_t header);
// Whether the compiler could enter p's code anywhere: a loop that may go round compiled,
// or a start from which a return may be reached; a prototype with neither is rejected
// without loading LLVM.
bool worthCompiling(const Proto* p);
// Whether only compiled calls would enter p's code (no loop may go round in it, and it
// makes no call the compiler could).
bool onlyForCalls(const Proto* p);
struct ThreadData;
// Whether p, without loops, came to the threshold in t's top frame, one its code would
// not be entered at the start of (a metamethod's, but one arithCallerHasCode; a
// native's callback).
bool calledUnentered(const Proto* p, ThreadData* t);
// Whether t's top frame is a metamethod's that an arithmetic instruction of a function
// with code (queued or ready) called.
bool arithCallerHasCode(const ThreadData* t);

// The outermost loop around instruction `pc` (inside a loop) of a frame of p whose
// registers start at `base`, and the rounds it has left when it is a numeric for (its
// count, or its limit and step: the frame's registers as FORPREP and FORLOOP keep them);
// `known` is false for a generic for, a while or a repeat, whose rounds no register
// says.
struct LoopLeft {
  uint32_t header = 0;
  int64_t rounds = 0;
  bool known = false;
};
LoopLeft outermostLoopLeft(const Proto* p, uint32_t pc, const Value* base);

// Whether a loop of a main chunk run once, with `leftMs` left by its window's pace, is
// worth queueing the chunk for when its code would be ready in `waitMs`: the loop must
// have about twice the wait left.
bool loopOutlastsCode(double leftMs, double waitMs);

// What a window that measured `leftMs` left, the `windows`-th on its loop, says of a
// loop whose code would be ready in `waitMs`: it ends too soon (left to the
// interpreter), another window measures it (each must find it long: a window's pace is
// that of its slowest rounds), or its chunk is queued.
enum class LoopVerdict : uint8_t { kShort, kMeasureAgain, kQueue };
LoopVerdict judgeLoopWindow(double leftMs, double waitMs, uint8_t windows);

struct JitCode;
// A kWaiting code's first measuring window on `left`'s loop starts now, at the rounds
// it has left; nextLoopWindow starts another on the same loop.
void startLoopWindow(JitCode& code, const LoopLeft& left);
void nextLoopWindow(JitCode& code, const LoopLeft& left);

}  // namespace weft::vm
