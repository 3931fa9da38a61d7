// The CPU topology (runtime/sched/topology.h) read from fake sysfs trees, the tiered
// victim order it gives each worker, and the flat fallback for trees it cannot trust.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/sched/topology.h"
#include "runtime/sched/victim_order.h"
#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

namespace fs = std::filesystem;
using Tiers = std::vector<std::vector<unsigned>>;

std::string packageFile(unsigned cpu) {
  return "devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/physical_package_id";
}

// A fake /sys in a fresh temporary directory, removed with the object.
class FakeSysfs {
 public:
  FakeSysfs() {
    static std::atomic<int> serial{0};
    root_ = fs::temp_directory_path() /
            ("weft-sysfs-" + std::to_string(::getpid()) + "-" + std::to_string(serial.fetch_add(1)));
    fs::create_directories(root_ / "devices/system/cpu");
  }
  ~FakeSysfs() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  void write(const std::string& relative, const std::string& text) {
    fs::path p = root_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void online(const std::string& list) { write("devices/system/cpu/online", list + "\n"); }
  void node(unsigned id, const std::string& list) {
    write("devices/system/node/node" + std::to_string(id) + "/cpulist", list + "\n");
  }
  void package(unsigned cpu, int id) { write(packageFile(cpu), std::to_string(id) + "\n"); }
  void remove(const std::string& relative) { fs::remove(root_ / relative); }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

// Two packages of two nodes of two CPUs: cpu c is in node c/2 and package c/4.
void fourNodesTwoPackages(FakeSysfs& sys) {
  sys.online("0-7");
  for (unsigned n = 0; n < 4; ++n) sys.node(n, std::to_string(2 * n) + "-" + std::to_string(2 * n + 1));
  for (unsigned c = 0; c < 8; ++c) sys.package(c, static_cast<int>(c / 4));
}

// Nodes 0 and 1 of CPUs 0-1 and 2-3; node 1 in package 0 or 1.
void twoNodes(FakeSysfs& sys, int secondPackage) {
  sys.online("0-3");
  sys.node(0, "0-1");
  sys.node(1, "2-3");
  for (unsigned c = 0; c < 4; ++c) sys.package(c, c < 2 ? 0 : secondPackage);
}

Topology readOk(const FakeSysfs& sys) {
  Expected<Topology> t = Topology::read(sys.root());
  EXPECT_TRUE(t.hasValue()) << (t ? "" : t.error().message);
  return t ? *t : Topology();
}

std::vector<unsigned> sorted(std::vector<unsigned> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Every search of `order` visits each tier's workers, in tier order, each exactly once,
// and each tier's order changes between searches.
void expectTieredAndRotating(VictimOrder& order, const Tiers& tiers) {
  std::vector<std::set<std::vector<unsigned>>> seen(tiers.size());
  for (int round = 0; round < 60; ++round) {
    const std::vector<unsigned>& v = order.next();
    size_t at = 0;
    for (size_t k = 0; k < tiers.size(); ++k) {
      std::vector<unsigned> part(v.begin() + at, v.begin() + at + tiers[k].size());
      EXPECT_EQ(sorted(part), sorted(tiers[k])) << "tier " << k << " in round " << round;
      seen[k].insert(part);
      at += tiers[k].size();
    }
    EXPECT_EQ(at, v.size());
  }
  for (size_t k = 0; k < tiers.size(); ++k) {
    size_t permutations = 1;
    for (size_t i = 2; i <= tiers[k].size(); ++i) permutations *= i;
    // 60 draws from n! orders: a tier of 2 shows both, a tier of 4 most of its 24.
    EXPECT_GE(seen[k].size(), std::min<size_t>(permutations, 12)) << "tier " << k;
  }
}

TEST(SchedTopology, ParsesCpuLists) {
  EXPECT_EQ(*parseCpuList("0-3,8,10-11\n"), (std::vector<unsigned>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*parseCpuList("5"), (std::vector<unsigned>{5}));
  EXPECT_TRUE(parseCpuList("\n")->empty());  // a node without CPUs
  for (const char* bad : {"a", "3-1", "1,", "1-", "-1", "1--2", "0-99999999", "1 2", ",1", "0x3"})
    EXPECT_FALSE(parseCpuList(bad).hasValue()) << bad;
}

TEST(SchedTopology, TwoNodesInTwoPackages) {
  FakeSysfs sys;
  twoNodes(sys, 1);
  Topology t = readOk(sys);
  EXPECT_FALSE(t.flat());
  EXPECT_TRUE(t.multiNode());
  EXPECT_EQ(t.victimTiers(0, 4), (Tiers{{1}, {2, 3}}));
  EXPECT_EQ(t.victimTiers(3, 4), (Tiers{{2}, {0, 1}}));
}

TEST(SchedTopology, TwoSocketsWithoutNodes) {
  FakeSysfs sys;  // no devices/system/node: every CPU in node 0
  sys.online("0-5");
  for (unsigned c = 0; c < 6; ++c) sys.package(c, c < 3 ? 0 : 1);
  Topology t = readOk(sys);
  EXPECT_FALSE(t.flat());
  EXPECT_FALSE(t.multiNode());
  EXPECT_EQ(t.victimTiers(1, 6), (Tiers{{0, 2}, {3, 4, 5}}));
  EXPECT_EQ(t.victimTiers(4, 6), (Tiers{{3, 5}, {0, 1, 2}}));
}

TEST(SchedTopology, NodeThenPackageThenTheRest) {
  FakeSysfs sys;
  fourNodesTwoPackages(sys);
  Topology t = readOk(sys);
  EXPECT_EQ(t.victimTiers(0, 8), (Tiers{{1}, {2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(t.victimTiers(5, 8), (Tiers{{4}, {6, 7}, {0, 1, 2, 3}}));
}

TEST(SchedTopology, VictimOrderKeepsTiersAndRotatesWithinThem) {
  FakeSysfs sys;
  fourNodesTwoPackages(sys);
  Topology t = readOk(sys);
  for (unsigned self : {0u, 6u}) {
    Tiers tiers = t.victimTiers(self, 8);
    VictimOrder order(tiers, 42 + self);
    expectTieredAndRotating(order, tiers);
  }
}

TEST(SchedTopology, TheSameSeedGivesTheSameOrdersFlatOrTiered) {
  FakeSysfs sys;
  fourNodesTwoPackages(sys);
  for (const Tiers& tiers : {Topology().victimTiers(2, 8), readOk(sys).victimTiers(2, 8)}) {
    VictimOrder a(tiers, 7), b(tiers, 7), c(tiers, 8);
    bool differs = false;
    for (int round = 0; round < 20; ++round) {
      const auto& va = a.next();
      EXPECT_EQ(va, b.next());
      differs |= va != c.next();
    }
    EXPECT_TRUE(differs) << tiers.size() << " tier(s)";
  }
}

// Workers fill the CPUs in node order, whatever the kernel's numbering, and wrap around
// when there are more workers than CPUs.
TEST(SchedTopology, WorkersFillNodesInOrderAndWrap) {
  FakeSysfs sys;
  sys.online("0-3");
  sys.node(0, "0,2");
  sys.node(1, "1,3");
  for (unsigned c = 0; c < 4; ++c) sys.package(c, 0);
  Topology t = readOk(sys);
  std::vector<unsigned> order;
  for (const CpuPlace& p : t.cpus()) order.push_back(p.cpu);
  EXPECT_EQ(order, (std::vector<unsigned>{0, 2, 1, 3}));
  EXPECT_EQ(t.victimTiers(0, 4), (Tiers{{1}, {2, 3}}));  // one package: node, then the rest
  // Six workers on four CPUs: workers 0, 1, 4, 5 in node 0; 2, 3 in node 1.
  EXPECT_EQ(t.victimTiers(0, 6), (Tiers{{1, 4, 5}, {2, 3}}));
  EXPECT_EQ(t.victimTiers(3, 6), (Tiers{{2}, {0, 1, 4, 5}}));
}

TEST(SchedTopology, OneNodeOnePackageIsFlat) {
  FakeSysfs sys;
  sys.online("0-3");
  sys.node(0, "0-3");
  for (unsigned c = 0; c < 4; ++c) sys.package(c, 0);
  Topology t = readOk(sys);
  EXPECT_TRUE(t.flat());
  EXPECT_TRUE(t.cpus().empty());
  EXPECT_EQ(t.victimTiers(2, 4), (Tiers{{0, 1, 3}}));
  EXPECT_EQ(Topology().victimTiers(0, 1), Tiers{});  // alone: nobody to visit
}

TEST(SchedTopology, MissingOrMalformedTreesAreRefused) {
  EXPECT_FALSE(Topology::read("/nonexistent/weft-sysfs").hasValue());
  using Spoil = std::function<void(FakeSysfs&)>;
  std::map<std::string, Spoil> spoilers{
      {"no online file", [](FakeSysfs& s) { s.remove("devices/system/cpu/online"); }},
      {"bad online list", [](FakeSysfs& s) { s.online("0-"); }},
      {"no online CPU", [](FakeSysfs& s) { s.online(""); }},
      {"bad node list", [](FakeSysfs& s) { s.node(1, "4-x"); }},
      {"node without cpulist", [](FakeSysfs& s) { s.remove("devices/system/node/node2/cpulist"); }},
      {"CPU in no node", [](FakeSysfs& s) { s.node(3, "6"); }},
      {"CPU in two nodes", [](FakeSysfs& s) { s.node(3, "5-7"); }},
      {"no package id", [](FakeSysfs& s) { s.remove(packageFile(5)); }},
      {"bad package id", [](FakeSysfs& s) { s.write(packageFile(1), "one\n"); }},
  };
  for (const auto& [what, spoil] : spoilers) {
    FakeSysfs sys;
    fourNodesTwoPackages(sys);
    ASSERT_TRUE(Topology::read(sys.root()).hasValue()) << what;
    spoil(sys);
    EXPECT_FALSE(Topology::read(sys.root()).hasValue()) << what;
  }
}

std::vector<unsigned> threadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<unsigned> out;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
  return out;
}

// Two of this machine's CPUs as two nodes, and a third node of CPUs it does not have:
// a thread is bound to its worker's node, and to every allowed CPU when the node has
// none (undoing the previous pin). One package or two nodes: no pinning at all.
TEST(SchedTopology, PinsThreadsToTheirWorkersNode) {
  std::vector<unsigned> allowed = threadCpus();
  if (allowed.size() < 2) GTEST_SKIP() << "needs two CPUs";
  unsigned a = allowed[0], b = allowed[1], absent = 4000;
  FakeSysfs sys;
  sys.online(std::to_string(a) + "," + std::to_string(b) + "," + std::to_string(absent));
  sys.node(0, std::to_string(a));
  sys.node(1, std::to_string(b));
  sys.node(2, std::to_string(absent));
  for (unsigned c : {a, b, absent}) sys.package(c, 0);
  Topology t = readOk(sys);
  ASSERT_TRUE(t.multiNode());
  std::thread([&] {
    t.pinThread(0);
    EXPECT_EQ(threadCpus(), std::vector<unsigned>{a});
    t.pinThread(4);  // 3 CPUs: worker 4 is on the second, node 1
    EXPECT_EQ(threadCpus(), std::vector<unsigned>{b});
    t.pinThread(2);  // node 2: no CPU here
    EXPECT_EQ(threadCpus(), allowed);
  }).join();
  EXPECT_EQ(threadCpus(), allowed);  // only the calling thread moves

  FakeSysfs twoPackages;
  twoPackages.online(std::to_string(a) + "," + std::to_string(b));
  twoPackages.package(a, 0);
  twoPackages.package(b, 1);
  Topology flatNodes = readOk(twoPackages);
  std::thread([&] {
    flatNodes.pinThread(0);
    EXPECT_EQ(threadCpus(), allowed);
  }).join();
}

// The scheduler reads the tree WEFT_SYSFS_ROOT names: flat when it cannot, tiered when
// it can, and it runs tasks either way (the fake CPUs 2 and 3 do not exist here: pinning
// to node 1 finds no CPU and leaves those threads alone).
class SchedTopologyEnv : public testing::Test {
 protected:
  void TearDown() override { ::unsetenv(kSysfsRootVariable); }
};

TEST_F(SchedTopologyEnv, TheSchedulerOrdersVictimsByTheTreeItIsPointedAt) {
  FakeSysfs sys;
  twoNodes(sys, 0);
  ASSERT_EQ(::setenv(kSysfsRootVariable, sys.root().c_str(), 1), 0);
  TestExecutor ex;
  Scheduler s({.workers = 4, .seed = 3}, ex);
  auto& in = SchedulerInternals::of(s);
  EXPECT_TRUE(in.topology.flat());  // read when the workers start
  in.readTopology();                // as start() does, here before any worker runs
  EXPECT_TRUE(in.topology.multiNode());
  for (int round = 0; round < 10; ++round) {
    std::vector<unsigned> v = in.cores[2]->victims.next();
    ASSERT_EQ(v.size(), 3u);
    EXPECT_EQ(v[0], 3u);
    EXPECT_EQ(sorted({v[1], v[2]}), (std::vector<unsigned>{0, 1}));
  }
  ASSERT_TRUE(s.start().isOk());
  std::vector<TaskRef> tasks;
  for (int i = 0; i < 200; ++i) {
    tasks.push_back(makeTask([](Worker&, FnTask& t) {
      return t.dispatches.load() < 3 ? RunOutcome::kYielded : RunOutcome::kCompleted;
    }));
    ASSERT_TRUE(s.spawn(tasks.back().get()));
  }
  ASSERT_TRUE(waitUntil([&] { return std::all_of(tasks.begin(), tasks.end(),
                                                 [](const TaskRef& t) { return isTerminal(t->state()); }); },
                        "every task to complete"));
}

TEST_F(SchedTopologyEnv, AnUnreadableTreeGivesTheFlatOrder) {
  ASSERT_EQ(::setenv(kSysfsRootVariable, "/nonexistent/weft-sysfs", 1), 0);
  TestExecutor ex;
  Scheduler s({.workers = 4, .seed = 3}, ex);
  auto& in = SchedulerInternals::of(s);
  in.readTopology();
  EXPECT_TRUE(in.topology.flat());
  // One tier: over a few searches, worker 1's first victim is sometimes each sibling.
  std::set<unsigned> firsts;
  for (int round = 0; round < 40; ++round) firsts.insert(in.cores[1]->victims.next()[0]);
  EXPECT_EQ(firsts, (std::set<unsigned>{0, 2, 3}));
}

}  // namespace
}  // namespace weft::runtime::test
