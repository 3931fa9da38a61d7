// The steps of a `weft` run, in lua.c's order: arg table, LUA_INIT, the -e/-l/-W
// actions, the script, then the prompt or standard input.
#pragma once

#include "tools/weft/cli_options.h"
#include "tools/weft/session.h"

namespace weft::cli {

// Runs everything the command line asks for; returns the process exit status.
int launchMayGC(Session& session, const CliOptions& options, int argc, char** argv);

}  // namespace weft::cli
