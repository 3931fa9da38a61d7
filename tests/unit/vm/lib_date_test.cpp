// os.date's formatter (vm/lib/os.h): C99 conversions accepted as Lua 5.4 accepts them,
// and the invalid-specifier report (expectations from lua5.4 with TZ=UTC).
#include <gtest/gtest.h>

#include <ctime>
#include <string>

#include "vm/lib/os.h"

namespace weft::vm {
namespace {

std::tm utc(std::time_t t) {
  std::tm tm;
  gmtime_r(&t, &tm);
  return tm;
}

std::string date(std::string_view fmt, std::time_t t) {
  std::string out, rest;
  if (!formatDate(out, fmt, utc(t), rest)) return "invalid: " + rest;
  return out;
}

TEST(LibDate, Conversions) {
  const std::time_t t = 86400 * 365;  // 1971-01-01 00:00:00 UTC, a Friday
  EXPECT_EQ(date("%Y-%m-%d %H:%M:%S", t), "1971-01-01 00:00:00");
  EXPECT_EQ(date("%a %A %b %B", t), "Fri Friday Jan January");
  EXPECT_EQ(date("%c", t), "Fri Jan  1 00:00:00 1971");
  EXPECT_EQ(date("%j %u %w %y %C %e", t), "001 5 5 71 19  1");
  EXPECT_EQ(date("%D %F %R %T", t), "01/01/71 1971-01-01 00:00 00:00:00");
  EXPECT_EQ(date("%g %G %V %U %W", t), "70 1970 53 00 00");
  EXPECT_EQ(date("%Ec|%EY|%Od|%OH", t), "Fri Jan  1 00:00:00 1971|1971|01|00");
  EXPECT_EQ(date("%% %n%t", t), "% \n\t");
  EXPECT_EQ(date("", t), "");
  EXPECT_EQ(date(std::string_view("a\0b", 3), t), std::string("a\0b", 3));
}

TEST(LibDate, InvalidSpecifiers) {
  EXPECT_EQ(date("%Q", 0), "invalid: %Q");
  EXPECT_EQ(date("%", 0), "invalid: %");
  EXPECT_EQ(date("%E", 0), "invalid: %E");
  EXPECT_EQ(date("%Ez", 0), "invalid: %Ez");
  EXPECT_EQ(date("%Oa", 0), "invalid: %Oa");
  EXPECT_EQ(date("ok %H %k %l", 0), "invalid: %k %l");  // Lua quotes the rest of the format
}

}  // namespace
}  // namespace weft::vm
