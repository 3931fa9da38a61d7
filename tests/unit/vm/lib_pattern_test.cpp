// The standalone Lua pattern matcher (vm/lib/lpattern.h): matches, captures, anchors,
// and every malformed-pattern error, with Lua 5.4's messages (checked against lua5.4).
#include <gtest/gtest.h>

#include <cctype>
#include <clocale>
#include <cstring>
#include <string>

#include "vm/lib/lpattern.h"

namespace weft::vm {
namespace {

struct Found {
  bool ok = false;
  size_t start = 0, end = 0;
  std::string error;
};

// string.find without the plain shortcut: first match at or after `init` (0-based).
Found find(std::string_view s, std::string_view p, size_t init = 0) {
  PatternMatcher m(s, p);
  Found f;
  size_t pos = init;
  do {
    size_t end;
    if (m.matchAt(pos, end)) {
      f.ok = true;
      f.start = pos;
      f.end = end;
      return f;
    }
    if (m.error()) {
      f.error = m.errorMessage();
      return f;
    }
  } while (pos++ < s.size() && !m.anchored());
  return f;
}

std::string capture(std::string_view s, std::string_view p, int i) {
  PatternMatcher m(s, p);
  for (size_t pos = 0; pos <= s.size(); pos++) {
    size_t end;
    if (m.matchAt(pos, end)) {
      PatternCapture c = m.capture(i);
      if (c.kind == PatternCapture::Kind::Position) return "@" + std::to_string(c.start + 1);
      return std::string(s.substr(c.start, c.length));
    }
  }
  return "<none>";
}

TEST(LibPattern, LiteralsAndClasses) {
  EXPECT_TRUE(find("hello world", "o w").ok);
  EXPECT_EQ(find("hello world", "o w").start, 4u);
  EXPECT_EQ(find("abc123", "%d+").start, 3u);
  EXPECT_EQ(find("abc123", "%d+").end, 6u);
  EXPECT_FALSE(find("abc", "%d").ok);
  EXPECT_TRUE(find("  x", "%S").ok);
  EXPECT_EQ(find("  x", "%S").start, 2u);
  EXPECT_EQ(find("a.b", "%.").start, 1u);
  EXPECT_EQ(find("xAy", "%u").start, 1u);
  EXPECT_EQ(find("ab_9", "[%w_]+").end, 4u);
  EXPECT_EQ(find("hello", "[^hel]").start, 4u);
  EXPECT_EQ(find("a]b", "[]]").start, 1u);
  EXPECT_EQ(find("a-b", "[a%-]+").end, 2u);
  EXPECT_EQ(find("xyz", "[x-z]+").end, 3u);
}

TEST(LibPattern, EmbeddedZerosAreOrdinaryBytes) {
  std::string s("a\0b", 3);
  EXPECT_EQ(find(s, std::string("\0", 1)).start, 1u);
  EXPECT_EQ(find(s, "%z").start, 1u);  // the deprecated %z class still matches NUL
  EXPECT_EQ(find(s, ".b").start, 1u);
}

TEST(LibPattern, Repetitions) {
  EXPECT_EQ(find("aaab", "a*").end, 3u);
  EXPECT_EQ(find("aaab", "a-b").end, 4u);
  EXPECT_EQ(find("aaab", "a-").end, 0u);
  EXPECT_EQ(find("b", "a?b").end, 1u);
  EXPECT_EQ(find("ab", "a?b").end, 2u);
  EXPECT_FALSE(find("b", "a+").ok);
  EXPECT_EQ(capture("key = value", "(%w+)%s*=%s*(%w+)", 1), "value");
}

TEST(LibPattern, AnchorsAndEnd) {
  EXPECT_FALSE(find("xab", "^ab").ok);
  EXPECT_TRUE(find("abx", "^ab").ok);
  EXPECT_TRUE(find("xab", "ab$").ok);
  EXPECT_FALSE(find("abx", "ab$").ok);
  EXPECT_TRUE(find("a$b", "a$b").ok);  // '$' not at the end is literal
  PatternMatcher g("^a", "^a", false);  // gmatch: '^' is an ordinary character
  size_t end;
  EXPECT_TRUE(g.matchAt(0, end));
}

TEST(LibPattern, CapturesPositionsBackrefsBalanceFrontier) {
  EXPECT_EQ(capture("hello", "()ll()", 0), "@3");
  EXPECT_EQ(capture("hello", "()ll()", 1), "@5");
  EXPECT_EQ(capture("say 'hi' there", "(['\"])(.-)%1", 1), "hi");
  EXPECT_EQ(find("x(a(b)c)y", "%b()").start, 1u);
  EXPECT_EQ(find("x(a(b)c)y", "%b()").end, 8u);
  EXPECT_EQ(find("THE (quick) fox", "%f[%a]%a+").start, 0u);
  EXPECT_EQ(find("THE (quick) fox", "%f[%l]%a+").start, 5u);
  EXPECT_EQ(find("abc", "%f[%z]").start, 3u);  // the end of the subject reads as NUL
}

TEST(LibPattern, Errors) {
  EXPECT_EQ(find("abc", "%").error, "malformed pattern (ends with '%')");
  EXPECT_EQ(find("abc", "[a").error, "malformed pattern (missing ']')");
  EXPECT_EQ(find("abc", "[]").error, "malformed pattern (missing ']')");
  EXPECT_EQ(find("abc", "[^]").error, "malformed pattern (missing ']')");
  EXPECT_EQ(find("abc", "%f").error, "missing '[' after '%f' in pattern");
  EXPECT_EQ(find("abc", "%fa").error, "missing '[' after '%f' in pattern");
  EXPECT_EQ(find("abc", "%1").error, "invalid capture index %1");
  EXPECT_EQ(find("abc", "(a)%2").error, "invalid capture index %2");
  EXPECT_EQ(find("abc", "(a%1)").error, "invalid capture index %1");
  EXPECT_EQ(find("abc", "%g)").error, "invalid pattern capture");
  EXPECT_EQ(find("abc", "%b").error, "malformed pattern (missing arguments to '%b')");
  EXPECT_EQ(find("abc", std::string(33, '(')).error, "too many captures");
}

TEST(LibPattern, UnfinishedCaptureIsReportedByTheCaller) {
  PatternMatcher m("abc", "(a");
  size_t end;
  ASSERT_TRUE(m.matchAt(0, end));
  EXPECT_EQ(m.capture(0).kind, PatternCapture::Kind::Unfinished);
}

// The depth limit matches lua5.4: 199 optional items still match, 300 are too complex,
// and neither touches the C++ stack limit.
TEST(LibPattern, DepthLimit) {
  std::string pat199, pat300;
  for (int i = 0; i < 199; i++) pat199 += "a?";
  for (int i = 0; i < 300; i++) pat300 += "a?";
  EXPECT_TRUE(find(std::string(199, 'a'), pat199).ok);
  EXPECT_EQ(find(std::string(300, 'a'), pat300).error, "pattern too complex");
  std::string deep(5000, 'a');
  EXPECT_EQ(find(deep, "a*b").ok, false);  // repetition loops, it does not recurse
}

// The precomputed class tables agree with <cctype> in the C locale for every byte and
// every class letter, complements included; any other letter matches only itself.
TEST(LibPattern, ClassTablesEqualTheCLocale) {
  ASSERT_NE(std::setlocale(LC_CTYPE, "C"), nullptr);
  using Pred = int (*)(int);
  const std::pair<char, Pred> classes[] = {
      {'a', [](int c) { return std::isalpha(c); }},  {'c', [](int c) { return std::iscntrl(c); }},
      {'d', [](int c) { return std::isdigit(c); }},  {'g', [](int c) { return std::isgraph(c); }},
      {'l', [](int c) { return std::islower(c); }},  {'p', [](int c) { return std::ispunct(c); }},
      {'s', [](int c) { return std::isspace(c); }},  {'u', [](int c) { return std::isupper(c); }},
      {'w', [](int c) { return std::isalnum(c); }},  {'x', [](int c) { return std::isxdigit(c); }},
      {'z', [](int c) { return c == 0 ? 1 : 0; }},
  };
  for (int c = 0; c < 256; c++) {
    for (auto [letter, pred] : classes) {
      bool expected = pred(c) != 0;
      auto uc = static_cast<unsigned char>(c);
      EXPECT_EQ(patternClassMatches(uc, static_cast<unsigned char>(letter)), expected) << c << " %" << letter;
      EXPECT_EQ(patternClassMatches(uc, static_cast<unsigned char>(std::toupper(letter))), !expected)
          << c << " %" << char(std::toupper(letter));
    }
    for (int cl = 0; cl < 256; cl++) {
      if (std::isalpha(cl) && std::strchr("acdglpsuwxz", std::tolower(cl))) continue;
      EXPECT_EQ(patternClassMatches(static_cast<unsigned char>(c), static_cast<unsigned char>(cl)), c == cl);
    }
  }
}

TEST(LibPattern, PlainDetection) {
  EXPECT_TRUE(patternIsPlain("a)b"));
  EXPECT_TRUE(patternIsPlain("hello world"));
  EXPECT_FALSE(patternIsPlain("a.b"));
  EXPECT_FALSE(patternIsPlain("%d"));
  EXPECT_FALSE(patternIsPlain("a-"));
  EXPECT_EQ(findPlain("a.b.c", ".", 2), 3u);
  EXPECT_EQ(findPlain("abc", "", 3), 3u);
  EXPECT_EQ(findPlain("abc", "x", 0), std::string_view::npos);
  EXPECT_EQ(findPlain("abc", "c", 4), std::string_view::npos);
}

}  // namespace
}  // namespace weft::vm
