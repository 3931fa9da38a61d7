// Where the processors are (each online CPU's NUMA node and package, read from sysfs),
// where the workers sit among them, and the tiers in which a worker visits its siblings
// to steal (design: docs/design/scheduler.md, "Finding work").
//
// Protocol:
//  - A Topology is read once, by Scheduler::start before it starts the workers
//    (SchedulerInternals::readTopology), and is immutable after: workers read it without
//    locks. pinThread() changes only the calling thread.
//  - Anything unreadable or malformed gives the flat topology (nothing known: one tier
//    of siblings, no pinning), which is also what a machine with one node and one package
//    gets. The placement is a hint: a refused pin leaves the thread where the OS puts it.
//  - Worker i sits on the (i mod n)-th of the n online CPUs in (node, package, cpu) order,
//    so consecutive workers fill a node before the next one starts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weft/status.h"

namespace weft::runtime {

// The environment variable naming a directory that stands for /sys (tests build fake
// trees there); unset or empty: /sys.
inline constexpr const char* kSysfsRootVariable = "WEFT_SYSFS_ROOT";

struct CpuPlace {
  unsigned cpu = 0;
  unsigned node = 0;
  int package = 0;  // physical_package_id; the kernel says -1 where it does not know
};

// A sysfs CPU list ("0-3,8,10-11\n"; empty for a node without CPUs).
Expected<std::vector<unsigned>> parseCpuList(std::string_view text);

class Topology {
 public:
  Topology() = default;  // flat

  // From `sysfsRoot`/devices/system/{cpu,node}. An error if the online CPUs, a node's
  // CPU list or an online CPU's package cannot be read or parsed, or an online CPU is in
  // no node or in two. Without a node directory every CPU is in node 0.
  static Expected<Topology> read(const std::string& sysfsRoot);
  // read() from kSysfsRootVariable's directory or /sys; flat when that fails.
  static Topology fromEnvironment();

  // One node and one package, or nothing known.
  bool flat() const { return flat_; }
  bool multiNode() const { return multiNode_; }
  // The online CPUs in (node, package, cpu) order; empty when flat.
  const std::vector<CpuPlace>& cpus() const { return cpus_; }

  // Worker `self`'s siblings among `workers`, by tier: same node (and package), then
  // same package (or node: where nodes are unknown, or one spans packages, memory is
  // equally near and a package still shares caches), then the rest; empty tiers left
  // out. Flat: one tier of every sibling.
  std::vector<std::vector<unsigned>> victimTiers(unsigned self, unsigned workers) const;

  // Binds the calling thread to the CPUs of `worker`'s node that the process may use
  // (as it could when the topology was read), or to all of those when none of the
  // node's is among them. Only with more than one node: elsewhere the order alone is the
  // point, and the OS places threads better than a fixed pin. A refusal is ignored.
  void pinThread(unsigned worker) const;

 private:
  const CpuPlace& placeOf(unsigned worker) const { return cpus_[worker % cpus_.size()]; }

  std::vector<CpuPlace> cpus_;
  std::vector<unsigned> allowed_;  // the CPUs the process could run on at read()
  bool flat_ = true;
  bool multiNode_ = false;
};

}  // namespace weft::runtime
