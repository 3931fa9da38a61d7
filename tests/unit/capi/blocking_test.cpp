// weft_blockingk (include/weft/lua/lweft.h): a C function's blocking work runs on the
// blocking pool when a task calls it, on the calling thread from the main chunk, and its
// continuation's results are the function's.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include "lauxlib.h"
#include "lua.h"
#include "lweft.h"
#include "tests/unit/capi/run_chunk.h"

namespace weft::capi {
namespace {

struct Read {
  std::thread::id caller;  // the thread the C function ran on
  std::thread::id worker;  // the thread the work ran on
  lua_Integer value = 0;
};

void slowRead(void* ud) {
  auto* r = static_cast<Read*>(ud);
  r->worker = std::this_thread::get_id();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  r->value *= 2;
}

// Results: the doubled argument, whether the work ran on another thread, the status and
// context the continuation got.
int readDone(lua_State* L, int status, lua_KContext ctx) {
  auto* r = static_cast<Read*>(lua_touserdata(L, 2));
  lua_pushinteger(L, r->value);
  lua_pushboolean(L, r->worker != r->caller);
  lua_pushinteger(L, status);
  lua_pushinteger(L, lua_Integer(ctx));
  return 4;
}

// read(n): the state lives in a userdata on the function's own stack, so nothing leaks
// when a cancelled task never runs the continuation.
int read(lua_State* L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  auto* r = static_cast<Read*>(lua_newuserdatauv(L, sizeof(Read), 0));
  new (r) Read{std::this_thread::get_id(), {}, n};
  return weft_blockingk(L, slowRead, r, 42, readDone);
}

void throwing(void*) { throw std::runtime_error("the disk is on fire"); }
int never(lua_State*, int, lua_KContext) { return 0; }
int fail(lua_State* L) { return weft_blockingk(L, throwing, nullptr, 0, never); }

std::string run(const std::string& chunk, unsigned workers) {
  return test::runChunk(chunk, workers, [](lua_State* L) {
    lua_register(L, "read", read);
    lua_register(L, "fail", fail);
    return true;
  });
}

TEST(CApiBlocking, ATaskRunsTheWorkOnThePoolAndGetsTheContinuationsResults) {
  EXPECT_EQ(run(R"(
    local ts = {}
    for i = 1, 8 do ts[i] = task.spawn(function() return read(i) end) end
    for i = 1, 8 do
      local v, elsewhere, status, ctx = ts[i]:await()
      assert(v == 2 * i, "value " .. tostring(v))
      assert(elsewhere, "the work ran on the task's own thread")
      assert(status == 1 and ctx == 42, "continuation got " .. status .. ", " .. ctx)  -- LUA_YIELD
    end
  )", 2), "ok");
}

TEST(CApiBlocking, TheMainChunkRunsTheWorkItself) {
  EXPECT_EQ(run(R"(
    local v, elsewhere, status, ctx = read(21)
    assert(v == 42 and not elsewhere and status == 1 and ctx == 42)
  )", 2), "ok");
}

TEST(CApiBlocking, AThrowInTheWorkIsTheCallersError) {
  std::string main = run("fail()", 2);
  EXPECT_NE(main.find("blocking call failed: the disk is on fire"), std::string::npos) << main;
  EXPECT_EQ(run(R"(
    local ok, err = task.spawn(function() return pcall(fail) end):await()
    assert(not ok and err:find("blocking call failed: the disk is on fire"), tostring(err))
  )", 2), "ok");
}

TEST(CApiBlocking, CancellingATaskWhoseWorkRunsWaitsForIt) {
  EXPECT_EQ(run(R"(
    local t = task.spawn(function() return read(5) end)
    task.sleep(0.001)
    t:cancel()
    local ok, err = pcall(t.await, t)
    assert(ok or tostring(err):find("cancelled"), tostring(err))
  )", 2), "ok");
}

}  // namespace
}  // namespace weft::capi
