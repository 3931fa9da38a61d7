// The task library after its runtime is gone: an embedder may destroy the Runtime and
// keep running Lua in the State, with task functions, handles and channels still held
// by scripts. Each call must fail with a Lua error, never touch the freed runtime.
#include <gtest/gtest.h>

#include <string>

#include "runtime/runtime.h"
#include "vm/host.h"

namespace weft::runtime {
namespace {

std::string runMayGC(vm::HostStack& h, const std::string& chunk) {
  h.setTop(0);
  if (!h.loadMayGC(chunk, "=test").isOk()) return "load error";
  if (h.pcallMayGC(0, 0, false).isOk()) return "ok";
  std::string message;
  if (!h.toStringMayGC(-1, message).isOk()) return "unprintable error";
  return message;
}

TEST(RuntimeEnd, TheTaskLibraryRaisesAfterTheRuntimeIsDestroyed) {
  std::unique_ptr<vm::State> state = vm::newStandardState({});
  ASSERT_NE(state, nullptr);
  vm::HostStack h(*state);
  {
    RuntimeOptions options;
    options.workers = 1;
    auto rt = Runtime::start(*state, options);
    ASSERT_TRUE(rt.hasValue());
    EXPECT_EQ(runMayGC(h, "spawn, now = task.spawn, task.now\n"
                          "ch = task.channel(1)\n"
                          "t = task.spawn(function() return 1 end)\n"
                          "assert(t:await() == 1)"),
              "ok");
  }
  for (const char* call : {"spawn(print)", "now()", "ch:send(1)", "ch:recv()", "ch:try_recv()",
                           "return #ch", "tostring(ch)", "for v in ch:iter() do end",
                           "t:await()", "t:status()", "tostring(t)", "task.yield()"}) {
    std::string message = runMayGC(h, call);
    EXPECT_NE(message.find("the task runtime has ended"), std::string::npos) << call << ": " << message;
  }
  h.closeMayGC();
}

}  // namespace
}  // namespace weft::runtime
