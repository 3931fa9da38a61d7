// The runtime's task, channel and select paths on several workers, small enough to run
// under ThreadSanitizer in CI (tools/tsan.sh), which then checks the runtime's own
// synchronisation (runtime/*.cpp), not only the scheduler core's.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "runtime/runtime.h"
#include "runtime/runtime_impl.h"
#include "vm/host.h"

namespace weft::runtime {
namespace {

// Runs `chunk` in the main task of a fresh runtime with `workers` workers; returns "ok"
// or the error message.
std::string runTasksMayGC(const std::string& chunk, unsigned workers) {
  std::unique_ptr<vm::State> state = vm::newStandardState({});
  if (!state) return "no state";
  RuntimeOptions options;
  options.workers = workers;
  auto rt = Runtime::start(*state, options);
  if (!rt.hasValue()) return "no runtime";
  vm::HostStack h(*state);
  std::string result = "ok";
  if (!h.loadMayGC(chunk, "=tasks").isOk() || !h.pcallMayGC(0, 0, true).isOk()) {
    if (!h.toStringMayGC(-1, result).isOk()) result = "unprintable error";
  }
  h.setTop(0);
  return result;
}

TEST(RuntimeTasks, SpawnAwaitChannelsAndSelectOnTwoWorkers) {
  const char* chunk = R"(
    local n = 200
    -- a tree of tasks summing over unbuffered channels
    local function node(out, lo, hi)
      if hi - lo <= 4 then
        local s = 0
        for i = lo, hi - 1 do s = s + i end
        out:send(s)
        return
      end
      local mid = (lo + hi) // 2
      local ch = task.channel()
      task.spawn(node, ch, lo, mid)
      task.spawn(node, ch, mid, hi)
      out:send(ch:recv() + ch:recv())
    end
    local root = task.channel()
    task.spawn(node, root, 0, n)
    assert(root:recv() == n * (n - 1) // 2, "tree sum")
    -- many awaiters of one task, results and errors
    local slow = task.spawn(function() task.sleep(0.002) return "done" end)
    local waiters = {}
    for i = 1, 20 do waiters[i] = task.spawn(function() return slow:await() end) end
    for i = 1, 20 do assert(waiters[i]:await() == "done", "awaiter " .. i) end
    local bad = task.spawn(function() error({code = 7}) end)
    local ok, err = pcall(bad.await, bad)
    assert(not ok and err.code == 7, "error value through await")
    -- buffered channel, select with sends, receives and timeouts, cancellation
    local buf = task.channel(8)
    local producers = {}
    for p = 1, 4 do
      producers[p] = task.spawn(function()
        for i = 1, 50 do buf:send(i) end
      end)
    end
    local got, quiet = 0, task.channel()
    while got < 200 do
      local which, v = task.select({{buf, "recv"}, {quiet, "recv"}}, 1)
      assert(which == 1, "select picked the buffered channel")
      got = got + 1
    end
    for p = 1, 4 do producers[p]:await() end
    local sleeper = task.spawn(function() task.sleep(10) end)
    task.sleep(0.001)
    assert(sleeper:cancel(), "cancel a sleeper")
    local cok, cerr = pcall(sleeper.await, sleeper)
    assert(not cok and tostring(cerr):find("task cancelled"), "cancelled")
    assert(select(3, quiet:recv(0.001)) == "timeout", "receive timeout")
  )";
  EXPECT_EQ(runTasksMayGC(chunk, 2), "ok");
  EXPECT_EQ(runTasksMayGC(chunk, 4), "ok");
}

// RuntimeImpl::onAllBlocked reads the timers again after the waiter's state: the last
// worker to park may have read the timers just before the main task armed its sleep's
// timer and blocked, and that sleep is no deadlock. A second thread runs the check
// over and over while the main task sleeps, as such a worker would.
TEST(RuntimeTasks, AllBlockedWhileASleepsTimerIsPendingIsNoDeadlock) {
  std::unique_ptr<vm::State> state = vm::newStandardState({});
  ASSERT_NE(state, nullptr);
  RuntimeOptions options;
  options.workers = 1;
  auto rt = Runtime::start(*state, options);
  ASSERT_TRUE(rt.hasValue());
  RuntimeImpl* impl = runtimeOf(*state);
  std::atomic<bool> stop{false};
  int checks = 0;
  std::thread checker([&] {
    while (!stop.load(std::memory_order_acquire)) {
      if (impl->mainTask->wait.isBlocked()) {
        impl->onAllBlocked();
        checks++;
      }
      std::this_thread::yield();
    }
  });
  vm::HostStack h(*state);
  bool ran = h.loadMayGC("task.sleep(0.2)", "=sleep").isOk() && h.pcallMayGC(0, 0, true).isOk();
  stop.store(true, std::memory_order_release);
  checker.join();
  EXPECT_TRUE(ran);
  EXPECT_GT(checks, 0) << "the check never ran while the main task slept";
  EXPECT_FALSE(impl->deadlocked.load(std::memory_order_acquire));
  h.setTop(0);
}

}  // namespace
}  // namespace weft::runtime
