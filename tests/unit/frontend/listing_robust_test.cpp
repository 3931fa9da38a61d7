// Listings of any code that verifies, however odd its operands: the largest EXTRAARG
// after NEWTABLE and SETLIST must print its full count (it once overflowed an int, a
// UBSan report found by the chunk corruption test).
#include <gtest/gtest.h>

#include <string>

#include "frontend/listing.h"
#include "frontend/opcodes.h"
#include "frontend/proto.h"

namespace weft::frontend {
namespace {

ProtoData withExtraArg(Op op) {
  ProtoData p;
  p.source = "=listing";
  p.maxStackSize = 2;
  p.code = {makeABC(Op::NEWTABLE, 0, 0, kMaxArgC, true), makeAx(Op::EXTRAARG, kMaxArgAx)};
  if (op == Op::SETLIST) {
    p.code.push_back(makeABC(Op::SETLIST, 0, 1, kMaxArgC, true));
    p.code.push_back(makeAx(Op::EXTRAARG, kMaxArgAx));
  }
  p.code.push_back(makeABC(Op::RETURN0, 0, 1, 0));
  p.lineinfo.assign(p.code.size(), 1);
  return p;
}

// kMaxArgC + kMaxArgAx * (kMaxArgC + 1): beyond int.
const std::string kLargestCount = std::to_string(kMaxArgC + (long long)kMaxArgAx * (kMaxArgC + 1));

TEST(ListingRobust, NewTableWithLargestExtraArg) {
  std::string text = listing(withExtraArg(Op::NEWTABLE), true);
  EXPECT_NE(text.find("; " + kLargestCount), std::string::npos) << text;
}

TEST(ListingRobust, SetListWithLargestExtraArg) {
  std::string text = listing(withExtraArg(Op::SETLIST), true);
  size_t first = text.find("; " + kLargestCount);
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_NE(text.find("; " + kLargestCount, first + 1), std::string::npos) << text;
}

}  // namespace
}  // namespace weft::frontend
