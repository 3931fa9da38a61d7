// The string.format engine (vm/lib/strformat.h): specification validation with Lua
// 5.4's messages, each conversion, and %q literals (expectations taken from lua5.4).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "vm/lib/strformat.h"

namespace weft::vm {
namespace {

SpecStatus parse(std::string_view fmt, FormatSpec& spec) {
  size_t pos = 0;
  SpecStatus st = parseFormatSpec(fmt, pos, spec);
  return st == SpecStatus::kOk ? checkFormatSpec(spec) : st;
}

std::string parseError(std::string_view fmt) {
  FormatSpec spec;
  SpecStatus st = parse(fmt, spec);
  return st == SpecStatus::kOk ? "ok" : specErrorMessage(st, spec);
}

std::string fmtInt(std::string_view fmt, int64_t v) {
  FormatSpec spec;
  EXPECT_EQ(parse(fmt, spec), SpecStatus::kOk) << fmt;
  std::string out;
  formatIntegerItem(out, spec, v);
  return out;
}

std::string fmtFloat(std::string_view fmt, double v) {
  FormatSpec spec;
  EXPECT_EQ(parse(fmt, spec), SpecStatus::kOk) << fmt;
  std::string out;
  formatFloatItem(out, spec, v);
  return out;
}

std::string fmtString(std::string_view fmt, std::string_view s) {
  FormatSpec spec;
  EXPECT_EQ(parse(fmt, spec), SpecStatus::kOk) << fmt;
  std::string out;
  formatStringItem(out, spec, s);
  return out;
}

TEST(LibFormat, SpecValidation) {
  EXPECT_EQ(parseError("y"), "invalid conversion '%y' to 'format'");
  EXPECT_EQ(parseError("5"), "invalid conversion '%5' to 'format'");
  EXPECT_EQ(parseError(""), "invalid conversion '%' to 'format'");
  EXPECT_EQ(parseError("F"), "invalid conversion '%F' to 'format'");  // the manual excludes F
  EXPECT_EQ(parseError("lld"), "invalid conversion '%l' to 'format'");
  EXPECT_EQ(parseError("10.3q"), "specifier '%q' cannot have modifiers");
  EXPECT_EQ(parseError("123d"), "invalid conversion specification: '%123d'");
  EXPECT_EQ(parseError("#d"), "invalid conversion specification: '%#d'");
  EXPECT_EQ(parseError(".123f"), "invalid conversion specification: '%.123f'");
  EXPECT_EQ(parseError("+.3s"), "invalid conversion specification: '%+.3s'");
  EXPECT_EQ(parseError("05s"), "invalid conversion specification: '%05s'");
  EXPECT_EQ(parseError(".3c"), "invalid conversion specification: '%.3c'");
  EXPECT_EQ(parseError("+5.2x"), "invalid conversion specification: '%+5.2x'");
  EXPECT_EQ(parseError("5.2.3s"), "invalid conversion specification: '%5.2.3s'");
  EXPECT_EQ(parseError("-+ #0-+ #0-+ #0-+ #0-+ #0d"), "invalid format (too long)");
  EXPECT_EQ(parseError("-+ #0-+ #0-+ #0-+ #d"), "invalid conversion specification: '%-+ #0-+ #0-+ #0-+ #d'");
  EXPECT_EQ(parseError("--5d"), "ok");
  EXPECT_EQ(parseError("0-5d"), "ok");
  EXPECT_EQ(parseError("5.d"), "ok");
  EXPECT_EQ(parseError("#.3a"), "ok");
  EXPECT_EQ(parseError("099d"), "ok");
  EXPECT_EQ(parseError("-10p"), "ok");
}

TEST(LibFormat, Integers) {
  EXPECT_EQ(fmtInt("d", -42), "-42");
  EXPECT_EQ(fmtInt("5d", 42), "   42");
  EXPECT_EQ(fmtInt("-5d", 42), "42   ");
  EXPECT_EQ(fmtInt("05d", 42), "00042");
  EXPECT_EQ(fmtInt(".5d", 5), "00005");
  EXPECT_EQ(fmtInt("x", -1), "ffffffffffffffff");
  EXPECT_EQ(fmtInt("X", 255), "FF");
  EXPECT_EQ(fmtInt("#x", 5), "0x5");
  EXPECT_EQ(fmtInt("o", 8), "10");
  EXPECT_EQ(fmtInt("u", -1), "18446744073709551615");
  EXPECT_EQ(fmtInt("d", INT64_MIN), "-9223372036854775808");
  EXPECT_EQ(fmtInt("099d", 5).size(), 99u);
}

TEST(LibFormat, Floats) {
  EXPECT_EQ(fmtFloat(".3f", 1.0 / 3), "0.333");
  EXPECT_EQ(fmtFloat("e", 12345.678), "1.234568e+04");
  EXPECT_EQ(fmtFloat("g", 1e20), "1e+20");
  EXPECT_EQ(fmtFloat("G", 1e-20), "1E-20");
  EXPECT_EQ(fmtFloat("5.1f", -0.0), " -0.0");
  EXPECT_EQ(fmtFloat("a", 1.0), "0x1p+0");
  EXPECT_EQ(fmtFloat("A", 0.5), "0X1P-1");
  EXPECT_EQ(fmtFloat(".3a", 1.0 / 3), "0x1.555p-2");
  EXPECT_EQ(fmtFloat("099.99f", 1e308).size(), 409u);  // the largest item fits
}

TEST(LibFormat, StringsAndChars) {
  EXPECT_EQ(fmtString("5.2s", "abc"), "   ab");
  EXPECT_EQ(fmtString("-5s", "ab"), "ab   ");
  EXPECT_EQ(fmtString("10.4s", "abcdefgh"), "      abcd");
  EXPECT_EQ(fmtString(".s", "abc"), "");
  FormatSpec spec;
  ASSERT_EQ(parse("-5c", spec), SpecStatus::kOk);
  std::string out;
  formatCharItem(out, spec, 'A');
  EXPECT_EQ(out, "A    ");
  out.clear();
  ASSERT_EQ(parse("c", spec), SpecStatus::kOk);
  formatCharItem(out, spec, 0);
  EXPECT_EQ(out, std::string(1, '\0'));
}

TEST(LibFormat, QuotedLiterals) {
  std::string out;
  quoteString(out, std::string("a\0b\0" "1\r\n\"\\\x7f\x80x\x01", 13));
  EXPECT_EQ(out, std::string("\"a\\0b\\0001\\13\\\n\\\"\\\\\\127\x80x\\1\""));
  out.clear();
  quoteInteger(out, INT64_MIN);
  EXPECT_EQ(out, "0x8000000000000000");
  out.clear();
  quoteInteger(out, -5);
  EXPECT_EQ(out, "-5");
  out.clear();
  quoteFloat(out, 1.0);
  EXPECT_EQ(out, "0x1p+0");
  out.clear();
  quoteFloat(out, HUGE_VAL);
  quoteFloat(out, -HUGE_VAL);
  quoteFloat(out, std::nan(""));
  EXPECT_EQ(out, "1e9999-1e9999(0/0)");
  out.clear();
  quoteFloat(out, 0.1);
  EXPECT_EQ(out, "0x1.999999999999ap-4");
}

}  // namespace
}  // namespace weft::vm
