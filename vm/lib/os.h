// The os library's pure parts (manual §6.9): os.date's conversion checking and
// formatting, usable without a VM (unit tests).
#pragma once

#include <ctime>
#include <string>
#include <string_view>

namespace weft::vm {

// Formats `fmt` (without the leading '!' or "*t") with strftime, one conversion at a
// time, accepting only the C99 conversions Lua 5.4 accepts (with the E and O
// modifiers where C99 allows them). On an invalid conversion returns false and sets
// `rest` to the format from that '%' on (Lua's message quotes it).
bool formatDate(std::string& out, std::string_view fmt, const std::tm& tm, std::string& rest);

}  // namespace weft::vm
