// Lua 5.4 number semantics: integer/float subtypes, conversions and the arithmetic rules
// of the manual §3.4.1–3.4.3 that do not involve metamethods.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "vm/value.h"

namespace weft::vm {

// How a float converts to an integer (manual §3.4.3).
enum class FloatToInt : uint8_t { Exact, Floor, Ceil };

// Float to integer; false if not representable (or not integral, with Exact).
bool floatToInteger(double f, int64_t& out, FloatToInt mode = FloatToInt::Exact);
// Value to integer: integers as they are, floats with `mode`, strings converted first
// (string coercion). False if not convertible.
bool toInteger(const Value& v, int64_t& out, FloatToInt mode = FloatToInt::Exact);
// Value to float (numbers and numeric strings).
bool toNumber(const Value& v, double& out);
// Value to a number Value (integers stay integers; numeric strings are converted).
bool toNumeric(const Value& v, Value& out);
// Lua's string->number conversion (frontend/numparse.h rules).
std::optional<Value> stringToNumber(std::string_view s);

// Formats a number as tostring does: integers in decimal, floats with "%.14g", and a
// ".0" suffix when a float looks like an integer ("1.0", "-0.0", "1e+15", "inf", "-nan").
std::string numberToString(const Value& number);
// Writes into buf (at least 64 bytes) and returns the length; no allocation.
size_t formatNumber(const Value& number, char* buf);

// Integer arithmetic with the manual's semantics (wrap-around; floor division and
// modulo; shifts by >= 64 give 0, negative shifts shift the other way).
int64_t intFloorDiv(int64_t a, int64_t b);  // b != 0
int64_t intMod(int64_t a, int64_t b);       // b != 0
double floatMod(double a, double b);
int64_t shiftLeft(int64_t x, int64_t n);
inline int64_t shiftRight(int64_t x, int64_t n) { return shiftLeft(x, n == INT64_MIN ? INT64_MAX : -n); }

// Exact comparisons between numbers of either subtype (no precision loss).
bool numLessThan(const Value& a, const Value& b);
bool numLessEqual(const Value& a, const Value& b);
bool numEquals(const Value& a, const Value& b);

// The arithmetic and bitwise operators on numbers (after string coercion), without
// metamethods. Returns false when the operands are not numbers (or, for bitwise
// operators, not convertible to integers: then `whyNot` says "no integer representation"
// or "number has no integer representation"), and sets `divByZero` for integer `//` or
// `%` by zero ("attempt to perform 'n//0'" / "attempt to perform 'n%%0'").
enum class ArithOp : uint8_t { Add, Sub, Mul, Mod, Pow, Div, IDiv, BAnd, BOr, BXor, Shl, Shr, Unm, BNot };
struct ArithFailure {
  bool notNumbers = false;    // an operand is not a number (nor a numeric string)
  bool noIntegerRep = false;  // bitwise on a float without an integer value
  bool divByZero = false;     // integer division or modulo by zero
};
bool arithRaw(ArithOp op, const Value& a, const Value& b, Value& out, ArithFailure& why);

}  // namespace weft::vm
