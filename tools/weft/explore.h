// `weft --explore`: runs the script under many deterministic schedules, each in a child
// process of this same binary, and stops at the first that fails (docs/tasks.md,
// "Finding concurrency bugs"; design: docs/design/deterministic.md).
//
// Protocol with the children: each runs `weft --deterministic=SEED --record=TMP` plus one
// strategy option (--det-uniform: uniform decisions; --det-pct=D:STEPS; --det-prefix=FILE) and
// the user's own options and script. A run fails when it exits non-zero or on a signal,
// or (--explore-output) when its output differs from the first run's. The failing run's
// output is shown, its schedule shrunk (shorter prefixes that still fail) and written to
// --record's file (default weft-failure.sched), which --replay reproduces.
#pragma once

#include "tools/weft/cli_options.h"

namespace weft::cli {

// Returns the exit status: the failing run's, or 0 when every schedule passed.
int explore(const CliOptions& options, int argc, char** argv);

}  // namespace weft::cli
