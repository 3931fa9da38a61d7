// string.pack, string.unpack and string.packsize: the format reader and codecs
// (strpack.h) and the three natives.
#include "vm/lib/strpack.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "vm/lib/string.h"

namespace weft::vm {

namespace {
// A count keeps being read while one more digit cannot push it past the limit.
constexpr size_t kCountLimit = (kMaxPackTotal - 9) / 10;
bool isDigit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

bool PackFormatReader::fail(bool argError, std::string message) {
  error_.isArgError = argError;
  error_.message = std::move(message);
  return false;
}

size_t PackFormatReader::readCount(size_t def) {
  if (p_ >= end_ || !isDigit(*p_)) return def;
  size_t a = 0;
  do {
    a = a * 10 + size_t(*p_++ - '0');
  } while (p_ < end_ && isDigit(*p_) && a <= kCountLimit);
  return a;
}

bool PackFormatReader::readLimit(int def, int& out) {
  size_t n = readCount(size_t(def));
  if (n > size_t(kMaxIntSize) || n == 0)
    return fail(false, "integral size (" + std::to_string(n) + ") out of limits [1," + std::to_string(kMaxIntSize) + "]");
  out = int(n);
  return true;
}

bool PackFormatReader::readOption(PackOption& opt, size_t& size) {
  char c = *p_++;
  int n;
  switch (c) {
    case 'b': opt = PackOption::kInt; size = 1; return true;
    case 'B': opt = PackOption::kUint; size = 1; return true;
    case 'h': opt = PackOption::kInt; size = 2; return true;
    case 'H': opt = PackOption::kUint; size = 2; return true;
    case 'l': case 'j': opt = PackOption::kInt; size = 8; return true;
    case 'L': case 'J': case 'T': opt = PackOption::kUint; size = 8; return true;
    case 'f': opt = PackOption::kFloat; size = 4; return true;
    case 'n': case 'd': opt = PackOption::kDouble; size = 8; return true;
    case 'i':
      if (!readLimit(4, n)) return false;
      opt = PackOption::kInt; size = size_t(n); return true;
    case 'I':
      if (!readLimit(4, n)) return false;
      opt = PackOption::kUint; size = size_t(n); return true;
    case 's':
      if (!readLimit(8, n)) return false;
      opt = PackOption::kString; size = size_t(n); return true;
    case 'c':
      size = readCount(SIZE_MAX);
      if (size == SIZE_MAX) return fail(false, "missing size for format option 'c'");
      opt = PackOption::kChar; return true;
    case 'z': opt = PackOption::kZString; size = 0; return true;
    case 'x': opt = PackOption::kPadding; size = 1; return true;
    case 'X': opt = PackOption::kPadAlign; size = 0; return true;
    case ' ': break;
    case '<': little_ = true; break;
    case '>': little_ = false; break;
    case '=': little_ = true; break;  // every platform Weft supports is little endian
    case '!':
      if (!readLimit(kNativeMaxAlign, n)) return false;
      maxAlign_ = n;
      break;
    default: return fail(false, std::string("invalid format option '") + c + "'");
  }
  opt = PackOption::kNop;
  size = 0;
  return true;
}

bool PackFormatReader::next(size_t offset, PackItem& item) {
  if (!readOption(item.option, item.size)) return false;
  size_t align = item.size;
  if (item.option == PackOption::kPadAlign) {
    // 'X' takes its alignment from the option after it, which it consumes.
    PackOption nextOpt;
    if (p_ >= end_) return fail(true, "invalid next option for option 'X'");
    if (!readOption(nextOpt, align)) return false;
    if (nextOpt == PackOption::kChar || align == 0) return fail(true, "invalid next option for option 'X'");
  }
  item.padding = 0;
  if (align > 1 && item.option != PackOption::kChar) {
    if (align > size_t(maxAlign_)) align = size_t(maxAlign_);
    if ((align & (align - 1)) != 0) return fail(true, "format asks for alignment not power of 2");
    item.padding = (align - (offset & (align - 1))) & (align - 1);
  }
  return true;
}

void packInteger(std::string& out, uint64_t v, size_t size, bool little, bool negative) {
  char buf[kMaxIntSize];
  for (size_t i = 0; i < size; i++) {
    unsigned char byte = i < 8 ? static_cast<unsigned char>(v >> (8 * i)) : (negative ? 0xff : 0);
    buf[little ? i : size - 1 - i] = char(byte);
  }
  out.append(buf, size);
}

bool unpackInteger(const char* p, size_t size, bool little, bool isSigned, int64_t& out) {
  uint64_t res = 0;
  size_t limit = size < 8 ? size : 8;
  for (size_t i = 0; i < limit; i++) {
    unsigned char byte = static_cast<unsigned char>(p[little ? i : size - 1 - i]);
    res |= uint64_t(byte) << (8 * i);
  }
  if (size < 8) {
    if (isSigned) {
      uint64_t signBit = uint64_t(1) << (size * 8 - 1);
      res = (res ^ signBit) - signBit;
    }
  } else if (size > 8) {
    unsigned char mask = (!isSigned || int64_t(res) >= 0) ? 0 : 0xff;
    for (size_t i = 8; i < size; i++)
      if (static_cast<unsigned char>(p[little ? i : size - 1 - i]) != mask) return false;
  }
  out = int64_t(res);
  return true;
}

void packFloat(std::string& out, double v, bool isFloat, bool little) {
  char buf[8];
  size_t size = isFloat ? 4 : 8;
  if (isFloat) {
    float f = float(v);
    std::memcpy(buf, &f, 4);
  } else {
    std::memcpy(buf, &v, 8);
  }
  if (!little) std::reverse(buf, buf + size);
  out.append(buf, size);
}

double unpackFloat(const char* p, bool isFloat, bool little) {
  char buf[8];
  size_t size = isFloat ? 4 : 8;
  std::memcpy(buf, p, size);
  if (!little) std::reverse(buf, buf + size);
  if (isFloat) {
    float f;
    std::memcpy(&f, buf, 4);
    return f;
  }
  double d;
  std::memcpy(&d, buf, 8);
  return d;
}

bool packSize(std::string_view fmt, size_t& size, PackError& error) {
  PackFormatReader reader(fmt);
  size_t total = 0;
  while (!reader.done()) {
    PackItem item;
    if (!reader.next(total, item)) {
      error = reader.error();
      return false;
    }
    if (item.option == PackOption::kString || item.option == PackOption::kZString) {
      error = PackError{true, "variable-length format"};
      return false;
    }
    size_t need = item.padding + item.size;
    if (total > kMaxPackTotal - need || need > kMaxPackTotal) {
      error = PackError{true, "format result too large"};
      return false;
    }
    total += need;
  }
  size = total;
  return true;
}

namespace {

NativeResult formatError(CallContext& cx, const PackError& e) {
  if (e.isArgError) return cx.argError(1, e.message);
  return cx.error("%s", e.message.c_str());
}

// Packs one value-consuming item; false with `outcome` set on a bad argument.
bool packItem(CallContext& cx, const PackItem& item, bool little, uint32_t arg, std::string& out, NativeResult& outcome) {
  if (!cx.hasArg(arg)) {
    // lua5.4 reports a missing value as nil here (its buffer sits above the arguments).
    bool numeric = item.option == PackOption::kInt || item.option == PackOption::kUint ||
                   item.option == PackOption::kFloat || item.option == PackOption::kDouble;
    outcome = cx.argError(arg, numeric ? "number expected, got nil" : "string expected, got nil");
    return false;
  }
  switch (item.option) {
    case PackOption::kInt:
    case PackOption::kUint: {
      int64_t n;
      if (!cx.checkInteger(arg, n)) {
        outcome = cx.failure();
        return false;
      }
      if (item.size < 8) {
        bool fits;
        if (item.option == PackOption::kInt) {
          int64_t lim = int64_t(1) << (item.size * 8 - 1);
          fits = -lim <= n && n < lim;
        } else {
          fits = uint64_t(n) < (uint64_t(1) << (item.size * 8));
        }
        if (!fits) {
          outcome = cx.argError(arg, item.option == PackOption::kInt ? "integer overflow" : "unsigned overflow");
          return false;
        }
      }
      packInteger(out, uint64_t(n), item.size, little, item.option == PackOption::kInt && n < 0);
      return true;
    }
    case PackOption::kFloat:
    case PackOption::kDouble: {
      double d;
      if (!cx.checkNumber(arg, d)) {
        outcome = cx.failure();
        return false;
      }
      packFloat(out, d, item.option == PackOption::kFloat, little);
      return true;
    }
    default: break;
  }
  String* s;
  if (!cx.checkString(arg, s)) {
    outcome = cx.failure();
    return false;
  }
  std::string_view v = s->view();
  if (item.option == PackOption::kChar) {
    if (v.size() > item.size) {
      outcome = cx.argError(arg, "string longer than given size");
      return false;
    }
    out.append(v);
    out.append(item.size - v.size(), '\0');
  } else if (item.option == PackOption::kString) {
    if (item.size < 8 && v.size() >= (uint64_t(1) << (item.size * 8))) {
      outcome = cx.argError(arg, "string length does not fit in given size");
      return false;
    }
    packInteger(out, v.size(), item.size, little, false);
    out.append(v);
  } else {
    if (v.find('\0') != std::string_view::npos) {
      outcome = cx.argError(arg, "string contains zeros");
      return false;
    }
    out.append(v);
    out += '\0';
  }
  return true;
}

}  // namespace

NativeResult strPack(CallContext& cx) {
  String* fmtString;
  if (!cx.checkString(1, fmtString)) return cx.failure();
  BufferLease lease;
  std::string& out = lease.get();
  // Argument conversions allocate but never collect, so the format stays put.
  PackFormatReader reader(fmtString->view());
  uint32_t arg = 1;
  while (!reader.done()) {
    PackItem item;
    if (!reader.next(out.size(), item)) return formatError(cx, reader.error());
    if (item.padding + item.size > kMaxPackTotal - out.size()) return cx.argError(1, "format result too large");
    if (!bufferMayGrow(cx, out.size() + item.padding + item.size)) return cx.memoryError();
    out.append(item.padding, '\0');
    switch (item.option) {
      case PackOption::kPadding: out += '\0'; break;
      case PackOption::kPadAlign:
      case PackOption::kNop: break;
      default: {
        NativeResult outcome;
        if (!packItem(cx, item, reader.littleEndian(), ++arg, out, outcome)) return outcome;
      }
    }
  }
  return returnString(cx, out);
}

NativeResult strPackSize(CallContext& cx) {
  String* fmtString;
  if (!cx.checkString(1, fmtString)) return cx.failure();
  size_t size;
  PackError error;
  if (!packSize(fmtString->view(), size, error)) return formatError(cx, error);
  if (!cx.push(Value::integer(int64_t(size)))) return cx.stackOverflow();
  return cx.results(1);
}

namespace {

// Pushes the value of one item at data[pos]; advances pos past variable-length parts.
bool unpackItem(CallContext& cx, const PackItem& item, bool little, std::string_view data, size_t& pos, NativeResult& outcome) {
  const char* p = data.data() + pos;
  Value v;
  switch (item.option) {
    case PackOption::kInt:
    case PackOption::kUint: {
      int64_t n;
      if (!unpackInteger(p, item.size, little, item.option == PackOption::kInt, n)) {
        outcome = cx.error("%zu-byte integer does not fit into Lua Integer", item.size);
        return false;
      }
      v = Value::integer(n);
      break;
    }
    case PackOption::kFloat:
    case PackOption::kDouble:
      v = Value::number(unpackFloat(p, item.option == PackOption::kFloat, little));
      break;
    case PackOption::kChar:
      if (!pushString(cx, std::string_view(p, item.size))) {
        outcome = cx.failure();
        return false;
      }
      return true;
    case PackOption::kString: {
      int64_t len;
      if (!unpackInteger(p, item.size, little, false, len)) {
        outcome = cx.error("%zu-byte integer does not fit into Lua Integer", item.size);
        return false;
      }
      if (uint64_t(len) > data.size() - pos - item.size) {
        outcome = cx.argError(2, "data string too short");
        return false;
      }
      if (!pushString(cx, std::string_view(p + item.size, size_t(len)))) {
        outcome = cx.failure();
        return false;
      }
      pos += size_t(len);
      return true;
    }
    default: {  // kZString
      size_t len = strnlen(p, data.size() - pos);
      if (pos + len >= data.size()) {
        outcome = cx.argError(2, "unfinished string for format 'z'");
        return false;
      }
      if (!pushString(cx, std::string_view(p, len))) {
        outcome = cx.failure();
        return false;
      }
      pos += len + 1;
      return true;
    }
  }
  return pushValue(cx, v, outcome);
}

}  // namespace

NativeResult strUnpack(CallContext& cx) {
  String* fmtString;
  String* dataString;
  int64_t init;
  if (!cx.checkString(1, fmtString) || !cx.checkString(2, dataString) || !cx.optInteger(3, 1, init))
    return cx.failure();
  // Results are allocated without collecting, so both strings stay put while we push.
  std::string_view data = dataString->view();
  size_t pos = startPosition(init, data.size()) - 1;
  if (pos > data.size()) return cx.argError(3, "initial position out of string");
  PackFormatReader reader(fmtString->view());
  int32_t n = 0;
  while (!reader.done()) {
    PackItem item;
    if (!reader.next(pos, item)) return formatError(cx, reader.error());
    if (item.padding + item.size > data.size() - pos) return cx.argError(2, "data string too short");
    pos += item.padding;
    if (item.option != PackOption::kPadding && item.option != PackOption::kPadAlign && item.option != PackOption::kNop) {
      if (!cx.ensureStack(2)) return cx.error("too many results");
      NativeResult outcome;
      if (!unpackItem(cx, item, reader.littleEndian(), data, pos, outcome)) return outcome;
      n++;
    }
    pos += item.size;
  }
  if (!cx.push(Value::integer(int64_t(pos) + 1))) return cx.stackOverflow();
  return cx.results(n + 1);
}

}  // namespace weft::vm
