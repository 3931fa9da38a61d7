// Deeply nested input gets Lua's error instead of overflowing the C++ stack, and the
// main-chunk conventions the VM relies on hold.
#include <gtest/gtest.h>

#include <string>

#include "frontend/compiler.h"
#include "frontend/verify.h"

namespace weft::frontend {
namespace {

std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

void expectDepthError(const std::string& src) {
  auto r = compile(src, "=input");
  ASSERT_FALSE(r.hasValue());
  EXPECT_NE(r.error().message.find("too many C levels (limit is 200)"), std::string::npos) << r.error().message;
}

TEST(Nesting, HundredThousandParentheses) {
  expectDepthError("return " + repeat("(", 100000) + "1" + repeat(")", 100000));
}

TEST(Nesting, HundredThousandTableConstructors) {
  expectDepthError("return " + repeat("{", 100000) + repeat("}", 100000));
}

TEST(Nesting, HundredThousandFunctionBodies) {
  expectDepthError("return " + repeat("function() return ", 100000) + "1" + repeat(" end", 100000));
}

TEST(Nesting, HundredThousandBlocksAndOperators) {
  expectDepthError(repeat("do ", 100000) + repeat("end ", 100000));
  expectDepthError("x = " + repeat("- ", 100000) + "1");
  expectDepthError("x = " + repeat("a .. ", 100000) + "a");
  expectDepthError(repeat("a,", 100000) + "a = 1");
}

TEST(Nesting, LongFlatInputIsFine) {
  auto r = compile("x = 0 " + repeat("x = x + 1 ", 100000), "=input");
  ASSERT_TRUE(r.hasValue()) << r.error().message;
  EXPECT_EQ(verifyProto(*r.value()), std::nullopt);
  auto r2 = compile("return " + repeat("(", 150) + "1" + repeat(")", 150), "=input");
  EXPECT_TRUE(r2.hasValue());
}

TEST(MainChunk, ConventionsForTheVm) {
  auto r = compile("local a = ... return a", "=input");
  ASSERT_TRUE(r.hasValue());
  const ProtoData& p = *r.value();
  EXPECT_TRUE(p.isVararg);
  EXPECT_EQ(p.numParams, 0);
  ASSERT_EQ(p.upvalues.size(), 1u);
  EXPECT_EQ(p.upvalues[0].name, "_ENV");
  EXPECT_TRUE(p.upvalues[0].inStack);
  EXPECT_EQ(p.upvalues[0].index, 0);
  EXPECT_EQ(getOp(p.code[0]), Op::VARARGPREP);
  EXPECT_EQ(p.source, "=input");
  EXPECT_EQ(p.code.size(), p.lineinfo.size());
  ASSERT_EQ(p.locals.size(), 1u);
  EXPECT_EQ(p.locals[0].name, "a");
}

TEST(MainChunk, DebugInfoForErrorMessages) {
  auto r = compile("local t = nil\nlocal x = t.y\nfor i = 1, 2 do end", "=input");
  ASSERT_TRUE(r.hasValue());
  const ProtoData& p = *r.value();
  ASSERT_GE(p.locals.size(), 6u);
  EXPECT_EQ(p.locals[0].name, "t");
  EXPECT_EQ(p.locals[2].name, "(for state)");
  EXPECT_EQ(p.locals[5].name, "i");
  // GETFIELD reading t.y is on line 2 and names register 0, which is local 't'.
  bool found = false;
  for (size_t pc = 0; pc < p.code.size(); ++pc) {
    if (getOp(p.code[pc]) == Op::GETFIELD) {
      EXPECT_EQ(p.lineinfo[pc], 2);
      EXPECT_EQ(getB(p.code[pc]), 0);
      EXPECT_LE(p.locals[0].startPc, static_cast<int>(pc));
      EXPECT_GT(p.locals[0].endPc, static_cast<int>(pc));
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace weft::frontend
