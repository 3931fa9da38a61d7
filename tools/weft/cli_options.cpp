// Command-line parsing: a hand split at the script name, then CLI11 for the options.
#include "tools/weft/cli_options.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <limits>
#include <map>

namespace weft::cli {
namespace {

std::string gProgName = "weft";  // main thread (progName)

// Lua's usage line instead of CLI11's "Usage: weft [OPTIONS]".
class UsageFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string) const override {
    return std::string("usage: ") + progName() + " [options] [script [args]]\n";
  }
};

// Values the CLI11 callbacks write into while parsing.
struct RawOptions {
  std::vector<std::string> execute;
  std::vector<std::string> require;
  std::string stress;
  std::string heapLimit;
  std::string stats;
  uint64_t interval = 1;
  std::string incremental = "auto";
  uint64_t seed = 0;
  bool verify = false;
  std::string deterministic;
  std::string replay;
  std::string explore;
  std::string detPct;
  std::string detPrefix;
  bool detUniform = false;
  bool warnings = false;  // acted on through parse_order, to keep its place among -e/-l
  std::string jit;
};

void defineOptions(CLI::App& app, RawOptions& raw, CliOptions& out) {
  app.formatter(std::make_shared<UsageFormatter>());
  app.set_help_flag("--help", "show this help and exit");
  app.add_option("-e", raw.execute, "execute string 'stat'")->type_name("stat");
  app.add_flag("-i", out.interactive, "enter interactive mode after executing 'script'");
  app.add_option("-l", raw.require, "require library 'mod' into global 'mod' (or 'g=mod': into global 'g')")
      ->type_name("mod");
  app.add_flag("-v", out.version, "show version information");
  app.add_flag("-E", out.ignoreEnv, "ignore environment variables (LUA_INIT, LUA_PATH, ...)");
  app.add_flag("-W", raw.warnings, "turn warnings on");
  app.add_option("--gc-stress", raw.stress,
                 "collect at every safepoint; =relocate also moves every object each time")
      ->check(CLI::IsMember({"collect", "relocate"}).description(""))
      ->type_name("[=relocate]");
  app.add_flag("--gc-verify", raw.verify, "verify the heap before and after every collection");
  app.add_option("--gc-interval", raw.interval, "with --gc-stress: collect at every N-th safepoint")
      ->check(CLI::PositiveNumber)
      ->type_name("N");
  app.add_option("--gc-seed", raw.seed, "with --gc-stress: collect at random safepoints (seed S)")
      ->type_name("S");
  app.add_option("--gc-incremental", raw.incremental,
                 "mark major collections in slices between which the script runs: auto (the default: "
                 "once the old generation reaches 32 MiB), on (always), off (never)")
      ->check(CLI::IsMember({"auto", "on", "off"}).description(""))
      ->type_name("auto|on|off");
  app.add_option("--heap-limit", raw.heapLimit, "fail allocations beyond BYTES (suffixes K, M, G)")
      ->check([](const std::string& text) {
        size_t bytes = 0;
        return parseByteSize(text, bytes) ? std::string() : "not a size: " + text;
      })
      ->type_name("BYTES");
  app.add_option("--workers", out.workers, "run tasks on N worker threads (default: WEFT_WORKERS, else one per processor)")
      ->check(CLI::Range(1, 1024))
      ->type_name("N");
  app.add_option("--stats", raw.stats,
                 "print scheduler and collector telemetry on stderr at exit (=json: a JSON document, "
                 "=prom: Prometheus text)")
      ->check(CLI::IsMember({"text", "json", "prom"}).description(""))
      ->type_name("[=json|prom]");
  app.add_option("--blocking-threads", out.blockingThreads,
                 "run blocking calls of tasks (os.execute, pipes) on at most N threads (default 64)")
      ->check(CLI::Range(1, 4096))
      ->type_name("N");
  app.add_option("--trace", out.tracePath,
                 "write a scheduler trace (Chrome trace-event JSON: which task ran on which worker when) at exit")
      ->type_name("FILE");
  app.add_option("--sched-seed", out.schedSeed, "seed the scheduler's chooser (select, victim order)")->type_name("S");
  app.add_option("--deterministic", raw.deterministic,
                 "run tasks deterministically: one seeded chooser decides every step, time is logical")
      ->type_name("[=SEED]");
  app.add_option("--record", out.det.recordPath,
                 "with --deterministic: write the run's schedule to FILE (with --explore: the failing one)")
      ->type_name("FILE");
  app.add_option("--replay", raw.replay, "run deterministically with the schedule recorded in FILE")
      ->type_name("FILE");
  app.add_option("--explore", raw.explore,
                 "run the script under N schedules (or =systematic) and stop at the first that fails")
      ->type_name("N|systematic");
  app.add_option("--explore-depth", out.exploreDepth,
                 "with --explore=N: PCT with D-1 priority changes; with =systematic: at most D changed decisions")
      ->check(CLI::Range(1, 64))
      ->type_name("D");
  app.add_option("--explore-budget", out.budget, "deterministic steps of at most UNITS work units (default 10000)")
      ->check(CLI::Range(1, 1 << 30))
      ->type_name("UNITS");
  app.add_flag("--explore-output", out.exploreOutput, "with --explore: output differing from the first run fails");
  app.add_option("--det-pct", raw.detPct, "(the explorer's) PCT schedule: depth D over STEPS steps")
      ->type_name("D:STEPS")
      ->group("");
  app.add_option("--det-prefix", raw.detPrefix, "(the explorer's) follow FILE's decisions, then never preempt")
      ->type_name("FILE")
      ->group("");
  app.add_flag("--det-uniform", raw.detUniform, "(the explorer's) uniform random decisions")->group("");
  app.add_option("--jit", raw.jit,
                 "compile hot Lua functions with LLVM: on (the default), off, or eager (every function at its "
                 "first call, for tests)")
      ->check(CLI::IsMember({"off", "on", "eager"}).description(""))
      ->type_name("off|on|eager");
  app.add_option("--jit-threshold", out.jit.threshold,
                 "with --jit=on: compile a function after N calls and loop iterations (default 1000; given, "
                 "also a main chunk's loops that would end before their code is ready)")
      ->check(CLI::Range(1u, 1u << 30))
      ->type_name("N");
  app.add_flag("--jit-stats", out.jit.stats,
               "print what the JIT compiled and how often compiled code ran and exited, on stderr at exit");
  app.add_flag("--perf-map", out.jit.perfMap,
               "write /tmp/perf-PID.map for perf: each compiled Lua function's code as lua:NAME:FILE:LINE "
               "(also WEFT_PERF_MAP=1)");
  app.add_flag("--list", out.listLevel,
               "print the script's bytecode listing (like luac -l; twice: also constants, locals, upvalues) and exit");
  app.footer(
      "  --        stop handling options\n"
      "  -         stop handling options and execute stdin\n\n"
      "Exit status: 0 on success, 1 on a Lua error, 3 when the collector finds a fault.");
}

// A bad command line gets lua's short usage (lua's own options only); --help lists all.
void usageError(const std::string& message) {
  std::fprintf(stderr,
               "%s: %s\n"
               "usage: %s [options] [script [args]]\n"
               "Available options are:\n"
               "  -e stat   execute string 'stat'\n"
               "  -i        enter interactive mode after executing 'script'\n"
               "  -l mod    require library 'mod' into global 'mod'\n"
               "  -l g=mod  require library 'mod' into global 'g'\n"
               "  -v        show version information\n"
               "  -E        ignore environment variables\n"
               "  -W        turn warnings on\n"
               "  --        stop handling options\n"
               "  -         stop handling options and execute stdin\n",
               progName(), message.c_str(), progName());
  std::fflush(stderr);
}

// Lua's short options: exactly these letters, nothing attached except to -e and -l.
bool isLuaFlag(const std::string& arg) {
  return arg == "-i" || arg == "-v" || arg == "-E" || arg == "-W";
}

// Long options whose value is optional: written bare, they take this one (a value
// must then be attached with '=', so `--stats script.lua` runs the script).
const char* implicitValue(const std::string& name) {
  if (name == "--gc-stress") return "collect";
  if (name == "--stats") return "text";
  if (name == "--jit") return "on";
  if (name == "--deterministic") return "1";
  return nullptr;
}

// Long options that take a value as the next argument when written without '='.
bool longOptionTakesNext(const CLI::App& app, const std::string& name) {
  const CLI::Option* opt = app.get_option_no_throw(name);
  return opt != nullptr && !implicitValue(name) && opt->get_expected_min() > 0;
}

// Splits argv at the script the way lua.c's collectargs does, and rewrites the option
// part for CLI11: "-e X" becomes "-eX" so a chunk starting with '-' stays a value, and a
// bare --gc-stress or --stats gets its implicit value. Returns an error message or "".
std::string splitArgs(const CLI::App& app, int argc, char** argv, std::vector<std::string>& options,
                      CliOptions& out) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.empty() || arg[0] != '-') break;  // the script
    if (arg == "-") break;                    // script is stdin
    if (arg == "--") {
      ++i;
      out.dashIsFile = true;
      break;
    }
    if (arg.compare(0, 2, "-e") == 0 || arg.compare(0, 2, "-l") == 0) {
      std::string value = arg.substr(2);
      if (arg.size() == 2) {
        if (i + 1 >= argc) return "'" + arg + "' needs argument";
        value = argv[++i];
      }
      if (value.empty()) {
        options.push_back(arg.substr(0, 2));
        options.push_back(value);
      } else {
        options.push_back(arg.substr(0, 2) + value);
      }
      continue;
    }
    if (isLuaFlag(arg)) {
      options.push_back(arg);
      continue;
    }
    std::string name = arg.substr(0, arg.find('='));
    bool known = arg.compare(0, 2, "--") == 0 && app.get_option_no_throw(name) != nullptr;
    if (!known) return "unrecognized option '" + arg + "'";
    if (const char* implicit = arg == name ? implicitValue(name) : nullptr) arg += std::string("=") + implicit;
    options.push_back(arg);
    if (arg == name && longOptionTakesNext(app, name)) {
      if (i + 1 >= argc) return "'" + arg + "' needs argument";
      options.push_back(argv[++i]);
    }
  }
  out.scriptIndex = i < argc ? i : 0;
  if (out.scriptIndex == 0) out.dashIsFile = false;
  return "";
}

// Interleaves -e, -l and -W in the order they were given.
void collectActions(const CLI::App& app, const RawOptions& raw, CliOptions& out) {
  size_t nextExecute = 0;
  size_t nextRequire = 0;
  for (const CLI::Option* opt : app.parse_order()) {
    std::string name = opt->get_name();
    if (name == "-e") {
      out.actions.push_back({Action::Kind::kExecute, raw.execute.at(nextExecute++)});
    } else if (name == "-l") {
      out.actions.push_back({Action::Kind::kRequire, raw.require.at(nextRequire++)});
    } else if (name == "-W") {
      out.actions.push_back({Action::Kind::kWarningsOn, ""});
    }
  }
}

void applyStatsOption(const RawOptions& raw, CliOptions& out) {
  out.stats = !raw.stats.empty();
  if (raw.stats == "json") out.statsFormat = runtime::StatsFormat::kJson;
  if (raw.stats == "prom") out.statsFormat = runtime::StatsFormat::kPrometheus;
}

// --deterministic, --replay, --explore and the explorer's own options; "" or an error.
std::string applyDeterministicOptions(const RawOptions& raw, CliOptions& out) {
  runtime::DeterministicOptions& det = out.det;
  out.deterministic = !raw.deterministic.empty() || !raw.replay.empty() || !raw.detPct.empty() ||
                      !raw.detPrefix.empty() || raw.detUniform;
  if (!raw.deterministic.empty()) {
    try {
      det.seed = std::stoull(raw.deterministic);
    } catch (const std::exception&) {
      return "--deterministic: not a seed: " + raw.deterministic;
    }
  }
  std::string error;
  if (!raw.replay.empty()) {
    if (!runtime::readScheduleFile(raw.replay, det.script, error)) return "--replay: " + error;
    det.strategy = runtime::DetStrategy::kReplay;
    det.seed = det.script.seed;
    if (det.script.budget > 0) out.budget = int32_t(det.script.budget);
  } else if (!raw.detPrefix.empty()) {
    if (!runtime::readScheduleFile(raw.detPrefix, det.script, error)) return "--det-prefix: " + error;
    det.strategy = runtime::DetStrategy::kPrefix;
  } else if (raw.detUniform) {
    det.strategy = runtime::DetStrategy::kUniform;
  } else if (!raw.detPct.empty()) {
    unsigned depth = 0;
    unsigned long long steps = 0;
    if (std::sscanf(raw.detPct.c_str(), "%u:%llu", &depth, &steps) != 2 || depth == 0) return "--det-pct: expected D:STEPS";
    det.strategy = runtime::DetStrategy::kPct;
    det.pctDepth = depth;
    det.pctSteps = steps;
  }
  if (!raw.explore.empty()) {
    out.explore = true;
    if (raw.explore != "systematic") {
      try {
        out.exploreRuns = std::stoull(raw.explore);
      } catch (const std::exception&) {
        return "--explore: expected a number of schedules or 'systematic': " + raw.explore;
      }
      if (out.exploreRuns == 0) return "--explore: expected at least one schedule";
    } else if (out.exploreDepth == 0) {
      return "--explore=systematic needs a bound: --explore-depth=D (at most D decisions differ from the default "
             "schedule)";
    }
    if (out.deterministic) return "--explore chooses its own schedules: drop --deterministic, --replay";
  }
  if (!out.det.recordPath.empty() && !out.deterministic && !out.explore) {
    return "--record needs --deterministic (or --explore)";
  }
  return "";
}

void applyGcOptions(const RawOptions& raw, gc::Config& config) {
  if (raw.stress == "collect") config.stress = gc::StressMode::kCollect;
  if (raw.stress == "relocate") config.stress = gc::StressMode::kRelocate;
  config.verify = raw.verify;
  config.interval = raw.interval;
  config.seed = raw.seed;
  config.incrementalMajors = raw.incremental != "off";
  if (raw.incremental == "on") config.incrementalMinBytes = 0;
  if (!raw.heapLimit.empty()) parseByteSize(raw.heapLimit, config.heapLimit);
}

}  // namespace

bool parseByteSize(const std::string& text, size_t& out) {
  static const std::map<char, unsigned> kShift = {{'K', 10}, {'M', 20}, {'G', 30}};
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 18) return false;
  uint64_t value = std::stoull(text.substr(0, digits));
  std::string suffix = text.substr(digits);
  if (suffix.size() > 1) return false;
  if (suffix.size() == 1) {
    auto it = kShift.find(static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0]))));
    if (it == kShift.end()) return false;
    if (value > (std::numeric_limits<uint64_t>::max() >> it->second)) return false;
    value <<= it->second;
  }
  out = static_cast<size_t>(value);
  return true;
}

const char* progName() { return gProgName.c_str(); }

ParseResult parseCommandLine(int argc, char** argv) {
  if (argc > 0 && argv[0] && argv[0][0]) gProgName = argv[0];
  ParseResult result;
  RawOptions raw;
  CLI::App app("Weft: a Lua 5.4 runtime", progName());
  defineOptions(app, raw, result.options);
  std::vector<std::string> options;
  std::string splitError = splitArgs(app, argc, argv, options, result.options);
  if (!splitError.empty()) {
    usageError(splitError);
    result.exitCode = 1;
    return result;
  }
  std::vector<std::string> reversed(options.rbegin(), options.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return result;
  } catch (const CLI::ParseError& e) {
    usageError(e.what());
    result.exitCode = 1;
    return result;
  }
  collectActions(app, raw, result.options);
  applyGcOptions(raw, result.options.gc);
  if (raw.jit == "off") result.options.jit.mode = vm::JitMode::kOff;
  if (raw.jit == "on") result.options.jit.mode = vm::JitMode::kOn;
  if (raw.jit == "eager") result.options.jit.mode = vm::JitMode::kEager;
  result.options.jit.reportUnavailable = raw.jit == "on" || raw.jit == "eager" || result.options.jit.stats;
  // An explicit threshold is obeyed for every loop (docs/design/jit.md, "Short loops").
  if (app.count("--jit-threshold")) result.options.jit.skipShortLoops = false;
  applyStatsOption(raw, result.options);
  if (std::string detError = applyDeterministicOptions(raw, result.options); !detError.empty()) {
    usageError(detError);
    result.exitCode = 1;
    return result;
  }
  if (result.options.interactive) result.options.version = true;
  result.run = true;
  return result;
}

}  // namespace weft::cli
