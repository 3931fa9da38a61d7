// Loops as the JIT tier sees them (vm/jit_loops.h), and short loops: a main chunk run
// once is queued for a hot loop only when the loop looks likely to outlast its
// compilation (docs/design/jit.md, "Short loops").
//
// Protocol: the frame that brings a main chunk run once to the threshold at a
// back-edge installs a kWaiting code (no job, no entry; vm/jit.cpp requestLoop), noting
// the clock, the outermost loop around the back-edge and, for a numeric for, the rounds
// it has left. Every kJitColdLoopLimit back-edges after (jitColdLoopCounts), that
// frame's worker measures again in coldLoop: the rounds gone and the time they took say
// how long the rest will take; the chunk is queued (queueAfter) once that is at least
// kJitLongLoopFactor times the wait for its code (expectedWaitMs) in kJitLongWindows
// windows in a row, or kJitClearlyLongFactor times in any, else the window starts
// again. A loop whose rounds no register says (a generic for, a while), or that went no
// round in the window, is queued once it ran as long as the wait; one whose rounds left
// grew is the chunk run again, and is queued. A later loop the feedback never saw is
// profiled first, as a cold loop (docs/design/jit.md, "Cold loops").
#include "vm/jit_loops.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>

#include "vm/jit.h"

namespace weft::vm {

namespace {

// The rest of a loop must take this many times the wait for its code: compiled code
// runs only after the wait, the speed-up of a loop whose time goes to natives (string
// formatting, pattern matching) is small, and the compile thread slows the worker a
// little while it works (docs/design/jit.md, "Short loops").
constexpr double kJitLongLoopFactor = 2.0;
// A window lasts at least this long, and this share of the wait it is weighed against:
// a window of a few thousand rounds (under a millisecond) took a minor collection or a
// table's rehash for the loop's pace, and bench/sort_numbers.lua's first loop, 70 ms
// long, looked 160-450 ms long.
constexpr double kJitMinWindowMs = 2.0;
constexpr double kJitWindowShare = 16.0;
// Windows in a row whose pace makes the rest long before the loop counts as long (one
// slow window, a collection in it, is not enough); a pace that makes the rest this many
// times the wait decides at once, however short its window (bench/loops.lua waited a
// 6 ms window, 4% of its run, for a loop of half a second).
constexpr uint8_t kJitLongWindows = 2;
constexpr double kJitClearlyLongFactor = 4.0;
// The wait assumed before the process compiled anything: the module's load, and the
// time per instruction of a compilation (nbody's 77-instruction advance: 110-140 ms on
// the two-core machine). Measured compilations replace the second.
constexpr double kJitAssumedLoadMs = 25.0;
constexpr double kJitAssumedMsPerInstruction = 1.5;

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
  } else if (unseenInLoop(p, header) > 0) {
    // A loop the feedback never saw: profiled first, as a cold loop is.
    code->coldStart.store(n, kRelaxed);
    code->reprofiling.store(1, kRelaxed);
    nextQuietEpoch();
    return true;
  }
  LoopLeft left = outermostLoopLeft(p, header, base);
  if (left.header != code->waitHeader.load(kRelaxed)) {
    startLoopWindow(*code, left);  // another loop
    return false;
  }
  double waitMs = expectedWaitMs(p);
  double ms = double(nowNanos() - code->waitNanos.load(kRelaxed)) / 1e6;
  int64_t gone = code->waitLeft.load(kRelaxed) - left.rounds;
  if (gone < 0) {
    queueAfter(cl, code, false);  // the loop started again: the chunk runs again
    return false;
  }
  if (!left.known || gone == 0) {
    // No pace to go by: a loop that ran as long as the wait is as likely as not to run
    // that long again.
    if (ms >= waitMs) queueAfter(cl, code, false);
    return false;
  }
  double msLeft = ms / double(gone) * double(left.rounds);
  if (msLeft >= kJitClearlyLongFactor * waitMs) {
    queueAfter(cl, code, false);
    return false;
  }
  if (ms < std::max(kJitMinWindowMs, waitMs / kJitWindowShare)) return false;  // the window goes on
  uint8_t longWindows = msLeft >= kJitLongLoopFactor * waitMs ? uint8_t(code->waitLong.load(kRelaxed) + 1) : 0;
  if (longWindows >= kJitLongWindows) {
    queueAfter(cl, code, false);
    return false;
  }
  code->waitLong.store(longWindows, kRelaxed);
  startLoopWindow(*code, left);  // the next window, at the loop's pace now
  return false;
}

void startLoopWindow(JitCode& code, const LoopLeft& left) {
  code.waitHeader.store(left.header, std::memory_order_relaxed);
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
