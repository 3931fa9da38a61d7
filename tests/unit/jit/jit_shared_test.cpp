// Shared frames in compiled code (docs/design/jit.md, "Shared frames"): a frame whose
// registers open upvalues refer to (docs/design/values.md) is profiled, compiled and
// entered, and its code reconciles registers and cells where the interpreter does: the
// frame and its closures see each other's writes as one variable.
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/jit/jit_test_util.h"

namespace weft::vm::testing {
namespace {

// A closure writing the local its caller's loop also writes, a closure reading what the
// loop wrote, a comparator run by a native, a coroutine: the same results interpreted,
// eager and eager relocating.
const char* const kSharedPrograms[] = {
    "local x = 0 local function bump() x = x + 1 end for i = 1, 1000 do bump() x = x + 2 end return x",
    "local x, seen = 0, 0 local function look() seen = seen + x end for i = 1, 1000 do x = i look() end return seen",
    "local n, t = 0, {} local function lt(a, b) n = n + 1 return a < b end "
    "for r = 1, 20 do for i = 1, 30 do t[i] = (i * 7 + r) % 30 end table.sort(t, lt) n = n + 1000 end return n",
    "local x = 0 local co = coroutine.wrap(function() while true do x = x + 10 coroutine.yield() end end) "
    "for i = 1, 100 do co() x = x + 1 end return x",
    "local x = 1 local function get() return x end local s = 0 for i = 1, 500 do s = s + get() x = x + 1 end "
    "return s .. ' ' .. x",
};

TEST(JitSharedTest, SharedFramesAsTheInterpreters) {
  for (const char* src : kSharedPrograms) expectAgreeing(src);
  EXPECT_EQ(runLua(kSharedPrograms[0], Run::kInterpreted), "3000");
  EXPECT_EQ(runLua(kSharedPrograms[1], Run::kInterpreted), "500500");
  EXPECT_EQ(runLua(kSharedPrograms[3], Run::kInterpreted), "1100");
  EXPECT_EQ(runLua(kSharedPrograms[4], Run::kInterpreted), "125250 501");
}

// With feedback: the loop of a function whose closure captures its locals goes round in
// compiled code (the frame is shared from the CLOSURE on), calling the closure, and the
// two see each other's writes. Before, a shared frame was never profiled nor entered;
// without the reconciliation around the compiled call the closure's increments are lost.
TEST(JitSharedTest, LoopsOfSharedFramesRunCompiled) {
  HotState hs;
  hs.run(
      "f = function(n) local x = 0 local function bump() x = x + 1 end "
      "for i = 1, n do bump() x = x + 2 end return x end");
  long exits = 0;
  EXPECT_EQ(hs.warmThenHot("return f(300)", "return f(3000)", exits), "9000");
  // The poll leaves every 64 rounds to reconcile (counted at safepoints), the CLOSURE
  // and the return are the interpreter's: a few dozen exits, not one per round.
  EXPECT_LE(exits, 3000 / 64 + 10) << hs.stats();
  EXPECT_GE(hs.entries(), 1) << hs.stats();
}

// A main chunk's loop, whose locals its functions capture (eager: the chunk is compiled
// at its start): entered at its first back-edge. Writing a captured local, it leaves
// every 64 rounds for the interpreter to reconcile (with the frame never entered: one
// entry at the chunk's start, one exit at its CLOSURE); writing none, it never needs to.
TEST(JitSharedTest, AMainChunksLoopIsEntered) {
  HotState writes(false, true);
  EXPECT_EQ(writes.run("local total = 0 local function get() return total end "
                       "for i = 1, 6400 do total = total + i % 7 end return get()"),
            "19197");
  EXPECT_GE(writes.entries(), 6400 / 64 / 2) << writes.stats();
  EXPECT_LE(writes.exits(), 6400 / 64 + 10) << writes.stats();
  HotState reads(false, true);
  EXPECT_EQ(reads.run("local total = 0 local function add(k) total = total + k end "
                      "local s = 0 for i = 1, 6400 do s = s + i % 7 end add(s) return total"),
            "19197");
  EXPECT_LE(reads.exits(), 5) << reads.stats();
}

}  // namespace
}  // namespace weft::vm::testing
