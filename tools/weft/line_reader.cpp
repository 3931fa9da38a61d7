// Prompt input through libedit or stdio.
#include "tools/weft/line_reader.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <editline/readline.h>

namespace weft::cli {

LineReader::LineReader() : terminal_(isatty(STDIN_FILENO) != 0) {}

std::optional<std::string> LineReader::read(const std::string& prompt) {
  if (terminal_) {
    char* raw = readline(prompt.c_str());
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
  if (terminal_ && !line.empty()) add_history(line.c_str());
}

}  // namespace weft::cli
