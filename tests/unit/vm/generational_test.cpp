// The generational collector under the VM (docs/design/gc-v2.md): a write barrier that
// drops its record is caught by --gc-verify's remembered-set check before the next
// collection and fails closed; the same program with every record kept runs clean.
#include <gtest/gtest.h>

#include "gc/fault.h"
#include "vm/host.h"

namespace weft::vm {
namespace {

// An old table (it survives collections) that receives new tables: barrier records.
constexpr const char* kProgram = R"(
  local old = {}
  for i = 1, 10 do old[i] = {} end
  collectgarbage()
  for round = 1, 50 do
    for i = 1, 10 do old[i] = {round, i} end
  end
  local sum = 0
  for i = 1, 10 do sum = sum + old[i][1] end
  return sum
)";

// Runs `program` under stress (a collection at every `interval`-th safepoint) and
// verification; returns its result as a string, or "LOAD" or "ERR".
std::string run(std::string& failure, const char* program = kProgram, uint64_t interval = 1) {
  StateOptions opts;
  opts.gc.stress = gc::StressMode::kCollect;
  opts.gc.verify = true;
  opts.gc.interval = interval;
  auto S = newStandardState(opts, true);
  HostStack h(*S);
  std::string out;
  if (!h.loadMayGC(program, "=test").isOk()) return "LOAD";
  Status st = h.pcallMayGC(0, 1, false);
  (void)h.toStringMayGC(-1, out);
  failure = S->heap().failureReason();
  h.closeMayGC();
  return st.isOk() ? out : "ERR";
}

TEST(VmGenerational, BarrierDropIsCaughtByVerify) {
  std::string failure;
  gc::fault::configure("gc.barrier-drop:3");
  std::string out = run(failure);
  gc::fault::configure("");
  EXPECT_EQ(out, "ERR");
  EXPECT_NE(failure.find("verify failed: before collection"), std::string::npos) << failure;
  EXPECT_NE(failure.find("remembered set"), std::string::npos) << failure;
}

TEST(VmGenerational, EveryRecordKeptRunsClean) {
  std::string failure;
  EXPECT_EQ(run(failure), "500");
  EXPECT_EQ(failure, "");
}

// Cards (gc-v2.md "Cards"): a big old array receives young tables at scattered slots
// while minors run (stress: one at every 7th safepoint, so that many values are still
// young when stored: at every safepoint each is promoted first), so minors trace only
// dirty cards; --gc-verify checks before every collection that no
// clean card holds a young value. Every value must survive and read back.
constexpr const char* kCards = R"(
  local n = 5000
  local big = {}
  for i = 1, n do big[i] = i end
  collectgarbage()
  for round = 1, 20 do
    for k = 1, 30 do
      local i = (round * 7919 + k * 104729) % n + 1
      big[i] = {round, i}
    end
  end
  local tables, sum = 0, 0
  for i = 1, n do
    local v = big[i]
    if type(v) == "table" then
      assert(v[2] == i)
      tables = tables + 1
      sum = sum + v[1]
    else
      assert(v == i)
    end
  end
  return tables .. " " .. sum
)";

TEST(VmGenerational, Invariant3_CardsOfABigOldArrayKeepItsYoungValues) {
  std::string failure;
  std::string out = run(failure, kCards, 7);
  EXPECT_EQ(failure, "");
  // As lua5.4: 600 distinct slots hold a table, their rounds summing to 6300.
  EXPECT_EQ(out, "600 6300");
}

// The negative test: one store leaves its card clean (fault site gc.card-drop); the
// table is still remembered, so only the card check can see the young value a minor
// would skip.
TEST(VmGenerational, Invariant3_CleanCardWithYoungValueIsCaught) {
  std::string failure;
  gc::fault::configure("gc.card-drop:5");
  std::string out = run(failure, kCards, 7);
  gc::fault::configure("");
  EXPECT_EQ(out, "ERR");
  EXPECT_NE(failure.find("verify failed: before collection"), std::string::npos) << failure;
  EXPECT_NE(failure.find("in a record a minor skips"), std::string::npos) << failure;
}

// Two States on one thread (a host with two interpreters): the thread's current mutator
// is the last-made heap's, so the first State's barrier records must not go into it.
// Before the fix, verification failed ("remembered bit but ... in no remembered buffer")
// and the other heap's collector traced a foreign object.
TEST(VmGenerational, TwoStatesOnOneThreadKeepTheirRecords) {
  StateOptions opts;
  opts.gc.stress = gc::StressMode::kCollect;
  opts.gc.verify = true;
  auto first = newStandardState(opts, true);
  auto second = newStandardState(opts, true);  // now the thread's current heap
  for (auto* S : {first.get(), second.get(), first.get()}) {
    HostStack h(*S);
    std::string out;
    ASSERT_TRUE(h.loadMayGC(kProgram, "=test").isOk());
    ASSERT_TRUE(h.pcallMayGC(0, 1, false).isOk()) << S->heap().failureReason();
    ASSERT_TRUE(h.toStringMayGC(-1, out).isOk());
    EXPECT_EQ(out, "500");
    EXPECT_EQ(S->heap().failureReason(), "");
    h.setTop(h.top() - 1);
  }
  HostStack(*second).closeMayGC();
  HostStack(*first).closeMayGC();
}

// collectgarbage("step") in generational mode is one minor collection, and only that
// (docs/design/gc-step.md); in incremental mode a step that covers the heap is a major
// one. The collector is stopped, so every collection counted is a step's.
TEST(VmGenerational, GenerationalStepIsOneMinor) {
  auto S = newStandardState(StateOptions{}, true);
  HostStack h(*S);
  auto runChunk = [&](const char* code) {
    ASSERT_TRUE(h.loadMayGC(code, "=test").isOk());
    ASSERT_TRUE(h.pcallMayGC(0, 0, false).isOk()) << S->heap().failureReason();
  };
  runChunk("collectgarbage('stop'); keep = {} for i = 1, 1000 do keep[i] = {i} end; collectgarbage()");
  gc::Stats before = S->heap().stats();
  runChunk("for _ = 1, 10 do assert(collectgarbage('step') == false) end");
  gc::Stats after = S->heap().stats();
  EXPECT_EQ(after.minor.count - before.minor.count, 10u);
  EXPECT_EQ(after.major.count, before.major.count);
  runChunk("collectgarbage('incremental'); assert(collectgarbage('step', 1 << 20) == true); collectgarbage('generational')");
  EXPECT_EQ(S->heap().stats().major.count, after.major.count + 1);
  EXPECT_EQ(S->heap().stats().minor.count, after.minor.count);
  h.closeMayGC();
}

// Finalizers of young and old objects under minors (collectgarbage('step')) and majors
// (collectgarbage()): a minor runs those of the objects registered since the last
// collection, a major those of old ones too, in reverse registration order across both
// (gc/heap.h invariant 13); a resurrected object keeps what it references and, marked
// for finalization again by its finalizer, is finalized again by a later major. Run
// plain and under --gc-verify.
constexpr const char* kFinalizerOrder = R"(
  collectgarbage('stop')
  local log, saved = {}, nil
  local mt = {}
  mt.__gc = function(o)
    log[#log + 1] = o.name
    if o.again then
      o.again = nil
      saved = o
      setmetatable(o, mt)
    end
  end
  local old = {}
  for i = 1, 3 do old[i] = setmetatable({name = 'o' .. i}, mt) end
  collectgarbage()
  setmetatable({name = 'y1'}, mt)
  setmetatable({name = 'y2', again = true, child = {'kept'}}, mt)
  collectgarbage('step')
  log[#log + 1] = '|'
  old[2] = nil
  collectgarbage('step')
  log[#log + 1] = '|'
  assert(saved.child[1] == 'kept', 'a resurrected object keeps what it references')
  saved = nil
  setmetatable({name = 'y3'}, mt)
  collectgarbage()
  log[#log + 1] = '|'
  old = nil
  collectgarbage()
  return table.concat(log, ' ')
)";

TEST(VmGenerational, FinalizersOfYoungAndOldObjectsRunInReverseRegistrationOrder) {
  for (bool verify : {false, true}) {
    StateOptions opts;
    opts.gc.verify = verify;
    auto S = newStandardState(opts, true);
    HostStack h(*S);
    std::string out;
    ASSERT_TRUE(h.loadMayGC(kFinalizerOrder, "=test").isOk());
    ASSERT_TRUE(h.pcallMayGC(0, 1, false).isOk()) << S->heap().failureReason();
    ASSERT_TRUE(h.toStringMayGC(-1, out).isOk());
    EXPECT_EQ(out, "y2 y1 | | y3 y2 o2 | o3 o1") << "verify " << verify;
    EXPECT_EQ(S->heap().failureReason(), "");
    h.closeMayGC();
  }
}

// Survivor age (gc-v2.md): tables and strings that the running thread's stack holds at
// one minor and drops before the next are never promoted; without it they are. Run
// under --gc-verify, which checks the survivors and the carried holders after each
// minor; the strings are interned, so the string table's young list keeps them.
TEST(VmGenerational, TemporariesOfTheRunningThreadDieYoung) {
  auto promotedBy = [](bool age) {
    StateOptions opts;
    opts.gc.verify = true;
    opts.gc.survivorAge = age;
    auto S = newStandardState(opts, true);
    HostStack h(*S);
    auto runChunk = [&](const char* code) {
      ASSERT_TRUE(h.loadMayGC(code, "=test").isOk());
      ASSERT_TRUE(h.pcallMayGC(0, 0, false).isOk()) << S->heap().failureReason();
    };
    runChunk("collectgarbage('stop'); collectgarbage()");
    uint64_t before = S->heap().stats().bytesPromotedTotal;
    runChunk(R"(
      local keep = {}
      for i = 1, 1000 do keep[i] = {'s' .. i} end
      collectgarbage('step')
      for i = 1, 1000 do assert(keep[i][1] == 's' .. i) end
      keep = nil
      collectgarbage('step')
      collectgarbage('step')
    )");
    uint64_t promoted = S->heap().stats().bytesPromotedTotal - before;
    EXPECT_EQ(S->heap().failureReason(), "");
    h.closeMayGC();
    return promoted;
  };
  uint64_t aged = promotedBy(true);
  uint64_t atOnce = promotedBy(false);
  EXPECT_GT(atOnce, 1000u * 64) << "a thousand tables and strings, promoted at the first minor";
  EXPECT_LT(aged, atOnce / 8) << "kept young, then dead";
}

// Runs `script` in a state that verifies the heap before and after every collection;
// the script's own asserts check the values, verification the cards.
void expectCleanRunUnderVerify(const char* script) {
  StateOptions opts;
  opts.gc.verify = true;
  auto S = newStandardState(opts, true);
  HostStack h(*S);
  ASSERT_TRUE(h.loadMayGC(script, "=test").isOk());
  EXPECT_TRUE(h.pcallMayGC(0, 0, false).isOk()) << S->heap().failureReason();
  EXPECT_EQ(S->heap().failureReason(), "");
  h.closeMayGC();
}

// A table kept young by a minor whose array part that minor promoted in place (a large
// part): the minor that promotes the table trusts the part's cards, so the survivors the
// part holds must lie in dirty cards, or they are freed under it (--gc-verify reports
// the references into freed memory).
TEST(VmGenerational, ASurvivingTablesLargePartKeepsItsYoungValues) {
  expectCleanRunUnderVerify(R"(
    collectgarbage('stop')
    collectgarbage()  -- the main thread is old: its stack is a running stack's
    local big = {}
    for i = 1, 5000 do big[i] = {i} end
    for _ = 1, 3 do
      collectgarbage('step')
      for i = 1, 5000 do assert(big[i][1] == i) end
    end
  )");
}

// A survivor table that a minor promotes while its array part is young and large: the
// part is promoted in place and the values it holds are kept young (the running stack
// reaches the table), in a part whose cards are all clean. The next minor traces the
// table by cards: they must cover those survivors, or they are freed under it.
TEST(VmGenerational, APromotedTablesNewLargePartKeepsItsSurvivors) {
  expectCleanRunUnderVerify(R"(
    collectgarbage('stop')
    collectgarbage()
    local big = {}
    for i = 1, 3000 do big[i] = {i} end
    collectgarbage('step')  -- big survives young
    for i = 3001, 5000 do big[i] = {i} end  -- a new, young, large part
    for _ = 1, 3 do
      collectgarbage('step')
      for i = 1, 5000 do assert(big[i][1] == i) end
    end
  )");
}

// The survivor table of ASurvivingTablesLargePartKeepsItsYoungValues, given new young
// values before the minor that promotes it: that minor traces it by its (all dirty)
// cards and keeps the values young, so their cards must stay dirty for the next one.
TEST(VmGenerational, CardsThatHoldAMinorsSurvivorsStayDirty) {
  expectCleanRunUnderVerify(R"(
    collectgarbage('stop')
    collectgarbage()
    local big = {}
    for i = 1, 5000 do big[i] = {i} end
    collectgarbage('step')  -- big survives young, its large part is promoted in place
    for i = 1, 5000 do big[i] = {-i} end
    for _ = 1, 3 do
      collectgarbage('step')
      for i = 1, 5000 do assert(big[i][1] == -i) end
    end
  )");
}

}  // namespace
}  // namespace weft::vm
