// The runtime's roots under the generational collector (docs/design/gc-v2.md): a minor
// traces only the channels whose buffers were written since the last collection, so a
// young value sent into an old channel must make it dirty; --gc-verify reports a young
// value in a buffer a minor would skip (heap.h invariant 10, fault site
// rt.channel-dirty-drop). A worker serves a pending request between two tasks.
#include <gtest/gtest.h>

#include <string>

#include "gc/fault.h"
#include "runtime/runtime.h"
#include "vm/host.h"

namespace weft::runtime {
namespace {

struct Outcome {
  std::string result;   // "ok", or the error message
  std::string failure = "";  // the heap's failure reason ("" while sound)
  uint64_t minors = 0;
};

// `chunk` runs with a runtime; `beforeRuntime` (if any) in the bare State before it starts.
Outcome runMayGC(const std::string& chunk, gc::StressMode stress, const char* beforeRuntime = nullptr) {
  vm::StateOptions opts;
  opts.gc.verify = true;
  opts.gc.stress = stress;
  std::unique_ptr<vm::State> state = vm::newStandardState(opts);
  if (!state) return {"no state"};
  if (beforeRuntime) {
    vm::HostStack h(*state);
    if (!h.loadMayGC(beforeRuntime, "=before").isOk() || !h.pcallMayGC(0, 0, true).isOk()) return {"before failed"};
  }
  RuntimeOptions options;
  options.workers = 2;
  auto rt = Runtime::start(*state, options);
  if (!rt.hasValue()) return {"no runtime"};
  vm::HostStack h(*state);
  Outcome out{"ok"};
  if (!h.loadMayGC(chunk, "=gc").isOk() || !h.pcallMayGC(0, 0, true).isOk()) {
    if (!h.toStringMayGC(-1, out.result).isOk()) out.result = "unprintable error";
  }
  h.setTop(0);
  out.failure = state->heap().failureReason();
  out.minors = state->heap().stats().minor.count;
  return out;
}

// A run with one fault site armed: the negative tests.
Outcome runWithFaultMayGC(const char* fault, const std::string& chunk) {
  gc::fault::configure(fault);
  Outcome out = runMayGC(chunk, gc::StressMode::kNone);
  gc::fault::configure("");
  return out;
}

// The channel is old and clean when the young table goes in; the minor that follows
// must trace its buffer, promote (move) the table and update the slot, and the old
// value beside it must stay. Verification checks every reference on the way.
constexpr const char* kYoungIntoOldChannel = R"(
  collectgarbage('stop')
  local ch = task.channel(4)
  ch:send({'old'})
  collectgarbage()
  ch:send({'young', {1, 2, 3}})
  collectgarbage('step')
  for i = 1, 1000 do local _ = {i} end
  collectgarbage('step')
  assert(ch:recv()[1] == 'old', 'the old value')
  local v = ch:recv()
  assert(v[1] == 'young' and v[2][3] == 3, 'the young value, moved')
  -- A sender blocked on a full channel: its value takes the freed place (the other
  -- write into a buffer), then a minor.
  local full = task.channel(1)
  full:send({'first'})
  collectgarbage()
  local sender = task.spawn(function() full:send({'second', {4}}) end)
  for _ = 1, 1000 do
    if sender:status() == 'suspended' then break end
    task.sleep(0.001)
  end
  assert(full:recv()[1] == 'first', 'the first value')
  sender:await()
  collectgarbage('step')
  local w = full:recv()
  assert(w[1] == 'second' and w[2][1] == 4, 'the blocked sender value, moved')
)";

TEST(RuntimeGc, YoungValueInAnOldChannelSurvivesAMinorAndIsUpdated) {
  for (gc::StressMode stress : {gc::StressMode::kNone, gc::StressMode::kRelocate}) {
    Outcome out = runMayGC(kYoungIntoOldChannel, stress);
    EXPECT_EQ(out.result, "ok");
    EXPECT_EQ(out.failure, "");
    if (stress == gc::StressMode::kNone) {
      EXPECT_GE(out.minors, 3u);
    }
  }
}

// The negative test: the write into the old channel does not make it dirty, so a minor
// would leave the young table's slot stale; verification reports it before the minor
// and the heap fails closed.
constexpr const char* kUnnotedWrite = R"(
  collectgarbage('stop')
  local ch = task.channel(4)
  collectgarbage()
  ch:send({'young'})
  collectgarbage('step')
)";

TEST(RuntimeGc, ChannelWriteThatIsNotNotedIsCaughtByVerify) {
  Outcome out = runWithFaultMayGC("rt.channel-dirty-drop:1", kUnnotedWrite);
  EXPECT_NE(out.result, "ok");
  EXPECT_NE(out.failure.find("verify failed: before collection"), std::string::npos) << out.failure;
  EXPECT_NE(out.failure.find("a record a minor skips"), std::string::npos) << out.failure;
}

// The same dropped note during an incremental major (gc-v2.md "Incremental majors"): the
// first step starts a cycle whose slice traces the registry (its entries come first)
// but only the start of the big array. The old value sent afterwards is not marked,
// and the channel, traced and not listed again, would hide it from the final pause;
// verification reports it before the next step (heap.h invariant 15).
constexpr const char* kUnnotedWriteDuringACycle = R"(
  collectgarbage('incremental')  -- a step is a slice (in generational mode, a minor)
  local big = {}
  for i = 1, 20000 do big[i] = {i} end
  local ch = task.channel(4)
  collectgarbage()
  collectgarbage('step', 1)
  ch:send(big[20000])
  collectgarbage('step', 1)
)";

TEST(RuntimeGc, ChannelWriteThatIsNotNotedIsCaughtByTheCycle) {
  Outcome out = runWithFaultMayGC("rt.channel-dirty-drop:1", kUnnotedWriteDuringACycle);
  EXPECT_NE(out.result, "ok");
  EXPECT_NE(out.failure.find("verify failed: before a marking step"), std::string::npos) << out.failure;
  EXPECT_NE(out.failure.find("was traced by the cycle and not written since"), std::string::npos) << out.failure;
}

// Without the fault the same script runs: the send lists the channel again.
TEST(RuntimeGc, ChannelWrittenDuringACycleIsTracedAgain) {
  Outcome out = runMayGC(kUnnotedWriteDuringACycle, gc::StressMode::kNone);
  EXPECT_EQ(out.result, "ok");
  EXPECT_EQ(out.failure, "");
}

// A runtime that starts while a cycle marks has no walk of its registry: its final pause
// traces it whole. Here a slice passes over the channel, which then receives the only
// reference to an old object the cycle has not marked, and a minor cleans the channel
// before the final pause: a walk would have missed the write and freed the table.
constexpr const char* kStartACycle = R"(
  collectgarbage('incremental')
  keep = {}
  for i = 1, 20000 do keep[i] = {i} end
  collectgarbage()
  assert(not collectgarbage('step', 1), 'a cycle marks')
)";
constexpr const char* kWriteDuringTheCycle = R"(
  local ch = task.channel(4)
  collectgarbage('step', 1)
  ch:send(keep[20000])
  keep[20000] = nil
  for i = 1, 200000 do local _ = {i} end
  repeat until collectgarbage('step', 64)
  assert(ch:recv()[1] == 20000, 'the value in the channel')
)";

TEST(RuntimeGc, ARuntimeStartedDuringACycleIsTracedWholeByItsFinalPause) {
  Outcome out = runMayGC(kWriteDuringTheCycle, gc::StressMode::kNone, kStartACycle);
  EXPECT_EQ(out.result, "ok");
  EXPECT_EQ(out.failure, "");
  EXPECT_GE(out.minors, 1u) << "a minor between the write and the final pause";
}

// Waiters resumed by a close that park again at once: the receive returns and the next
// one suspends, natives both, so none passes a loop safepoint. Each dispatch dirties an
// old stack; at the remembered budget the heap requests a minor, and the workers must
// serve it between two waiters, not leave it to the main chunk's next safepoint (after
// its sleep) with every stack dirty by then (gc-v2.md, "Requests served between
// tasks"). 4,000 waiters at a budget of 64: 30 to 60 minors while the main chunk sleeps
// (one before the fix).
constexpr const char* kParkWaiters = R"(
  first, second = task.channel(), task.channel()
  done = task.channel(4000)
  for _ = 1, 4000 do
    task.spawn(function()
      first:recv()
      local _, ok = second:recv()
      done:send(ok == false)
    end)
  end
  task.sleep(0.1)
  collectgarbage()
)";
constexpr const char* kReleaseWaiters = R"(
  first:close()
  task.sleep(0.3)
)";
constexpr const char* kEndWaiters = R"(
  second:close()
  for _ = 1, 4000 do assert(done:recv(), 'a waiter saw the close') end
)";

TEST(RuntimeGc, RequestIsServedBetweenTasksThatPassNoSafepoint) {
  vm::StateOptions opts;
  opts.gc.rememberedBudget = 64;
  std::unique_ptr<vm::State> state = vm::newStandardState(opts);
  ASSERT_TRUE(state);
  RuntimeOptions options;
  options.workers = 2;
  auto rt = Runtime::start(*state, options);
  ASSERT_TRUE(rt.hasValue());
  vm::HostStack h(*state);
  auto run = [&](const char* chunk) {
    std::string err = "ok";
    if (!h.loadMayGC(chunk, "=gc").isOk() || !h.pcallMayGC(0, 0, true).isOk()) {
      if (!h.toStringMayGC(-1, err).isOk()) err = "unprintable error";
    }
    h.setTop(0);
    return err;
  };
  ASSERT_EQ(run(kParkWaiters), "ok");
  uint64_t before = state->heap().stats().minor.count;
  ASSERT_EQ(run(kReleaseWaiters), "ok");
  uint64_t whileAsleep = state->heap().stats().minor.count - before;
  EXPECT_EQ(run(kEndWaiters), "ok");
  EXPECT_GE(whileAsleep, 20u);
  EXPECT_EQ(state->heap().failureReason(), "");
}

}  // namespace
}  // namespace weft::runtime
