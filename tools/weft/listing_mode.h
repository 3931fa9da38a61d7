// --list: compile the script and print its bytecode listing (like `luac -l`), without
// running anything.
#pragma once

#include "tools/weft/cli_options.h"

namespace weft::cli {

// Returns the exit status: 0, or 1 after a read or syntax error (reported as lua does).
int listScript(const CliOptions& options, int argc, char** argv);

}  // namespace weft::cli
