// Known natives, `#` and generic `for` loops in compiled code (docs/design/jit.md, "Known
// natives"): a call site that only ever called one of the natives vm/jit_abi.h lists
// computes it in place, and a loop over ipairs or pairs goes round without leaving
// compiled code; any other callee, argument or metamethod leaves for the interpreter,
// whose results and errors are the library's.
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/jit/jit_test_util.h"

namespace weft::vm::testing {
namespace {

// Defines f = `body` (a function of n) and runs f(n) hot (HotState::warmThenHot).
std::string warmThenHot(HotState& hs, const std::string& body, int n, long& hotExits) {
  hs.run("f = " + body);
  return hs.warmThenHot("return f(200)", "return f(" + std::to_string(n) + ")", hotExits);
}

// Each native computed in place gives the library's result, and the loop around them
// goes round in compiled code: it is entered and left once per call.
TEST(JitNativeTest, KnownNativesRunInPlace) {
  HotState hs;
  long exits = 0;
  std::string hot =
      warmThenHot(hs,
                  "function(n) local s = 0 "
                  "for i = 1, n do "
                  "  local x = i / 3 "
                  "  s = s + math.floor(x) + math.ceil(x) + math.abs(-i) + math.max(i, 7) + math.min(i, 7) "
                  "    + string.byte('abc', i % 3 + 1) + string.len('four') + math.sqrt(i * i) "
                  "end return s end",
                  1000, exits);
  EXPECT_EQ(hot, "1944167.0");
  EXPECT_LE(exits, 1) << hs.stats();
}

// ipairs and pairs loops, the calls that start them and the CLOSE that ends them, run
// in compiled code: entries and exits do not grow with the rounds.
TEST(JitNativeTest, GenericForLoopsStayCompiled) {
  HotState hs;
  hs.run("t = {} for i = 1, 50 do t[i] = i end t.x = 1000");
  long exits = 0;
  std::string hot = warmThenHot(hs,
                                "function(n) local s = 0 "
                                "for r = 1, n do "
                                "  for i, v in ipairs(t) do s = s + i * v end "
                                "  for k, v in pairs(t) do s = s + v end "
                                "  s = s + #t "
                                "end return s end",
                                400, exits);
  EXPECT_EQ(hot, std::to_string(400 * (42925 + 1275 + 1000 + 50)));
  EXPECT_LE(exits, 1) << hs.stats();
}

// A method call: SELF finds the method through the metatable's __index table (the self
// helper) and the call is a compiled call, so the loop does not leave compiled code.
TEST(JitNativeTest, MethodCallsStayCompiled) {
  HotState hs;
  hs.run(
      "Counter = {} Counter.__index = Counter "
      "function Counter:step(k) self.n = self.n + k return self.n end "
      "c = setmetatable({n = 0}, Counter)");
  long exits = 0;
  std::string hot =
      warmThenHot(hs, "function(n) local s = 0 for i = 1, n do s = s + c:step(1) % 7 end return s end", 1000, exits);
  EXPECT_EQ(hs.run("return c.n"), "1600");
  EXPECT_EQ(hot, "2998");
  EXPECT_LE(exits, 1) << hs.stats();
}

// What the fast paths do not take is the interpreter's, mid-loop: a metatable with
// __index under ipairs, __pairs, __len, a key removed during pairs, a callee that
// changes, arguments that need coercion or raise, a closing value.
TEST(JitNativeTest, EverythingElseLeavesForTheInterpreter) {
  HotState hs;
  hs.run("function sum(t) local s = 0 for i, v in ipairs(t) do s = s + v end return s end");
  hs.run("for r = 1, 300 do sum({1, 2, 3}) end");
  hs.settle();
  EXPECT_EQ(hs.run("return sum(setmetatable({1, 2}, {__index = function(_, k) if k < 6 then return k end end}))"),
            "15");
  hs.run("function count(t) local n = 0 for k in pairs(t) do n = n + 1 end return n end");
  hs.run("for r = 1, 300 do count({a = 1, b = 2}) end");
  hs.settle();
  EXPECT_EQ(hs.run("return count(setmetatable({}, {__pairs = function(t) return function(_, k) "
                   "if not k then return 1 end end, t, nil end}))"),
            "1");
  EXPECT_EQ(hs.run("local t = {a = 1, b = 2, c = 3} local n = 0 "
                   "for k in pairs(t) do t[k] = nil n = n + 1 end return n"),
            "3");
  hs.run("function size(t) local n = 0 for r = 1, 10 do n = n + #t end return n end");
  hs.run("for r = 1, 300 do size({1}) end");
  hs.settle();
  EXPECT_EQ(hs.run("return size(setmetatable({}, {__len = function() return 4 end}))"), "40");
  EXPECT_EQ(hs.run("return size('abc')"), "30");
  hs.run("function apply(g, n) local s = 0 for i = 1, n do s = s + g(i / 2) end return s end");
  hs.run("for r = 1, 5 do apply(math.floor, 100) end");
  hs.settle();
  EXPECT_EQ(hs.run("return apply(math.floor, 10)"), "25");
  EXPECT_EQ(hs.run("return apply(math.ceil, 10)"), "30");
  EXPECT_EQ(hs.run("return apply(math.floor, 10)"), "25");
  EXPECT_EQ(hs.run("return math.floor('2.5')"), "2");
  EXPECT_EQ(hs.run("local ok, e = pcall(apply, math.floor, 0) return tostring(ok)"), "true");
  EXPECT_EQ(hs.run("local ok, e = pcall(function() local s = 0 for i = 1, 300 do s = s + math.abs(i < 300 and i or {}) "
                   "end end) return e"),
            "test:1: bad argument #1 to 'abs' (number expected, got table)");
  EXPECT_EQ(hs.run("local log = {} "
                   "local c = setmetatable({}, {__close = function() log[#log + 1] = 'closed' end}) "
                   "for i = 1, 300 do for k, v in next, {1}, nil, c do end end return #log"),
            "300");
}

}  // namespace
}  // namespace weft::vm::testing
