// The external-event path: threads that are not the runtime's (a host's threads) post
// values into a channel through a Port, and one courier task of the runtime delivers
// them there, in order, as a task's send would (weft.hpp: Channel::post).
//
// Protocol:
//  - post (any thread) appends an off-heap value under the port's lock and, if the
//    courier waits on the port, claims its wait and wakes it (as a timer does: the wait
//    protocol of runtime/wait_state.h), still under the lock, so the runtime cannot end in
//    between (detach takes it). It fails once the port or the runtime is closed.
//  - The courier calls the port's `next` native in a loop: under the lock it takes the
//    oldest value (made a Lua value on the courier's thread, attached), or, when none is
//    queued, registers as the port's waiter and waits; woken, it asks again. It ends when
//    the port is closed and drained, when its send fails (it then closes the port), or
//    when it is cancelled (the runtime's end).
//  - While a port is open the runtime never reports a deadlock: a post may still come.
//  - The runtime detaches its ports when it ends (RuntimeImpl::closePorts): a later post
//    sees no runtime and fails, so a Port may outlive its runtime safely.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <variant>

#include "runtime/task.h"

namespace weft::runtime {

// A value that crosses threads: no heap reference.
using PortValue = std::variant<std::monostate, bool, int64_t, double, std::string>;

class Port final : public WaitSource {
 public:
  explicit Port(RuntimeImpl& rt);
  ~Port() override;
  // Any thread. false when the port or the runtime is closed (v is dropped).
  bool post(PortValue v);
  // Any thread: no more posts; the courier delivers what is queued and ends.
  void close();
  void removeWaiter(Waiter* w) override;

  // The courier's step (port.cpp: portNext). Runs on the courier task, attached.
  vm::NativeResult nextMayGC(vm::CallContext& cx);
  // The runtime ends (any thread but a worker's): later posts fail.
  void detach();

 private:
  std::mutex mutex_;
  RuntimeImpl* rt_;               // mutex_; null once the runtime ended
  std::deque<PortValue> queue_;   // mutex_
  Waiter* waiter_ = nullptr;      // mutex_; the courier's, while it waits
  bool closed_ = false;           // mutex_
  void wakeCourierLocked();
};

// The payload of a port's userdata: the C++ API's Channel takes its reference from it.
struct PortBox {
  std::shared_ptr<Port> port;
};

// registry["weft.port"] (opened with the task library): returns a new port's `next`
// function and its PortBox userdata, which `next` holds (so the port lives while the
// courier or the caller keeps either). Allocates (may collect).
inline constexpr const char* kPortMakerKey = "weft.port";
vm::NativeResult portMakeMayGC(vm::CallContext& cx);

}  // namespace weft::runtime
