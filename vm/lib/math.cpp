// The math library (manual §6.7). The generator is xoshiro256** seeded as Lua 5.4 seeds
// it, so a seeded sequence matches lua5.4's value for value. Its state lives with the
// root thread of the running chain of coroutines (generatorOf).
#include <cmath>
#include <ctime>

#include <mimalloc.h>

#include "vm/jit_abi.h"
#include "vm/lib/libs.h"
#include "vm/thread.h"
#include "vm/lib/string.h"
#include "vm/number.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

namespace {

NativeResult pushResult(CallContext& cx, const Value& v) {
  if (!cx.push(v)) return cx.stackOverflow();
  return cx.results(1);
}

// A float result that is an integer in range becomes an integer (floor, ceil, modf).
Value intIfFits(double d) {
  int64_t i;
  if (floatToInteger(d, i)) return Value::integer(i);
  return Value::number(d);
}

NativeResult mathAbs(CallContext& cx) {
  Value v = cx.arg(1);
  if (v.isInt()) {
    int64_t n = v.asInt();
    return pushResult(cx, Value::integer(n < 0 ? int64_t(0u - uint64_t(n)) : n));
  }
  double d;
  if (!cx.checkNumber(1, d)) return cx.failure();
  return pushResult(cx, Value::number(std::fabs(d)));
}

template <double (*Round)(double)>
NativeResult mathRound(CallContext& cx) {
  Value v = cx.arg(1);
  if (v.isInt()) return pushResult(cx, v);
  double d;
  if (!cx.checkNumber(1, d)) return cx.failure();
  return pushResult(cx, intIfFits(Round(d)));
}

NativeResult mathFmod(CallContext& cx) {
  Value a = cx.arg(1), b = cx.arg(2);
  if (a.isInt() && b.isInt()) {
    int64_t d = b.asInt();
    if (uint64_t(d) + 1u <= 1u) {  // 0 or -1: avoid the overflow of minint % -1
      if (d == 0) return cx.argError(2, "zero");
      return pushResult(cx, Value::integer(0));
    }
    return pushResult(cx, Value::integer(a.asInt() % d));
  }
  double x, y;
  if (!cx.checkNumber(1, x) || !cx.checkNumber(2, y)) return cx.failure();
  return pushResult(cx, Value::number(std::fmod(x, y)));
}

NativeResult mathModf(CallContext& cx) {
  Value v = cx.arg(1);
  if (v.isInt()) {
    if (!cx.ensureStack(2)) return cx.stackOverflow();
    cx.push(v);
    cx.push(Value::number(0.0));
    return cx.results(2);
  }
  double n;
  if (!cx.checkNumber(1, n)) return cx.failure();
  double ip = n < 0 ? std::ceil(n) : std::floor(n);
  if (!cx.ensureStack(2)) return cx.stackOverflow();
  cx.push(intIfFits(ip));
  cx.push(Value::number(n == ip ? 0.0 : n - ip));
  return cx.results(2);
}

template <double (*Fn)(double)>
NativeResult mathUnary(CallContext& cx) {
  double d;
  if (!cx.checkNumber(1, d)) return cx.failure();
  return pushResult(cx, Value::number(Fn(d)));
}

double sqrtOf(double d) { return std::sqrt(d); }
double sinOf(double d) { return std::sin(d); }
double cosOf(double d) { return std::cos(d); }
double tanOf(double d) { return std::tan(d); }
double asinOf(double d) { return std::asin(d); }
double acosOf(double d) { return std::acos(d); }
double expOf(double d) { return std::exp(d); }
// One multiplication by the folded ratio, so results match lua5.4's to the last bit.
constexpr double kPi = 3.141592653589793238462643383279502884;
double degOf(double d) { return d * (180.0 / kPi); }
double radOf(double d) { return d * (kPi / 180.0); }

NativeResult mathAtan(CallContext& cx) {
  double y, x;
  if (!cx.checkNumber(1, y) || !cx.optNumber(2, 1.0, x)) return cx.failure();
  return pushResult(cx, Value::number(std::atan2(y, x)));
}

NativeResult mathLog(CallContext& cx) {
  double x;
  if (!cx.checkNumber(1, x)) return cx.failure();
  if (cx.arg(2).isNil()) return pushResult(cx, Value::number(std::log(x)));
  double base;
  if (!cx.checkNumber(2, base)) return cx.failure();
  double r;
  if (base == 2.0) r = std::log2(x);
  else if (base == 10.0) r = std::log10(x);
  else r = std::log(x) / std::log(base);
  return pushResult(cx, Value::number(r));
}

// Like lua5.4, the arguments are compared with '<' as they are (no number check), so
// strings compare as strings and other values raise the comparison error.
template <bool Max>
NativeResult mathMinMax(CallContext& cx) {
  uint32_t n = cx.argCount();
  if (n < 1) return cx.argError(1, "value expected");
  uint32_t best = 1;
  for (uint32_t i = 2; i <= n; i++) {
    bool less;
    Value a = Max ? cx.arg(best) : cx.arg(i);
    Value b = Max ? cx.arg(i) : cx.arg(best);
    if (a.isNumber() && b.isNumber()) less = numLessThan(a, b);
    else if (Status st = cx.lessThanMayGC(a, b, less); !st.isOk()) return NativeResult{0, st.code()};
    if (less) best = i;
  }
  return pushResult(cx, cx.arg(best));
}

NativeResult mathToInteger(CallContext& cx) {
  int64_t n;
  Value v = cx.arg(1);
  if ((v.isNumber() || v.isString()) && toInteger(v, n)) return pushResult(cx, Value::integer(n));
  if (!cx.checkAny(1)) return cx.failure();
  return pushResult(cx, Value::nil());
}

NativeResult mathType(CallContext& cx) {
  if (!cx.checkAny(1)) return cx.failure();
  Value v = cx.arg(1);
  if (!v.isNumber()) return pushResult(cx, Value::nil());
  return returnString(cx, v.isInt() ? "integer" : "float");
}

NativeResult mathUlt(CallContext& cx) {
  int64_t a, b;
  if (!cx.checkInteger(1, a) || !cx.checkInteger(2, b)) return cx.failure();
  return pushResult(cx, Value::boolean(uint64_t(a) < uint64_t(b)));
}

// ---- pseudo-random numbers ----------------------------------------------------------

// A view of a generator's four state words.
struct Xoshiro {
  uint64_t* s;

  static uint64_t rotl(uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }
  uint64_t next() {
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  // Lua 5.4's seeding: the two seed words in slots 0 and 2, a constant in slot 1, then
  // 16 values discarded so close seeds diverge.
  void seed(uint64_t n1, uint64_t n2) {
    s[0] = n1;
    s[1] = 0xff;
    s[2] = n2;
    s[3] = 0;
    for (int i = 0; i < 16; i++) next();
  }
};

// The generator lives in the root of the running chain of coroutines: the main thread,
// or a task's own thread, so each task keeps its own state (tasks run in parallel) and
// a coroutine shares its resumer's, as in Lua. Allocated and seeded on first use, from
// the clock and the thread's address; false when there is no memory for it.
bool generatorOf(CallContext& cx, Xoshiro& g) {
  ThreadData* root = cx.threadData();
  while (root->resumer) root = root->resumer;
  ThreadRare* rare = makeThreadRare(root);
  if (!rare) return false;
  if (!rare->randomSeeded) {
    if (const State::DeterministicHooks* det = cx.state().deterministic) {
      Xoshiro{rare->random}.seed(det->randomSeed(cx.state(), root), 0);  // the run's seed and the task
    } else {
      Xoshiro{rare->random}.seed(uint64_t(std::time(nullptr)), uint64_t(reinterpret_cast<uintptr_t>(root)));
    }
    rare->randomSeeded = true;
  }
  g.s = rare->random;
  return true;
}

// A uniform value in [0, n]: mask to the smallest 2^b-1 covering n and retry outside.
uint64_t project(uint64_t ran, uint64_t n, Xoshiro g) {
  if ((n & (n + 1)) == 0) return ran & n;
  uint64_t lim = n;
  lim |= lim >> 1;
  lim |= lim >> 2;
  lim |= lim >> 4;
  lim |= lim >> 8;
  lim |= lim >> 16;
  lim |= lim >> 32;
  while ((ran &= lim) > n) ran = g.next();
  return ran;
}

NativeResult mathRandom(CallContext& cx) {
  Xoshiro g{nullptr};
  if (!generatorOf(cx, g)) return cx.memoryError();
  uint64_t rv = g.next();
  int64_t low, up;
  switch (cx.argCount()) {
    case 0: return pushResult(cx, Value::number(double(rv >> 11) * 0x1.0p-53));
    case 1:
      low = 1;
      if (!cx.checkInteger(1, up)) return cx.failure();
      if (up == 0) return pushResult(cx, Value::integer(int64_t(rv)));
      break;
    case 2:
      if (!cx.checkInteger(1, low) || !cx.checkInteger(2, up)) return cx.failure();
      break;
    default: return cx.error("wrong number of arguments");
  }
  if (low > up) return cx.argError(1, "interval is empty");
  uint64_t r = project(rv, uint64_t(up) - uint64_t(low), g);
  return pushResult(cx, Value::integer(int64_t(r + uint64_t(low))));
}

// Lua 5.4.4 (the oracle) and the later manuals agree that randomseed returns the two
// seed components; without arguments it seeds from the clock and the state's address.
NativeResult mathRandomSeed(CallContext& cx) {
  Xoshiro g{nullptr};
  if (!generatorOf(cx, g)) return cx.memoryError();
  int64_t n1, n2;
  if (cx.argCount() == 0 && cx.state().deterministic) {
    ThreadData* root = cx.threadData();
    while (root->resumer) root = root->resumer;
    n1 = int64_t(cx.state().deterministic->randomSeed(cx.state(), root));
    n2 = 0;
  } else if (cx.argCount() == 0) {
    n1 = int64_t(std::time(nullptr)) ^ int64_t(std::clock());
    n2 = int64_t(reinterpret_cast<uintptr_t>(&cx.state()));
  } else if (!cx.checkInteger(1, n1) || !cx.optInteger(2, 0, n2)) {
    return cx.failure();
  }
  g.seed(uint64_t(n1), uint64_t(n2));
  if (!cx.ensureStack(2)) return cx.stackOverflow();
  cx.push(Value::integer(n1));
  cx.push(Value::integer(n2));
  return cx.results(2);
}

constexpr LibEntry kMathLib[] = {
    {"abs", mathAbs},
    {"ceil", mathRound<std::ceil>},
    {"floor", mathRound<std::floor>},
    {"fmod", mathFmod},
    {"modf", mathModf},
    {"sqrt", mathUnary<sqrtOf>},
    {"sin", mathUnary<sinOf>},
    {"cos", mathUnary<cosOf>},
    {"tan", mathUnary<tanOf>},
    {"asin", mathUnary<asinOf>},
    {"acos", mathUnary<acosOf>},
    {"atan", mathAtan},
    {"exp", mathUnary<expOf>},
    {"deg", mathUnary<degOf>},
    {"rad", mathUnary<radOf>},
    {"log", mathLog},
    {"max", mathMinMax<true>},
    {"min", mathMinMax<false>},
    {"tointeger", mathToInteger},
    {"type", mathType},
    {"ult", mathUlt},
    {"random", mathRandom},
    {"randomseed", mathRandomSeed},
};

}  // namespace

Status openMathLib(State& state) {
  Table* lib;
  if (Status st = openLibrary(state, "math", kMathLib, &lib); !st.isOk()) return st;
  struct Constant {
    const char* name;
    Value value;
  };
  const Constant constants[] = {
      {"pi", Value::number(kPi)},
      {"huge", Value::number(HUGE_VAL)},
      {"maxinteger", Value::integer(INT64_MAX)},
      {"mininteger", Value::integer(INT64_MIN)},
  };
  for (const Constant& c : constants) {
    String* key = newString(state, c.name);
    if (!key) return Status(StatusCode::kMemoryError);
    if (Status st = tableSetStr(state, lib, key, c.value); !st.isOk()) return st;
  }
  return Status::ok();
}

NativeFn mathKnownNative(uint8_t id) {
  switch (id) {
    case kWeftJitNativeSqrt: return mathUnary<sqrtOf>;
    case kWeftJitNativeFloor: return mathRound<std::floor>;
    case kWeftJitNativeCeil: return mathRound<std::ceil>;
    case kWeftJitNativeAbs: return mathAbs;
    case kWeftJitNativeMin: return mathMinMax<false>;
    case kWeftJitNativeMax: return mathMinMax<true>;
    default: return nullptr;
  }
}

}  // namespace weft::vm
