// Shared by the C++ API tests: a Runtime, failing the test (with the reason) when it
// cannot be made.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "weft/weft.hpp"

namespace weft::test {

inline std::unique_ptr<Runtime> make(Options o = {}) {
  auto rt = Runtime::create(o);
  EXPECT_TRUE(rt.hasValue()) << (rt ? "" : rt.error().message);
  return rt ? std::move(*rt) : nullptr;
}

}  // namespace weft::test
