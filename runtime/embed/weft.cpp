// The C++ API (include/weft/weft.hpp) over the Lua C API.
//
// Protocol: every operation that can fail in Lua (allocate, run a metamethod, call)
// runs in protected mode, through lua_pcall of a small C function (protect below), so a
// Lua error never unwinds through a C++ frame of this file or of the host; a C++ function
// registered from the host reports its failure to its trampoline (callThunk), which
// raises the Lua error only once the host's frames and their destructors are gone.
// Values are registry references; a Ref outliving its Runtime no longer touches the
// state (Core::L is null then).
#include <chrono>
#include <cstring>

#include "runtime/capi/capi.h"
#include "runtime/capi/internal.h"
#include "runtime/capi/lock.h"
#include "runtime/embed/blocking.h"
#include "runtime/port.h"
#include "runtime/runtime.h"
#include "vm/host.h"
#include "vm/thread.h"
#include "weft/lua/lauxlib.h"
#include "weft/lua/lua.h"
#include "weft/lua/lualib.h"
#include "weft/weft.hpp"

namespace weft {

namespace detail {

// Shared by the Runtime and every Ref: whether the state still exists.
struct Core {
  lua_State* L = nullptr;
};

// What a Runtime owns: the State (with the C API attached) and its task runtime.
struct Owned {
  std::unique_ptr<vm::State> state;
  std::unique_ptr<runtime::Runtime> tasks;
};

struct Ref {
  std::shared_ptr<Core> core;
  int ref = LUA_NOREF;
  ~Ref() {
    if (core->L) luaL_unref(core->L, LUA_REGISTRYINDEX, ref);
  }
};

}  // namespace detail

namespace {

using detail::Arg;
using detail::Core;
using detail::Ref;

// Registry keys (their addresses are unique).
char kCoreKey;
char kLimitsKey;
char kErrorMetaKey;
char kUserTypesKey;

// The Runtime's Core, which the registry names by a light userdata.
const std::shared_ptr<Core>& coreOf(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kCoreKey);
  auto* core = static_cast<std::shared_ptr<Core>*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return *core;
}

// Pops the top value into a Value (nil pops into an empty Value).
Value popValue(lua_State* L);

// The limits of the running call (Limits), checked by a count hook.
struct ActiveLimits {
  uint64_t instructions = 0;  // 0: none
  uint64_t executed = 0;
  std::chrono::steady_clock::time_point deadline{};
  bool timed = false;
};
constexpr int kHookEvery = 1000;

void limitHook(lua_State* L, lua_Debug*) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kLimitsKey);
  auto* lim = static_cast<ActiveLimits*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  if (!lim) return;
  lim->executed += kHookEvery;
  if (lim->instructions && lim->executed >= lim->instructions) luaL_error(L, "instruction limit exceeded");
  if (lim->timed && std::chrono::steady_clock::now() >= lim->deadline) luaL_error(L, "time limit exceeded");
}

// Installs `limits` on L for the length of one call.
class LimitScope {
 public:
  LimitScope(lua_State* L, const Limits& limits) : L_(L) {
    if (limits.instructions == 0 && limits.time.count() == 0) return;
    active_ = true;
    lim_.instructions = limits.instructions;
    if (limits.time.count() > 0) {
      lim_.timed = true;
      lim_.deadline = std::chrono::steady_clock::now() + limits.time;
    }
    lua_pushlightuserdata(L, &lim_);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &kLimitsKey);
    int every = kHookEvery;
    if (limits.instructions && limits.instructions < kHookEvery) every = static_cast<int>(limits.instructions);
    lim_.executed = static_cast<uint64_t>(every) - kHookEvery;  // the first hook counts `every`
    lua_sethook(L, limitHook, LUA_MASKCOUNT, every);
  }
  ~LimitScope() {
    if (!active_) return;
    lua_sethook(L_, nullptr, 0, 0);
    lua_pushnil(L_);
    lua_rawsetp(L_, LUA_REGISTRYINDEX, &kLimitsKey);
  }

 private:
  lua_State* L_;
  ActiveLimits lim_;
  bool active_ = false;
};

// The message handler of protected calls: wraps the error in a table {error, traceback}
// marked with the kErrorMetaKey metatable, so the caller gets both.
int captureTraceback(lua_State* L) {
  lua_createtable(L, 2, 0);
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, 1);
  luaL_traceback(L, L, nullptr, 1);
  lua_rawseti(L, -2, 2);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kErrorMetaKey);
  lua_setmetatable(L, -2);
  return 1;
}

StatusCode codeOf(int status) {
  switch (status) {
    case LUA_ERRSYNTAX: return StatusCode::kSyntaxError;
    case LUA_ERRMEM: return StatusCode::kMemoryError;
    case LUA_ERRERR: return StatusCode::kErrorInHandler;
    default: return StatusCode::kRuntimeError;
  }
}

// The error on top of the stack (popped) as an Error.
Error popError(lua_State* L, int status) {
  Error e{codeOf(status), {}, {}};
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kErrorMetaKey);
  bool wrapped = lua_getmetatable(L, -2) && lua_rawequal(L, -1, -2);
  lua_pop(L, wrapped ? 2 : 1);
  if (wrapped) {
    lua_rawgeti(L, -1, 2);
    if (const char* tb = lua_tostring(L, -1)) e.traceback = tb;
    lua_pop(L, 1);
    lua_rawgeti(L, -1, 1);
    lua_remove(L, -2);
  }
  size_t len = 0;
  const char* msg = luaL_tolstring(L, -1, &len);  // cannot fail: no __tostring runs on strings
  if (lua_type(L, -2) == LUA_TSTRING || lua_type(L, -2) == LUA_TNUMBER) {
    e.message.assign(msg, len);
  } else {
    e.message = std::string("(error object is a ") + luaL_typename(L, -2) + " value)";
  }
  lua_pop(L, 2);
  return e;
}

// Calls the function below the top nargs values under the traceback handler; on
// success leaves every result on the stack above `base` (the index below the function).
int protectedCall(lua_State* L, int nargs, int nresults) {
  int fn = lua_gettop(L) - nargs;
  lua_pushcfunction(L, captureTraceback);
  lua_insert(L, fn);
  int status = lua_pcall(L, nargs, nresults, fn);
  lua_remove(L, fn);
  return status;
}

// Runs op(L, data) in protected mode with `nargs` values from the stack: the Lua errors
// it raises (memory, metamethods) come back as a status.
int protect(lua_State* L, lua_CFunction op, void* data, int nargs, int nresults) {
  if (!lua_checkstack(L, 3)) return LUA_ERRMEM;
  lua_pushcfunction(L, op);
  lua_insert(L, lua_gettop(L) - nargs);
  lua_pushlightuserdata(L, data);
  lua_insert(L, lua_gettop(L) - nargs);
  return protectedCall(L, nargs + 1, nresults);
}

// Pushes an Arg (C function: run under protect).
int pushArgOp(lua_State* L) {
  const Arg& a = *static_cast<const Arg*>(lua_touserdata(L, 1));
  lua_pop(L, 1);
  switch (a.index()) {
    case 0: lua_pushnil(L); break;
    case 1: lua_pushboolean(L, std::get<1>(a)); break;
    case 2: lua_pushinteger(L, std::get<2>(a)); break;
    case 3: lua_pushnumber(L, std::get<3>(a)); break;
    case 4: lua_pushlstring(L, std::get<4>(a).data(), std::get<4>(a).size()); break;
    default: std::get<5>(a)->push(L); break;
  }
  return 1;
}

// Pushes a, allocating in protected mode; false (nothing pushed) on memory exhaustion.
bool pushArg(lua_State* L, const Arg& a) {
  if (a.index() != 4) {  // no allocation
    if (!lua_checkstack(L, 1)) return false;
    switch (a.index()) {
      case 0: lua_pushnil(L); break;
      case 1: lua_pushboolean(L, std::get<1>(a)); break;
      case 2: lua_pushinteger(L, std::get<2>(a)); break;
      case 3: lua_pushnumber(L, std::get<3>(a)); break;
      default: std::get<5>(a)->push(L); break;
    }
    return true;
  }
  if (protect(L, pushArgOp, const_cast<Arg*>(&a), 0, 1) != LUA_OK) {
    lua_pop(L, 1);
    return false;
  }
  return true;
}

Error memoryError() { return Error{StatusCode::kMemoryError, "not enough memory", {}}; }

Value popValue(lua_State* L) {
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return Value();
  }
  auto ref = std::make_shared<Ref>();
  ref->core = coreOf(L);
  ref->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return detail::makeValue(std::move(ref));
}

// The values above `base` (popped) as Values.
Values popValues(lua_State* L, int base) {
  int n = lua_gettop(L) - base;
  Values out(static_cast<size_t>(n));
  for (int i = n - 1; i >= 0; i--) out[static_cast<size_t>(i)] = popValue(L);
  return out;
}

// The host thread between calls (runtime/capi/lock.h): once tasks run in parallel, a
// host thread outside every C function stays detached from the collector between its
// calls, as C code does, so a host busy with its own work for long never delays a
// collection (nor fails the safepoint deadline); each lua_* function attaches for its
// own duration (API_ENTRY). A call that may run Lua (callOnStack) holds this for its
// length: attached throughout, and detached on the way out if tasks now run in parallel.
class HostEntry {
 public:
  explicit HostEntry(lua_State* L) : S_(capi::stateOf(L)), wasDetached_(capi::tlsDetachedForC) {
    if (wasDetached_) {
      (void)vm::leaveOsWait(S_, vm::OsWait::kShort);
      capi::tlsDetachedForC = false;
    }
  }
  ~HostEntry() {
    bool hostLevel = capi::tlsCCall == nullptr;
    bool parallel = S_.osWaitEnter && S_.tablesShared.load(std::memory_order_relaxed);
    if (wasDetached_ || (hostLevel && parallel)) {
      vm::enterOsWait(S_, vm::OsWait::kShort);
      capi::tlsDetachedForC = true;
    }
  }
  HostEntry(const HostEntry&) = delete;
  HostEntry& operator=(const HostEntry&) = delete;

 private:
  vm::State& S_;
  bool wasDetached_;
};

// Calls what is on the stack above `base` (function, then arguments) with limits.
Expected<Values> callOnStack(lua_State* L, int base, const Limits& limits) {
  int nargs = lua_gettop(L) - base - 1;
  HostEntry entry(L);
  LimitScope scope(L, limits);
  int status = protectedCall(L, nargs, LUA_MULTRET);
  if (status != LUA_OK) return popError(L, status);
  return popValues(L, base);
}

}  // namespace

// Value.

Value detail::makeValue(std::shared_ptr<detail::Ref> ref) { return Value(std::move(ref)); }

void Value::push(lua_State* L) const {
  if (!ref_ || !ref_->core->L) {
    lua_pushnil(L);
    return;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref_->ref);
}

Value Value::fromStack(lua_State* L, int index) {
  lua_pushvalue(L, index);
  return popValue(L);
}

Type Value::type() const {
  if (!ref_ || !ref_->core->L) return Type::kNil;
  lua_State* L = ref_->core->L;
  push(L);
  int t = lua_type(L, -1);
  lua_pop(L, 1);
  return static_cast<Type>(t);
}

const char* Value::typeName() const {
  static const char* const kNames[] = {"nil", "boolean", "userdata", "number", "string", "table", "function", "userdata", "thread"};
  return kNames[static_cast<int>(type())];
}

bool Value::truthy() const {
  if (!ref_ || !ref_->core->L) return false;
  lua_State* L = ref_->core->L;
  push(L);
  bool b = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return b;
}

std::optional<int64_t> Value::toInteger() const {
  if (!ref_ || !ref_->core->L) return std::nullopt;
  lua_State* L = ref_->core->L;
  push(L);
  int ok = 0;
  lua_Integer i = lua_tointegerx(L, -1, &ok);
  lua_pop(L, 1);
  return ok ? std::optional<int64_t>(i) : std::nullopt;
}

std::optional<double> Value::toNumber() const {
  if (!ref_ || !ref_->core->L) return std::nullopt;
  lua_State* L = ref_->core->L;
  push(L);
  int ok = 0;
  lua_Number n = lua_tonumberx(L, -1, &ok);
  lua_pop(L, 1);
  return ok ? std::optional<double>(n) : std::nullopt;
}

namespace {
// tostring(v) with __tostring/__name (C function: run under protect).
int toDisplayOp(lua_State* L) {
  luaL_tolstring(L, 2, nullptr);
  return 1;
}
// A string's bytes (numbers converted on a copy, so the Value is left as it was).
int toStringOp(lua_State* L) {
  lua_pushvalue(L, 2);
  lua_tolstring(L, -1, nullptr);
  return 1;
}
}  // namespace

std::optional<std::string> Value::toString() const {
  if (!ref_ || !ref_->core->L) return std::nullopt;
  lua_State* L = ref_->core->L;
  int top = lua_gettop(L);
  push(L);
  int t = lua_type(L, -1);
  if (t != LUA_TSTRING && t != LUA_TNUMBER) {
    lua_settop(L, top);
    return std::nullopt;
  }
  if (protect(L, toStringOp, nullptr, 1, 1) != LUA_OK) {
    lua_settop(L, top);
    return std::nullopt;
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, -1, &len);
  std::string out(s, len);
  lua_settop(L, top);
  return out;
}

Expected<std::string> Value::toDisplayString() const {
  if (!ref_ || !ref_->core->L) return std::string("nil");
  lua_State* L = ref_->core->L;
  int top = lua_gettop(L);
  push(L);
  int status = protect(L, toDisplayOp, nullptr, 1, 1);
  if (status != LUA_OK) return popError(L, status);
  size_t len = 0;
  const char* s = lua_tolstring(L, -1, &len);
  std::string out(s, len);
  lua_settop(L, top);
  return out;
}

namespace {
int getOp(lua_State* L) {
  lua_gettable(L, 2);
  return 1;
}
int setOp(lua_State* L) {
  lua_settable(L, 2);
  return 0;
}
int lenOp(lua_State* L) {
  lua_len(L, 2);
  return 1;
}
}  // namespace

Expected<Value> Value::getArg(const Arg& key) const {
  lua_State* L = ref_ ? ref_->core->L : nullptr;
  if (!L) return Error{StatusCode::kRuntimeError, "attempt to index a nil value", {}};
  int top = lua_gettop(L);
  push(L);
  if (!pushArg(L, key)) {
    lua_settop(L, top);
    return memoryError();
  }
  int status = protect(L, getOp, nullptr, 2, 1);
  if (status != LUA_OK) return popError(L, status);
  return popValue(L);
}

Expected<void> Value::setArg(const Arg& key, const Arg& value) const {
  lua_State* L = ref_ ? ref_->core->L : nullptr;
  if (!L) return Error{StatusCode::kRuntimeError, "attempt to index a nil value", {}};
  int top = lua_gettop(L);
  push(L);
  if (!pushArg(L, key) || !pushArg(L, value)) {
    lua_settop(L, top);
    return memoryError();
  }
  int status = protect(L, setOp, nullptr, 3, 0);
  if (status != LUA_OK) return popError(L, status);
  return {};
}

Expected<int64_t> Value::length() const {
  lua_State* L = ref_ ? ref_->core->L : nullptr;
  if (!L) return Error{StatusCode::kRuntimeError, "attempt to get length of a nil value", {}};
  int top = lua_gettop(L);
  push(L);
  int status = protect(L, lenOp, nullptr, 1, 1);
  if (status != LUA_OK) return popError(L, status);
  int ok = 0;
  lua_Integer n = lua_tointegerx(L, -1, &ok);
  lua_settop(L, top);
  if (!ok) return Error{StatusCode::kRuntimeError, "object length is not an integer", {}};
  return static_cast<int64_t>(n);
}

Expected<Values> Value::callArgs(const std::vector<Arg>& args, const Limits& limits) const {
  lua_State* L = ref_ ? ref_->core->L : nullptr;
  if (!L) return Error{StatusCode::kRuntimeError, "attempt to call a nil value", {}};
  int base = lua_gettop(L);
  if (!lua_checkstack(L, static_cast<int>(args.size()) + 4)) return memoryError();
  push(L);
  for (const Arg& a : args) {
    if (!pushArg(L, a)) {
      lua_settop(L, base);
      return memoryError();
    }
  }
  return callOnStack(L, base, limits);
}

Expected<Values> Value::callWith(const Values& args, const Limits& limits) const {
  std::vector<Arg> as;
  as.reserve(args.size());
  for (const Value& v : args) as.emplace_back(&v);
  return callArgs(as, limits);
}

bool Value::rawEquals(const Value& other) const {
  if (!ref_ || !other.ref_) return !ref_ == !other.ref_;
  lua_State* L = ref_->core->L;
  if (!L) return false;
  push(L);
  other.push(L);
  bool eq = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return eq;
}

// Scope.

Scope::Scope(Runtime& rt) : L_(rt.luaState()), base_(lua_gettop(L_)) {}
Scope::~Scope() { lua_settop(L_, base_); }

int Scope::keep(const Value& v) {
  if (!lua_checkstack(L_, 1)) return 0;
  v.push(L_);
  return lua_gettop(L_);
}

Value Scope::at(int index) const { return Value::fromStack(L_, index); }

// detail::Frame.

namespace detail {

int Frame::argCount() const { return lua_gettop(L_); }

bool Frame::get(int i, bool& out) const {
  if (lua_type(L_, i) != LUA_TBOOLEAN) return false;
  out = lua_toboolean(L_, i);
  return true;
}

bool Frame::get(int i, int64_t& out) const {
  int ok = 0;
  out = lua_tointegerx(L_, i, &ok);
  return ok;
}

bool Frame::get(int i, double& out) const {
  int ok = 0;
  out = lua_tonumberx(L_, i, &ok);
  return ok;
}

bool Frame::get(int i, std::string& out) const {
  int t = lua_type(L_, i);
  if (t != LUA_TSTRING && t != LUA_TNUMBER) return false;
  lua_pushvalue(L_, i);
  if (protect(L_, toStringOp, nullptr, 1, 1) != LUA_OK) {
    lua_pop(L_, 1);
    return false;
  }
  size_t len = 0;
  const char* s = lua_tolstring(L_, -1, &len);
  out.assign(s, len);
  lua_pop(L_, 1);
  return true;
}

bool Frame::get(int i, Value& out) const {
  if (i > lua_gettop(L_)) {
    out = Value();
    return true;
  }
  out = Value::fromStack(L_, i);
  return true;
}

bool Frame::push(const Arg& a) { return pushArg(L_, a); }

bool Frame::push(const Values& vs) {
  if (!lua_checkstack(L_, static_cast<int>(vs.size()))) return false;
  for (const Value& v : vs) v.push(L_);
  return true;
}

void* selfOf(Frame& frame, const std::string& typeName, Failure& error) {
  void* p = luaL_testudata(frame.state(), 1, typeName.c_str());
  if (!p) {
    error.arg = 1;
    error.expected = nullptr;
    error.message = typeName;
  }
  return p;
}

}  // namespace detail

namespace {

// Upvalue 1: the Thunk's box (a userdata holding a detail::Thunk).
int callThunk(lua_State* L) {
  int n;
  int badArg = 0;
  const char* expected = nullptr;
  bool typeNamed = false;
  {
    auto* thunk = static_cast<detail::Thunk*>(lua_touserdata(L, lua_upvalueindex(1)));
    detail::Frame frame(L);
    detail::Failure failure;
    try {
      n = (*thunk)(frame, failure);
    } catch (const std::exception& e) {
      failure = {};
      failure.message = std::string("C++ exception: ") + e.what();
      n = -1;
    } catch (...) {
      failure = {};
      failure.message = "C++ exception";
      n = -1;
    }
    if (n < 0) {
      if (failure.arg) {
        badArg = failure.arg;
        expected = failure.expected;
        if (!expected) {  // a method's self: the type name is the message
          lua_pushlstring(L, failure.message.data(), failure.message.size());
          typeNamed = true;
        }
      } else if (failure.message.empty()) {
        lua_pushliteral(L, "not enough memory");
      } else {
        lua_pushlstring(L, failure.message.data(), failure.message.size());
      }
    }
  }
  if (n >= 0) return n;
  if (typeNamed) return luaL_typeerror(L, badArg, lua_tostring(L, -1));
  if (badArg) return luaL_typeerror(L, badArg, expected);
  return lua_error(L);
}

int destroyThunk(lua_State* L) {
  using detail::Thunk;
  static_cast<Thunk*>(lua_touserdata(L, 1))->~Thunk();
  return 0;
}

char kThunkMetaKey;

// Pushes a C closure over a new Thunk box (C function: run under protect).
int newThunkOp(lua_State* L) {
  auto* thunk = static_cast<detail::Thunk*>(lua_touserdata(L, 1));
  void* box = lua_newuserdatauv(L, sizeof(detail::Thunk), 0);
  new (box) detail::Thunk(std::move(*thunk));
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kThunkMetaKey);
  lua_setmetatable(L, -2);
  lua_pushcclosure(L, callThunk, 1);
  return 1;
}

}  // namespace

namespace {

// The sandbox preset (Options::sandbox; docs/embedding.md): no io, no debug, no process
// or file-system calls of os, only text chunks (load, loadfile, dofile, require), no C
// modules.
constexpr const char* kSandboxPreset = R"lua(
local rawload, rawloadfile, select, error, searchpath = load, loadfile, select, error, package.searchpath
local function textOnly(f)
  return function(chunk, name, mode, ...)
    if select('#', ...) > 0 then return f(chunk, name, "t", ...) end
    return f(chunk, name, "t")
  end
end
load, loadfile = textOnly(rawload), textOnly(rawloadfile)
local loadText = loadfile
dofile = function(name)
  local f, err = loadText(name)
  if not f then error(err, 2) end
  return f()
end
io, debug = nil, nil
package.loaded.io, package.loaded.debug = nil, nil
for _, k in ipairs{"execute", "exit", "remove", "rename", "tmpname", "getenv", "setlocale"} do os[k] = nil end
package.loadlib, package.cpath = nil, ""
package.searchers[2] = function(name)
  local path, err = searchpath(name, package.path)
  if not path then return err end
  local f, msg = loadText(path)
  if not f then
    error(string.format("error loading module '%s' from file '%s':\n\t%s", name, path, msg), 2)
  end
  return f, path
end
package.searchers[3], package.searchers[4] = nil, nil
)lua";

int newTableOp(lua_State* L) {
  lua_newtable(L);
  return 1;
}

// package.loaded[name] of the state.
Value loadedModule(lua_State* L, const char* name) {
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, name);
  lua_remove(L, -2);
  return popValue(L);
}

// The userdata types' metatables: registry[kUserTypesKey][name] = {__name, __index, __gc}.
struct UserTypeInfo {
  void (*destroy)(void*);
};

int destroyUserdata(lua_State* L) {
  void* p = lua_touserdata(L, 1);
  lua_getiuservalue(L, 1, 1);
  auto* info = static_cast<UserTypeInfo*>(lua_touserdata(L, -1));
  if (p && info && info->destroy) {
    info->destroy(p);
    lua_pushnil(L);
    lua_setiuservalue(L, 1, 1);  // destroyed once, even if resurrected
  }
  return 0;
}

}  // namespace

Runtime::Runtime(std::unique_ptr<detail::Owned> owned)
    : owned_(std::move(owned)),
      L_(capi::luaStateOf(owned_->state->mainThread->data)),
      core_(std::make_shared<Core>()) {
  core_->L = L_;
}

namespace {

gc::StressMode stressOf(GcStress s) {
  switch (s) {
    case GcStress::kCollect: return gc::StressMode::kCollect;
    case GcStress::kRelocate: return gc::StressMode::kRelocate;
    default: return gc::StressMode::kNone;
  }
}

// The registry entries this file uses (C function: run under protect).
int prepareOp(lua_State* L) {
  lua_pushlightuserdata(L, lua_touserdata(L, 1));
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kCoreKey);
  lua_createtable(L, 0, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kErrorMetaKey);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, destroyThunk);
  lua_setfield(L, -2, "__gc");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kThunkMetaKey);
  lua_newtable(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kUserTypesKey);
  return 0;
}

}  // namespace

Expected<std::unique_ptr<Runtime>> Runtime::create(const Options& options) {
  vm::StateOptions so;
  so.gc.stress = stressOf(options.gcStress);
  so.gc.verify = options.gcVerify;
  so.gc.heapLimit = options.heapLimit;
  so.jit.mode = options.jit == Jit::kEager ? vm::JitMode::kEager
                : options.jit == Jit::kOn  ? vm::JitMode::kOn
                                           : vm::JitMode::kOff;
  so.jit.threshold = options.jitThreshold ? options.jitThreshold : 1;
  so.jit.perfMap = options.perfMap;
  auto owned = std::make_unique<detail::Owned>();
  owned->state = vm::newStandardState(so);
  if (!owned->state || !capi::attachCApi(*owned->state)) return memoryError();
  runtime::RuntimeOptions ro;
  ro.workers = options.workers;
  ro.deterministic.enabled = options.deterministicSeed != 0;
  ro.deterministic.seed = options.deterministicSeed;
  auto tasks = runtime::Runtime::start(*owned->state, ro);
  if (!tasks) return tasks.error();
  owned->tasks = std::move(*tasks);
  std::unique_ptr<Runtime> rt(new Runtime(std::move(owned)));
  int status = protect(rt->L_, prepareOp, &rt->core_, 0, 0);
  if (status != LUA_OK) return popError(rt->L_, status);
  if (options.sandbox) {
    Expected<Values> applied = rt->run(kSandboxPreset, "=sandbox");
    if (!applied) return applied.error();
  }
  return rt;
}

// Rule 4's order: the tasks end first (cancelled, awaited), then the finalizers run, then
// the task runtime and the State go.
Runtime::~Runtime() {
  if (capi::tlsDetachedForC && capi::tlsCCall == nullptr) {  // HostEntry left it detached
    (void)vm::leaveOsWait(*owned_->state, vm::OsWait::kShort);
    capi::tlsDetachedForC = false;
  }
  (void)owned_->tasks->finishMayGC();
  vm::HostStack(*owned_->state).closeMayGC();
  core_->L = nullptr;
  owned_->tasks.reset();
  owned_->state.reset();
}

Expected<Value> Runtime::load(std::string_view code, std::string_view chunkName) {
  std::string name(chunkName);
  // lua_load is protected: a syntax error (or memory) comes back as a status.
  int status = luaL_loadbufferx(L_, code.data(), code.size(), name.c_str(), nullptr);
  if (status != LUA_OK) return popError(L_, status);
  return popValue(L_);
}

Expected<Values> Runtime::run(std::string_view code, std::string_view chunkName, const Limits& limits) {
  Expected<Value> f = load(code, chunkName);
  if (!f) return f.error();
  return f->callWith({}, limits);
}

Expected<Values> Runtime::runFile(const std::string& path, const Limits& limits) {
  int status = luaL_loadfilex(L_, path.c_str(), nullptr);
  if (status != LUA_OK) return popError(L_, status);
  return popValue(L_).callWith({}, limits);
}

Value Runtime::globals() {
  lua_rawgeti(L_, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  return popValue(L_);
}

Value Runtime::global(std::string_view name) {
  Expected<Value> v = globals().get(name);
  return v ? *v : Value();
}

void Runtime::setGlobal(std::string_view name, const Value& value) { (void)globals().set(name, value); }

Value Runtime::fromArg(const Arg& a) {
  if (!pushArg(L_, a)) return Value();
  return popValue(L_);
}

Expected<Value> Runtime::newTable() {
  int status = protect(L_, newTableOp, nullptr, 0, 1);
  if (status != LUA_OK) return popError(L_, status);
  return popValue(L_);
}

Value Runtime::functionFromThunk(detail::Thunk thunk) {
  if (protect(L_, newThunkOp, &thunk, 0, 1) != LUA_OK) {
    lua_pop(L_, 1);
    return Value();
  }
  return popValue(L_);
}

Value Runtime::blockingFunction(BlockingFn fn) {
  if (protect(L_, embed::newBlockingFunctionOp, &fn, 0, 1) != LUA_OK) {
    lua_pop(L_, 1);
    return Value();
  }
  return popValue(L_);
}

void Runtime::registerUserType(std::string name, void (*destroy)(void*)) {
  int top = lua_gettop(L_);
  lua_rawgetp(L_, LUA_REGISTRYINDEX, &kUserTypesKey);
  if (lua_getfield(L_, -1, name.c_str()) == LUA_TNIL) {
    luaL_newmetatable(L_, name.c_str());  // __name, and registry[name] for luaL_checkudata
    lua_newtable(L_);
    lua_setfield(L_, -2, "__index");
    lua_pushcfunction(L_, destroyUserdata);
    lua_setfield(L_, -2, "__gc");
    auto* info = static_cast<UserTypeInfo*>(lua_newuserdatauv(L_, sizeof(UserTypeInfo), 0));
    info->destroy = destroy;
    lua_setfield(L_, -2, "__weft_type");
    lua_setfield(L_, -3, name.c_str());
  }
  lua_settop(L_, top);
}

namespace {
struct NewUserdata {
  const std::string* typeName;
  size_t size;
  const std::function<void(void*)>* construct;
};
int newUserdataOp(lua_State* L) {
  auto* req = static_cast<NewUserdata*>(lua_touserdata(L, 1));
  const char* name = req->typeName->c_str();
  void* p = lua_newuserdatauv(L, req->size, 1);
  luaL_setmetatable(L, name);
  bool built = false;
  try {
    (*req->construct)(p);
    built = true;
  } catch (...) {
  }
  if (!built) return luaL_error(L, "C++ exception in the constructor of a '%s'", name);
  // Only a constructed object gets its destructor (the finalizer finds it here).
  luaL_getmetatable(L, name);
  lua_getfield(L, -1, "__weft_type");
  lua_setiuservalue(L, -3, 1);
  lua_pop(L, 1);
  return 1;
}
}  // namespace

Expected<Value> Runtime::newUserdata(const std::string& typeName, size_t size, const std::function<void(void*)>& construct) {
  NewUserdata req{&typeName, size, &construct};
  int status = protect(L_, newUserdataOp, &req, 0, 1);
  if (status != LUA_OK) return popError(L_, status);
  return popValue(L_);
}

void Runtime::addMethod(const std::string& typeName, std::string_view method, detail::Thunk thunk) {
  Value fn = functionFromThunk(std::move(thunk));
  int top = lua_gettop(L_);
  luaL_getmetatable(L_, typeName.c_str());
  lua_getfield(L_, -1, "__index");
  lua_pushlstring(L_, method.data(), method.size());
  fn.push(L_);
  lua_rawset(L_, -3);
  lua_settop(L_, top);
}

Expected<Task> Runtime::spawn(const Value& fn, const Values& args) {
  Value lib = loadedModule(L_, "task");
  Expected<Value> spawnFn = lib.get("spawn");
  if (!spawnFn) return spawnFn.error();
  Values all;
  all.reserve(args.size() + 1);
  all.push_back(fn);
  all.insert(all.end(), args.begin(), args.end());
  Expected<Values> r = spawnFn->callWith(all);
  if (!r) return r.error();
  return Task(r->empty() ? Value() : (*r)[0]);
}

namespace {
// handle:method(args...) on the host thread.
Expected<Values> callMethod(const Value& handle, const char* method, const Values& args = {}) {
  Expected<Value> fn = handle.get(method);
  if (!fn) return fn.error();
  Values all;
  all.push_back(handle);
  all.insert(all.end(), args.begin(), args.end());
  return fn->callWith(all);
}
}  // namespace

Expected<Values> Task::await() { return callMethod(handle_, "await"); }

Expected<void> Task::cancel() {
  Expected<Values> r = callMethod(handle_, "cancel");
  if (!r) return r.error();
  return {};
}

Expected<void> Channel::send(const Value& v) {
  Expected<Values> r = callMethod(handle_, "send", {v});
  if (!r) return r.error();
  return {};
}

Expected<Values> Channel::recv() { return callMethod(handle_, "recv"); }

Expected<void> Channel::close() {
  Expected<Values> r = callMethod(handle_, "close");
  if (!r) return r.error();
  return {};
}

namespace {

// Delivers a port's posts into its channel, in order (runtime/port.h).
constexpr const char* kCourier = R"lua(
local next, ch = ...
while true do
  local more, v = next()
  if more == false then return end
  if more and not pcall(ch.send, ch, v) then next(true) return end
end
)lua";

// The host's share of a port: when the last copy of a Channel goes, the port closes
// and its courier ends, after delivering what was posted.
struct PortLease {
  explicit PortLease(std::shared_ptr<runtime::Port> p) : port(std::move(p)) {}
  PortLease(const PortLease&) = delete;
  PortLease& operator=(const PortLease&) = delete;
  ~PortLease() { port->close(); }
  std::shared_ptr<runtime::Port> port;
};

int makePortOp(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, runtime::kPortMakerKey);
  lua_call(L, 0, 2);
  return 2;
}

}  // namespace

Expected<Channel> Runtime::channel(uint32_t capacity) {
  Expected<Value> make = loadedModule(L_, "task").get("channel");
  if (!make) return make.error();
  Expected<Values> made = make->call(int64_t(capacity));
  if (!made) return made.error();
  Value ch = made->empty() ? Value() : (*made)[0];
  int top = lua_gettop(L_);
  int status = protect(L_, makePortOp, nullptr, 0, 2);
  if (status != LUA_OK) return popError(L_, status);
  std::shared_ptr<runtime::Port> port = static_cast<runtime::PortBox*>(lua_touserdata(L_, -1))->port;
  lua_pop(L_, 1);
  Value next = popValue(L_);
  lua_settop(L_, top);
  Expected<Value> courier = load(kCourier, "=courier");
  if (!courier) return courier.error();
  Expected<Task> started = spawn(*courier, {next, ch});
  if (!started) {
    port->close();
    return started.error();
  }
  return Channel(ch, std::make_shared<PortLease>(std::move(port)));
}

bool Channel::post(HostValue v) const { return static_cast<PortLease*>(port_.get())->port->post(std::move(v)); }

}  // namespace weft
