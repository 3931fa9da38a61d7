// The interactive prompt.
#include "tools/weft/repl.h"

#include <cstdio>
#include <optional>
#include <string>

#include "tools/weft/line_reader.h"
#include "vm/api.h"

namespace weft::cli {
namespace {

constexpr std::string_view kEofMark = "<eof>";
constexpr std::string_view kChunkName = "=stdin";

std::string promptMayGC(vm::HostStack& host, bool firstLine) {
  std::string prompt = firstLine ? "> " : ">> ";
  host.pushGlobal(firstLine ? "_PROMPT" : "_PROMPT2");
  std::string custom;
  if (!host.isNil(-1) && host.toStringMayGC(-1, custom).isOk()) prompt = custom;
  host.setTop(host.top() - 1);
  return prompt;
}

// A syntax error at the end of the text: more input may complete it.
bool isIncompleteMayGC(vm::HostStack& host, Status status) {
  if (status.code() != StatusCode::kSyntaxError) return false;
  std::string message;
  if (host.toStringMayGC(-1, message).isError()) return false;
  return message.size() >= kEofMark.size() &&
         message.compare(message.size() - kEofMark.size(), kEofMark.size(), kEofMark) == 0;
}

// Waiting for the user is a wait on the operating system: the prompt's thread is
// detached from the collector meanwhile, so running tasks can collect. A runtime that
// closed meanwhile ends the input.
std::optional<std::string> readInput(vm::HostStack& host, LineReader& reader, const std::string& prompt) {
  vm::enterOsWait(host.state());
  std::optional<std::string> line = reader.read(prompt);
  if (!vm::leaveOsWait(host.state()).isOk()) return std::nullopt;
  return line;
}

// Loads the next input as a function on top of the stack. nullopt at end of input;
// otherwise the load status (the error message is on top when it failed).
std::optional<Status> loadInputMayGC(vm::HostStack& host, LineReader& reader) {
  std::optional<std::string> first = readInput(host, reader, promptMayGC(host, true));
  if (!first) return std::nullopt;
  std::string line = *first;
  if (!line.empty() && line[0] == '=') line = "return " + line.substr(1);  // 5.1-style shortcut
  if (host.loadMayGC("return " + line, kChunkName).isOk()) {
    reader.addHistory(*first);
    return Status::ok();
  }
  host.setTop(host.top() - 1);
  for (;;) {
    Status status = host.loadMayGC(line, kChunkName);
    if (!isIncompleteMayGC(host, status)) {
      reader.addHistory(line);
      return status;
    }
    std::optional<std::string> more = readInput(host, reader, promptMayGC(host, false));
    if (!more) return status;
    host.setTop(host.top() - 1);
    line += "\n" + *more;
  }
}

// Prints the values from stack index `first` to the top with the global print.
void printResultsMayGC(Session& session, int first) {
  vm::HostStack& host = session.host();
  int count = host.top() - first + 1;
  if (count <= 0) return;
  host.pushGlobal("print");
  for (int i = 0; i < count; ++i) host.pushValue(first + i);
  Status status = host.pcallMayGC(count, 0, /*traceback=*/false);
  if (status.isError()) {
    std::string message;
    if (host.toStringMayGC(-1, message).isError()) message = "?";
    host.setTop(host.top() - 1);
    session.reportMessage("error calling 'print' (" + message + ")");
  }
}

}  // namespace

Status runReplMayGC(Session& session) {
  vm::HostStack& host = session.host();
  LineReader reader;
  session.setPrefixMessages(false);
  host.state().atPrompt = true;  // a line's deadlock is its error (docs/tasks.md)
  int base = host.top();
  Status fatal;
  for (;;) {
    std::optional<Status> loaded = loadInputMayGC(host, reader);
    if (!loaded) break;
    Status status = *loaded;
    if (status.isError()) {
      session.reportTopMayGC(status);
    } else if ((status = session.callMayGC(0, -1)).isOk()) {
      printResultsMayGC(session, base + 1);
    }
    host.setTop(base);
    if (status.code() == StatusCode::kFatal) {
      fatal = status;
      break;
    }
  }
  host.setTop(base);
  host.state().atPrompt = false;
  std::fputs("\n", stdout);
  std::fflush(stdout);
  session.setPrefixMessages(true);
  return fatal;
}

}  // namespace weft::cli
