// Error messages with variable kinds, positions, error levels, pcall/xpcall, overflow.
#include <gtest/gtest.h>

#include "tests/unit/vm/interp_test_util.h"

namespace weft::vm::testing {
namespace {

class InterpErrors : public ::testing::TestWithParam<Mode> {
 protected:
  std::string run(const std::string& src) { return runLua(src, GetParam()); }
  // The message of an error raised by `body`, caught by pcall.
  std::string err(const std::string& body) { return run("return select(2, pcall(function() " + body + " end))"); }
};

TEST_P(InterpErrors, VariableKinds) {
  EXPECT_EQ(err("local t; return t.x"), "test:1: attempt to index a nil value (local 't')");
  EXPECT_EQ(err("return undefinedvar.x"), "test:1: attempt to index a nil value (global 'undefinedvar')");
  EXPECT_EQ(err("local t = {} return t.a.b"), "test:1: attempt to index a nil value (field 'a')");
  EXPECT_EQ(err("local t = {} t:nomethod()"), "test:1: attempt to call a nil value (method 'nomethod')");
  EXPECT_EQ(err("nofunc()"), "test:1: attempt to call a nil value (global 'nofunc')");
  EXPECT_EQ(run("local u local function f() return u.x end return select(2, pcall(f))"),
            "test:1: attempt to index a nil value (upvalue 'u')");
  EXPECT_EQ(err("local t = {} return t.x + 1"), "test:1: attempt to perform arithmetic on a nil value (field 'x')");
  EXPECT_EQ(err("local a = {} return a .. 'x'"), "test:1: attempt to concatenate a table value (local 'a')");
  EXPECT_EQ(err("return 1 < nil"), "test:1: attempt to compare number with nil");
  EXPECT_EQ(err("return {} < {}"), "test:1: attempt to compare two table values");
  EXPECT_EQ(err("local x = 1.5 return x | 1"), "test:1: number (local 'x') has no integer representation");
  EXPECT_EQ(err("local a, b = 1, 0 return a // b"), "test:1: attempt to divide by zero");
  EXPECT_EQ(err("local a, b = 1, 0 return a % b"), "test:1: attempt to perform 'n%0'");
  EXPECT_EQ(err("for i = 1, 'x' do end"), "test:1: bad 'for' limit (number expected, got string)");
  EXPECT_EQ(err("for i = 1, 10, 0 do end"), "test:1: 'for' step is zero");
}

TEST_P(InterpErrors, ErrorLevelsAndValues) {
  EXPECT_EQ(err("error('msg')"), "test:1: msg");
  EXPECT_EQ(err("error('msg', 0)"), "msg");
  EXPECT_EQ(run("local function f() error('lvl2', 2) end\nlocal function g()\n f()\nend return select(2, pcall(g))"),
            "test:3: lvl2");
  EXPECT_EQ(run("local t = {} local ok, e = pcall(error, t) return e == t"), "true");
  EXPECT_EQ(run("return select(2, pcall(error))"), "nil");
  EXPECT_EQ(err("assert(false)"), "test:1: assertion failed!");
  EXPECT_EQ(err("local ok, e = pcall(assert, false) error(e, 0)"), "assertion failed!");
  EXPECT_EQ(err("assert(nil, 'custom')"), "test:1: custom");
  EXPECT_EQ(err("local ok, e = pcall(assert, nil, 'custom') error(e, 0)"), "custom");
}

TEST_P(InterpErrors, Xpcall) {
  EXPECT_EQ(run("return select(2, xpcall(function() error('x') end, function(m) return 'h:' .. m end))"), "h:test:1: x");
  EXPECT_EQ(run("return select(2, xpcall(error, function(m) error('again') end))"), "error in error handling");
  EXPECT_EQ(run("return select('#', xpcall(function() return 1, 2 end, print))"), "3");
}

TEST_P(InterpErrors, BadArguments) {
  EXPECT_EQ(err("setmetatable(1)"), "test:1: bad argument #1 to 'setmetatable' (table expected, got number)");
  EXPECT_EQ(run("return select(2, pcall(setmetatable, 1))"),
            "bad argument #1 to 'setmetatable' (table expected, got number)");
  EXPECT_EQ(run("return select(2, pcall(select, 0, 1))"), "bad argument #1 to 'select' (index out of range)");
}

TEST_P(InterpErrors, Tracebacks) {
  EXPECT_EQ(run("local function lvl3() error('deep') end\n"
                "local function lvl2() lvl3() end\n"
                "return select(2, xpcall(function() lvl2() end, debug.traceback))"),
            "test:1: deep\nstack traceback:\n\t[C]: in function 'error'\n\ttest:1: in upvalue 'lvl3'\n"
            "\ttest:2: in upvalue 'lvl2'\n\ttest:3: in function <test:3>\n\t[C]: in function 'xpcall'\n"
            "\ttest:3: in main chunk\n\t[C]: in ?");
}

TEST_P(InterpErrors, StackOverflow) {
  if (GetParam() != Mode::kNormal) GTEST_SKIP() << "a collection per call makes this quadratic";
  EXPECT_EQ(run("local function f() return 1 + f() end return select(2, pcall(f))"), "test:1: stack overflow");
  EXPECT_EQ(run("local t = setmetatable({}, {__index = function(t, k) return t[k] end}) "
                "return select(2, pcall(function() return t.x end))"),
            "test:1: C stack overflow");
  EXPECT_EQ(run("local t = setmetatable({}, {}) getmetatable(t).__tostring = function(s) return tostring(s) end "
                "return select(2, pcall(tostring, t))"),
            "C stack overflow");
}

INSTANTIATE_TEST_SUITE_P(Modes, InterpErrors, ::testing::Values(Mode::kNormal, Mode::kStress, Mode::kGenerational),
                         [](const auto& info) { return std::string(modeName(info.param)); });

}  // namespace
}  // namespace weft::vm::testing
