// Natives called from compiled code (docs/design/jit.md, "Native calls"): a loop calling
// natives goes round compiled, and whatever the native does (run Lua, collect, raise,
// yield, set a hook) the run is the interpreter's.
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/jit/jit_test_util.h"

namespace weft::vm::testing {
namespace {

// Defines `defs`, warms `chunk` (each round giving `expected`) and returns the
// --jit-stats report.
std::string warmedStats(HotState& hs, const std::string& defs, const std::string& chunk, const char* expected) {
  hs.run(defs);
  hs.warm(chunk, expected);
  return hs.stats();
}

// Warms `f` through a compiled caller `g` that calls it 50 times, then returns g(n) and
// the exits of that last run.
std::string hotThroughCaller(HotState& hs, const std::string& f, int n, long& exits) {
  hs.run("f = " + f);
  hs.run("g = function(n) local s = 0 for k = 1, 50 do s = s + f(n) end return s end");
  return hs.warmThenHot("return g(20)", "return g(" + std::to_string(n) + ")", exits);
}

// type, select, setmetatable, rawlen, string.sub, tostring: natives the tier does not
// know, in a loop that now goes round compiled: g's 50 calls of f leave compiled code
// about once (g's return into the host), where each call used to exit at every native.
TEST(JitNativeCallTest, NativeCallsInALoopStayCompiled) {
  HotState hs;
  long exits = 0;
  std::string out = hotThroughCaller(hs,
                                     "function(n) local s, mt = 0, {} "
                                     "for i = 1, n do "
                                     "  local t = setmetatable({i}, mt) "
                                     "  if type(t) == 'table' and getmetatable(t) == mt then s = s + rawlen(t) end "
                                     "  s = s + select('#', i, i) + #string.sub('abcdef', 2, i % 6) + #tostring(i) "
                                     "end return s end",
                                     100, exits);
  EXPECT_EQ(out, "32900");
  EXPECT_LE(exits, 2) << hs.stats();
}

// Natives that run Lua (a comparator, a gsub function, a __tostring), whose compiled
// code nests on the same machine stack, and one that collects: the results are the
// interpreter's, also with every safepoint relocating (fewer rounds: each collection
// moves the whole heap).
const char* const kRunsLuaOrCollects =
    "function(n) local s = 0 "
    "local mt = {__tostring = function(v) return 'v' .. v[1] end} "
    "for i = 1, n do "
    "  local t = {i % 7, 3, i % 5} "
    "  table.sort(t, function(a, b) return a > b end) "
    "  local r = string.gsub('a1b2', '%d', function(d) return d + i end) "
    "  s = s + t[1] + #r + #tostring(setmetatable({i}, mt)) "
    "  if i % 16 == 0 then collectgarbage('step') end "
    "end return s end";

TEST(JitNativeCallTest, NativesThatRunLuaOrCollect) {
  HotState hs;
  long exits = 0;
  EXPECT_EQ(hotThroughCaller(hs, kRunsLuaOrCollects, 60, exits), "37600");
}

TEST(JitNativeCallTest, NativesThatRunLuaOrCollectRelocating) {
  HotState hs(true);
  hs.run(std::string("f = ") + kRunsLuaOrCollects);
  long exits = 0;
  EXPECT_EQ(hs.warmThenHot("return f(8)", "return f(40)", exits), "493");
}

// What a native does that compiled code cannot go on from, in eager mode (every call
// compiled, none cold): its error, its yield, a collection, a hook it sets. The run is
// the interpreter's: each fails with the helper's answer for it replaced.

// An error: the message and the line are the interpreter's, and pcall catches it.
TEST(JitNativeCallTest, ErrorsOfNativesAreTheInterpreters) {
  HotState hs(false, true);
  hs.run(
      "f = function(n, bad) local s = 0\n"
      "for i = 1, n do\n"
      "  s = s + #string.rep('x', i % 3)\n"
      "  if i == bad then s = s + #string.rep('x', {}) end\n"
      "end return s end");
  EXPECT_EQ(hs.run("local ok, e = pcall(f, 300, 250) return tostring(ok) .. ' ' .. e"),
            "false test:4: bad argument #2 to 'rep' (number expected, got table)");
  EXPECT_EQ(hs.run("return f(300, -1)"), "300");
}

// A yield (coroutine.yield called from a compiled loop inside a coroutine): the
// coroutine suspends and resumes in the interpreter, every value passes.
TEST(JitNativeCallTest, YieldsFromCompiledLoops) {
  HotState hs(false, true);
  hs.run(
      "f = function(n) local s = 0 for i = 1, n do s = s + (coroutine.yield(i) or 0) end return s end "
      "run = function(n) local co = coroutine.wrap(f) local got, v = 0, co(n) "
      "while v ~= nil and got < n do got = got + v v = co(1) end return got, v end");
  EXPECT_EQ(hs.run("local got, last = run(300) return got .. ' ' .. tostring(last)"), "300 25");
}

constexpr const char* kGenerator =
    "f = function(n) local s = 0 for i = 1, n do s = s + (coroutine.yield(i) or 0) end return s end "
    "run = function(n) local co = coroutine.wrap(f) local got, v = 0, co(n) "
    "while v ~= nil and got < n do got = got + v v = co(1) end return got, v end";

// A call whose native yields every round: the interpreter's yields mark the site in the
// feedback (vm/jit.cpp jitProfileYield), so the generator's loop is never compiled to
// leave at the call a few instructions after each entry, and every value still passes.
TEST(JitNativeCallTest, CallsThatYieldAreLeftToTheInterpreter) {
  HotState hs;
  std::string stats =
      warmedStats(hs, kGenerator, "local got, last = run(50000) return got .. ' ' .. tostring(last)", "50086 317");
  EXPECT_EQ(hs.recompiled(), 0) << stats;
  EXPECT_EQ(stats.find("exits test:1"), std::string::npos) << stats;
}

// Compiled before any yield (eager), the code meets them: its yields count as guard
// exits of the call (vm/interp.cpp jitNativeYielded), so the loop is compiled again with
// the call left to the interpreter.
TEST(JitNativeCallTest, CallsThatYieldInCompiledCodeAreLeftToTheInterpreter) {
  HotState hs(false, true);
  std::string stats =
      warmedStats(hs, kGenerator, "local got, last = run(50000) return got .. ' ' .. tostring(last)", "50086 317");
  EXPECT_GE(hs.recompiled(), 1) << stats;
  EXPECT_NE(stats.find("guard exits test:1"), std::string::npos) << stats;
}

// A native called deeper in a nest of compiled calls than kJitMaxNativeCallDepth is
// the interpreter's: an exit, not a guard's, since the site is not at fault. As a
// guard's it marked the site, so the next version of `leaf` left its gsub to the
// interpreter, had no compiled way to its return, and so no start for compiled calls:
// every later call of it, shallow too, left compiled code (bench/json.lua's encodeString
// under encodeValue and encodeObject).
TEST(JitNativeCallTest, ANativeCalledTooDeepKeepsItsSite) {
  HotState hs;
  std::string stats =
      warmedStats(hs,
                  "leaf = function(s) return (s:gsub('a', 'b')) end "
                  "nest = function(d, s) if d == 0 then return leaf(s) end local r = nest(d - 1, s) return r end "
                  "loop = function(n) local c = 0 for i = 1, n do c = c + #nest(0, 'aa') end return c end",
                  "local c = 0 for i = 1, 300 do c = c + #nest(12, 'aa') + #nest(0, 'aa') end return c", "1200");
  // --jit-stats lists such exits by site, with the instruction.
  EXPECT_NE(stats.find("other exits test:1"), std::string::npos) << stats;
  EXPECT_NE(stats.find(" CALL\n"), std::string::npos) << stats;
  long exits = 0;
  EXPECT_EQ(hs.warmThenHot("return loop(300)", "return loop(1000)", exits), "2000");
  EXPECT_LE(exits, 2) << hs.stats();
}

// A native that collects, with every safepoint relocating: the code resumes in the
// interpreter, which reads the moved tables.
TEST(JitNativeCallTest, ANativeThatCollectsLeavesTheCode) {
  HotState hs(true, true);
  EXPECT_EQ(hs.run("local t, s = {}, 0 "
                   "for i = 1, 50 do t[i] = {i} collectgarbage('step') s = s + t[i][1] + #t end "
                   "return s"),
            "2550");
}

// The same in a function that a compiled caller called (compiled calls need a run
// without stress): the collection moves the young table the caller holds in a register,
// so the caller leaves too; had it gone on, its store would have gone to the table's old
// copy, and G's table would have missed it.
TEST(JitNativeCallTest, ANativeThatCollectsLeavesItsCompiledCallers) {
  HotState hs(false, true);
  hs.run("inner = function() collectgarbage() return 1 end");
  EXPECT_EQ(hs.run("G = {} local n = 0 "
                   "for i = 1, 20 do local t = {} G[i] = t t[1] = inner() end "
                   "for i = 1, 20 do n = n + (G[i][1] or 0) end return n"),
            "20");
}

// debug.sethook called from a compiled loop: the count hook runs from the next
// instruction on, as interpreted (the code resumes in the interpreter): it counts
// lua5.4's 1,604 instructions.
TEST(JitNativeCallTest, AHookSetByANativeTakesEffectAtOnce) {
  HotState hs(false, true);
  // The hook and its count are globals, as in the chunk lua5.4 counted.
  EXPECT_EQ(hs.run("hits = 0 local hook = function() hits = hits + 1 end local s = 0 "
                   "for i = 1, 300 do "
                   "  s = s + math.fmod(i, 7) "
                   "  if i == 100 then debug.sethook(hook, '', 1) end "
                   "end debug.sethook() return s .. ' ' .. hits"),
            "903 1604");
}

// A tail call of a native (`return setmetatable({...}, mt)`, the constructor of
// bench/cd.lua and bench/methods.lua) calls it in place, and the RETURN after it returns
// its results, as op_TAILCALL does: the constructor has code, and a compiled loop that
// calls it goes round without leaving (docs/design/jit.md, "Native tail calls"). Before,
// the VM rejected the constructor, and its callers left compiled code at every call.
TEST(JitNativeCallTest, NativeTailCallsStayCompiled) {
  HotState hs;
  long exits = 0;
  hs.run("mt = {} new = function(x) return setmetatable({x = x}, mt) end");
  std::string out =
      hotThroughCaller(hs, "function(n) local s = 0 for i = 1, n do s = s + new(i).x end return s end", 100, exits);
  EXPECT_EQ(out, "252500");
  EXPECT_LE(exits, 2) << hs.stats();
}

// What the interpreter gives a native tail call, in eager mode: any number of results
// (none, one, several, a count only known at run time), an error with the caller's
// line, a native that runs Lua, a yield through it, a native closure, a callable table
// (not a native: the interpreter's), a traceback, and collections relocating the heap.
TEST(JitNativeCallTest, NativeTailCallsAsTheInterpreters) {
  const char* const programs[] = {
      "local function f(s) return string.byte(s, 1, -1) end "
      "local function g() local a, b, c, d = f('xyz') return a + b + c + (d or 0) end local r = g() return r",
      "local function f(t) return table.unpack(t) end "
      "local function g() return select('#', f({})) .. select('#', f({1, 2, 3, 4, 5})) end local r = g() return r",
      "local function f(x) return math.fmod(x, 7) end local function g() local s = 0 for i = 1, 50 do s = s + f(i) "
      "end return s end local r = g() return r",
      "local function f(x) return error('boom ' .. x) end local ok, e = pcall(f, 3) return e",
      "local function f(x) return string.rep('x', x) end local ok, e = pcall(f, {}) return e",
      "local mt = {__tostring = function(v) return 'v' .. v[1] end} local function f(x) return tostring(x) end "
      "local function g() local s = '' for i = 1, 5 do s = s .. f(setmetatable({i}, mt)) end return s end "
      "local r = g() return r",
      "local function f(x) return coroutine.yield(x) end local co = coroutine.wrap(function(n) local s = 0 "
      "for i = 1, n do s = s + f(i) end return s end) local v = co(4) local got = 0 "
      "while v do got = got + v v = co(v) end return got",
      "local it = string.gmatch('a bb ccc', '%a+') local function f() return it() end "
      "local function g() return f() .. f() .. f() .. tostring(f()) end local r = g() return r",
      "local c = setmetatable({}, {__call = function(self, x) return x * 2 end}) local function f(x) return c(x) end "
      "local function g() local s = 0 for i = 1, 10 do s = s + f(i) end return s end local r = g() return r",
      "local function f() return debug.traceback('here', 1) end local function g() local t = f() return t end "
      "local r = g() return r",
  };
  for (const char* src : programs) expectAgreeing(src);
  EXPECT_EQ(runLua(programs[0], Run::kInterpreted), "363");
  EXPECT_EQ(runLua(programs[3], Run::kInterpreted), "test:1: boom 3");
}

}  // namespace
}  // namespace weft::vm::testing
