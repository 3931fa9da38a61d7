// The blocking pool (runtime/blocking_pool.h, docs/design/blocking-pool.md): its bound,
// order, cancellation and stop, and a job whose C++ code throws, alone and from Lua
// tasks (the throw becomes the calling task's error; the pool runs on).
#include "runtime/blocking_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/runtime.h"
#include "tests/unit/wait_until.h"
#include "vm/host.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::runtime {
namespace {

using weft::test::waitUntil;

// A gate jobs block on until the test opens it.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void wait() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return open; });
  }
  void release() {
    {
      std::lock_guard lock(mu);
      open = true;
    }
    cv.notify_all();
  }
};

struct FnJob final : vm::BlockingJob {
  explicit FnJob(std::function<void()> f) : fn(std::move(f)) {}
  std::function<void()> fn;
  void run() override { fn(); }
  vm::NativeResult finishMayGC(vm::CallContext& cx) override { return cx.results(0); }
};

struct Recorder {
  std::mutex mu;
  std::vector<std::pair<int, bool>> done;  // (job, ran)
  std::function<void(bool)> doneFor(int id) {
    return [this, id](bool ran) {
      std::lock_guard lock(mu);
      done.emplace_back(id, ran);
    };
  }
  size_t count() {
    std::lock_guard lock(mu);
    return done.size();
  }
};

BlockingPool::Entry entry(std::function<void()> fn, const void* owner, std::function<void(bool)> done) {
  return BlockingPool::Entry{std::make_shared<FnJob>(std::move(fn)), owner, std::move(done)};
}

TEST(BlockingPool, RunsAtMostSizeJobsAtOnceAndQueuesTheRestInOrder) {
  BlockingPool pool(2);
  Gate gate;
  Recorder rec;
  std::atomic<int> running{0}, most{0};
  std::vector<int> order;
  std::mutex orderMu;
  int owners[6];
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(pool.submit(entry(
                                [&, i] {
                                  int now = running.fetch_add(1) + 1;
                                  int seen = most.load();
                                  while (now > seen && !most.compare_exchange_weak(seen, now)) {
                                  }
                                  {
                                    std::lock_guard lock(orderMu);
                                    order.push_back(i);
                                  }
                                  gate.wait();
                                  running.fetch_sub(1);
                                },
                                &owners[i], rec.doneFor(i)),
                            [] { return true; }));
  }
  ASSERT_TRUE(waitUntil([&] { return running.load() == 2; }, "two jobs to run"));
  BlockingPoolStats s = pool.stats();
  EXPECT_EQ(s.busy, 2u);
  EXPECT_EQ(s.threads, 2u);
  EXPECT_EQ(s.queued, 4u);
  EXPECT_GE(s.queueDepthMax, 4u);  // and more while the threads had not taken theirs yet
  EXPECT_EQ(pool.inFlight(), 6u);
  gate.release();
  ASSERT_TRUE(waitUntil([&] { return pool.inFlight() == 0; }, "every job to finish"));
  EXPECT_EQ(most.load(), 2);
  EXPECT_EQ(rec.count(), 6u);
  EXPECT_EQ(pool.stats().jobsRun, 6u);
  EXPECT_EQ(pool.stats().wait.count, 6u);
  // Two threads take the queue front first: each job starts no later than two places
  // after its turn.
  for (size_t k = 0; k < order.size(); ++k) EXPECT_LE(size_t(order[k]), k + 1) << "job " << order[k];
}

TEST(BlockingPool, CancelDropsAQueuedJobAndLeavesARunningOne) {
  BlockingPool pool(1);
  Gate gate;
  Recorder rec;
  std::atomic<bool> secondRan{false};
  int a, b, c;
  ASSERT_TRUE(pool.submit(entry([&] { gate.wait(); }, &a, rec.doneFor(1)), [] { return true; }));
  ASSERT_TRUE(pool.submit(entry([&] { secondRan = true; }, &b, rec.doneFor(2)), [] { return true; }));
  ASSERT_TRUE(waitUntil([&] { return pool.stats().busy == 1; }, "the first job to run"));
  EXPECT_EQ(pool.cancel(&a), BlockingPool::Cancel::kRunning);
  EXPECT_EQ(pool.cancel(&b), BlockingPool::Cancel::kRemoved);
  EXPECT_EQ(pool.cancel(&c), BlockingPool::Cancel::kNotHere);
  EXPECT_EQ(pool.inFlight(), 1u);
  gate.release();
  ASSERT_TRUE(waitUntil([&] { return pool.inFlight() == 0; }, "the running job to finish"));
  EXPECT_FALSE(secondRan.load());
  std::lock_guard lock(rec.mu);
  ASSERT_EQ(rec.done.size(), 2u);
  EXPECT_EQ(rec.done[0], std::make_pair(2, false));  // dropped, unrun
  EXPECT_EQ(rec.done[1], std::make_pair(1, true));
}

TEST(BlockingPool, AnAdmitThatDeclinesQueuesNothing) {
  BlockingPool pool(1);
  Recorder rec;
  int a;
  EXPECT_FALSE(pool.submit(entry([] {}, &a, rec.doneFor(1)), [] { return false; }));
  EXPECT_EQ(pool.inFlight(), 0u);
  pool.stop();
  EXPECT_EQ(rec.count(), 0u);
}

TEST(BlockingPool, AThrowingJobIsContainedAndThePoolRunsOn) {
  BlockingPool pool(1);
  Recorder rec;
  int a, b;
  auto thrower = std::make_shared<FnJob>([] { throw std::runtime_error("boom"); });
  ASSERT_TRUE(pool.submit(BlockingPool::Entry{thrower, &a, rec.doneFor(1)}, [] { return true; }));
  std::atomic<bool> ran{false};
  ASSERT_TRUE(pool.submit(entry([&] { ran = true; }, &b, rec.doneFor(2)), [] { return true; }));
  ASSERT_TRUE(waitUntil([&] { return pool.inFlight() == 0; }, "both jobs to finish"));
  EXPECT_EQ(thrower->panic, "boom");
  EXPECT_TRUE(ran.load());
  EXPECT_EQ(pool.stats().panics, 1u);
  EXPECT_EQ(pool.stats().jobsRun, 2u);
}

TEST(BlockingPool, StopFinishesRunningJobsDropsQueuedOnesAndRefusesMore) {
  BlockingPool pool(1);
  Gate gate;
  Recorder rec;
  int a, b, c;
  ASSERT_TRUE(pool.submit(entry([&] { gate.wait(); }, &a, rec.doneFor(1)), [] { return true; }));
  ASSERT_TRUE(pool.submit(entry([] {}, &b, rec.doneFor(2)), [] { return true; }));
  ASSERT_TRUE(waitUntil([&] { return pool.stats().busy == 1; }, "the first job to run"));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.release();
  });
  pool.stop();
  opener.join();
  EXPECT_EQ(pool.inFlight(), 0u);
  EXPECT_FALSE(pool.submit(entry([] {}, &c, rec.doneFor(3)), [] { return true; }));
  std::lock_guard lock(rec.mu);
  ASSERT_EQ(rec.done.size(), 2u);
  EXPECT_EQ(rec.done[0], std::make_pair(1, true));
  EXPECT_EQ(rec.done[1], std::make_pair(2, false));
}

// A native whose job throws: from a task (the pool) and from the main task (run in
// place), the caller gets a Lua error and the runtime goes on.
vm::NativeResult throwingNative(vm::CallContext& cx) {
  auto job = std::make_shared<FnJob>([] { throw std::runtime_error("host library failed"); });
  return vm::runBlockingMayGC(cx, std::move(job));
}

TEST(BlockingPool, AThrowInABlockingCallIsTheCallersLuaError) {
  std::unique_ptr<vm::State> state = vm::newStandardState({});
  ASSERT_TRUE(state);
  RuntimeOptions options;
  options.workers = 2;
  auto rt = Runtime::start(*state, options);
  ASSERT_TRUE(rt.hasValue());
  vm::String* name = vm::newString(*state, "throwing");
  ASSERT_TRUE(name);
  ASSERT_TRUE(vm::tableSetStr(*state, state->globals, name, vm::Value::lightNative(throwingNative)).isOk());
  const char* chunk = R"(
    local h = task.spawn(function() return pcall(throwing) end)
    local ok, msg = h:await()
    assert(not ok and msg:find("blocking call failed: host library failed", 1, true), tostring(msg))
    local ok2, msg2 = pcall(throwing)
    assert(not ok2 and msg2:find("blocking call failed: host library failed", 1, true), tostring(msg2))
    assert(task.stats().blocking_pool.panics == 1, "the pool counts the task's panic")
    assert(task.spawn(function() return os.execute("true") end):await() == true, "the pool runs on")
  )";
  vm::HostStack h(*state);
  std::string error = "ok";
  if (!h.loadMayGC(chunk, "=panic").isOk() || !h.pcallMayGC(0, 0, true).isOk()) {
    if (!h.toStringMayGC(-1, error).isOk()) error = "unprintable error";
  }
  h.setTop(0);
  EXPECT_EQ(error, "ok");
}

}  // namespace
}  // namespace weft::runtime
