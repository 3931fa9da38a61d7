// Weft's C++ API for hosts (docs/embedding.md): a runtime, values that stay valid when
// the collector moves objects, C++ functions and userdata types callable from Lua,
// tasks and channels. A thin layer over the Lua C API (weft/lua/lua.h), which a host
// may mix with it through Runtime::luaState().
//
// Rules:
//  1. A Runtime and everything made from it (Value, Scope, Task, Channel) belong to the
//     thread that created the Runtime (its host thread), with one exception:
//     Channel::post may be called from any thread until the Runtime ends.
//  2. A Value is a persistent handle: the object it names stays alive while any copy of
//     the Value exists, wherever the collector moves it. A Scope's slots are scoped
//     handles: stack slots of the host thread, released together when the Scope ends.
//     Neither may outlive its Runtime.
//  3. Errors are values: every call that may run Lua code returns an Expected with the
//     error's message and, for runtime errors, its traceback; nothing throws out of this
//     API, and a C++ exception escaping a function registered with Runtime::function
//     becomes a Lua error at its call.
//  4. Shutdown order: let go of every Value, Scope, Task and Channel, then destroy the
//     Runtime: it cancels and waits for the tasks still running, runs pending finalizers
//     (destructors of userdata types included) and frees the heap.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "weft/status.h"

struct lua_State;

// What libweft.so exports of this API (the library builds with hidden visibility).
#define WEFT_API __attribute__((visibility("default")))

namespace weft {

class Runtime;
class Value;
using Values = std::vector<Value>;

enum class GcStress : uint8_t { kNone, kCollect, kRelocate };
// The LLVM tier (weft --jit; docs/design/jit.md): off, hot functions compiled on a
// background thread, or every function at its first call (a test mode).
enum class Jit : uint8_t { kOff, kOn, kEager };

struct Options {
  unsigned workers = 0;  // task workers; 0: WEFT_WORKERS, else the processors
  // Deterministic mode (weft --deterministic=SEED; docs/tasks.md "Finding concurrency
  // bugs"): tasks run one step at a time on the host thread while it waits, as a seeded
  // chooser decides, on a logical clock. 0: off.
  uint64_t deterministicSeed = 0;
  size_t heapLimit = 0;  // bytes; 0: no limit
  GcStress gcStress = GcStress::kNone;
  bool gcVerify = false;  // verify the heap after every collection (slow)
  bool sandbox = false;   // the sandbox preset (docs/embedding.md)
  Jit jit = Jit::kOn;     // the compiler module (libweft_jit.so) loads at the first compilation
  uint32_t jitThreshold = 1000;  // with kOn: calls plus loop iterations before a function compiles
  bool perfMap = false;   // /tmp/perf-PID.map for perf, as weft --perf-map (or WEFT_PERF_MAP=1)
};

// Per-call limits (Runtime::run, runFile, Value::callWith): going over one raises a Lua
// error, "instruction limit exceeded" or "time limit exceeded", that the call returns
// (Lua code may catch it with pcall, and is stopped again at its next check). Zero: no
// limit. They count the calling thread's Lua code; tasks it spawns run without them.
struct Limits {
  uint64_t instructions = 0;
  std::chrono::nanoseconds time{0};
};

// A value that can cross threads (Channel::post): it holds no heap reference.
using HostValue = std::variant<std::monostate, bool, int64_t, double, std::string>;

enum class Type : uint8_t { kNil, kBoolean, kLightUserdata, kNumber, kString, kTable, kFunction, kUserdata, kThread };

namespace detail {
struct Ref;
struct Core;
struct Owned;
WEFT_API Value makeValue(std::shared_ptr<Ref> ref);

// A C++ argument on its way to Lua.
using Arg = std::variant<std::monostate, bool, int64_t, double, std::string_view, const Value*>;
template <typename T>
inline constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
Arg toArg(const T& v) {
  using U = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<U, bool>) return Arg(v);
  else if constexpr (kIsInteger<U>) return Arg(static_cast<int64_t>(v));
  else if constexpr (std::is_floating_point_v<U>) return Arg(static_cast<double>(v));
  else if constexpr (std::is_same_v<U, Value>) return Arg(&v);
  else if constexpr (std::is_same_v<U, std::nullptr_t>) return Arg();
  else return Arg(std::string_view(v));
}

// The Lua stack of a call into C++ (Runtime::function): what the generated wrappers
// read arguments from and push results onto (runtime/embed/weft.cpp).
class WEFT_API Frame {
 public:
  explicit Frame(lua_State* L) : L_(L) {}
  lua_State* state() const { return L_; }
  int argCount() const;
  bool get(int i, bool& out) const;
  bool get(int i, int64_t& out) const;
  bool get(int i, double& out) const;
  bool get(int i, std::string& out) const;
  bool get(int i, Value& out) const;
  // false when memory ran out (the call then fails with Lua's memory error).
  bool push(const Arg& a);
  bool push(const Values& vs);

 private:
  lua_State* L_;
};

// Why a call into C++ failed: a wrong argument (raised as luaL_typeerror would), or a
// message (raised as a Lua error), once nothing of the call is left on the C++ stack.
struct Failure {
  int arg = 0;
  const char* expected = nullptr;
  std::string message;
};
template <typename T>
const char* expectedName() {
  if constexpr (std::is_same_v<T, bool>) return "boolean";
  else if constexpr (kIsInteger<T> || std::is_floating_point_v<T>) return "number";
  else if constexpr (std::is_same_v<T, std::string>) return "string";
  else return "value";
}

template <typename T>
bool readArg(const Frame& f, int i, T& out, Failure& error) {
  bool ok;
  if constexpr (kIsInteger<T>) {
    int64_t v = 0;
    ok = f.get(i, v);
    out = static_cast<T>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    double v = 0;
    ok = f.get(i, v);
    out = static_cast<T>(v);
  } else {
    ok = f.get(i, out);
  }
  if (!ok) {
    error.arg = i;
    error.expected = expectedName<T>();
  }
  return ok;
}

template <typename R>
int pushResult(Frame& f, const R& r) {
  if constexpr (std::is_same_v<R, Values>) {
    return f.push(r) ? static_cast<int>(r.size()) : -1;
  } else {
    return f.push(toArg(r)) ? 1 : -1;
  }
}

template <typename T>
struct Signature : Signature<decltype(&T::operator())> {};
template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...) const> {
  using Result = R;
  using Args = std::tuple<std::remove_cvref_t<A>...>;
};
template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...)> : Signature<R (C::*)(A...) const> {};
template <typename R, typename... A>
struct Signature<R (*)(A...)> {
  using Result = R;
  using Args = std::tuple<std::remove_cvref_t<A>...>;
};

template <typename R>
concept IsExpected = requires(R r) {
  r.hasValue();
  r.error();
};

// A type-erased C++ function called from Lua: its result count, or -1 with the failure.
using Thunk = std::function<int(Frame&, Failure&)>;

// Runs fn with the converted arguments args (a tuple) and pushes its results.
template <typename F, typename Args>
int callWithArgs(F& fn, Frame& frame, Args& args, Failure& error) {
  using R = decltype(std::apply(fn, std::move(args)));
  if constexpr (std::is_void_v<R>) {
    std::apply(fn, std::move(args));
    return 0;
  } else {
    R r = std::apply(fn, std::move(args));
    if constexpr (IsExpected<R>) {
      if (!r.hasValue()) {
        error.message = r.error().message;
        return -1;
      }
      if constexpr (requires { r.value(); }) return pushResult(frame, r.value());
      else return 0;
    } else {
      return pushResult(frame, r);
    }
  }
}

// `first` arguments are bound by the caller (a method's self); the rest come from Lua
// starting at index first + 1.
template <typename Args, size_t... I>
bool readArgs(const Frame& f, Args& args, int first, Failure& error, std::index_sequence<I...>) {
  return (readArg(f, static_cast<int>(I) + 1 + first, std::get<I>(args), error) && ...);
}

template <typename F>
Thunk makeThunk(F fn) {
  using Args = typename Signature<std::decay_t<F>>::Args;
  return [fn = std::move(fn)](Frame& frame, Failure& error) mutable -> int {
    Args args;
    if (!readArgs(frame, args, 0, error, std::make_index_sequence<std::tuple_size_v<Args>>())) return -1;
    return callWithArgs(fn, frame, args, error);
  };
}

// A method fn(T& self, args...): self is argument 1, a userdata of the type `typeName`.
WEFT_API void* selfOf(Frame& frame, const std::string& typeName, Failure& error);
template <typename T, typename F>
Thunk makeMethodThunk(std::string typeName, F fn) {
  using All = typename Signature<std::decay_t<F>>::Args;
  return [fn = std::move(fn), typeName = std::move(typeName)](Frame& frame, Failure& error) mutable -> int {
    void* self = selfOf(frame, typeName, error);
    if (!self) return -1;
    return [&]<size_t... I>(std::index_sequence<I...>) {
      std::tuple<std::tuple_element_t<I + 1, All>...> rest;
      if (!readArgs(frame, rest, 1, error, std::index_sequence_for<std::tuple_element_t<I + 1, All>...>())) return -1;
      auto bound = [&](auto&&... a) { return fn(*static_cast<T*>(self), std::forward<decltype(a)>(a)...); };
      return callWithArgs(bound, frame, rest, error);
    }(std::make_index_sequence<std::tuple_size_v<All> - 1>());
  };
}
}  // namespace detail

// A Lua value held by the host (rule 2).
class WEFT_API Value {
 public:
  Value() = default;  // nil
  Type type() const;
  const char* typeName() const;
  bool isNil() const { return !ref_; }
  bool truthy() const;                       // Lua truth: only nil and false are false
  std::optional<int64_t> toInteger() const;  // integers, floats with an integral value, numeric strings
  std::optional<double> toNumber() const;
  std::optional<std::string> toString() const;  // strings and numbers
  Expected<std::string> toDisplayString() const;  // tostring(v): __tostring, __name

  // v[key] and v[key] = value, with metamethods.
  template <typename K>
  Expected<Value> get(const K& key) const {
    return getArg(detail::toArg(key));
  }
  template <typename K, typename V>
  Expected<void> set(const K& key, const V& value) const {
    return setArg(detail::toArg(key), detail::toArg(value));
  }
  Expected<int64_t> length() const;  // #v, with __len

  // Calls the value; all its results.
  Expected<Values> callWith(const Values& args, const Limits& limits = {}) const;
  template <typename... A>
  Expected<Values> call(const A&... args) const {
    return callArgs({detail::toArg(args)...}, {});
  }

  bool rawEquals(const Value& other) const;

  // Bridges to the C API: push onto L's stack (a thread of the same runtime), and the
  // value at `index` of L's stack.
  void push(lua_State* L) const;
  static Value fromStack(lua_State* L, int index);

 private:
  friend Value detail::makeValue(std::shared_ptr<detail::Ref> ref);
  explicit Value(std::shared_ptr<detail::Ref> ref) : ref_(std::move(ref)) {}
  Expected<Value> getArg(const detail::Arg& key) const;
  Expected<void> setArg(const detail::Arg& key, const detail::Arg& value) const;
  Expected<Values> callArgs(const std::vector<detail::Arg>& args, const Limits& limits) const;
  std::shared_ptr<detail::Ref> ref_;  // null: nil
};

// Scoped handles (rule 2): values kept in the host thread's stack slots until the Scope
// ends; cheaper than Values for temporaries. Scopes nest strictly (LIFO).
class WEFT_API Scope {
 public:
  explicit Scope(Runtime& rt);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  // Keeps v in a new slot; returns its index (for the C API, on Runtime::luaState()).
  int keep(const Value& v);
  Value at(int index) const;

 private:
  lua_State* L_;
  int base_;
};

class Task;
class Channel;

// A userdata type whose objects are C++ T owned by Lua: constructed by make, destroyed
// by the userdata's finalizer (or when the Runtime ends).
template <typename T>
class UserType {
 public:
  // obj:name(args...) calls fn(T& self, args...).
  template <typename F>
  UserType& method(std::string_view name, F fn);
  // A new object T(args...), with this type's metatable.
  template <typename... A>
  Expected<Value> make(A&&... args);

 private:
  friend class Runtime;
  UserType(Runtime& rt, std::string name) : rt_(rt), name_(std::move(name)) {}
  Runtime& rt_;
  std::string name_;
};

class WEFT_API Runtime {
 public:
  static Expected<std::unique_ptr<Runtime>> create(const Options& options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Compiles and runs a chunk (text only under the sandbox): its results.
  Expected<Values> run(std::string_view code, std::string_view chunkName = "=host", const Limits& limits = {});
  Expected<Values> runFile(const std::string& path, const Limits& limits = {});
  // Compiles without running: the chunk as a function.
  Expected<Value> load(std::string_view code, std::string_view chunkName = "=host");

  Value globals();
  Value global(std::string_view name);
  void setGlobal(std::string_view name, const Value& value);

  // C++ values as Lua values.
  template <typename T>
  Value from(const T& v) {
    return fromArg(detail::toArg(v));
  }
  Expected<Value> newTable();

  // A Lua function calling fn: arguments converted from Lua (bool, integers, floating
  // point, std::string, Value), results back (void, those types, Values, or an
  // Expected whose error becomes a Lua error). A wrong argument raises Lua's "bad
  // argument" error.
  template <typename F>
  Value function(F fn) {
    return functionFromThunk(detail::makeThunk(std::move(fn)));
  }
  // setGlobal(name, function(fn)).
  template <typename F>
  void define(std::string_view name, F fn) {
    setGlobal(name, function(std::move(fn)));
  }

  // A userdata type named `name` (its metatable's __name).
  template <typename T>
  UserType<T> userType(std::string_view name) {
    registerUserType(std::string(name), [](void* p) { static_cast<T*>(p)->~T(); });
    return UserType<T>(*this, std::string(name));
  }

  // A Lua function whose body blocks on the operating system (a socket, a database):
  // called from a task, fn runs on the blocking pool while the task waits and its worker
  // runs other tasks; elsewhere it runs on the calling thread. fn runs on another thread:
  // it gets the arguments as HostValues (nil, booleans, numbers, strings; anything else
  // is a bad argument) and must not touch this Runtime. Its results come back to Lua;
  // its error (or an exception it throws) is the caller's Lua error.
  using BlockingFn = std::function<Expected<std::vector<HostValue>>(std::vector<HostValue> args)>;
  Value blockingFunction(BlockingFn fn);

  // task.spawn(fn, args...) from the host; Task::await waits for it.
  Expected<Task> spawn(const Value& fn, const Values& args = {});
  // task.channel(capacity).
  Expected<Channel> channel(uint32_t capacity = 0);

  // The host thread's lua_State, for the C API (rule 1).
  lua_State* luaState() { return L_; }

  // Used by the templates above.
  Value fromArg(const detail::Arg& a);
  Value functionFromThunk(detail::Thunk thunk);
  void registerUserType(std::string name, void (*destroy)(void*));
  Expected<Value> newUserdata(const std::string& typeName, size_t size, const std::function<void(void*)>& construct);
  void addMethod(const std::string& typeName, std::string_view method, detail::Thunk thunk);

 private:
  explicit Runtime(std::unique_ptr<detail::Owned> owned);
  std::unique_ptr<detail::Owned> owned_;  // the VM state and its task runtime
  lua_State* L_;
  std::shared_ptr<detail::Core> core_;  // tells Values whether L_ still exists
};

// A spawned task's handle.
class WEFT_API Task {
 public:
  // Waits for the task (blocking the host thread): its results, or its error.
  Expected<Values> await();
  Expected<void> cancel();
  const Value& handle() const { return handle_; }

 private:
  friend class Runtime;
  explicit Task(Value handle) : handle_(std::move(handle)) {}
  Value handle_;
};

// A channel of the task library, shared by the host and its tasks.
class WEFT_API Channel {
 public:
  // From the host thread, as ch:send(v), ch:recv() and ch:close() (they may block it).
  Expected<void> send(const Value& v);
  Expected<Values> recv();
  Expected<void> close();
  // From any thread (rule 1): delivers v into the channel exactly once, as a task's send
  // would (after the values posted before it, waiting for room if the channel is full),
  // and returns at once. false when the runtime or the channel is closed; a value still
  // undelivered when the runtime ends is dropped.
  bool post(HostValue v) const;
  const Value& handle() const { return handle_; }

 private:
  friend class Runtime;
  Channel(Value handle, std::shared_ptr<void> port) : handle_(std::move(handle)), port_(std::move(port)) {}
  Value handle_;
  std::shared_ptr<void> port_;  // the runtime's end of the external-event path (closed with the last copy)
};

template <typename T>
template <typename F>
UserType<T>& UserType<T>::method(std::string_view name, F fn) {
  rt_.addMethod(name_, name, detail::makeMethodThunk<T>(name_, std::move(fn)));
  return *this;
}

template <typename T>
template <typename... A>
Expected<Value> UserType<T>::make(A&&... args) {
  return rt_.newUserdata(name_, sizeof(T), [&](void* p) { new (p) T(std::forward<A>(args)...); });
}

}  // namespace weft
