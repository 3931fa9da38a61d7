// Memory safety under racing tasks (DEVELOPERS.md invariant 6): value slots cannot tear
// (value.h invariant 4), heap value fields are 16-byte aligned (object.h invariant 5),
// and racing writers of distinct keys of one table never fail and never lose a write
// (table.h invariant 7, docs/design/shared-tables.md).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/wait_until.h"
#include "vm/heavy_barrier.h"
#include "vm/host.h"
#include "vm/proto.h"
#include "vm/state.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {
namespace {

// Two writers store two values that differ in tag and in every payload byte into one
// slot while a reader checks that each load is one of them. A store or load split into
// payload and tag lets the reader combine one value's tag with the other's payload
// within a few thousand iterations on two cores. `load` is loadSlot or loadSlotChecked.
template <typename Load>
void expectRacingStoresNeverTear(Load load) {
  ASSERT_TRUE(slotAccessIsAtomic()) << "this machine cannot run tasks in parallel";
  alignas(16) static char fakeTable[16];
  const Value a = Value::object(reinterpret_cast<gc::Object*>(fakeTable), Tag::Table);
  const Value b = Value::integer(int64_t(0x5a5a5a5a5a5a5a5a));
  alignas(16) Value slot = a;
  constexpr uint64_t kLoads = 500000;
  std::atomic<bool> stop{false};
  std::atomic<int> started{0};
  // Each writer alternates the two values, so the slot changes on nearly every store.
  auto writer = [&](bool phase) {
    started.fetch_add(1);
    for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); i++) storeSlot(slot, ((i & 1) != phase) ? a : b);
  };
  std::thread w1(writer, false), w2(writer, true);
  EXPECT_TRUE(weft::test::waitUntil([&] { return started.load() == 2; }, "both writers to start"));
  uint64_t torn = 0, sawA = 0, sawB = 0, loads = 0;
  // At least kLoads loads, and on until both values were seen often (on a loaded
  // machine the writers may start late), within a few seconds.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (; loads < kLoads || ((sawA < 10000 || sawB < 10000) && std::chrono::steady_clock::now() < deadline);
       loads++) {
    // loadSlot may be hoisted out of a loop that stores nothing: this fence forbids it.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    Value v = load(slot);
    if (v.identical(a)) sawA++;
    else if (v.identical(b)) sawB++;
    else torn++;
  }
  stop = true;
  w1.join();
  w2.join();
  EXPECT_EQ(torn, 0u) << "of " << loads << " loads";
  EXPECT_GT(sawA, 0u);
  EXPECT_GT(sawB, 0u);
}

TEST(SlotAccess, RacingStoresNeverTear) {
  expectRacingStoresNeverTear([](const Value& slot) { return loadSlot(slot); });
}

// loadSlotChecked under the same race: a field taken from the wrong load shows as a
// torn value. (Its two plain loads read one cache line back to back, so a missing
// check would seldom be caught here; values.md gives the argument for the check.)
TEST(SlotAccess, RacingStoresNeverTearCheckedLoads) {
  expectRacingStoresNeverTear([](const Value& slot) { return loadSlotChecked(slot); });
}

// storeSlot writes the padding after the tag as zero and keeps the payload whole.
TEST(SlotAccess, RoundTripsEveryKind) {
  alignas(16) Value slot;
  const Value values[] = {Value::nil(), Value::boolean(true), Value::integer(-1), Value::number(-0.0),
                          Value::lightUserdata(&slot)};
  for (const Value& v : values) {
    storeSlot(slot, v);
    Value back = loadSlot(slot);
    EXPECT_TRUE(back.identical(v));
    EXPECT_TRUE(loadSlotChecked(slot).identical(v));
    const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&slot);
    for (int i = 9; i < 16; i++) EXPECT_EQ(bytes[i], 0) << "padding byte " << i;
  }
}

// Heap value fields are 16-byte aligned, whatever the size of the objects before them.
TEST(SlotAccess, HeapValueFieldsAreAligned) {
  auto S = newStandardState(StateOptions{});
  ASSERT_TRUE(S);
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  for (uint32_t n = 1; n < 12; n++) {
    Table* t = newTable(*S, n, n);
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(aligned(t->array->data));
    EXPECT_TRUE(aligned(&t->nodes->nodes[0].value));
    Upvalue* uv = newUpvalueClosed(*S, Value::integer(n));
    ASSERT_NE(uv, nullptr);
    EXPECT_TRUE(aligned(&uv->cell));
    EXPECT_TRUE(aligned(&uv->shadow));
    Userdata* u = newUserdata(*S, n);
    ASSERT_NE(u, nullptr);
    EXPECT_TRUE(aligned(&userValueSlot(u, 0)));
    NativeClosure* c = newNativeClosure(*S, nullptr, "f", n);
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(aligned(c->upvalues));
  }
}

// A library or interpreter store into a table whose claim another writer holds waits
// for it (table.h invariant 7), where it used to fail with "concurrent table write".
std::string runWhileTableClaimed(const std::string& src) {
  auto S = newStandardState(StateOptions{});
  if (!S) return "NO STATE";
  HostStack h(*S);
  if (!h.newTable() || !h.setGlobal("T") || !h.pushGlobal("T")) return "NO TABLE";
  Table* t = h.at(-1).asTable();
  h.setTop(0);
  // The holder thread writes T's claim word at this address while the script runs and
  // may collect: pinned, T stays where the thread looks.
  S->heap().pin(asGc(t));
  S->tablesShared.store(true);
  __atomic_store_n(&t->sync, 1u, __ATOMIC_RELEASE);  // as if another task were rebuilding T
  std::thread holder([t] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    __atomic_store_n(&t->sync, 2u, __ATOMIC_RELEASE);
  });
  std::string out;
  Status st = h.loadMayGC(src, "=test");
  if (st.isOk()) st = h.pcallMayGC(0, 1, false);
  holder.join();
  S->heap().unpin(asGc(t));
  (void)h.toStringMayGC(-1, out);
  h.closeMayGC();
  return st.isOk() ? out : "ERR: " + out;
}

TEST(ConcurrentTableWrite, StoresWaitForTheClaim) {
  EXPECT_EQ(runWhileTableClaimed("rawset(T, 'k', 1) return T.k"), "1");
  EXPECT_EQ(runWhileTableClaimed("rawset(T, 1.5, 2) return T[1.5]"), "2");
  EXPECT_EQ(runWhileTableClaimed("table.insert(T, 'v') return T[1]"), "v");
  EXPECT_EQ(runWhileTableClaimed("table.move({1, 2}, 1, 2, 1, T) return T[1] + T[2]"), "3");
  EXPECT_EQ(runWhileTableClaimed("T.k = 1 T.k = 5 return T.k"), "5");
  EXPECT_EQ(runWhileTableClaimed("for i = 1, 100 do T[i] = i end return #T"), "100");
  // The bad-key messages are unchanged.
  EXPECT_EQ(runWhileTableClaimed("rawset(T, 0/0, 1)"), "ERR: index is NaN");
  EXPECT_EQ(runWhileTableClaimed("rawset(T, nil, 1)"), "ERR: index is nil");
}

// Runs `body(id)` on `threads` OS threads, each with its own attached mutator bound to
// `S`, all released at once. No thread reaches a safepoint, so nothing is collected.
template <typename Body>
void onThreads(State& S, int threads, Body body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int id = 0; id < threads; id++) {
    pool.emplace_back([&, id] {
      gc::Heap& heap = S.heap();
      auto made = heap.registerMutator();
      ASSERT_TRUE(made.hasValue());
      gc::Mutator* m = made.value();
      ASSERT_TRUE(heap.attach(*m).isOk());
      ExecContext ctx;
      ctx.state = &S;
      ctx.mutator = m;
      bindExecContext(&ctx);
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      body(id);
      bindExecContext(nullptr);
      heap.detach(*m);
      heap.unregisterMutator(m);
    });
  }
  EXPECT_TRUE(weft::test::waitUntil([&] { return ready.load() == threads; }, "every thread to start"));
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
}

constexpr int kWriters = 8;

std::unique_ptr<State> sharedState() {
  auto S = newStandardState(StateOptions{});
  if (S) S->tablesShared.store(true);
  return S;
}

// Keys 1..n dealt round-robin to the writers, from an empty table: the array part grows
// by appends and rehashes while the others write. Each key is written twice, the second
// time into its existing slot, which a rebuild by another writer may be copying.
TEST(ConcurrentTableWrite, DistinctKeysIntoTheArrayPartAcrossResizes) {
  auto S = sharedState();
  ASSERT_TRUE(S);
  Table* t = newTable(*S);
  ASSERT_NE(t, nullptr);
  constexpr int64_t kKeys = 40000;
  std::atomic<int> failures{0};
  onThreads(*S, kWriters, [&](int id) {
    for (int64_t k = id + 1; k <= kKeys; k += kWriters) {
      if (!tableSetInt(*S, t, k, Value::integer(-k)).isOk()) failures++;
      if (k > 4 * kWriters && !tableSetInt(*S, t, k - 4 * kWriters, Value::integer(2 * (k - 4 * kWriters))).isOk()) {
        failures++;
      }
    }
    for (int64_t k = kKeys - 4 * kWriters + id + 1; k <= kKeys; k += kWriters) {
      if (!tableSetInt(*S, t, k, Value::integer(2 * k)).isOk()) failures++;
    }
  });
  EXPECT_EQ(failures.load(), 0);
  int64_t wrong = 0;
  for (int64_t k = 1; k <= kKeys; k++) wrong += !tableGetInt(t, k).identical(Value::integer(2 * k));
  EXPECT_EQ(wrong, 0) << "of " << kKeys << " keys";
  EXPECT_EQ(tableLength(t), uint64_t(kKeys));
}

// String keys and sparse integer keys: every one lands in the hash part, which rehashes
// many times while the writers insert and then rewrite their own keys.
TEST(ConcurrentTableWrite, DistinctKeysIntoTheHashPartAcrossResizes) {
  auto S = sharedState();
  ASSERT_TRUE(S);
  Table* t = newTable(*S);
  ASSERT_NE(t, nullptr);
  constexpr int kPerWriter = 3000;
  std::vector<std::vector<String*>> names(kWriters);
  for (int id = 0; id < kWriters; id++) {
    for (int i = 0; i < kPerWriter; i++) {
      String* s = newString(*S, "w" + std::to_string(id) + "_" + std::to_string(i));
      ASSERT_NE(s, nullptr);
      names[id].push_back(s);
    }
  }
  auto sparse = [](int id, int i) { return int64_t(1000003) * (i * kWriters + id + 1); };
  std::atomic<int> failures{0};
  onThreads(*S, kWriters, [&](int id) {
    for (int i = 0; i < kPerWriter; i++) {
      failures += !tableSetStr(*S, t, names[id][i], Value::integer(-1)).isOk();
      failures += !tableSetInt(*S, t, sparse(id, i), Value::integer(-1)).isOk();
    }
    for (int i = 0; i < kPerWriter; i++) {
      failures += !tableSetStr(*S, t, names[id][i], Value::integer(i)).isOk();
      failures += !tableSetInt(*S, t, sparse(id, i), Value::integer(id)).isOk();
    }
  });
  EXPECT_EQ(failures.load(), 0);
  int wrong = 0;
  for (int id = 0; id < kWriters; id++) {
    for (int i = 0; i < kPerWriter; i++) {
      wrong += !tableGetStr(t, names[id][i]).identical(Value::integer(i));
      wrong += !tableGetInt(t, sparse(id, i)).identical(Value::integer(id));
    }
  }
  EXPECT_EQ(wrong, 0) << "of " << 2 * kWriters * kPerWriter << " keys";
}

// The lost write this protects against, head on: writers keep rewriting their own
// existing keys (array part and hash part) through the interpreter's way (find the slot,
// store, check the sequence) and tableSet, while one thread inserts new keys and so
// rebuilds the table again and again. Every key ends with its writer's last value.
// Without the check after the store, about one trial in two loses some (four trials).
class ExistingSlots : public ::testing::TestWithParam<int> {};
TEST_P(ExistingSlots, SurviveRacingRebuilds) {
  auto S = sharedState();
  ASSERT_TRUE(S);
  Table* t = newTable(*S);
  ASSERT_NE(t, nullptr);
  constexpr int kOwnKeys = 64;
  constexpr int kRounds = 400;
  auto ownKey = [](int id, int i) {  // odd ids: array keys; even ids: hash keys
    return id % 2 ? int64_t(i * kWriters + id + 1) : -int64_t(i * kWriters + id + 1);
  };
  for (int id = 1; id < kWriters; id++) {
    for (int i = 0; i < kOwnKeys; i++) ASSERT_TRUE(tableSetInt(*S, t, ownKey(id, i), Value::integer(0)).isOk());
  }
  std::atomic<int> failures{0};
  std::atomic<int> done{0};
  onThreads(*S, kWriters, [&](int id) {
    if (id == 0) {  // the rebuilder: new keys until every writer is done
      for (int64_t k = 1; done.load(std::memory_order_relaxed) < kWriters - 1; k++) {
        failures += !tableSetInt(*S, t, int64_t(1) << 40 | k, Value::integer(k)).isOk();
        failures += !tableSetInt(*S, t, 100000 + k, Value::integer(k)).isOk();
      }
      return;
    }
    for (int r = 1; r <= kRounds; r++) {
      for (int i = 0; i < kOwnKeys; i++) {
        Value key = Value::integer(ownKey(id, i));
        uint32_t seq = tableWriteBegin(t);
        if (r % 2) {
          if (Value* slot = tableFindSlot(t, key)) {
            storeValue(t, *slot, Value::integer(r));
            if (tableWriteHeld(t, seq)) continue;
          }
        }
        failures += !tableSet(*S, t, key, Value::integer(r)).isOk();
      }
    }
    done.fetch_add(1);
  });
  EXPECT_EQ(failures.load(), 0);
  int wrong = 0;
  for (int id = 1; id < kWriters; id++) {
    for (int i = 0; i < kOwnKeys; i++) wrong += !tableGetInt(t, ownKey(id, i)).identical(Value::integer(kRounds));
  }
  EXPECT_EQ(wrong, 0) << "of " << (kWriters - 1) * kOwnKeys << " keys";
}
INSTANTIATE_TEST_SUITE_P(ConcurrentTableWrite, ExistingSlots, ::testing::Range(0, 4));

// The fallback of the heavy barrier runs (where membarrier exists, only this test runs it).
TEST(ConcurrentTableWrite, HeavyBarrierFallbackRuns) {
  std::atomic<bool> stop{false};
  std::thread other([&] {
    while (!stop.load(std::memory_order_relaxed)) std::this_thread::yield();
  });
  for (int i = 0; i < 100; i++) heavyBarrierByPageProtection();
  for (int i = 0; i < 100; i++) heavyBarrier();
  stop = true;
  other.join();
  SUCCEED() << (heavyBarrierUsesMembarrier() ? "membarrier" : "page protection");
}

}  // namespace
}  // namespace weft::vm
