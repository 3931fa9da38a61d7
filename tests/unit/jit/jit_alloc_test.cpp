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
