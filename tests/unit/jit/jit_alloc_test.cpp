// Allocation and inserting stores in compiled code, and cold loops (docs/design/jit.md,
// "Allocation and inserting stores", "Cold loops"): a loop that builds tables and
// inserts keys goes round compiled, and a loop whose instructions had never run when
// its function was first compiled is profiled and compiled later.
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/jit/jit_test_util.h"

namespace weft::vm::testing {
namespace {

// The report's guard exits by site ("guard exits NAME pc N (version V) COUNT" lines).
std::string guardExitLines(const std::string& stats) {
  std::string lines;
  for (size_t at = stats.find("guard exits"); at != std::string::npos; at = stats.find("guard exits", at + 1)) {
    lines += stats.substr(at, stats.find('\n', at) - at) + "\n";
  }
  return lines;
}

// NEWTABLE, SETLIST and stores of new keys (integer and string, into the array part and
// the hash part) run in compiled code. A compiled caller calls f 50 times: the run
// leaves compiled code about once (at g's return into the host), where f's loop leaving
// it would exit at every call.
TEST(JitAllocTest, TablesBuiltAndGrownInALoopStayCompiled) {
  HotState hs;
  hs.run("names = {} for i = 1, 64 do names[i] = 'k' .. i end");
  hs.run(
      "f = function(n) local t, s = {}, 0 "
      "for i = 1, n do "
      "  local pair = {i, i + 1} "
      "  local rec = {size = i} "
      "  rec.extra = pair[2] "
      "  t[i] = rec "
      "  t[names[i % 64 + 1]] = i "
      "  t[-i] = i "
      "  s = s + pair[1] + rec.size + rec.extra "
      "end return s + #t end");
  hs.run("g = function(n) local s = 0 for k = 1, 50 do s = s + f(n) end return s end");
  long exits = 0;
  EXPECT_EQ(hs.warmThenHot("return g(200)", "return g(100)", exits),
            std::to_string(50 * (3 * (100 * 101 / 2) + 100 + 100)));
  EXPECT_LE(exits, 2) << hs.stats();
}

// A table of a call's results (bench/binarytrees.lua's {bottomUp(d), bottomUp(d)}: the
// last call's results are open, and SETLIST takes them up to the top) and a return of
// them run in compiled code (docs/design/jit.md, "Open results"): a tree of 4,095 nodes
// is built and checked leaving compiled code a few times, where every inner call exited
// at its open call before.
TEST(JitAllocTest, OpenResultsTakenWholeStayCompiled) {
  HotState hs;
  hs.run(
      "bottomUp = function(d) if d == 0 then return {} end d = d - 1 return {bottomUp(d), bottomUp(d)} end "
      "check = function(t) if t[1] then return 1 + check(t[1]) + check(t[2]) end return 1 end "
      "pair = function(t) return 0, check(t) end");
  long exits = 0;
  EXPECT_EQ(hs.warmThenHot("local a, b = pair(bottomUp(8)) return a + b",
                           "local a, b = pair(bottomUp(11)) return a + b", exits),
            "4095");
  EXPECT_LE(exits, 4) << hs.stats();
}

// Open results as the interpreter's: a constructor or a return of a call's results,
// none, several, a native's, more than the stack held (the native grows it: the code
// leaves, and the interpreter takes them), and a return into pcall, which compiled code
// leaves to the interpreter: the exit writes registers back, which must not put the
// function called over its first result (reloadFrom).
TEST(JitAllocTest, OpenResultsAsTheInterpreters) {
  for (bool eager : {false, true}) {
    HotState hs(false, eager);
    hs.run(
        "two = function() return 1, 2 end none = function() end "
        "big = {} for i = 1, 5000 do big[i] = i end "
        "f = function(s) local t = {0, two()} local u = {two(), two()} local v = {none()} local w = {s:byte(1, -1)} "
        "local x = {table.unpack(big)} return #t .. #u .. #v .. #w .. ' ' .. #x end "
        "g = function() return 7, two() end "
        "k = function() local ok, a, b, c = pcall(g) return a + b + c end "
        "h = function(s) local a, b, c, d = g() local e, f2 = 0, f(s) return a + b + c + (d or 0) .. f2 .. k() end");
    long exits = 0;
    EXPECT_EQ(hs.warmThenHot("return h('abc')", "return h('hello')", exits), "103305 500010") << eager;
  }
}

// A function first compiled while only its first loop had run: the second loop exits at
// its first instruction (cold, no feedback) and then runs interpreted, until the cold
// loop's back-edges have it profiled and the function compiled again (a cold round,
// counted as a recompilation). The last call enters that code and leaves it only at its
// return (into the host, which is the interpreter's): no guard exit.
TEST(JitAllocTest, ALoopColdAtTheFirstCompilationIsCompiledLater) {
  HotState hs;
  hs.run(
      "f = function(phase, n) local s = 0 "
      "if phase == 1 then for i = 1, n do s = s + i end "
      "else for i = 1, n do s = s + i * 3 % 7 end end "
      "return s end");
  hs.warm("return f(1, 300)");
  hs.run("return f(2, 20000)");  // cold, then profiled, then queued again
  hs.settle();
  EXPECT_EQ(hs.recompiled(), 1) << hs.stats();
  std::string guards = guardExitLines(hs.stats());
  long entries = hs.entries();
  EXPECT_EQ(hs.run("return f(2, 20000)"), "60000");
  EXPECT_EQ(guardExitLines(hs.stats()), guards) << hs.stats();
  EXPECT_GE(hs.entries() - entries, 1) << hs.stats();
}

// The same for a function the VM rejected at first (its only hot loop reads varargs,
// which compiled code never does): its next loop, cold, is compiled later.
TEST(JitAllocTest, ALoopColdInARejectedFunctionIsCompiledLater) {
  HotState hs;
  hs.run(
      "f = function(phase, n, ...) local s = 0 local x = 0 "
      "if phase == 1 then for i = 1, n do s = s + select('#', ...) end "
      "else for i = 1, n do x = x + i * 3 % 7 end end "
      "return s + x end");
  hs.warm("return f(1, 300, 'a')");
  EXPECT_EQ(hs.entries(), 0) << hs.stats();
  hs.run("return f(2, 20000)");
  hs.settle();
  EXPECT_EQ(hs.recompiled(), 1) << hs.stats();
  long entries = hs.entries();
  EXPECT_EQ(hs.run("return f(2, 20000)"), "60000");
  EXPECT_GE(hs.entries() - entries, 1) << hs.stats();
}

}  // namespace
}  // namespace weft::vm::testing
