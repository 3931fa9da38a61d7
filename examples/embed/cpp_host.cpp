// A C++ host (docs/embedding.md) using only weft/weft.hpp: a registered function, a
// userdata type, two tasks and a channel that a host thread feeds. Prints
// cpp_host.expected.
#include <weft/weft.hpp>

#include <cstdio>
#include <thread>

struct Counter {
  int64_t items = 0;
};

int main() {
  weft::Options options;
  options.workers = 2;
  auto created = weft::Runtime::create(options);
  if (!created) return std::fprintf(stderr, "%s\n", created.error().message.c_str()), 1;
  weft::Runtime& rt = **created;

  rt.define("square", [](int64_t x) { return x * x; });
  rt.userType<Counter>("Counter").method("add", [](Counter& c) { return ++c.items; });
  auto counter = rt.userType<Counter>("Counter").make();
  auto inbox = rt.channel(4);
  if (!counter || !inbox) return 1;
  rt.setGlobal("counter", *counter);
  rt.setGlobal("inbox", inbox->handle());

  // Each task sums the squares it receives until it gets `false`.
  auto body = rt.run(R"(
    return function()
      local sum = 0
      for v in function() return inbox:recv() end do
        if not v then return sum end
        sum = sum + square(v)
        counter:add()
      end
    end)");
  if (!body) return std::fprintf(stderr, "%s\n", body.error().message.c_str()), 1;
  auto first = rt.spawn((*body)[0]);
  auto second = rt.spawn((*body)[0]);
  if (!first || !second) return 1;

  const weft::Channel& ch = *inbox;
  std::thread feeder([&ch] {
    for (int64_t i = 1; i <= 10; i++) ch.post(i);
    ch.post(false);
    ch.post(false);
  });
  auto a = first->await();
  auto b = second->await();
  feeder.join();
  if (!a || !b) return std::fprintf(stderr, "%s\n", (a ? b : a).error().message.c_str()), 1;
  auto items = rt.run("return counter:add() - 1");
  std::printf("sum of squares %lld from %lld items\n", (long long)(*(*a)[0].toInteger() + *(*b)[0].toInteger()),
              (long long)*(*items)[0].toInteger());
  return 0;
}
