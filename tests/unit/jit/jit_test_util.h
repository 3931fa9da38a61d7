// Shared by the JIT's unit tests (tests/unit/jit): a State with the JIT on.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/unit/vm/interp_test_util.h"
#include "vm/jit.h"

namespace weft::vm::testing {

// The number before the first `after` in a --jit-stats report, or -1.
inline long jitStatsCount(const std::string& report, const std::string& after) {
  auto at = report.find(after);
  if (at == std::string::npos || at == 0) return -1;
  auto start = report.find_last_of(" ,", at - 1);
  return std::stol(report.substr(start + 1, at - start - 1));
}

enum class Run { kInterpreted, kEager, kEagerRelocate };

// Runs `src` interpreted or compiled eagerly (relocating at every safepoint, with the
// heap verified, for kEagerRelocate) and returns its first result as a string (or
// "ERR: message").
inline std::string runLua(const std::string& src, Run mode) {
  StateOptions opts;
  if (mode != Run::kInterpreted) opts.jit.mode = JitMode::kEager;
  if (mode == Run::kEagerRelocate) {
    opts.gc.stress = gc::StressMode::kRelocate;
    opts.gc.verify = true;
  }
  return runLuaWith(src, opts);
}

// Runs `src` interpreted, eager and eager relocating: the compiled runs must give the
// interpreter's result, which it returns.
inline std::string expectAgreeing(const std::string& src) {
  std::string interpreted = runLua(src, Run::kInterpreted);
  EXPECT_EQ(runLua(src, Run::kEager), interpreted) << src;
  EXPECT_EQ(runLua(src, Run::kEagerRelocate), interpreted) << src;
  return interpreted;
}

// A State with the JIT on at a low threshold, so that code is compiled with the type
// feedback of a first, warming call (or `eager`: every function compiled at its first
// call, without feedback); `run` returns a chunk's first result.
class HotState {
 public:
  explicit HotState(bool relocate = false, bool eager = false) : HotState(hotOptions(relocate, eager)) {}
  // Any other options (the statistics are always on).
  explicit HotState(StateOptions opts) {
    opts.jit.stats = true;
    S_ = newStandardState(opts);
    h_ = std::make_unique<HostStack>(*S_);
  }
  ~HotState() { h_->closeMayGC(); }
  std::string run(const std::string& src) {
    std::string out;
    if (!h_->loadMayGC(src, "=test").isOk()) return "LOAD";
    Status st = h_->pcallMayGC(0, 1, false);
    (void)h_->toStringMayGC(-1, out);
    h_->setTop(0);
    return st.isOk() ? out : "ERR: " + out;
  }
  // Waits until the compile thread has nothing queued.
  void settle() { (void)S_->jit()->liveCodeForTesting(); }
  std::string stats() { return S_->jit()->statsReport(); }
  // Runs `chunk` three times, letting the compile thread finish after each: warming may
  // queue a function before all of it ran, and the guard exits of that first version get
  // it recompiled.
  // With `expected`, each round must return it.
  void warm(const std::string& chunk, const char* expected = nullptr) {
    for (int round = 0; round < 3; round++) {
      std::string out = run(chunk);
      if (expected) {
        EXPECT_EQ(out, expected) << chunk;
      }
      settle();
    }
  }
  // warm(chunk), then chunk `hot`: its first result, and in `exits` how many times it
  // left compiled code.
  std::string warmThenHot(const std::string& chunk, const std::string& hot, long& exits) {
    warm(chunk);
    long before = this->exits();
    std::string out = run(hot);
    exits = this->exits() - before;
    return out;
  }
  // Totals of the --jit-stats report: exits to the interpreter, entries, recompilations,
  // functions compiled.
  long exits() { return jitStatsCount(stats(), " exits to the interpreter"); }
  long entries() { return jitStatsCount(stats(), " entries,"); }
  long recompiled() { return jitStatsCount(stats(), " recompiled"); }
  long compiled() { return jitStatsCount(stats(), " functions compiled"); }
  long waited() { return jitStatsCount(stats(), " waited for a long loop"); }

 private:
  static StateOptions hotOptions(bool relocate, bool eager) {
    StateOptions opts;
    opts.jit.mode = eager ? JitMode::kEager : JitMode::kOn;
    opts.jit.threshold = 100;
    opts.jit.skipShortLoops = false;  // the chunks' own loops compile too
    if (relocate) {
      opts.gc.stress = gc::StressMode::kRelocate;
      opts.gc.verify = true;
    }
    return opts;
  }

  std::unique_ptr<State> S_;
  std::unique_ptr<HostStack> h_;
};

}  // namespace weft::vm::testing
