// Loops as the JIT tier sees them (vm/jit_loops.h), and short loops: a main chunk run
// once is queued for a hot loop only when the loop looks likely to outlast its
// compilation (docs/design/jit.md, "Short loops").
//
// Protocol: the frame that brings a main chunk run once to the threshold at a back-edge
// of a numeric for (the outermost loop there) installs a kWaiting code (no job, no
// entry; vm/jit.cpp requestLoop), noting the clock and the rounds the loop has left.
// Every kJitColdLoopLimit back-edges after (jitColdLoopCounts), that frame's worker
// looks again in coldLoop, once the window has lasted kJitMinWindowMs: when the rounds
// gone and the time they took say the rest ends before the code could be ready
// (expectedWaitMs), the loop is left to the interpreter; otherwise the chunk is queued
// (queueAfter), as it would have been at the threshold. Each loop is judged once, early:
// code that comes late in a loop costs the compilation and gains little. A later loop
// is judged the same way when its first window ends (profiled first, once, as a cold
// loop, when its feedback has holes: docs/design/jit.md, "Cold loops"); one whose
// rounds no register says (a generic for, a while) is queued at once, and so is a loop
// whose rounds left grew (the chunk runs again).
#include "vm/jit_loops.h"

#include <chrono>
#include <climits>
#include <cmath>

#include "vm/jit.h"

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
  int64_t gone = code->waitLeft.load(kRelaxed) - left.rounds;
  if (gone < 0 || !left.known) {
    // The loop started again (the chunk runs again), or no register says its rounds:
    // queued, as any prototype is at the threshold.
    queueAfter(cl, code, false);
    return false;
  }
  double ms = double(nowNanos() - code->waitNanos.load(kRelaxed)) / 1e6;
  if (ms < kJitMinWindowMs) return false;  // the window goes on
  if (gone > 0 && ms / double(gone) * double(left.rounds) < expectedWaitMs(p)) {
    code->waitShort.store(1, kRelaxed);
    return false;
  }
  queueAfter(cl, code, false);
  return false;
}

void startLoopWindow(JitCode& code, const LoopLeft& left) {
  code.waitHeader.store(left.header, std::memory_order_relaxed);
  code.waitLeft.store(left.rounds, std::memory_order_relaxed);
  code.waitNanos.store(nowNanos(), std::memory_order_relaxed);
  code.waitShort.store(0, std::memory_order_relaxed);
}

double JitTier::expectedWaitMs(const Proto* p) {
  std::lock_guard lock(mu_);
  double perInstruction =
      compiledInstructions_ ? compileMs_ / double(compiledInstructions_) : kJitAssumedMsPerInstruction;
  double load = moduleLoaded() ? 0.0 : kJitAssumedLoadMs;
  return load + perInstruction * double(queuedInstructions_ + p->codeSize);
}

}  // namespace weft::vm
