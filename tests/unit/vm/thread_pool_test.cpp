// Recycled task threads (vm/thread.h ThreadPool): a ThreadData outlives every Thread
// object that points to it, whichever the heap releases first, and only the owner's
// release returns the off-heap bytes it accounted for (gc::Mutator::noteExternalBytes).
#include <gtest/gtest.h>

#include "vm/object.h"
#include "vm/state.h"
#include "vm/thread.h"

namespace weft::vm {
namespace {

struct Recycled {
  Thread* shell;  // the finished task's thread, its data taken over
  Thread* owner;  // the new thread that took it
  ThreadData* data;
};

Recycled recycleOnce(State& state) {
  Thread* first = newThread(state);
  EXPECT_NE(first, nullptr);
  ThreadData* data = first->data;
  EXPECT_TRUE(recycleTaskThread(state, data));
  Thread* second = newThread(state);
  EXPECT_EQ(second->data, data) << "a spawn takes the pooled data";
  EXPECT_EQ(data->shells, 2u);
  return {first, second, data};
}

size_t release(State& state, Thread* th) {
  return state.heap().typeInfo(uint8_t(Kind::Thread)).release(reinterpret_cast<gc::Object*>(th));
}

// The order a mutator-local registration list can give: the owner goes first, and the
// shell still reads the data (ASan reports the use after free this once was).
TEST(ThreadPool, OwnerReleasedBeforeShellKeepsDataForTheShell) {
  State state;
  Recycled r = recycleOnce(state);
  EXPECT_GT(release(state, r.owner), sizeof(ThreadData)) << "the owner returns the data's bytes";
  EXPECT_EQ(r.shell->data, r.data);
  EXPECT_EQ(r.data->shells, 1u);
  EXPECT_TRUE(r.data->ownerReleased);
  EXPECT_EQ(release(state, r.shell), 0u) << "a shell accounted for nothing";
  EXPECT_EQ(r.shell->data, nullptr);
}

TEST(ThreadPool, ShellReleasedBeforeOwner) {
  State state;
  Recycled r = recycleOnce(state);
  EXPECT_EQ(release(state, r.shell), 0u);
  EXPECT_EQ(r.data->shells, 1u);
  EXPECT_FALSE(r.data->ownerReleased);
  EXPECT_GT(release(state, r.owner), sizeof(ThreadData));
  EXPECT_EQ(r.owner->data, nullptr);
}

// A pooled data whose shell died stays in the pool for the next spawn.
TEST(ThreadPool, PooledDataSurvivesItsShell) {
  State state;
  Thread* first = newThread(state);
  ThreadData* data = first->data;
  ASSERT_TRUE(recycleTaskThread(state, data));
  EXPECT_EQ(release(state, first), 0u);
  EXPECT_EQ(data->shells, 0u);
  Thread* next = newThread(state);
  EXPECT_EQ(next->data, data);
  EXPECT_EQ(data->shells, 1u);
}

// A task's thread is made with the stack its function needs, rounded up to the
// allocator's size class: 13 slots (208 bytes) fill a 224-byte block, so 14 slots.
// A thread made without a size keeps room for a C function's pushes.
TEST(ThreadStack, AskedSizeIsRoundedToTheSizeClass) {
  State state;
  Thread* sized = newThread(state, 13);
  ASSERT_NE(sized, nullptr);
  EXPECT_EQ(sized->data->stackSize, 14u);
  for (uint32_t i = 0; i < sized->data->stackSize; i++) EXPECT_TRUE(sized->data->stack[i].isNil()) << i;
  Thread* plain = newThread(state);
  ASSERT_NE(plain, nullptr);
  EXPECT_GE(plain->data->stackSize, kMinCStack + 1);
  EXPECT_EQ(newThread(state, kMaxStackSlots + 1), nullptr) << "beyond the stack limit";
}

// A pooled data whose stack is smaller than a new task asks for grows before it is used.
TEST(ThreadStack, RecycledStackGrowsToTheSizeAsked) {
  State state;
  Thread* first = newThread(state, 13);
  ThreadData* data = first->data;
  ASSERT_TRUE(recycleTaskThread(state, data));
  Thread* next = newThread(state, 40);
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->data, data);
  EXPECT_GE(data->stackSize, 40u);
  for (uint32_t i = 0; i < data->stackSize; i++) EXPECT_TRUE(data->stack[i].isNil()) << i;
}

// The rare part (hooks, math.random's generator) does not carry over to the next task.
TEST(ThreadStack, RecycledThreadDropsItsRarePart) {
  State state;
  Thread* first = newThread(state);
  ThreadData* data = first->data;
  EXPECT_EQ(data->rare, nullptr) << "made on first use only";
  ThreadRare* rare = makeThreadRare(data);
  ASSERT_NE(rare, nullptr);
  EXPECT_EQ(makeThreadRare(data), rare) << "made once";
  rare->randomSeeded = true;
  ASSERT_TRUE(recycleTaskThread(state, data));
  EXPECT_EQ(data->rare, nullptr);
}

}  // namespace
}  // namespace weft::vm
