// Loops as the JIT tier sees them and the VM's coarse test of what is worth compiling
// (vm/jit_loops.h), and short loops: a main chunk run once is queued for a hot loop only
// when the loop looks likely to outlast its compilation (docs/design/jit.md, "Short
// loops").
//
// Protocol: the frame that brings a main chunk run once to the threshold at a back-edge
// installs a kWaiting code (no job, no entry; vm/jit.cpp requestLoop), noting the clock
// and the rounds the outermost loop there has left (a numeric for's registers say).
// Every kJitColdLoopLimit back-edges after (jitColdLoopCounts), that frame's worker
// looks again in coldLoop, once the window has lasted kJitMinWindowMs: when the rounds
// gone and the time they took say the rest ends before twice the wait for the code
// (expectedWaitMs, loopOutlastsCode), the loop is left to the interpreter; otherwise a
// second window measures it (nextLoopWindow), and when that one finds it long too the
// chunk is queued (queueAfter), as it would have been at the threshold
// (judgeLoopWindow). Each loop is judged once, early: code that comes late in a loop
// costs the compilation and gains little. A later loop is judged the same way (profiled
// first, once, as a cold loop, when its feedback has holes: docs/design/jit.md, "Cold
// loops"); a loop whose rounds left grew (the chunk runs again) is queued at once. One
// whose rounds no register says (a generic for, a while) is queued once it has run half
// the expected wait: what it ran is the estimate of what it has left.
#include "vm/jit_loops.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>

#include "vm/jit.h"
#include "vm/jit_ops.h"
#include "vm/thread.h"

namespace weft::vm {

namespace {

// A loop's first window lasts at least this long: a window of a few thousand rounds
// (under a millisecond) may hold a minor collection or a table's rehash, and the pace it
// gives then is several times the loop's.
constexpr double kJitMinWindowMs = 2.0;
// The wait assumed before the process compiled anything: the module's load, and the
// time per instruction of a compilation (nbody's 77-instruction advance: 110-140 ms on
// the two-core machine). Measured compilations replace the second.
constexpr double kJitAssumedLoadMs = 25.0;
constexpr double kJitAssumedMsPerInstruction = 1.5;
// How many times the wait for its code a loop must look to have left to be queued.
constexpr double kJitPaybackFactor = 2.0;
// A loop with rounds to count is queued only when each of this many windows in a row
// says it outlasts its code: a window's pace is its slowest rounds' (bench/concat.lua's
// first window, with the table's growth in it, gave three times the loop's average pace
// and queued a chunk whose code arrived after the loop had ended, half of the runs).
constexpr uint8_t kJitLoopWindows = 2;

uint64_t nowNanos() {
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// The rounds a numeric for whose FORLOOP names registers ra has left after this one.
int64_t roundsLeft(const Value* ra) {
  if (ra[2].isInt()) {
    uint64_t count = uint64_t(ra[1].u.i);
    return count > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(count);
  }
  double left = std::floor((ra[1].u.n - ra[0].u.n) / ra[2].u.n);
  if (!(left >= 0)) return 0;  // NaN too
  return left >= double(INT64_MAX) ? INT64_MAX : int64_t(left);
}

// The feedback of instruction pc as the compiler reads it (a FORLOOP that got hot in its
// first run has its FORPREP's), or -1 without feedback (eager mode).
int feedbackAt(const Proto* p, uint32_t pc) {
  const uint8_t* prof = __atomic_load_n(&p->jitProfile, __ATOMIC_ACQUIRE);
  if (!prof) return -1;
  uint8_t seen = __atomic_load_n(&prof[pc], __ATOMIC_RELAXED);
  frontend::Instruction i = p->code[pc];
  if (seen || frontend::getOp(i) != frontend::Op::FORLOOP || pc < uint32_t(frontend::getBx(i))) return seen;
  return __atomic_load_n(&prof[pc - frontend::getBx(i)], __ATOMIC_RELAXED);
}

// Instructions that always leave compiled code (the compiler has none of them): with
// feedback, a profiled instruction that never ran (the compiler makes it a guard exit,
// jit/lowering.h `cold`), a call that saw other than Lua
// functions or natives, a tail call that saw other than those (a native's must have the
// RETURN of its results after it, as the compiler generates), and a generic
// `for` call that saw other than ipairs' and next; calls of open argument or result
// lists (but open results the next instruction takes, a call of open arguments among
// them: vm/jit_ops.h jitOpenResultsTaken),
// tail calls of open lists or that close variables, returns that close variables or of
// an open list but such a call's, the opcodes the compiler has no code for
// (vm/jit_ops.h: closures, varargs...), and a SETLIST of an open list but such a call's.
bool leavesCode(const Proto* p, uint32_t pc) {
  using frontend::Op;
  frontend::Instruction i = p->code[pc];
  Op op = frontend::getOp(i);
  int seen = jitProfiled(op) ? feedbackAt(p, pc) : -1;
  if (seen == 0) return true;
  // Arithmetic on an operand that was never a number calls its metamethod's code
  // (vm/jit_abi.h weftJitArithOnOther, WeftJitHelpers::arithMeta).
  if (seen > 0 && op >= Op::ADDI && op <= Op::SHR) return jitNeverCompiles(op);
  switch (op) {
    case Op::CALL:
      if (frontend::getB(i) == 0 && !(pc > 0 && jitOpenResultsTaken(p->code[pc - 1], i))) return true;
      if (frontend::getC(i) == 0 && !(pc + 1 < p->codeSize && jitOpenResultsTaken(i, p->code[pc + 1]))) return true;
      return seen >= 0 && seen != kWeftJitSeenLuaFunction && seen != kWeftJitSeenNativeFn &&
             !(seen & kWeftJitSeenKnown);
    case Op::TAILCALL:  // closing nothing, of a Lua function or a native (jit/lower_call.cpp tailCall)
      if (frontend::getB(i) == 0 || frontend::getK(i)) return true;
      if (seen == kWeftJitSeenNativeFn) return !(pc + 1 < p->codeSize && jitOpenResultsTaken(i, p->code[pc + 1]));
      return seen >= 0 && seen != kWeftJitSeenLuaFunction;
    case Op::TFORCALL:
      return seen >= 0 && !(seen & kWeftJitSeenKnown);
    case Op::RETURN:
      return frontend::getK(i) || (frontend::getB(i) == 0 && !(pc > 0 && jitOpenResultsTaken(p->code[pc - 1], i)));
    case Op::SETLIST:
      return frontend::getB(i) == 0 && !(pc > 0 && jitOpenResultsTaken(p->code[pc - 1], i));
    default:
      return jitNeverCompiles(op);
  }
}

// Ends the frame: a return, or a tail call, which puts the callee in its place.
bool returns(frontend::Op op) {
  return op == frontend::Op::RETURN || op == frontend::Op::RETURN0 || op == frontend::Op::RETURN1 ||
         op == frontend::Op::TAILCALL;
}

// Calls `visit` with each successor of instruction pc that the coarse search follows (a
// superset of the compiler's); none after an instruction that leaves or returns.
template <typename Visit>
void coarseSuccessors(const Proto* p, uint32_t pc, Visit visit) {
  using frontend::Op;
  frontend::Instruction i = p->code[pc];
  Op op = frontend::getOp(i);
  if (leavesCode(p, pc) || returns(op)) return;
  visit(op == Op::JMP ? int64_t(pc) + 1 + frontend::getSJ(i) : int64_t(pc) + 1);
  if (op == Op::FORLOOP || op == Op::TFORLOOP) visit(int64_t(pc) + 1 - frontend::getBx(i));
  if (op == Op::FORPREP) visit(int64_t(pc) + frontend::getBx(i) + 2);
  if (op == Op::TFORPREP) visit(int64_t(pc) + frontend::getBx(i) + 1);
  if (op == Op::LFALSESKIP || (op >= Op::EQ && op <= Op::TESTSET)) visit(int64_t(pc) + 2);
}

// Whether some path from p's first instruction reaches a return without leaving
// compiled code: the compiler enters such a function at its start, where a compiled
// call of it starts too (docs/design/jit.md, "Compiled calls").
bool mayReturn(const Proto* p) {
  uint32_t n = p->codeSize;
  std::vector<uint8_t> seen(n, 0);
  std::vector<uint32_t> work{0};
  seen[0] = 1;
  while (!work.empty()) {
    uint32_t pc = work.back();
    work.pop_back();
    frontend::Instruction i = p->code[pc];
    if (returns(frontend::getOp(i)) && !leavesCode(p, pc)) return true;
    coarseSuccessors(p, pc, [&](int64_t to) {
      if (to >= 0 && to < int64_t(n) && !seen[size_t(to)]) {
        seen[size_t(to)] = 1;
        work.push_back(uint32_t(to));
      }
    });
  }
  return false;
}

}  // namespace

int64_t loopHeaderOf(const Proto* p, uint32_t latch) {
  using frontend::Op;
  frontend::Instruction i = p->code[latch];
  Op op = frontend::getOp(i);
  if (op == Op::FORLOOP || op == Op::TFORLOOP) return int64_t(latch) + 1 - frontend::getBx(i);
  if (op == Op::JMP && frontend::getSJ(i) < 0) return int64_t(latch) + 1 + frontend::getSJ(i);
  return -1;
}

uint32_t loopLatch(const Proto* p, uint32_t header) {
  uint32_t latch = header;
  for (uint32_t pc = header; pc < p->codeSize; pc++) {
    if (loopHeaderOf(p, pc) == int64_t(header)) latch = pc;
  }
  return latch;
}

uint32_t unseenInLoop(const Proto* p, uint32_t header) {
  const uint8_t* prof = __atomic_load_n(&p->jitProfile, __ATOMIC_ACQUIRE);
  if (!prof) return 0;
  uint32_t unseen = 0, latch = loopLatch(p, header);
  for (uint32_t pc = header; pc <= latch; pc++) {
    if (jitProfiled(frontend::getOp(p->code[pc])) && !__atomic_load_n(&prof[pc], __ATOMIC_RELAXED)) unseen++;
  }
  return unseen;
}

// Whether the loop from `header` to its back-edge `latch` may go round without leaving
// compiled code.
bool loopMayIterate(const Proto* p, uint32_t header, uint32_t latch) {
  std::vector<uint8_t> seen(p->codeSize, 0);
  std::vector<uint32_t> work{header};
  bool found = false;
  while (!work.empty() && !found) {
    uint32_t pc = work.back();
    work.pop_back();
    coarseSuccessors(p, pc, [&](int64_t to) {
      found |= to == int64_t(header);
      if (to > int64_t(header) && to <= int64_t(latch) && !seen[size_t(to)]) {
        seen[size_t(to)] = 1;
        work.push_back(uint32_t(to));
      }
    });
  }
  return found;
}

// Whether some loop of p may go round without leaving compiled code: the compiler
// enters code in such loops (docs/design/jit.md).
bool mayIterate(const Proto* p) {
  for (uint32_t latch = 0; latch < p->codeSize; latch++) {
    int64_t header = loopHeaderOf(p, latch);
    if (header >= 0 && loopMayIterate(p, uint32_t(header), latch)) return true;
  }
  return false;
}

// Whether the loop at `header`, or a loop nested in it, may go round compiled: a short
// loop's code is entered at either.
bool loopNestMayIterate(const Proto* p, uint32_t header) {
  uint32_t last = loopLatch(p, header);
  for (uint32_t latch = header; latch <= last; latch++) {
    int64_t inner = loopHeaderOf(p, latch);
    if (inner >= int64_t(header) && loopMayIterate(p, uint32_t(inner), latch)) return true;
  }
  return false;
}

// The compiler enters code only in loops that may go round compiled and at the start of
// a function that may return compiled; a prototype with neither is rejected here,
// without loading LLVM. Coarser than the compiler's tests, so it never rejects what the
// compiler would take.
bool worthCompiling(const Proto* p) { return p->codeSize > 0 && (mayIterate(p) || mayReturn(p)); }

// A prototype whose code only compiled calls would enter: no loop may go round in it and
// it makes no call the compiler could (the compiler's kWeftJitEntryForCalls start).
bool onlyForCalls(const Proto* p) {
  if (mayIterate(p)) return false;
  for (uint32_t pc = 0; pc < p->codeSize; pc++) {
    frontend::Instruction i = p->code[pc];
    // A native, known or not, is no compiled call (the compiler's luaCall).
    int seen = feedbackAt(p, pc);
    bool native = seen > 0 && ((seen & kWeftJitSeenKnown) || seen == kWeftJitSeenNativeFn);
    frontend::Op op = frontend::getOp(i);
    if ((op == frontend::Op::CALL || op == frontend::Op::TAILCALL) && !leavesCode(p, pc) && !native) return false;
  }
  return true;
}

// A prototype without loops whose hotness came to the threshold in a frame its code
// would not be entered at the start of (vm/interp.cpp jitFrame: a metamethod's, a
// native's callback): its calls are of that kind, and compiled code would wait for
// compiled callers, as for onlyForCalls. Not a metamethod that an arithmetic
// instruction of a function with code (queued or ready) called: that code calls it
// (docs/design/jit.md, "Metamethod arithmetic"), and waiting for such a call left every
// metamethod but the first one the code met to the interpreter, one at a time.
bool calledUnentered(const Proto* p, ThreadData* t) {
  if (!t || mayIterate(p)) return false;
  const CallFrame& f = t->frame();
  if (!(f.flags & (kFrameEntry | kFrameFinishOp))) return false;
  return !((f.flags & kFrameFinishOp) && arithCallerHasCode(t));
}

bool arithCallerHasCode(const ThreadData* t) {
  if (t->frameCount < 2) return false;
  const CallFrame& caller = t->frames[t->frameCount - 2];
  if (!(caller.flags & kFrameLua) || !finishesArith(caller)) return false;
  const JitCode* code = __atomic_load_n(&t->stack[caller.func].asLuaClosure()->proto->jit, __ATOMIC_ACQUIRE);
  uint8_t state = code ? code->state.load(std::memory_order_relaxed) : uint8_t(JitCode::kRejected);
  return state == JitCode::kQueued || state == JitCode::kReady;
}

LoopLeft outermostLoopLeft(const Proto* p, uint32_t pc, const Value* base) {
  LoopLeft out;
  int64_t outer = -1;
  uint32_t forLatch = 0;
  bool numeric = false;
  for (uint32_t latch = pc; latch < p->codeSize; latch++) {
    int64_t header = loopHeaderOf(p, latch);
    if (header < 0 || header > int64_t(pc)) continue;
    bool isFor = frontend::getOp(p->code[latch]) == frontend::Op::FORLOOP;
    if (outer < 0 || header < outer) {
      outer = header;
      numeric = isFor;
      forLatch = latch;
    } else if (header == outer && isFor) {
      numeric = true;
      forLatch = latch;
    }
  }
  if (outer < 0) return out;
  out.header = uint32_t(outer);
  if (numeric) {
    out.rounds = roundsLeft(base + frontend::getA(p->code[forLatch]));
    out.known = true;
  }
  return out;
}

bool JitTier::waitingLoop(const LuaClosure* cl, JitCode* code, uint32_t header, const Value* base) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  Proto* p = cl->proto;
  uint32_t n = __atomic_load_n(&code->coldBackEdges, __ATOMIC_RELAXED);  // jitColdLoopCounts's
  if (code->reprofiling.load(kRelaxed)) {
    if (int64_t(n) - code->coldStart.load(kRelaxed) < kJitColdLoopLimit) return true;
    uint8_t profiling = 1;
    if (!code->reprofiling.compare_exchange_strong(profiling, 0, kRelaxed)) return false;
  }
  LoopLeft left = outermostLoopLeft(p, header, base);
  if (left.header != code->waitHeader.load(kRelaxed)) {
    startLoopWindow(*code, left);  // another loop
    // Profiled first, once, as a cold loop is, when the feedback has holes in it (a
    // loop that never ran before; a branch it never took stays one).
    if (unseenInLoop(p, left.header) == 0) return false;
    code->coldStart.store(n, kRelaxed);
    code->reprofiling.store(1, kRelaxed);
    nextQuietEpoch();
    return true;
  }
  if (code->waitShort.load(kRelaxed)) return false;  // ends before its code could run
  if (!loopNestMayIterate(p, left.header)) {
    // Its code would leave at once (a generic for over gmatch: bench/patterns.lua
    // compiled its main chunk twice for such loops and never entered it).
    code->waitShort.store(1, kRelaxed);
    return false;
  }
  double ms = double(nowNanos() - code->waitNanos.load(kRelaxed)) / 1e6;
  if (!left.known) {
    // No register says its rounds (a while loop, a generic for): the time it has run is
    // the estimate of the time it has left, and it is queued once that is half the wait
    // for its code (bench/patterns.lua's 15 ms while loop queued a 150 ms compilation).
    if (ms < std::max(kJitMinWindowMs, expectedWaitMs(p) / 2)) return false;
    queueAfter(cl, code, false);
    return false;
  }
  int64_t gone = code->waitLeft.load(kRelaxed) - left.rounds;
  if (gone < 0) {
    // The loop started again (the chunk runs again): queued, as any prototype is at the
    // threshold.
    queueAfter(cl, code, false);
    return false;
  }
  if (ms < kJitMinWindowMs) return false;  // the window goes on
  // No round in the window: its rounds are long, and the loop outlasts any wait.
  LoopVerdict verdict = gone == 0 ? LoopVerdict::kQueue
                                  : judgeLoopWindow(ms / double(gone) * double(left.rounds), expectedWaitMs(p),
                                                    code->waitWindows.load(kRelaxed));
  if (verdict == LoopVerdict::kShort) code->waitShort.store(1, kRelaxed);
  if (verdict == LoopVerdict::kMeasureAgain) nextLoopWindow(*code, left);
  if (verdict == LoopVerdict::kQueue) queueAfter(cl, code, false);
  return false;
}

LoopVerdict judgeLoopWindow(double leftMs, double waitMs, uint8_t windows) {
  if (!loopOutlastsCode(leftMs, waitMs)) return LoopVerdict::kShort;
  return windows < kJitLoopWindows ? LoopVerdict::kMeasureAgain : LoopVerdict::kQueue;
}

// Compiling a chunk whose loop had less than twice the wait left cost its worker more
// than the code gained: bench/sort_numbers.lua, old_array.lua, concat.lua and
// sort_strings.lua ran 3-10% slower than with --jit=off when such loops queued their
// chunks, and as fast when they did not (docs/design/jit.md, "Short loops").
bool loopOutlastsCode(double leftMs, double waitMs) { return leftMs >= kJitPaybackFactor * waitMs; }

void startLoopWindow(JitCode& code, const LoopLeft& left) {
  code.waitHeader.store(left.header, std::memory_order_relaxed);
  code.waitWindows.store(0, std::memory_order_relaxed);
  code.waitShort.store(0, std::memory_order_relaxed);
  nextLoopWindow(code, left);
}

void nextLoopWindow(JitCode& code, const LoopLeft& left) {
  code.waitWindows.fetch_add(1, std::memory_order_relaxed);
  code.waitLeft.store(left.rounds, std::memory_order_relaxed);
  code.waitNanos.store(nowNanos(), std::memory_order_relaxed);
}

double JitTier::expectedWaitMs(const Proto* p) {
  std::lock_guard lock(mu_);
  double perInstruction =
      compiledInstructions_ ? compileMs_ / double(compiledInstructions_) : kJitAssumedMsPerInstruction;
  double load = moduleLoaded() ? 0.0 : kJitAssumedLoadMs;
  return load + perInstruction * double(queuedInstructions_ + p->codeSize);
}

}  // namespace weft::vm
