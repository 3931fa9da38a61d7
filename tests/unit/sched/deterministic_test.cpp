// Deterministic mode's scheduler side (deterministic.h, schedule_file.h): the schedule
// format, the coordinator's steps, logical timers, replay divergence and the strategies.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "runtime/sched/schedule_file.h"
#include "runtime/sched/task_ring.h"
#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

Schedule sampleSchedule() {
  Schedule s;
  s.seed = 0x1234567890abcdefull;
  s.budget = 10000;
  s.decisions = {{DecisionKind::kRun, 2, 3, 0xbeef}, {DecisionKind::kSelect, 0, 2, 0},
                 {DecisionKind::kRun, 0, 1, 7}, {DecisionKind::kRun, 70000, 1u << 20, 0xffff},
                 {DecisionKind::kSelect, 1, 5, 1}};
  return s;
}

TEST(SchedScheduleFile, RoundTripsEveryField) {
  Schedule in = sampleSchedule();
  Schedule out;
  std::string error;
  ASSERT_TRUE(decodeSchedule(encodeSchedule(in), out, error)) << error;
  EXPECT_EQ(out.seed, in.seed);
  EXPECT_EQ(out.budget, in.budget);
  ASSERT_EQ(out.decisions.size(), in.decisions.size());
  for (size_t i = 0; i < in.decisions.size(); i++) {
    EXPECT_EQ(out.decisions[i].kind, in.decisions[i].kind);
    EXPECT_EQ(out.decisions[i].index, in.decisions[i].index);
    EXPECT_EQ(out.decisions[i].size, in.decisions[i].size);
    EXPECT_EQ(out.decisions[i].setHash, in.decisions[i].setHash);
  }
}

TEST(SchedScheduleFile, RefusesEveryDamagedByte) {
  std::string bytes = encodeSchedule(sampleSchedule());
  for (size_t i = 0; i < bytes.size(); i++) {
    std::string damaged = bytes;
    damaged[i] = char(damaged[i] ^ 0x10);
    Schedule out;
    std::string error;
    EXPECT_FALSE(decodeSchedule(damaged, out, error)) << "byte " << i;
    EXPECT_FALSE(error.empty());
  }
  for (size_t n = 0; n < bytes.size(); n++) {
    Schedule out;
    std::string error;
    EXPECT_FALSE(decodeSchedule(bytes.substr(0, n), out, error)) << "truncated to " << n;
  }
}

// A recording of more decisions than one buffer holds, streamed to its file piece by
// piece with its checksum streamed across the pieces, is byte for byte the in-memory
// file, at about 4 bytes a decision (version 1 took 8 to 12).
TEST(SchedScheduleFile, AStreamedRecordingIsTheInMemoryFile) {
  constexpr uint32_t kDecisions = 600000;  // about 2.4 MB: several buffers
  auto decision = [](uint32_t i) {
    return Decision{DecisionKind(i % 2), i % 5, 5 + (i * 7) % 300, uint16_t(i * 2654435761u)};
  };
  std::string path = ::testing::TempDir() + "weft-recording-test.sched";
  ScheduleWriter streamed(42, 10000), inMemory(42, 10000);
  streamed.streamTo(path);
  for (uint32_t i = 0; i < kDecisions; i++) {
    streamed.add(decision(i));
    inMemory.add(decision(i));
  }
  std::string error;
  ASSERT_TRUE(streamed.finishFile(error)) << error;
  std::string finished = inMemory.finish();
  EXPECT_LT(finished.size(), size_t(kDecisions) * 5);
  FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string written(finished.size() + 1, '\0');
  written.resize(std::fread(written.data(), 1, written.size(), f));
  std::fclose(f);
  std::remove(path.c_str());
  EXPECT_TRUE(written == finished) << "written " << written.size() << " bytes, finished " << finished.size();
  Schedule out;
  ASSERT_TRUE(decodeSchedule(written, out, error)) << error;
  ASSERT_EQ(out.decisions.size(), kDecisions);
  for (uint32_t i : {0u, 1u, 299u, kDecisions - 1}) {
    Decision want = decision(i);
    EXPECT_EQ(out.decisions[i].kind, want.kind);
    EXPECT_EQ(out.decisions[i].index, want.index);
    EXPECT_EQ(out.decisions[i].size, want.size) << i;
    EXPECT_EQ(out.decisions[i].setHash, want.setHash);
  }
}

// A recording the writer cannot create is an error when it ends, not a crash.
TEST(SchedScheduleFile, AnUnwritablePathIsAnErrorAtTheEnd) {
  ScheduleWriter w(1, 100);
  w.streamTo("/nonexistent-dir/weft.sched");
  w.add(Decision{DecisionKind::kRun, 1, 2, 3});
  std::string error;
  EXPECT_FALSE(w.finishFile(error));
  EXPECT_NE(error.find("cannot write the schedule to '/nonexistent-dir/weft.sched'"), std::string::npos) << error;
}

// Version 1 files (a kind byte, a 4-byte hash and the chosen task's id per decision)
// are still read; their hashes fold to the 16 bits version 2 records.
TEST(SchedScheduleFile, ReadsVersionOne) {
  std::string v1("WEFTSCHD", 8);
  v1.push_back(1);
  for (int i = 0; i < 8; i++) v1.push_back(char(i == 0 ? 9 : 0));  // seed 9
  v1.push_back(char(100));  // budget
  v1 += std::string("\x00\x02\x03\xef\xbe\xad\xde\x11", 8);  // kRun 2 of 3, hash, chosen 17
  v1 += std::string("\x01\x00\x02\x00\x00\x00\x00\x00", 8);  // kSelect 0 of 2
  ScheduleChecksum sum;
  sum.update(v1.data(), v1.size());
  uint64_t value = sum.value();
  for (int i = 0; i < 8; i++) v1.push_back(char(uint8_t(value >> (8 * i))));
  Schedule out;
  std::string error;
  ASSERT_TRUE(decodeSchedule(v1, out, error)) << error;
  EXPECT_EQ(out.seed, 9u);
  EXPECT_EQ(out.budget, 100u);
  ASSERT_EQ(out.decisions.size(), 2u);
  EXPECT_EQ(out.decisions[0].index, 2u);
  EXPECT_EQ(out.decisions[0].size, 3u);
  EXPECT_EQ(out.decisions[0].setHash, foldSetHash(0xdeadbeef));
  EXPECT_EQ(out.decisions[1].kind, DecisionKind::kSelect);
  EXPECT_EQ(out.decisions[1].size, 2u);
}

// The candidates' ring against std::deque: the same order through wraps, growth and
// erasure from either half.
TEST(SchedTaskRing, KeepsTheOrderOfADequeThroughWrapsGrowthAndErasures) {
  TaskRing ring;
  std::deque<Task*> model;
  Rng rng(7);
  for (uintptr_t i = 1; i <= 20000; i++) {
    auto* t = reinterpret_cast<Task*>(i * 8);
    uint64_t op = rng.below(8);
    if (op < 3) {
      ring.pushBack(t);
      model.push_back(t);
    } else if (op < 5) {
      ring.pushFront(t);
      model.push_front(t);
    } else if (!model.empty()) {
      size_t at = op == 5 ? model.size() - 1 : size_t(rng.below(model.size()));
      EXPECT_EQ(ring.find(model[at]), at);
      ring.erase(at);
      model.erase(model.begin() + ptrdiff_t(at));
    }
    ASSERT_EQ(ring.size(), model.size());
    if (i % 97 == 0) {
      for (size_t k = 0; k < model.size(); k++) ASSERT_EQ(ring[k], model[k]) << "at " << k << " after op " << i;
    }
  }
  std::vector<Task*> drained;
  ring.drainTo(drained);
  EXPECT_TRUE(ring.empty());
  EXPECT_TRUE(std::equal(drained.begin(), drained.end(), model.begin(), model.end()));
}

// A deterministic scheduler whose inline waiter is a plain task: runInline has the others
// dispatched on a spare thread.
struct DetFixture {
  explicit DetFixture(DeterministicOptions det, int32_t slice = 100) {
    det.enabled = true;
    SchedulerOptions o;
    o.workers = 1;
    o.slice = slice;
    o.deterministic = det;
    sched = std::make_unique<Scheduler>(o, exec);
    EXPECT_TRUE(sched->start().isOk());
  }
  TestExecutor exec;
  std::unique_ptr<Scheduler> sched;
};

// Runs `n` tasks that log their id at each dispatch and finish after `steps` dispatches.
std::vector<uint64_t> runLogged(DeterministicOptions det, int n, int steps) {
  DetFixture f(det);
  std::vector<uint64_t> log;
  std::vector<TaskRef> tasks;
  for (int i = 0; i < n; i++) {
    tasks.push_back(makeTask([&log, steps](Worker&, FnTask& t) {
      log.push_back(t.id());
      return t.dispatches.load() >= steps ? RunOutcome::kCompleted : RunOutcome::kYielded;
    }));
    f.sched->spawn(tasks.back().get());
  }
  TaskRef waiter = makeTask();
  EXPECT_EQ(f.sched->runInline(waiter.get(), [&] {
    for (auto& t : tasks)
      if (t->state() != TaskState::kCompleted) return false;
    return true;
  }), InlineRun::kChosen);
  // Ids differ between runs (a process-wide counter): report them relative to the first.
  uint64_t first = tasks.front()->id();
  for (uint64_t& id : log) id -= first;
  f.sched->shutdown();
  return log;
}

TEST(SchedDeterministic, TheSameSeedMakesTheSameSteps) {
  DeterministicOptions det;
  det.seed = 42;
  std::vector<uint64_t> a = runLogged(det, 5, 4), b = runLogged(det, 5, 4);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 20u);
  bool differs = false;
  for (uint64_t s = 43; s < 53 && !differs; s++) {
    det.seed = s;
    differs = runLogged(det, 5, 4) != a;
  }
  EXPECT_TRUE(differs) << "ten other seeds made the same schedule";
}

TEST(SchedDeterministic, APrefixWithoutChoicesNeverPreempts) {
  DeterministicOptions det;
  det.strategy = DetStrategy::kPrefix;
  std::vector<uint64_t> log = runLogged(det, 3, 3);
  // Each task goes on while it can, then the first candidate runs.
  EXPECT_EQ(log, (std::vector<uint64_t>{0, 0, 0, 1, 1, 1, 2, 2, 2}));
}

TEST(SchedDeterministic, TimersFireOnTheLogicalClockInDeadlineOrder) {
  DeterministicOptions det;
  DetFixture f(det);
  std::vector<int> fired;
  Clock::time_point base = f.sched->now();
  f.sched->addTimer(base + std::chrono::seconds(30), [&] { fired.push_back(3); });
  TimerId cancelled = f.sched->addTimer(base + std::chrono::seconds(20), [&] { fired.push_back(2); });
  f.sched->addTimer(base + std::chrono::seconds(10), [&] { fired.push_back(1); });
  EXPECT_TRUE(f.sched->cancelTimer(cancelled));
  TaskRef waiter = makeTask();
  EXPECT_EQ(f.sched->runInline(waiter.get(), [&] { return fired.size() == 2; }), InlineRun::kChosen);
  EXPECT_EQ(fired, (std::vector<int>{1, 3}));
  EXPECT_GE(f.sched->now() - base, std::chrono::seconds(30));
  // Nothing can run and no timer is left: a deadlock, not a hang.
  EXPECT_EQ(f.sched->runInline(waiter.get(), [] { return false; }), InlineRun::kDeadlock);
  f.sched->shutdown();
}

// A task waits inline (under a native frame, as a sort comparator would) for what only
// the host's waiter does after its own wait: the host must go on while that task still
// waits. Its step ran on a spare, so the host's frames were never below it.
TEST(SchedDeterministic, AnInlineWaitOfATaskLetsTheHostGoOnFirst) {
  DeterministicOptions det;
  DetFixture f(det);
  std::atomic<bool> hostWentOn{false};
  std::thread::id ranOn;
  TaskRef a = makeTask([&](Worker&, FnTask& t) {
    ranOn = std::this_thread::get_id();
    EXPECT_EQ(f.sched->runInline(&t, [&] { return hostWentOn.load(); }), InlineRun::kChosen);
    return RunOutcome::kCompleted;
  });
  f.sched->spawn(a.get());
  TaskRef host = makeTask();
  EXPECT_EQ(f.sched->runInline(host.get(), [&] { return a->dispatches.load() > 0; }), InlineRun::kChosen);
  EXPECT_NE(a->state(), TaskState::kCompleted) << "a's wait ended before the host went on";
  hostWentOn = true;
  EXPECT_EQ(f.sched->runInline(host.get(), [&] { return a->state() == TaskState::kCompleted; }), InlineRun::kChosen);
  EXPECT_NE(ranOn, std::this_thread::get_id()) << "a's step ran on the host's thread";
  f.sched->shutdown();
}

TEST(SchedDeterministic, AReplayThatMeetsOtherCandidatesDiverges) {
  DeterministicOptions det;
  det.strategy = DetStrategy::kReplay;
  det.script.decisions = {{DecisionKind::kRun, 0, 5, 0}};  // five candidates recorded
  DetFixture f(det);
  TaskRef a = makeTask([](Worker&, FnTask&) { return RunOutcome::kCompleted; });
  TaskRef b = makeTask([](Worker&, FnTask&) { return RunOutcome::kCompleted; });
  f.sched->spawn(a.get());
  f.sched->spawn(b.get());  // two candidates: a choice, which the recording has with five
  TaskRef waiter = makeTask();
  EXPECT_EQ(f.sched->runInline(waiter.get(), [] { return false; }), InlineRun::kDiverged);
  EXPECT_NE(f.sched->divergence().find("at step 1"), std::string::npos) << f.sched->divergence();
  f.sched->shutdown();
}

TEST(SchedDeterministic, PctRunsTheHighestPriorityTaskToItsEnd) {
  DeterministicOptions det;
  det.strategy = DetStrategy::kPct;
  det.pctDepth = 1;  // no change points: strict priorities
  det.seed = 9;
  std::vector<uint64_t> log = runLogged(det, 4, 3);
  ASSERT_EQ(log.size(), 12u);
  for (size_t i = 0; i < log.size(); i += 3) {
    EXPECT_EQ(log[i], log[i + 1]);
    EXPECT_EQ(log[i], log[i + 2]);
  }
}

}  // namespace
}  // namespace weft::runtime::test
