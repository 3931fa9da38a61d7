// The interactive prompt (-i, or no script with a terminal on stdin), as lua.c's doREPL:
// each line is first tried as an expression ("return " .. line, whose results are
// printed with the global print), then as a statement; input whose syntax error ends in
// "<eof>" is incomplete and continues on the next line with the secondary prompt.
// _PROMPT and _PROMPT2 override the prompts. Line editing and history come from libedit
// when stdin is a terminal.
#pragma once

#include "tools/weft/session.h"

namespace weft::cli {

// Returns when standard input ends (ok) or after a fatal collector fault. Errors are
// reported without the program name.
Status runReplMayGC(Session& session);

}  // namespace weft::cli
