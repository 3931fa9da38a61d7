// The scanner and the shared numeral parser: tokens, escapes, numerals and their
// conversion rules (overflow to float, hex wrap-around), and lexical error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "frontend/compiler.h"
#include "frontend/lexer.h"
#include "frontend/numparse.h"

namespace weft::frontend {
namespace {

std::vector<int> tokens(std::string_view src) {
  Lexer lex(src, "input");
  std::vector<int> out;
  for (lex.next(); lex.token() != kTkEos; lex.next()) out.push_back(lex.token());
  return out;
}

std::string stringToken(std::string_view src) {
  Lexer lex(src, "input");
  lex.next();
  EXPECT_EQ(lex.token(), kTkString);
  return std::string(lex.current().text);
}

std::string lexError(std::string_view src) {
  try {
    Lexer lex(src, "input");
    for (lex.next(); lex.token() != kTkEos; lex.next()) {
    }
  } catch (const SyntaxError& e) {
    return e.message;
  }
  return "no error";
}

TEST(Lexer, AllOperatorsAndReservedWords) {
  std::vector<int> expected = {kTkAnd, kTkBreak, kTkDo, kTkElse, kTkElseif, kTkEnd, kTkFalse, kTkFor,
                               kTkFunction, kTkGoto, kTkIf, kTkIn, kTkLocal, kTkNil, kTkNot, kTkOr,
                               kTkRepeat, kTkReturn, kTkThen, kTkTrue, kTkUntil, kTkWhile};
  EXPECT_EQ(tokens("and break do else elseif end false for function goto if in local nil not or "
                   "repeat return then true until while"),
            expected);
  std::vector<int> ops = {'+', '-', '*', '/', kTkIDiv, '%', '^', '#', '&', '~', '|', kTkShl, kTkShr,
                          kTkEq, kTkNe, kTkLe, kTkGe, '<', '>', '=', '(', ')', '{', '}', '[', ']',
                          kTkDbColon, ';', ':', ',', '.', kTkConcat, kTkDots};
  EXPECT_EQ(tokens("+ - * / // % ^ # & ~ | << >> == ~= <= >= < > = ( ) { } [ ] :: ; : , . .. ..."), ops);
  EXPECT_EQ(tokens("a--comment\nb--[[long\ncomment]]c--[==[x]]]==]d"),
            (std::vector<int>{kTkName, kTkName, kTkName, kTkName}));
}

TEST(Lexer, EscapeSequences) {
  EXPECT_EQ(stringToken(R"("\a\b\f\n\r\t\v\\\"\'")"), "\a\b\f\n\r\t\v\\\"'");
  EXPECT_EQ(stringToken("'a\\\nb'"), "a\nb");
  EXPECT_EQ(stringToken("'a\\z  \n\t  b'"), "ab");
  EXPECT_EQ(stringToken(R"("\x41\x6a\65\066\0x")"), std::string("Aj AB\0x", 7).replace(2, 1, ""));
  EXPECT_EQ(stringToken(R"("\u{48}\u{e9}\u{20AC}\u{10FFFF}")"), "H\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf");
  EXPECT_EQ(stringToken(R"("\u{7FFFFFFF}")"), "\xfd\xbf\xbf\xbf\xbf\xbf");
  EXPECT_EQ(stringToken(R"("\255\0")"), std::string("\xff\0", 2));
  EXPECT_EQ(stringToken("[[\nfirst newline skipped]]"), "first newline skipped");
  EXPECT_EQ(stringToken("[==[a]]b]=]c]==]"), "a]]b]=]c");
  EXPECT_EQ(stringToken("[[a\r\nb\n\rc]]"), "a\nb\nc");
}

TEST(Lexer, ErrorMessages) {
  EXPECT_EQ(lexError("x = 3x"), "input:1: malformed number near '3x'");
  EXPECT_EQ(lexError("x = 0x"), "input:1: malformed number near '0x'");
  EXPECT_EQ(lexError("x = 1.2.3"), "input:1: malformed number near '1.2.3'");
  EXPECT_EQ(lexError("x = \"abc"), "input:1: unfinished string near <eof>");
  EXPECT_EQ(lexError("x = \"abc\n\""), "input:1: unfinished string near '\"abc'");
  EXPECT_EQ(lexError(R"(x = "\q")"), "input:1: invalid escape sequence near '\"\\q'");
  EXPECT_EQ(lexError(R"(x = "\300")"), "input:1: decimal escape too large near '\"\\300\"'");
  EXPECT_EQ(lexError(R"(x = "\u{80000000}")"), "input:1: UTF-8 value too large near '\"\\u{80000000'");
  EXPECT_EQ(lexError(R"(x = "\xg")"), "input:1: hexadecimal digit expected near '\"\\xg'");
  EXPECT_EQ(lexError(R"(x = "\u{12")"), "input:1: missing '}' near '\"\\u{12\"'");
  EXPECT_EQ(lexError(R"(x = "\u12")"), "input:1: missing '{' near '\"\\u1'");
  EXPECT_EQ(lexError("--[[ x\n\n"), "input:3: unfinished long comment (starting at line 1) near <eof>");
  EXPECT_EQ(lexError("x = [==[ x\n"), "input:2: unfinished long string (starting at line 1) near <eof>");
  EXPECT_EQ(lexError("x = [= x"), "input:1: invalid long string delimiter near '[='");
}

TEST(Lexer, LineCounting) {
  Lexer lex("a\nb\r\nc\n\rd\re", "input");
  std::vector<int> lines;
  for (lex.next(); lex.token() != kTkEos; lex.next()) lines.push_back(lex.line());
  EXPECT_EQ(lines, (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST(Lexer, NumeralTokens) {
  Lexer lex("3 3.0 0x10 0xA.8p1 1e2 .5 9223372036854775807 9223372036854775808 0xffffffffffffffffff", "input");
  lex.next();
  EXPECT_EQ(lex.token(), kTkInt);
  EXPECT_EQ(lex.current().integer, 3);
  lex.next();
  EXPECT_EQ(lex.token(), kTkFloat);
  EXPECT_EQ(lex.current().number, 3.0);
  lex.next();
  EXPECT_EQ(lex.current().integer, 16);
  lex.next();
  EXPECT_EQ(lex.current().number, 21.0);
  lex.next();
  EXPECT_EQ(lex.current().number, 100.0);
  lex.next();
  EXPECT_EQ(lex.current().number, 0.5);
  lex.next();
  EXPECT_EQ(lex.token(), kTkInt);
  EXPECT_EQ(lex.current().integer, INT64_MAX);
  lex.next();
  EXPECT_EQ(lex.token(), kTkFloat);
  EXPECT_EQ(lex.current().number, 9223372036854775808.0);
  lex.next();
  EXPECT_EQ(lex.token(), kTkInt);
  EXPECT_EQ(lex.current().integer, -1);
}

TEST(NumParse, IntegersAndWrapAround) {
  auto n = parseNumber("  42  ");
  ASSERT_TRUE(n.isInteger());
  EXPECT_EQ(n.integer, 42);
  EXPECT_EQ(parseNumber("-7").integer, -7);
  EXPECT_EQ(parseNumber("+7").integer, 7);
  EXPECT_EQ(parseNumber("0x10").integer, 16);
  EXPECT_EQ(parseNumber("-0x10").integer, -16);
  EXPECT_EQ(parseNumber("0xffffffffffffffff").integer, -1);
  EXPECT_EQ(parseNumber("0x1ffffffffffffffff").integer, -1);
  EXPECT_EQ(parseNumber("-9223372036854775808").integer, INT64_MIN);
  auto big = parseNumber("9223372036854775808");
  ASSERT_TRUE(big.isFloat());
  EXPECT_EQ(big.number, 9223372036854775808.0);
  EXPECT_TRUE(parseNumber("-9223372036854775809").isFloat());
}

TEST(NumParse, Floats) {
  EXPECT_EQ(parseNumber("1.5").number, 1.5);
  EXPECT_EQ(parseNumber(" .5 ").number, 0.5);
  EXPECT_EQ(parseNumber("5.").number, 5.0);
  EXPECT_EQ(parseNumber("1e3").number, 1000.0);
  EXPECT_EQ(parseNumber("1E-2").number, 0.01);
  EXPECT_EQ(parseNumber("0x1p4").number, 16.0);
  EXPECT_EQ(parseNumber("0x.8").number, 0.5);
  EXPECT_EQ(parseNumber("-0x1P-1").number, -0.5);
  EXPECT_TRUE(std::isinf(parseNumber("1e400").number));
  EXPECT_TRUE(parseNumber("1.0").isFloat());
}

TEST(NumParse, Rejections) {
  for (const char* s : {"", " ", "inf", "nan", "-inf", "infinity", "0x", "1e", "1.2.3", "abc", "1 2", "0x1g",
                        "--1", "1e+", ". 5", "0x.p1"}) {
    EXPECT_TRUE(parseNumber(s).isNone()) << s;
  }
  EXPECT_TRUE(parseNumber(std::string("1\0", 2)).isNone());
}

TEST(NumParse, IntegerInBase) {
  int64_t v = 0;
  EXPECT_TRUE(parseIntegerInBase("ff", 16, v));
  EXPECT_EQ(v, 255);
  EXPECT_TRUE(parseIntegerInBase("  -101  ", 2, v));
  EXPECT_EQ(v, -5);
  EXPECT_TRUE(parseIntegerInBase("zZ", 36, v));
  EXPECT_EQ(v, 35 * 36 + 35);
  EXPECT_TRUE(parseIntegerInBase("7fffffffffffffff", 16, v));
  EXPECT_EQ(v, INT64_MAX);
  EXPECT_TRUE(parseIntegerInBase("10000000000000000", 16, v));  // wraps
  EXPECT_EQ(v, 0);
  EXPECT_FALSE(parseIntegerInBase("8", 8, v));
  EXPECT_FALSE(parseIntegerInBase("", 10, v));
  EXPECT_FALSE(parseIntegerInBase("-", 10, v));
  EXPECT_FALSE(parseIntegerInBase("1.0", 10, v));
  EXPECT_FALSE(parseIntegerInBase("1 1", 10, v));
}

}  // namespace
}  // namespace weft::frontend
