// The schedule explorer (protocol in explore.h).
#include "tools/weft/explore.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/sched/schedule_file.h"

namespace weft::cli {
namespace {

struct RunResult {
  int status = 0;  // the exit status (128 + n for signal n)
  std::string out;
  std::string err;
  runtime::Schedule schedule;
};

// The user's command line without the explorer's own options: each child adds its own.
std::vector<std::string> userArgs(int argc, char** argv, int scriptIndex) {
  static const char* const kValued[] = {"--explore", "--explore-depth", "--record", "--replay", "--det-pct",
                                        "--det-prefix"};
  std::vector<std::string> args;
  int end = scriptIndex > 0 ? scriptIndex : argc;
  for (int i = 1; i < end; i++) {
    std::string arg = argv[i];
    if ((arg == "-e" || arg == "-l") && i + 1 < end) {
      args.push_back(arg);
      args.push_back(argv[++i]);
      continue;
    }
    std::string name = arg.substr(0, arg.find('='));
    if (name == "--explore-output" || name == "--deterministic") continue;
    bool valued = false;
    for (const char* v : kValued) valued = valued || name == v;
    if (!valued) {
      args.push_back(arg);
      continue;
    }
    if (arg == name) i++;  // its value is the next argument
  }
  for (int i = end; i < argc; i++) args.push_back(argv[i]);
  return args;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class Explorer {
 public:
  Explorer(const CliOptions& options, int argc, char** argv)
      : options_(options), user_(userArgs(argc, argv, options.scriptIndex)) {
    char dir[] = "/tmp/weft-explore-XXXXXX";
    if (mkdtemp(dir)) dir_ = dir;
    record_ = options.det.recordPath.empty() ? kDefaultFailureSchedule : options.det.recordPath;
  }
  ~Explorer() {
    if (!dir_.empty()) {
      for (const char* f : {"/out", "/err", "/sched", "/prefix"}) std::remove((dir_ + f).c_str());
      rmdir(dir_.c_str());
    }
  }

  int run() {
    if (dir_.empty()) {
      std::fprintf(stderr, "%s: explore: cannot make a temporary directory\n", progName());
      return 1;
    }
    if (options_.exploreRuns == 0) return systematic();
    if (options_.exploreDepth > 0) return pct();
    for (uint64_t i = 0; i < options_.exploreRuns; i++) {
      uint64_t seed = seedBase() + i;
      RunResult r = runChild({"--deterministic=" + std::to_string(seed), "--det-uniform"});
      if (failed(r)) return report(r, "seed " + std::to_string(seed), i + 1);
    }
    return passed();
  }

 private:
  uint64_t seedBase() const { return options_.schedSeed ? options_.schedSeed : 1; }

  // PCT needs the number of steps a run takes: the default schedule's, measured first.
  int pct() {
    RunResult first = runPrefix({});
    if (failed(first)) return report(first, "the default schedule", 1);
    uint64_t steps = 0;
    for (const runtime::Decision& d : first.schedule.decisions) steps += d.kind == runtime::DecisionKind::kRun;
    std::string spec = std::to_string(options_.exploreDepth) + ":" + std::to_string(steps);
    for (uint64_t i = 1; i < options_.exploreRuns; i++) {
      uint64_t seed = seedBase() + i;
      RunResult r = runChild({"--deterministic=" + std::to_string(seed), "--det-pct=" + spec});
      if (failed(r)) return report(r, "PCT depth " + std::to_string(options_.exploreDepth) + ", seed " + std::to_string(seed), i + 1);
    }
    return passed();
  }

  // Every schedule that differs from the default one in at most exploreDepth decisions,
  // depth first: each run's recorded candidate counts give the alternatives after its
  // prefix.
  int systematic() {
    struct Pending {
      std::vector<runtime::Decision> prefix;
      uint32_t changes;
    };
    std::vector<Pending> stack{{{}, 0}};
    uint64_t count = 0;
    while (!stack.empty()) {
      Pending p = std::move(stack.back());
      stack.pop_back();
      RunResult r = runPrefix(p.prefix);
      if (failed(r)) return report(r, std::to_string(p.changes) + " changed decisions", ++count);
      ++count;
      if (p.changes >= options_.exploreDepth) continue;
      const std::vector<runtime::Decision>& ds = r.schedule.decisions;
      for (size_t j = ds.size(); j-- > p.prefix.size();) {
        for (uint32_t a = ds[j].size; a-- > 0;) {
          if (a == ds[j].index) continue;
          Pending next{std::vector<runtime::Decision>(ds.begin(), ds.begin() + long(j)), p.changes + 1};
          runtime::Decision d = ds[j];
          d.index = a;
          next.prefix.push_back(d);
          stack.push_back(std::move(next));
        }
      }
    }
    return passed();
  }

  RunResult runPrefix(const std::vector<runtime::Decision>& prefix) {
    runtime::Schedule s;
    s.seed = seedBase();
    s.decisions = prefix;
    std::string error;
    std::string path = dir_ + "/prefix";
    if (!runtime::writeScheduleFile(path, runtime::encodeSchedule(s), error)) {
      RunResult r;
      r.status = 1;
      r.err = error;
      return r;
    }
    return runChild({"--det-prefix=" + path});
  }

  RunResult runChild(const std::vector<std::string>& strategy) {
    std::vector<std::string> args{progName(), "--record=" + dir_ + "/sched"};
    // One worker unless the user chose: races between plain statements of two tasks on
    // a shared table (--explore-budget) are then part of the schedule too.
    bool workersGiven = std::any_of(user_.begin(), user_.end(),
                                    [](const std::string& a) { return a.rfind("--workers", 0) == 0; });
    if (!workersGiven) args.push_back("--workers=1");
    args.insert(args.end(), strategy.begin(), strategy.end());
    args.insert(args.end(), user_.begin(), user_.end());
    std::remove((dir_ + "/sched").c_str());
    RunResult r;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      std::vector<char*> cargs;
      for (std::string& a : args) cargs.push_back(a.data());
      cargs.push_back(nullptr);
      if (!std::freopen((dir_ + "/out").c_str(), "wb", stdout) || !std::freopen((dir_ + "/err").c_str(), "wb", stderr)) {
        _exit(127);
      }
      execv("/proc/self/exe", cargs.data());
      _exit(127);
    }
    int wstatus = 0;
    if (pid < 0 || waitpid(pid, &wstatus, 0) < 0) {
      r.status = 127;
      return r;
    }
    r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    r.out = slurp(dir_ + "/out");
    r.err = slurp(dir_ + "/err");
    std::string error;
    runtime::readScheduleFile(dir_ + "/sched", r.schedule, error);
    distinct_.insert(runtime::encodeSchedule(r.schedule));
    if (!haveFirst_) {
      firstOut_ = r.out;
      haveFirst_ = true;
    }
    return r;
  }

  bool failed(const RunResult& r) const {
    return r.status != 0 || (options_.exploreOutput && r.out != firstOut_);
  }

  // The shortest prefix of the failing schedule after which the default (no preemption)
  // still fails the same way: a binary search over its length.
  RunResult shrink(RunResult failing) {
    std::vector<runtime::Decision> ds = failing.schedule.decisions;
    size_t lo = 0, hi = ds.size();
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      RunResult r = runPrefix(std::vector<runtime::Decision>(ds.begin(), ds.begin() + long(mid)));
      if (failed(r) && r.status == failing.status) {
        hi = mid;
        failing = std::move(r);
      } else {
        lo = mid + 1;
      }
    }
    return failing;
  }

  int report(RunResult r, const std::string& what, uint64_t index) {
    r = shrink(std::move(r));
    std::fwrite(r.out.data(), 1, r.out.size(), stdout);
    std::fflush(stdout);
    std::fwrite(r.err.data(), 1, r.err.size(), stderr);
    std::string error;
    bool written = runtime::writeScheduleFile(record_, runtime::encodeSchedule(r.schedule), error);
    std::fprintf(stderr, "%s: explore: schedule %llu failed (%s, exit status %d%s)\n", progName(),
                 static_cast<unsigned long long>(index), what.c_str(), r.status,
                 options_.exploreOutput && r.out != firstOut_ ? ", output differs from the first run" : "");
    if (written) {
      std::fprintf(stderr, "%s: explore: its schedule (%zu decisions) is in %s; rerun it with --replay=%s\n",
                   progName(), r.schedule.decisions.size(), record_.c_str(), record_.c_str());
    } else {
      std::fprintf(stderr, "%s: explore: %s\n", progName(), error.c_str());
    }
    return r.status != 0 ? r.status : 1;
  }

  int passed() {
    std::fprintf(stderr, "%s: explore: every schedule passed (%zu distinct)\n", progName(), distinct_.size());
    return 0;
  }

  const CliOptions& options_;
  std::vector<std::string> user_;
  std::string dir_;
  std::string record_;
  std::set<std::string> distinct_;
  std::string firstOut_;
  bool haveFirst_ = false;
};

}  // namespace

int explore(const CliOptions& options, int argc, char** argv) { return Explorer(options, argc, argv).run(); }

}  // namespace weft::cli
