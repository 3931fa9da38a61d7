// Helpers for the interpreter tests: run a chunk through HostStack and return its
// first result as a string (or "ERR: message"), optionally under collector stress:
// relocate (every safepoint a major collection, moving everything) or generational
// (every safepoint a collection, mostly minors, with the remembered set verified).
#pragma once

#include <string>

#include "vm/host.h"

namespace weft::vm::testing {

enum class Mode { kNormal, kStress, kGenerational };

// Runs `src` in a state made with `opts`: its first result as a string, or "ERR: message"
// (the JIT's tests pass their own options: tests/unit/jit); `failure`, if given, gets the
// heap's verification failure ("" if none).
inline std::string runLuaWith(const std::string& src, const StateOptions& opts, std::string* failure = nullptr) {
  auto S = newStandardState(opts);
  if (!S) return "NO STATE";
  HostStack h(*S);
  std::string out;
  if (!h.loadMayGC(src, "=test").isOk()) {
    (void)h.toStringMayGC(-1, out);
    return "LOAD: " + out;
  }
  Status st = h.pcallMayGC(0, 1, false);
  (void)h.toStringMayGC(-1, out);
  if (failure) *failure = S->heap().failureReason();
  h.closeMayGC();
  return st.isOk() ? out : "ERR: " + out;
}

inline std::string runLua(const std::string& src, Mode mode = Mode::kNormal) {
  StateOptions opts;
  if (mode == Mode::kStress) {
    opts.gc.stress = gc::StressMode::kRelocate;
    opts.gc.verify = true;
  } else if (mode == Mode::kGenerational) {
    opts.gc.stress = gc::StressMode::kCollect;
    opts.gc.verify = true;
  }
  return runLuaWith(src, opts);
}

inline const char* modeName(Mode m) {
  return m == Mode::kNormal ? "Normal" : m == Mode::kStress ? "Stress" : "Generational";
}

}  // namespace weft::vm::testing
