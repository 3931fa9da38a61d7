// The C++ API (include/weft/weft.hpp): values, functions, userdata types, limits, the
// sandbox, tasks and the external-event path (Channel::post), each also under
// relocation stress where objects move at every collection.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/unit/embed/make_runtime.h"
#include "weft/weft.hpp"

namespace {

using weft::Runtime;
using weft::Value;
using weft::Values;

using weft::test::make;

int64_t integerOf(const weft::Expected<Values>& r, size_t i = 0) {
  EXPECT_TRUE(r.hasValue()) << (r ? "" : r.error().message);
  if (!r || r->size() <= i) return -999;
  return (*r)[i].toInteger().value_or(-999);
}

class Modes : public ::testing::TestWithParam<weft::GcStress> {
 protected:
  weft::Options options() const {
    weft::Options o;
    o.gcStress = GetParam();
    o.gcVerify = GetParam() != weft::GcStress::kNone;
    return o;
  }
};

TEST_P(Modes, FunctionsConvertArgumentsAndResults) {
  auto rt = make(options());
  rt->define("add", [](int64_t a, int64_t b) { return a + b; });
  rt->define("greet", [](std::string who) { return "hello " + who; });
  rt->define("ratio", [](double a, double b) { return a / b; });
  EXPECT_EQ(integerOf(rt->run("return add(40, 2)")), 42);
  auto g = rt->run("return greet('moon'), ratio(1, 4)");
  ASSERT_TRUE(g.hasValue());
  EXPECT_EQ((*g)[0].toString(), "hello moon");
  EXPECT_EQ((*g)[1].toNumber(), 0.25);
  auto bad = rt->run("return add(1, 'x')");
  ASSERT_FALSE(bad.hasValue());
  EXPECT_EQ(bad.error().message, "host:1: bad argument #2 to 'add' (number expected, got string)");
}

TEST_P(Modes, FailuresBecomeLuaErrors) {
  auto rt = make(options());
  rt->define("checked", [](int64_t a) -> weft::Expected<int64_t> {
    if (a < 0) return weft::Error(weft::StatusCode::kRuntimeError, "negative");
    return a;
  });
  rt->define("throws", []() -> int64_t { throw std::runtime_error("boom"); });
  auto r = rt->run("return checked(3), (pcall(checked, -1)), select(2, pcall(checked, -1)), select(2, pcall(throws))");
  ASSERT_TRUE(r.hasValue()) << r.error().message;
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0].toInteger(), 3);
  EXPECT_FALSE((*r)[1].truthy());
  EXPECT_EQ((*r)[2].toString(), "negative");
  EXPECT_EQ((*r)[3].toString(), "C++ exception: boom");
}

TEST_P(Modes, ErrorsCarryMessageAndTraceback) {
  auto rt = make(options());
  auto r = rt->run("local function inner() error('deep') end\ninner()", "=chunk");
  ASSERT_FALSE(r.hasValue());
  EXPECT_EQ(r.error().code, weft::StatusCode::kRuntimeError);
  EXPECT_EQ(r.error().message, "chunk:1: deep");
  EXPECT_NE(r.error().traceback.find("in local 'inner'"), std::string::npos) << r.error().traceback;
  auto s = rt->run("x = = 1");
  ASSERT_FALSE(s.hasValue());
  EXPECT_EQ(s.error().code, weft::StatusCode::kSyntaxError);
  auto t = rt->run("error({})");
  ASSERT_FALSE(t.hasValue());
  EXPECT_EQ(t.error().message, "(error object is a table value)");
}

TEST_P(Modes, ValuesSurviveCollections) {
  auto rt = make(options());
  auto t = rt->newTable();
  ASSERT_TRUE(t.hasValue());
  for (int64_t i = 1; i <= 200; i++) ASSERT_TRUE(t->set(i, "v" + std::to_string(i)).hasValue());
  Value kept = rt->from(std::string(100, 'x'));
  ASSERT_TRUE(rt->run("local junk = {} for i = 1, 2000 do junk[i] = {i} end collectgarbage()").hasValue());
  EXPECT_EQ(t->length().value(), 200);
  EXPECT_EQ(t->get(123)->toString(), "v123");
  EXPECT_EQ(kept.toString()->size(), 100u);
  rt->setGlobal("t", *t);
  EXPECT_EQ(integerOf(rt->run("return #t")), 200);
  EXPECT_TRUE(rt->global("t").rawEquals(*t));
}

struct Point {
  static inline int alive = 0;
  double x, y;
  Point(double a, double b) : x(a), y(b) { alive++; }
  ~Point() { alive--; }
};

TEST_P(Modes, UserTypesHaveMethodsAndFinalizers) {
  {
    auto rt = make(options());
    rt->userType<Point>("Point")
        .method("norm2", [](Point& p) { return p.x * p.x + p.y * p.y; })
        .method("shift", [](Point& p, double dx) { p.x += dx; });
    auto p = rt->userType<Point>("Point").make(3.0, 4.0);
    ASSERT_TRUE(p.hasValue());
    rt->setGlobal("p", *p);
    EXPECT_EQ(Point::alive, 1);
    auto r = rt->run("p:shift(1) return p:norm2(), tostring(p):match('^Point: ') ~= nil");
    ASSERT_TRUE(r.hasValue()) << r.error().message;
    EXPECT_EQ((*r)[0].toNumber(), 32.0);
    EXPECT_TRUE((*r)[1].truthy());
    auto wrong = rt->run("return p.norm2({})");
    ASSERT_FALSE(wrong.hasValue());
    EXPECT_EQ(wrong.error().message, "host:1: bad argument #1 to 'norm2' (Point expected, got table)");
    ASSERT_TRUE(rt->run("for i = 1, 50 do local q = p end").hasValue());
    for (int i = 0; i < 20; i++) ASSERT_TRUE(rt->userType<Point>("Point").make(1.0, 1.0).hasValue());
    ASSERT_TRUE(rt->run("collectgarbage() collectgarbage()").hasValue());
    EXPECT_EQ(Point::alive, 1);  // only p is still reachable
  }
  EXPECT_EQ(Point::alive, 0);  // the runtime's end finalized it
}

TEST(Limits, StopRunawayCode) {
  auto rt = make();
  auto n = rt->run("while true do end", "=loop", weft::Limits{200000, {}});
  ASSERT_FALSE(n.hasValue());
  EXPECT_NE(n.error().message.find("instruction limit exceeded"), std::string::npos);
  auto t = rt->run("while true do end", "=loop", weft::Limits{0, std::chrono::milliseconds(30)});
  ASSERT_FALSE(t.hasValue());
  EXPECT_NE(t.error().message.find("time limit exceeded"), std::string::npos);
  EXPECT_EQ(integerOf(rt->run("local s = 0 for i = 1, 10 do s = s + i end return s", "=ok", weft::Limits{100000, {}})), 55);
  // The limit holds for that call only: the next runs free.
  EXPECT_EQ(integerOf(rt->run("local s = 0 for i = 1, 300000 do s = s + 1 end return s")), 300000);
}

TEST(Limits, StopRunawayCodeUnderRelocation) {
  weft::Options o;
  o.gcStress = weft::GcStress::kRelocate;
  auto rt = make(o);
  auto n = rt->run("local t = {} while true do t[#t % 7 + 1] = {} end", "=loop", weft::Limits{3000, {}});
  ASSERT_FALSE(n.hasValue());
  EXPECT_NE(n.error().message.find("instruction limit exceeded"), std::string::npos);
}

TEST(Sandbox, RemovesTheDangerousParts) {
  weft::Options o;
  o.sandbox = true;
  auto rt = make(o);
  auto r = rt->run(
      "return io == nil, os.execute == nil, debug == nil, package.loadlib == nil, "
      "load(string.dump(function() end)) == nil, load('return 7')(), pcall(require, 'lpeg')");
  ASSERT_TRUE(r.hasValue()) << r.error().message;
  for (int i : {0, 1, 2, 3, 4}) EXPECT_TRUE((*r)[size_t(i)].truthy()) << i;
  EXPECT_EQ((*r)[5].toInteger(), 7);
  EXPECT_FALSE((*r)[6].truthy());
}

TEST(Scope, KeepsValuesInStackSlots) {
  auto rt = make();
  int top;
  {
    weft::Scope scope(*rt);
    int i = scope.keep(rt->from(int64_t(5)));
    ASSERT_GT(i, 0);
    EXPECT_EQ(scope.at(i).toInteger(), 5);
    top = i;
  }
  weft::Scope again(*rt);
  EXPECT_EQ(again.keep(rt->from(true)), top);  // the first scope gave its slot back
}

TEST_P(Modes, TasksAreSpawnedAndAwaitedFromTheHost) {
  auto rt = make(options());
  auto body = rt->run("return function(a, b) task.sleep(0.001) return a * b end");
  ASSERT_TRUE(body.hasValue()) << body.error().message;
  auto t1 = rt->spawn((*body)[0], {rt->from(6), rt->from(7)});
  auto t2 = rt->spawn((*body)[0], {rt->from(2), rt->from(3)});
  ASSERT_TRUE(t1.hasValue() && t2.hasValue());
  EXPECT_EQ(integerOf(t1->await()), 42);
  EXPECT_EQ(integerOf(t2->await()), 6);
  auto failing = rt->run("return function() error('task failed') end");
  auto t3 = rt->spawn((*failing)[0]);
  auto r3 = t3->await();
  ASSERT_FALSE(r3.hasValue());
  EXPECT_NE(r3.error().message.find("task failed"), std::string::npos);
}

TEST_P(Modes, HostThreadsPostIntoChannelsExactlyOnce) {
  weft::Options o = options();
  o.workers = 2;
  auto rt = make(o);
  auto ch = rt->channel(4);
  ASSERT_TRUE(ch.hasValue()) << ch.error().message;
  rt->setGlobal("inbox", ch->handle());
  auto consumer = rt->run(
      "return function(n) local sum, count = 0, 0 "
      "for i = 1, n do local v = inbox:recv() sum = sum + v count = count + 1 end "
      "return sum, count end");
  ASSERT_TRUE(consumer.hasValue()) << consumer.error().message;
  constexpr int kThreads = 4, kEach = 250;
  auto t = rt->spawn((*consumer)[0], {rt->from(kThreads * kEach)});
  ASSERT_TRUE(t.hasValue());
  std::vector<std::thread> posters;
  std::atomic<int> refused{0};
  const weft::Channel& c = *ch;
  for (int k = 0; k < kThreads; k++) {
    posters.emplace_back([&c, &refused, k] {
      for (int i = 1; i <= kEach; i++) {
        if (!c.post(int64_t(k * kEach + i))) refused++;
      }
    });
  }
  for (std::thread& p : posters) p.join();
  auto r = t->await();
  ASSERT_TRUE(r.hasValue()) << r.error().message;
  int64_t n = kThreads * kEach;
  EXPECT_EQ((*r)[0].toInteger(), n * (n + 1) / 2);
  EXPECT_EQ((*r)[1].toInteger(), n);
  EXPECT_EQ(refused.load(), 0);
  EXPECT_TRUE(c.post(std::string("late")));  // queued: the courier delivers it
}

// The host busy with its own work (no call into the API) must not hold up collections
// that its tasks need: the host thread is detached between calls.
TEST(HostThread, BusyHostDoesNotStallTasks) {
  weft::Options o;
  o.workers = 2;
  auto rt = make(o);
  static std::atomic<bool> finished{false};
  finished = false;
  rt->define("finished", []() { finished = true; });
  auto body = rt->run(
      "return function() local t = {} for i = 1, 300000 do t[i % 1000 + 1] = {i} end "
      "collectgarbage() finished() return #t end");
  ASSERT_TRUE(body.hasValue()) << body.error().message;
  auto t = rt->spawn((*body)[0]);
  ASSERT_TRUE(t.hasValue());
  // Without the detachment the task waits at its first collection for this thread,
  // which never reaches a safepoint here, and the collector fails after its deadline.
  auto start = std::chrono::steady_clock::now();
  while (!finished && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(finished.load());
  EXPECT_EQ(integerOf(t->await()), 1000);
}

TEST(Channel, PostAfterTheRuntimeEndedIsRefused) {
  std::unique_ptr<weft::Channel> kept;
  {
    auto rt = make();
    auto ch = rt->channel(1);
    ASSERT_TRUE(ch.hasValue());
    ASSERT_TRUE(ch->post(int64_t(1)));
    kept = std::make_unique<weft::Channel>(*ch);
    // `kept` holds a Value: rule 4 asks hosts to drop Values first; a Channel kept only
    // for post is the case this test checks (its Value is never used again).
  }
  EXPECT_FALSE(kept->post(int64_t(2)));
}

INSTANTIATE_TEST_SUITE_P(Stress, Modes, ::testing::Values(weft::GcStress::kNone, weft::GcStress::kRelocate),
                         [](const auto& info) { return info.param == weft::GcStress::kNone ? "Plain" : "Relocate"; });

}  // namespace
