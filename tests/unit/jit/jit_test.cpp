// The JIT's first tier (docs/design/jit.md): compiled code gives the interpreter's
// results, guard exits in the middle of loops leave the frame exact, relocation at
// every safepoint changes nothing, and code dies with its prototype.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/unit/jit/jit_test_util.h"
#include "tests/unit/vm/interp_test_util.h"
#include "vm/jit.h"

namespace weft::vm::testing {
namespace {

// The same script interpreted and compiled eagerly (with and without relocation at
// every safepoint) must give the same result; `want` pins the interpreted one.
void expectSame(const std::string& src, const std::string& want) {
  EXPECT_EQ(runLua(src, Run::kInterpreted), want) << src;
  EXPECT_EQ(runLua(src, Run::kEager), want) << src;
  EXPECT_EQ(runLua(src, Run::kEagerRelocate), want) << src;
}

TEST(JitTest, NumericLoops) {
  expectSame("local s = 0 for i = 1, 1000 do s = s + i * 2 - 1 end return s", "1000000");
  expectSame("local s = 0.0 for i = 1, 10 do s = s + i / 4 end return s", "13.75");
  expectSame("local s = 0 for x = 1.0, 2.0, 0.25 do s = s + x end return s", "7.5");
  expectSame("local s = 0 for i = 10, 1, -3 do s = s * 10 + i end return s", "10741");
  expectSame("local n = 0 local i = 0 while i < 100 do i = i + 1 if i % 3 == 0 then n = n + 1 end end return n",
             "33");
  expectSame("local a, b = 0, 1 for i = 1, 80 do a, b = b, a + b end return a", "23416728348467685");
  expectSame("local s = 0 for i = -7, 7 do s = s + i // 2 + i % 3 end return s", "11");
}

// A value changes type in the middle of a compiled loop: the guard exits at that
// instruction, the interpreter runs it (coercion, metamethod or error) and the loop
// goes on in compiled code.
TEST(JitTest, GuardExitsOnTypeChangeMidLoop) {
  expectSame("local s = 0 for i = 1, 10 do if i == 5 then s = s + 0.5 end s = s + i end return s", "55.5");
  expectSame("local s = 0 for i = 1, 10 do if i == 5 then s = tostring(s) end s = s + i end return s", "55");
  expectSame(
      "local mt = {__add = function(a, b) return 100 end} local s = 0 "
      "for i = 1, 10 do if i == 8 then s = setmetatable({}, mt) end s = s + i end return s",
      "119");
  expectSame(
      "local mt = {__lt = function(a, b) return true end} local x = 0 local n = 0 "
      "for i = 1, 6 do if i == 3 then x = setmetatable({}, mt) end if x < 5 then n = n + 1 end end return n",
      "6");
  expectSame("local s = 0 for i = 1, 10 do if i == 9 then s = nil end s = s + i end return s",
             "ERR: test:1: attempt to perform arithmetic on a nil value (local 's')");
  expectSame("local s = 0 for i = 1, 10 do s = s + i // (5 - i) end return s",
             "ERR: test:1: attempt to divide by zero");
}

// Integer loops never overflow into floats: the count is fixed at FORPREP, at the
// edges of the integers too; a float limit or step makes the interpreter prepare the
// loop and the compiled code run it.
TEST(JitTest, GuardIntegerLoopsAtTheLimits) {
  expectSame("local n = 0 for i = math.maxinteger - 3, math.maxinteger do n = n + 1 end return n", "4");
  expectSame("local n = 0 for i = math.mininteger + 2, math.mininteger, -1 do n = n + 1 end return n", "3");
  expectSame("local last for i = math.maxinteger - 2, math.maxinteger do last = i end return math.type(last)",
             "integer");
  expectSame("local s = 0 for i = 1, 3.5 do s = s + i end return s", "6");
  expectSame("local s = 0 for i = 1, 3, 0.5 do s = s + i end return s", "10.0");
  expectSame("local x = math.maxinteger for i = 1, 3 do x = x + 1 end return x", "-9223372036854775806");
  expectSame("for i = 1, 10, 0 do end", "ERR: test:1: 'for' step is zero");
}

TEST(JitTest, ComparisonsAndTests) {
  expectSame("local n = 0 for i = 1, 20 do if i > 5 and i <= 15 and i ~= 10 then n = n + 1 end end return n", "9");
  expectSame("local n = 0 for i = 1, 20 do local x = i / 2 if x == 3 or x < 2.0 then n = n + 1 end end return n",
             "4");
  expectSame("local t, f = 0, 0 for i = 1, 9 do local v = i % 3 == 0 and 'x' or nil if v then t = t + 1 else "
             "f = f + 1 end end return t * 10 + f",
             "36");
  expectSame("local a = 1 local b = 1.0 local n = 0 for i = 1, 4 do if a == b then n = n + 1 end end return n", "4");
  expectSame("local n = 0 for i = 1, 5 do if 'a' .. i == 'a3' then n = n + i end end return n", "3");
}

// Code lives as long as its prototype: a function dropped and collected takes its code.
TEST(JitTest, CodeFreedWithProto) {
  StateOptions opts;
  opts.jit.mode = JitMode::kEager;
  auto S = newStandardState(opts);
  ASSERT_TRUE(S);
  HostStack h(*S);
  auto run = [&](const std::string& src) {
    ASSERT_TRUE(h.loadMayGC(src, "=test").isOk());
    ASSERT_TRUE(h.pcallMayGC(0, 0, false).isOk());
  };
  // g and the chunk that made it have code; the second chunk compiles nothing (its
  // first call is followed by a tail call, not by a compiled path to a return), and when
  // g goes, the first chunk's prototype goes too.
  run("function g(n) local s = 0 for i = 1, n do s = s + i end return s end g(10)");
  EXPECT_GE(S->jit()->liveCodeForTesting(), 1u);
  EXPECT_TRUE(JitTier::moduleLoaded());
  run("g = nil collectgarbage() return collectgarbage()");
  EXPECT_EQ(S->jit()->liveCodeForTesting(), 0u);
  h.closeMayGC();
}

// A prototype that gets hot while its frame runs interpreted: the coroutine's loop is
// queued at its 50th back-edge and yields at its 60th; once the code is installed, the
// resumed frame (started interpreted) enters it mid-function, at a loop header or after
// the yield's call.
TEST(JitTest, HotFrameEntersCodeMidFunction) {
  StateOptions opts;
  opts.jit.mode = JitMode::kOn;
  opts.jit.threshold = 50;
  opts.jit.stats = true;
  auto S = newStandardState(opts);
  ASSERT_TRUE(S);
  HostStack h(*S);
  auto run = [&](const std::string& src) {
    std::string out;
    EXPECT_TRUE(h.loadMayGC(src, "=test").isOk());
    EXPECT_TRUE(h.pcallMayGC(0, 1, false).isOk());
    (void)h.toStringMayGC(-1, out);
    return out;
  };
  EXPECT_EQ(run("co = coroutine.wrap(function() local s = 0 for i = 1, 200000 do s = s + i % 7 "
                "if i == 60 then coroutine.yield(0) end end return s end) return co()"),
            "0");
  EXPECT_EQ(S->jit()->liveCodeForTesting(), 1u);  // waits for the compile thread
  EXPECT_EQ(run("return co()"), "599997");
  std::string stats = S->jit()->statsReport();
  EXPECT_NE(stats.find("1 functions compiled"), std::string::npos) << stats;
  EXPECT_EQ(stats.find(" 0 entries"), std::string::npos) << stats;
  h.closeMayGC();
}


// Code specialised on integer feedback meets a float in the middle of a loop: the
// guard exits with the frame exact (the sum is the interpreter's), the site counts in
// --jit-stats, and at kJitGuardExitLimit exits the prototype is recompiled with the
// wider types.
TEST(JitTest, GuardExitFromSpecialisedCodeMidLoop) {
  for (bool relocate : {false, true}) {
    HotState hs(relocate);
    EXPECT_EQ(hs.run("function f(n, at, v) local s = 0 for i = 1, n do if i == at then s = s + v end "
                     "s = s + i end return s end return f(300, -1, 0)"),
              "45150");
    hs.settle();
    EXPECT_EQ(hs.run("return f(300, 50, 0.5)"), "45150.5");
    EXPECT_EQ(hs.run("return f(100, 30, 'x')"), "ERR: test:1: attempt to add a 'number' with a 'string'");
    std::string stats = hs.stats();
    EXPECT_NE(stats.find("guard exits"), std::string::npos) << stats;
    EXPECT_NE(stats.find("1 recompiled"), std::string::npos) << stats;
    hs.settle();
    EXPECT_EQ(hs.run("return f(300, 10, 0.25)"), "45150.25");
    EXPECT_EQ(hs.run("return f(300, -1, 0)"), "45150");  // a mixed operand keeps integer sums integers
  }
}

// Integer loops compiled on integer feedback meet a float limit beyond the integers, a
// float start and integer overflow in their bodies: the interpreter prepares what the
// guards refuse, the count never wraps, and integer arithmetic wraps as Lua's does.
TEST(JitTest, SpecialisedIntegerLoopsAtTheLimits) {
  HotState hs;
  EXPECT_EQ(hs.run("function g(a, b) local n, last, x = 0, nil, 1 for i = a, b do n = n + 1 last = i x = x * 3 end "
                   "return n .. ' ' .. math.type(last) .. ' ' .. x end return g(1, 3000)"),
            "3000 integer -9125803782349988511");
  hs.settle();
  EXPECT_EQ(hs.run("return g(math.maxinteger - 2, 1e100)"), "3 integer 27");
  EXPECT_EQ(hs.run("return g(math.mininteger, math.mininteger + 1)"), "2 integer 9");
  EXPECT_EQ(hs.run("return g(1, 3.5)"), "3 integer 27");
  EXPECT_EQ(hs.run("return g(1.0, 3)"), "3 float 27");
  EXPECT_EQ(hs.run("return g(1, 60)"), "60 integer -3535985420588157519");
}

// Guards that keep failing at new sites: each replacement recompiles with the feedback
// widened where the last one failed, and the third is a blacklisting (--jit-stats). The
// prototype then runs interpreted, with the same results.
TEST(JitTest, BlacklistedAfterRepeatedGuardExits) {
  HotState hs;
  EXPECT_EQ(hs.run("function h(n, x, y, z) local a, b, c = 0, 0, 0 for i = 1, n do a = a + x b = b + y "
                   "c = c + z end return a + b + c end return h(3000, 1, 1, 1)"),
            "9000");
  hs.settle();
  EXPECT_EQ(hs.run("return h(200, 0.5, 1, 1)"), "500.0");
  hs.settle();
  EXPECT_EQ(hs.run("return h(200, 0.5, 0.5, 1)"), "400.0");
  hs.settle();
  EXPECT_EQ(hs.run("return h(200, 0.5, 0.5, 0.5)"), "300.0");
  std::string stats = hs.stats();
  EXPECT_NE(stats.find("2 recompiled, 1 blacklisted"), std::string::npos) << stats;
  EXPECT_NE(stats.find("(version 2)"), std::string::npos) << stats;
  EXPECT_EQ(hs.run("return h(200, 1, 1, 1)"), "600");
  EXPECT_EQ(hs.run("return h(10, 'a', 1, 1)"), "ERR: test:1: attempt to add a 'number' with a 'string'");
}

// An entry at a loop header tests the tags its loop's reads were built for (docs/design/
// jit.md, "Entry speculation"). Here the interpreter makes x a float on a path the code
// leaves at (the closure), so the next round's entry finds a float where `s + x` saw
// only integers: it enters nothing and widens that read's feedback, and the next version
// (recompiled once, not blacklisted) runs the float rounds with no guard exits.
TEST(JitTest, AnEntryWhoseTagsDifferWidensTheReadItSpeculatedFor) {
  HotState hs;
  hs.run(
      "function k(n, flip) local x, s = 1, 0 for i = 1, n do s = s + x "
      "if i == flip then x = (function() return 0.5 end)() end end return s end");
  hs.warm("return k(300, 0)", "300");
  long recompiled = hs.recompiled();
  EXPECT_EQ(hs.run("return k(300, 100)"), "200.0");
  hs.settle();
  EXPECT_EQ(hs.recompiled(), recompiled + 1) << hs.stats();
  EXPECT_EQ(jitStatsCount(hs.stats(), " blacklisted"), 0) << hs.stats();
  long exits = hs.exits();
  EXPECT_EQ(hs.run("return k(300, 1)"), "150.5");
  EXPECT_LE(hs.exits() - exits, 2) << hs.stats();
}

// An entry tests only registers it reads before writing: `t`'s register holds the
// integer `u` at the loop header, and the round writes the table into it before reading
// a field. Under collections at every safepoint each round leaves at its poll and
// enters again at the header: none of those entries may fail (testing the register for
// the field read's table made every one fail, and the function was recompiled).
TEST(JitTest, AnEntryTestsNoRegisterItWritesBeforeReading) {
  HotState hs(true);
  hs.run(
      "cfg = {inner = {v = 2}} function f(n) local s = 0 for i = 1, n do "
      "do local t = cfg.inner s = s + t.v end do local u = i * 2 s = s + u end end return s end");
  hs.warm("return f(200)", "40600");
  long recompiled = hs.recompiled(), entries = hs.entries();
  EXPECT_EQ(hs.run("return f(200)"), "40600");
  EXPECT_GT(hs.entries() - entries, 100) << hs.stats();
  EXPECT_EQ(hs.recompiled(), recompiled) << hs.stats();
  EXPECT_EQ(hs.stats().find("guard exits"), std::string::npos) << hs.stats();
}

// Equality with an integer or a float, specialised on its feedback, leaves for the other
// kind: the interpreter compares 0.0 with 0 (equal) and 2^53 + 1 with its float (not).
TEST(JitTest, SpecialisedEqualityLeavesForTheOtherNumberKind) {
  HotState hs;
  hs.run(
      "function eqs(xs, y) local c = 0 for i = 1, #xs do local x = xs[i] "
      "if x == 0 then c = c + 1 end if x ~= 2 then c = c + 10 end "
      "if x == 9007199254740993 then c = c + 100 end if x == y then c = c + 1000 end end return c end");
  hs.run("ints = {} for i = 1, 200 do ints[i] = i % 4 end");
  hs.warm("return eqs(ints, 3)", "51550");
  EXPECT_EQ(hs.run("return eqs({0.0, 2.0, 3.0, 2^53, 0}, 3)"), "1042");
  EXPECT_EQ(hs.run("return eqs({9007199254740993, 3}, 3.0)"), "1120");
  EXPECT_EQ(hs.run("return eqs({0/0, 1.5}, 0/0)"), "20");
}

// Float code takes a float where the feedback saw only integers: it converts that
// operand anyway. A vector of integers refilled with floats runs on in the same code,
// with no guard exit there and no recompilation (each would follow without it).
TEST(JitTest, FloatCodeTakesIntegersThatBecameFloats) {
  HotState hs;
  hs.run(
      "xs = {} for i = 1, 64 do xs[i] = i end "
      "function dot(n) local a = 0.0 for r = 1, n do for j = 1, 64 do a = a + xs[j] * 0.5 end end return a end");
  hs.warm("return dot(20)", "20800.0");
  hs.run("for i = 1, 64 do xs[i] = i + 0.25 end");
  long recompiled = hs.recompiled();
  EXPECT_EQ(hs.run("return dot(20)"), "20960.0");
  hs.settle();
  EXPECT_EQ(hs.recompiled(), recompiled);
  EXPECT_EQ(hs.stats().find("guard exits"), std::string::npos) << hs.stats();
}

// math.sqrt computed in compiled code: the same bits as the call, and a call site whose
// callee changes goes back to calling it.
TEST(JitTest, MathSqrtInCompiledLoops) {
  expectSame("local s = 0 for i = 1, 100 do s = s + math.sqrt(i) end return s", "671.46294710315");
  expectSame("local s = 0 for i = 1, 10 do s = s + math.sqrt(i - 5) end return tostring(s)", "-nan");
  expectSame("local ok, e = pcall(function() for i = 1, 3 do local x = math.sqrt(i == 2 and {} or i) end end) return e",
             "test:1: bad argument #1 to 'sqrt' (number expected, got table)");
  HotState hs;
  EXPECT_EQ(hs.run("function q(n) local s = 0 for i = 1, n do s = s + math.sqrt(i * i) end return s end "
                   "return q(3000)"),
            "4501500.0");
  hs.settle();
  EXPECT_EQ(hs.run("return q(10)"), "55.0");
  EXPECT_EQ(hs.run("math.sqrt = function(x) return 1 end return q(10)"), "10");
}

// A table store that needs the interpreter every round (a new key in a table with
// __newindex) counts as a failed guard: the feedback marks the site, and the next
// version leaves it to the interpreter, so the loop no longer enters and leaves compiled
// code every round: the second version leaves it once per call (entered after the
// setmetatable call, it runs until the store).
TEST(JitTest, FailingHelperLeftToTheInterpreter) {
  HotState hs;
  EXPECT_EQ(hs.run("function ins(n) local t, s = setmetatable({}, {__newindex = rawset}), 0 "
                   "for i = 1, n do t[i * 7] = i s = s + i end return s end "
                   "return ins(300)"),
            "45150");
  hs.settle();
  EXPECT_EQ(hs.run("return ins(300)"), "45150");
  hs.settle();
  long before = hs.exits();
  EXPECT_EQ(hs.run("return ins(300)"), "45150");
  EXPECT_LE(hs.exits() - before, 1) << hs.stats();
  EXPECT_NE(hs.stats().find(" 1 recompiled"), std::string::npos) << hs.stats();
}

// Table reads compiled inline (docs/design/jit.md, "Inline table reads"): array slots
// by integer key (GETTABLE, GETI) and interned fields (GETFIELD), with everything the
// inline path leaves to the helper or the interpreter: keys outside the array part
// (zero, negative, past the end, in the hash part), a nil where a metatable may have
// __index, a metatable set mid-loop, a part resized or rebuilt mid-loop, an operand that
// stops being a table, keys of other types.
TEST(JitTest, InlineArrayReads) {
  const std::string fill = "local t = {} for i = 1, 100 do t[i] = i * 3 end ";
  expectSame(fill + "local s = 0 for i = 1, 100 do s = s + t[i] end return s", "15150");
  expectSame(fill + "local s, n = 0, 0 for i = -3, 110 do local v = t[i] if v then s = s + v else n = n + 1 end end "
                    "return s .. ' ' .. n",
             "15150 14");
  expectSame(fill + "t[1000] = 7 t[-5] = 11 local s = 0 for i = -5, 1000, 5 do s = s + (t[i] or 0) end return s",
             "3168");
  expectSame(fill + "local s = 0 for i = 1, 100 do s = s + t[1] + t[2] + t[100] end return s", "30900");
  expectSame("local t = {1, 2, nil, 4} local n = 0 for i = 1, 50 do if t[3] == nil and t[i % 5] then n = n + 1 end "
             "end return n",
             "30");
  // Float keys are normalised (2.0 is 2); other keys are the helper's.
  expectSame(fill + "local s = 0 for i = 1, 100 do s = s + t[i / 1] end return s", "15150");
  expectSame(fill + "t.x = 5 local s = 0 for i = 1, 10 do local k = i % 2 == 0 and 'x' or i s = s + t[k] end "
                    "return s",
             "100");
  // A metatable with __index arrives mid-loop: nils are then its, present values stay raw.
  expectSame("local t = {1, 2, 3} local s = 0 for i = 1, 10 do if i == 5 then setmetatable(t, {__index = "
             "function(_, k) return k * 100 end}) end s = s + (t[i] or 0) + t[2] end return s",
             "4526");
  expectSame("local t = {1, 2, 3, 4, 5, 6, 7, 8} t[5] = nil local s = 0 for i = 1, 10 do if i == 5 then "
             "setmetatable(t, {__index = function(_, k) return k * 100 end}) end s = s + (t[5] or 0) + (t[i] or 0) end "
             "return s",
             "5431");
  expectSame("local t = setmetatable({1, 2}, {__index = {10, 20, 30}}) local s = 0 for i = 1, 4 do s = s + "
             "(t[i] or 0) end return s",
             "33");
  expectSame("local t = setmetatable({}, {}) local n = 0 for i = 1, 20 do if t[i] == nil then n = n + 1 end end "
             "return n",
             "20");
  // The array part grows (a rebuild) and shrinks under the loop that reads it.
  expectSame("local t = {1} local s = 0 for i = 1, 300 do t[#t + 1] = i s = s + t[i] + t[#t] end return s", "90001");
  expectSame(fill + "local s = 0 for i = 1, 100 do t[101 - i] = nil s = s + (t[50] or 1) end return s", "7550");
  // The operand stops being a table: a string (its metatable's __index), then an error.
  expectSame(fill + "local x, s = t, 0 for i = 1, 10 do if i == 6 then x = 'abc' end s = s + (x[i] or 1) end "
                    "return s",
             "50");
  expectSame(fill + "local x, s = t, 0 for i = 1, 10 do if i == 6 then x = 5 end s = s + x[i] end return s",
             "ERR: test:1: attempt to index a number value (local 'x')");
}

TEST(JitTest, InlineFieldReads) {
  const std::string point = "local p = {x = 1, y = 2.5, z = -3} ";
  expectSame(point + "local s = 0 for i = 1, 100 do s = s + p.x * i + p.y - p.z end return s", "5600.0");
  expectSame(point + "local n = 0 for i = 1, 10 do if p.w == nil then n = n + 1 end end return n", "10");
  // Many fields: probes past colliding nodes and over the whole part.
  std::string many = "local t = {} for i = 1, 200 do t['f' .. i] = i end local s = 0 for i = 1, 50 do s = s";
  for (int f = 1; f <= 200; f += 13) many += " + t.f" + std::to_string(f);
  expectSame(many + " + (t.g1 or 0) end return s", "78800");
  // A field read by an __index table, a metatable set and a field cleared mid-loop.
  expectSame("local C = {speed = 4} local o = setmetatable({x = 1}, {__index = C}) local s = 0 "
             "for i = 1, 10 do s = s + o.x + o.speed end return s",
             "50");
  expectSame(point + "local s = 0 for i = 1, 10 do if i == 4 then p.x = nil end if i == 7 then "
                     "setmetatable(p, {__index = function(_, k) return 100 end}) end s = s + (p.x or 0) end return s",
             "403");
  // The hash part is rebuilt while the loop reads it; keys of 41 bytes are not interned.
  expectSame(point + "local s = 0 for i = 1, 100 do p['k' .. i] = i s = s + p.x + p['k' .. i] end return s", "5150");
  const std::string longKey(41, 'q');
  expectSame("local t = {" + longKey + " = 2} local s = 0 for i = 1, 10 do s = s + t." + longKey + " end return s",
             "20");
  // Not a table: a string's fields come from its metatable; a nil is an error.
  expectSame(point + "local v, n = p, 0 for i = 1, 10 do if i == 3 then v = 'str' end if v.len then n = n + 1 end "
                     "end return n",
             "8");
  expectSame(point + "local v, s = p, 0 for i = 1, 10 do if i == 3 then v = nil end s = s + v.x end return s",
             "ERR: test:1: attempt to index a nil value (local 'v')");
}

// Table reads load a part pointer unordered, in the table scope, where LLVM may reuse it
// (lowering.h, docs/design/jit.md "Inline table reads"). Between two reads of one table,
// an insertion rebuilds its part (or a call does) and a store writes the new part: the
// store and the second read must load the part again. With the first read's part reused,
// they would meet in the old part, and rawget would read the new part's 0.
TEST(JitTest, ReadsAfterARebuildReadTheNewPart) {
  const char* chunks[] = {
      "f = f or function(n) local s = 0 for i = 1, n do local t, k = {a = 0}, 'k' .. i local x = t.a t[k] = i "
      "t.a = i s = s + x + t.a + rawget(t, 'a') end return s end return f(50)",
      "local function grow(t, i) t['k' .. i] = i t.a = i end f = f or function(n) local s = 0 for i = 1, n do "
      "local t = {a = 0} local x = t.a grow(t, i) s = s + x + t.a + rawget(t, 'a') end return s end return f(50)",
      "f = f or function(n) local s = 0 for i = 1, n do local t = {0} local x = t[1] t[2] = i t[1] = i "
      "s = s + x + t[1] + rawget(t, 1) end return s end return f(50)",
  };
  for (const char* chunk : chunks) {
    HotState hs;
    hs.warm(chunk, "2550");
    EXPECT_EQ(hs.run(chunk), "2550") << chunk;
    EXPECT_GT(hs.compiled(), 0) << chunk;
  }
}

// A field site's slot hint (vm/jit_abi.h) is the node where the interpreter last found
// the key past its home; tables of other shapes hold another key there, or none, and
// the compiled read and store test the key before they take that node. Eight sites,
// each profiled last on another of 48 shapes: some hints are set whatever the hash seed.
TEST(JitTest, FieldSlotHintsAreTestedNotTrusted) {
  std::string setup =
      "shapes = {} for s = 1, 48 do local t = {} for f = 1, s % 11 + 2 do t['f' .. s * 16 + f] = -f end "
      "t.x = s shapes[s] = t end sites = {} ";
  for (int k = 1; k <= 8; k++) {
    setup += "sites[" + std::to_string(k) +
             "] = function(rounds) local sum = 0 for r = 1, rounds do for s = 1, 48 do local t = shapes[(s * " +
             std::to_string(k) + " + r) % 48 + 1] sum = sum + t.x t.x = t.x + 1 end end return sum end ";
  }
  const std::string warm = "for k = 1, 8 do sites[k](3) end ";
  const std::string hot = "local total = 0 for k = 1, 8 do total = total + sites[k](40) end return total";
  HotState hs;
  hs.run(setup);
  hs.run(warm);
  hs.settle();
  long before = hs.entries();
  EXPECT_EQ(hs.run(hot), runLua(setup + warm + hot, Run::kInterpreted));
  EXPECT_GE(hs.entries() - before, 8);
}

// Global reads (GETTABUP of _ENV) compiled inline: the upvalue's cell, then the field
// probe; a global changed, an __index on _G set, _ENV's hash part rebuilt mid-loop, an
// _ENV upvalue that is another table or no table.
TEST(JitTest, InlineGlobalReads) {
  expectSame("X = 5 local s = 0 for i = 1, 100 do s = s + X end return s", "500");
  expectSame("X = 5 local s = 0 for i = 1, 10 do if i == 5 then X = 1 end s = s + X end return s", "26");
  expectSame("local s = 0 for i = 1, 10 do if i == 6 then setmetatable(_G, {__index = function(_, k) return 7 end}) "
             "end s = s + (Y or 0) end return s",
             "35");
  expectSame("X = 2 local s = 0 for i = 1, 100 do _G['g' .. i] = i s = s + X + _G['g' .. i] end return s", "5250");
  expectSame("local s = 0 for i = 1, 20 do s = s + math.pi // 1 end return s", "60.0");
  expectSame("local function mk() local _ENV = {v = 3} return function() local s = 0 for i = 1, 10 do s = s + v end "
             "return s end end return mk()()",
             "30");
  expectSame("local function mk() local _ENV = 5 return function() local s = 0 for i = 1, 3 do s = s + (v or 0) end "
             "return s end end return mk()()",
             "ERR: test:1: attempt to index a number value (upvalue '_ENV')");
}

// Weak values collected while a compiled loop reads them (array slot and field): the
// reads see nil once the collector cleared the slot, as the interpreter's do. Collections
// come at other times under relocation stress, so that run is compared with the
// interpreter under the same stress.
TEST(JitTest, InlineReadsOfWeakTables) {
  const std::string src =
      "local w = setmetatable({}, {__mode = 'v'}) w.a = {} w.b = 5 w[1] = {} w[2] = 3 local n = 0 "
      "for i = 1, 10 do if i == 5 then collectgarbage() end if w.a == nil then n = n + 1 end "
      "if w[1] == nil then n = n + 100 end n = n + w.b + w[2] end return n";
  EXPECT_EQ(runLua(src, Run::kInterpreted), "686");
  EXPECT_EQ(runLua(src, Run::kEager), "686");
  StateOptions stressed;
  stressed.gc.stress = gc::StressMode::kRelocate;
  stressed.gc.verify = true;
  std::string interpreted = runLuaWith(src, stressed);
  EXPECT_EQ(interpreted, "990");
  EXPECT_EQ(runLua(src, Run::kEagerRelocate), interpreted);
}

// Integer keys outside the array part (0, negative, far ones) read and stored inline in
// the node part (docs/design/jit.md, "Inline table reads": the key's home and the node
// after it), with absent keys, keys further along their run, dead keys, __index and
// __newindex, and stores that leave the value nil, as the interpreter's.
TEST(JitTest, IntegerKeysOfTheNodePart) {
  expectSame(
      "local t = {[0] = 1, [-1] = 2, [1000000] = 3} local s = 0 for r = 1, 50 do s = s + t[0] + t[-1] + "
      "t[1000000] end return s",
      "300");
  expectSame(
      "local t = {} for i = 0, 63 do t[i * 64] = i end local s = 0 for r = 1, 20 do for i = 0, 63 do s = s "
      "+ t[i * 64] end end return s",
      "40320");
  expectSame(
      "local t = {} for i = 1, 40 do t[-i] = i end local s = 0 for r = 1, 20 do for i = 1, 41 do s = s + "
      "(t[-i] or 1000) end end return s",
      "36400");
  // t[0] is probed in place (its home is node 0 in every part): here behind keys of the
  // same home, at the second node and past it, and absent behind them.
  expectSame(
      "local a, b, c = {}, {}, {} a[3] = 1 a[0] = 2 b[3] = 1 b[6] = 2 b[0] = 4 c[3] = 1 c[6] = 2 "
      "local s = 0 for r = 1, 50 do s = s + a[0] + b[0] + (c[0] or 8) a[0] = a[0] + 1 end return s",
      "1925");
  expectSame(
      "local t = {[0] = 0, [-5] = 0} for r = 1, 100 do t[0] = t[0] + r t[-5] = t[-5] - 1 end return t[0] "
      ".. ' ' .. t[-5]",
      "5050 -100");
  expectSame(
      "local t = setmetatable({[0] = 1}, {__index = function(_, k) return k * 2 end}) local s = 0 for i = "
      "-10, 10 do s = s + t[i] end return s",
      "1");
  expectSame(
      "local log = {} local t = setmetatable({[0] = 1}, {__newindex = function(t, k, v) log[#log + 1] = k "
      "rawset(t, k, v) end}) for i = 1, 3 do t[0] = i t[-i] = i end return t[0] .. ' ' .. #log .. ' ' .. "
      "t[-2]",
      "3 3 2");
  expectSame(
      "local t = {[0] = 1, [-1] = 2} local s = 0 for r = 1, 30 do if r == 15 then t[0] = nil end s = s + "
      "(t[0] or 10) + t[-1] end return s",
      "234");
  expectSame(
      "local t = {} for i = 1, 64 do t[-i] = i end for i = 1, 64, 2 do t[-i] = nil end local s = 0 for r = "
      "1, 10 do for i = 1, 64 do s = s + (t[-i] or 0) end end return s",
      "10560");
  expectSame(
      "local t = {} for i = 0, 100 do t[i * 7 - 350] = i end local s = 0 for r = 1, 5 do for i = 0, 100 do "
      "t[i * 7 - 350] = t[i * 7 - 350] + 1 s = s + t[i * 7 - 350] end end return s",
      "26765");
}

// Table stores compiled inline (docs/design/jit.md, "Inline table stores"): into live
// array slots and fields, with everything left to the helper or the interpreter: nil
// values, nil slots and new keys (appends, the hash part), keys outside the array part
// or of other types, __newindex on absent keys while present ones stay raw, parts
// rebuilt under the loop, an operand that stops being a table.
TEST(JitTest, InlineArrayStores) {
  const std::string fill = "local t = {} for i = 1, 100 do t[i] = 0 end ";
  const std::string sum = " local s = 0 for i = 1, 100 do s = s + t[i] end return s";
  expectSame(fill + "for r = 1, 3 do for i = 1, 100 do t[i] = t[i] + i * r end end" + sum, "30300");
  expectSame(fill +
                 "local o = {} for i = 1, 100 do local m = i % 4 if m == 0 then t[i] = o elseif m == 1 then "
                 "t[i] = 'x' elseif m == 2 then t[i] = 0.5 else t[i] = true end end local n = 0 for i = 1, 100 do "
                 "if t[i] == o then n = n + 1 end end return n .. t[1] .. t[2] .. tostring(t[3])",
             "25x0.5true");
  expectSame(fill +
                 "for i = 1, 10 do t[1] = i t[100] = 'k' t[2] = 2.5 t[3] = false end return t[1] .. t[100] .. t[2] "
                 ".. tostring(t[3])",
             "10k2.5false");
  // Nil stores and stores into nil slots: the helper, then the interpreter.
  expectSame(fill + "for i = 1, 100 do t[i] = nil t[i] = i end return #t .. ' ' .. t[50]", "100 50");
  expectSame(fill + "for i = 1, 100, 2 do t[i] = nil end for r = 1, 2 do for i = 1, 100 do t[i] = i end end" + sum,
             "5050");
  // New keys: appends that grow the part, the hash part, negative and far keys.
  expectSame(
      "local t = {} for i = 1, 200 do t[i] = i t[-i] = i t[i * 1000] = i end local s = 0 for k, v in pairs(t) "
      "do s = s + v end return s",
      "60300");
  expectSame(
      "local t = {1} for i = 1, 300 do t[#t + 1] = i t[i] = t[i] * 2 end return #t .. ' ' .. t[1] .. ' ' .. "
      "t[150] .. ' ' .. t[301]",
      "301 2 298 300");
  // Keys of other types: floats are normalised, strings are fields.
  expectSame(fill +
                 "for i = 1, 100 do t[i / 1] = i end t.x = 0 for i = 1, 10 do local k = 'x' t[k] = i end "
                 "return t[50] .. ' ' .. t.x",
             "50 10");
  // __newindex applies to absent and nil keys only, also once set mid-loop.
  expectSame(
      "local log = 0 local t = setmetatable({1, 2, 3, nil, 5}, {__newindex = function(_, k) log = log + k end}) "
      "for i = 1, 6 do t[i] = i * 10 end return log .. ' ' .. t[1] .. t[3] .. tostring(t[4]) .. t[5]",
      "10 1030nil50");
  expectSame(fill +
                 "local log = 0 for i = 1, 100 do if i == 50 then setmetatable(t, {__newindex = function(_, k) "
                 "log = log + k end}) t[60] = nil end t[i] = i end return log" +
                 " .. ' ' .. tostring(t[60]) .. "
                 "' ' .. t[59] .. ' ' .. t[61]",
             "60 nil 59 61");
  // The part shrinks under the loop; the operand stops being a table.
  expectSame(fill + "for i = 1, 100 do t[101 - i] = nil t[1] = i end return t[1] .. ' ' .. #t", "100 1");
  expectSame(fill + "local x = t for i = 1, 10 do if i == 6 then x = 5 end x[i] = i end return 0",
             "ERR: test:1: attempt to index a number value (local 'x')");
  expectSame(fill + "local x = t for i = 1, 10 do if i == 6 then x = 'abc' end x[1] = i end return 0",
             "ERR: test:1: attempt to index a string value (local 'x')");
}

TEST(JitTest, InlineFieldStores) {
  const std::string point = "local p = {x = 1, y = 2.5, z = 'a'} ";
  expectSame(point +
                 "for i = 1, 100 do p.x = p.x + i p.y = p.y * 0.5 + i p.z = i % 2 == 0 end "
                 "return p.x .. ' ' .. p.y .. ' ' .. tostring(p.z)",
             "5051 198.0 true");
  // Nil stores, stores into nil fields, new fields (a rebuilt part), long keys.
  expectSame(point + "for i = 1, 10 do p.x = nil p.x = i end return p.x", "10");
  expectSame(point + "p.y = nil for i = 1, 10 do p.y = i p.y = p.y + 1 end return p.y", "11");
  expectSame(point +
                 "for i = 1, 100 do p['k' .. i] = i p.x = i end local n = 0 for k in pairs(p) do n = n + 1 end "
                 "return n .. ' ' .. p.x .. ' ' .. p.k50",
             "103 100 50");
  std::string many = "local t = {} for i = 1, 200 do t['f' .. i] = 0 end for i = 1, 50 do";
  for (int f = 1; f <= 200; f += 13) many += " t.f" + std::to_string(f) + " = t.f" + std::to_string(f) + " + i";
  expectSame(many + " end return t.f1 + t.f196 + (t.f2 or 0)", "2550");
  const std::string longKey(41, 'q');
  expectSame("local t = {" + longKey + " = 2} for i = 1, 10 do t." + longKey + " = i end return t." + longKey, "10");
  // __newindex for absent fields only, set mid-loop too; not a table.
  expectSame(point +
                 "local n = 0 for i = 1, 10 do if i == 4 then setmetatable(p, {__newindex = function(t, k, v) "
                 "n = n + 1 rawset(t, k, v * 100) end}) p.x = nil end p.x = i p.y = i end return n .. ' ' .. p.x "
                 ".. ' ' .. p.y",
             "1 10 10");
  expectSame(point + "local v = p for i = 1, 10 do if i == 3 then v = nil end v.x = i end return 0",
             "ERR: test:1: attempt to index a nil value (local 'v')");
}

// Global stores (SETTABUP of _ENV) compiled inline; a global cleared, _G given a
// __newindex, an _ENV that is another table or no table.
TEST(JitTest, InlineGlobalStores) {
  expectSame("X = 0 for i = 1, 100 do X = X + i end return X", "5050");
  expectSame(
      "local n = 0 setmetatable(_G, {__newindex = function(t, k, v) n = n + 1 rawset(t, k, v) end}) "
      "for i = 1, 10 do W = i if i % 3 == 0 then W = nil end end return n .. ' ' .. tostring(W)",
      "4 10");
  expectSame("for i = 1, 10 do _G['g' .. i] = i G = i end return G + g7", "17");
  expectSame(
      "local function mk() local _ENV = {v = 0} return function() for i = 1, 10 do v = v + i end return v end "
      "end return mk()()",
      "55");
  expectSame("local function mk() local _ENV = 5 return function() for i = 1, 3 do v = i end end end return mk()()",
             "ERR: test:1: attempt to index a number value (upvalue '_ENV')");
}

// The write barrier of compiled stores (gc-v2.md "The write barrier", "Cards"): an old
// table receives young tables (made straight before each compiled loop, so they are
// young until the loop's next collection) from compiled stores while minors run at
// every 7th safepoint, under --gc-verify, which reports an old table holding a young
// value without its record, or a young value in a clean card, before each collection.
// A small table is remembered; a big array (>= 1,024 slots) has its cards set. Every
// value must survive and read back.
TEST(JitTest, InlineStoresKeepYoungValuesOfOldTables) {
  auto program = [](int n) {
    return "local n = " + std::to_string(n) +
           " local old = {} for i = 1, n do old[i] = i end local rec = {a = 0, b = 0} collectgarbage() "
           "for round = 1, 20 do local y, z = {round}, {-round} "
           "for k = 1, 30 do local i = (round * 7919 + k * 104729) % n + 1 old[i] = y rec.a = z end end "
           "local tables, sum = 0, 0 for i = 1, n do local v = old[i] if type(v) == 'table' then "
           "tables = tables + 1 sum = sum + v[1] else assert(v == i) end end return tables .. ' ' .. sum .. ' ' .. "
           "rec.a[1]";
  };
  for (int n : {10, 5000}) {
    for (bool jit : {false, true}) {
      StateOptions opts;
      if (jit) opts.jit.mode = JitMode::kEager;
      opts.gc.stress = gc::StressMode::kCollect;
      opts.gc.verify = true;
      opts.gc.interval = 7;
      std::string failure;
      std::string out = runLuaWith(program(n), opts, &failure);
      EXPECT_EQ(failure, "") << n << (jit ? " eager" : " interpreted");
      EXPECT_EQ(out, n == 10 ? "10 200 -20" : "600 6300 -20") << n << (jit ? " eager" : " interpreted");
    }
  }
}

// Compiled stores into weak tables: a weak-valued table keeps what compiled code stored
// while it is reachable elsewhere (here the last one through a weak-keyed table's field,
// which holds its value strongly) and loses the rest at a collection.
TEST(JitTest, InlineStoresIntoWeakTables) {
  const std::string src =
      "local w = setmetatable({}, {__mode = 'v'}) for i = 1, 10 do w[i] = true end w.f = true "
      "local e = setmetatable({f = true}, {__mode = 'k'}) local objs = {} for i = 1, 10 do objs[i] = {i} end "
      "for i = 1, 10 do w[i] = objs[i] w.f = objs[i] e.f = objs[i] end "
      "for i = 1, 10, 2 do objs[i] = false end objs = {objs[2], objs[4], objs[6], objs[8]} collectgarbage() "
      "local n = 0 for i = 1, 10 do if w[i] ~= nil then n = n + i end end "
      "return n .. ' ' .. tostring(w.f == e.f) .. ' ' .. e.f[1]";
  expectSame(src, "30 true 10");
}

// Inline reads in code compiled from feedback: the operand was only ever a table, so
// anything else is a guard exit (counted, recompiled), and a read whose helper failed
// (an __index function) is left to the interpreter by the next version.
TEST(JitTest, SpecialisedTableReadsMeetOtherValues) {
  for (bool relocate : {false, true}) {
    HotState hs(relocate);
    EXPECT_EQ(hs.run("function rd(n, t, p) local s = 0 for i = 1, n do s = s + t[i % 10 + 1] + t[1] + p.x end "
                     "return s end local t = {} for i = 1, 10 do t[i] = i end T, P = t, {x = 1} "
                     "return rd(3000, T, P)"),
              "22500");
    hs.settle();
    EXPECT_EQ(hs.run("return rd(100, T, setmetatable({}, {__index = function() return 2 end}))"), "850");
    EXPECT_EQ(hs.run("return rd(100, 'abcdefghijk', P)"),
              "ERR: test:1: attempt to perform arithmetic on a nil value (field '?')");
    hs.settle();
    EXPECT_EQ(hs.run("return rd(300, setmetatable({}, {__index = function(_, k) return k end}), P)"), "2250");
    std::string stats = hs.stats();
    EXPECT_NE(stats.find("guard exits"), std::string::npos) << stats;
    EXPECT_NE(stats.find("recompiled"), std::string::npos) << stats;
    hs.settle();
    EXPECT_EQ(hs.run("return rd(3000, T, P)"), "22500");
  }
}

}  // namespace
}  // namespace weft::vm::testing
