// Fail closed, never hang (heap.h invariant 9): the safepoint deadline, closeHeap and
// every collector fault site break the heap with a named reason, wake every waiter and
// make every later attach, registration and safepoint return kFatal.
#include <gtest/gtest.h>

#include <thread>

#include "tests/unit/gc/mutator_threads.h"

namespace weft::gc::toy {
namespace {

bool startsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// Every door is closed once the heap is broken.
void expectClosed(Heap& heap) {
  EXPECT_EQ(heap.safepointMayGC().code(), StatusCode::kFatal);
  EXPECT_EQ(heap.collectMayGC().code(), StatusCode::kFatal);
  auto made = heap.registerMutator();
  ASSERT_FALSE(made.hasValue());
  EXPECT_EQ(made.error().code, StatusCode::kFatal);
  EXPECT_TRUE(heap.collectionRequested()) << "the VM's poll stays up so it reaches kFatal";
}

TEST(GcFailClosed, Invariant9_SilentMutatorMakesTheRequesterFailAtTheDeadline) {
  Config config;
  config.safepointDeadlineMs = 200;
  ToyHeap h(config);
  WorkerMutator worker(h.heap);
  std::atomic<bool> attached{false}, release{false};
  std::atomic<int> laterAttach{-1}, laterPoll{-1};
  std::jthread silent([&] {
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    attached = true;
    EXPECT_TRUE(waitUntil([&] { return release.load(); }, "the test to release the silent mutator"));  // never polls
    laterPoll = static_cast<int>(h.heap.safepointMayGC(*worker.m).code());
    h.heap.detach(*worker.m);
    laterAttach = static_cast<int>(h.heap.attach(*worker.m).code());
  });
  ASSERT_TRUE(waitUntil([&] { return attached.load(); }, "the silent mutator to attach"));
  testing::internal::CaptureStderr();
  auto start = Clock::now();
  Status status = h.heap.collectMayGC();
  int64_t waited = millisSince(start);
  std::string err = testing::internal::GetCapturedStderr();
  release = true;
  silent.join();
  EXPECT_EQ(status.code(), StatusCode::kFatal);
  EXPECT_GE(waited, 200);
  EXPECT_LT(waited, 3000);
  std::string reason = h.heap.failureReason();
  EXPECT_EQ(reason, "safepoint deadline: 1 of 2 attached mutators did not acknowledge epoch 1 within 200 ms");
  EXPECT_NE(err.find("weft: gc: " + reason), std::string::npos) << err;
  EXPECT_EQ(laterPoll.load(), static_cast<int>(StatusCode::kFatal));
  EXPECT_EQ(laterAttach.load(), static_cast<int>(StatusCode::kFatal));
  expectClosed(h.heap);
}

TEST(GcFailClosed, Invariant9_CloseHeapWakesTheRequesterAndAttachers) {
  Config config;
  config.safepointDeadlineMs = 60000;
  ToyHeap h(config);
  h.heap.detach(h.m());
  WorkerMutator silentMutator(h.heap), requesterMutator(h.heap), attacherMutator(h.heap);
  std::atomic<bool> silentAttached{false}, release{false};
  std::atomic<int> requested{-1}, attachedLate{-1};
  std::jthread silent([&] {
    ASSERT_TRUE(h.heap.attach(*silentMutator.m).isOk());
    silentAttached = true;
    EXPECT_TRUE(waitUntil([&] { return release.load(); }, "the test to release the silent mutator"));
    EXPECT_EQ(h.heap.safepointMayGC(*silentMutator.m).code(), StatusCode::kFatal);
  });
  ASSERT_TRUE(waitUntil([&] { return silentAttached.load(); }, "the silent mutator to attach"));
  std::jthread requester([&] {
    ASSERT_TRUE(h.heap.attach(*requesterMutator.m).isOk());
    requested = static_cast<int>(h.heap.collectMayGC(*requesterMutator.m).code());
  });
  ASSERT_TRUE(waitUntil([&] { return h.heap.stopRequested(); }, "the requester's stop request"));
  std::jthread attacher([&] { attachedLate = static_cast<int>(h.heap.attach(*attacherMutator.m).code()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(attachedLate.load(), -1) << "attach waits while the stop is pending";
  auto start = Clock::now();
  h.heap.closeHeap("runtime closing");
  requester.join();
  attacher.join();
  EXPECT_LT(millisSince(start), 2000);
  release = true;
  silent.join();
  EXPECT_EQ(requested.load(), static_cast<int>(StatusCode::kFatal));
  EXPECT_EQ(attachedLate.load(), static_cast<int>(StatusCode::kFatal));
  EXPECT_EQ(h.heap.failureReason(), "close: runtime closing");
}

TEST(GcFailClosed, Invariant9_FaultSiteRegister) {
  ToyHeap h;
  FaultSpec spec("gc.register");
  testing::internal::CaptureStderr();
  auto made = h.heap.registerMutator();
  testing::internal::GetCapturedStderr();
  ASSERT_FALSE(made.hasValue());
  EXPECT_EQ(made.error().code, StatusCode::kFatal);
  EXPECT_TRUE(startsWith(made.error().message, "register: fault injected (gc.register)")) << made.error().message;
  EXPECT_TRUE(startsWith(h.heap.failureReason(), "register: ")) << h.heap.failureReason();
  expectClosed(h.heap);
}

TEST(GcFailClosed, Invariant9_FaultSiteAttachOnItsThirdOccurrence) {
  ToyHeap h;
  WorkerMutator worker(h.heap);
  FaultSpec spec("gc.attach:3");
  EXPECT_EQ(fault::describe(), "gc.attach:3");
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    h.heap.detach(*worker.m);
  }
  testing::internal::CaptureStderr();
  EXPECT_EQ(h.heap.attach(*worker.m).code(), StatusCode::kFatal);
  testing::internal::GetCapturedStderr();
  EXPECT_FALSE(worker.m->attached());
  EXPECT_TRUE(startsWith(h.heap.failureReason(), "attach: fault injected (gc.attach)")) << h.heap.failureReason();
  expectClosed(h.heap);
}

TEST(GcFailClosed, Invariant9_FaultSiteEpochAck) {
  ToyHeap h;
  WorkerMutator worker(h.heap);
  FaultSpec spec("gc.epoch-ack");
  std::atomic<bool> attached{false};
  std::atomic<int> polled{-1};
  std::jthread poller([&] {
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    attached = true;
    Status s;
    EXPECT_TRUE(waitUntil([&] { return !(s = h.heap.safepointMayGC(*worker.m)).isOk(); },
                          "a safepoint to fail once the acknowledgement fault fires"));
    polled = static_cast<int>(s.code());
  });
  ASSERT_TRUE(waitUntil([&] { return attached.load(); }, "the poller to attach"));
  testing::internal::CaptureStderr();
  Status status = h.heap.collectMayGC();
  poller.join();
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(status.code(), StatusCode::kFatal);
  EXPECT_EQ(polled.load(), static_cast<int>(StatusCode::kFatal));
  EXPECT_EQ(h.heap.failureReason(),
            "epoch acknowledgement: mutator 1 failed to acknowledge epoch 1 (fault injected: gc.epoch-ack)");
  EXPECT_EQ(h.heap.stats().collections, 0u);
  expectClosed(h.heap);
}

TEST(GcFailClosed, Invariant9_FaultSiteDeadline) {
  ToyHeap h;
  FaultSpec spec("gc.deadline");
  testing::internal::CaptureStderr();
  EXPECT_EQ(h.heap.collectMayGC().code(), StatusCode::kFatal);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(h.heap.failureReason(),
            "safepoint deadline: 0 of 1 attached mutators did not acknowledge epoch 1 within 10000 ms "
            "(fault injected: gc.deadline)");
  expectClosed(h.heap);
}

TEST(GcFailClosed, Invariant9_FaultSiteVerifyRunsTheVerifierAndFails) {
  ToyHeap h;  // verify off: the fault site turns it on for that collection
  h.root(h.pair());
  FaultSpec spec("gc.verify:2");
  EXPECT_TRUE(h.heap.collectMayGC().isOk());
  testing::internal::CaptureStderr();
  EXPECT_EQ(h.heap.collectMayGC().code(), StatusCode::kFatal);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(h.heap.failureReason(), "verify failed: before collection #2: fault injected (gc.verify)");
  expectClosed(h.heap);
}

TEST(GcFailClosed, FaultSpecCountsOccurrencesPerSite) {
  FaultSpec spec("a.site:2,b.site,a.site:4");
  EXPECT_FALSE(fault::hit("a.site"));
  EXPECT_TRUE(fault::hit("b.site"));
  EXPECT_TRUE(fault::hit("a.site"));
  EXPECT_FALSE(fault::hit("b.site"));
  EXPECT_FALSE(fault::hit("a.site"));
  EXPECT_TRUE(fault::hit("a.site"));
  EXPECT_FALSE(fault::hit("other"));
  fault::configure("");
  EXPECT_FALSE(fault::hit("a.site"));
  EXPECT_EQ(fault::describe(), "");
}

}  // namespace
}  // namespace weft::gc::toy
