// libFuzzer entry point for Lua patterns: string.find (also plain), match, gmatch and
// gsub (string, table and function replacements, with and without a count) run on a
// fuzzer-chosen pattern and subject. Invariant 7 of DEVELOPERS.md: a malformed pattern
// is a Lua error ("malformed pattern", "invalid capture index", "pattern too complex"),
// never a crash, a sanitizer report or a hang. The check function also verifies what
// the manual defines: find and match agree on whether there is a match, and when find
// reports no captures, match returns exactly the substring find located.
//
// Bounding the work: only natives and the harness's own short Lua code run, so no
// instruction budget is needed; but the matcher backtracks, and one native call is not
// interrupted by a count hook anyway, so the harness bounds the search itself. A pattern with k
// quantifiers ('*', '+', '-', '?', and '%b' or a back reference, which scan) can split
// a subject of n bytes C(n + k, k) ways from each of n + 1 start positions; the subject
// is cut to the longest n (at most 256) that keeps that product under kMaxSearch.
// Patterns are at most 64 bytes.
//
// Input: a selector byte (init position, plain flag, replacement kind, gsub count), a
// length byte, that many pattern bytes, then the subject.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_host.h"

namespace {

constexpr size_t kMaxPattern = 64;
constexpr size_t kMaxSubject = 256;
constexpr double kMaxSearch = 1e6;

constexpr const char* kHarness = R"(
local find, match, gmatch, gsub, sub = string.find, string.match, string.gmatch, string.gsub, string.sub
local pcall, select, type, tostring = pcall, select, type, tostring
local inits = {nil, 1, -1, 0, 3, 1000, -1000, 2}
local repls = {"<%0>", "%1-%2", "%%", "%9", {a = "A", ab = false, [""] = "E"},
  function(c) return #c % 2 == 0 and c or nil end, "", function() return false end}

function check(p, s, sel)
  local init = inits[sel % 8 + 1]
  if init == 2 then init = #s + 1 end
  local plain = sel & 8 ~= 0
  pcall(find, s, p, init, true)
  local okFind = table.pack(pcall(find, s, p, init))
  local okMatch, whole = pcall(match, s, p, init)
  if okFind[1] and okMatch then
    if (okFind[2] == nil) ~= (whole == nil) then return "find and match disagree" end
    if okFind[2] ~= nil and okFind.n < 3 then return "find returned one index" end
    if okFind.n == 3 and whole ~= sub(s, okFind[2], okFind[3]) then
      return "match differs from the substring find located"
    end
  end
  pcall(function()
    for a, b in gmatch(s, p, init) do end
  end)
  local repl = repls[(sel >> 4) % 8 + 1]
  pcall(gsub, s, p, repl, plain and 3 or nil)
end
)";

// Counts what makes the matcher branch or scan; over-counting only shortens subjects.
int quantifiers(std::string_view pattern) {
  int k = 0;
  for (size_t i = 0; i < pattern.size(); i++) {
    char c = pattern[i];
    if (c == '*' || c == '+' || c == '-' || c == '?') k++;
    if (c == '%' && i + 1 < pattern.size()) {
      char d = pattern[i + 1];
      if (d == 'b' || (d >= '1' && d <= '9')) k++;
    }
  }
  return k;
}

// The longest subject whose search stays within kMaxSearch for k quantifiers.
size_t subjectBound(int k) {
  size_t n = 0;
  while (n < kMaxSubject) {
    double ways = 1;  // C(n + 1 + k, k), built as a product
    for (int i = 1; i <= k && ways <= kMaxSearch; i++) ways = ways * double(n + 1 + i) / i;
    if (ways * double(n + 2) > kMaxSearch) break;
    n++;
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  weft::fuzz::Bytes in(std::string_view(reinterpret_cast<const char*>(data), size));
  uint8_t selector = in.byte();
  std::string_view pattern = in.take(in.byte() % (kMaxPattern + 1));
  std::string_view subject = in.rest();
  subject = subject.substr(0, subjectBound(quantifiers(pattern)));

  auto state = weft::fuzz::freshState();
  weft::vm::HostStack host(*state);
  weft::fuzz::runTrusted(host, kHarness);
  if (host.pushGlobal("check") && host.pushString(pattern) && host.pushString(subject)) {
    host.pushInteger(selector);
    weft::fuzz::callCheck(host, 3);
  }
  host.setTop(0);
  host.closeMayGC();
  return 0;
}
