// The engine of string.pack, string.unpack and string.packsize (manual §6.4.2): a
// reader of format strings that yields one option at a time with its size and the
// padding that aligns it, and the integer/float byte codecs. Pure: no VM.
//
// Invariants:
//  1. Sizes are bounded: integers 1..16 bytes, 'c'/'s' counts read with overflow
//     protection (a count that would pass kMaxPackCount stops being read, and the rest
//     is parsed as the next option, as Lua 5.4 does).
//  2. The reader never reads past the end of the format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace weft::vm {

inline constexpr int kMaxIntSize = 16;
inline constexpr size_t kMaxPackTotal = 0x7fffffff;  // "format result too large" beyond
inline constexpr int kNativeMaxAlign = 8;

enum class PackOption : uint8_t {
  kInt,        // signed integer
  kUint,       // unsigned integer
  kFloat,      // 'f': 4-byte float
  kDouble,     // 'd', 'n'
  kChar,       // 'cn': fixed-size string
  kString,     // 'sn': length-prefixed string
  kZString,    // 'z'
  kPadding,    // 'x'
  kPadAlign,   // 'X'
  kNop,        // ' ', '<', '>', '=', '!'
};

struct PackItem {
  PackOption option;
  size_t size;      // bytes of the item (for kString, of its length prefix)
  size_t padding;   // zero bytes before it (alignment)
};

// How a format failed: some errors are argument errors on the format (#1), the others
// plain errors, exactly as Lua raises them.
struct PackError {
  bool isArgError = false;
  std::string message;
};

class PackFormatReader {
 public:
  explicit PackFormatReader(std::string_view fmt) : p_(fmt.data()), end_(fmt.data() + fmt.size()) {}
  bool done() const { return p_ >= end_; }
  // Reads the next option; `offset` is the byte position the item would start at (for
  // alignment). False on error (see error()).
  bool next(size_t offset, PackItem& item);
  bool littleEndian() const { return little_; }
  const PackError& error() const { return error_; }

 private:
  bool readOption(PackOption& opt, size_t& size);
  bool readLimit(int def, int& out);
  size_t readCount(size_t def);
  bool fail(bool argError, std::string message);

  const char* p_;
  const char* end_;
  bool little_ = true;
  int maxAlign_ = 1;
  PackError error_;
};

// Appends `size` bytes of v in the given byte order; beyond 8 bytes, sign-extends.
void packInteger(std::string& out, uint64_t v, size_t size, bool little, bool negative);
// Reads a size-byte integer. False if it does not fit a Lua integer (size > 8 with
// significant high bytes).
bool unpackInteger(const char* p, size_t size, bool little, bool isSigned, int64_t& out);
void packFloat(std::string& out, double v, bool isFloat, bool little);
double unpackFloat(const char* p, bool isFloat, bool little);

// string.packsize's computation; false with `error` for variable-length formats etc.
bool packSize(std::string_view fmt, size_t& size, PackError& error);

}  // namespace weft::vm
