// Chunk running and error reporting for the command line.
#include "tools/weft/session.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace weft::cli {

namespace {

// The State whose chunk runs now, for the SIGINT handler (lock-free, so signal-safe).
std::atomic<vm::State*> interruptible{nullptr};

// As lua.c's: the first Ctrl-C stops the running Lua code with "interrupted!" (and its
// traceback); the handler puts the default action back, so a second Ctrl-C ends a
// program that does not reach the interpreter's safepoints (a long wait or native).
void onInterrupt(int signal) {
  std::signal(signal, SIG_DFL);
  if (vm::State* S = interruptible.load(std::memory_order_relaxed)) vm::requestInterrupt(*S);
}

}  // namespace

Status Session::callMayGC(int nargs, int nresults) {
  interruptible.store(&host_.state(), std::memory_order_relaxed);
  std::signal(SIGINT, onInterrupt);
  Status status = host_.pcallMayGC(nargs, nresults, /*traceback=*/true);
  std::signal(SIGINT, SIG_DFL);
  interruptible.store(nullptr, std::memory_order_relaxed);
  // A request that came after the chunk's last safepoint must not stop the next chunk.
  host_.state().interruptPending.store(false, std::memory_order_relaxed);
  if (status.isError()) reportTopMayGC(status);
  return status;
}

Status Session::runStringMayGC(std::string_view text, std::string_view chunkName) {
  Status status = host_.loadMayGC(text, chunkName);
  if (status.isError()) {
    reportTopMayGC(status);
    return status;
  }
  return callMayGC(0, 0);
}

Status Session::loadFileMayGC(const std::string& path) {
  std::string text;
  std::string error;
  if (!readSource(path, text, error)) {
    reportMessage(error);
    return Status(StatusCode::kRuntimeError);
  }
  std::string chunkName = path.empty() ? "=stdin" : "@" + path;
  Status status = host_.loadMayGC(skipFilePrefix(text), chunkName);
  if (status.isError()) reportTopMayGC(status);
  return status;
}

Status Session::runFileMayGC(const std::string& path) {
  Status status = loadFileMayGC(path);
  if (status.isError()) return status;
  return callMayGC(0, 0);
}

void Session::reportTopMayGC(Status status) {
  // A fatal failure was reported where it happened (the collector's "weft: gc:" line,
  // the runtime's "weft: fatal:" line); the value on top is no message.
  if (status.code() == StatusCode::kFatal) {
    host_.setTop(host_.top() - 1);
    return;
  }
  std::string message;
  if (status.code() == StatusCode::kMemoryError) {
    message = "not enough memory";
  } else if (host_.toStringMayGC(-1, message).isError()) {
    message = "(error object is not a string)";
  }
  host_.setTop(host_.top() - 1);
  reportMessage(message);
}

void Session::reportMessage(const std::string& message) {
  if (prefix_) std::fprintf(stderr, "%s: ", progName());
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
}

int Session::exitCodeFor(Status status) {
  if (status.code() == StatusCode::kFatal) return kExitFatal;
  return status.isError() ? kExitLuaError : kExitOk;
}

bool readSource(const std::string& path, std::string& text, std::string& error) {
  FILE* file = path.empty() ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  bool failed = std::ferror(file) != 0;
  int savedErrno = errno;
  if (file != stdin) std::fclose(file);
  if (failed) {
    error = "cannot read " + (path.empty() ? std::string("stdin") : path) + ": " + std::strerror(savedErrno);
    return false;
  }
  return true;
}

std::string_view skipFilePrefix(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  if (text.empty() || text[0] != '#') return text;
  size_t newline = text.find('\n');
  if (newline == std::string_view::npos) return text.substr(text.size());
  text.remove_prefix(newline);
  // A binary chunk after the comment line starts right after the newline.
  if (text.size() > 1 && text[1] == '\x1b') text.remove_prefix(1);
  return text;
}

}  // namespace weft::cli
