// C functions called by tasks on several workers (docs/design/c-api.md, "Threads"): a C
// library's functions run one at a time (its lock), the lock is released while a C
// function calls back into Lua (no deadlock when the callback needs another C function
// of the same library, or waits for a task that does), and C code that blocks runs
// detached (the other workers keep collecting and running).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "lauxlib.h"
#include "lua.h"
#include "tests/unit/capi/run_chunk.h"

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

constexpr const char* kModuleDir = "/usr/lib/x86_64-linux-gnu/lua/5.4/";

// Loads a Debian C module (built for liblua5.4) as a C host would; false if absent.
bool loadModule(lua_State* L, const char* name) {
  std::string path = std::string(kModuleDir) + name + ".so";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) return false;
  auto opener = reinterpret_cast<lua_CFunction>(dlsym(h, (std::string("luaopen_") + name).c_str()));
  if (!opener) return false;
  luaL_requiref(L, name, opener, 1);
  lua_pop(L, 1);
  return true;
}

bool gWithModules = false;

std::string runWithCFunctions(const std::string& chunk, unsigned workers) {
  return test::runChunk(chunk, workers, [](lua_State* L) {
    lua_register(L, "bump", bump);
    lua_register(L, "call_back", callBack);
    lua_register(L, "block", block);
    return !gWithModules || (loadModule(L, "lpeg") && loadModule(L, "cjson") && loadModule(L, "lfs"));
  });
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

// The issue's check: 16 tasks on 4 workers using lpeg, cjson and lfs at once.
TEST(CApiWorkers, DebianModulesFromSixteenTasks) {
  for (const char* m : {"lpeg", "cjson", "lfs"}) {
    if (access((std::string(kModuleDir) + m + ".so").c_str(), R_OK) != 0) GTEST_SKIP() << m << ".so not installed";
  }
  gWithModules = true;
  std::string chunk = std::string(R"(
    local tasks = {}
    for i = 1, 16 do
      tasks[i] = task.spawn(function()
        local word = lpeg.C(lpeg.R'az'^1)
        local list = lpeg.Ct((word * lpeg.P','^-1)^0)
        local ok = 0
        for j = 1, 100 do
          local t = list:match('alpha,beta,gamma' .. string.rep(',x', j % 5))
          local back = cjson.decode(cjson.encode({i = i, j = j, words = t}))
          local mode = lfs.attributes(')") + kModuleDir + R"(', 'mode')
          if back.i == i and back.j == j and #back.words == 3 + j % 5 and mode == 'directory' then ok = ok + 1 end
        end
        return ok
      end)
    end
    for i = 1, 16 do assert(tasks[i]:await() == 100, 'task ' .. i) end
  )";
  std::string result = runWithCFunctions(chunk, 4);
  gWithModules = false;
  EXPECT_EQ(result, "ok");
}

}  // namespace
}  // namespace weft::capi
