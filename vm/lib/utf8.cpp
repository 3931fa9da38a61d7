// The utf8 library (manual §6.5). Sequences of up to six bytes encode values up to
// 2^31-1; the strict functions (the default) also reject surrogates and values above
// 10FFFF, the lax ones accept them.
#include <cstdint>
#include <string_view>

#include "vm/lib/libs.h"
#include "vm/lib/string.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

namespace {

constexpr uint32_t kMaxUtf = 0x7fffffffu;
constexpr uint32_t kMaxUnicode = 0x10ffffu;
constexpr char kInvalid[] = "invalid UTF-8 code";

bool isCont(std::string_view s, size_t i) { return i < s.size() && (static_cast<unsigned char>(s[i]) & 0xc0) == 0x80; }

// Decodes the sequence at s[i]; returns the index after it, or npos if invalid.
size_t decode(std::string_view s, size_t i, uint32_t& code, bool strict) {
  static constexpr uint32_t kLimits[] = {~0u, 0x80, 0x800, 0x10000u, 0x200000u, 0x4000000u};
  uint32_t c = static_cast<unsigned char>(s[i]);
  uint32_t res = 0;
  if (c < 0x80) {
    res = c;
  } else {
    int count = 0;
    for (; c & 0x40; c <<= 1) {
      if (!isCont(s, i + size_t(count) + 1) || count == 5) return std::string_view::npos;
      count++;
      res = (res << 6) | (static_cast<unsigned char>(s[i + size_t(count)]) & 0x3f);
    }
    res |= (uint32_t(c & 0x7f) << (count * 5));
    if (res > kMaxUtf || res < kLimits[count]) return std::string_view::npos;
    i += size_t(count);
  }
  if (strict && (res > kMaxUnicode || (0xd800u <= res && res <= 0xdfffu))) return std::string_view::npos;
  code = res;
  return i + 1;
}

void encode(std::string& out, uint32_t x) {
  if (x < 0x80) {
    out += char(x);
    return;
  }
  char buf[8];
  int n = 0;
  uint32_t firstMax = 0x3f;  // largest payload the first byte can still hold
  do {
    buf[7 - n++] = char(0x80 | (x & 0x3f));
    x >>= 6;
    firstMax >>= 1;
  } while (x > firstMax);
  buf[7 - n] = char((~firstMax << 1) | x);
  out.append(buf + 7 - n, size_t(n) + 1);
}

// Relative positions as utf8 uses them: negatives count from the end, too negative is 0.
int64_t relPos(int64_t pos, size_t len) {
  if (pos >= 0) return pos;
  if (0u - uint64_t(pos) > len) return 0;
  return int64_t(len) + pos + 1;
}

NativeResult utfChar(CallContext& cx) {
  BufferLease lease;
  std::string& out = lease.get();
  for (uint32_t i = 1; i <= cx.argCount(); i++) {
    int64_t c;
    if (!cx.checkInteger(i, c)) return cx.failure();
    if (uint64_t(c) > kMaxUtf) return cx.argError(i, "value out of range");
    encode(out, uint32_t(c));
  }
  return returnString(cx, out);
}

NativeResult utfCodepoint(CallContext& cx) {
  String* str;
  int64_t i, j;
  if (!cx.checkString(1, str) || !cx.optInteger(2, 1, i)) return cx.failure();
  std::string_view s = str->view();
  int64_t posi = relPos(i, s.size());
  if (!cx.optInteger(3, posi, j)) return cx.failure();
  int64_t pose = relPos(j, s.size());
  bool strict = !cx.arg(4).isTruthy();
  if (posi < 1) return cx.argError(2, "out of bounds");
  if (pose > int64_t(s.size())) return cx.argError(3, "out of bounds");
  if (posi > pose) return cx.results(0);
  if (pose - posi >= 0x7fffffff || !cx.ensureStack(uint32_t(pose - posi + 1))) return cx.error("string slice too long");
  int32_t n = 0;
  for (size_t k = size_t(posi - 1); k < size_t(pose);) {
    uint32_t code;
    k = decode(s, k, code, strict);
    if (k == std::string_view::npos) return cx.error(kInvalid);
    cx.push(Value::integer(code));
    n++;
  }
  return cx.results(n);
}

NativeResult utfLen(CallContext& cx) {
  String* str;
  int64_t i, j;
  if (!cx.checkString(1, str) || !cx.optInteger(2, 1, i) || !cx.optInteger(3, -1, j)) return cx.failure();
  std::string_view s = str->view();
  int64_t posi = relPos(i, s.size());
  if (!(1 <= posi && --posi <= int64_t(s.size()))) return cx.argError(2, "initial position out of bounds");
  int64_t posj = relPos(j, s.size());
  if (!(--posj < int64_t(s.size()))) return cx.argError(3, "final position out of bounds");
  bool strict = !cx.arg(4).isTruthy();
  int64_t n = 0;
  while (posi <= posj) {
    uint32_t code;
    size_t next = decode(s, size_t(posi), code, strict);
    if (next == std::string_view::npos) {
      if (!cx.ensureStack(2)) return cx.stackOverflow();
      cx.push(Value::nil());
      cx.push(Value::integer(posi + 1));
      return cx.results(2);
    }
    posi = int64_t(next);
    n++;
  }
  if (!cx.push(Value::integer(n))) return cx.stackOverflow();
  return cx.results(1);
}

NativeResult utfOffset(CallContext& cx) {
  String* str;
  int64_t n, i;
  if (!cx.checkString(1, str) || !cx.checkInteger(2, n)) return cx.failure();
  std::string_view s = str->view();
  int64_t len = int64_t(s.size());
  if (!cx.optInteger(3, n >= 0 ? 1 : len + 1, i)) return cx.failure();
  int64_t posi = relPos(i, s.size());
  if (!(1 <= posi && --posi <= len)) return cx.argError(3, "position out of bounds");
  if (n == 0) {
    while (posi > 0 && isCont(s, size_t(posi))) posi--;
  } else {
    if (isCont(s, size_t(posi))) return cx.error("initial position is a continuation byte");
    if (n < 0) {
      while (n < 0 && posi > 0) {
        do {
          posi--;
        } while (posi > 0 && isCont(s, size_t(posi)));
        n++;
      }
    } else {
      n--;
      while (n > 0 && posi < len) {
        do {
          posi++;
        } while (isCont(s, size_t(posi)));
        n--;
      }
    }
  }
  if (!cx.push(n == 0 ? Value::integer(posi + 1) : Value::nil())) return cx.stackOverflow();
  return cx.results(1);
}

// The iterator of utf8.codes: control value is the byte position of the previous code.
// As the manual says (and Lua 5.4.6 does; 5.4.4 silently skipped them), a continuation
// byte that follows a complete character is an error, not something to skip.
template <bool Strict>
NativeResult utfIterate(CallContext& cx) {
  String* str;
  if (!cx.checkString(1, str)) return cx.failure();
  std::string_view s = str->view();
  Value control = cx.arg(2);
  uint64_t n = control.isInt() ? uint64_t(control.asInt()) : 0;
  if (n < s.size()) {
    while (isCont(s, size_t(n))) n++;
  }
  if (n >= s.size()) return cx.results(0);
  uint32_t code;
  size_t next = decode(s, size_t(n), code, Strict);
  if (next == std::string_view::npos || isCont(s, next)) return cx.error(kInvalid);
  if (!cx.ensureStack(2)) return cx.stackOverflow();
  cx.push(Value::integer(int64_t(n) + 1));
  cx.push(Value::integer(code));
  return cx.results(2);
}

NativeResult utfCodes(CallContext& cx) {
  String* str;
  if (!cx.checkString(1, str)) return cx.failure();
  if (isCont(str->view(), 0)) return cx.argError(1, kInvalid);
  if (!cx.ensureStack(3)) return cx.stackOverflow();
  cx.push(Value::lightNative(cx.arg(2).isTruthy() ? utfIterate<false> : utfIterate<true>));
  cx.push(Value::string(str));
  cx.push(Value::integer(0));
  return cx.results(3);
}

constexpr LibEntry kUtf8Lib[] = {
    {"char", utfChar}, {"codepoint", utfCodepoint}, {"codes", utfCodes}, {"len", utfLen}, {"offset", utfOffset},
};

}  // namespace

Status openUtf8Lib(State& state) {
  Table* lib;
  if (Status st = openLibrary(state, "utf8", kUtf8Lib, &lib); !st.isOk()) return st;
  static constexpr char kPattern[] = "[\0-\x7F\xC2-\xFD][\x80-\xBF]*";
  String* key = newString(state, "charpattern");
  String* value = newString(state, std::string_view(kPattern, sizeof kPattern - 1));
  if (!key || !value) return Status(StatusCode::kMemoryError);
  return tableSetStr(state, lib, key, Value::string(value));
}

}  // namespace weft::vm
