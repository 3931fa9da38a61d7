// The stop-the-world handshake with real threads (heap.h invariants 6, 7 and 8).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tests/unit/gc/mutator_threads.h"

namespace weft::gc::toy {
namespace {

constexpr int kThreads = 4;

struct WorkerReport {
  uint64_t stops = 0;
  uint64_t epochSpan = 0;  // epochs between attaching and the last acknowledgement
  uint64_t movesSeen = 0;  // safepoints after which this thread saw its list relocated
};

// The thread's list holds values from `top` down to `bottom`; its tag blob sits in a
// handle. Both must read back intact, from current space, after every safepoint.
bool listIsIntact(Heap& heap, Object* head, int64_t top, int64_t bottom) {
  int64_t expect = top;
  for (Object* o = head; o; o = as<Node>(o)->next, --expect)
    if (as<Node>(o)->value != expect || !heap.contains(o)) return false;
  return expect == bottom - 1;
}

// Allocates a list rooted in its own RootSource plus garbage, polls at every step and
// checks its data; then polls until every worker is done, so that it takes part in
// every epoch while attached.
void runWorker(Heap& heap, int id, int iterations, std::atomic<int>& finished, WorkerReport& report) {
  WorkerMutator worker(heap);
  Mutator& m = *worker.m;
  ASSERT_TRUE(heap.attach(m).isOk());
  uint64_t firstEpoch = m.lastAckedEpoch();
  TestRoots roots;
  roots.slots.push_back(nullptr);
  heap.addRootSource(&roots);
  {
    HandleScope scope(m);
    std::string tagText = "worker-" + std::to_string(id);
    Handle<Blob> tag(scope, newBlob(m, tagText));
    int64_t bottom = 0;
    bool ok = true;
    for (int i = 0; i < iterations && ok; ++i) {
      if (i % 64 == 0) {
        roots.slots[0] = nullptr;  // the old list becomes garbage
        bottom = i;
      }
      roots.slots[0] = obj(newNode(m, roots.slots[0], i));
      newBlob(m, "garbage");
      Object* before = roots.slots[0];
      uint64_t stops = m.stats().stops;
      ok = heap.safepointMayGC(m).isOk();
      if (m.stats().stops != stops && roots.slots[0] != before) ++report.movesSeen;
      ok = ok && listIsIntact(heap, roots.slots[0], i, bottom) && text(tag.get()) == tagText;
    }
    EXPECT_TRUE(ok) << "worker " << id << ": " << heap.failureReason();
    finished.fetch_add(1);
    while (ok && finished.load() < kThreads) {
      ok = heap.safepointMayGC(m).isOk();
      std::this_thread::yield();
    }
  }
  report.stops = m.stats().stops;
  report.epochSpan = m.lastAckedEpoch() - firstEpoch;
  heap.removeRootSource(&roots);
}

void runWorkers(ToyHeap& h, int iterations) {
  h.heap.detach(h.m());  // the test thread only watches
  std::atomic<int> finished{0};
  std::vector<WorkerReport> reports(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back(runWorker, std::ref(h.heap), i, iterations, std::ref(finished), std::ref(reports[i]));
  // Stats and the handshake view are readable while the workers run.
  while (finished.load() < kThreads) {
    Heap::HandshakeState state = h.heap.handshake();
    EXPECT_LE(state.acknowledged, state.attached);
    EXPECT_LE(h.heap.stats().bytesCopiedTotal, h.heap.stats().bytesAllocatedTotal + Heap::kChunkSize * 64);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (std::thread& t : threads) t.join();
  uint64_t collections = h.heap.stats().collections;
  EXPECT_GT(collections, 10u);
  EXPECT_EQ(h.heap.handshake().epoch, collections) << "each epoch made exactly one collection";
  EXPECT_EQ(h.heap.failureReason(), "");
  for (const WorkerReport& r : reports) {
    EXPECT_EQ(r.stops, r.epochSpan) << "one acknowledgement per epoch while attached";
    EXPECT_GT(r.movesSeen, 0u);
  }
}

TEST(GcStopTheWorld, Invariant6_ThreadsSeeRelocatedConsistentDataUnderRelocateStress) {
  Config config;
  config.stress = StressMode::kRelocate;
  config.verify = true;
  config.interval = 13;
  config.safepointDeadlineMs = 60000;
  ToyHeap h(config);
  runWorkers(h, 1500);
}

TEST(GcStopTheWorld, Invariant7_EachEpochAcknowledgedOncePerAttachedMutatorUnderThreshold) {
  Config config;
  config.initialThreshold = 1 << 20;
  config.safepointDeadlineMs = 60000;
  ToyHeap h(config);
  runWorkers(h, 60000);
}

TEST(GcStopTheWorld, Invariant8_SleepingDetachedThreadNeverDelaysCollection) {
  Config config;
  config.safepointDeadlineMs = 5000;
  ToyHeap h(config);
  std::atomic<bool> detached{false}, wake{false};
  std::thread sleeper([&] {
    WorkerMutator worker(h.heap);
    Mutator& m = *worker.m;
    ASSERT_TRUE(h.heap.attach(m).isOk());
    HandleScope scope(m);
    Handle<Node> kept(scope, newNode(m, nullptr, 42));
    Node* before = kept.get();
    h.heap.detach(m);
    detached = true;
    waitFor([&] { return wake.load(); });
    ASSERT_TRUE(h.heap.attach(m).isOk());
    EXPECT_NE(kept.get(), before) << "a detached mutator's handles are roots, updated by the collection";
    EXPECT_EQ(kept->value, 42);
    EXPECT_TRUE(h.heap.contains(kept.get()));
  });
  ASSERT_TRUE(waitFor([&] { return detached.load(); }));
  auto start = Clock::now();
  EXPECT_TRUE(h.heap.collectMayGC().isOk());
  EXPECT_LT(millisSince(start), 1000);
  EXPECT_EQ(h.heap.stats().collections, 1u);
  wake = true;
  sleeper.join();
}

TEST(GcStopTheWorld, Invariant8_DetachReleasesAWaitingRequester) {
  Config config;
  config.safepointDeadlineMs = 20000;
  ToyHeap h(config);
  std::atomic<bool> attached{false};
  std::thread holder([&] {
    WorkerMutator worker(h.heap);
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    attached = true;
    waitFor([&] { return h.heap.stopRequested(); });  // never polls
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    h.heap.detach(*worker.m);
  });
  ASSERT_TRUE(waitFor([&] { return attached.load(); }));
  auto start = Clock::now();
  EXPECT_TRUE(h.heap.collectMayGC().isOk());
  EXPECT_LT(millisSince(start), 5000);
  holder.join();
}

TEST(GcStopTheWorld, Invariant6_AttachWaitsWhileACollectionRuns) {
  ToyHeap h;
  h.heap.detach(h.m());
  std::atomic<bool> heldAttached{false}, poll{false}, lateRegistered{false}, lateGo{false}, lateAttached{false};
  std::atomic<uint64_t> collectionsAtAttach{0};
  std::thread late([&] {
    WorkerMutator worker(h.heap);
    lateRegistered = true;
    waitFor([&] { return lateGo.load(); });
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    collectionsAtAttach = h.heap.stats().collections;
    lateAttached = true;
  });
  std::thread holder([&] {
    WorkerMutator worker(h.heap);
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    heldAttached = true;
    waitFor([&] { return poll.load(); });
    EXPECT_TRUE(h.heap.safepointMayGC(*worker.m).isOk());
  });
  ASSERT_TRUE(waitFor([&] { return heldAttached.load() && lateRegistered.load(); }));
  std::thread requester([&] {
    WorkerMutator worker(h.heap);
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    EXPECT_TRUE(h.heap.collectMayGC(*worker.m).isOk());
  });
  ASSERT_TRUE(waitFor([&] { return h.heap.stopRequested(); }));
  lateGo = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(lateAttached.load()) << "attach returned while a stop was pending";
  poll = true;
  requester.join();
  holder.join();
  late.join();
  EXPECT_EQ(collectionsAtAttach.load(), 1u);
}

TEST(GcStopTheWorld, Invariant6_TwoSimultaneousRequestersMakeOneCollection) {
  ToyHeap h;
  h.heap.detach(h.m());
  std::atomic<int> attached{0};
  std::atomic<bool> poll{false};
  std::thread holder([&] {
    WorkerMutator worker(h.heap);
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    ++attached;
    waitFor([&] { return poll.load(); });
    EXPECT_TRUE(h.heap.safepointMayGC(*worker.m).isOk());
    EXPECT_EQ(worker.m->stats().stops, 1u);
  });
  auto request = [&] {
    WorkerMutator worker(h.heap);
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    ++attached;
    waitFor([&] { return attached.load() == 3; });
    EXPECT_TRUE(h.heap.collectMayGC(*worker.m).isOk());
    EXPECT_EQ(worker.m->stats().stops, 1u);
    EXPECT_EQ(worker.m->lastAckedEpoch(), 1u);
  };
  std::thread a(request), b(request);
  // Both requesters are in: one requested epoch 1, the other acknowledged it.
  ASSERT_TRUE(waitFor([&] { return h.heap.handshake().acknowledged == 2; }));
  poll = true;
  a.join();
  b.join();
  holder.join();
  EXPECT_EQ(h.heap.stats().collections, 1u);
  EXPECT_EQ(h.heap.handshake().epoch, 1u);
}

}  // namespace
}  // namespace weft::gc::toy
