// The stop-the-world handshake with real threads (heap.h invariants 6, 7 and 8).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tests/unit/gc/mutator_threads.h"

namespace weft::gc::toy {
namespace {

constexpr int kThreads = 4;
// Bounds a whole run of the workers: generous under a sanitizer, above the safepoint
// deadlines the runs configure and below ctest's TIMEOUT.
constexpr std::chrono::milliseconds kRunTimeout{120000};

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

// Counts its worker finished however runWorker returns, a failed ASSERT included, so that
// the other workers and the test thread never wait for one that has left.
class FinishedOnExit {
 public:
  explicit FinishedOnExit(std::atomic<int>& finished) : finished_(finished) {}
  ~FinishedOnExit() { now(); }
  void now() {
    if (!counted_) finished_.fetch_add(1);
    counted_ = true;
  }

 private:
  std::atomic<int>& finished_;
  bool counted_ = false;
};

// Allocates a list rooted in its own RootSource plus garbage, polls at every step and
// checks its data; then polls until every worker is done, so that it takes part in
// every epoch while attached.
void runWorker(Heap& heap, int id, int iterations, std::atomic<int>& finished, WorkerReport& report) {
  FinishedOnExit finishing(finished);
  WorkerMutator worker(heap);
  ASSERT_NE(worker.m, nullptr) << "worker " << id;
  Mutator& m = *worker.m;
  ASSERT_TRUE(heap.attach(m).isOk()) << "worker " << id;
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
    finishing.now();
    EXPECT_TRUE(waitUntil([&] {
      ok = ok && heap.safepointMayGC(m).isOk();
      return !ok || finished.load() == kThreads;
    }, "the other workers to finish", kRunTimeout)) << "worker " << id;
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
  EXPECT_TRUE(waitUntil([&] {
    Heap::HandshakeState state = h.heap.handshake();
    EXPECT_LE(state.acknowledged, state.attached);
    EXPECT_LE(h.heap.stats().bytesCopiedTotal, h.heap.stats().bytesAllocatedTotal + Heap::kChunkSize * 64);
    return finished.load() == kThreads;
  }, "every worker to finish", kRunTimeout));
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
  std::jthread sleeper([&] {
    WorkerMutator worker(h.heap);
    ASSERT_NE(worker.m, nullptr);
    Mutator& m = *worker.m;
    ASSERT_TRUE(h.heap.attach(m).isOk());
    HandleScope scope(m);
    Handle<Node> kept(scope, newNode(m, nullptr, 42));
    Node* before = kept.get();
    h.heap.detach(m);
    detached = true;
    EXPECT_TRUE(waitUntil([&] { return wake.load(); }, "the test to wake the detached mutator"));
    ASSERT_TRUE(h.heap.attach(m).isOk());
    EXPECT_NE(kept.get(), before) << "a detached mutator's handles are roots, updated by the collection";
    EXPECT_EQ(kept->value, 42);
    EXPECT_TRUE(h.heap.contains(kept.get()));
  });
  ASSERT_TRUE(waitUntil([&] { return detached.load(); }, "the sleeper to detach"));
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
  std::jthread holder([&] {
    WorkerMutator worker(h.heap);
    ASSERT_NE(worker.m, nullptr);
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    attached = true;
    EXPECT_TRUE(waitUntil([&] { return h.heap.stopRequested(); }, "the test's stop request"));  // never polls
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    h.heap.detach(*worker.m);
  });
  ASSERT_TRUE(waitUntil([&] { return attached.load(); }, "the holder to attach"));
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
  std::jthread late([&] {
    WorkerMutator worker(h.heap);
    ASSERT_NE(worker.m, nullptr);
    lateRegistered = true;
    EXPECT_TRUE(waitUntil([&] { return lateGo.load(); }, "the test to let the late mutator attach"));
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    collectionsAtAttach = h.heap.stats().collections;
    lateAttached = true;
  });
  std::jthread holder([&] {
    WorkerMutator worker(h.heap);
    ASSERT_NE(worker.m, nullptr);
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    heldAttached = true;
    EXPECT_TRUE(waitUntil([&] { return poll.load(); }, "the test to let the holder poll"));
    EXPECT_TRUE(h.heap.safepointMayGC(*worker.m).isOk());
  });
  ASSERT_TRUE(waitUntil([&] { return heldAttached.load() && lateRegistered.load(); },
                        "the holder to attach and the late mutator to register"));
  std::jthread requester([&] {
    WorkerMutator worker(h.heap);
    ASSERT_NE(worker.m, nullptr);
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    EXPECT_TRUE(h.heap.collectMayGC(*worker.m).isOk());
  });
  ASSERT_TRUE(waitUntil([&] { return h.heap.stopRequested(); }, "the requester's stop request"));
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
  std::jthread holder([&] {
    WorkerMutator worker(h.heap);
    ASSERT_NE(worker.m, nullptr);
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    ++attached;
    EXPECT_TRUE(waitUntil([&] { return poll.load(); }, "the test to let the holder poll"));
    EXPECT_TRUE(h.heap.safepointMayGC(*worker.m).isOk());
    EXPECT_EQ(worker.m->stats().stops, 1u);
  });
  auto request = [&] {
    WorkerMutator worker(h.heap);
    ASSERT_NE(worker.m, nullptr);
    ASSERT_TRUE(h.heap.attach(*worker.m).isOk());
    ++attached;
    EXPECT_TRUE(waitUntil([&] { return attached.load() == 3; }, "the holder and both requesters to attach"));
    EXPECT_TRUE(h.heap.collectMayGC(*worker.m).isOk());
    EXPECT_EQ(worker.m->stats().stops, 1u);
    EXPECT_EQ(worker.m->lastAckedEpoch(), 1u);
  };
  std::jthread a(request), b(request);
  // Both requesters are in: one requested epoch 1, the other acknowledged it.
  ASSERT_TRUE(waitUntil([&] { return h.heap.handshake().acknowledged == 2; }, "both requesters to be in the stop"));
  poll = true;
  a.join();
  b.join();
  holder.join();
  EXPECT_EQ(h.heap.stats().collections, 1u);
  EXPECT_EQ(h.heap.handshake().epoch, 1u);
}

}  // namespace
}  // namespace weft::gc::toy
