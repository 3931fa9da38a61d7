// Reading the CPU topology from sysfs (protocol in topology.h).
#include "runtime/sched/topology.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

namespace weft::runtime {

namespace {

// No real machine numbers CPUs this high; a larger number is a corrupt file, and a range
// up to it would only exhaust memory.
constexpr unsigned kMaxCpu = 1u << 16;

Error malformed(const std::string& what) { return Error(StatusCode::kRuntimeError, "sysfs: " + what); }

// Read with POSIX calls rather than std::filesystem and file streams, whose code and
// buffers cost eight page faults more (measured when every process read these files at
// start-up; now the scheduler's start does: docs/design/packaging.md "Text layout").
Expected<std::string> readText(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return malformed("cannot read " + path);
  std::string text;
  char buffer[256];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      if (n < 0) return malformed("cannot read " + path);
      return text;
    }
    text.append(buffer, size_t(n));
  }
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

// A decimal number that fills `s` (from_chars alone would accept a prefix).
template <typename T>
bool parseNumber(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// "nodeN" directories: N, in increasing order.
Expected<std::vector<unsigned>> nodeIds(const std::string& dir) {
  std::vector<unsigned> ids;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return ids;  // no node directory: one node
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(d);
    if (!entry) break;
    std::string_view name = entry->d_name;
    unsigned id;
    if (name.starts_with("node") && parseNumber(name.substr(4), id)) ids.push_back(id);
  }
  int error = errno;
  ::closedir(d);
  if (error != 0) return malformed("cannot list " + dir);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<unsigned> allowedCpus() {
  std::vector<unsigned> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  // A process on more CPUs than a cpu_set_t holds gets none: it is then never pinned.
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  return out;
}

}  // namespace

Expected<std::vector<unsigned>> parseCpuList(std::string_view text) {
  std::vector<unsigned> cpus;
  text = trimmed(text);
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return malformed("a CPU list ends with ','");
    size_t dash = item.find('-');
    unsigned first, last;
    if (!parseNumber(item.substr(0, dash), first))
      return malformed("bad CPU list item '" + std::string(item) + "'");
    last = first;
    if (dash != std::string_view::npos && !parseNumber(item.substr(dash + 1), last))
      return malformed("bad CPU range '" + std::string(item) + "'");
    if (last < first || last >= kMaxCpu) return malformed("bad CPU range '" + std::string(item) + "'");
    for (unsigned cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

Expected<Topology> Topology::read(const std::string& sysfsRoot) {
  const std::string cpuDir = sysfsRoot + "/devices/system/cpu/";
  const std::string nodeDir = sysfsRoot + "/devices/system/node";
  Expected<std::string> onlineText = readText(cpuDir + "online");
  if (!onlineText) return onlineText.error();
  Expected<std::vector<unsigned>> online = parseCpuList(*onlineText);
  if (!online) return online.error();
  if (online->empty()) return malformed("no online CPU");

  std::map<unsigned, unsigned> nodeOf;  // cpu -> node, for every CPU some node lists
  Expected<std::vector<unsigned>> nodes = nodeIds(nodeDir);
  if (!nodes) return nodes.error();
  for (unsigned node : *nodes) {
    std::string name = "node" + std::to_string(node);
    Expected<std::string> text = readText(nodeDir + "/" + name + "/cpulist");
    if (!text) return text.error();
    Expected<std::vector<unsigned>> cpus = parseCpuList(*text);
    if (!cpus) return cpus.error();
    for (unsigned cpu : *cpus)
      if (!nodeOf.emplace(cpu, node).second)
        return malformed("CPU " + std::to_string(cpu) + " is in two nodes");
  }

  Topology t;
  std::set<unsigned> nodeSet;
  std::set<int> packageSet;
  for (unsigned cpu : *online) {
    CpuPlace place{.cpu = cpu};
    if (!nodes->empty()) {
      auto it = nodeOf.find(cpu);
      if (it == nodeOf.end()) return malformed("online CPU " + std::to_string(cpu) + " is in no node");
      place.node = it->second;
    }
    std::string name = "cpu" + std::to_string(cpu);
    Expected<std::string> text = readText(cpuDir + name + "/topology/physical_package_id");
    if (!text) return text.error();
    if (!parseNumber(trimmed(*text), place.package)) return malformed("bad package id of " + name);
    nodeSet.insert(place.node);
    packageSet.insert(place.package);
    t.cpus_.push_back(place);
  }
  std::sort(t.cpus_.begin(), t.cpus_.end(), [](const CpuPlace& a, const CpuPlace& b) {
    return std::tie(a.node, a.package, a.cpu) < std::tie(b.node, b.package, b.cpu);
  });
  t.multiNode_ = nodeSet.size() > 1;
  t.flat_ = !t.multiNode_ && packageSet.size() == 1;
  if (t.flat_) return Topology();
  if (t.multiNode_) t.allowed_ = allowedCpus();
  return t;
}

Topology Topology::fromEnvironment() {
  const char* root = std::getenv(kSysfsRootVariable);
  Expected<Topology> t = read(root && *root ? root : "/sys");
  return t ? std::move(*t) : Topology();
}

std::vector<std::vector<unsigned>> Topology::victimTiers(unsigned self, unsigned workers) const {
  std::vector<std::vector<unsigned>> tiers(flat_ ? 1 : 3);
  for (unsigned w = 0; w < workers; ++w) {
    if (w == self) continue;
    size_t tier = 0;
    if (!flat_) {
      const CpuPlace &mine = placeOf(self), &theirs = placeOf(w);
      tier = 2 - (mine.node == theirs.node) - (mine.package == theirs.package);
    }
    tiers[tier].push_back(w);
  }
  std::erase_if(tiers, [](const std::vector<unsigned>& tier) { return tier.empty(); });
  return tiers;
}

void Topology::pinThread(unsigned worker) const {
  if (!multiNode_) return;
  unsigned node = placeOf(worker).node;
  cpu_set_t set;
  CPU_ZERO(&set);
  bool any = false;
  for (const CpuPlace& p : cpus_) {
    if (p.node != node || !std::binary_search(allowed_.begin(), allowed_.end(), p.cpu)) continue;
    CPU_SET(p.cpu, &set);
    any = true;
  }
  // None of the node's CPUs is allowed: every allowed CPU, which also undoes the pin of
  // a worker this (spare) thread ran before.
  if (!any)
    for (unsigned cpu : allowed_) CPU_SET(cpu, &set);
  if (!allowed_.empty()) pthread_setaffinity_np(pthread_self(), sizeof set, &set);  // refused: left as is
}

}  // namespace weft::runtime
