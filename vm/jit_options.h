// How the JIT runs (StateOptions::jit; the CLI's --jit, --jit-threshold, --jit-stats,
// --perf-map).
#pragma once

#include <cstdint>

namespace weft::vm {

enum class JitMode : uint8_t {
  kOff,    // interpret only; the compiler module is never loaded
  kOn,     // compile hot prototypes on the compile thread
  kEager,  // compile every prototype at its first call, waiting for it (a test mode)
};

struct JitOptions {
  JitMode mode = JitMode::kOn;
  uint32_t threshold = 1000;     // calls plus loop back-edges before a prototype is queued
  // A main chunk run once whose loop reaches the threshold is queued only once that loop
  // looks likely to outlast its compilation (docs/design/jit.md, "Short loops"); off (an
  // explicit --jit-threshold, the unit tests), it is queued at the threshold like any
  // other prototype.
  bool skipShortLoops = true;
  bool stats = false;            // count entries and exits per function (--jit-stats)
  bool perfMap = false;          // /tmp/perf-PID.map (vm/jit_perf_map.h); WEFT_PERF_MAP=1 sets it too
  // Say on stderr when the compiler module cannot be loaded: only where the JIT was asked
  // for (the CLI's --jit=on|eager, --jit-stats). By default a build or an installation
  // without the module (the sanitizer builds) interprets without a word.
  bool reportUnavailable = false;
};

}  // namespace weft::vm
