// Compiled calls (docs/design/jit.md, "Compiled calls"): compiled code calls compiled
// Lua functions on the machine stack, pushing and popping the interpreter's frames; an
// exit anywhere in the nest leaves every frame exact, so results, errors, tracebacks,
// hooks and collections are the interpreter's.
#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>

#include "tests/unit/jit/jit_test_util.h"
#include "tests/unit/vm/interp_test_util.h"
#include "vm/jit.h"

namespace weft::vm::testing {
namespace {

// Runs `src` eagerly compiled (or interpreted) and returns its first result, with the
// JIT's statistics in `stats` when asked.
std::string runCompiled(const std::string& src, bool jit, bool verify = false, std::string* stats = nullptr) {
  StateOptions opts;
  if (jit) opts.jit.mode = JitMode::kEager;
  opts.jit.stats = stats != nullptr;
  opts.gc.verify = verify;
  auto S = newStandardState(opts);
  if (!S) return "STATE";
  HostStack h(*S);
  std::string out;
  Status st = h.loadMayGC(src, "=test");
  if (st.isOk()) st = h.pcallMayGC(0, 1, false);
  (void)h.toStringMayGC(-1, out);
  if (stats) *stats = S->jit()->statsReport();
  h.closeMayGC();
  return st.isOk() ? out : "ERR: " + out;
}

// Interpreted and compiled, the same result; `want` pins it.
void expectSame(const std::string& src, const std::string& want) {
  EXPECT_EQ(runCompiled(src, false), want) << src;
  EXPECT_EQ(runCompiled(src, true), want) << src;
}

// `defs` defines loop(n); loop(300) warms it up and loop(1000), compiled, gives `want`
// leaving its code at most twice.
void expectLoopStaysCompiled(const std::string& defs, const std::string& want) {
  HotState hs;
  hs.run(defs);
  long exits = 0;
  EXPECT_EQ(hs.warmThenHot("return loop(300)", "return loop(1000)", exits), want);
  EXPECT_LE(exits, 2) << hs.stats();
}

// A function with a generic for (a to-be-closed slot) or captured locals returns with
// RETURN's k: compiled, it returns where nothing above its base is open, so compiled
// calls of it stay compiled. Before, it had no compiled return, so no start to call,
// and every call of it left compiled code (json.lua's encodeValue and encodeObject).
TEST(JitCallTest, ReturnsThatCloseStayCompiled) {
  expectLoopStaysCompiled(
      "t = {1, 2, 3} sum = function(t) local s = 0 for _, v in ipairs(t) do s = s + v end return s end "
      "loop = function(n) local s = 0 for i = 1, n do s = s + sum(t) end return s end",
      "6000");
}

// Where something is open at the return (a to-be-closed variable, a local a closure
// captured), the interpreter closes it and returns, as without the compiled code.
TEST(JitCallTest, ReturnsThatCloseAsTheInterpreters) {
  expectSame(
      "local closed = 0 local mt = {__close = function() closed = closed + 1 end} "
      "local function f(i) local c <close> = setmetatable({}, mt) for _ in pairs({1}) do end return i end "
      "local s = 0 for i = 1, 300 do s = s + f(i) end return s .. ' ' .. closed",
      "45150 300");
  expectSame(
      "local function f(i) local x = i for _ in pairs({1}) do end local g = function() return x end "
      "return g end local s = 0 for i = 1, 300 do s = s + f(i)() end return s",
      "45150");
  expectSame(
      "local function f(t) for k, v in pairs(t) do if v == 2 then return k end end return 'none' end "
      "local r = {} for i = 1, 300 do r[#r + 1] = f({a = i % 3}) end return r[1] .. r[2] .. r[3]",
      "noneanone");
}

// A tail call of a compiled Lua function replaces the frame in compiled code and runs the
// callee in the same machine frame (docs/design/jit.md, "Compiled tail calls"): a
// million-deep tail recursion is entered once, where an exit at each TAILCALL made the
// interpreter enter the callee's code a million times.
TEST(JitCallTest, TailCallsStayCompiled) {
  std::string stats;
  EXPECT_EQ(runCompiled("local function count(n, acc) if n == 0 then return acc end return count(n - 1, acc + 1) end "
                        "local function run() return count(1000000, 0) end local r = run() return r",
                        true, false, &stats),
            "1000000");
  EXPECT_GE(jitStatsCount(stats, " entries,"), 1) << stats;
  EXPECT_LT(jitStatsCount(stats, " entries,"), 10) << stats;
}

// A tail call of a function that will never have code to enter (here: varargs) is a
// guard exit, which marks the site: the next version leaves it to the interpreter, and
// the interpreter's calls (the loop reads varargs: it stays interpreted) stop entering
// and leaving the caller every time (bench/cd.lua's `position`, whose tail call of a
// rejected constructor did 219,086 times).
TEST(JitCallTest, TailCallsOfCodelessFunctionsStopExiting) {
  expectLoopStaysCompiled(
      "rest = function(...) return select('#', ...) end "
      "f = function(x) return rest(x, x) end "
      "loop = function(n, ...) local s = 0 for i = 1, n do s = s + f(i) + select('#', ...) end return s end",
      "2000");
}

// A native's callback (its frame's return is the interpreter's) is entered at its loops'
// back-edges, not at its start: a call that returns before any loop entered compiled
// code only to leave it (docs/design/jit.md "Compiled tail calls"). Without the rule
// gsub's 1,000 calls of f entered it 1,000 times.
TEST(JitCallTest, CallbacksEnterAtTheirLoops) {
  HotState hs;
  hs.run(
      "local j, r = 0, 0 "
      "function f() j = j + 1 if j % 10 ~= 0 then return '' end "
      "  local s = 0 for i = 1, 50 do s = s + i end r = r + s return '' end "
      "function calls(k) j, r = 0, 0 string.rep('x', k):gsub('.', f) return r end");
  hs.warm("return calls(300)", "38250");
  long before = hs.entries();
  EXPECT_EQ(hs.run("return calls(1000)"), "127500");
  long calls = hs.entries() - before;
  EXPECT_GE(calls, 50) << hs.stats();  // the calls that loop still run compiled
  EXPECT_LE(calls, 150) << hs.stats();
}

// A prototype first asked for in a callback's frame while its loop had never run looks
// as if no loop of it could go round compiled, and waits for compiled callers (kDeferred);
// once that loop runs hot, its cold back-edges profile it and it is compiled for its
// loop. Before, it stayed interpreted for good (a tree of tasks whose leaves reached the
// threshold before any inner node's loop was seen: bench/tasks/skynet.lua compiled or
// not from one run to the next).
TEST(JitCallTest, ADeferredFunctionWhoseLoopTurnsHotIsCompiled) {
  HotState hs;
  hs.run(
      "local r = 0 "
      "function g() local s = 0 for i = 1, k do s = s + math.abs(-i) end r = r + s return '' end "
      "function calls(n, loop) k, r = loop, 0 string.rep('x', n):gsub('.', g) return r end");
  EXPECT_EQ(hs.run("return calls(300, 0)"), "0");
  hs.settle();
  EXPECT_EQ(hs.compiled(), 0) << hs.stats();
  EXPECT_EQ(hs.run("return calls(10, 2000)"), "20010000");
  hs.settle();
  EXPECT_EQ(hs.compiled(), 1) << hs.stats();
  long before = hs.entries();
  EXPECT_EQ(hs.run("return calls(10, 2000)"), "20010000");
  EXPECT_GE(hs.entries() - before, 10) << hs.stats();
}

// What follows a compiled tail call is the interpreter's: an exit in the callee is taken
// in the callee's frame (the frame the interpreter entered now holds another function),
// errors and tracebacks show the tail call, and the cases compiled code leaves (a
// native callee, a caller whose varargs moved its frame, open arguments) give the same
// results.
TEST(JitCallTest, TailCallsAsTheInterpreters) {
  expectSame("local mt = {__add = function(a, b) return 42 end} local function g(x) return x + 1 end "
             "local function f(x) return g(x) end local a = f(1) local b = f(setmetatable({}, mt)) "
             "return a .. ' ' .. b",
             "2 42");
  expectSame("local function even(n) if n == 0 then return 'even' end return odd(n - 1) end "
             "function odd(n) if n == 0 then return 'odd' end return even(n - 1) end "
             "local function run() return even(100001) end local r = run() return r",
             "odd");
  const std::string traceback =
      "local function tb(n) if n == 0 then return debug.traceback('here') end return tb(n - 1) end "
      "local function run() local t = tb(3) return t end local r = run() return r";
  std::string interpreted = runCompiled(traceback, false);
  EXPECT_NE(interpreted.find("(...tail calls...)"), std::string::npos) << interpreted;
  EXPECT_EQ(runCompiled(traceback, true), interpreted);
  expectSame("local function fail(x) error('boom ' .. x) end local function f(x) return fail(x) end "
             "local ok, e = pcall(f, 3) return e",
             "test:1: boom 3");
  expectSame("local function h(x) return tostring(x) end local function f() return h(5) end local r = f() return r", "5");
  expectSame("local function g(a, b) return a + (b or 0) end local function f(a, ...) return g(a) end "
             "local r = f(1, 2, 3) return r",
             "1");
  expectSame("local function g(...) return select('#', ...) end local function f(...) return g(...) end "
             "local r = f(1, nil, 3) return r",
             "3");
}

// A recursion runs in compiled code from its first call: fib(20) makes 21,891 calls,
// and the interpreter enters compiled code only a few times (at the first call, and
// after each call it made itself while the frame array grew).
TEST(JitCallTest, RecursionRunsNativelyFromItsFirstCall) {
  std::string stats;
  EXPECT_EQ(runCompiled("local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end "
                        "return fib(20)",
                        true, false, &stats),
            "6765");
  long entries = jitStatsCount(stats, " entries,");
  EXPECT_GE(entries, 1) << stats;
  EXPECT_LT(entries, 100) << stats;
  // A nest deeper than kJitMaxCallDepth goes on in the interpreter, which enters the
  // callee's code afresh.
  EXPECT_EQ(runCompiled("local function down(n) if n == 0 then return 0 end return down(n - 1) + 1 end "
                        "return down(1000)",
                        true, false, &stats),
            "1000");
  EXPECT_GE(jitStatsCount(stats, " entries,"), 1000 / long(kJitMaxCallDepth)) << stats;
}

// Arguments and results as the interpreter's call and return give them: missing
// arguments are nil, extra ones dropped, varargs, results cut or padded with nils,
// several results, a callee that is no Lua function.
TEST(JitCallTest, ArgumentsAndResults) {
  expectSame("local function g(a, b, c) return c end local function f() return g(1) end return tostring(f())", "nil");
  expectSame("local function g(a) return a end local function f() return g(1, 2, 3) end return f()", "1");
  expectSame("local function g(...) return select('#', ...) end local function f() return g(1, nil, 3) end return f()",
             "3");
  expectSame(
      "local function two() return 1, 2 end local function f() local a, b = two() return a * 10 + b end "
      "return f()",
      "12");
  expectSame("local function two() return 1, 2 end local function f() local a = two() return a end return f()", "1");
  expectSame(
      "local function two() return 1, 2 end local function f() local a, b, c = two() return tostring(c) end "
      "return f()",
      "nil");
  expectSame("local function none() end local function f() local a = none() return tostring(a) end return f()", "nil");
  expectSame(
      "local t = setmetatable({}, {__call = function(self, x) return x + 1 end}) "
      "local function f(x) return t(x) * 2 end local s = 0 for i = 1, 5 do s = s + f(i) end return s",
      "40");
  expectSame("local function f(g, x) return g(x) end local s = 0 for i = 1, 4 do s = s + f(math.abs, -i) end return s",
             "10");
}

// A call of open arguments, the results of the call just before it (`f(g(x))`), runs
// in compiled code with the count the inner call left, for natives and Lua functions
// on either side, and a function that only returns (`none`) has a start for compiled
// calls. Before, each such pair left compiled code every round.
TEST(JitCallTest, OpenArgumentsStayCompiled) {
  expectLoopStaysCompiled(
      "two = function(i) return i, i + 1 end none = function() end "
      "sum3 = function(a, b, c) return (a or 0) + (b or 0) + (c or 0) end "
      "loop = function(n) local s = 0 for i = 1, n do "
      "s = s + sum3(two(i)) + sum3(none()) + tonumber(string.sub('12345', 1, i % 5 + 1)) "
      "+ select('#', two(i)) + math.max(two(i)) + select('#', none()) end return s end",
      "4248500");
}

// Open arguments give what the interpreter gives: no values, one, more than the callee
// takes, 200 of them; an error in either call, with its position and traceback; a
// callee that is no function.
TEST(JitCallTest, OpenArgumentsAsTheInterpreters) {
  const std::string many =
      "local function many(n) local t = {} for i = 1, n do t[i] = i end return table.unpack(t) end ";
  expectSame(many +
                 "local function sum3(a, b, c) return (a or 0) * 100 + (b or 0) * 10 + (c or 0) end "
                 "local function f(n) return sum3(many(n)) + select('#', many(n)) end "
                 "local s = 0 for i = 0, 200 do s = s + f(i % 6) end return s + f(200)",
             "20478");
  expectSame(
      "local function g(x) return x, x end local function f(x) return math.max(g(x)) end "
      "local ok, e = pcall(function() local s = 0 for i = 1, 50 do s = s + f(i) end return f({}) end) "
      "return tostring(ok) .. ' ' .. e",
      "false attempt to compare two table values");
  expectSame(
      "local function g(x) if x > 40 then error('deep') end return x end local function h(a) return a end "
      "local ok, tb = xpcall(function() local s = 0 for i = 1, 50 do s = s + h(g(i)) end end, debug.traceback) "
      "return tb:match('^[^\\n]*') .. ' ' .. tostring(tb:find(\"in upvalue 'g'\", 1, true) ~= nil)",
      "test:1: deep true");
  expectSame(
      "local function g(x) return x end local f = 1 "
      "local ok, e = pcall(function() for i = 1, 20 do if i == 20 then f = nil end local _ = (f and math.abs or "
      "f)(g(i)) end end) "
      "return e",
      "test:1: attempt to call a nil value");
}

// A callee deep in a compiled nest leaves compiled code (a type its code does not
// handle, an error, a native that reads the stack): the frames below it are exact, the
// interpreter finishes the callee and returns into them.
TEST(JitCallTest, ExitsDeepInTheNest) {
  expectSame(
      "local function g(x) return x * 2 end "
      "local function f(n, x) if n == 0 then return g(x) end return f(n - 1, x) + 1 end "
      "return f(10, 3) .. ' ' .. f(10, '4') .. ' ' .. f(10, 2.5)",
      "16 18 15.0");
  expectSame(
      "local function a(n) if n == 0 then error('boom') end return a(n - 1) + 1 end "
      "local ok, e = pcall(a, 6) return e",
      "test:1: boom");
  expectSame(
      "local function a(n) if n == 0 then return nil + 1 end return a(n - 1) + 1 end "
      "local ok, e = pcall(a, 3) return e",
      "test:1: attempt to perform arithmetic on a nil value");
  // Every frame's line and name, from pcs the compiled calls saved.
  expectSame(
      "local function a(n)\n if n == 0 then return debug.traceback('tb', 1) end\n local r = a(n - 1)\n "
      "return r\nend\nlocal tb = a(4)\nreturn tb",
      "tb\nstack traceback:\n\ttest:2: in upvalue 'a'\n\ttest:3: in upvalue 'a'\n\ttest:3: in upvalue 'a'\n"
      "\ttest:3: in upvalue 'a'\n\ttest:3: in local 'a'\n\ttest:6: in main chunk\n\t[C]: in ?");
  expectSame(
      "local function leaf() return debug.getinfo(2, 'l').currentline end\n"
      "local function mid() local l = leaf()\n return l end\n"
      "local s = 0 for i = 1, 3 do s = s + mid() end return s",
      "6");
}

// A hook set deep in a nest takes effect at once: the compiled frames below leave their
// code, and calls made after it are the interpreter's, hooked.
TEST(JitCallTest, HookSetInsideTheNest) {
  expectSame(
      "local n = 0 "
      "local function g(k) if k == 5 then debug.sethook(function() n = n + 1 end, 'c') end return k end "
      "local function f(k) return g(k) + 0 end "
      "local s = 0 for i = 1, 10 do s = s + f(i) end debug.sethook() return s * 1000 + n",
      "55011");
}

// Collections while compiled callers wait in the interpreter: a callee that allocates
// leaves compiled code, a minor collection may move every young value its callers hold,
// and they go on from their slots. --gc-verify checks the heap at each collection.
TEST(JitCallTest, CollectionsUnderANest) {
  std::string src =
      "local function build(d) if d == 0 then return {} end return {build(d - 1), build(d - 1)} end "
      "local function count(t) if t[1] == nil then local pad = {t} return #pad end "
      "return count(t[1]) + count(t[2]) + 1 end "
      "local s = 0 for i = 1, 40 do s = s + count(build(9)) end return s";
  EXPECT_EQ(runCompiled(src, false, true), "40920");
  EXPECT_EQ(runCompiled(src, true, true), "40920");
}

// In `on` mode a small function without loops or calls is deferred when it gets hot:
// it is compiled once a compiled caller calls it, never while only the interpreter
// does (a loop that reads varargs every round is not compiled). It makes a table, so
// its caller calls it rather than running its body in place ("Inlined calls").
TEST(JitCallTest, SmallFunctionsWaitForACompiledCaller) {
  HotState hs;
  EXPECT_EQ(hs.run("function leaf(x) local y = {x} return y[1] + 1 end "
                   "function boxes(n, ...) local t = {} for i = 1, n do t[i] = leaf(i) + select('#', ...) end "
                   "return #t end "
                   "function sum(n) local s = 0 for i = 1, n do s = s + leaf(i) end return s end "
                   "return boxes(5000)"),
            "5000");
  hs.settle();
  EXPECT_EQ(hs.compiled(), 0) << hs.stats();
  // sum's loop gets hot and compiled; its compiled call asks for leaf, which is
  // compiled next; then the loop calls it in compiled code.
  hs.warm("return sum(1000)", "501500");
  std::string stats = hs.stats();
  EXPECT_EQ(hs.compiled(), 2) << stats;
  EXPECT_NE(stats.find("test:1 "), std::string::npos) << stats;
}

// Frame changes skip a prototype whose code had nothing for them when they last looked
// (docs/design/jit.md, "Quiet frames"); code published later wakes them. f's 100th call
// queues it, and its frames started while it compiles find no entry; once its code is
// ready, interpreted calls of f (from a vararg loop, never compiled) enter it at its
// start (its loop, which ran before, does not run now, so no back-edge enters it).
TEST(JitCallTest, QuietFramesWakeForNewCode) {
  HotState hs;
  hs.run(
      "function g(x) return x end "
      "function f(n) local s, i = 0, 1 while i <= n do s = s + g(i) i = i + 1 end return s end "
      "function drive(n, m, ...) local s = 0 for k = 1, n do s = s + f(m) + select('#', ...) end return s end");
  EXPECT_EQ(hs.run("return drive(150, 1)"), "150");
  hs.settle();
  long before = hs.entries();
  EXPECT_EQ(hs.run("return drive(1000, 0)"), "0");
  EXPECT_GE(hs.entries() - before, 1000) << hs.stats();
}

// A function without loops that gets hot as a metamethod waits for a compiled caller
// (vm/jit_loops.cpp calledUnentered): code is never entered at the start of a metamethod's
// frame, so compiling it for the interpreter's calls was the compile thread's time lost.
TEST(JitCallTest, MetamethodsWaitForACompiledCaller) {
  HotState hs;
  EXPECT_EQ(hs.run("local function make(v) return {v = v} end "
                   "local mt = {__add = function(a, b) return make(a.v + b.v) end} "
                   "local x, y = setmetatable({v = 1}, mt), setmetatable({v = 2}, mt) "
                   "local function drive(n, ...) local s = 0 for i = 1, n do s = s + (x + y).v + select('#', ...) end "
                   "return s end "
                   "return drive(5000)"),
            "15000");
  hs.settle();
  EXPECT_EQ(hs.compiled(), 0) << hs.stats();
}

// A call of a small numeric function found in an upvalue runs its body in place
// (docs/design/jit.md, "Inlined calls"): the callee is never called, so it is never
// compiled either, where the ordinary compiled call asks for its code.
// `sq`, a definition of x * x + 1, called in a compiled loop: inlined, so the loop runs
// without leaving and only the loop's function is compiled.
void expectRunsInPlace(const std::string& sq) {
  HotState hs;
  hs.run(sq + " loop = function(n) local s = 0 for i = 1, n do s = s + sq(i) end return s end");
  long exits = 0;
  EXPECT_EQ(hs.warmThenHot("return loop(300)", "return loop(100000)", exits), "333338333450000") << sq;
  EXPECT_LE(exits, 1) << hs.stats();
  std::string stats = hs.stats();
  EXPECT_NE(stats.find("1 functions compiled"), std::string::npos) << stats;
}

TEST(JitCallTest, SmallCalleesRunInPlace) { expectRunsInPlace("local function sq(x) return x * x + 1 end"); }

// Inlined calls give the interpreter's results: integers that wrap, floats, mixed and
// coerced arguments (the ordinary call), division and powers, negative zero, a callee
// replaced mid-loop, errors, missing and extra arguments and results, a call hook set
// mid-loop.
TEST(JitCallTest, InlinedCallsAsTheInterpreters) {
  expectSame(
      "local function f(a, b) return a * b - 3 end local function run() local s = 0 for i = 1, 100 do s = "
      "s + f(i, i + 1) end return s end return run()",
      "343100");
  expectSame(
      "local function f(a, b) return a * b - 3 end local function run() local s = 0 for i = 1, 100 do s = "
      "s + f(i + 0.5, 2.25) end return s end return run()",
      "11175.0");
  expectSame(
      "local function f(a, b) return a * b - 3 end local function run() local s = 0 for i = 1, 100 do s = "
      "s + f(i, 0.5) + f('3', i) end return s end return run()",
      "17075.0");
  expectSame(
      "local function f(a) return a * 2 + 1 end local function run() local r for i = 1, 3 do r = "
      "f(math.maxinteger - i) end return r end return run()",
      "-7");
  expectSame(
      "local function f(a, b) return a / b end local function run() local t = {} for i = 1, 3 do t[#t + 1] "
      "= tostring(f(i - 2, 0)) .. ',' .. tostring(f(4, i)) end return table.concat(t, ' ') end return run()",
      "-inf,4.0 -nan,2.0 inf,1.3333333333333");
  expectSame(
      "local function f(a, b) return a ^ b, 99 end local function run() local t = {} for i = 1, 3 do t[#t "
      "+ 1] = tostring(f(2, i * 5)) .. ',' .. tostring(f(2.0, 0.5)) end return table.concat(t, ' ') end "
      "return run()",
      "32.0,1.4142135623731 1024.0,1.4142135623731 32768.0,1.4142135623731");
  expectSame(
      "local function f(a) return -a end local function run() local t = {} for i = 1, 2 do t[#t + 1] = "
      "tostring(f(0.0)) .. ',' .. tostring(f(i - 1)) .. ',' .. tostring(f(math.mininteger)) end return "
      "table.concat(t, ' ') end return run()",
      "-0.0,0,-9223372036854775808 -0.0,-1,-9223372036854775808");
  expectSame(
      "local g = function(x) return x + 1 end local function run(n) local s = 0 for i = 1, n do s = s + "
      "g(i) if i == 50 then g = function(x) return x * 10 end end end return s end return run(100)",
      "39075");
  expectSame(
      "local function f(a, b) return a + b end local function run() local r for i = 1, 3 do local ok, e = "
      "pcall(function() return f({}, i) end) r = e end return r end return run()",
      "test:1: attempt to perform arithmetic on a table value (local 'a')");
  expectSame(
      "local function f(a, b) return a + b end local function run() local s = 0 for i = 1, 3 do local ok, "
      "e = pcall(f, i) s = s + (ok and 1 or 0) end return s end return run()",
      "0");
  expectSame(
      "local function k() return 42 end local function run() local s = 0 for i = 1, 10 do s = s + k() end "
      "return s end return run()",
      "420");
  expectSame(
      "local function f(a) return a * a end local function run() local n = 0 for i = 1, 10 do f(i) n = n + "
      "1 end return n end return run()",
      "10");
  expectSame(
      "local function f(a) return a + 1 end local function run() local calls, s = 0, 0 for i = 1, 100 do s "
      "= s + f(i) if i == 50 then debug.sethook(function() calls = calls + 1 end, 'c') end end "
      "debug.sethook() return s .. ' ' .. calls end return run()",
      "5150 51");
  expectSame(
      "local function f(a, b, c) local x = a + b local y = x * c return y - a, x end local function run() "
      "local s = 0 for i = 1, 10 do s = s + f(i, 2, 3.5, 'extra') end return s end return run()",
      "207.5");
  expectSame(
      "local function f() end local function run() local t = {} for i = 1, 2 do local x = f() t[i] = "
      "tostring(x) end return table.concat(t, ' ') end return run()",
      "nil nil");
}

// A function calling itself through its own upvalue calls its own code directly
// (docs/design/jit.md, "Compiled calls"), behind a test of the callee's uid: deep
// recursion past the nest, the upvalue replaced mid-recursion (the new callee is called,
// not this code), a stack overflow, an error at the bottom, a missing argument.
TEST(JitCallTest, CallsOfItselfAsTheInterpreters) {
  expectSame("local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end return f(10000)", "10000");
  expectSame(
      "local f local function h(m) return 100 end local function g(n) if n <= 0 then return 0 end if n "
      "== 5 then f = h end return n + f(n - 1) end local r = {} for k = 1, 3 do f = g r[k] = f(10) end "
      "return table.concat(r, ' ')",
      "145 145 145");
  expectSame(
      "local function f(n) return 1 + f(n + 1) end local ok, e = pcall(f, 1) return "
      "tostring(e:match('stack overflow') ~= nil)",
      "true");
  expectSame(
      "local function f(n) if n == 0 then error('bottom') end return f(n - 1) + 1 end local ok, e = "
      "pcall(f, 300) return e",
      "test:1: bottom");
  expectSame(
      "local function f(a, b) if a == 0 then return b end return f(a - 1, b + a) end local s = 0 for i = "
      "1, 50 do s = s + f(i, 0) end return s",
      "22100");
  expectSame("local function f(n, x) if n == 0 then return x end return f(n - 1) end return tostring(f(3, 7))", "nil");
}

// Runs `defs` in a State warmed (with feedback) by `warm`, which returns `warmed`, and in
// an eager one; then each probe in both, which must give the interpreter's result. At
// least `deferring` functions of each take deferred frames.
void expectDeferring(const std::string& defs, const char* warm, const char* warmed,
                     std::initializer_list<const char*> probes, long deferring) {
  HotState hot;
  HotState eager(false, true);
  hot.run(defs);
  eager.run(defs);
  hot.warm(std::string("return ") + warm, warmed);
  for (const char* probe : probes) {
    std::string want = runLuaWith(defs + probe, StateOptions{});
    EXPECT_EQ(hot.run(probe), want) << probe;
    EXPECT_EQ(eager.run(probe), want) << probe;
  }
  for (HotState* s : {&hot, &eager}) {
    std::string stats = s->stats();
    EXPECT_GE(jitStatsCount(stats, " take deferred frames"), deferring) << stats;
  }
}

// Calls of itself in a function that reads no frame of the frame array pass the callee a
// deferred frame, written only when compiled code leaves (docs/design/jit.md, "Deferred
// frames"). With feedback (integers) and eagerly, as interpreted: a float 200 calls deep
// (its guard exits there, and the callers' frames are written on the way out), an
// arithmetic error's message and a traceback through them, results wanted beyond those
// returned (nils) and fewer than returned, a stack overflow, open results a table
// constructor takes, and a table read whose helper fails deep in the recursion (an
// __index function).
TEST(JitCallTest, DeferredFramesAsTheInterpreters) {
  const std::string defs =
      "local function add(n, x) if n == 0 then return x + 1 end return add(n - 1, x) + 1 end ADD = add "
      "local function pair(n) if n == 0 then return end local a, b = pair(n - 1) if b == nil then return n, 0 end "
      "return n, b + 1, -n end PAIR = pair "
      "local function build(n) if n == 0 then return {} end return {build(n - 1), build(n - 1)} end BUILD = build "
      "local function count(t) if t[1] then return 1 + count(t[1]) + count(t[2]) end return 1 end COUNT = count ";
  const char* pairs = "local a, b = PAIR(10) return a .. ' ' .. b";
  const char* hooked =
      "local t = BUILD(6) t[1][1][1] = setmetatable({}, {__index = function(_, k) return nil end}) "
      "return COUNT(t)";
  expectDeferring(defs, "ADD(50, 1) + PAIR(20) + COUNT(BUILD(5))", "135",
                  {"return ADD(200, 0.5)", "local ok, e = pcall(ADD, 30, {}) return e",
                   "return select(2, xpcall(ADD, debug.traceback, 5, {}))", pairs,
                   "local ok, e = pcall(ADD, 2000000, 1) return tostring(e):match('stack overflow')",
                   "return COUNT(BUILD(10))", hooked},
                  4);
  EXPECT_EQ(runLuaWith(defs + pairs, StateOptions{}), "10 9");
  EXPECT_EQ(runLuaWith(defs + hooked, StateOptions{}), "113");
}

// A compiled loop calling a small function whose code takes deferred frames passes it
// one (docs/design/jit.md, "Deferred frames"): with feedback and eagerly, as interpreted,
// results, a float where the callee's feedback saw integers (its guard exits with the
// frame deferred), an error's message and traceback from inside it, and fewer results
// than wanted.
TEST(JitCallTest, DeferredFramesOfOtherCallees) {
  const std::string defs =
      "local function scale(p, k) return p.x * k + p.y end "
      "local function two(p) if p.y == 0 then return end return p.x, p.y end "
      "local function run(n, pts) local s = 0 for i = 1, n do s = s + scale(pts[i % 4 + 1], i) end return s end "
      "local function count(n, pts) local c = 0 for i = 1, n do local a, b = two(pts[i % 4 + 1]) "
      "if b == nil then c = c + 1 else c = c + a + b end end return c end "
      "RUN, COUNT = run, count PTS = {{x = 1, y = 2}, {x = 3, y = 0}, {x = 5, y = 6}, {x = 7, y = 8}} ";
  const char* plain = "return RUN(1000, PTS) .. ' ' .. COUNT(1000, PTS)";
  expectDeferring(defs, "RUN(2000, PTS) + COUNT(2000, PTS)", "8026000",
                  {plain, "return RUN(1000, {{x = 1, y = 2}, {x = 3, y = 4}, {x = 0.5, y = 6}, {x = 7, y = 8}})",
                   "local ok, e = pcall(RUN, 1000, {{x = 1, y = 2}, {x = 'a', y = 4}}) return e",
                   "return select(2, xpcall(RUN, debug.traceback, 1000, {{x = 1, y = 2}, {x = 3, y = 4}, {y = 1}}))"},
                  2);
  EXPECT_EQ(runLuaWith(defs + plain, StateOptions{}), "2005500 7500");
}

// Callees found in globals (`_ENV.name`, read raw when the request is made) run in place
// or call themselves as those found in upvalues do, behind the same uid test: a small
// global function, a recursive global function, either replaced mid-run by another
// function or by a callable table, a global only `__index` finds (not resolved), and a
// local `_ENV`.
TEST(JitCallTest, CalleesFoundInGlobals) {
  expectRunsInPlace("function sq(x) return x * x + 1 end");
  expectSame(
      "function sq(x) return x * x end local function run(n) local s = 0 for i = 1, n do s = s + sq(i) "
      "if i == 50 then sq = function(x) return -x end end end return s end return run(100)",
      "39150");
  expectSame(
      "function sq(x) return x * x end local function run(n) local s = 0 for i = 1, n do s = s + sq(i) "
      "if i == 5 then sq = setmetatable({}, {__call = function(_, x) return 1000 end}) end end return s "
      "end return run(10)",
      "5055");
  expectSame("function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end return f(5000)", "5000");
  expectSame(
      "function g(n) if n <= 0 then return 0 end if n == 5 then g = function() return 100 end end "
      "return n + g(n - 1) end local r = {} for k = 1, 2 do local h = g r[k] = h(10) g = h end "
      "return table.concat(r, ' ')",
      "145 145");
  expectSame(
      "setmetatable(_G, {__index = function(_, k) return function(x) return x + 1 end end}) "
      "local function run() local s = 0 for i = 1, 20 do s = s + missing(i) end return s end "
      "local r = run() setmetatable(_G, nil) return r",
      "230");
  expectSame(
      "local function run() local _ENV = {f = function(x) return x * 3 end} local s = 0 "
      "for i = 1, 20 do s = s + f(i) end return s end return run()",
      "630");
}

// `touch`, whose only arithmetic is a metamethod's, is rejected by the VM's coarse test
// at its threshold (its callers here are a native's callback, never compiled); `outer`
// reaches its threshold after, and calls it every round. Its stores of `x` make it too
// long to compile in place (kJitInlineMaxCode), as bench/cd.lua's `addToVoxels` is.
std::string callsOfARejectedFunction() {
  std::string stores;
  for (int k = 0; k < 50; k++) stores += "x = 1 ";
  return "local mt = {__add = function(a, b) return a end} V = setmetatable({}, mt) "
         "local function touch(v) " +
         stores +
         "return v + v end "
         "string.gsub(string.rep('x', 300), 'x', function() touch(V) end) "
         "function outer(n) local s = 0 for i = 1, n do touch(V) s = s + i end return s end";
}

// The call of a function the VM rejected before the caller was queued is left to the
// interpreter in the first version (vm/jit.cpp markCallsWithoutCode): no guard exits
// there and no second compilation for them (bench/cd.lua compiled `frame` three times).
TEST(JitCallTest, ACallOfARejectedFunctionIsLeftToTheInterpreterAtOnce) {
  HotState ls;
  ls.run(callsOfARejectedFunction());
  ls.settle();
  EXPECT_EQ(ls.compiled(), 0) << ls.stats();
  EXPECT_EQ(ls.run("return outer(500)"), "125250");
  ls.settle();
  EXPECT_EQ(ls.compiled(), 1) << ls.stats();
  for (int k = 0; k < 4; k++) EXPECT_EQ(ls.run("return outer(500)"), "125250");
  ls.settle();
  EXPECT_EQ(ls.recompiled(), 0) << ls.stats();
  EXPECT_EQ(ls.stats().find("guard exits"), std::string::npos) << ls.stats();
}

// A round that leaves compiled code at such a call is not entered again after it (jit/
// lower.cpp: no entry after a call inside a loop that cannot go round compiled): an
// entry and an exit every round cost more than the interpreter's rest of the round.
TEST(JitCallTest, NoEntryAfterACallThatLeavesEveryRound) {
  HotState ls;
  ls.run(callsOfARejectedFunction());
  EXPECT_EQ(ls.run("return outer(500)"), "125250");
  ls.settle();
  long before = ls.entries();
  for (int k = 0; k < 4; k++) EXPECT_EQ(ls.run("return outer(500)"), "125250");
  EXPECT_LE(ls.entries() - before, 8) << ls.stats();
}

// A call that never ran while its caller was profiled is compiled as a cold exit. Its
// guard exits profile the callee as the interpreter would (vm/jit.cpp guardExit), so
// the next version calls it compiled. Before, the second exit marked the site as one
// the interpreter must make, and every call there left compiled code (bench/methods.lua
// left its loop every thousandth round, at acc:scale(0)).
TEST(JitCallTest, AColdCallOfALuaFunctionIsCompiledInTheNextVersion) {
  HotState ls;
  ls.run(
      "local function rare(k) return k end "
      "function loop(m, every) local s = 0 "
      "for i = 1, m do s = s + i if i % every == 0 then s = s + rare(1) end end return s end");
  ls.warm("return loop(300, 1000000)", "45150");
  EXPECT_EQ(ls.compiled(), 1) << ls.stats();
  EXPECT_EQ(ls.run("return loop(2000, 10)"), "2001200");  // 200 cold exits: a recompilation
  ls.settle();
  EXPECT_EQ(ls.recompiled(), 1) << ls.stats();
  EXPECT_EQ(ls.run("return loop(2000, 10)"), "2001200");  // asks for rare's code
  ls.settle();
  EXPECT_EQ(ls.recompiled(), 1) << ls.stats();
  long before = ls.exits();
  EXPECT_EQ(ls.run("return loop(20000, 10)"), "200012000");
  EXPECT_LE(ls.exits() - before, 4) << ls.stats();
}

}  // namespace
}  // namespace weft::vm::testing
