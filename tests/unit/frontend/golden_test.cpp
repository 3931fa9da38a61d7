// Bytecode golden tests. Each tests/golden/frontend/NAME.lua is compiled as "@NAME.lua"
// and its full listing compared with NAME.expected; WEFT_UPDATE_GOLDEN=1 rewrites the
// expected files from our compiler. So that a rewrite cannot bless a wrong listing, the
// luac tests hold every expected file, and the listing of a corpus of small chunks, to
// `luac5.4 -l -l`: instructions, line numbers, constants, locals and upvalues. luac5.4
// (Debian's lua5.4, which tools/setup.sh installs) is their oracle, so they fail when it
// is missing, unless WEFT_SKIP_LUAC=1 asks to skip them on a machine without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "frontend/compiler.h"
#include "frontend/listing.h"

namespace weft::frontend {
namespace {

namespace fs = std::filesystem;

fs::path goldenDir() {
  if (const char* d = std::getenv("WEFT_GOLDEN_DIR")) return d;
  return fs::path(WEFT_TESTS_DIR) / "golden" / "frontend";
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The golden sources, in name order.
std::vector<fs::path> goldenSources() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(goldenDir())) {
    if (entry.path().extension() == ".lua") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Golden, ListingsMatchExpected) {
  ASSERT_TRUE(fs::is_directory(goldenDir())) << goldenDir();
  bool update = std::getenv("WEFT_UPDATE_GOLDEN") != nullptr;
  int count = 0;
  for (const auto& path : goldenSources()) {
    auto result = compile(readFile(path), "@" + path.filename().string());
    ASSERT_TRUE(result.hasValue()) << path << ": " << result.error().message;
    std::string actual = listing(*result.value(), true);
    fs::path expectedPath = path;
    expectedPath.replace_extension(".expected");
    if (update) {
      std::ofstream(expectedPath, std::ios::binary) << actual;
    } else {
      ASSERT_TRUE(fs::exists(expectedPath)) << expectedPath << " missing; run with WEFT_UPDATE_GOLDEN=1";
      EXPECT_EQ(actual, readFile(expectedPath)) << "golden mismatch for " << path;
    }
    ++count;
  }
  EXPECT_GE(count, 15);
}

// One line of a listing and what it lists, so that a difference can be named: part is
// "header", "summary", "instruction 3", "constants table", "constant 0", "local 1"...
struct ListingLine {
  std::string function;  // the header line of the function it belongs to
  std::string part;
  std::string text;
};

const std::regex kHeader(R"(^(?:main|function) <.*> \(\d+ instructions? at (\S+)\)$)");

std::vector<ListingLine> parseListing(const std::string& text) {
  static const std::regex table(R"(^(constants|locals|upvalues) \(\d+\) for \S+:$)");
  static const std::regex row(R"(^\t(\d+)\t)");
  std::vector<ListingLine> out;
  std::string function, section;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    if (l.empty()) continue;
    std::smatch m;
    std::string part = "line";
    if (std::regex_match(l, kHeader)) {
      function = l;
      part = "header";
      section = "summary";
    } else if (section == "summary") {
      part = section;
      section = "instruction";
    } else if (std::regex_match(l, m, table)) {
      part = m[1].str() + " table";
      section = m[1].str();
      section.pop_back();  // "constants" lists each "constant"
    } else if (std::regex_search(l, m, row)) {
      part = section + " " + m[1].str();
    }
    out.push_back({function, part, l});
  }
  return out;
}

// The name each function is listed under, in listing order.
std::vector<std::string> functionNames(const std::string& text) {
  std::vector<std::string> out;
  for (const ListingLine& l : parseListing(text)) {
    std::smatch m;
    if (l.part == "header" && std::regex_match(l.text, m, kHeader)) out.push_back(m[1].str());
  }
  return out;
}

// luac names a function by its address, we by its place ("F0.1", the main function's
// second child). Both list functions in the same order, so luac's k-th address becomes
// our k-th name wherever luac prints it (headers, table titles, CLOSURE comments).
std::string renameLuacFunctions(const std::string& luac, const std::string& ours) {
  std::vector<std::string> from = functionNames(luac), to = functionNames(ours);
  std::map<std::string, std::string> names;
  for (size_t i = 0; i < std::min(from.size(), to.size()); ++i) names[from[i]] = to[i];
  static const std::regex address(R"(0x[0-9a-f]+)");
  std::string out;
  auto rest = luac.cbegin();
  for (std::sregex_iterator it(luac.begin(), luac.end(), address), end; it != end; ++it) {
    auto found = names.find(it->str());
    out.append(rest, (*it)[0].first);
    out += found != names.end() ? found->second : it->str();
    rest = (*it)[0].second;
  }
  return out.append(rest, luac.cend());
}

// Lua 5.4.5 fixed where a block's locals end: the CLOSE that a loop's break label (or a
// block with captured locals) emits comes after them, no longer inside their range. So a
// local whose range luac5.4 (5.4.4) ends one instruction later, where our listing has that
// CLOSE, is the 5.4.8 behaviour, not a difference.
bool isLua548LocalEnd(const std::vector<ListingLine>& ours, const ListingLine& a, const ListingLine& b) {
  static const std::regex local(R"(^\t(\d+)\t(.+)\t(\d+)\t(\d+)$)");
  std::smatch ma, mb;
  if (a.part.rfind("local ", 0) != 0 || a.part != b.part || a.function != b.function) return false;
  if (!std::regex_match(a.text, ma, local) || !std::regex_match(b.text, mb, local)) return false;
  if (ma[2] != mb[2] || ma[3] != mb[3] || std::stoi(mb[4].str()) != std::stoi(ma[4].str()) + 1) return false;
  std::string closeAt = "instruction " + ma[4].str();
  for (const ListingLine& l : ours) {
    if (l.function == a.function && l.part == closeAt) return l.text.find("\tCLOSE ") != std::string::npos;
  }
  return false;
}

// The first line where our listing and luac's differ, named by function and part; empty
// when they agree.
std::string firstDifference(const std::string& ours, const std::string& luac) {
  std::vector<ListingLine> a = parseListing(ours), b = parseListing(renameLuacFunctions(luac, ours));
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size() && i < b.size() && a[i].text == b[i].text) continue;
    if (i < a.size() && i < b.size() && isLua548LocalEnd(a, a[i], b[i])) continue;
    const ListingLine& at = i < b.size() ? b[i] : a[i];
    return "first difference at " + at.part + " of " + at.function + "\n  weft:    " +
           (i < a.size() ? a[i].text : "(end of listing)") + "\n  luac5.4: " +
           (i < b.size() ? b[i].text : "(end of listing)");
  }
  return "";
}

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct LuacRun {
  int status = -1;
  std::string output;
};

// `luac5.4 -l -l -p NAME` run in dir, so that luac names the chunk NAME as our "@NAME"
// does (given a path, it would print the path, cut short past 60 characters).
LuacRun luacListing(const fs::path& dir, const std::string& name) {
  std::string cmd = "cd " + shellQuote(dir.string()) + " && luac5.4 -l -l -p " + shellQuote(name) + " 2>&1";
  LuacRun run;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) run.output.append(buf, n);
    run.status = pclose(p);
  }
  return run;
}

class Luac : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("luac5.4 -v > /dev/null 2>&1") == 0) return;
    const char* skip = std::getenv("WEFT_SKIP_LUAC");
    if (skip && std::string(skip) == "1") GTEST_SKIP() << "luac5.4 not installed (WEFT_SKIP_LUAC=1)";
    FAIL() << "luac5.4 not found: it is the oracle for bytecode listings (install Debian's "
              "lua5.4, as tools/setup.sh does), or set WEFT_SKIP_LUAC=1 to skip this test";
  }
};

// Defined after ListingsMatchExpected, so a run of this binary with WEFT_UPDATE_GOLDEN=1
// checks the files it has just written.
TEST_F(Luac, GoldenFilesMatchLuac) {
  int count = 0;
  for (const auto& path : goldenSources()) {
    std::string name = path.filename().string();
    fs::path expectedPath = path;
    expectedPath.replace_extension(".expected");
    ASSERT_TRUE(fs::exists(expectedPath)) << expectedPath << " missing";
    LuacRun luac = luacListing(path.parent_path(), name);
    ASSERT_EQ(luac.status, 0) << "luac5.4 -l -l -p " << name << ":\n" << luac.output;
    std::string difference = firstDifference(readFile(expectedPath), luac.output);
    EXPECT_TRUE(difference.empty()) << expectedPath.filename().string() << " differs from `luac5.4 -l -l "
                                    << name << "`, " << difference;
    ++count;
  }
  EXPECT_GE(count, 15);
}

const char* const kCorpus[] = {
    "local a, b = 1, 2; return a + b",
    "local t = {} for i = 1, 10 do t[i] = i * 2 end return t",
    "local function f(n) if n < 2 then return n end return f(n - 1) + f(n - 2) end return f(10)",
    "for k, v in pairs({a = 1}) do print(k, v) end",
    "local s = 0 while s < 10 do s = s + 1 end repeat s = s - 1 until s <= 0",
    "local x <const> = 10 local y <close> = nil return x",
    "local a = {...} return select('#', ...), a[1]",
    "local o = {} function o:m(x) return self, x end return o:m(1)",
    "local a, b = ... return a // b, a % b, a ^ b, a & b, a | b, a ~ b, a << b, a >> b, ~a, -a, #a",
    "local a = ... return a == 1, a ~= 'x', a < 2.0, a >= 3, 4 > a, a <= 200",
    "local a, b, c = ... return a and b or c, not a, a or (b and c)",
    "goto l; do local x end ::l:: do local y = 1; local f = function() return y end end",
    "local t = {1, 2, 3, n = 3, [10] = 4, f(), ...}",
    "local a = ... ; a.b.c = a[1][2]; a[a] = a; return a.b:c(1, 2, ...)",
    "x = 1; y = x .. 'a' .. x; z = -2 ^ 2; w = 1 // 0; v = 0x10 | 3",
    "local function f() local a <close> = nil; return g() end",
    "local u = 1 local function f() u = u + 1 return function() return u end end",
    "if a then b() elseif c then d() else e() end",
    "for i = 3, 1, -1 do for j = 1.0, 2 do print(i, j) end end",
    "local t = setmetatable({}, {__index = function(t, k) return k end}) return t.x, t[1]",
};

TEST_F(Luac, CorpusMatchesLuac) {
  fs::path dir = fs::temp_directory_path() / ("weft_luac_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string name = "corpus.lua";
  for (const char* src : kCorpus) {
    std::ofstream(dir / name, std::ios::binary) << src;
    auto result = compile(src, "@" + name);
    ASSERT_TRUE(result.hasValue()) << src << ": " << result.error().message;
    LuacRun luac = luacListing(dir, name);
    ASSERT_EQ(luac.status, 0) << src << ":\n" << luac.output;
    std::string difference = firstDifference(listing(*result.value(), true), luac.output);
    EXPECT_TRUE(difference.empty()) << "source: " << src << "\n" << difference;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace weft::frontend
