// Reading a line for the prompt: libedit (editing and history) on a terminal, plain
// stdio otherwise, or when libedit cannot be loaded (the prompt is still written, as
// lua.c does without readline).
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
  // libedit's functions, loaded on a terminal (line_reader.cpp); null: stdio.
  char* (*readline_)(const char*) = nullptr;
  int (*addHistory_)(const char*) = nullptr;
};

}  // namespace weft::cli
