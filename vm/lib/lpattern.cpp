// The Lua pattern matcher: recursive backtracking whose depth is counted (lpattern.h
// invariant 1). Repetition of a single-character class loops instead of recursing, so
// only captures, '?' and the expansions' continuation add depth.
#include "vm/lib/lpattern.h"

#include <array>
#include <cstring>

namespace weft::vm {

namespace {
constexpr char kEsc = '%';
constexpr const char* kSpecials = "^$*+?.([%-";

// Character classes are classified by precomputed tables with the C locale's meaning
// (os.setlocale does not change them; see docs/design/stdlib.md): one lookup per byte
// instead of a libc call per byte and per class letter.
enum ClassBit : uint16_t {
  kAlpha = 1 << 0, kCntrl = 1 << 1, kDigit = 1 << 2, kGraph = 1 << 3, kLower = 1 << 4, kPunct = 1 << 5,
  kSpace = 1 << 6, kUpper = 1 << 7, kAlnum = 1 << 8, kXdigit = 1 << 9, kZero = 1 << 10,
};

constexpr std::array<uint16_t, 256> makeByteClasses() {
  std::array<uint16_t, 256> t{};
  for (int c = 0; c < 256; c++) {
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
    bool graph = c >= 0x21 && c <= 0x7e;
    uint16_t b = 0;
    if (upper || lower) b |= kAlpha;
    if (c < 0x20 || c == 0x7f) b |= kCntrl;
    if (digit) b |= kDigit;
    if (graph) b |= kGraph;
    if (lower) b |= kLower;
    if (graph && !upper && !lower && !digit) b |= kPunct;
    if ((c >= '\t' && c <= '\r') || c == ' ') b |= kSpace;
    if (upper) b |= kUpper;
    if (upper || lower || digit) b |= kAlnum;
    if (digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) b |= kXdigit;
    if (c == 0) b |= kZero;
    t[size_t(c)] = b;
  }
  return t;
}

// For a class letter: 0 if it is not a class (it matches itself), else the index of its
// ClassBit plus one, with kClassNegated set for the upper-case complement.
constexpr uint8_t kClassNegated = 0x80;

constexpr std::array<uint8_t, 256> makeClassOfLetter() {
  std::array<uint8_t, 256> t{};
  constexpr char kLetters[] = "acdglpsuwxz";  // in ClassBit order
  for (int i = 0; kLetters[i]; i++) {
    int lower = kLetters[i];
    t[size_t(lower)] = uint8_t(i + 1);
    t[size_t(lower - 'a' + 'A')] = uint8_t((i + 1) | kClassNegated);
  }
  return t;
}

constexpr std::array<uint16_t, 256> kByteClasses = makeByteClasses();
constexpr std::array<uint8_t, 256> kClassOfLetter = makeClassOfLetter();

constexpr uint16_t classBit(uint8_t entry) { return uint16_t(1u << ((entry & ~kClassNegated) - 1)); }
}  // namespace

PatternMatcher::PatternMatcher(std::string_view subject, std::string_view pattern, bool honourAnchor)
    : honourAnchor_(honourAnchor) {
  rebind(subject, pattern);
}

void PatternMatcher::rebind(std::string_view subject, std::string_view pattern) {
  src_ = subject.data();
  srcEnd_ = src_ + subject.size();
  pat_ = pattern.data();
  patEnd_ = pat_ + pattern.size();
  anchored_ = honourAnchor_ && !pattern.empty() && pattern[0] == '^';
}

bool PatternMatcher::matchAt(size_t pos, size_t& end) {
  level_ = 0;
  depth_ = 0;
  error_ = nullptr;
  const char* res = doMatch(src_ + pos, pat_ + (anchored_ ? 1 : 0));
  if (!res) return false;
  end = size_t(res - src_);
  return true;
}

PatternCapture PatternMatcher::capture(int i) const {
  const Slot& c = captures_[i];
  size_t start = size_t(c.init - src_);
  if (c.len == kPosition) return {PatternCapture::Kind::Position, start, 0};
  if (c.len == kUnfinished) return {PatternCapture::Kind::Unfinished, start, 0};
  return {PatternCapture::Kind::Substring, start, size_t(c.len)};
}

std::string PatternMatcher::errorMessage() const {
  std::string m = error_ ? error_ : "";
  if (error_ && std::strcmp(error_, "invalid capture index") == 0) m += " %" + std::to_string(errorArg_);
  return m;
}

const char* PatternMatcher::fail(const char* message) {
  if (!error_) error_ = message;
  return nullptr;
}

// Depth is counted per call, like the reference implementation, so the same patterns
// hit the limit in both.
const char* PatternMatcher::doMatch(const char* s, const char* p) {
  if (++depth_ > kMaxPatternDepth) return fail("pattern too complex");
  const char* res = nullptr;
  while (true) {
    if (p == patEnd_) { res = s; break; }
    char pc = *p;
    if (pc == '(') {
      if (p + 1 < patEnd_ && p[1] == ')') res = startCapture(s, p + 2, kPosition);
      else res = startCapture(s, p + 1, kUnfinished);
      break;
    }
    if (pc == ')') { res = endCapture(s, p + 1); break; }
    if (pc == '$' && p + 1 == patEnd_) { res = (s == srcEnd_) ? s : nullptr; break; }
    if (pc == kEsc && p + 1 < patEnd_) {
      char next = p[1];
      if (next == 'b') {
        s = matchBalance(s, p + 2);
        if (!s) break;
        p += 4;
        continue;
      }
      if (next == 'f') {
        p += 2;
        s = matchFrontier(s, p);
        if (!s) break;
        p = classEnd(p);
        continue;
      }
      if (next >= '0' && next <= '9') {
        s = matchBackref(s, next);
        if (!s) break;
        p += 2;
        continue;
      }
    }
    const char* ep = classEnd(p);
    if (!ep) break;
    bool m = s < srcEnd_ && singleMatch(s, p, ep);
    if (ep < patEnd_) {
      char op = *ep;
      if (op == '?') {
        if (m) {
          res = doMatch(s + 1, ep + 1);
          if (res || error_) break;
        }
        p = ep + 1;
        continue;
      }
      if (op == '+') { res = m ? maxExpand(s + 1, p, ep) : nullptr; break; }
      if (op == '*') { res = maxExpand(s, p, ep); break; }
      if (op == '-') { res = minExpand(s, p, ep); break; }
    }
    if (!m) break;
    s++;
    p = ep;
  }
  depth_--;
  return error_ ? nullptr : res;
}

const char* PatternMatcher::maxExpand(const char* s, const char* p, const char* ep) {
  ptrdiff_t i = 0;
  while (s + i < srcEnd_ && singleMatch(s + i, p, ep)) i++;
  for (; i >= 0; i--) {
    const char* res = doMatch(s + i, ep + 1);
    if (res) return res;
    if (error_) return nullptr;
  }
  return nullptr;
}

const char* PatternMatcher::minExpand(const char* s, const char* p, const char* ep) {
  while (true) {
    const char* res = doMatch(s, ep + 1);
    if (res) return res;
    if (error_) return nullptr;
    if (s < srcEnd_ && singleMatch(s, p, ep)) s++;
    else return nullptr;
  }
}

const char* PatternMatcher::startCapture(const char* s, const char* p, ptrdiff_t what) {
  if (level_ >= kMaxPatternCaptures) return fail("too many captures");
  captures_[level_] = Slot{s, what};
  level_++;
  const char* res = doMatch(s, p);
  if (!res) level_--;
  return res;
}

const char* PatternMatcher::endCapture(const char* s, const char* p) {
  int l = captureToClose();
  if (l < 0) return nullptr;
  captures_[l].len = s - captures_[l].init;
  const char* res = doMatch(s, p);
  if (!res) captures_[l].len = kUnfinished;
  return res;
}

int PatternMatcher::captureToClose() {
  for (int l = level_ - 1; l >= 0; l--)
    if (captures_[l].len == kUnfinished) return l;
  fail("invalid pattern capture");
  return -1;
}

int PatternMatcher::checkCapture(int l) {
  l -= '1';
  if (l < 0 || l >= level_ || captures_[l].len == kUnfinished) {
    errorArg_ = l + 1;
    fail("invalid capture index");
    return -1;
  }
  return l;
}

const char* PatternMatcher::matchBackref(const char* s, int digit) {
  int l = checkCapture(digit);
  if (l < 0) return nullptr;
  ptrdiff_t len = captures_[l].len;
  if (len < 0 || srcEnd_ - s < len) return nullptr;
  if (std::memcmp(captures_[l].init, s, size_t(len)) != 0) return nullptr;
  return s + len;
}

const char* PatternMatcher::matchBalance(const char* s, const char* p) {
  if (p + 1 >= patEnd_) return fail("malformed pattern (missing arguments to '%b')");
  if (s >= srcEnd_ || *s != p[0]) return nullptr;
  char open = p[0], close = p[1];
  int depth = 1;
  while (++s < srcEnd_) {
    if (*s == close) {
      if (--depth == 0) return s + 1;
    } else if (*s == open) {
      depth++;
    }
  }
  return nullptr;
}

const char* PatternMatcher::matchFrontier(const char* s, const char* p) {
  if (p >= patEnd_ || *p != '[') return fail("missing '[' after '%f' in pattern");
  const char* ep = classEnd(p);
  if (!ep) return nullptr;
  unsigned char prev = (s == src_) ? 0 : static_cast<unsigned char>(s[-1]);
  unsigned char cur = (s < srcEnd_) ? static_cast<unsigned char>(*s) : 0;
  if (!matchBracketClass(prev, p, ep - 1) && matchBracketClass(cur, p, ep - 1)) return s;
  return nullptr;
}

// The end of the single-character class starting at p, or nullptr on a malformed one.
const char* PatternMatcher::classEnd(const char* p) {
  char c = *p++;
  if (c == kEsc) {
    if (p >= patEnd_) return fail("malformed pattern (ends with '%')");
    return p + 1;
  }
  if (c == '[') {
    if (p < patEnd_ && *p == '^') p++;
    // The first byte of the set is taken literally, so "[]]" is a set holding ']'.
    do {
      if (p >= patEnd_) return fail("malformed pattern (missing ']')");
      char x = *p++;
      if (x == kEsc && p < patEnd_) p++;
    } while (p >= patEnd_ || *p != ']');
    return p + 1;
  }
  return p;
}

bool PatternMatcher::singleMatch(const char* s, const char* p, const char* ep) const {
  unsigned char c = static_cast<unsigned char>(*s);
  switch (*p) {
    case '.': return true;
    case kEsc: return patternClassMatches(c, static_cast<unsigned char>(p[1]));
    case '[': return matchBracketClass(c, p, ep - 1);
    default: return static_cast<unsigned char>(*p) == c;
  }
}

// p points at '[' and ec at the closing ']'.
bool PatternMatcher::matchBracketClass(unsigned char c, const char* p, const char* ec) const {
  bool found = true;
  if (p[1] == '^') {
    found = false;
    p++;
  }
  while (++p < ec) {
    if (*p == kEsc) {
      p++;
      if (patternClassMatches(c, static_cast<unsigned char>(*p))) return found;
    } else if (p + 2 < ec && p[1] == '-') {
      unsigned char lo = static_cast<unsigned char>(p[0]);
      unsigned char hi = static_cast<unsigned char>(p[2]);
      p += 2;
      if (lo <= c && c <= hi) return found;
    } else if (static_cast<unsigned char>(*p) == c) {
      return found;
    }
  }
  return !found;
}

bool patternClassMatches(unsigned char c, unsigned char cl) {
  uint8_t entry = kClassOfLetter[cl];
  if (entry == 0) return cl == c;
  bool r = (kByteClasses[c] & classBit(entry)) != 0;
  return (entry & kClassNegated) ? !r : r;
}

bool patternIsPlain(std::string_view pattern) {
  for (char c : pattern)
    if (c != 0 && std::strchr(kSpecials, c)) return false;
  return true;
}

size_t findPlain(std::string_view subject, std::string_view needle, size_t from) {
  if (from > subject.size()) return std::string_view::npos;
  if (needle.empty()) return from;
  const void* hit = memmem(subject.data() + from, subject.size() - from, needle.data(), needle.size());
  if (!hit) return std::string_view::npos;
  return size_t(static_cast<const char*>(hit) - subject.data());
}

}  // namespace weft::vm
