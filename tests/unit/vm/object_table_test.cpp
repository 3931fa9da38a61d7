// Tables (vm/table.h): parts, borders, traversal, keys, and survival across collections.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "vm/proto.h"
#include "vm/state.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {
namespace {

class TableTest : public ::testing::Test {
 protected:
  Table* table(uint32_t na = 0, uint32_t nh = 0) {
    Table* t = newTable(state_, na, nh);
    EXPECT_NE(t, nullptr);
    return t;
  }
  Value str(std::string_view s) { return Value::string(newString(state_, s)); }
  void setI(Table* t, int64_t k, const Value& v) { ASSERT_TRUE(tableSetInt(state_, t, k, v).isOk()); }
  void set(Table* t, const Value& k, const Value& v) { ASSERT_TRUE(tableSet(state_, t, k, v).isOk()); }
  size_t countPairs(Table* t) {
    size_t n = 0;
    Value k = Value::nil(), v = Value::nil();
    bool found = true;
    while (tableNext(t, k, v, found).isOk() && found) n++;
    return n;
  }
  State state_;
};

TEST_F(TableTest, IntegerKeysAppendIntoArrayPart) {
  Table* t = table();
  for (int64_t i = 1; i <= 100; ++i) setI(t, i, Value::integer(i * 10));
  EXPECT_EQ(t->arraySize, 100u);
  EXPECT_EQ(t->nodes, nullptr);
  EXPECT_EQ(tableGetInt(t, 57).asInt(), 570);
  EXPECT_EQ(tableLength(t), 100u);
  ASSERT_NE(tableArraySlot(t, 1), nullptr);
  EXPECT_EQ(tableArraySlot(t, 101), nullptr);
  EXPECT_EQ(tableArraySlot(t, 0), nullptr);
}

TEST_F(TableTest, ReverseFillMigratesToArrayOnRehash) {
  Table* t = table();
  for (int64_t i = 64; i >= 1; --i) setI(t, i, Value::integer(i));
  for (int64_t i = 1; i <= 64; ++i) EXPECT_EQ(tableGetInt(t, i).asInt(), i);
  EXPECT_EQ(tableLength(t), 64u);
  // A rehash after the keys arrived puts the dense keys in the array part.
  set(t, str("x"), Value::boolean(true));
  for (int i = 0; i < 64; ++i) set(t, str("f" + std::to_string(i)), Value::integer(i));
  EXPECT_GE(t->arraySize, 32u);
  for (int64_t i = 1; i <= 64; ++i) EXPECT_EQ(tableGetInt(t, i).asInt(), i);
  EXPECT_EQ(tableLength(t), 64u);
}

TEST_F(TableTest, BorderOfConstructorWithHole) {
  // lua5.4: print(#{1,2,nil,4}) -> 4 (the constructor sizes the array part to 4)
  Table* t = table(4, 0);
  setI(t, 1, Value::integer(1));
  setI(t, 2, Value::integer(2));
  setI(t, 4, Value::integer(4));
  EXPECT_EQ(tableLength(t), 4u);
  // lua5.4: local t={1,2,nil,4}; t[4]=nil; print(#t) -> 2
  setI(t, 4, Value::nil());
  EXPECT_EQ(tableLength(t), 2u);
}

TEST_F(TableTest, BorderIsAlwaysABorder) {
  Table* t = table();
  for (int64_t i = 1; i <= 20; ++i) setI(t, i, Value::integer(i));
  for (int64_t i : {5, 11, 12, 19}) setI(t, i, Value::nil());
  uint64_t n = tableLength(t);
  EXPECT_TRUE(n == 0 || !tableGetInt(t, int64_t(n)).isNil());
  EXPECT_TRUE(tableGetInt(t, int64_t(n) + 1).isNil());
  EXPECT_EQ(tableLength(table()), 0u);
  // lua5.4: local t = {} t[1]=1 t[2]=2 t[4]=4 print(#t) -> 4
  Table* u = table();
  setI(u, 1, Value::integer(1));
  setI(u, 2, Value::integer(2));
  setI(u, 4, Value::integer(4));
  EXPECT_EQ(tableLength(u), 4u);
}

TEST_F(TableTest, BorderInHashPart) {
  Table* t = table();
  set(t, str("a"), Value::integer(0));
  for (int64_t i = 1000; i >= 1; --i) setI(t, i, Value::integer(i));
  EXPECT_EQ(tableLength(t), 1000u);
}

TEST_F(TableTest, NormalisedFloatKeysAndNegativeZero) {
  Table* t = table();
  set(t, Value::number(3.0), str("three"));
  EXPECT_EQ(tableGetInt(t, 3).asString()->view(), "three");
  set(t, Value::number(-0.0), str("zero"));
  EXPECT_EQ(tableGet(t, Value::integer(0)).asString()->view(), "zero");
  EXPECT_EQ(tableGet(t, Value::number(0.0)).asString()->view(), "zero");
  set(t, Value::number(2.5), str("half"));
  EXPECT_EQ(tableGet(t, Value::number(2.5)).asString()->view(), "half");
  EXPECT_TRUE(tableGet(t, Value::integer(2)).isNil());
  Value k = normaliseKey(Value::number(1e15));
  EXPECT_TRUE(k.isInt());
  EXPECT_TRUE(normaliseKey(Value::number(1e300)).isFloat());
  EXPECT_EQ(hashValue(normaliseKey(Value::number(7.0))), hashValue(Value::integer(7)));
}

TEST_F(TableTest, NilAndNaNKeysRejected) {
  Table* t = table();
  EXPECT_EQ(tableSet(state_, t, Value::nil(), Value::integer(1)).code(), StatusCode::kRuntimeError);
  EXPECT_EQ(tableSet(state_, t, Value::number(std::nan("")), Value::integer(1)).code(), StatusCode::kRuntimeError);
  EXPECT_TRUE(tableGet(t, Value::number(std::nan(""))).isNil());
  EXPECT_TRUE(tableGet(t, Value::nil()).isNil());
  EXPECT_EQ(countPairs(t), 0u);
}

TEST_F(TableTest, HugeSparseIntegerKeys) {
  Table* t = table();
  int64_t keys[] = {INT64_MAX, INT64_MIN, -1, 0, int64_t(1) << 40, (int64_t(1) << 31) + 1, 1};
  for (int64_t k : keys) setI(t, k, Value::integer(k ^ 5));
  for (int64_t k : keys) EXPECT_EQ(tableGetInt(t, k).asInt(), k ^ 5);
  EXPECT_LE(t->arraySize, 4u);
  EXPECT_EQ(countPairs(t), std::size(keys));
  EXPECT_EQ(tableLength(t), 1u);
}

// Arithmetic runs of integer keys (sequential, strided by a power of 2 or a prime,
// descending, high-bit strides) fill a hash part at its full 3/4 load without two keys
// sharing a home slot, and consecutive keys never pile into one long cluster. (A stride
// that is a multiple of the part's prime modulus would collide: 3 at capacity 4.)
TEST(TableHomeSlot, IntegerProgressionsGetDistinctHomes) {
  const int64_t strides[] = {1, -1, 3, 1024, 7919, int64_t(1) << 32};
  for (uint32_t cap = 8; cap <= (1u << 18); cap <<= 1) {
    for (int64_t stride : strides) {
      std::vector<bool> used(cap);
      uint32_t n = cap - cap / 4;
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t home = tableHomeSlot(Value::integer(1000000007 + int64_t(i) * stride), cap);
        ASSERT_LT(home, cap);
        ASSERT_FALSE(used[home]) << "cap " << cap << " stride " << stride << " key #" << i;
        used[home] = true;
      }
      if (stride != 1 && stride != -1) continue;
      uint32_t run = 0, longest = 0;
      for (uint32_t i = 0; i < 2 * cap; ++i) {
        run = used[i % cap] ? run + 1 : 0;
        longest = std::max(longest, run);
      }
      EXPECT_LE(longest, 5u) << "cap " << cap << " stride " << stride;  // 4, plus a wrap at small capacities
    }
  }
}

TEST_F(TableTest, StridedAndRandomIntegerKeys) {
  Table* t = table();
  uint64_t x = 1;
  for (int64_t i = 1; i <= 20000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    setI(t, i * 1024, Value::integer(i));
    setI(t, -i * 7919, Value::integer(-i));
    setI(t, int64_t(x | 1), Value::integer(i));  // odd: none of the i * 1024 keys
  }
  x = 1;
  for (int64_t i = 1; i <= 20000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    ASSERT_EQ(tableGetInt(t, i * 1024).asInt(), i);
    ASSERT_EQ(tableGetInt(t, -i * 7919).asInt(), -i);
    ASSERT_EQ(tableGetInt(t, int64_t(x | 1)).asInt(), i);
    ASSERT_TRUE(tableGetInt(t, i * 1024 + 512).isNil());
  }
  EXPECT_EQ(countPairs(t), 60000u);
}

TEST_F(TableTest, MixedKeyTypes) {
  Table* t = table();
  Table* other = table();
  std::string longKey(100, 'L');
  set(t, Value::boolean(true), Value::integer(1));
  set(t, Value::boolean(false), Value::integer(2));
  set(t, Value::table(other), Value::integer(3));
  set(t, str(longKey), Value::integer(4));
  set(t, Value::lightUserdata(&longKey), Value::integer(5));
  EXPECT_EQ(tableGet(t, Value::boolean(true)).asInt(), 1);
  EXPECT_EQ(tableGet(t, Value::boolean(false)).asInt(), 2);
  EXPECT_EQ(tableGet(t, Value::table(other)).asInt(), 3);
  EXPECT_EQ(tableGet(t, str(longKey)).asInt(), 4);  // a different object, same content
  EXPECT_EQ(tableGetStr(t, newString(state_, longKey)).asInt(), 4);
  EXPECT_EQ(tableGet(t, Value::lightUserdata(&longKey)).asInt(), 5);
  EXPECT_TRUE(tableGet(t, Value::table(table())).isNil());
}

TEST_F(TableTest, NextSurvivesClearingFieldsDuringTraversal) {
  Table* t = table();
  for (int64_t i = 1; i <= 10; ++i) setI(t, i, Value::integer(i));
  for (int i = 0; i < 50; ++i) set(t, str("k" + std::to_string(i)), Value::integer(i));
  std::set<std::string> seen;
  Value k = Value::nil(), v = Value::nil();
  bool found = true;
  size_t visited = 0;
  for (;;) {
    ASSERT_TRUE(tableNext(t, k, v, found).isOk());
    if (!found) break;
    visited++;
    set(t, k, Value::nil());  // clearing the current field is allowed
    if (k.isString()) seen.insert(std::string(k.asString()->view()));
  }
  EXPECT_EQ(visited, 60u);
  EXPECT_EQ(seen.size(), 50u);
  EXPECT_EQ(countPairs(t), 0u);
  Value missing = str("not-a-key");
  EXPECT_EQ(tableNext(t, missing, v, found).code(), StatusCode::kRuntimeError);
}

TEST_F(TableTest, NextWhileAssigningExistingFields) {
  Table* t = table();
  for (int i = 0; i < 40; ++i) set(t, Value::integer(i * 7 + 100), Value::integer(i));
  Value k = Value::nil(), v = Value::nil();
  bool found = true;
  size_t visited = 0;
  while (tableNext(t, k, v, found).isOk() && found) {
    visited++;
    set(t, k, Value::integer(v.asInt() + 1000));  // existing fields may be reassigned
  }
  EXPECT_EQ(visited, 40u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(tableGetInt(t, i * 7 + 100).asInt(), i + 1000);
}

TEST_F(TableTest, DeadSlotsAreReusedUnderChurn) {
  Table* t = table();
  for (int64_t i = 0; i < 100000; ++i) {
    setI(t, -i, Value::integer(i));
    setI(t, -i, Value::nil());
  }
  EXPECT_EQ(countPairs(t), 0u);
  EXPECT_LE(t->nodes ? t->nodes->capacity : 0u, 1024u);
}

TEST_F(TableTest, FindSlotAndResize) {
  Table* t = table();
  set(t, str("a"), Value::integer(1));
  Value* slot = tableFindSlot(t, str("a"));
  ASSERT_NE(slot, nullptr);
  EXPECT_EQ(slot->asInt(), 1);
  EXPECT_EQ(tableFindSlot(t, str("b")), nullptr);
  set(t, str("a"), Value::nil());
  EXPECT_EQ(tableFindSlot(t, str("a")), nullptr);
  ASSERT_TRUE(tableResize(state_, t, 50, 20).isOk());
  EXPECT_EQ(t->arraySize, 50u);
  for (int64_t i = 1; i <= 50; ++i) setI(t, i, Value::integer(i));
  EXPECT_EQ(tableLength(t), 50u);
}

TEST_F(TableTest, HashPartStaysUnderLoadFactor) {
  Table* t = table();
  for (int i = 0; i < 5000; ++i) set(t, str("key" + std::to_string(i)), Value::integer(i));
  ASSERT_NE(t->nodes, nullptr);
  EXPECT_LE(t->nodeCount * 4, t->nodes->capacity * 3);
  for (int i = 0; i < 5000; ++i) EXPECT_EQ(tableGet(t, str("key" + std::to_string(i))).asInt(), i);
}

TEST_F(TableTest, SettersClearTheMetamethodCache) {
  Table* t = table();
  t->header.aux = 0x3f;
  set(t, str("__index"), Value::boolean(true));
  EXPECT_EQ(t->header.aux, 0);
}

TEST_F(TableTest, IdentityHashKeysSurviveCollection) {
  gc::HandleScope scope(state_.heap());
  gc::Handle<Table> t(scope, table());
  gc::Handle<Table> keyObj(scope, table());
  set(t.get(), Value::table(keyObj.get()), str("found-me"));
  for (int i = 0; i < 30; ++i) set(t.get(), Value::table(table()), Value::integer(i));  // strong keys
  for (int64_t i = 1; i <= 30; ++i) setI(t.get(), i, str("v" + std::to_string(i)));
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  EXPECT_EQ(state_.heap().verifyHeap(), "");
  Value found = tableGet(t.get(), Value::table(keyObj.get()));
  ASSERT_TRUE(found.isString());
  EXPECT_EQ(found.asString()->view(), "found-me");
  EXPECT_EQ(tableGetInt(t.get(), 30).asString()->view(), "v30");
  EXPECT_EQ(countPairs(t.get()), 61u);
}

TEST_F(TableTest, WeakTablesDropDeadObjectsButNotStrings) {
  gc::HandleScope scope(state_.heap());
  gc::Handle<Table> weakK(scope, table());
  gc::Handle<Table> weakV(scope, table());
  gc::Handle<Table> live(scope, table());
  Table* mtK = table();
  set(mtK, str("__mode"), str("k"));
  tableSetMetatable(weakK.get(), mtK);
  Table* mtV = table();
  set(mtV, str("__mode"), str("v"));
  tableSetMetatable(weakV.get(), mtV);
  set(weakK.get(), Value::table(table()), Value::integer(1));      // dead key
  set(weakK.get(), Value::table(live.get()), Value::table(table()));  // live key: value kept
  set(weakK.get(), str("s"), Value::table(table()));               // string key: strong
  set(weakV.get(), Value::integer(1), Value::table(table()));      // dead value
  set(weakV.get(), Value::integer(2), Value::table(live.get()));   // live value
  set(weakV.get(), str("name"), str("a string value"));            // strings stay
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  EXPECT_EQ(state_.heap().verifyHeap(), "");
  EXPECT_EQ(countPairs(weakK.get()), 2u);
  EXPECT_TRUE(tableGet(weakK.get(), Value::table(live.get())).isTable());
  EXPECT_TRUE(tableGet(weakK.get(), str("s")).isTable());
  EXPECT_EQ(countPairs(weakV.get()), 2u);
  EXPECT_TRUE(tableGetInt(weakV.get(), 1).isNil());
  EXPECT_EQ(tableGetInt(weakV.get(), 2).asTable(), live.get());
  EXPECT_EQ(tableGet(weakV.get(), str("name")).asString()->view(), "a string value");
}

TEST_F(TableTest, EphemeronValueReachingItsKey) {
  // A weak-keyed entry whose value refers to its own key is collectable (§2.5.4).
  gc::HandleScope scope(state_.heap());
  gc::Handle<Table> weakK(scope, table());
  Table* mt = table();
  set(mt, str("__mode"), str("k"));
  tableSetMetatable(weakK.get(), mt);
  Table* key = table();
  Table* value = table();
  set(value, str("back"), Value::table(key));
  set(weakK.get(), Value::table(key), Value::table(value));
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  EXPECT_EQ(state_.heap().verifyHeap(), "");
  EXPECT_EQ(countPairs(weakK.get()), 0u);
}

TEST_F(TableTest, ProtoAndClosureObjectsTrace) {
  auto data = std::make_unique<frontend::ProtoData>();
  data->source = "@test.lua";
  data->constants.push_back(frontend::Constant::makeString("const-string"));
  data->constants.push_back(frontend::Constant::makeInteger(7));
  auto child = std::make_unique<frontend::ProtoData>();
  child->source = "@test.lua";
  child->constants.push_back(frontend::Constant::makeFloat(2.5));
  data->protos.push_back(std::move(child));
  gc::HandleScope scope(state_.heap());
  gc::Handle<Proto> p(scope, loadProto(state_, std::move(data)));
  ASSERT_NE(p.get(), nullptr);
  gc::Handle<LuaClosure> c(scope, newLuaClosure(state_, p->protos[0], 1));
  Upvalue* up = newUpvalueClosed(state_, str("upvalue-string"));
  storeRef(c.get(), c->upvalues[0], up);
  gc::Handle<NativeClosure> n(scope, newNativeClosure(state_, nullptr, "native", 2));
  storeValue(n.get(), n->upvalues[1], str("native-up"));
  gc::Handle<Userdata> u(scope, newUserdata(state_, 100));
  storeValue(u.get(), userValueSlot(u.get(), 0), str("user-value"));
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  EXPECT_EQ(state_.heap().verifyHeap(), "");
  EXPECT_EQ(p->constants[0].asString()->view(), "const-string");
  EXPECT_EQ(p->source->view(), "@test.lua");
  EXPECT_EQ(p->protos[0]->source, p->source);
  EXPECT_EQ(c->proto, p->protos[0]);
  EXPECT_EQ(c->proto->constants[0].asFloat(), 2.5);
  EXPECT_EQ(c->upvalues[0]->cell.asString()->view(), "upvalue-string");
  EXPECT_EQ(n->upvalues[1].asString()->view(), "native-up");
  EXPECT_EQ(userValueSlot(u.get(), 0).asString()->view(), "user-value");
  EXPECT_EQ(u->size, 100u);
  EXPECT_EQ(u->userValues, 1u);
}

// Every userdata is non-moving (gc-v2.md "Pinning and non-moving objects"): its payload
// keeps its address across minors and majors under relocate stress, which moves the
// table holding it, and a dead one's cell is reused.
TEST(UserdataTest, PayloadNeverMovesUnderRelocateStress) {
  StateOptions options;
  options.gc.stress = gc::StressMode::kRelocate;
  options.gc.verify = true;
  State state(options);
  gc::HandleScope scope(state.heap());
  gc::Handle<Table> holder(scope, newTable(state, 0, 1));
  Userdata* u = newUserdata(state, 40);
  ASSERT_NE(u, nullptr);
  std::memcpy(u->data, "stable payload", 15);
  ASSERT_TRUE(tableSetInt(state, holder.get(), 1, Value::userdata(u)).isOk());
  Table* before = holder.get();
  for (int k = 0; k < 3; ++k) ASSERT_TRUE(state.heap().collectMayGC().isOk());
  EXPECT_NE(holder.get(), before) << "the table moved";
  EXPECT_EQ(tableGetInt(holder.get(), 1).asUserdata(), u);
  EXPECT_STREQ(reinterpret_cast<const char*>(u->data), "stable payload");
}

// The user-value count is fixed per object (io handles ask for none); more than
// kMaxUserValues is refused rather than given a slot that does not exist.
TEST_F(TableTest, UserdataUserValueCount) {
  gc::HandleScope scope(state_.heap());
  gc::Handle<Userdata> none(scope, newUserdata(state_, 16, 0));
  ASSERT_NE(none.get(), nullptr);
  EXPECT_EQ(none->userValues, 0u);
  EXPECT_EQ(newUserdata(state_, 16, kMaxUserValues + 1), nullptr);
  // Any count up to the limit: each user value is its own traced slot after the bytes.
  gc::Handle<Userdata> many(scope, newUserdata(state_, 5, 40));
  ASSERT_NE(many.get(), nullptr);
  for (uint32_t i = 0; i < 40; i++) storeValue(many.get(), userValueSlot(many.get(), i), str(std::to_string(i) + "-uv"));
  std::memset(many->data, 0xab, 5);
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  EXPECT_EQ(none->userValues, 0u);
  EXPECT_EQ(none->size, 16u);
  EXPECT_EQ(state_.heap().verifyHeap(), "");
  for (uint32_t i = 0; i < 40; i++) EXPECT_EQ(userValueSlot(many.get(), i).asString()->view(), std::to_string(i) + "-uv");
  EXPECT_EQ(many->data[4], 0xab);
}

TEST_F(TableTest, StateRegistryLayout) {
  EXPECT_EQ(state_.initStatus(), Status::ok());
  EXPECT_EQ(tableGetInt(state_.registry, 2).asTable(), state_.globals);
  EXPECT_TRUE(tableGetInt(state_.registry, 1).isThread());
  EXPECT_EQ(state_.metaNames[size_t(Meta::Index)]->view(), "__index");
  EXPECT_EQ(state_.metaNames[size_t(Meta::Pairs)]->view(), "__pairs");
  EXPECT_EQ(state_.metaNames[size_t(Meta::Close)]->view(), "__close");
  EXPECT_EQ(state_.memoryErrorMessage->view(), "not enough memory");
  ASSERT_TRUE(state_.heap().collectMayGC().isOk());
  EXPECT_EQ(tableGetInt(state_.registry, 2).asTable(), state_.globals);
  EXPECT_EQ(newString(state_, "__index"), state_.metaNames[size_t(Meta::Index)]);
}

}  // namespace
}  // namespace weft::vm

namespace weft::vm {
namespace {

TEST(TableRelocation, EveryObjectMovesAndLookupsStillWork) {
  // Relocate stress: each collection moves every object and protects old space, so a
  // reference the table code or its tracing failed to update faults at once.
  StateOptions options;
  options.gc.stress = gc::StressMode::kRelocate;
  options.gc.verify = true;
  State state(options);
  ASSERT_TRUE(state.initStatus().isOk());
  gc::HandleScope scope(state.heap());
  gc::Handle<Table> t(scope, newTable(state));
  gc::Handle<Table> weak(scope, newTable(state));
  Table* mt = newTable(state);
  ASSERT_TRUE(tableSetStr(state, mt, newString(state, "__mode"), Value::string(newString(state, "kv"))).isOk());
  tableSetMetatable(weak.get(), mt);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 200; ++i) {
      std::string name = "key" + std::to_string(i);
      ASSERT_TRUE(tableSetStr(state, t.get(), newString(state, name), Value::integer(i)).isOk());
      ASSERT_TRUE(tableSetInt(state, t.get(), i + 1, Value::string(newString(state, name + std::string(50, '!')))).isOk());
      ASSERT_TRUE(tableSet(state, weak.get(), Value::table(t.get()), Value::integer(i)).isOk());
      ASSERT_TRUE(tableSetInt(state, weak.get(), i + 1, Value::table(newTable(state))).isOk());
    }
    ASSERT_TRUE(state.heap().collectMayGC().isOk());
    EXPECT_EQ(state.heap().verifyHeap(), "");
    for (int i = 0; i < 200; ++i) {
      std::string name = "key" + std::to_string(i);
      EXPECT_EQ(tableGetStr(t.get(), newString(state, name)).asInt(), i);
      EXPECT_EQ(tableGetInt(t.get(), i + 1).asString()->view(), name + std::string(50, '!'));
      EXPECT_TRUE(tableGetInt(weak.get(), i + 1).isNil());  // weak values died
    }
    EXPECT_EQ(tableGet(weak.get(), Value::table(t.get())).asInt(), 199);
    EXPECT_EQ(tableLength(t.get()), 200u);
  }
}

}  // namespace
}  // namespace weft::vm
