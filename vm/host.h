// A small stack-based host interface, used by the `weft` CLI and the tests: the seed of
// the embedding API (a later issue wraps it in include/weft/). Every function works on
// the State's main thread stack, like Lua's C API; indices are absolute stack positions
// relative to the host frame (1 = first value the host pushed, negative = from the top).
//
// Functions that run Lua code (or may collect) say MayGC.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "vm/state.h"
#include "weft/status.h"

namespace weft::vm {

// Creates a state with every standard library opened (base, coroutine, string, table,
// math, utf8, os, io, debug, package when present).
std::unique_ptr<State> newStandardState(const StateOptions& options);
// As above; with ignoreEnvironment (the CLI's -E) the package library ignores LUA_PATH,
// LUA_CPATH and their _5_4 forms, as lua.c's registry.LUA_NOENV does (the libraries read
// it while opening, so it must be set before they are opened).
std::unique_ptr<State> newStandardState(const StateOptions& options, bool ignoreEnvironment);

// Asks the Lua code that the State's main context runs to stop with "interrupted!" at
// its next loop safepoint, as lua.c's SIGINT hook does. Async-signal-safe: it stores an
// atomic flag and that thread's budget (which the safepoint then finds below zero).
// Code waiting outside the interpreter (a task wait, a read) is not interrupted.
void requestInterrupt(State& state);

class HostStack {
 public:
  explicit HostStack(State& state);
  State& state() { return state_; }
  int top() const;                // number of values the host has on the stack
  void setTop(int n);
  void pushNil();
  void pushInteger(int64_t i);
  void pushNumber(double n);
  void pushBoolean(bool b);
  bool pushString(std::string_view s);  // false on memory exhaustion
  void pushValue(int index);
  bool pushGlobal(std::string_view name);  // raw read of _G[name]
  bool setGlobal(std::string_view name);   // pops the value; raw write
  bool newTable();
  bool rawSetInt(int tableIndex, int64_t key);  // pops the value
  Value at(int index) const;
  bool isNil(int index) const;
  // Loads a chunk (text, or binary when mode allows "b") and pushes the function, or
  // pushes the error message and returns the error status.
  Status loadMayGC(std::string_view chunk, std::string_view chunkName, std::string_view mode = "bt");
  // Calls the function below the top nargs values; results (nresults < 0: all) replace
  // them. On error the error value is pushed instead (with traceback appended to string
  // messages when `traceback`, as lua.c's msghandler does, using __tostring for others).
  Status pcallMayGC(int nargs, int nresults, bool traceback);
  // tostring of the value at index (with __tostring/__name), as print shows it.
  Status toStringMayGC(int index, std::string& out);
  // Runs pending finalizers and closes the state (os.exit(..., true) and normal exit).
  void closeMayGC();

 private:
  State& state_;
};

}  // namespace weft::vm
