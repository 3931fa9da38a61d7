// C functions called by tasks on several workers (docs/design/c-api.md, "Threads"): a C
// library's functions run one at a time (its lock), the lock is released while a C
// function calls back into Lua (no deadlock when the callback needs another C function
// of the same library, or waits for a task that does), and C code that blocks runs
// detached (the other workers keep collecting and running).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "lua.h"
#include "runtime/capi/capi.h"
#include "runtime/runtime.h"
#include "vm/host.h"

namespace weft::capi {
namespace {

// Not thread-safe on purpose: a read, a pause, a write. Without the library lock two
// workers interleave and lose increments.
long gCounter = 0;

int bump(lua_State* L) {
  long seen = gCounter;
  for (int i = 0; i < 2000; i++) asm volatile("" ::: "memory");  // a pause the compiler keeps
  gCounter = seen + 1;
  lua_pushinteger(L, gCounter);
  return 1;
}

// Calls its argument (a Lua function) and returns its result: the lock is released
// meanwhile, so the callback may call bump (same library) or wait for other tasks.
int callBack(lua_State* L) {
  lua_pushvalue(L, 1);
  lua_call(L, 0, 1);
  return 1;
}

// Blocks for a while, as a socket read would.
int block(lua_State* L) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  lua_pushstring(L, "woke");
  return 1;
}

std::string runWithCFunctions(const std::string& chunk, unsigned workers) {
  std::unique_ptr<vm::State> state = vm::newStandardState({});
  if (!state || !attachCApi(*state)) return "no state";
  runtime::RuntimeOptions options;
  options.workers = workers;
  auto rt = runtime::Runtime::start(*state, options);
  if (!rt.hasValue()) return "no runtime";
  lua_State* L = luaStateOf(state->mainThread->data);
  lua_register(L, "bump", bump);
  lua_register(L, "call_back", callBack);
  lua_register(L, "block", block);
  vm::HostStack h(*state);
  std::string result = "ok";
  if (!h.loadMayGC(chunk, "=workers").isOk() || !h.pcallMayGC(0, 0, true).isOk()) {
    if (!h.toStringMayGC(-1, result).isOk()) result = "unprintable error";
  }
  h.setTop(0);
  if (!(*rt)->finishMayGC().isOk() && result == "ok") result = "runtime failed";
  return result;
}

TEST(CApiWorkers, OneLibraryRunsOneCFunctionAtATime) {
  gCounter = 0;
  const char* chunk = R"(
    local tasks = {}
    for i = 1, 16 do
      tasks[i] = task.spawn(function()
        local garbage = {}
        for j = 1, 200 do
          bump()
          garbage[j % 10] = {j, tostring(j)}
        end
      end)
    end
    for i = 1, 16 do tasks[i]:await() end
  )";
  EXPECT_EQ(runWithCFunctions(chunk, 4), "ok");
  EXPECT_EQ(gCounter, 16 * 200);
}

TEST(CApiWorkers, CallbacksIntoLuaReleaseTheLock) {
  gCounter = 0;
  const char* chunk = R"(
    local ch = task.channel()
    local tasks = {}
    for i = 1, 8 do
      tasks[i] = task.spawn(function()
        -- C calls Lua, which calls C of the same library and waits on a channel that
        -- another task (also calling C) feeds.
        return call_back(function() bump() return ch:recv() end)
      end)
    end
    for i = 1, 8 do task.spawn(function() bump() ch:send(i) end) end
    local sum = 0
    for i = 1, 8 do sum = sum + tasks[i]:await() end
    assert(sum == 36, "sum " .. sum)
  )";
  EXPECT_EQ(runWithCFunctions(chunk, 4), "ok");
  EXPECT_EQ(gCounter, 16);
}

TEST(CApiWorkers, BlockingCFunctionsDoNotStopOthers) {
  const char* chunk = R"(
    local sleepers = {}
    for i = 1, 4 do sleepers[i] = task.spawn(function() return block() end) end
    -- Meanwhile other tasks allocate (and so collect) and call C.
    local workers = {}
    for i = 1, 8 do
      workers[i] = task.spawn(function()
        local t = {}
        for j = 1, 2000 do t[j % 50] = {j} end
        collectgarbage()
        return bump()
      end)
    end
    for i = 1, 8 do workers[i]:await() end
    for i = 1, 4 do assert(sleepers[i]:await() == "woke") end
  )";
  EXPECT_EQ(runWithCFunctions(chunk, 4), "ok");
}

}  // namespace
}  // namespace weft::capi
