// Runtime::blockingFunction and the deterministic option of the C++ API
// (include/weft/weft.hpp): a host's blocking function runs on the blocking pool when a
// task calls it (the worker runs other tasks meanwhile), its results and errors come
// back to Lua, and a deterministic runtime repeats its runs exactly.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "tests/unit/embed/make_runtime.h"
#include "weft/weft.hpp"

namespace {

using weft::HostValue;
using weft::Runtime;

using weft::test::make;

std::string runError(Runtime& rt, const char* code) {
  auto r = rt.run(code);
  return r ? "no error" : r.error().message;
}

TEST(BlockingFunction, RunsOffTheWorkersAndReturnsItsResults) {
  weft::Options o;
  o.workers = 1;
  auto rt = make(o);
  static std::atomic<int> inside{0};
  static std::atomic<bool> gate{false};
  inside = 0;
  gate = false;
  // Each call waits until the host opens the gate: with one worker, the others can only
  // have entered it if the worker went on while the first call blocked.
  rt->setGlobal("fetch", rt->blockingFunction([](std::vector<HostValue> args) -> weft::Expected<std::vector<HostValue>> {
    inside++;
    while (!gate) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::vector<HostValue>{std::get<std::string>(args.at(0)) + "!", std::get<int64_t>(args.at(1)) * 2};
  }));
  auto body = rt->run(R"(
    local ts = {}
    for i = 1, 4 do ts[i] = task.spawn(function() return fetch("key" .. i, i) end) end
    return function() local out = {} for i = 1, 4 do local s, n = ts[i]:await() out[i] = s .. n end
                       return table.concat(out, " ") end
  )");
  ASSERT_TRUE(body.hasValue()) << body.error().message;
  auto start = std::chrono::steady_clock::now();
  while (inside < 4 && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(inside.load(), 4) << "the calls did not all block at once";
  gate = true;
  auto joined = (*body)[0].call();
  ASSERT_TRUE(joined.hasValue()) << joined.error().message;
  EXPECT_EQ((*joined)[0].toString().value_or(""), "key1!2 key2!4 key3!6 key4!8");
}

TEST(BlockingFunction, ErrorsThrowsAndBadArgumentsAreLuaErrors) {
  auto rt = make();
  rt->setGlobal("refuse", rt->blockingFunction([](std::vector<HostValue>) -> weft::Expected<std::vector<HostValue>> {
    return weft::Error{weft::StatusCode::kRuntimeError, "connection refused"};
  }));
  rt->setGlobal("explode", rt->blockingFunction([](std::vector<HostValue>) -> weft::Expected<std::vector<HostValue>> {
    throw std::runtime_error("socket on fire");
  }));
  rt->setGlobal("echo", rt->blockingFunction([](std::vector<HostValue> a) -> weft::Expected<std::vector<HostValue>> {
    return a;
  }));
  EXPECT_NE(runError(*rt, "refuse()").find("connection refused"), std::string::npos);
  EXPECT_NE(runError(*rt, "task.spawn(refuse):await()").find("connection refused"), std::string::npos);
  EXPECT_NE(runError(*rt, "explode()").find("blocking call failed: socket on fire"), std::string::npos);
  EXPECT_NE(runError(*rt, "echo(1, {})").find("bad argument #2"), std::string::npos);
  auto r = rt->run("return task.spawn(echo, nil, true, 2, 2.5, 'x'):await()");
  ASSERT_TRUE(r.hasValue()) << r.error().message;
  ASSERT_EQ(r->size(), 5u);
  EXPECT_TRUE((*r)[0].isNil());
  EXPECT_TRUE((*r)[1].truthy());
  EXPECT_EQ((*r)[2].toInteger().value_or(0), 2);
  EXPECT_EQ((*r)[3].toNumber().value_or(0), 2.5);
  EXPECT_EQ((*r)[4].toString().value_or(""), "x");
}

// The same seed, the same interleaving of tasks, in a host as in the CLI.
TEST(Deterministic, TheSameSeedRepeatsARun) {
  const char* code = R"(
    local ch, log = task.channel(8), {}
    for i = 1, 5 do task.spawn(function() for j = 1, 3 do ch:send(i * 10 + j) end end) end
    for _ = 1, 15 do log[#log + 1] = ch:recv() end
    task.sleep(5)
    return table.concat(log, " ") .. " " .. math.random(1000) .. " " .. task.now()
  )";
  auto once = [&](uint64_t seed) {
    weft::Options o;
    o.deterministicSeed = seed;
    auto rt = make(o);
    auto r = rt->run(code);
    EXPECT_TRUE(r.hasValue()) << (r ? "" : r.error().message);
    return r ? (*r)[0].toString().value_or("") : std::string();
  };
  std::string a = once(11);
  EXPECT_EQ(a, once(11));
  EXPECT_FALSE(a.empty());
  bool differs = false;
  for (uint64_t s = 12; s < 20 && !differs; s++) differs = once(s) != a;
  EXPECT_TRUE(differs) << "eight other seeds gave the same run";
}

}  // namespace
