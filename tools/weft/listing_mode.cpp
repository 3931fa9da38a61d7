// --list: the bytecode listing of a script.
#include "tools/weft/listing_mode.h"

#include <cstdio>
#include <string>

#include "frontend/compiler.h"
#include "frontend/listing.h"
#include "tools/weft/session.h"

namespace weft::cli {
namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", progName(), message.c_str());
  return kExitLuaError;
}

}  // namespace

int listScript(const CliOptions& options, int argc, char** argv) {
  if (options.scriptIndex == 0) return fail("--list needs a script");
  std::string path = argv[options.scriptIndex];
  if (path == "-" && !options.dashIsFile) path.clear();
  std::string text;
  std::string error;
  if (!readSource(path, text, error)) return fail(error);
  std::string chunkName = path.empty() ? "=stdin" : "@" + path;
  auto compiled = frontend::compile(skipFilePrefix(text), chunkName);
  if (!compiled) return fail(compiled.error().message);
  std::fputs(frontend::listing(**compiled, options.listLevel > 1).c_str(), stdout);
  return kExitOk;
}

}  // namespace weft::cli
