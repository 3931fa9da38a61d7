// Syntax and semantic errors: each source must fail with exactly the message lua5.4
// (5.4.4) gives for it, "input:LINE: MESSAGE near TOKEN". The expected strings were
// taken from the oracle with load(src, "=input").
#include <gtest/gtest.h>

#include <string>

#include "frontend/compiler.h"

namespace weft::frontend {
namespace {

struct ErrorCase {
  const char* source;
  const char* message;
};

const ErrorCase kCases[] = {
    {"x = 3x",
     "input:1: malformed number near '3x'"},
    {"x = \"abc",
     "input:1: unfinished string near <eof>"},
    {"x = \"abc\ndef\"",
     "input:1: unfinished string near '\"abc'"},
    {"x = \"a\\qb\"",
     "input:1: invalid escape sequence near '\"a\\q'"},
    {"x = \"\\300\"",
     "input:1: decimal escape too large near '\"\\300\"'"},
    {"x = \"\\u{80000000}\"",
     "input:1: UTF-8 value too large near '\"\\u{80000000'"},
    {"x = \"\\xZZ\"",
     "input:1: hexadecimal digit expected near '\"\\xZ'"},
    {"x = \"\\u{12\"",
     "input:1: missing '}' near '\"\\u{12\"'"},
    {"x = \"\\u12\"",
     "input:1: missing '{' near '\"\\u1'"},
    {"--[[ unfinished",
     "input:1: unfinished long comment (starting at line 1) near <eof>"},
    {"x = [[ unfinished",
     "input:1: unfinished long string (starting at line 1) near <eof>"},
    {"x = [==[ abc ]=]",
     "input:1: unfinished long string (starting at line 1) near <eof>"},
    {"x = [= abc",
     "input:1: invalid long string delimiter near '[='"},
    {"function f() return 1",
     "input:1: 'end' expected near <eof>"},
    {"local function f()\n\nreturn 1",
     "input:3: 'end' expected (to close 'function' at line 1) near <eof>"},
    {"if x then",
     "input:1: 'end' expected near <eof>"},
    {"if x then\nelse\n",
     "input:3: 'end' expected (to close 'if' at line 1) near <eof>"},
    {"x = = 1",
     "input:1: unexpected symbol near '='"},
    {"local x x",
     "input:1: syntax error near <eof>"},
    {"x = 1 +",
     "input:1: unexpected symbol near <eof>"},
    {"+ 1",
     "input:1: unexpected symbol near '+'"},
    {"f(",
     "input:1: unexpected symbol near <eof>"},
    {"f(1,",
     "input:1: unexpected symbol near <eof>"},
    {"local t = {1, 2",
     "input:1: '}' expected near <eof>"},
    {"local t = {\n1,\n2",
     "input:3: '}' expected (to close '{' at line 1) near <eof>"},
    {"for i = 1 do end",
     "input:1: ',' expected near 'do'"},
    {"for i do end",
     "input:1: '=' or 'in' expected near 'do'"},
    {"for i, j = 1, 2 do end",
     "input:1: 'in' expected near '='"},
    {"while true do",
     "input:1: 'end' expected near <eof>"},
    {"repeat x = 1",
     "input:1: 'until' expected near <eof>"},
    {"goto x",
     "input:1: no visible label 'x' for <goto> at line 1"},
    {"do goto x; local y = 1; ::x:: print(y) end",
     "input:1: <goto x> at line 1 jumps into the scope of local 'y'"},
    {"::a:: ::a::",
     "input:1: label 'a' already defined on line 1"},
    {"::a::\n::b::\n::a::",
     "input:3: label 'a' already defined on line 3"},
    {"break",
     "input:1: break outside loop at line 1"},
    {"if x then break end",
     "input:1: break outside loop at line 1"},
    {"function f() break end",
     "input:1: break outside loop at line 1"},
    {"local x <const> = 1; x = 2",
     "input:1: attempt to assign to const variable 'x'"},
    {"local x <foo> = 1",
     "input:1: unknown attribute 'foo'"},
    {"local a <close>, b <close> = 1, 2",
     "input:1: multiple to-be-closed variables in local list"},
    {"local x <const> = 1; function f() x = 2 end",
     "input:1: attempt to assign to const variable 'x'"},
    {"function f() return ... end",
     "input:1: cannot use '...' outside a vararg function near '...'"},
    {"local function f() local x = ... end",
     "input:1: cannot use '...' outside a vararg function near '...'"},
    {"x = }",
     "input:1: unexpected symbol near '}'"},
    {"x = 1 2",
     "input:1: unexpected symbol near '2'"},
    {"return return",
     "input:1: unexpected symbol near 'return'"},
    {"return 1 x = 2",
     "input:1: <eof> expected near 'x'"},
    {"f() = 1",
     "input:1: syntax error near '='"},
    {"a.b:c = 1",
     "input:1: function arguments expected near '='"},
    {"(a) = 1",
     "input:1: syntax error near '='"},
    {"a, b() = 1, 2",
     "input:1: syntax error near '='"},
    {"local 1 = 2",
     "input:1: <name> expected near '1'"},
    {"local function 1() end",
     "input:1: <name> expected near '1'"},
    {"function f(1) end",
     "input:1: <name> or '...' expected near '1'"},
    {"function f(a,) end",
     "input:1: <name> or '...' expected near ')'"},
    {"function f(..., a) end",
     "input:1: ')' expected near ','"},
    {"x = 0x",
     "input:1: malformed number near '0x'"},
    {"x = 1e",
     "input:1: malformed number near '1e'"},
    {"x = 1.2.3",
     "input:1: malformed number near '1.2.3'"},
    {"x = 08x",
     "input:1: malformed number near '08x'"},
    {"x = 0xg",
     "input:1: malformed number near '0xg'"},
    {"x = .e1",
     "input:1: unexpected symbol near '.'"},
    {"x = 'abc\\",
     "input:1: unfinished string near <eof>"},
    {"x = '\\z",
     "input:1: unfinished string near <eof>"},
    {"x = #",
     "input:1: unexpected symbol near <eof>"},
    {"local t = {a = }",
     "input:1: unexpected symbol near '}'"},
    {"local t = {[1] 2}",
     "input:1: '=' expected near '2'"},
    {"t.1 = 2",
     "input:1: syntax error near '.1'"},
    {"t:1()",
     "input:1: <name> expected near '1'"},
    {"a = b c = d e",
     "input:1: syntax error near <eof>"},
    {"x = function",
     "input:1: '(' expected near <eof>"},
    {"local",
     "input:1: <name> expected near <eof>"},
    {"local function",
     "input:1: <name> expected near <eof>"},
    {"for",
     "input:1: <name> expected near <eof>"},
    {"if",
     "input:1: unexpected symbol near <eof>"},
    {"elseif x then end",
     "input:1: <eof> expected near 'elseif'"},
    {"end",
     "input:1: <eof> expected near 'end'"},
    {"until x",
     "input:1: <eof> expected near 'until'"},
    {"x = 1 until",
     "input:1: <eof> expected near 'until'"},
    {"a.b.c",
     "input:1: syntax error near <eof>"},
    {"a[1]",
     "input:1: syntax error near <eof>"},
    {"x = (1",
     "input:1: ')' expected near <eof>"},
    {"x = {(1}",
     "input:1: ')' expected near '}'"},
    {"return f(",
     "input:1: unexpected symbol near <eof>"},
    {"x = @",
     "input:1: unexpected symbol near '@'"},
    {"x = $y",
     "input:1: unexpected symbol near '$'"},
    {"x = 'a' .. ",
     "input:1: unexpected symbol near <eof>"},
    {"x = \x01""",
     "input:1: unexpected symbol near '<\\1>'"},
    {"x = \x80""",
     "input:1: unexpected symbol near '<\\128>'"},
    {"local x = 1 local x <const> = 2 x = 3",
     "input:1: attempt to assign to const variable 'x'"},
    {"goto l; do end local a ::l:: print(a)",
     "input:1: <goto l> at line 1 jumps into the scope of local 'a'"},
    {"x = 'ok' y",
     "input:1: syntax error near <eof>"},
    {"a.b.c = ",
     "input:1: unexpected symbol near <eof>"},
    {"return function(...) return function() return ... end end",
     "input:1: cannot use '...' outside a vararg function near '...'"},
    {"x = not",
     "input:1: unexpected symbol near <eof>"},
    {"x = - - ",
     "input:1: unexpected symbol near <eof>"},
    {"x = 2^",
     "input:1: unexpected symbol near <eof>"},
    {"a =",
     "input:1: unexpected symbol near <eof>"},
    {"a, = 1",
     "input:1: unexpected symbol near '='"},
    {"a, b",
     "input:1: '=' expected near <eof>"},
    {"x ==1",
     "input:1: syntax error near '=='"},
    {"x = 1 == == 2",
     "input:1: unexpected symbol near '=='"},
    {"local x = [[\n\n",
     "input:3: unfinished long string (starting at line 1) near <eof>"},
    {"--[==[\n\n]]",
     "input:3: unfinished long comment (starting at line 1) near <eof>"},
    {"x = \"\\u{110000000}\"",
     "input:1: UTF-8 value too large near '\"\\u{110000000'"},
    {"x = \"\\256\"",
     "input:1: decimal escape too large near '\"\\256\"'"},
    {"x = 9223372036854775808 1",
     "input:1: unexpected symbol near '1'"},
    {"x = 0x1p4 1",
     "input:1: unexpected symbol near '1'"},
    {"x = 1e400 1",
     "input:1: unexpected symbol near '1'"},
};

TEST(SyntaxErrors, MatchLuaMessagesExactly) {
  int checked = 0;
  for (const ErrorCase& c : kCases) {
    auto result = compile(c.source, "=input");
    ASSERT_FALSE(result.hasValue()) << "compiled: " << c.source;
    EXPECT_EQ(result.error().code, StatusCode::kSyntaxError);
    EXPECT_EQ(result.error().message, c.message) << "source: " << c.source;
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

TEST(SyntaxErrors, ChunkNamesInMessages) {
  auto r1 = compile("x = = 1", "@dir/script.lua");
  ASSERT_FALSE(r1.hasValue());
  EXPECT_EQ(r1.error().message, "dir/script.lua:1: unexpected symbol near '='");
  auto r2 = compile("x = = 1", "x = = 1");
  ASSERT_FALSE(r2.hasValue());
  EXPECT_EQ(r2.error().message, "[string \"x = = 1\"]:1: unexpected symbol near '='");
}

TEST(SyntaxErrors, LimitsUseLuaWording) {
  std::string locals = "local a0";
  for (int i = 1; i <= 200; ++i) locals += ", a" + std::to_string(i);
  auto r = compile(locals, "=input");
  ASSERT_FALSE(r.hasValue());
  EXPECT_EQ(r.error().message, "input:1: too many local variables (limit is 200) in main function near <eof>");

  std::string inFunction = "function f()\n" + locals + "\nend";
  r = compile(inFunction, "=input");
  ASSERT_FALSE(r.hasValue());
  EXPECT_EQ(r.error().message, "input:3: too many local variables (limit is 200) in function at line 1 near 'end'");

  std::string args = "x = f(1";
  for (int i = 0; i < 300; ++i) args += ",1";
  r = compile(args + ")", "=input");
  ASSERT_FALSE(r.hasValue());
  EXPECT_EQ(r.error().message, "input:1: function or expression needs too many registers near '1'");

  std::string ups = "local function outer()\n";
  for (int i = 0; i < 130; ++i) ups += "local u" + std::to_string(i) + " = 1\n";
  ups += "return function()\n";
  for (int i = 0; i < 130; ++i) ups += "local w" + std::to_string(i) + " = 1\n";
  ups += "return function() return u0";
  for (int i = 1; i < 130; ++i) ups += "+u" + std::to_string(i);
  for (int i = 0; i < 130; ++i) ups += "+w" + std::to_string(i);
  ups += " end end end";
  r = compile(ups, "=input");
  ASSERT_FALSE(r.hasValue());
  EXPECT_NE(r.error().message.find("too many upvalues (limit is 255) in function at line 263"), std::string::npos)
      << r.error().message;
}

TEST(SyntaxErrors, ShortSourceNames) {
  EXPECT_EQ(shortSourceName("=stdin"), "stdin");
  EXPECT_EQ(shortSourceName("@file.lua"), "file.lua");
  EXPECT_EQ(shortSourceName("print(1)"), "[string \"print(1)\"]");
  EXPECT_EQ(shortSourceName("line1\nline2"), "[string \"line1...\"]");
  std::string longFile = "@" + std::string(100, 'a') + ".lua";
  std::string s = shortSourceName(longFile);
  EXPECT_EQ(s.size(), kIdSize - 1);
  EXPECT_EQ(s.substr(0, 3), "...");
  EXPECT_EQ(s.substr(s.size() - 4), ".lua");
  std::string longStr(100, 'x');
  EXPECT_EQ(shortSourceName(longStr), "[string \"" + std::string(45, 'x') + "...\"]");
  EXPECT_EQ(shortSourceName("=" + std::string(100, 'y')), std::string(59, 'y'));
}

}  // namespace
}  // namespace weft::frontend
