// Waiting on another thread's progress in a unit test, with a deadline. A lost wakeup or
// a stuck thread then fails the test and names what it waited for, instead of hanging
// it until ctest's TIMEOUT (tests/CMakeLists.txt) kills the binary without a reason.
//
//   ASSERT_TRUE(waitUntil([&] { return allParked(s); }, "every worker to park"));
//
// In a helper thread, use EXPECT_TRUE: an ASSERT there only returns from the thread's
// function, and the test thread must not be left waiting for what that thread skipped.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string_view>
#include <thread>

namespace weft::test {

// Generous for a loaded two-core machine under a sanitizer, and far below the ctest
// TIMEOUT, so that the wait fails first and says why.
inline constexpr std::chrono::milliseconds kWaitTimeout{10000};

// Polls `done` until it holds or `timeout` passes. `what` names the awaited event
// ("every worker to park"); the failure reads "gave up after 10000 ms waiting for ...".
// The pause between polls grows from 50 us to 1 ms: a short wait ends promptly, and a
// long one leaves the two cores to the threads it waits for.
template <typename Pred>
testing::AssertionResult waitUntil(Pred done, std::string_view what,
                                   std::chrono::milliseconds timeout = kWaitTimeout) {
  auto end = std::chrono::steady_clock::now() + timeout;
  std::chrono::microseconds pause{50};
  while (!done()) {
    if (std::chrono::steady_clock::now() > end)
      return testing::AssertionFailure() << "gave up after " << timeout.count() << " ms waiting for " << what;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
  return testing::AssertionSuccess();
}

}  // namespace weft::test
