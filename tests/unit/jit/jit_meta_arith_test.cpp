// Arithmetic on tables in compiled code (docs/design/jit.md, "Metamethod arithmetic"): an
// operand that was never a number calls its Lua metamethod's code as a compiled call,
// and whatever the metamethod does (raise, yield, collect, nest, go missing) the run is
// the interpreter's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/jit/jit_test_util.h"

namespace weft::vm::testing {
namespace {

// A vector class whose every arithmetic event is a Lua metamethod, and `f`, which uses
// each in a loop, with a table on either side and numbers as constants, immediates and
// registers.
const char* const kVectors =
    "V = {} V.__index = V "
    "function vec(x, y) return setmetatable({x = x, y = y}, V) end "
    "function V.__add(a, b) if type(b) == 'number' then return vec(a.x + b, 1) "
    "  elseif type(a) == 'number' then return vec(a + b.x, 1) end return vec(a.x + b.x, 1) end "
    "function V.__sub(a, b) if type(b) == 'number' then return vec(a.x - b, 2) end return vec(a.x - b.x, 2) end "
    "function V.__mul(a, b) if type(a) == 'number' then return vec(a * b.x, 3) end return vec(a.x * b, 3) end "
    "function V.__div(a, b) return vec(a.x / b.x, 4) end "
    "function V.__mod(a, b) return vec(a.x % b, 5) end "
    "function V.__pow(a, b) return vec(a.x ^ b, 6) end "
    "function V.__idiv(a, b) return vec(a.x // b.x, 7) end "
    "function V.__band(a, b) return vec(a.x & b, 8) end "
    "function V.__bor(a, b) return vec(a.x | b.x, 9) end "
    "function V.__bxor(a, b) return vec(a.x ~ b.x, 10) end "
    "function V.__shl(a, b) return vec(a.x << b, 11) end "
    "function V.__shr(a, b) return vec(a.x >> b, 12) end "
    "function f(n) local s, k = 0, 3 "
    "  for i = 1, n do "
    "    local a, b = vec(i, 0), vec(i % 5 + 1, 0) "
    "    local r = a + b s = s + r.x + (a - b).x + (a * 2).x + (2 * a).x + (a / b).x + (a % k).x "
    "    s = s + (a ^ 2).x + (a // b).x + (a & 6).x + (a | b).x + (a ~ b).x + (a << 1).x + (a >> 1).x "
    "    s = s + (a + 1).x + (1 + a).x + (a - 1.5).x + (r + a).y "
    "  end return s end "
    "function g(n) local s = 0 for k = 1, 200 do s = s + f(n) end return s end";

// The interpreter's result of `defs` followed by `chunk`, in a fresh State without the
// JIT.
std::string interpreted(const std::string& defs, const std::string& chunk) {
  StateOptions opts;
  opts.jit.mode = JitMode::kOff;
  return runLuaWith(defs + "\n" + chunk, opts);
}

// Warms `hot` after `defs` (threshold 100, with feedback) and returns its result, and in
// `exits` how many times that last run left compiled code.
std::string hotRun(HotState& hs, const std::string& defs, const std::string& hot, long& exits) {
  hs.run(defs);
  return hs.warmThenHot(hot, hot, exits);
}

// Every arithmetic event of a table calls its metamethod's code: f's loop, called 200
// times by a compiled g, leaves compiled code about once (g's return into the host);
// each metamethod was an exit before.
TEST(JitMetaArithTest, MetamethodArithmeticStaysCompiled) {
  std::string expected = interpreted(kVectors, "return g(5)");
  HotState hs;
  long exits = 0;
  EXPECT_EQ(hotRun(hs, kVectors, "return g(5)", exits), expected);
  EXPECT_LE(exits, 2) << hs.stats();
}

// The same with every safepoint relocating the heap and the heap verified: the
// metamethods allocate, and their results come back through the caller's slots. (The
// interpreter's result first: a second State must not run beside a verifying one.)
TEST(JitMetaArithTest, MetamethodArithmeticRelocating) {
  std::string expected = interpreted(kVectors, "return f(6)");
  HotState hs(true);
  long exits = 0;
  EXPECT_EQ(hotRun(hs, kVectors, "return f(6)", exits), expected);
}

// What the compiled sites meet after warming on tables, each the interpreter's: a
// metamethod that raises (its message and line), an operand without one (the
// interpreter's error naming the variable), numeric strings and numbers (computed, no
// call), a native metamethod, a callable table, and a metamethod that collects.
const char* const kSites =
    "M = {} "
    "M.__add = function(a, b) if rawget(a, 'bad') then error('bad add') end "
    "  if rawget(a, 'gc') then collectgarbage() end return (rawget(a, 'v') or 0) + 1 end "
    "function site(x, y) return x + y end "
    "function loop(n, x) local s = 0 for i = 1, n do s = s + site(x, i) end return s end "
    "warm = setmetatable({v = 1}, M)";

TEST(JitMetaArithTest, WhatTheSitesMeetIsTheInterpreters) {
  const char* const cases[] = {
      "return loop(150, warm)",
      "local ok, e = pcall(loop, 300, setmetatable({bad = true}, M)) return tostring(ok) .. ' ' .. e",
      "local ok, e = pcall(loop, 300, {}) return tostring(ok) .. ' ' .. e",
      "return loop(150, '10')",
      "return loop(150, 2.5)",
      "local N = setmetatable({}, {__add = rawequal}) local s = 0 "
      "for i = 1, 150 do if site(N, i) == false then s = s + 1 end end return s",
      "local C = setmetatable({}, {__add = setmetatable({}, {__call = function(self, a, b) return b end})}) "
      "return loop(150, C)",
      "return loop(150, setmetatable({gc = true, v = 2}, M))",
  };
  std::vector<std::string> expected;
  for (const char* c : cases) expected.push_back(interpreted(kSites, c));
  for (bool relocate : {false, true}) {
    HotState hs(relocate);
    hs.run(kSites);
    hs.warm("return loop(150, warm)", "300");
    for (size_t i = 0; i < expected.size(); i++) {
      EXPECT_EQ(hs.run(cases[i]), expected[i]) << cases[i] << (relocate ? " (relocating)" : "");
    }
  }
}

// A metamethod whose callee yields now and then, called from compiled code in a
// coroutine: the coroutine suspends inside it (the nest leaves compiled code with its
// frames exact), and after the resume the interpreter finishes the metamethod and the
// addition (finishOpMayGC), so every value passes.
TEST(JitMetaArithTest, AMetamethodWhoseCalleeYields) {
  const std::string defs =
      "function maybe(b) if b % 50 == 0 then return coroutine.yield(b) end return b end "
      "Y = {__add = function(a, b) return maybe(b) + a.v end} "
      "function acc(n, y) local s = 0 for i = 1, n do s = s + (y + i) end return s end "
      "function drive(n) local y = setmetatable({v = 1}, Y) "
      "  local co = coroutine.wrap(acc) local got, v = 0, co(n, y) "
      "  while v <= n do got = got + v v = co(v) end return got .. ' ' .. v end";
  std::string expected = interpreted(defs, "return drive(5000)");
  HotState hs;
  hs.run(defs);
  hs.warm("return drive(5000)");
  long exits = 0;
  EXPECT_EQ(hs.warmThenHot("return drive(5000)", "return drive(5000)", exits), expected);
  // About one exit per yield (100): each addition was an exit before.
  EXPECT_LE(exits, 120) << hs.stats();
}

// Metamethods that nest: each addition of a chain calls the next one's metamethod. Lua
// counts metamethod calls as C calls, so a chain deeper than the limit fails with the
// interpreter's error, and a shallow one adds up.
TEST(JitMetaArithTest, NestedMetamethodsCountAsTheInterpretersCalls) {
  const std::string defs =
      "L = {} L.__add = function(a, b) if a.next then return (a.next + b) + 1 end return b end "
      "function chain(n) local c = setmetatable({}, L) for i = 1, n do c = setmetatable({next = c}, L) end return c "
      "end "
      "function sum(c, n) local s = 0 for i = 1, n do s = s + (c + i) end return s end";
  const char* const cases[] = {"return sum(chain(20), 200)",
                               "local ok, e = pcall(sum, chain(400), 5) return tostring(ok) .. ' ' .. e"};
  std::string expected[] = {interpreted(defs, cases[0]), interpreted(defs, cases[1])};
  HotState hs;
  hs.run(defs);
  hs.warm("return sum(chain(3), 200)");
  for (int i = 0; i < 2; i++) EXPECT_EQ(hs.run(cases[i]), expected[i]) << cases[i];
}

}  // namespace
}  // namespace weft::vm::testing
