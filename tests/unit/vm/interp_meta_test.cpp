// Metamethods, including Lua metamethods run as frames of the same loop.
#include <gtest/gtest.h>

#include "tests/unit/vm/interp_test_util.h"

namespace weft::vm::testing {
namespace {

class InterpMeta : public ::testing::TestWithParam<Mode> {
 protected:
  std::string run(const std::string& src) { return runLua(src, GetParam()); }
};

constexpr const char* kVector = R"(
local V = {}
V.__index = V
V.__add = function(a, b) return setmetatable({x = a.x + b.x}, V) end
V.__eq = function(a, b) return a.x == b.x end
V.__lt = function(a, b) return a.x < b.x end
V.__le = function(a, b) return a.x <= b.x end
V.__len = function(a) return a.x end
V.__unm = function(a) return setmetatable({x = -a.x}, V) end
V.__concat = function(a, b) return 'cat' end
V.__call = function(self, y) return self.x * y end
V.__tostring = function(self) return 'V' .. self.x end
local function new(x) return setmetatable({x = x}, V) end
)";

TEST_P(InterpMeta, ArithmeticComparisonAndFriends) {
  std::string v = kVector;
  EXPECT_EQ(run(v + "return (new(1) + new(2)).x"), "3");
  EXPECT_EQ(run(v + "return new(3) == new(3)"), "true");
  EXPECT_EQ(run(v + "return new(3) ~= new(3)"), "false");
  EXPECT_EQ(run(v + "return new(1) < new(2) and new(2) <= new(2) and not (new(2) > new(3))"), "true");
  EXPECT_EQ(run(v + "return #new(9)"), "9");
  EXPECT_EQ(run(v + "return (-new(4)).x"), "-4");
  EXPECT_EQ(run(v + "return new(1) .. 'x' .. 'y'"), "cat");
  EXPECT_EQ(run(v + "return new(6)(7)"), "42");
  EXPECT_EQ(run(v + "return tostring(new(5))"), "V5");
}

TEST_P(InterpMeta, IndexChains) {
  EXPECT_EQ(run("local a = {v = 1} local b = setmetatable({}, {__index = a}) "
                "local c = setmetatable({}, {__index = b}) return c.v"),
            "1");
  EXPECT_EQ(run("local t = setmetatable({}, {__index = function(t, k) return k .. '!' end}) return t.hi"), "hi!");
  EXPECT_EQ(run("local log = {} local t = setmetatable({}, {__newindex = function(t, k, v) rawset(t, k, v * 2) end}) "
                "t.a = 4 return t.a"),
            "8");
  EXPECT_EQ(run("local t = setmetatable({}, {}) getmetatable(t).__index = t return select(2, pcall(function() return t.x end))"),
            "test:1: '__index' chain too long; possible loop");
}

TEST_P(InterpMeta, StringArithmeticCoercion) {
  EXPECT_EQ(run("return '10' + 1"), "11");
  EXPECT_EQ(run("return '3' * '4'"), "12");
}

TEST_P(InterpMeta, CloseVariables) {
  EXPECT_EQ(run("local log = '' do local x <close> = setmetatable({}, {__close = function(o, e) log = log .. 'c' .. tostring(e) end}) "
                "log = log .. 'b' end return log"),
            "bcnil");
  EXPECT_EQ(run("local log = '' pcall(function() local x <close> = setmetatable({}, {__close = function(o, e) log = e end}) "
                "error('boom', 0) end) return log"),
            "boom");
}

TEST_P(InterpMeta, ProtectedMetatable) {
  EXPECT_EQ(run("local t = setmetatable({}, {__metatable = 'no'}) return getmetatable(t)"), "no");
  EXPECT_EQ(run("local t = setmetatable({}, {__metatable = 'no'}) return select(2, pcall(setmetatable, t, {}))"),
            "cannot change a protected metatable");
}

// A loop whose only calls are its metamethods': each one's frame lay at the scratch top
// and its return left the thread's top past its result, so every call went a slot higher
// than the last until "stack overflow" (at about a million; lua5.4 runs it). The
// instruction's finish puts the top back (finishOpMayGC). Interpreted, with the JIT off.
TEST(InterpMetaLoop, MetamethodCallsInALoopKeepTheStack) {
  StateOptions opts;
  opts.jit.mode = JitMode::kOff;
  EXPECT_EQ(runLuaWith("local mt = {__add = function(a, b) return a.v + b end} "
                       "local function loop(x, n) local s = 0 for i = 1, n do s = s + (x + i) end return s end "
                       "return loop(setmetatable({v = 1}, mt), 1200000)",
                       opts),
            "720001800000");
}

INSTANTIATE_TEST_SUITE_P(Modes, InterpMeta, ::testing::Values(Mode::kNormal, Mode::kStress, Mode::kGenerational),
                         [](const auto& info) { return std::string(modeName(info.param)); });

}  // namespace
}  // namespace weft::vm::testing
