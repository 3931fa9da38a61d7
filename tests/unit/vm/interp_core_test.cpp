// The interpreter loop: calls, varargs, tail calls, tables, closures, loops, arithmetic.
#include <gtest/gtest.h>

#include "tests/unit/vm/interp_test_util.h"

namespace weft::vm::testing {
namespace {

class InterpCore : public ::testing::TestWithParam<Mode> {
 protected:
  std::string run(const std::string& src) { return runLua(src, GetParam()); }
};

TEST_P(InterpCore, ReturnsValues) {
  EXPECT_EQ(run("return 1 + 2"), "3");
  EXPECT_EQ(run("return 'a' .. 'b' .. 1 .. 2.5"), "ab12.5");
  EXPECT_EQ(run("return 7 // 2, 7.0 // 2"), "3");
  EXPECT_EQ(run("return 3 % -2"), "-1");
  EXPECT_EQ(run("return 2^10"), "1024.0");
  EXPECT_EQ(run("return math == nil or 1"), "1");
  EXPECT_EQ(run("return 0/0 ~= 0/0"), "true");
  EXPECT_EQ(run("return 1 == 1.0"), "true");
  EXPECT_EQ(run("return 9007199254740993 < 9007199254740992.0"), "false");
}

TEST_P(InterpCore, Fibonacci) {
  EXPECT_EQ(run("local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end return fib(20)"),
            "6765");
}

TEST_P(InterpCore, VarargsAndMultipleResults) {
  EXPECT_EQ(run("local function f(...) return select('#', ...) end return f(1, nil, 3, nil)"), "4");
  EXPECT_EQ(run("local function f(...) local a, b = ... return tostring(a) .. tostring(b) end return f(1)"), "1nil");
  EXPECT_EQ(run("local function m() return 1, 2, 3 end local t = {m(), m()} return #t"), "4");
  EXPECT_EQ(run("local function m() return 1, 2, 3 end local t = {m(), (m())} return #t"), "2");
  EXPECT_EQ(run("local function f(a, ...) return ... end return select(2, f(0, 'x', 'y'))"), "y");
  EXPECT_EQ(run("return select(-1, 'a', 'b', 'c')"), "c");
}

TEST_P(InterpCore, TailCallsRunInConstantSpace) {
  if (GetParam() != Mode::kNormal) GTEST_SKIP() << "a collection per call makes this quadratic";
  EXPECT_EQ(run("local function loop(n) if n == 0 then return 'done' end return loop(n - 1) end "
                "return loop(10000000)"),
            "done");
}

TEST_P(InterpCore, ClosuresShareUpvalues) {
  EXPECT_EQ(run("local function c() local n = 0 return function() n = n + 1 return n end, "
                "function() return n end end local inc, get = c() inc() inc() return get()"),
            "2");
  EXPECT_EQ(run("local fs = {} for i = 1, 3 do fs[i] = function() return i end end "
                "return fs[1]() + fs[2]() * 10 + fs[3]() * 100"),
            "321");
}

TEST_P(InterpCore, NumericAndGenericFor) {
  EXPECT_EQ(run("local s = 0 for i = 10, 1, -3 do s = s + i end return s"), "22");
  EXPECT_EQ(run("local s = 0 for i = 1.0, 2.0, 0.5 do s = s + i end return s"), "4.5");
  EXPECT_EQ(run("local s = 0 for i = math and 1 or 1, 0 do s = s + 1 end return s"), "0");
  EXPECT_EQ(run("local t = {10, 20, 30} local s = 0 for i, v in ipairs(t) do s = s + i * v end return s"), "140");
  EXPECT_EQ(run("local t = {a = 1, b = 2} local s = 0 for k, v in pairs(t) do s = s + v end return s"), "3");
}

TEST_P(InterpCore, TablesAndLength) {
  EXPECT_EQ(run("local t = {} for i = 1, 100 do t[i] = i end return #t"), "100");
  EXPECT_EQ(run("local t = {x = 1, [1.0] = 'one'} return t[1] .. t.x"), "one1");
  EXPECT_EQ(run("local t = {n = {m = {v = 5}}} return t.n.m.v"), "5");
}

TEST_P(InterpCore, GotoAndRepeat) {
  EXPECT_EQ(run("local i = 0 ::top:: i = i + 1 if i < 5 then goto top end return i"), "5");
  EXPECT_EQ(run("local i = 0 repeat i = i + 1 until i >= 7 return i"), "7");
}

TEST_P(InterpCore, LoadWithEnvironment) {
  EXPECT_EQ(run("local f = load('return x', 'chunk', 't', {x = 42}) return f()"), "42");
  EXPECT_EQ(run("return select(2, load('return 1', 'c', 'b'))"), "attempt to load a text chunk (mode is 'b')");
  EXPECT_EQ(run("local parts = {'return ', '1', '+1'} local i = 0 "
                "return load(function() i = i + 1 return parts[i] end)()"),
            "2");
}

INSTANTIATE_TEST_SUITE_P(Modes, InterpCore, ::testing::Values(Mode::kNormal, Mode::kStress, Mode::kGenerational),
                         [](const auto& info) { return std::string(modeName(info.param)); });

}  // namespace
}  // namespace weft::vm::testing
