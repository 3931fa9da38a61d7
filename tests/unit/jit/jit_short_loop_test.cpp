// Short loops (docs/design/jit.md, "Short loops"): a main chunk whose numeric loop grows
// hot is not queued when the loop would end before its code could run. The margins are
// wide: a short loop here ends within a few milliseconds, a long one runs for a second
// interpreted, against an expected wait of tens of milliseconds.
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/jit/jit_test_util.h"
#include "vm/jit_loops.h"

namespace weft::vm::testing {
namespace {

// The JIT on at its default threshold (or with short loops compiled like any other,
// `skipShortLoops` off).
StateOptions shortLoopOptions(bool skipShortLoops = true) {
  StateOptions opts;
  opts.jit.mode = JitMode::kOn;
  opts.jit.skipShortLoops = skipShortLoops;
  return opts;
}

// Runs `src` and waits for the compile thread.
std::string runSettled(HotState& ls, const std::string& src) {
  std::string out = ls.run(src);
  ls.settle();
  return out;
}

constexpr const char* kShortNumeric = "local s = 0 for i = 1, 20000 do s = s + i % 7 end return s";
constexpr const char* kShortWhile = "local i, s = 0, 0 while i < 20000 do i = i + 1 s = s + i % 7 end return s";
// About a second interpreted on the two-core machine; compiled, a tenth of that.
constexpr const char* kLongNumeric = "local s = 0 for i = 1, 60000000 do s = s + i % 7 end return s";
constexpr const char* kLongWhile = "local i, s = 0, 0 while i < 60000000 do i = i + 1 s = s + i % 7 end return s";

TEST(JitShortLoopTest, AMainChunksShortNumericLoopIsNotCompiled) {
  HotState ls(shortLoopOptions());
  EXPECT_EQ(runSettled(ls, kShortNumeric), "59998");
  EXPECT_EQ(ls.compiled(), 0) << ls.stats();
  EXPECT_EQ(ls.waited(), 1) << ls.stats();
}

// A loop that outlasts its first window (ten milliseconds or so) but ends well before
// the code of its chunk could be ready: a chunk of some 300 instructions waits about
// half a second for its compilation by the assumed rate.
TEST(JitShortLoopTest, ALoopEndingBeforeItsCodeWouldIsLeftToTheInterpreter) {
  HotState ls(shortLoopOptions());
  std::string chunk = "local s = 0 for i = 1, 1000000 do s = s + i % 7 end ";
  for (int i = 0; i < 300; i++) chunk += "x = 1 ";
  EXPECT_EQ(runSettled(ls, chunk + "return s"), "2999998");
  EXPECT_EQ(ls.compiled(), 0) << ls.stats();
  EXPECT_EQ(ls.waited(), 1) << ls.stats();
}

// A while loop's rounds no register says: it is queued once it has run half the wait
// for its code (tens of milliseconds), which a short one never does...
TEST(JitShortLoopTest, AMainChunksShortWhileLoopIsNotCompiled) {
  HotState ls(shortLoopOptions());
  EXPECT_EQ(runSettled(ls, kShortWhile), "59998");
  EXPECT_EQ(ls.compiled(), 0) << ls.stats();
  EXPECT_EQ(ls.waited(), 1) << ls.stats();
}

// ...and a long one does, and enters its code.
TEST(JitShortLoopTest, AMainChunksLongWhileLoopIsCompiledAndEntered) {
  HotState ls(shortLoopOptions());
  EXPECT_EQ(runSettled(ls, kLongWhile), "179999998");
  EXPECT_EQ(ls.compiled(), 1) << ls.stats();
  EXPECT_EQ(ls.waited(), 1) << ls.stats();
  EXPECT_GE(ls.entries(), 1) << ls.stats();
}

// A generic for over gmatch, whose iterator compiled code cannot call, after a short
// numeric loop: its code would leave at every round, so the loop is no reason to compile
// the chunk, whatever its length (vm/jit_loops.cpp loopNestMayIterate). (As the chunk's
// only hot loop, the VM's coarse test rejects the chunk without loading LLVM.)
TEST(JitShortLoopTest, ALoopCompiledCodeWouldLeaveAtOnceIsNotCompiled) {
  HotState ls(shortLoopOptions());
  EXPECT_EQ(runSettled(ls,
                       "local s = 0 for i = 1, 20000 do s = s + i % 7 end "
                       "local n = 0 for w in string.rep('ab ', 20000):gmatch('%a+') do n = n + #w end "
                       "return n + s"),
            "99998");
  EXPECT_EQ(ls.compiled(), 0) << ls.stats();
  EXPECT_EQ(ls.waited(), 1) << ls.stats();
}

// The same loop as the first to reach the threshold, in a chunk the coarse test keeps (a
// numeric loop ran before it, too few rounds to reach the threshold): it waits.
TEST(JitShortLoopTest, AFirstHotLoopCompiledCodeWouldLeaveAtOnceWaits) {
  HotState ls(shortLoopOptions());
  EXPECT_EQ(runSettled(ls,
                       "local s = 0 for i = 1, 300 do s = s + i % 7 end "
                       "local n = 0 for w in string.rep('ab ', 20000):gmatch('%a+') do n = n + #w end "
                       "return n + s"),
            "40903");
  EXPECT_EQ(ls.compiled(), 0) << ls.stats();
  EXPECT_EQ(ls.waited(), 1) << ls.stats();
}

// Without skipShortLoops (an explicit --jit-threshold) the same loop is compiled.
TEST(JitShortLoopTest, WithoutTheEstimateAShortLoopIsCompiled) {
  HotState ls(shortLoopOptions(false));
  EXPECT_EQ(runSettled(ls, kShortNumeric), "59998");
  EXPECT_EQ(ls.compiled(), 1) << ls.stats();
  EXPECT_EQ(ls.waited(), 0) << ls.stats();
}

// A loop whose code would run only briefly after it arrives is not worth the compilation,
// which slows the worker while it runs: it must look at least twice as long as the wait
// (a window's pace misjudges a loop by tens of percent, so a test through one could not
// tell 1.5 from 2).
TEST(JitShortLoopTest, ALoopMustOutlastTwiceTheWaitForItsCode) {
  EXPECT_FALSE(loopOutlastsCode(100.0, 100.0));
  EXPECT_FALSE(loopOutlastsCode(190.0, 100.0));
  EXPECT_TRUE(loopOutlastsCode(200.0, 100.0));
  EXPECT_TRUE(loopOutlastsCode(1000.0, 100.0));
}

// bench/concat.lua's first window, with its table's growth in it, found three times the
// loop's pace and queued a chunk whose code came after the loop had ended: a second
// window must find the loop long too.
TEST(JitShortLoopTest, ALoopIsQueuedOnlyWhenTwoWindowsFindItLong) {
  EXPECT_EQ(judgeLoopWindow(300.0, 100.0, 1), LoopVerdict::kMeasureAgain);
  EXPECT_EQ(judgeLoopWindow(300.0, 100.0, 2), LoopVerdict::kQueue);
  EXPECT_EQ(judgeLoopWindow(150.0, 100.0, 1), LoopVerdict::kShort);
  EXPECT_EQ(judgeLoopWindow(150.0, 100.0, 2), LoopVerdict::kShort);
}

TEST(JitShortLoopTest, AMainChunksLongLoopIsCompiledAndEntered) {
  HotState ls(shortLoopOptions());
  EXPECT_EQ(runSettled(ls, kLongNumeric), "179999998");
  EXPECT_EQ(ls.compiled(), 1) << ls.stats();
  EXPECT_GE(ls.entries(), 1) << ls.stats();
}

// The first loop waits; the second, long, is profiled (its instructions had never run)
// and then compiled from the waiting code.
TEST(JitShortLoopTest, AShortLoopThenALongOneCompilesForTheLongOne) {
  HotState ls(shortLoopOptions());
  EXPECT_EQ(runSettled(ls,
                       "local s = 0 for i = 1, 20000 do s = s + i % 7 end "
                       "local t = 0 for i = 1, 60000000 do t = t + i % 5 end return s + t"),
            "120059998");
  EXPECT_EQ(ls.waited(), 1) << ls.stats();
  EXPECT_EQ(ls.compiled(), 1) << ls.stats();
  EXPECT_GE(ls.entries(), 1) << ls.stats();
}

// A chunk run again and again (a function `load` made) is no one-shot frame: the second
// run's loop starts its rounds again, and the chunk is queued. The runs together take a
// few milliseconds, less than any wait: only the restart can queue it.
TEST(JitShortLoopTest, AChunkRunAgainIsCompiled) {
  HotState ls(shortLoopOptions());
  EXPECT_EQ(runSettled(ls,
                       "f = load('local s = 0 for i = 1, 3000 do s = s + i % 7 end return s') "
                       "local t = 0 for _ = 1, 100 do t = t + f() end return t"),
            "899800");
  EXPECT_EQ(ls.compiled(), 1) << ls.stats();
  EXPECT_EQ(runSettled(ls, "return f()"), "8998");
  EXPECT_GE(ls.entries(), 1) << ls.stats();
}

}  // namespace
}  // namespace weft::vm::testing
