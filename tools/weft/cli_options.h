// The weft command line, shaped like lua.c's: `weft [options] [script [args]]`.
//
// Lua's own options end at the script name (everything after it belongs to the script),
// so argv is first split by hand at the script, then the option part is parsed by CLI11
// (which also renders --help). Options that run code (-e, -l, -W) keep their order.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gc/heap.h"
#include "runtime/runtime.h"
#include "vm/jit_options.h"

namespace weft::cli {

// The program name in messages: argv[0] as invoked, as lua.c's progname ("weft" when
// argv[0] is empty). Set by parseCommandLine before anything is printed; main thread.
const char* progName();
inline constexpr const char* kVersionLine = "Weft 0.1.0 (Lua 5.4 compatible)";

// An option that runs something, in command-line order.
struct Action {
  enum class Kind { kExecute, kRequire, kWarningsOn };
  Kind kind;
  std::string text;  // the chunk for -e, "mod" or "name=mod" for -l
};

struct CliOptions {
  std::vector<Action> actions;
  bool interactive = false;  // -i
  bool version = false;      // -v (and -i)
  bool ignoreEnv = false;    // -E
  int listLevel = 0;         // --list (twice: constants, locals and upvalues too)
  gc::Config gc;
  vm::JitOptions jit;        // --jit, --jit-threshold, --jit-stats (docs/design/jit.md)
  unsigned workers = 0;      // --workers (0: WEFT_WORKERS, else the processors)
  bool stats = false;        // --stats[=FORMAT]: telemetry on stderr at exit
  runtime::StatsFormat statsFormat = runtime::StatsFormat::kText;
  std::string tracePath;     // --trace=FILE: the scheduler trace, written at exit
  uint32_t blockingThreads = runtime::RuntimeOptions{}.blockingThreads;  // --blocking-threads
  uint64_t schedSeed = 0;    // --sched-seed
  // Deterministic mode (docs/design/deterministic.md): --deterministic[=SEED], --record,
  // --replay, --explore-budget, and the explorer's children's --det-pct, --det-prefix.
  bool deterministic = false;
  runtime::DeterministicOptions det;
  int32_t budget = runtime::RuntimeOptions{}.budget;  // --explore-budget
  // --explore=N or =systematic (exploreRuns 0), --explore-depth, --explore-output.
  bool explore = false;
  uint64_t exploreRuns = 0;
  uint32_t exploreDepth = 0;
  bool exploreOutput = false;
  // Index in argv of the script ("-" for stdin), or 0 when there is none (as lua.c).
  int scriptIndex = 0;
  // The script named "-" after "--" is a file called "-", not standard input.
  bool dashIsFile = false;
};

// Where --explore writes a failing schedule unless --record names a file.
inline constexpr const char* kDefaultFailureSchedule = "weft-failure.sched";

// What parsing decided: run with `options`, or exit at once with `exitCode` (after
// --help, or after printing a usage error).
struct ParseResult {
  bool run = false;
  int exitCode = 0;
  CliOptions options;
};

ParseResult parseCommandLine(int argc, char** argv);

// Parses "64M", "1G", "4096", "512k" into bytes; false on a malformed or overflowing size.
bool parseByteSize(const std::string& text, size_t& out);

}  // namespace weft::cli
