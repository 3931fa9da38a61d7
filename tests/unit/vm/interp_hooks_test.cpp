// Debug hooks run by the interpreter loop (debug.sethook): call, tail call, return, line
// and count events as lua5.4 reports them. Expected strings were checked against lua5.4.
#include <gtest/gtest.h>

#include "tests/unit/vm/interp_test_util.h"

namespace weft::vm::testing {
namespace {

class InterpHooks : public ::testing::TestWithParam<Mode> {
 protected:
  std::string run(const std::string& src) { return runLua(src, GetParam()); }
};

TEST_P(InterpHooks, CallReturnAndLineEventsInOrder) {
  EXPECT_EQ(run("local ev = {} local function f(a) local x = a + 1 return x end "
                "debug.sethook(function(e, l) ev[#ev+1] = e .. ':' .. tostring(l) end, 'crl') "
                "local y = f(1) debug.sethook() return table.concat(ev, ' ')"),
            "return:nil call:nil line:1 return:nil call:nil");
}

TEST_P(InterpHooks, LineHookFiresOnNewLinesAndBackwardJumps) {
  EXPECT_EQ(run("local lines = {}\n"
                "debug.sethook(function(e, l) lines[#lines + 1] = l end, 'l')\n"
                "local s = 0\n"
                "for i = 1, 2 do\n"
                "  s = s + i\n"
                "end\n"
                "debug.sethook()\n"
                "return table.concat(lines, ',')"),
            "3,4,5,4,5,4,7");
}

TEST_P(InterpHooks, CountHookFiresEveryNInstructionsCountingTheHooksOwn) {
  // 10000 FORLOOPs plus the hook's own instructions, as lua5.4 counts them.
  EXPECT_EQ(run("local n = 0 debug.sethook(function(e, l) assert(e == 'count' and l == nil) n = n + 1 end, '', 100) "
                "for i = 1, 10000 do end debug.sethook() return n"),
            "109");
}

TEST_P(InterpHooks, CountHookErrorStopsAnEndlessLoop) {
  EXPECT_EQ(run("local ok, err = pcall(function() "
                "debug.sethook(function() error('budget exhausted') end, '', 1000) while true do end end) "
                "debug.sethook() return tostring(ok) .. ' ' .. err"),
            "false test:1: budget exhausted");
}

TEST_P(InterpHooks, TailCallsAndNativesReportTheirEvents) {
  EXPECT_EQ(run("local ev = {} local function g() return 1 end local function f() return g() end "
                "debug.sethook(function(e) ev[#ev+1] = e end, 'cr') f() debug.sethook() "
                "return table.concat(ev, ' ')"),
            "return call tail call return call");
  EXPECT_EQ(run("local names = {} debug.sethook(function(e) local info = debug.getinfo(2, 'n') "
                "if e == 'call' and info and info.name then names[#names+1] = info.name end end, 'c') "
                "local function foo() end foo() math.abs(1) debug.sethook() return table.concat(names, ',')"),
            "foo,abs,sethook");
}

TEST_P(InterpHooks, VarargFunctionsGetTheirCallHookAfterAdjusting) {
  EXPECT_EQ(run("local ev = {} local function v(...) return select('#', ...) end "
                "debug.sethook(function(e, l) ev[#ev+1] = e .. ':' .. tostring(l) end, 'crl') v(1, 2) "
                "debug.sethook() return table.concat(ev, ' ')"),
            "return:nil call:nil line:1 call:nil return:nil return:nil call:nil");
}

TEST_P(InterpHooks, HooksAreOffWhileAHookRuns) {
  EXPECT_EQ(run("local depth, max = 0, 0 debug.sethook(function() depth = depth + 1 "
                "if depth > max then max = depth end local t = {} for i = 1, 10 do t[i] = i end "
                "depth = depth - 1 end, 'crl') local s = 0 for i = 1, 5 do s = s + i end "
                "debug.sethook() return max"),
            "1");
}

TEST_P(InterpHooks, HooksArePerThread) {
  EXPECT_EQ(run("local co = coroutine.create(function() for i = 1, 1000 do end return 'done' end) "
                "local n = 0 debug.sethook(co, function() n = n + 1 end, '', 10) "
                "local ok, r = coroutine.resume(co) "
                "return r .. ' ' .. tostring(n > 90) .. ' ' .. tostring(debug.gethook() == nil)"),
            "done true true");
}

INSTANTIATE_TEST_SUITE_P(Modes, InterpHooks, ::testing::Values(Mode::kNormal, Mode::kStress, Mode::kGenerational),
                         [](const auto& info) { return std::string(modeName(info.param)); });

}  // namespace
}  // namespace weft::vm::testing
