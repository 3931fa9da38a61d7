// The host lane (runtime/sched/host_lane.cpp; scheduler.md invariant 12): the host
// thread's publications wait in its one-task slot, run there while it waits, and reach
// the workers when it goes on, flushes or unbinds.
#include <gtest/gtest.h>

#include <thread>

#include "tests/unit/sched/test_support.h"

namespace weft::runtime::test {
namespace {

struct Host {
  explicit Host(unsigned workers) : sched(SchedulerOptions{.workers = workers, .seed = 7}, exec) {
    EXPECT_TRUE(sched.start().isOk());
  }
  TestExecutor exec;
  Scheduler sched;
};

std::function<bool()> completed(const TaskRef& t) {
  return [&t] { return t->state() == TaskState::kCompleted; };
}

// Waits for `t` to complete, and checks that it ran on another thread than the host.
testing::AssertionResult ranOnAWorker(const TaskRef& t, const std::thread::id& ranOn) {
  if (testing::AssertionResult r = waitUntil(completed(t), "the task to run on a worker"); !r) return r;
  if (ranOn == std::this_thread::get_id()) return testing::AssertionFailure() << "it ran on the host";
  return testing::AssertionSuccess();
}

// Records the thread each dispatch ran on.
FnTask::Body onThread(std::thread::id& where, RunOutcome out = RunOutcome::kCompleted) {
  return [&where, out](Worker&, FnTask&) {
    where = std::this_thread::get_id();
    return out;
  };
}

TEST(SchedHostLane, TheHostRunsWhatItPublishedWhileItWaits) {
  Host h(1);
  std::thread::id ranOn;
  TaskRef a = makeTask(onThread(ranOn));
  HostBinding outer = h.sched.bindHost();
  ASSERT_TRUE(h.sched.spawn(a.get()));
  EXPECT_EQ(h.exec.laneFills.load(), 1);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(a->dispatches.load(), 0) << "a task in the lane is not the workers'";
  EXPECT_EQ(h.sched.runOnHost(completed(a)), HostRun::kDone);
  EXPECT_EQ(ranOn, std::this_thread::get_id());
  EXPECT_EQ(h.sched.hostTasksRun(), 1u);
  EXPECT_EQ(h.sched.runOnHost([] { return false; }), HostRun::kIdle) << "the lane is empty";
  h.sched.unbindHost(outer);
}

TEST(SchedHostLane, WhatAHostDispatchWakesRunsThereNextWhatItSpawnsOnTheWorkers) {
  Host h(1);
  std::thread::id aOn, bOn, cOn;
  TaskRef b = makeTask(onThread(bOn));
  TaskRef c = makeTask(onThread(cOn));
  // b is suspended (it ran once on the worker): a's wake of it goes to the lane.
  b->body = [&](Worker&, FnTask& t) {
    bOn = std::this_thread::get_id();
    return t.dispatches.load() == 1 ? RunOutcome::kSuspended : RunOutcome::kCompleted;
  };
  ASSERT_TRUE(h.sched.spawn(b.get()));
  ASSERT_TRUE(waitUntil([&] { return b->state() == TaskState::kSuspended; }, "b to suspend"));
  TaskRef a = makeTask([&](Worker&, FnTask&) {
    aOn = std::this_thread::get_id();
    EXPECT_TRUE(Scheduler::dispatchingOnHost());
    EXPECT_TRUE(h.sched.wake(b.get()));
    EXPECT_TRUE(h.sched.spawn(c.get()));
    return RunOutcome::kCompleted;
  });
  HostBinding outer = h.sched.bindHost();
  ASSERT_TRUE(h.sched.spawn(a.get()));
  EXPECT_EQ(h.sched.runOnHost(completed(b)), HostRun::kDone);
  EXPECT_EQ(aOn, std::this_thread::get_id());
  EXPECT_EQ(bOn, std::this_thread::get_id());
  EXPECT_TRUE(ranOnAWorker(c, cOn));
  EXPECT_FALSE(Scheduler::dispatchingOnHost());
  h.sched.unbindHost(outer);
}

// A host with two tasks that record where they ran, bound on the test's thread.
class SchedHostLanePair : public testing::Test {
 protected:
  ~SchedHostLanePair() override {
    if (bound_) h.sched.unbindHost(outer_);
  }
  void unbind() {
    h.sched.unbindHost(outer_);
    bound_ = false;
  }
  Host h{1};
  std::thread::id aOn, bOn;
  TaskRef a = makeTask(onThread(aOn));
  TaskRef b = makeTask(onThread(bOn));

 private:
  HostBinding outer_ = h.sched.bindHost();
  bool bound_ = true;
};

TEST_F(SchedHostLanePair, ANewerPublicationSendsTheOlderToTheWorkers) {
  ASSERT_TRUE(h.sched.spawn(a.get()));
  ASSERT_TRUE(h.sched.spawn(b.get()));
  EXPECT_EQ(h.exec.laneFills.load(), 1) << "the lane was never empty in between";
  EXPECT_TRUE(ranOnAWorker(a, aOn));
  EXPECT_EQ(b->dispatches.load(), 0);
  EXPECT_EQ(h.sched.runOnHost(completed(b)), HostRun::kDone);
  EXPECT_EQ(bOn, std::this_thread::get_id());
}

TEST_F(SchedHostLanePair, FlushAndUnbindPublishTheLane) {
  ASSERT_TRUE(h.sched.spawn(a.get()));
  h.sched.flushHostLane();
  EXPECT_TRUE(ranOnAWorker(a, aOn));
  ASSERT_TRUE(h.sched.spawn(b.get()));
  unbind();
  EXPECT_TRUE(ranOnAWorker(b, bOn));
  EXPECT_EQ(h.sched.hostTasksRun(), 0u);
}

TEST(SchedHostLane, ATaskThatYieldsOnTheHostGoesToTheWorkers) {
  Host h(1);
  std::vector<std::thread::id> ranOn;
  std::mutex mu;
  TaskRef a = makeTask([&](Worker&, FnTask& t) {
    std::lock_guard lock(mu);
    ranOn.push_back(std::this_thread::get_id());
    return t.dispatches.load() == 1 ? RunOutcome::kYielded : RunOutcome::kCompleted;
  });
  HostBinding outer = h.sched.bindHost();
  ASSERT_TRUE(h.sched.spawn(a.get()));
  EXPECT_EQ(h.sched.runOnHost(completed(a)), HostRun::kIdle);
  ASSERT_TRUE(waitUntil(completed(a), "the task to complete"));
  std::lock_guard lock(mu);
  ASSERT_EQ(ranOn.size(), 2u);
  EXPECT_EQ(ranOn[0], std::this_thread::get_id());
  EXPECT_NE(ranOn[1], std::this_thread::get_id()) << "the host does not share the workers' load";
  h.sched.unbindHost(outer);
}

TEST(SchedHostLane, AnUnboundThreadPublishesAsBefore) {
  Host h(1);
  std::thread::id aOn;
  TaskRef a = makeTask(onThread(aOn));
  EXPECT_FALSE(Scheduler::hostBoundHere());
  ASSERT_TRUE(h.sched.spawn(a.get()));
  EXPECT_TRUE(ranOnAWorker(a, aOn));
  EXPECT_EQ(h.exec.laneFills.load(), 0);
}

TEST(SchedHostLane, BindingsNestAndRestore) {
  Host outerHost(1), innerHost(1);
  std::thread::id aOn;
  TaskRef a = makeTask(onThread(aOn));
  HostBinding none = outerHost.sched.bindHost();
  HostBinding outer = innerHost.sched.bindHost();
  innerHost.sched.unbindHost(outer);
  ASSERT_TRUE(outerHost.sched.spawn(a.get()));
  EXPECT_EQ(outerHost.exec.laneFills.load(), 1) << "the outer binding is back";
  EXPECT_EQ(outerHost.sched.runOnHost(completed(a)), HostRun::kDone);
  outerHost.sched.unbindHost(none);
  EXPECT_FALSE(Scheduler::hostBoundHere());
}

TEST(SchedHostLane, ClosedSchedulerEndsTheRun) {
  Host h(1);
  TaskRef a = makeTask();
  HostBinding outer = h.sched.bindHost();
  ASSERT_TRUE(h.sched.spawn(a.get()));
  h.sched.close("test");
  EXPECT_EQ(h.sched.runOnHost([] { return false; }), HostRun::kClosed);
  EXPECT_EQ(a->dispatches.load(), 0);
  h.sched.unbindHost(outer);
}

}  // namespace
}  // namespace weft::runtime::test
