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

}  // namespace
}  // namespace weft::vm
