// perf's map of JIT code (vm/jit_perf_map.h).
#include "vm/jit_perf_map.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "frontend/compiler.h"

namespace weft::vm {
namespace {

// The map's descriptor, opened once per process under gMapMu; -1 until then, and after
// a failure to open (which is then reported, not retried: the compile threads of every
// State would otherwise try at every installation).
std::mutex gMapMu;
int gMapFd = -1;
bool gMapTried = false;
std::string gMapError;

}  // namespace

std::string perfMapPath() { return "/tmp/perf-" + std::to_string(getpid()) + ".map"; }

std::string perfMapName(const char* name, std::string_view source, int line) {
  std::string out = "lua:";
  out += name && *name ? name : "?";
  out += ':';
  out += frontend::shortSourceName(source);
  out += ':';
  out += std::to_string(line);
  // A chunk name from `load` may hold any byte: one entry per line is the format.
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

Expected<void> perfMapWrite(const void* start, uint64_t size, std::string_view name) {
  int fd;
  {
    std::lock_guard lock(gMapMu);
    if (!gMapTried) {
      gMapTried = true;
      std::string path = perfMapPath();
      gMapFd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
      if (gMapFd < 0) gMapError = "cannot create " + path + ": " + std::strerror(errno);
    }
    if (gMapFd < 0) return Error(StatusCode::kRuntimeError, gMapError);
    fd = gMapFd;
  }
  char head[48];
  int n = std::snprintf(head, sizeof head, "%" PRIxPTR " %" PRIx64 " ", reinterpret_cast<uintptr_t>(start), size);
  std::string line(head, size_t(n));
  line.append(name);
  line += '\n';
  // One write per line (O_APPEND): lines from two threads never interleave.
  ssize_t written = write(fd, line.data(), line.size());
  if (written != ssize_t(line.size())) {
    return Error(StatusCode::kRuntimeError, "cannot write " + perfMapPath() + ": " + std::strerror(errno));
  }
  return {};
}

}  // namespace weft::vm
