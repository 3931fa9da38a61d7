// Prompt input through libedit or stdio. libedit is loaded with dlopen when a prompt on a
// terminal first needs it (as lua.c 5.4 loads readline), so that scripts and `-e` chunks
// do not pay for loading it and its three dependencies at start-up (about 0.3 ms).
#include "tools/weft/line_reader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <editline/readline.h>

namespace weft::cli {

namespace {

// Debian's libedit2 (the runtime half of libedit-dev, which tools/setup.sh installs).
constexpr const char* kLibedit = "libedit.so.2";

}  // namespace

LineReader::LineReader() : terminal_(isatty(STDIN_FILENO) != 0) {
  if (!terminal_) return;
  // Never closed: the process keeps libedit until it ends, as a linked library would.
  void* lib = dlopen(kLibedit, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return;
  readline_ = reinterpret_cast<decltype(readline_)>(dlsym(lib, "readline"));
  addHistory_ = reinterpret_cast<decltype(addHistory_)>(dlsym(lib, "add_history"));
  if (!readline_ || !addHistory_) readline_ = nullptr;
}

std::optional<std::string> LineReader::read(const std::string& prompt) {
  if (readline_) {
    char* raw = readline_(prompt.c_str());
    if (raw == nullptr) return std::nullopt;
    std::string line(raw);
    std::free(raw);
    return line;
  }
  std::fputs(prompt.c_str(), stdout);
  std::fflush(stdout);
  std::string line;
  int c;
  while ((c = std::getchar()) != EOF && c != '\n') line.push_back(static_cast<char>(c));
  if (c == EOF && line.empty()) return std::nullopt;
  return line;
}

void LineReader::addHistory(const std::string& line) {
  if (readline_ && !line.empty()) addHistory_(line.c_str());
}

}  // namespace weft::cli
