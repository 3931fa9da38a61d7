// Telemetry of the scheduler (docs/design/telemetry.md): the logarithmic
// histograms, the sampled ready-to-run delay, timer lateness and the trace of
// dispatch spans.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "runtime/sched/histogram.h"
#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

bool allComplete(const std::vector<TaskRef>& tasks) {
  return waitUntil(
      [&] {
        return std::all_of(tasks.begin(), tasks.end(), [](auto& t) { return t->state() == TaskState::kCompleted; });
      },
      "the tasks to complete");
}

TEST(SchedHistogram, BucketsArePowersOfTwoFrom256Nanoseconds) {
  EXPECT_EQ(histogramBucket(0), 0u);
  EXPECT_EQ(histogramBucket(255), 0u);
  EXPECT_EQ(histogramBucket(256), 1u);
  EXPECT_EQ(histogramBucket(511), 1u);
  EXPECT_EQ(histogramBucket(512), 2u);
  EXPECT_EQ(histogramBound(0), 256u);
  EXPECT_EQ(histogramBound(1), 512u);
  // Every value lies below its bucket's bound and at or above the previous one.
  for (uint64_t v : {1ull, 300ull, 1000ull, 123456ull, 1ull << 30, (1ull << 34) - 1}) {
    unsigned b = histogramBucket(v);
    EXPECT_LT(v, histogramBound(b)) << v;
    if (b > 0) EXPECT_GE(v, histogramBound(b - 1)) << v;
  }
  // The last bucket takes everything from 2^34 ns (17 s) on and has no bound.
  EXPECT_EQ(histogramBucket(1ull << 34), kHistogramBuckets - 1);
  EXPECT_EQ(histogramBucket(UINT64_MAX), kHistogramBuckets - 1);
  EXPECT_EQ(histogramBound(kHistogramBuckets - 1), 0u);
}

TEST(SchedHistogram, QuantilesAreBucketBoundsCappedByTheMaximum) {
  LogHistogram h;
  EXPECT_EQ(h.snapshot().quantileNanos(0.5), 0u);
  for (int i = 0; i < 90; ++i) h.record(1000);  // bucket [512, 1024)
  for (int i = 0; i < 10; ++i) h.record(100000);
  HistogramSnapshot s = h.snapshot();
  EXPECT_EQ(s.count, 100u);
  EXPECT_EQ(s.sumNanos, 90u * 1000 + 10u * 100000);
  EXPECT_EQ(s.maxNanos, 100000u);
  EXPECT_EQ(s.quantileNanos(0.5), 1024u);
  EXPECT_EQ(s.quantileNanos(0.99),
            100000u);  // its bucket's bound (131072) is above the max
  HistogramSnapshot twice = s;
  twice.merge(s);
  EXPECT_EQ(twice.count, 200u);
  EXPECT_EQ(twice.counts[histogramBucket(1000)], 180u);
  EXPECT_EQ(twice.maxNanos, 100000u);
}

// Tasks woken after a known delay: the sampled ready delays are recorded, and
// none is shorter than the time the test kept the woken task from a worker.
TEST(SchedTelemetry, ReadyDelayIsSampledOncePerSixteenPublications) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  ASSERT_TRUE(s.start().isOk());
  constexpr int kTasks = 400;
  std::vector<TaskRef> tasks;
  for (int i = 0; i < kTasks; ++i) {
    tasks.push_back(makeTask());
    ASSERT_TRUE(s.spawn(tasks.back().get()));  // from outside: one publication each
  }
  ASSERT_TRUE(allComplete(tasks));
  HistogramSnapshot d = s.stats()[0].readyDelay;
  EXPECT_EQ(d.count, uint64_t(kTasks / kReadySampleEvery));
  uint64_t inBuckets = 0;
  for (uint64_t c : d.counts) inBuckets += c;
  EXPECT_EQ(inBuckets, d.count);
  s.shutdown();
}

TEST(SchedTelemetry, TimerLatenessIsRecordedPerTimer) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 1}, ex);
  ASSERT_TRUE(s.start().isOk());
  std::atomic<int> fired{0};
  for (int i = 0; i < 5; ++i) s.addTimer(Clock::now() + 1ms, [&] { fired.fetch_add(1); });
  ASSERT_TRUE(waitUntil([&] { return fired.load() == 5; }, "the timers to fire"));
  HistogramSnapshot late = s.timerLateness();
  EXPECT_EQ(late.count, 5u);
  EXPECT_LT(late.quantileNanos(0.5), uint64_t(std::chrono::nanoseconds(1s).count()));
  s.shutdown();
}

TEST(SchedTelemetry, TheTraceHasOneSpanPerDispatchInOrder) {
  TestExecutor ex;
  Scheduler s({.workers = 2, .seed = 4, .trace = true}, ex);
  std::vector<TaskRef> tasks;
  for (int i = 0; i < 20; ++i) {
    tasks.push_back(makeTask(
        [](Worker&, FnTask& t) { return t.dispatches.load() < 3 ? RunOutcome::kYielded : RunOutcome::kCompleted; }));
    ASSERT_TRUE(s.spawn(tasks.back().get()));
  }
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(allComplete(tasks));
  s.shutdown();
  size_t spans = 0, completed = 0;
  for (unsigned w = 0; w < 2; ++w) {
    uint64_t dropped = 1;
    std::vector<TraceEvent> events = s.trace(w, dropped);
    EXPECT_EQ(dropped, 0u);
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_LE(events[i].startNanos, events[i].endNanos);
      if (i > 0) EXPECT_LE(events[i - 1].endNanos, events[i].startNanos) << "a worker runs one span at a time";
      EXPECT_TRUE(events[i].how == TraceSpan::kYielded || events[i].how == TraceSpan::kCompleted);
      completed += events[i].how == TraceSpan::kCompleted;
    }
    spans += events.size();
  }
  EXPECT_EQ(spans, 60u);  // 20 tasks, 3 dispatches each
  EXPECT_EQ(completed, 20u);
}

// A dispatch that blocks in a region is cut: the worker's other tasks run
// between its two spans (the second one starts when the thread holds the worker
// again).
TEST(SchedTelemetry, ABlockingRegionCutsTheDispatchSpan) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 2, .trace = true}, ex);
  TaskRef child = makeTask();
  TaskRef parent = makeTask([&](Worker& w, FnTask&) {
    EXPECT_TRUE(s.spawn(child.get()));
    EXPECT_TRUE(s.enterBlocking(w, Blocking::kOs).isOk());
    EXPECT_TRUE(waitUntil([&] { return child->state() == TaskState::kCompleted; }, "the child to run meanwhile"));
    s.leaveBlocking(w);
    return RunOutcome::kCompleted;
  });
  ASSERT_TRUE(s.spawn(parent.get()));
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(waitUntil([&] { return parent->state() == TaskState::kCompleted; }, "the parent to complete"));
  s.shutdown();
  uint64_t dropped = 0;
  std::vector<TraceEvent> events = s.trace(0, dropped);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].task, parent->id());
  EXPECT_EQ(events[0].how, TraceSpan::kBlocked);
  EXPECT_EQ(events[1].task, child->id());
  EXPECT_EQ(events[2].task, parent->id());
  EXPECT_EQ(events[2].how, TraceSpan::kCompleted);
  EXPECT_LE(events[1].endNanos, events[2].startNanos);
}

TEST(SchedTelemetry, TheTraceKeepsItsLimitAndCountsTheRest) {
  TestExecutor ex;
  Scheduler s({.workers = 1, .seed = 2, .trace = true, .traceLimit = 10}, ex);
  std::vector<TaskRef> tasks;
  for (int i = 0; i < 25; ++i) {
    tasks.push_back(makeTask());
    ASSERT_TRUE(s.spawn(tasks.back().get()));
  }
  ASSERT_TRUE(s.start().isOk());
  ASSERT_TRUE(allComplete(tasks));
  s.shutdown();
  uint64_t dropped = 0;
  EXPECT_EQ(s.trace(0, dropped).size(), 10u);
  EXPECT_EQ(dropped, 15u);
}

}  // namespace
}  // namespace weft::runtime::test
