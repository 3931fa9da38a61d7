// Bytecode golden tests. Each tests/golden/frontend/NAME.lua is compiled as "@NAME.lua"
// and its full listing compared with NAME.expected. WEFT_UPDATE_GOLDEN=1 rewrites the
// expected files. A second test compares our instructions with `luac5.4 -l` for a
// corpus of small chunks (skipped when luac5.4 is not installed).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
  return fs::path(__FILE__).parent_path() / ".." / ".." / "golden" / "frontend";
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Golden, ListingsMatchExpected) {
  fs::path dir = goldenDir();
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  bool update = std::getenv("WEFT_UPDATE_GOLDEN") != nullptr;
  int count = 0;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".lua") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
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

// Instruction lines ("\t12\t[3]\tCALL     \t1 2 1\t; ...") reduced to "CALL 1 2 1".
std::vector<std::string> instructions(const std::string& text) {
  static const std::regex line(R"(^\t\d+\t\[[-\d]+\]\t(\w+)\s*\t?([^\t;]*))");
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l)) {
    std::smatch m;
    if (std::regex_search(l, m, line)) {
      std::string ops = m[2].str();
      while (!ops.empty() && ops.back() == ' ') ops.pop_back();
      out.push_back(m[1].str() + " " + ops);
    }
  }
  return out;
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

TEST(Golden, OpcodesMatchLuac) {
  if (std::system("luac5.4 -v > /dev/null 2>&1") != 0) GTEST_SKIP() << "luac5.4 not installed";
  fs::path tmp = fs::temp_directory_path() / ("weft_luac_" + std::to_string(::getpid()) + ".lua");
  for (const char* src : kCorpus) {
    std::ofstream(tmp, std::ios::binary) << src;
    std::string cmd = "luac5.4 -l -p " + tmp.string() + " 2>&1";
    std::string luacOut;
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, p)) > 0) luacOut.append(buf, n);
      pclose(p);
    }
    auto result = compile(src, "@" + tmp.string());
    ASSERT_TRUE(result.hasValue()) << src << ": " << result.error().message;
    auto expected = instructions(luacOut);
    ASSERT_FALSE(expected.empty()) << luacOut;
    EXPECT_EQ(instructions(listing(*result.value(), false)), expected) << "source: " << src;
  }
  fs::remove(tmp);
}

}  // namespace
}  // namespace weft::frontend
