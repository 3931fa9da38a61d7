// Lua 5.4 number semantics (manual §3.4.1-3.4.3, §3.4.4 for the comparisons).
//
// String coercion: arithRaw converts numeric strings for the arithmetic operators
// (+ - * / // % ^ and unary -). In Lua 5.4 the VM itself does not coerce; the string
// metatable's __add.. metamethods do, and they call back into this function, so the VM
// should try arithRaw on numbers only and let the metamethod path reach it for
// strings. Bitwise operators never coerce strings (lua5.4 raises "attempt to perform
// bitwise operation on a string value" for "3" & 1), so arithRaw reports notNumbers.
#include "vm/number.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "frontend/numparse.h"
#include "vm/object.h"

namespace weft::vm {

namespace {

constexpr double kTwoTo63 = 9223372036854775808.0;  // 2^63, exact in a double
constexpr int64_t kMaxExactInt = int64_t(1) << 53;   // |i| <= 2^53 converts exactly

inline bool intFitsFloat(int64_t i) { return i >= -kMaxExactInt && i <= kMaxExactInt; }

// Numbers and (when `coerceStrings`) numeric strings to a number Value.
bool operand(const Value& v, Value& out, bool coerceStrings) {
  if (v.isNumber()) {
    out = v;
    return true;
  }
  return coerceStrings && v.isString() && toNumeric(v, out);
}

// Integer value of a number operand for the bitwise operators.
bool bitwiseOperand(const Value& v, int64_t& out, ArithFailure& why) {
  if (v.isInt()) {
    out = v.asInt();
    return true;
  }
  if (v.isFloat()) {
    if (floatToInteger(v.asFloat(), out, FloatToInt::Exact)) return true;
    why.noIntegerRep = true;
    return false;
  }
  why.notNumbers = true;
  return false;
}

bool intArith(ArithOp op, int64_t a, int64_t b, Value& out, ArithFailure& why) {
  uint64_t ua = uint64_t(a), ub = uint64_t(b);
  switch (op) {
    case ArithOp::Add: out = Value::integer(int64_t(ua + ub)); return true;
    case ArithOp::Sub: out = Value::integer(int64_t(ua - ub)); return true;
    case ArithOp::Mul: out = Value::integer(int64_t(ua * ub)); return true;
    case ArithOp::Unm: out = Value::integer(int64_t(0 - ua)); return true;
    case ArithOp::Mod:
    case ArithOp::IDiv:
      if (b == 0) {
        why.divByZero = true;
        return false;
      }
      out = Value::integer(op == ArithOp::Mod ? intMod(a, b) : intFloorDiv(a, b));
      return true;
    default:
      return false;
  }
}

double floatArith(ArithOp op, double a, double b) {
  switch (op) {
    case ArithOp::Add: return a + b;
    case ArithOp::Sub: return a - b;
    case ArithOp::Mul: return a * b;
    case ArithOp::Div: return a / b;
    case ArithOp::Pow: return b == 2 ? a * a : std::pow(a, b);
    case ArithOp::IDiv: return std::floor(a / b);
    case ArithOp::Mod: return floatMod(a, b);
    case ArithOp::Unm: return -a;
    default: return 0;
  }
}

}  // namespace

bool floatToInteger(double f, int64_t& out, FloatToInt mode) {
  double r = f;
  if (mode == FloatToInt::Floor) r = std::floor(f);
  else if (mode == FloatToInt::Ceil) r = std::ceil(f);
  else if (std::floor(f) != f) return false;  // also rejects NaN and infinities
  if (!(r >= -kTwoTo63 && r < kTwoTo63)) return false;
  out = int64_t(r);
  return true;
}

std::optional<Value> stringToNumber(std::string_view s) {
  frontend::NumberValue n = frontend::parseNumber(s);
  if (n.isInteger()) return Value::integer(n.integer);
  if (n.isFloat()) return Value::number(n.number);
  return std::nullopt;
}

bool toNumeric(const Value& v, Value& out) {
  if (v.isNumber()) {
    out = v;
    return true;
  }
  if (!v.isString()) return false;
  std::optional<Value> n = stringToNumber(v.asString()->view());
  if (!n) return false;
  out = *n;
  return true;
}

bool toInteger(const Value& v, int64_t& out, FloatToInt mode) {
  Value n = Value::nil();
  if (!toNumeric(v, n)) return false;
  if (n.isInt()) {
    out = n.asInt();
    return true;
  }
  return floatToInteger(n.asFloat(), out, mode);
}

bool toNumber(const Value& v, double& out) {
  Value n = Value::nil();
  if (!toNumeric(v, n)) return false;
  out = n.asNumber();
  return true;
}

size_t formatNumber(const Value& number, char* buf) {
  int len;
  if (number.isInt()) {
    len = std::snprintf(buf, 64, "%lld", static_cast<long long>(number.asInt()));
  } else {
    len = std::snprintf(buf, 64, "%.14g", number.asFloat());
    // A float that prints like an integer gets ".0" so it reads back as a float.
    if (buf[std::strspn(buf, "-0123456789")] == '\0') {
      buf[len++] = '.';
      buf[len++] = '0';
      buf[len] = '\0';
    }
  }
  return size_t(len);
}

std::string numberToString(const Value& number) {
  char buf[64];
  size_t n = formatNumber(number, buf);
  return std::string(buf, n);
}

int64_t intFloorDiv(int64_t a, int64_t b) {
  if (b == -1) return int64_t(0 - uint64_t(a));  // INT64_MIN // -1 wraps to INT64_MIN
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
}

int64_t intMod(int64_t a, int64_t b) {
  if (b == -1) return 0;  // avoids the INT64_MIN % -1 trap
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// fmod truncates; Lua's % floors, so a non-zero remainder whose sign differs from the
// divisor's moves by one divisor (-1 % inf is inf, 1 % -inf is -inf, as in lua5.4).
double floatMod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((m > 0) != (b > 0))) m += b;
  return m;
}

int64_t shiftLeft(int64_t x, int64_t n) {
  if (n <= -64 || n >= 64) return 0;
  if (n >= 0) return int64_t(uint64_t(x) << n);
  return int64_t(uint64_t(x) >> -n);
}

// Integer/float orderings without converting the integer when it might round:
// i < f <=> i < ceil(f), i <= f <=> i <= floor(f) (and symmetrically); a float beyond
// the integer range is greater or smaller than every integer by its sign; NaN is false.
namespace {

bool intLessFloat(int64_t i, double f) {
  if (intFitsFloat(i)) return double(i) < f;
  int64_t fi;
  if (floatToInteger(f, fi, FloatToInt::Ceil)) return i < fi;
  return f > 0;
}

bool intLessEqualFloat(int64_t i, double f) {
  if (intFitsFloat(i)) return double(i) <= f;
  int64_t fi;
  if (floatToInteger(f, fi, FloatToInt::Floor)) return i <= fi;
  return f > 0;
}

bool floatLessInt(double f, int64_t i) {
  if (intFitsFloat(i)) return f < double(i);
  int64_t fi;
  if (floatToInteger(f, fi, FloatToInt::Floor)) return fi < i;
  return f < 0;
}

bool floatLessEqualInt(double f, int64_t i) {
  if (intFitsFloat(i)) return f <= double(i);
  int64_t fi;
  if (floatToInteger(f, fi, FloatToInt::Ceil)) return fi <= i;
  return f < 0;
}

}  // namespace

bool numLessThan(const Value& a, const Value& b) {
  if (a.isInt()) return b.isInt() ? a.asInt() < b.asInt() : intLessFloat(a.asInt(), b.asFloat());
  return b.isInt() ? floatLessInt(a.asFloat(), b.asInt()) : a.asFloat() < b.asFloat();
}

bool numLessEqual(const Value& a, const Value& b) {
  if (a.isInt()) return b.isInt() ? a.asInt() <= b.asInt() : intLessEqualFloat(a.asInt(), b.asFloat());
  return b.isInt() ? floatLessEqualInt(a.asFloat(), b.asInt()) : a.asFloat() <= b.asFloat();
}

bool numEquals(const Value& a, const Value& b) {
  if (a.isInt() && b.isInt()) return a.asInt() == b.asInt();
  if (a.isFloat() && b.isFloat()) return a.asFloat() == b.asFloat();
  int64_t i = a.isInt() ? a.asInt() : b.asInt();
  double f = a.isInt() ? b.asFloat() : a.asFloat();
  int64_t fi;
  return floatToInteger(f, fi, FloatToInt::Exact) && fi == i;
}

bool arithRaw(ArithOp op, const Value& a, const Value& b, Value& out, ArithFailure& why) {
  switch (op) {
    case ArithOp::BAnd:
    case ArithOp::BOr:
    case ArithOp::BXor:
    case ArithOp::Shl:
    case ArithOp::Shr:
    case ArithOp::BNot: {
      int64_t x = 0, y = 0;
      bool okA = bitwiseOperand(a, x, why);
      bool okB = op == ArithOp::BNot || bitwiseOperand(b, y, why);
      if (!okA || !okB) {
        if (why.notNumbers) why.noIntegerRep = false;  // the type error is reported first
        return false;
      }
      int64_t r = 0;
      switch (op) {
        case ArithOp::BAnd: r = x & y; break;
        case ArithOp::BOr: r = x | y; break;
        case ArithOp::BXor: r = x ^ y; break;
        case ArithOp::Shl: r = shiftLeft(x, y); break;
        case ArithOp::Shr: r = shiftRight(x, y); break;
        default: r = ~x; break;
      }
      out = Value::integer(r);
      return true;
    }
    default:
      break;
  }
  Value x = Value::nil(), y = Value::nil();
  if (!operand(a, x, true) || (op != ArithOp::Unm && !operand(b, y, true))) {
    why.notNumbers = true;
    return false;
  }
  if (op == ArithOp::Unm) y = x;
  if (x.isInt() && y.isInt() && op != ArithOp::Div && op != ArithOp::Pow) {
    return intArith(op, x.asInt(), y.asInt(), out, why);
  }
  out = Value::number(floatArith(op, x.asNumber(), y.asNumber()));
  return true;
}

}  // namespace weft::vm
