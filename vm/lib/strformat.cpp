// string.format: the specification parser and item formatters (strformat.h) and the
// native that walks the format string. Numeric items go through snprintf with the
// validated specification, which is what the manual defines them by.
#include "vm/lib/strformat.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "vm/lib/string.h"
#include "vm/string.h"

namespace weft::vm {

namespace {

constexpr std::string_view kSpanChars = "-+ #0123456789.";
// Lua refuses specifications whose flags, width and precision span this many bytes.
constexpr size_t kMaxSpan = 22;

const char* skipDigits(const char* q) {
  if (std::isdigit(static_cast<unsigned char>(*q))) q++;
  if (std::isdigit(static_cast<unsigned char>(*q))) q++;
  return q;
}

// Flags must come from `flags`; width and precision have at most two digits; a width
// cannot start with '0' (that would be a flag the conversion does not accept).
bool checkSpec(const FormatSpec& spec, const char* flags, bool precision) {
  const char* q = spec.form + 1;
  while (*q && std::strchr(flags, *q)) q++;
  if (*q != '0') {
    q = skipDigits(q);
    if (*q == '.' && precision) q = skipDigits(q + 1);
  }
  return q == spec.form + spec.formLen - 1 && std::isalpha(static_cast<unsigned char>(*q));
}

void appendFormatted(std::string& out, const char* form, auto value) {
  char buf[kMaxFormatItem];
  int n = std::snprintf(buf, sizeof buf, form, value);
  if (n > 0) out.append(buf, size_t(n) < sizeof buf ? size_t(n) : sizeof buf - 1);
}

}  // namespace

SpecStatus parseFormatSpec(std::string_view fmt, size_t& pos, FormatSpec& spec) {
  size_t start = pos;
  while (pos < fmt.size() && kSpanChars.find(fmt[pos]) != std::string_view::npos) pos++;
  size_t span = pos - start;
  spec.form[0] = '%';
  if (span + 1 >= kMaxSpan) {
    spec.formLen = 1;
    spec.form[1] = 0;
    return SpecStatus::kTooLong;
  }
  std::memcpy(spec.form + 1, fmt.data() + start, span);
  spec.formLen = span + 1;
  spec.conv = pos < fmt.size() ? fmt[pos] : 0;
  if (spec.conv) {
    spec.form[spec.formLen++] = spec.conv;
    pos++;
  }
  spec.form[spec.formLen] = 0;
  spec.hasModifiers = span > 0;
  switch (spec.conv) {
    case 'c': case 'd': case 'i': case 'u': case 'o': case 'x': case 'X':
    case 'a': case 'A': case 'e': case 'E': case 'f': case 'g': case 'G':
    case 'p': case 's':
      return SpecStatus::kOk;
    case 'q': return span ? SpecStatus::kQuoteModifiers : SpecStatus::kOk;
    default: return SpecStatus::kInvalidConversion;
  }
}

SpecStatus checkFormatSpec(const FormatSpec& spec) {
  bool ok;
  switch (spec.conv) {
    case 'c': case 'p': ok = checkSpec(spec, "-", false); break;
    case 'd': case 'i': ok = checkSpec(spec, "-+0 ", true); break;
    case 'u': ok = checkSpec(spec, "-0", true); break;
    case 'o': case 'x': case 'X': ok = checkSpec(spec, "-#0", true); break;
    case 's': ok = checkSpec(spec, "-", true); break;
    default: ok = checkSpec(spec, "-+ #0", true); break;
  }
  return ok ? SpecStatus::kOk : SpecStatus::kInvalidSpec;
}

std::string specErrorMessage(SpecStatus status, const FormatSpec& spec) {
  std::string form(spec.form, spec.formLen);
  switch (status) {
    case SpecStatus::kTooLong: return "invalid format (too long)";
    case SpecStatus::kInvalidConversion: return "invalid conversion '" + form + "' to 'format'";
    case SpecStatus::kInvalidSpec: return "invalid conversion specification: '" + form + "'";
    case SpecStatus::kQuoteModifiers: return "specifier '%q' cannot have modifiers";
    case SpecStatus::kOk: break;
  }
  return {};
}

void formatIntegerItem(std::string& out, const FormatSpec& spec, int64_t v) {
  if (spec.formLen == 2 && spec.conv == 'd') {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, size_t(r.ptr - buf));
    return;
  }
  // The same specification with the "ll" length modifier for a 64-bit argument.
  char form[kMaxFormatSpec + 2];
  std::memcpy(form, spec.form, spec.formLen - 1);
  std::memcpy(form + spec.formLen - 1, "ll", 2);
  form[spec.formLen + 1] = spec.conv;
  form[spec.formLen + 2] = 0;
  appendFormatted(out, form, static_cast<long long>(v));
}

void formatFloatItem(std::string& out, const FormatSpec& spec, double v) {
  appendFormatted(out, spec.form, v);
}

void formatCharItem(std::string& out, const FormatSpec& spec, int c) {
  appendFormatted(out, spec.form, c);
}

void formatStringItem(std::string& out, const FormatSpec& spec, std::string_view s) {
  const char* q = spec.form + 1;
  bool left = false;
  while (*q == '-') {
    left = true;
    q++;
  }
  size_t width = 0;
  while (std::isdigit(static_cast<unsigned char>(*q))) width = width * 10 + size_t(*q++ - '0');
  if (*q == '.') {
    size_t precision = 0;
    q++;
    while (std::isdigit(static_cast<unsigned char>(*q))) precision = precision * 10 + size_t(*q++ - '0');
    if (s.size() > precision) s = s.substr(0, precision);
  }
  size_t pad = width > s.size() ? width - s.size() : 0;
  if (!left) out.append(pad, ' ');
  out.append(s);
  if (left) out.append(pad, ' ');
}

void quoteString(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size(); i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\' || c == '\n') {
      out += '\\';
      out += char(c);
    } else if (std::iscntrl(c)) {
      // A following digit would extend the escape, so pad to three digits then.
      bool digitNext = i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]));
      char buf[8];
      int n = std::snprintf(buf, sizeof buf, digitNext ? "\\%03d" : "\\%d", int(c));
      out.append(buf, size_t(n));
    } else {
      out += char(c);
    }
  }
  out += '"';
}

void quoteInteger(std::string& out, int64_t v) {
  // The minimum integer has no decimal literal (its negation overflows): use hex.
  if (v == INT64_MIN) {
    out += "0x8000000000000000";
    return;
  }
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, size_t(r.ptr - buf));
}

void quoteFloat(std::string& out, double v) {
  if (v == HUGE_VAL) out += "1e9999";
  else if (v == -HUGE_VAL) out += "-1e9999";
  else if (v != v) out += "(0/0)";
  else appendFormatted(out, "%a", v);
}

namespace {

// %p: the identity of reference values (strings included, as lua_topointer has them);
// objects move, so like tostring it shows the identity hash rather than an address.
void pointerText(const Value& v, std::string& text) {
  char buf[40];
  int n;
  if (v.isString()) n = std::snprintf(buf, sizeof buf, "0x%08x", stringIdentity(v.asString()));
  else if (v.isCollectable()) n = std::snprintf(buf, sizeof buf, "0x%08x", v.u.obj->header.hash);
  else if (v.tag == Tag::LightUserdata) n = std::snprintf(buf, sizeof buf, "%p", v.u.p);
  else if (v.tag == Tag::LightNative || v.tag == Tag::LightCFunction) n = std::snprintf(buf, sizeof buf, "%p", reinterpret_cast<void*>(v.u.fn));
  else n = std::snprintf(buf, sizeof buf, "(null)");
  text.assign(buf, size_t(n));
}

bool specError(CallContext& cx, const FormatSpec& spec, NativeResult& outcome) {
  outcome = cx.error("%s", specErrorMessage(SpecStatus::kInvalidSpec, spec).c_str());
  return false;
}

bool formatQuoted(CallContext& cx, uint32_t arg, std::string& out, NativeResult& outcome) {
  Value v = cx.arg(arg);
  switch (v.tag) {
    case Tag::String: quoteString(out, v.asString()->view()); return true;
    case Tag::Int: quoteInteger(out, v.asInt()); return true;
    case Tag::Float: quoteFloat(out, v.asFloat()); return true;
    case Tag::Nil: out += "nil"; return true;
    case Tag::False: out += "false"; return true;
    case Tag::True: out += "true"; return true;
    default: outcome = cx.argError(arg, "value has no literal form"); return false;
  }
}

// %s: may run __tostring (a collection may happen; the caller re-reads the format).
bool formatStringArgMayGC(CallContext& cx, const FormatSpec& spec, uint32_t arg, std::string& out, NativeResult& outcome) {
  Value v = cx.arg(arg);
  String* s;
  if (v.isString()) {
    s = v.asString();
  } else if (Status st = cx.toStringMayGC(v, s); !st.isOk()) {
    outcome = NativeResult{0, st.code()};
    return false;
  }
  std::string_view text = s->view();
  if (!spec.hasModifiers) {
    out.append(text);
    return true;
  }
  if (text.find('\0') != std::string_view::npos) {
    outcome = cx.argError(arg, "string contains zeros");
    return false;
  }
  if (checkFormatSpec(spec) != SpecStatus::kOk) return specError(cx, spec, outcome);
  formatStringItem(out, spec, text);
  return true;
}

// Validates the flags where lua5.4 does: after converting a numeric argument (so a bad
// argument is reported first), before it for %c and %p.
bool formatItemMayGC(CallContext& cx, const FormatSpec& spec, uint32_t arg, std::string& out, NativeResult& outcome) {
  bool specOk = checkFormatSpec(spec) == SpecStatus::kOk;
  switch (spec.conv) {
    case 'c': case 'd': case 'i': case 'u': case 'o': case 'x': case 'X': {
      if (spec.conv == 'c' && !specOk) return specError(cx, spec, outcome);
      int64_t v;
      if (!cx.checkInteger(arg, v)) {
        outcome = cx.failure();
        return false;
      }
      if (!specOk) return specError(cx, spec, outcome);
      if (spec.conv == 'c') formatCharItem(out, spec, int(v));
      else formatIntegerItem(out, spec, v);
      return true;
    }
    case 'a': case 'A': case 'e': case 'E': case 'f': case 'g': case 'G': {
      double v;
      if (!cx.checkNumber(arg, v)) {
        outcome = cx.failure();
        return false;
      }
      if (!specOk) return specError(cx, spec, outcome);
      formatFloatItem(out, spec, v);
      return true;
    }
    case 'p': {
      if (!specOk) return specError(cx, spec, outcome);
      std::string text;
      pointerText(cx.arg(arg), text);
      formatStringItem(out, spec, text);
      return true;
    }
    case 'q': return formatQuoted(cx, arg, out, outcome);
    default: return formatStringArgMayGC(cx, spec, arg, out, outcome);
  }
}

}  // namespace

NativeResult strFormat(CallContext& cx) {
  String* fmtString;
  if (!cx.checkString(1, fmtString)) return cx.failure();
  // Keep the format on the stack: a __tostring run by %s may move it.
  uint32_t fmtSlot = cx.top();
  if (!cx.push(Value::string(fmtString))) return cx.stackOverflow();
  BufferLease lease;
  std::string& out = lease.get();
  std::string_view fmt = fmtString->view();
  uint32_t arg = 1;
  size_t pos = 0;
  while (pos < fmt.size()) {
    const void* hit = std::memchr(fmt.data() + pos, '%', fmt.size() - pos);
    if (!hit) {
      out.append(fmt.substr(pos));
      break;
    }
    size_t pct = size_t(static_cast<const char*>(hit) - fmt.data());
    out.append(fmt.substr(pos, pct - pos));
    pos = pct + 1;
    if (pos < fmt.size() && fmt[pos] == '%') {
      out += '%';
      pos++;
      continue;
    }
    if (++arg > cx.argCount()) return cx.argError(arg, "no value");
    FormatSpec spec;
    SpecStatus st = parseFormatSpec(fmt, pos, spec);
    if (st != SpecStatus::kOk) return cx.error("%s", specErrorMessage(st, spec).c_str());
    NativeResult outcome;
    if (!formatItemMayGC(cx, spec, arg, out, outcome)) return outcome;
    fmt = cx.at(fmtSlot).asString()->view();
  }
  return returnString(cx, out);
}

}  // namespace weft::vm
