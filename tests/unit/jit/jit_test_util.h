// Shared by the JIT's unit tests (tests/unit/jit): a State with the JIT on.
#pragma once

#include <memory>
#include <string>

#include "tests/unit/vm/interp_test_util.h"
#include "vm/jit.h"

namespace weft::vm::testing {

// A State with the JIT on at a low threshold, so that code is compiled with the type
// feedback of a first, warming call (or `eager`: every function compiled at its first
// call, without feedback); `run` returns a chunk's first result.
class HotState {
 public:
  explicit HotState(bool relocate = false, bool eager = false) {
    StateOptions opts;
    opts.jit.mode = eager ? JitMode::kEager : JitMode::kOn;
    opts.jit.threshold = 100;
    opts.jit.stats = true;
    if (relocate) {
      opts.gc.stress = gc::StressMode::kRelocate;
      opts.gc.verify = true;
    }
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

 private:
  std::unique_ptr<State> S_;
  std::unique_ptr<HostStack> h_;
};

}  // namespace weft::vm::testing
