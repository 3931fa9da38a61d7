// The engine of string.format (manual §6.4): parsing one conversion specification with
// Lua 5.4's validation, and formatting numbers, characters, strings and %q literals
// into a byte buffer. Pure functions: no VM, no allocation beyond the output buffer.
//
// Invariants:
//  1. A specification is at most kMaxFormatSpec bytes and width/precision at most two
//     digits each, so every single conversion fits in kMaxFormatItem bytes.
//  2. Only specifications the manual allows reach snprintf (no F, n, *, h, L, l).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace weft::vm {

inline constexpr size_t kMaxFormatSpec = 32;
inline constexpr size_t kMaxFormatItem = 512;

struct FormatSpec {
  char form[kMaxFormatSpec];  // "%<flags/width/precision><conv>", NUL-terminated
  size_t formLen = 0;
  char conv = 0;
  bool hasModifiers = false;  // anything between '%' and the conversion
};

enum class SpecStatus : uint8_t {
  kOk,
  kTooLong,            // "invalid format (too long)"
  kInvalidConversion,  // "invalid conversion '%s' to 'format'"
  kInvalidSpec,        // "invalid conversion specification: '%s'"
  kQuoteModifiers,     // "specifier '%q' cannot have modifiers"
};

// Parses the specification starting at fmt[pos] (just after the '%') and advances pos
// past the conversion character: kTooLong, kInvalidConversion or kQuoteModifiers on
// failure. The flags, width and precision are validated separately (checkFormatSpec),
// because lua5.4 checks a numeric argument before them.
SpecStatus parseFormatSpec(std::string_view fmt, size_t& pos, FormatSpec& spec);
// kInvalidSpec if a flag is not allowed for the conversion or a width or precision is
// longer than two digits.
SpecStatus checkFormatSpec(const FormatSpec& spec);
// Lua's message for a failed parse.
std::string specErrorMessage(SpecStatus status, const FormatSpec& spec);

// Conversions; each appends to `out`.
void formatIntegerItem(std::string& out, const FormatSpec& spec, int64_t v);  // d i u o x X
void formatFloatItem(std::string& out, const FormatSpec& spec, double v);     // a A e E f g G
void formatCharItem(std::string& out, const FormatSpec& spec, int c);         // c
// s and p: width, '-' and (for s) precision applied to bytes.
void formatStringItem(std::string& out, const FormatSpec& spec, std::string_view s);

// %q forms (Lua source literals that read back as the same value).
void quoteString(std::string& out, std::string_view s);
void quoteInteger(std::string& out, int64_t v);
void quoteFloat(std::string& out, double v);

}  // namespace weft::vm
