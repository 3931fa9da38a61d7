// weft: runs Lua 5.4 scripts with lua's command line (see docs/cli.md).
#include <cstdio>
#include <cstdlib>

#include "tools/weft/cli_options.h"
#include "tools/weft/explore.h"
#include "tools/weft/launcher.h"
#include "tools/weft/listing_mode.h"
#include "tools/weft/session.h"
#include "runtime/capi/loadlib.h"
#include "runtime/runtime.h"
#include "vm/api.h"
#include "vm/host.h"
#include "vm/jit.h"
#include "vm/state.h"

namespace {

weft::runtime::Runtime* gRuntime = nullptr;  // main thread; read by the os.exit hook
const weft::cli::CliOptions* gOptions = nullptr;  // set once before any script runs

// os.exit: no task runs after it. With `close`, the state is closed (finalizers run)
// once the workers have stopped.
void exitHookMayGC(weft::vm::State& state, int status, bool close) {
  std::fflush(nullptr);
  bool stopped = !gRuntime || gRuntime->stopNow();
  if (gRuntime) weft::cli::reportTelemetry(*gRuntime, *gOptions, state);
  if (close && stopped) weft::vm::HostStack(state).closeMayGC();
  std::fflush(nullptr);
  std::_Exit(status);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace weft::cli;
  ParseResult parsed = parseCommandLine(argc, argv);
  if (!parsed.run) return parsed.exitCode;
  const CliOptions& options = parsed.options;
  if (options.listLevel > 0) return listScript(options, argc, argv);
  weft::vm::StateOptions stateOptions;
  stateOptions.gc = options.gc;
  stateOptions.jit = options.jit;
  std::unique_ptr<weft::vm::State> state = weft::vm::newStandardState(stateOptions, options.ignoreEnv);
  if (!state) {
    std::fprintf(stderr, "%s: cannot create state: not enough memory\n", progName());
    return kExitLuaError;
  }
  // The C API and package.loadlib, cpath and the C searchers, for require of C modules.
  if (!weft::capi::attachCLoaderMayGC(*state)) {
    std::fprintf(stderr, "%s: cannot create state: not enough memory\n", progName());
    return kExitLuaError;
  }
  if (options.explore) return explore(options, argc, argv);
  weft::runtime::RuntimeOptions runtimeOptions;
  runtimeOptions.workers = options.workers;
  runtimeOptions.budget = options.budget;
  runtimeOptions.deterministic = options.det;
  runtimeOptions.deterministic.enabled = options.deterministic;
  runtimeOptions.seed = options.schedSeed;
  runtimeOptions.trace = !options.tracePath.empty();
  runtimeOptions.blockingThreads = options.blockingThreads;
  auto runtime = weft::runtime::Runtime::start(*state, runtimeOptions);
  if (!runtime) {
    std::fprintf(stderr, "%s: fatal: %s\n", progName(), runtime.error().message.c_str());
    return kExitFatal;
  }
  gRuntime = runtime->get();
  gOptions = &options;
  weft::vm::setExitHook(exitHookMayGC);
  Session session(*state);
  int code = launchMayGC(session, options, argc, argv, gRuntime);
  gRuntime = nullptr;
  // The state is closed (finalizers ran). A compilation still on the JIT's thread would
  // hold the exit until LLVM finishes it, tens of milliseconds after a short script
  // ended: the process ends as os.exit ends it, without that wait.
  if (state->jit() && state->jit()->compiling()) {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  return code;
}
