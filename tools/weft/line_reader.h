// Reading a line for the prompt: libedit (editing and history) on a terminal, plain
// stdio otherwise (where the prompt is still written, as lua.c does without readline).
#pragma once

#include <optional>
#include <string>

namespace weft::cli {

class LineReader {
 public:
  LineReader();
  // The next line without its newline, or nullopt at end of input.
  std::optional<std::string> read(const std::string& prompt);
  void addHistory(const std::string& line);

 private:
  bool terminal_;
};

}  // namespace weft::cli
