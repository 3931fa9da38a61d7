// The string.pack engine (vm/lib/strpack.h): option reading, sizes, alignment, the
// integer and float codecs, and Lua 5.4's format errors (checked against lua5.4).
#include <gtest/gtest.h>

#include <string>

#include "vm/lib/strpack.h"

namespace weft::vm {
namespace {

std::string sizeOrError(std::string_view fmt) {
  size_t size;
  PackError e;
  if (packSize(fmt, size, e)) return std::to_string(size);
  return (e.isArgError ? "arg: " : "error: ") + e.message;
}

TEST(LibPack, Sizes) {
  EXPECT_EQ(sizeOrError("i4i8"), "12");
  EXPECT_EQ(sizeOrError("!i1i8"), "16");
  EXPECT_EQ(sizeOrError("!4i1i8"), "12");
  EXPECT_EQ(sizeOrError("<i3!2xXi8"), "4");
  EXPECT_EQ(sizeOrError("i16i16"), "32");
  EXPECT_EQ(sizeOrError("bBhHlLjJTfdn"), "66");
  EXPECT_EQ(sizeOrError("c10"), "10");
  EXPECT_EQ(sizeOrError(" <>=!"), "0");
}

TEST(LibPack, FormatErrors) {
  EXPECT_EQ(sizeOrError("i17"), "error: integral size (17) out of limits [1,16]");
  EXPECT_EQ(sizeOrError("i0"), "error: integral size (0) out of limits [1,16]");
  EXPECT_EQ(sizeOrError("!17"), "error: integral size (17) out of limits [1,16]");
  EXPECT_EQ(sizeOrError("y"), "error: invalid format option 'y'");
  EXPECT_EQ(sizeOrError("c"), "error: missing size for format option 'c'");
  EXPECT_EQ(sizeOrError("!3i4"), "arg: format asks for alignment not power of 2");
  EXPECT_EQ(sizeOrError("X"), "arg: invalid next option for option 'X'");
  EXPECT_EQ(sizeOrError("Xz"), "arg: invalid next option for option 'X'");
  EXPECT_EQ(sizeOrError("Xc1"), "arg: invalid next option for option 'X'");
  EXPECT_EQ(sizeOrError("s"), "arg: variable-length format");
  EXPECT_EQ(sizeOrError("z"), "arg: variable-length format");
  // A count that would overflow stops being read; the rest is the next option.
  EXPECT_EQ(sizeOrError("c2147483648"), "error: invalid format option '8'");
  EXPECT_EQ(sizeOrError("c99999999999999999999"), "error: invalid format option '9'");
  EXPECT_EQ(sizeOrError("c1000000000c1000000000c1000000000"), "arg: format result too large");
}

TEST(LibPack, Alignment) {
  PackFormatReader r("!8bd");
  PackItem item;
  ASSERT_TRUE(r.next(0, item));  // '!8' itself
  EXPECT_EQ(item.option, PackOption::kNop);
  ASSERT_TRUE(r.next(0, item));
  EXPECT_EQ(item.option, PackOption::kInt);
  ASSERT_TRUE(r.next(1, item));
  EXPECT_EQ(item.option, PackOption::kDouble);
  EXPECT_EQ(item.padding, 7u);
  EXPECT_TRUE(r.done());
}

TEST(LibPack, IntegerCodec) {
  std::string out;
  packInteger(out, uint64_t(-2), 3, true, true);
  EXPECT_EQ(out, std::string("\xfe\xff\xff", 3));
  out.clear();
  packInteger(out, 0x0102, 2, false, false);
  EXPECT_EQ(out, std::string("\x01\x02", 2));
  out.clear();
  packInteger(out, uint64_t(-3), 16, true, true);
  int64_t v;
  ASSERT_TRUE(unpackInteger(out.data(), 16, true, true, v));
  EXPECT_EQ(v, -3);
  EXPECT_FALSE(unpackInteger(out.data(), 16, true, false, v));  // unsigned: high bytes must be 0
  std::string nine("\0\0\0\0\0\0\0\0\1", 9);
  EXPECT_FALSE(unpackInteger(nine.data(), 9, true, true, v));
  std::string ff(9, '\xff');
  ASSERT_TRUE(unpackInteger(ff.data(), 9, true, true, v));
  EXPECT_EQ(v, -1);
  ASSERT_TRUE(unpackInteger("\x80", 1, true, true, v));
  EXPECT_EQ(v, -128);
  ASSERT_TRUE(unpackInteger("\x80", 1, true, false, v));
  EXPECT_EQ(v, 128);
}

TEST(LibPack, FloatCodec) {
  std::string out;
  packFloat(out, 5.5, false, false);
  EXPECT_EQ(out, std::string("\x40\x16\0\0\0\0\0\0", 8));
  EXPECT_EQ(unpackFloat(out.data(), false, false), 5.5);
  out.clear();
  packFloat(out, 1.5, true, true);
  EXPECT_EQ(unpackFloat(out.data(), true, true), 1.5);
}

}  // namespace
}  // namespace weft::vm
