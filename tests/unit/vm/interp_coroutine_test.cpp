// Coroutines: resume/yield, wrap, yields across pcall, metamethods and iterators.
#include <gtest/gtest.h>

#include "tests/unit/vm/interp_test_util.h"

namespace weft::vm::testing {
namespace {

class InterpCoroutine : public ::testing::TestWithParam<Mode> {
 protected:
  std::string run(const std::string& src) { return runLua(src, GetParam()); }
};

TEST_P(InterpCoroutine, ResumeYieldPassValues) {
  EXPECT_EQ(run("local co = coroutine.create(function(a, b) local c = coroutine.yield(a + b) return c * 2 end) "
                "local _, x = coroutine.resume(co, 1, 2) local _, y = coroutine.resume(co, 10) "
                "return x .. ',' .. y .. ',' .. coroutine.status(co)"),
            "3,20,dead");
  EXPECT_EQ(run("local co = coroutine.create(function() end) coroutine.resume(co) "
                "return select(2, coroutine.resume(co))"),
            "cannot resume dead coroutine");
  EXPECT_EQ(run("return select(2, pcall(coroutine.yield))"), "attempt to yield from outside a coroutine");
}

TEST_P(InterpCoroutine, WrapGenerator) {
  EXPECT_EQ(run("local g = coroutine.wrap(function() for i = 1, 4 do coroutine.yield(i) end end) "
                "local s = '' for v in g do s = s .. v end return s"),
            "1234");
  EXPECT_EQ(run("return select(2, pcall(coroutine.wrap(function() error('werr') end)))"), "test:1: werr");
}

TEST_P(InterpCoroutine, YieldAcrossPcallAndMetamethods) {
  EXPECT_EQ(run("local co = coroutine.wrap(function() local ok, e = pcall(function() "
                "local x = coroutine.yield('p') error('e' .. x, 0) end) return tostring(ok) .. e end) "
                "return co() .. co('!')"),
            "pfalsee!");
  EXPECT_EQ(run("local mt = {__index = function(t, k) return coroutine.yield(k) end, "
                "__add = function() return coroutine.yield('add') end, "
                "__lt = function() return coroutine.yield('lt') end} "
                "local co = coroutine.wrap(function() local t = setmetatable({}, mt) "
                "local a = t.key local b = t + 1 local c = t < t return a .. b .. tostring(c) end) "
                "return co() .. co('A') .. co('B') .. co(true)"),
            "keyaddltABtrue");
  EXPECT_EQ(run("local co = coroutine.wrap(function() local n = 0 "
                "for k in function(s, c) c = (c or 0) + 1 if c > 2 then return nil end coroutine.yield(c) return c end do "
                "n = n + k end return 'sum' .. n end) return co() .. co() .. co()"),
            "12sum3");
}

TEST_P(InterpCoroutine, YieldAcrossNativeBoundaryFails) {
  EXPECT_EQ(run("local co = coroutine.wrap(function() table.sort({3, 2, 1}, function(a, b) coroutine.yield() return a < b end) end) "
                "return select(2, pcall(co))"),
            "attempt to yield across a C-call boundary");
}

TEST_P(InterpCoroutine, CloseRunsPendingClose) {
  EXPECT_EQ(run("local log = '' local co = coroutine.create(function() local x <close> = setmetatable({}, "
                "{__close = function() log = log .. 'closed' end}) coroutine.yield() end) coroutine.resume(co) "
                "local ok = coroutine.close(co) return log .. tostring(ok) .. coroutine.status(co)"),
            "closedtruedead");
}

INSTANTIATE_TEST_SUITE_P(Modes, InterpCoroutine, ::testing::Values(Mode::kNormal, Mode::kStress, Mode::kGenerational),
                         [](const auto& info) { return std::string(modeName(info.param)); });

}  // namespace
}  // namespace weft::vm::testing
