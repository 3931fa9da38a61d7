// Number semantics (vm/number.h) against results printed by the oracle, lua5.4 5.4.4:
// every expected string below was produced by running the same operation in lua5.4.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <memory>

#include "vm/number.h"
#include "vm/state.h"
#include "vm/string.h"

namespace weft::vm {
namespace {

struct Operand {
  enum { Int, Float, Str } kind;
  int64_t i = 0;
  double f = 0;
  const char* s = nullptr;
};
Operand I(int64_t v) { return {Operand::Int, v, 0, nullptr}; }
Operand F(double v) { return {Operand::Float, 0, v, nullptr}; }
Operand S(const char* v) { return {Operand::Str, 0, 0, v}; }

struct ArithCase {
  ArithOp op;
  Operand a, b;
  const char* expected;
};

const ArithCase kArithCases[] = {
    {ArithOp::IDiv, I(7), I(-2), "-4"},  // 7 // -2
    {ArithOp::Mod, I(7), I(-2), "-1"},  // 7 % -2
    {ArithOp::Mod, I(-7), F(2.5), "0.5"},  // -7 % 2.5
    {ArithOp::IDiv, I(INT64_MIN), I(-1), "-9223372036854775808"},  // math.mininteger // -1
    {ArithOp::Mod, I(INT64_MIN), I(-1), "0"},  // math.mininteger % -1
    {ArithOp::IDiv, I(7), F(0.0), "inf"},  // 7 // 0.0
    {ArithOp::Mod, I(-7), F(0.0), "-nan"},  // -7 % 0.0
    {ArithOp::Mod, I(3), I(-2), "-1"},  // 3 % -2
    {ArithOp::Mod, I(-3), I(2), "1"},  // -3 % 2
    {ArithOp::IDiv, F(3.0), I(2), "1.0"},  // 3.0 // 2
    {ArithOp::IDiv, I(-3), I(2), "-2"},  // -3 // 2
    {ArithOp::Pow, I(2), I(-1), "0.5"},  // 2 ^ -1
    {ArithOp::Pow, I(2), F(0.5), "1.4142135623731"},  // 2 ^ 0.5
    {ArithOp::Pow, I(-8), F(1.0/3), "-nan"},  // -8 ^ 1/3
    {ArithOp::Div, I(10), I(2), "5.0"},  // 10 / 2
    {ArithOp::BOr, I(3), F(1.0), "3"},  // 3 | 1.0
    {ArithOp::BXor, I(255), I(15), "240"},  // 255 ~ 15
    {ArithOp::Shl, I(1), I(-1), "0"},  // 1 << -1
    {ArithOp::Shr, I(2), I(1), "1"},  // 2 >> 1
    {ArithOp::Shr, I(-1), I(63), "1"},  // -1 >> 63
    {ArithOp::IDiv, I(INT64_MIN), I(1), "-9223372036854775808"},  // math.mininteger // 1
    {ArithOp::IDiv, F(5.5), I(1), "5.0"},  // 5.5 // 1
    {ArithOp::Add, I(INT64_MAX), I(1), "-9223372036854775808"},  // math.maxinteger + 1
    {ArithOp::Sub, I(INT64_MIN), I(1), "9223372036854775807"},  // math.mininteger - 1
    {ArithOp::Mul, I(INT64_MAX), I(2), "-2"},  // math.maxinteger * 2
    {ArithOp::Add, I(1), F(2.0), "3.0"},  // 1 + 2.0
    {ArithOp::Div, I(1), I(0), "inf"},  // 1 / 0
    {ArithOp::Div, I(-1), I(0), "-inf"},  // -1 / 0
    {ArithOp::Div, I(0), I(0), "-nan"},  // 0 / 0
    {ArithOp::IDiv, I(1), F(0.0), "inf"},  // 1 // 0.0
    {ArithOp::IDiv, I(-1), F(0.0), "-inf"},  // -1 // 0.0
    {ArithOp::Mod, I(-1), F(HUGE_VAL), "inf"},  // -1 % math.huge
    {ArithOp::Mod, I(1), F(-HUGE_VAL), "-inf"},  // 1 % -math.huge
    {ArithOp::Mod, F(5.3), I(-2), "-0.7"},  // 5.3 % -2
    {ArithOp::Mod, F(-5.3), I(2), "0.7"},  // -5.3 % 2
    {ArithOp::Mod, F(0.0), I(-1), "0.0"},  // 0.0 % -1
    {ArithOp::Mod, I(5), F(HUGE_VAL), "5.0"},  // 5 % math.huge
    {ArithOp::Mod, I(-5), F(-HUGE_VAL), "-5.0"},  // -5 % -math.huge
    {ArithOp::Shl, I(1), I(63), "-9223372036854775808"},  // 1 << 63
    {ArithOp::Shl, I(1), I(64), "0"},  // 1 << 64
    {ArithOp::Shr, I(-1), I(1), "9223372036854775807"},  // -1 >> 1
    {ArithOp::Shr, I(3), I(-1), "6"},  // 3 >> -1
    {ArithOp::Add, F(1e308), F(1e308), "inf"},  // 1e308 + 1e308
    {ArithOp::Pow, I(2), I(63), "9.2233720368548e+18"},  // 2 ^ 63
    {ArithOp::Pow, I(2), I(53), "9.007199254741e+15"},  // 2 ^ 53
    {ArithOp::Mul, F(0.1), I(3), "0.3"},  // 0.1 * 3
    {ArithOp::IDiv, I(100), F(1e-300), "1e+302"},  // 100 // 1e-300
    {ArithOp::IDiv, F(9223372036854775808.0), I(1), "9.2233720368548e+18"},  // 2^63 // 1
    {ArithOp::Sub, F(0.0), F(0.0), "0.0"},  // 0.0 - 0.0
    {ArithOp::Mul, I(-1), F(0.0), "-0.0"},  // -1 * 0.0
    {ArithOp::Div, I(7), I(2), "3.5"},  // 7 / 2
    {ArithOp::IDiv, I(-7), I(2), "-4"},  // -7 // 2
    {ArithOp::Mod, I(-7), I(2), "1"},  // -7 % 2
    {ArithOp::Mod, F(7.5), I(2), "1.5"},  // 7.5 % 2
    {ArithOp::IDiv, F(-7.5), I(2), "-4.0"},  // -7.5 // 2
    {ArithOp::BAnd, I(-1), I(0xff), "255"},  // -1 & 0xff
    {ArithOp::BOr, I(0x10), I(0x01), "17"},  // 0x10 | 0x01
    {ArithOp::Shl, I(0xff), I(4), "4080"},  // 0xff << 4
    {ArithOp::Shr, I(INT64_MIN), I(63), "1"},  // math.mininteger >> 63
    {ArithOp::Shl, I(1), I(-64), "0"},  // 1 << -64
    {ArithOp::Add, S("10"), I(1), "11"},  // "10" + 1
    {ArithOp::Mul, S("0x10"), I(2), "32"},  // "0x10" * 2
    {ArithOp::Add, S("1e1"), I(1), "11.0"},  // "1e1" + 1
    {ArithOp::Sub, S(" 3 "), I(1), "2"},  // " 3 " - 1
    {ArithOp::Div, S("6"), S("3"), "2.0"},  // "6" / "3"
    {ArithOp::Mod, I(INT64_MAX), I(INT64_MIN), "-1"},  // math.maxinteger % math.mininteger
    {ArithOp::IDiv, I(INT64_MAX), I(INT64_MIN), "-1"},  // math.maxinteger // math.mininteger
    {ArithOp::Mod, I(INT64_MIN), I(INT64_MAX), "9223372036854775806"},  // math.mininteger % math.maxinteger
    {ArithOp::Pow, I(0), I(0), "1.0"},  // 0 ^ 0
    {ArithOp::Pow, I(-2), F(0.5), "-nan"},  // -2 ^ 0.5
    {ArithOp::Add, F(1e15), I(0), "1e+15"},  // 1e15 + 0
    {ArithOp::Add, F(123456789012345.0), I(0), "1.2345678901234e+14"},  // 123456789012345.0 + 0
    {ArithOp::Mul, F(1e16), I(1), "1e+16"},  // 1e16 * 1
    {ArithOp::Add, F(0.1), F(0.2), "0.3"},  // 0.1 + 0.2
};

class NumberTest : public ::testing::Test {
 protected:
  Value make(const Operand& o) {
    switch (o.kind) {
      case Operand::Int: return Value::integer(o.i);
      case Operand::Float: return Value::number(o.f);
      default: return Value::string(newString(state_, o.s));
    }
  }
  State state_;
};

TEST_F(NumberTest, ArithmeticMatchesOracle) {
  ASSERT_GE(std::size(kArithCases), 60u);
  for (const ArithCase& c : kArithCases) {
    Value out = Value::nil();
    ArithFailure why;
    ASSERT_TRUE(arithRaw(c.op, make(c.a), make(c.b), out, why)) << c.expected;
    EXPECT_EQ(numberToString(out), c.expected) << "op " << int(c.op);
  }
}

TEST_F(NumberTest, ArithmeticFailures) {
  Value out = Value::nil();
  ArithFailure why;
  EXPECT_FALSE(arithRaw(ArithOp::IDiv, Value::integer(5), Value::integer(0), out, why));
  EXPECT_TRUE(why.divByZero);
  why = {};
  EXPECT_FALSE(arithRaw(ArithOp::Mod, Value::integer(5), Value::integer(0), out, why));
  EXPECT_TRUE(why.divByZero);
  why = {};
  EXPECT_FALSE(arithRaw(ArithOp::BAnd, Value::number(1.5), Value::integer(1), out, why));
  EXPECT_TRUE(why.noIntegerRep);
  EXPECT_FALSE(why.notNumbers);
  why = {};
  // lua5.4: "3" & 1 -> attempt to perform bitwise operation on a string value
  EXPECT_FALSE(arithRaw(ArithOp::BAnd, make(S("3")), Value::integer(1), out, why));
  EXPECT_TRUE(why.notNumbers);
  why = {};
  EXPECT_FALSE(arithRaw(ArithOp::Add, make(S("x")), Value::integer(1), out, why));
  EXPECT_TRUE(why.notNumbers);
  why = {};
  EXPECT_FALSE(arithRaw(ArithOp::Add, Value::boolean(true), Value::integer(1), out, why));
  EXPECT_TRUE(why.notNumbers);
}

TEST_F(NumberTest, UnaryOperators) {
  Value out = Value::nil();
  ArithFailure why;
  ASSERT_TRUE(arithRaw(ArithOp::Unm, Value::integer(INT64_MIN), Value::integer(INT64_MIN), out, why));
  EXPECT_EQ(numberToString(out), "-9223372036854775808");  // lua5.4: -math.mininteger
  ASSERT_TRUE(arithRaw(ArithOp::Unm, Value::number(0.0), Value::number(0.0), out, why));
  EXPECT_EQ(numberToString(out), "-0.0");
  ASSERT_TRUE(arithRaw(ArithOp::BNot, Value::integer(0), Value::integer(0), out, why));
  EXPECT_EQ(numberToString(out), "-1");
  ASSERT_TRUE(arithRaw(ArithOp::Unm, make(S("2")), make(S("2")), out, why));
  EXPECT_EQ(numberToString(out), "-2");  // lua5.4: -"2" -> -2
}

TEST(NumberFormat, MatchesOracle) {
  // lua5.4 -e "print(1e15, 1e16, 2^63, -0.0, 1e100, 0/0, -(0/0), math.huge, -math.huge, 0.1, 100, -7, 1e-5, 2^24, 3.14159265358979)"
  struct { Value v; const char* s; } cases[] = {
      {Value::number(1e15), "1e+15"}, {Value::number(1e16), "1e+16"},
      {Value::number(9223372036854775808.0), "9.2233720368548e+18"}, {Value::number(-0.0), "-0.0"},
      {Value::number(1e100), "1e+100"}, {Value::number(HUGE_VAL), "inf"},
      {Value::number(-HUGE_VAL), "-inf"}, {Value::number(0.1), "0.1"},
      {Value::integer(100), "100"}, {Value::integer(-7), "-7"}, {Value::number(1e-5), "1e-05"},
      {Value::number(16777216.0), "16777216.0"}, {Value::number(3.14159265358979), "3.1415926535898"},
      {Value::number(std::copysign(std::nan(""), -1.0)), "-nan"},
      {Value::number(std::copysign(std::nan(""), 1.0)), "nan"},
  };
  for (auto& c : cases) EXPECT_EQ(numberToString(c.v), c.s);
  char buf[64];
  EXPECT_EQ(formatNumber(Value::integer(INT64_MIN), buf), 20u);
  EXPECT_STREQ(buf, "-9223372036854775808");
}

TEST(NumberConvert, FloatToInteger) {
  int64_t out = 0;
  EXPECT_TRUE(floatToInteger(3.0, out));
  EXPECT_EQ(out, 3);
  EXPECT_FALSE(floatToInteger(3.5, out));
  EXPECT_TRUE(floatToInteger(3.5, out, FloatToInt::Floor));
  EXPECT_EQ(out, 3);
  EXPECT_TRUE(floatToInteger(-3.5, out, FloatToInt::Floor));
  EXPECT_EQ(out, -4);
  EXPECT_TRUE(floatToInteger(-3.5, out, FloatToInt::Ceil));
  EXPECT_EQ(out, -3);
  EXPECT_FALSE(floatToInteger(9223372036854775808.0, out));  // 2^63: math.tointeger -> nil
  EXPECT_TRUE(floatToInteger(-9223372036854775808.0, out));
  EXPECT_EQ(out, INT64_MIN);
  EXPECT_FALSE(floatToInteger(std::nan(""), out, FloatToInt::Floor));
  EXPECT_FALSE(floatToInteger(HUGE_VAL, out, FloatToInt::Floor));
  EXPECT_TRUE(floatToInteger(-0.0, out));
  EXPECT_EQ(out, 0);
}

TEST(NumberConvert, StringToNumber) {
  auto n = stringToNumber("  0x10  ");
  ASSERT_TRUE(n && n->isInt());
  EXPECT_EQ(n->asInt(), 16);
  n = stringToNumber("1e2");
  ASSERT_TRUE(n && n->isFloat());
  EXPECT_EQ(n->asFloat(), 100.0);
  n = stringToNumber("9223372036854775808");  // lua5.4: math.type(tonumber(...)) == "float"
  ASSERT_TRUE(n && n->isFloat());
  EXPECT_FALSE(stringToNumber("inf"));
  EXPECT_FALSE(stringToNumber("1 2"));
  EXPECT_FALSE(stringToNumber(std::string_view("1\0", 2)));
}

TEST_F(NumberTest, ToIntegerCoercesStrings) {
  int64_t out = 0;
  EXPECT_TRUE(toInteger(make(S("42")), out));
  EXPECT_EQ(out, 42);
  EXPECT_TRUE(toInteger(make(S("3.0")), out));
  EXPECT_EQ(out, 3);
  EXPECT_FALSE(toInteger(make(S("3.5")), out));
  EXPECT_TRUE(toInteger(make(S("3.5")), out, FloatToInt::Floor));
  EXPECT_EQ(out, 3);
  double d = 0;
  EXPECT_TRUE(toNumber(make(S("0x1p4")), d));
  EXPECT_EQ(d, 16.0);
  EXPECT_FALSE(toNumber(Value::boolean(true), d));
}

TEST(NumberCompare, MixedExactness) {
  // lua5.4: math.maxinteger < 2^63 -> true; math.maxinteger == 2^63 -> false;
  // math.mininteger <= -2^63 -> true; math.mininteger < -2^63 -> false;
  // 2^53+1 (int) > 2^53 (float); 1 < 0/0 -> false; 3 <= 3.0; -3 < -3.5 -> false
  Value maxI = Value::integer(INT64_MAX), minI = Value::integer(INT64_MIN);
  Value two63 = Value::number(9223372036854775808.0);
  EXPECT_TRUE(numLessThan(maxI, two63));
  EXPECT_FALSE(numEquals(maxI, two63));
  EXPECT_TRUE(numLessEqual(minI, Value::number(-9223372036854775808.0)));
  EXPECT_FALSE(numLessThan(minI, Value::number(-9223372036854775808.0)));
  EXPECT_TRUE(numEquals(minI, Value::number(-9223372036854775808.0)));
  Value big = Value::integer((int64_t(1) << 53) + 1);
  EXPECT_TRUE(numLessThan(Value::number(9007199254740992.0), big));
  EXPECT_FALSE(numEquals(big, Value::number(9007199254740992.0)));
  EXPECT_FALSE(numLessThan(Value::integer(1), Value::number(std::nan(""))));
  EXPECT_FALSE(numLessEqual(Value::number(std::nan("")), Value::integer(1)));
  EXPECT_TRUE(numLessEqual(Value::integer(3), Value::number(3.0)));
  EXPECT_FALSE(numLessThan(Value::integer(-3), Value::number(-3.5)));
  EXPECT_TRUE(numLessThan(Value::number(-1e100), minI));
  EXPECT_TRUE(numLessThan(maxI, Value::number(1e100)));
  EXPECT_TRUE(numEquals(Value::number(-0.0), Value::integer(0)));
}

TEST(NumberInt, DivModShift) {
  EXPECT_EQ(intFloorDiv(INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(intMod(INT64_MIN, -1), 0);
  EXPECT_EQ(intFloorDiv(-7, 2), -4);
  EXPECT_EQ(intMod(-7, 2), 1);
  EXPECT_EQ(intMod(7, -2), -1);
  EXPECT_EQ(shiftLeft(1, 64), 0);
  EXPECT_EQ(shiftLeft(-1, -64), 0);
  EXPECT_EQ(shiftRight(-1, 60), 15);
  EXPECT_EQ(shiftRight(1, INT64_MIN), 0);
}

}  // namespace
}  // namespace weft::vm
