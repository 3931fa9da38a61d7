// Memory safety under racing tasks (DEVELOPERS.md invariant 6): value slots cannot tear
// (value.h invariant 4), heap value fields are 16-byte aligned (object.h invariant 5),
// and library stores into a table another task is restructuring raise "concurrent
// table write" (table.h invariant 6).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/wait_until.h"
#include "vm/host.h"
#include "vm/proto.h"
#include "vm/state.h"
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
    EXPECT_TRUE(aligned(&u->userValue));
    NativeClosure* c = newNativeClosure(*S, nullptr, "f", n);
    ASSERT_NE(c, nullptr);
    EXPECT_TRUE(aligned(c->upvalues));
  }
}

// A library store into a table whose writer claim another task holds raises the
// interpreter's message, not a memory error or a bad-key error.
std::string runWithTableClaimed(const std::string& src) {
  auto S = newStandardState(StateOptions{});
  if (!S) return "NO STATE";
  HostStack h(*S);
  if (!h.newTable() || !h.setGlobal("T") || !h.pushGlobal("T")) return "NO TABLE";
  Table* t = h.at(-1).asTable();
  h.setTop(0);
  S->tablesShared.store(true);
  t->writers = 1;  // as if another task were rebuilding T
  std::string out;
  if (!h.loadMayGC(src, "=test").isOk()) return "LOAD";
  Status st = h.pcallMayGC(0, 1, false);
  (void)h.toStringMayGC(-1, out);
  t->writers = 0;
  h.closeMayGC();
  return st.isOk() ? out : "ERR: " + out;
}

TEST(ConcurrentTableWrite, LibraryStoresRaiseTheInterpreterMessage) {
  EXPECT_EQ(runWithTableClaimed("rawset(T, 'k', 1)"), "ERR: test:1: concurrent table write");
  EXPECT_EQ(runWithTableClaimed("rawset(T, 1.5, 1)"), "ERR: test:1: concurrent table write");
  EXPECT_EQ(runWithTableClaimed("table.insert(T, 'v')"), "ERR: test:1: concurrent table write");
  EXPECT_EQ(runWithTableClaimed("table.move({1, 2}, 1, 2, 1, T)"), "ERR: test:1: concurrent table write");
  EXPECT_EQ(runWithTableClaimed("T.k = 1"), "ERR: test:1: concurrent table write");
  // The bad-key messages are unchanged.
  EXPECT_EQ(runWithTableClaimed("rawset(T, 0/0, 1)"), "ERR: index is NaN");
  EXPECT_EQ(runWithTableClaimed("rawset(T, nil, 1)"), "ERR: index is nil");
}

}  // namespace
}  // namespace weft::vm
