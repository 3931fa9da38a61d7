// Running chunks for the command line the way lua.c does: every call goes through a
// message handler that appends a traceback, and every failure is reported on stderr as
// "weft: message" (just "message" inside the interactive prompt).
//
// Exit codes: kExitOk, kExitLuaError (any Lua error, as lua), kExitFatal (the collector
// found a fault: the runtime cannot go on with that heap).
#pragma once

#include <string>
#include <string_view>

#include "tools/weft/cli_options.h"
#include "vm/host.h"

namespace weft::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitLuaError = 1;
inline constexpr int kExitFatal = 3;

class Session {
 public:
  explicit Session(vm::State& state) : host_(state) {}

  vm::HostStack& host() { return host_; }
  // Error reports carry the "weft: " prefix unless turned off (the prompt turns it off).
  void setPrefixMessages(bool on) { prefix_ = on; }

  // Calls the function below the top nargs values, with a traceback on error; results
  // (all when nresults < 0) replace it. Reports a failure and pops its message.
  Status callMayGC(int nargs, int nresults);
  // Loads and runs a chunk of source text; reports failures.
  Status runStringMayGC(std::string_view text, std::string_view chunkName);
  // Loads a file (path "" means standard input) like loadfile: BOM and a first line
  // starting with '#' are skipped. Pushes the function, or reports and returns the error.
  Status loadFileMayGC(const std::string& path);
  Status runFileMayGC(const std::string& path);
  // Prints the error message on top of the stack (with the prefix) and pops it.
  void reportTopMayGC(Status status);
  void reportMessage(const std::string& message);

  // The process exit status after a failed status.
  static int exitCodeFor(Status status);

 private:
  vm::HostStack host_;
  bool prefix_ = true;
};

// Reads a whole file, or standard input when path is empty. False with `error` set to
// lua's "cannot open NAME: reason" message otherwise.
bool readSource(const std::string& path, std::string& text, std::string& error);
// Drops a UTF-8 BOM and a '#' first line (keeping its newline so line numbers stay right,
// unless a binary chunk follows), as luaL_loadfile does.
std::string_view skipFilePrefix(std::string_view text);

}  // namespace weft::cli
