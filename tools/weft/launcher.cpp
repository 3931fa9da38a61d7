// The steps of a `weft` run.
#include "tools/weft/launcher.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tools/weft/repl.h"
#include "vm/jit.h"

namespace weft::cli {
namespace {

// The global `arg`: the script at 0, the interpreter and its options below, the script's
// arguments above. Without a script, the interpreter's name sits at 0.
Status createArgTable(vm::HostStack& host, int argc, char** argv, int scriptIndex) {
  if (!host.newTable()) return Status(StatusCode::kMemoryError);
  int table = host.top();
  for (int i = 0; i < argc; ++i) {
    if (!host.pushString(argv[i]) || !host.rawSetInt(table, i - scriptIndex)) {
      return Status(StatusCode::kMemoryError);
    }
  }
  if (!host.setGlobal("arg")) return Status(StatusCode::kMemoryError);
  return Status::ok();
}

// LUA_INIT_5_4 (or else LUA_INIT): a chunk, or "@file" to run a file.
Status runInitMayGC(Session& session) {
  const char* name = "LUA_INIT_5_4";
  const char* init = std::getenv(name);
  if (init == nullptr) {
    name = "LUA_INIT";
    init = std::getenv(name);
  }
  if (init == nullptr) return Status::ok();
  if (init[0] == '@') return session.runFileMayGC(init + 1);
  return session.runStringMayGC(init, std::string("=") + name);
}

// -l mod, or -l g=mod: require(mod) into global g (default: mod).
Status requireMayGC(Session& session, const std::string& spec) {
  vm::HostStack& host = session.host();
  size_t equals = spec.find('=');
  std::string global = spec.substr(0, equals);
  std::string module = equals == std::string::npos ? spec : spec.substr(equals + 1);
  host.pushGlobal("require");
  if (!host.pushString(module)) return Status(StatusCode::kMemoryError);
  Status status = session.callMayGC(1, 1);
  if (status.isError()) return status;
  if (!host.setGlobal(global)) return Status(StatusCode::kMemoryError);
  return status;
}

// warn("@on"), as lua_warning(L, "@on") in lua.c.
Status warningsOnMayGC(Session& session) {
  vm::HostStack& host = session.host();
  host.pushGlobal("warn");
  if (!host.pushString("@on")) return Status(StatusCode::kMemoryError);
  return session.callMayGC(1, 0);
}

Status runActionsMayGC(Session& session, const CliOptions& options) {
  for (const Action& action : options.actions) {
    Status status;
    switch (action.kind) {
      case Action::Kind::kExecute:
        status = session.runStringMayGC(action.text, "=(command line)");
        break;
      case Action::Kind::kRequire:
        status = requireMayGC(session, action.text);
        break;
      case Action::Kind::kWarningsOn:
        status = warningsOnMayGC(session);
        break;
    }
    if (status.isError()) return status;
  }
  return Status::ok();
}

// Runs the script with its arguments as `...`.
Status runScriptMayGC(Session& session, const CliOptions& options, int argc, char** argv) {
  std::string path = argv[options.scriptIndex];
  if (path == "-" && !options.dashIsFile) path.clear();
  Status status = session.loadFileMayGC(path);
  if (status.isError()) return status;
  int nargs = argc - options.scriptIndex - 1;
  for (int i = options.scriptIndex + 1; i < argc; ++i) {
    if (!session.host().pushString(argv[i])) return Status(StatusCode::kMemoryError);
  }
  return session.callMayGC(nargs, 0);
}

bool hasExecute(const CliOptions& options) {
  for (const Action& action : options.actions) {
    if (action.kind == Action::Kind::kExecute) return true;
  }
  return false;
}

void printVersion() {
  std::printf("%s\n", kVersionLine);
  std::fflush(stdout);
}

Status runAllMayGC(Session& session, const CliOptions& options, int argc, char** argv) {
  Status status = createArgTable(session.host(), argc, argv, options.scriptIndex);
  if (status.isError()) {
    session.reportMessage("not enough memory");
    return status;
  }
  if (!options.ignoreEnv && (status = runInitMayGC(session)).isError()) return status;
  if ((status = runActionsMayGC(session, options)).isError()) return status;
  if (options.scriptIndex > 0 && (status = runScriptMayGC(session, options, argc, argv)).isError()) {
    return status;
  }
  if (options.interactive) return runReplMayGC(session);
  if (options.scriptIndex == 0 && !hasExecute(options) && !options.version) {
    if (isatty(STDIN_FILENO)) {
      printVersion();
      return runReplMayGC(session);
    }
    return session.runFileMayGC("");
  }
  return Status::ok();
}

}  // namespace

// The main chunk has ended: its tasks end too; a runtime failure overrides the status.
Status finishRuntimeMayGC(runtime::Runtime& rt, const CliOptions& options, Status status, vm::State& state) {
  if (status.code() == StatusCode::kFatal) {
    rt.stopNow();
  } else if (Status fin = rt.finishMayGC(); !fin.isOk()) {
    status = fin;
  }
  if (rt.failed()) {
    std::fprintf(stderr, "%s: fatal: %s\n", progName(), rt.failureReason().c_str());
    status = Status(StatusCode::kFatal);
  }
  reportTelemetry(rt, options, state);
  return status;
}

void reportTelemetry(const runtime::Runtime& rt, const CliOptions& options, vm::State& state) {
  if (options.stats) std::fputs(rt.statsReport(options.statsFormat).c_str(), stderr);
  if (options.jit.stats && state.jit()) std::fputs(state.jit()->statsReport().c_str(), stderr);
  if (!options.tracePath.empty()) {
    if (auto written = rt.writeTrace(options.tracePath); !written)
      std::fprintf(stderr, "%s: %s\n", progName(), written.error().message.c_str());
  }
  std::fflush(stderr);
}

int launchMayGC(Session& session, const CliOptions& options, int argc, char** argv, runtime::Runtime* rt) {
  if (options.version) printVersion();
  Status status = runAllMayGC(session, options, argc, argv);
  std::fflush(stdout);
  if (rt) status = finishRuntimeMayGC(*rt, options, status, session.host().state());
  if (status.code() != StatusCode::kFatal) session.host().closeMayGC();
  return Session::exitCodeFor(status);
}

}  // namespace weft::cli
