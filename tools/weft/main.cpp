// weft: runs Lua 5.4 scripts with lua's command line (see docs/cli.md).
#include <cstdio>

#include "tools/weft/cli_options.h"
#include "tools/weft/launcher.h"
#include "tools/weft/listing_mode.h"
#include "tools/weft/session.h"
#include "vm/host.h"

int main(int argc, char** argv) {
  using namespace weft::cli;
  ParseResult parsed = parseCommandLine(argc, argv);
  if (!parsed.run) return parsed.exitCode;
  const CliOptions& options = parsed.options;
  if (options.listLevel > 0) return listScript(options, argc, argv);
  weft::vm::StateOptions stateOptions;
  stateOptions.gc = options.gc;
  std::unique_ptr<weft::vm::State> state = weft::vm::newStandardState(stateOptions, options.ignoreEnv);
  if (!state) {
    std::fprintf(stderr, "%s: cannot create state: not enough memory\n", kProgName);
    return kExitLuaError;
  }
  Session session(*state);
  return launchMayGC(session, options, argc, argv);
}
