// A readable listing of compiled code in the shape of `luac5.4 -l` (and `-l -l` when
// `full`), used by `weft --list` and the bytecode golden tests. Function addresses are
// replaced by stable names ("F0" for the main function, "F0.1" for its second child).
#pragma once

#include <string>

#include "frontend/proto.h"

namespace weft::frontend {

std::string listing(const ProtoData& proto, bool full);

// One constant as luac prints it: strings quoted and escaped, floats with "%.14g".
std::string constantToString(const Constant& k);

}  // namespace weft::frontend
