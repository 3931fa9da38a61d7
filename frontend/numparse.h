// String to number conversion with the rules of the Lua 5.4 manual (section 3.1 and
// 3.4.3). Shared by the lexer (numerals in source) and the VM (string coercion,
// tonumber), so a numeral means the same thing everywhere.
//
// Invariants:
//  1. Decimal integers that do not fit in 64 bits become floats; hexadecimal integers
//     wrap around modulo 2^64.
//  2. 'inf' and 'nan' are never accepted, whatever the C library would do.
//  3. Leading and trailing whitespace (" \f\n\r\t\v") is allowed, nothing else is.
#pragma once

#include <cstdint>
#include <string_view>

namespace weft::frontend {

struct NumberValue {
  enum class Kind : uint8_t { None, Integer, Float };
  Kind kind = Kind::None;
  int64_t integer = 0;
  double number = 0;

  bool isNone() const { return kind == Kind::None; }
  bool isInteger() const { return kind == Kind::Integer; }
  bool isFloat() const { return kind == Kind::Float; }
};

// Converts a whole string ("  0x10 ", "1e3", "-.5"); Kind::None when it is not a numeral.
// Embedded NUL bytes make the conversion fail.
NumberValue parseNumber(std::string_view text);

// tonumber(s, base): optional whitespace, optional sign, at least one digit of `base`
// (2..36, letters either case), optional whitespace. Wraps around on overflow.
bool parseIntegerInBase(std::string_view text, int base, int64_t& out);

// Lua's character classes (ASCII only, locale independent).
constexpr bool isLuaSpace(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
constexpr bool isLuaDigit(int c) { return c >= '0' && c <= '9'; }
constexpr bool isLuaAlpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
constexpr bool isLuaAlnum(int c) { return isLuaAlpha(c) || isLuaDigit(c); }
constexpr bool isLuaXDigit(int c) {
  return isLuaDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
constexpr int hexValue(int c) { return isLuaDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10; }

}  // namespace weft::frontend
