// perf's map of JIT code (docs/design/jit.md, "Profiling compiled code"): with
// --perf-map or WEFT_PERF_MAP=1, every compiled function gets one line
// "START SIZE NAME" (hex, no 0x) in /tmp/perf-PID.map when its code is installed, so
// `perf report` names samples in compiled code `lua:NAME:FILE:LINE`.
//
// Protocol: the file is created (truncated: an earlier process may have had this pid)
// at the first line the process writes, and every State of the process appends to it.
// Each line is one write(2) on an O_APPEND descriptor: lines of two compile threads never
// interleave, and a line is in the kernel's hands before the code can run, so a crash
// loses none. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "weft/status.h"

namespace weft::vm {

// Appends one line for the code at [start, start + size). An error when the file cannot
// be created or written (the caller reports it once and goes on without the map).
Expected<void> perfMapWrite(const void* start, uint64_t size, std::string_view name);

// The map's path for this process (/tmp/perf-PID.map).
std::string perfMapPath();

// `lua:NAME:FILE:LINE` for a function named `name` by its call site ("" or null: `?`),
// defined at `line` of the chunk `source` (its chunk name, as in error messages: one
// line, so the map stays one entry per line).
std::string perfMapName(const char* name, std::string_view source, int line);

}  // namespace weft::vm
