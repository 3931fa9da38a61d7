// Strings and the interned-string table (vm/string.h).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "vm/state.h"
#include "vm/string.h"

namespace weft::vm {
namespace {

class StringTest : public ::testing::Test {
 protected:
  State state_;
};

TEST_F(StringTest, ShortStringsAreInterned) {
  String* a = newString(state_, "hello");
  String* b = newString(state_, std::string("hel") + "lo");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a->isShort());
  EXPECT_EQ(a->view(), "hello");
  EXPECT_EQ(a->data[5], '\0');
  EXPECT_NE(newString(state_, "hellO"), a);
}

TEST_F(StringTest, LongStringsAreNotInterned) {
  std::string text(kMaxShortString + 1, 'x');
  String* a = newString(state_, text);
  String* b = newString(state_, text);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a, b);
  EXPECT_FALSE(a->isShort());
  EXPECT_TRUE(stringEquals(a, b));
  EXPECT_EQ(stringHash(a), stringHash(b));
  EXPECT_EQ(stringHash(a), hashBytes(text, state_.hashSeed()));
  String* exact = newString(state_, std::string(kMaxShortString, 'y'));
  EXPECT_TRUE(exact->isShort());
}

TEST_F(StringTest, EmbeddedZerosAndEmpty) {
  std::string_view z("a\0b", 3);
  String* s = newString(state_, z);
  EXPECT_EQ(s->length, 3u);
  EXPECT_EQ(s, newString(state_, z));
  EXPECT_NE(s, newString(state_, "a"));
  String* empty = newString(state_, "");
  EXPECT_EQ(empty->length, 0u);
  EXPECT_EQ(empty, newString(state_, ""));
}

TEST_F(StringTest, HashIsSeededContentHash) {
  String* s = newString(state_, "key");
  EXPECT_EQ(s->header.hash, hashBytes("key", state_.hashSeed()));
  EXPECT_NE(hashBytes("key", 1), hashBytes("key", 2));
  EXPECT_NE(hashBytes("ab", 7), hashBytes("ba", 7));
  EXPECT_NE(hashBytes(std::string_view("a\0", 2), 7), hashBytes("a", 7));
}

TEST_F(StringTest, CompareIsBytewiseWithEmbeddedZeros) {
  auto S = [&](std::string_view v) { return newString(state_, v); };
  // lua5.4: "a\0b" < "a\0c", "a" < "a\0", "a\0" < "b", "Z" < "a", "" < "\0", "\255" > "a"
  EXPECT_LT(stringCompare(S(std::string_view("a\0b", 3)), S(std::string_view("a\0c", 3))), 0);
  EXPECT_LT(stringCompare(S("a"), S(std::string_view("a\0", 2))), 0);
  EXPECT_GT(stringCompare(S(std::string_view("a\0", 2)), S("a")), 0);
  EXPECT_LT(stringCompare(S(std::string_view("a\0", 2)), S("b")), 0);
  EXPECT_LT(stringCompare(S("Z"), S("a")), 0);
  EXPECT_LT(stringCompare(S(""), S(std::string_view("\0", 1))), 0);
  EXPECT_GT(stringCompare(S("\xff"), S("a")), 0);
  EXPECT_EQ(stringCompare(S("same"), S("same")), 0);
  std::string longA(100, 'q'), longB(100, 'q');
  longB[99] = 'r';
  EXPECT_LT(stringCompare(S(longA), S(longB)), 0);
  EXPECT_EQ(stringCompare(S(longA), S(longA)), 0);
}

TEST_F(StringTest, FinishStringInternsShortResults) {
  String* canonical = newString(state_, "built");
  String* buf = newStringUninit(state_, 5);
  std::memcpy(buf->data, "built", 5);
  EXPECT_EQ(finishString(state_, buf), canonical);
  String* fresh = newStringUninit(state_, 6);
  std::memcpy(fresh->data, "fresh!", 6);
  String* done = finishString(state_, fresh);
  EXPECT_EQ(done, fresh);
  EXPECT_TRUE(done->isShort());
  EXPECT_EQ(newString(state_, "fresh!"), done);
  String* big = newStringUninit(state_, 1000);
  std::memset(big->data, 'z', 1000);
  EXPECT_EQ(finishString(state_, big), big);
  EXPECT_EQ(stringHash(big), hashBytes(big->view(), state_.hashSeed()));
}

TEST_F(StringTest, ManyStringsGrowShards) {
  size_t before = state_.strings().size();
  std::vector<String*> all;
  for (int i = 0; i < 20000; ++i) all.push_back(newString(state_, "s" + std::to_string(i)));
  EXPECT_EQ(state_.strings().size(), before + 20000);
  for (int i = 0; i < 20000; i += 997) EXPECT_EQ(newString(state_, "s" + std::to_string(i)), all[i]);
}

TEST(StringTableConcurrency, ParallelLookupsFindTheCanonicalObjects) {
  // Lookups of existing strings allocate nothing, so several threads may run them at
  // once through the shard locks; each must find the one object (invariant 1).
  State state;
  std::vector<String*> canonical;
  for (int i = 0; i < 2000; ++i) canonical.push_back(newString(state, "k" + std::to_string(i)));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        for (int i = 0; i < 2000; ++i) {
          if (newString(state, "k" + std::to_string(i)) != canonical[i]) mismatches[t]++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0);
}

TEST_F(StringTest, CollectionDropsDeadStringsAndKeepsLive) {
  gc::HandleScope scope(state_.heap());
  gc::Handle<String> kept(scope, newString(state_, "kept-string"));
  newString(state_, "garbage-string");
  size_t before = state_.strings().size();
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  EXPECT_EQ(state_.strings().size(), before - 1);
  EXPECT_EQ(newString(state_, "kept-string"), kept.get());
  EXPECT_EQ(kept->view(), "kept-string");
  EXPECT_EQ(state_.heap().verifyHeap(), "");
}

// A minor sweeps only the strings interned since the last collection (gc-v2.md): young
// garbage goes, young survivors are found again at their new addresses (erasing
// shifts the clusters of many colliding strings), and an old string that died waits for
// a major, which walks every slot.
TEST_F(StringTest, MinorErasesYoungGarbageAndFindsYoungSurvivors) {
  gc::HandleScope scope(state_.heap());
  gc::Handle<String> oldDead(scope, newString(state_, "old-then-dead"));
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  oldDead.set(nullptr);
  size_t before = state_.strings().size();
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back("young-" + std::to_string(i));
  std::vector<gc::Handle<String>> kept;
  for (int i = 0; i < 5000; ++i) {
    String* s = newString(state_, names[i]);
    if (i % 3 == 0) kept.emplace_back(scope, s);
  }
  ASSERT_EQ(state_.strings().size(), before + 5000);
  ASSERT_TRUE(state_.heap().collectMayGC(gc::CollectionKind::kMinor).isOk());
  EXPECT_EQ(state_.strings().size(), before + kept.size()) << "young garbage is dropped, old garbage kept";
  for (size_t k = 0; k < kept.size(); ++k) {
    EXPECT_EQ(newString(state_, names[k * 3]), kept[k].get()) << names[k * 3];
  }
  EXPECT_EQ(state_.heap().verifyHeap(), "");
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  EXPECT_EQ(state_.strings().size(), before - 1 + kept.size()) << "a major drops the old dead string";
}

// The shards fill to 7/8 before they double: 200,000 strings (3,125 a shard on average)
// fit in 4,096 slots a shard where 3/4 took 8,192 for most. A young list that a minor
// leaves nearly empty shrinks back, where it kept the size of its busiest round.
TEST_F(StringTest, ShardsFillToSevenEighthsAndYoungListsShrinkAfterASweep) {
  const size_t before = state_.strings().size();
  const int count = 200000;
  gc::HandleScope scope(state_.heap());
  std::vector<gc::Handle<String>> kept;
  for (int i = 0; i < count; ++i) {
    String* s = newString(state_, "fill-" + std::to_string(i));
    ASSERT_NE(s, nullptr);
    if (i % 1000 == 0) kept.emplace_back(scope, s);
  }
  ASSERT_EQ(state_.strings().size(), before + count);
  StringTable::Footprint full = state_.strings().footprint();
  EXPECT_LE(full.slots, size_t{StringTable::kShardCount} * 4096 + 4096);
  EXPECT_GE(full.youngSlots, size_t(count));
  ASSERT_TRUE(state_.heap().collectMayGC(gc::CollectionKind::kMinor).isOk());
  ASSERT_EQ(state_.strings().size(), before + kept.size());
  EXPECT_LE(state_.strings().footprint().youngSlots, size_t{StringTable::kShardCount} * 32);
  for (size_t k = 0; k < kept.size(); ++k)
    EXPECT_EQ(newString(state_, "fill-" + std::to_string(k * 1000)), kept[k].get());
  EXPECT_EQ(state_.heap().verifyHeap(), "");
}

// A major that leaves a shard an eighth full or less shrinks it, as lua's table shrinks
// at a collection: 200,000 strings made and dropped kept their 2 MB of slots for good.
// What survives is found again, and the table grows back when strings come.
TEST_F(StringTest, AMajorShrinksTheShardsItLeavesNearlyEmpty) {
  gc::HandleScope scope(state_.heap());
  std::vector<gc::Handle<String>> kept;
  for (int i = 0; i < 200000; ++i) {
    String* s = newString(state_, "drop-" + std::to_string(i));
    ASSERT_NE(s, nullptr);
    if (i % 10000 == 0) kept.emplace_back(scope, s);
  }
  size_t full = state_.strings().footprint().slots;
  ASSERT_GE(full, size_t{StringTable::kShardCount} * 2048);
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  size_t after = state_.strings().footprint().slots;
  EXPECT_LE(after * 8, full) << "shards shrink to at most a quarter full";
  EXPECT_GE(after, 4 * state_.strings().size()) << "and stop at a quarter full";
  for (size_t k = 0; k < kept.size(); ++k) {
    EXPECT_EQ(newString(state_, "drop-" + std::to_string(k * 10000)), kept[k].get());
  }
  for (int i = 0; i < 50000; ++i) ASSERT_NE(newString(state_, "again-" + std::to_string(i)), nullptr);
  EXPECT_EQ(state_.heap().verifyHeap(), "");
}

// A slot keeps 20 bits of its string's hash (invariant 3): strings of one shard whose
// 20 bits collide share a probe chain and must each be found by content, before and
// after a minor and a major move them and erase others from the chain.
TEST_F(StringTest, StringsWhoseSlotTagsCollideAreToldApart) {
  std::map<uint32_t, std::vector<std::string>> byTag;  // shard bits and tag bits
  std::vector<std::string> colliding;
  for (int i = 0; colliding.empty(); ++i) {
    std::string name = "tag-" + std::to_string(i);
    uint32_t hash = hashBytes(name, state_.hashSeed());
    auto& group = byTag[(hash >> 26) << 20 | (hash & 0xfffff)];
    group.push_back(name);
    if (group.size() == 2) colliding = group;
  }
  gc::HandleScope scope(state_.heap());
  gc::Handle<String> first(scope, newString(state_, colliding[0]));
  for (int i = 0; i < 3000; ++i) newString(state_, "filler-" + std::to_string(i));  // garbage around them
  gc::Handle<String> second(scope, newString(state_, colliding[1]));
  ASSERT_NE(first.get(), second.get());
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(newString(state_, colliding[0]), first.get()) << round;
    EXPECT_EQ(newString(state_, colliding[1]), second.get()) << round;
    EXPECT_EQ(first->view(), colliding[0]);
    EXPECT_EQ(second->view(), colliding[1]);
    auto kind = round == 0 ? gc::CollectionKind::kMinor : gc::CollectionKind::kMajor;
    ASSERT_TRUE(state_.heap().collectMayGC(kind).isOk());
  }
  EXPECT_EQ(state_.heap().verifyHeap(), "");
}

}  // namespace
}  // namespace weft::vm
