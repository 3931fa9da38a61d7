// Numeral conversion: integers by hand (to control overflow), floats with strtod, which
// is what the manual specifies for the float syntax (decimal and C99 hexadecimal).
#include "frontend/numparse.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace weft::frontend {
namespace {

size_t skipSpaces(std::string_view s, size_t i) {
  while (i < s.size() && isLuaSpace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

// Integer syntax only; false when the text is not an integer numeral or (decimal) overflows.
bool parseInteger(std::string_view s, int64_t& out) {
  size_t i = skipSpaces(s, 0);
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  uint64_t acc = 0;
  bool empty = true;
  if (i + 1 < s.size() && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    for (i += 2; i < s.size() && isLuaXDigit(static_cast<unsigned char>(s[i])); ++i) {
      acc = acc * 16 + static_cast<uint64_t>(hexValue(static_cast<unsigned char>(s[i])));
      empty = false;
    }
  } else {
    constexpr uint64_t kMaxBy10 = static_cast<uint64_t>(INT64_MAX) / 10;
    constexpr int kMaxLastDigit = static_cast<int>(static_cast<uint64_t>(INT64_MAX) % 10);
    for (; i < s.size() && isLuaDigit(static_cast<unsigned char>(s[i])); ++i) {
      int d = s[i] - '0';
      if (acc >= kMaxBy10 && (acc > kMaxBy10 || d > kMaxLastDigit + (neg ? 1 : 0))) return false;
      acc = acc * 10 + static_cast<uint64_t>(d);
      empty = false;
    }
  }
  i = skipSpaces(s, i);
  if (empty || i != s.size()) return false;
  out = static_cast<int64_t>(neg ? 0u - acc : acc);
  return true;
}

bool parseFloat(std::string_view s, double& out) {
  if (s.find_first_of("nN") != std::string_view::npos) return false;  // rejects inf and nan
  std::string buf(s);
  const char* begin = buf.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin) return false;
  size_t pos = skipSpaces(s, static_cast<size_t>(end - begin));
  if (pos != s.size()) return false;
  out = v;
  return true;
}

}  // namespace

NumberValue parseNumber(std::string_view text) {
  NumberValue result;
  if (text.find('\0') != std::string_view::npos) return result;
  int64_t i = 0;
  double d = 0;
  if (parseInteger(text, i)) {
    result.kind = NumberValue::Kind::Integer;
    result.integer = i;
  } else if (parseFloat(text, d)) {
    result.kind = NumberValue::Kind::Float;
    result.number = d;
  }
  return result;
}

bool parseIntegerInBase(std::string_view s, int base, int64_t& out) {
  if (base < 2 || base > 36) return false;
  size_t i = skipSpaces(s, 0);
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  if (i >= s.size() || !isLuaAlnum(static_cast<unsigned char>(s[i])) || s[i] == '_') return false;
  uint64_t acc = 0;
  for (; i < s.size() && isLuaAlnum(static_cast<unsigned char>(s[i])) && s[i] != '_'; ++i) {
    int c = static_cast<unsigned char>(s[i]);
    int digit = isLuaDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
    if (digit >= base) return false;
    acc = acc * static_cast<uint64_t>(base) + static_cast<uint64_t>(digit);
  }
  i = skipSpaces(s, i);
  if (i != s.size()) return false;
  out = static_cast<int64_t>(neg ? 0u - acc : acc);
  return true;
}

}  // namespace weft::frontend
