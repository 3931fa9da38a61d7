// The steps of a `weft` run, in lua.c's order: arg table, LUA_INIT, the -e/-l/-W
// actions, the script, then the prompt or standard input.
#pragma once

#include "tools/weft/cli_options.h"
#include "runtime/runtime.h"
#include "tools/weft/session.h"

namespace weft::cli {

// Runs everything the command line asks for; returns the process exit status.
// With a runtime, the end of the main chunk also ends its tasks (Runtime::finishMayGC).
int launchMayGC(Session& session, const CliOptions& options, int argc, char** argv, runtime::Runtime* runtime);

// What --stats and --trace ask for, at the end of the program (its end or os.exit).
void reportTelemetry(const runtime::Runtime& rt, const CliOptions& options, vm::State& state);

}  // namespace weft::cli
