// Runtime::blockingFunction (include/weft/weft.hpp): a host's blocking C++ function as a
// Lua function whose body runs on the blocking pool, through weft_blockingk
// (include/weft/lua/lweft.h).
//
// Protocol: the call's state (the function, its HostValue arguments, then its result) is
// a userdata on the calling C function's own stack (userdata never move: c-api.md), so
// the pool thread writes into a stable place, and the collector frees it even when a
// cancelled task never runs the continuation. The closure's upvalue keeps the function.
#include "runtime/embed/blocking.h"

#include <new>
#include <string>
#include <utility>
#include <vector>

#include "weft/lua/lauxlib.h"
#include "weft/lua/lweft.h"
#include "weft/weft.hpp"

namespace weft::embed {
namespace {

using BlockingFn = Runtime::BlockingFn;

struct Call {
  BlockingFn* fn;
  std::vector<HostValue> args{};
  Expected<std::vector<HostValue>> result = std::vector<HostValue>{};
};

template <typename T>
int destroy(lua_State* L) {
  static_cast<T*>(lua_touserdata(L, 1))->~T();
  return 0;
}

// A userdata holding a T, destroyed by its __gc. Everything that may raise (a longjmp,
// which skips destructors) happens before T is made: the metatable (made once per type),
// then the userdata.
template <typename T, typename... A>
T* newBox(lua_State* L, const char* typeName, A&&... args) {
  if (luaL_newmetatable(L, typeName)) {
    lua_pushcfunction(L, destroy<T>);
    lua_setfield(L, -2, "__gc");
  }
  void* p = lua_newuserdatauv(L, sizeof(T), 0);
  T* box = new (p) T{std::forward<A>(args)...};
  lua_insert(L, -2);
  lua_setmetatable(L, -2);
  return box;
}

bool hostType(int type) { return type == LUA_TNIL || type == LUA_TBOOLEAN || type == LUA_TNUMBER || type == LUA_TSTRING; }

HostValue toHost(lua_State* L, int i) {
  switch (lua_type(L, i)) {
    case LUA_TBOOLEAN: return lua_toboolean(L, i) != 0;
    case LUA_TNUMBER:
      if (lua_isinteger(L, i)) return int64_t(lua_tointeger(L, i));
      return double(lua_tonumber(L, i));
    case LUA_TSTRING: {
      size_t n;
      const char* s = lua_tolstring(L, i, &n);
      return std::string(s, n);
    }
    default: return std::monostate{};
  }
}

void pushHost(lua_State* L, const HostValue& v) {
  switch (v.index()) {
    case 0: lua_pushnil(L); break;
    case 1: lua_pushboolean(L, std::get<1>(v)); break;
    case 2: lua_pushinteger(L, std::get<2>(v)); break;
    case 3: lua_pushnumber(L, std::get<3>(v)); break;
    default: lua_pushlstring(L, std::get<4>(v).data(), std::get<4>(v).size()); break;
  }
}

// On a pool thread (or the caller's): no Lua here. A throw is weft_blockingk's to catch.
void work(void* ud) {
  auto* call = static_cast<Call*>(ud);
  call->result = (*call->fn)(std::move(call->args));
}

// ctx: the stack index of the Call.
int done(lua_State* L, int, lua_KContext ctx) {
  auto* call = static_cast<Call*>(lua_touserdata(L, int(ctx)));
  if (!call->result) {
    const std::string& message = call->result.error().message;
    lua_pushlstring(L, message.data(), message.size());
    return lua_error(L);
  }
  const std::vector<HostValue>& results = *call->result;
  luaL_checkstack(L, int(results.size()), "too many results");
  for (const HostValue& v : results) pushHost(L, v);
  return int(results.size());
}

// No C++ object with a destructor lives in this frame across a call that may raise.
int callBlocking(lua_State* L) {
  int n = lua_gettop(L);
  for (int i = 1; i <= n; i++) {
    if (!hostType(lua_type(L, i))) {
      return luaL_argerror(L, i, "nil, boolean, number or string expected (a blocking function's argument)");
    }
  }
  auto* fn = static_cast<BlockingFn*>(lua_touserdata(L, lua_upvalueindex(1)));
  Call* call = newBox<Call>(L, "weft.blocking_call", fn);
  call->args.reserve(size_t(n));
  for (int i = 1; i <= n; i++) call->args.push_back(toHost(L, i));
  return weft_blockingk(L, work, call, lua_gettop(L), done);
}

}  // namespace

int newBlockingFunctionOp(lua_State* L) {
  auto* fn = static_cast<BlockingFn*>(lua_touserdata(L, 1));
  newBox<BlockingFn>(L, "weft.blocking_function", std::move(*fn));
  lua_pushcclosure(L, callBlocking, 1);
  return 1;
}

}  // namespace weft::embed
