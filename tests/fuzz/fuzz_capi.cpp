// fuzz_capi: random sequences of Lua C API calls under the stack discipline (only valid
// indices, lua_checkstack before pushes, operations that may raise run under lua_pcall),
// through the public headers only. The harness keeps a model of the stack's types and
// checks it against lua_gettop and lua_type after every call; ASan and UBSan catch the
// rest. Runs under relocation stress every 8th input (WEFT_GC_STRESS is read when a
// state is made), so the values of the stack, the registry and references move under
// the calls.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "weft/lua/lauxlib.h"
#include "weft/lua/lua.h"
#include "weft/lua/lualib.h"

namespace {

struct Input {
  const uint8_t* p;
  size_t n;
  bool empty() const { return n == 0; }
  uint8_t byte() {
    if (!n) return 0;
    n--;
    return *p++;
  }
  int64_t integer() {
    int64_t v = 0;
    for (int i = 0; i < 8; i++) v = (v << 8) | byte();
    return v;
  }
};

[[noreturn]] void fail(const char* what, int a, int b) {
  __builtin_printf("fuzz_capi: %s (%d, %d)\n", what, a, b);
  std::abort();
}

constexpr int kMaxStack = 200;

// Runs f(L) protected on the top `nargs` values, leaving `nresults` values (the error
// message on failure is dropped and replaced by nils so the model's count holds).
void protectedOp(lua_State* L, lua_CFunction f, int nargs, int nresults) {
  lua_pushcfunction(L, f);
  lua_insert(L, -nargs - 1);
  if (lua_pcall(L, nargs, nresults, 0) != LUA_OK) {
    lua_pop(L, 1);
    for (int i = 0; i < nresults; i++) lua_pushnil(L);
  }
}

int opGetTable(lua_State* L) {
  lua_gettable(L, 1);
  return 1;
}
int opSetTable(lua_State* L) {
  lua_settable(L, 1);
  return 0;
}
int opLen(lua_State* L) {
  lua_len(L, 1);
  return 1;
}
int opConcat(lua_State* L) {
  lua_concat(L, lua_gettop(L));
  return 1;
}
int opArith(lua_State* L) {
  int op = int(lua_tointeger(L, 3));
  lua_settop(L, 2);
  lua_arith(L, op);
  return 1;
}
int opCompare(lua_State* L) {
  lua_pushboolean(L, lua_compare(L, 1, 2, int(lua_tointeger(L, 3))));
  return 1;
}
int opToString(lua_State* L) {
  luaL_tolstring(L, 1, nullptr);
  return 1;
}
int opBuffer(lua_State* L) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  int n = int(lua_tointeger(L, 1));
  for (int i = 0; i < n; i++) luaL_addlstring(&b, "0123456789abcdef", size_t(i % 16));
  lua_pushvalue(L, 2);
  luaL_addvalue(&b);
  luaL_pushresult(&b);
  return 1;
}

class Harness {
 public:
  explicit Harness(lua_State* L) : L_(L) {}

  void run(Input in) {
    lua_settop(L_, 0);
    model_.clear();
    refs_.clear();
    int steps = 0;
    while (!in.empty() && steps++ < 400) {
      step(in);
      check();
    }
    for (int r : refs_) luaL_unref(L_, LUA_REGISTRYINDEX, r);
    lua_settop(L_, 0);
  }

 private:
  lua_State* L_;
  std::vector<int> model_;  // each slot's type; -1: not modelled (a call's result)
  std::vector<int> refs_;

  int top() const { return int(model_.size()); }
  // A valid index (absolute or relative), or 0 when the stack is empty.
  int index(Input& in) {
    if (model_.empty()) return 0;
    int i = int(in.byte() % model_.size()) + 1;
    return (in.byte() & 1) ? i : i - top() - 1;
  }
  int abs(int i) const { return i > 0 ? i : top() + i + 1; }
  bool room(int n) { return top() + n <= kMaxStack && lua_checkstack(L_, n); }
  void pushed(int type) { model_.push_back(type); }

  void check() {
    if (lua_gettop(L_) != top()) fail("gettop differs from the model", lua_gettop(L_), top());
    for (int i = 1; i <= top(); i++) {
      int t = lua_type(L_, i);
      if (model_[size_t(i - 1)] == -1) model_[size_t(i - 1)] = t;
      else if (t != model_[size_t(i - 1)]) fail("type differs from the model", i, t);
    }
  }

  void step(Input& in) {
    switch (in.byte() % 30) {
      case 0: if (room(1)) { lua_pushnil(L_); pushed(LUA_TNIL); } break;
      case 1: if (room(1)) { lua_pushinteger(L_, in.integer()); pushed(LUA_TNUMBER); } break;
      case 2: if (room(1)) { int64_t bits = in.integer(); double d; std::memcpy(&d, &bits, 8); lua_pushnumber(L_, d); pushed(LUA_TNUMBER); } break;
      case 3: {
        if (!room(1)) break;
        size_t len = in.byte() % 64;
        std::string s;
        for (size_t i = 0; i < len; i++) s.push_back(char(in.byte()));
        const char* p = lua_pushlstring(L_, s.data(), s.size());
        if (std::memcmp(p, s.data(), s.size()) != 0) fail("pushlstring's copy differs", int(len), 0);
        pushed(LUA_TSTRING);
        break;
      }
      case 4: if (room(1)) { lua_pushboolean(L_, in.byte() & 1); pushed(LUA_TBOOLEAN); } break;
      case 5: if (room(1)) { lua_createtable(L_, in.byte() % 8, in.byte() % 8); pushed(LUA_TTABLE); } break;
      case 6: if (int i = index(in); i && room(1)) { lua_pushvalue(L_, i); pushed(model_[size_t(abs(i) - 1)]); } break;
      case 7: { int n = top() ? in.byte() % (top() + 1) : 0; lua_pop(L_, n); model_.resize(size_t(top() - n)); break; }
      case 8: {
        int n = in.byte() % (top() + 4);
        if (n > top() && !room(n - top())) break;
        lua_settop(L_, n);
        model_.resize(size_t(n), LUA_TNIL);
        break;
      }
      case 9: {
        int i = index(in);
        if (!i) break;
        int from = abs(i), span = top() - from + 1;
        int n = int(int8_t(in.byte())) % span;
        lua_rotate(L_, i, n);
        std::vector<int> seg(model_.begin() + from - 1, model_.end());
        for (int k = 0; k < span; k++) model_[size_t(from - 1 + ((k + n) % span + span) % span)] = seg[size_t(k)];
        break;
      }
      case 10: if (int i = index(in); i) { int a = abs(i); lua_insert(L_, i); int t = model_.back(); model_.pop_back(); model_.insert(model_.begin() + a - 1, t); } break;
      case 11: if (int i = index(in); i) { int a = abs(i); lua_remove(L_, i); model_.erase(model_.begin() + a - 1); } break;
      case 12: if (int i = index(in); i && top() >= 2) { int a = abs(i); int t = model_.back(); lua_replace(L_, i); model_.pop_back(); if (a <= top()) model_[size_t(a - 1)] = t; } break;
      case 13: if (int i = index(in), j = index(in); i && j) { lua_copy(L_, i, j); model_[size_t(abs(j) - 1)] = model_[size_t(abs(i) - 1)]; } break;
      case 14: {
        int i = index(in);
        if (!i) break;
        int t = lua_type(L_, i);
        size_t len = 0;
        const char* s = lua_tolstring(L_, i, &len);
        if ((t == LUA_TSTRING || t == LUA_TNUMBER) != (s != nullptr)) fail("tolstring and the type disagree", t, 0);
        if (s) {
          if (s[len] != '\0') fail("tolstring without a terminating zero", int(len), 0);
          model_[size_t(abs(i) - 1)] = LUA_TSTRING;  // numbers are converted in place
        }
        break;
      }
      case 15: {  // t[k] = v, raw, with the top two values
        int i = index(in);
        if (!i || top() < 3 || lua_type(L_, i) != LUA_TTABLE || abs(i) > top() - 2) break;
        if (lua_isnil(L_, -2) || (lua_isnumber(L_, -2) && lua_tonumber(L_, -2) != lua_tonumber(L_, -2))) break;
        lua_rawset(L_, i);
        model_.resize(size_t(top() - 2));
        break;
      }
      case 16: if (int i = index(in); i && top() >= 1 && lua_type(L_, i) == LUA_TTABLE && room(1)) { lua_rawget(L_, i); model_.back() = -1; } break;
      case 17: if (int i = index(in); i && top() >= 1 && room(3)) { lua_pushvalue(L_, i); lua_pushvalue(L_, -2); protectedOp(L_, opGetTable, 2, 1); pushed(-1); } break;
      case 18: if (int i = index(in); i && top() >= 2 && room(4)) { lua_pushvalue(L_, i); lua_pushvalue(L_, -3); lua_pushvalue(L_, -3); protectedOp(L_, opSetTable, 3, 0); } break;
      case 19: if (int i = index(in); i && room(3)) { lua_pushvalue(L_, i); protectedOp(L_, opLen, 1, 1); pushed(-1); } break;
      case 20: {
        int n = top() ? in.byte() % (top() < 5 ? top() + 1 : 6) : 0;
        if (!room(3)) break;
        protectedOp(L_, opConcat, n, 1);
        model_.resize(size_t(top() - n));
        pushed(-1);
        break;
      }
      case 21: if (int i = index(in), j = index(in); i && j && room(5)) { lua_pushvalue(L_, i); lua_pushvalue(L_, j); lua_pushinteger(L_, in.byte() % 14); protectedOp(L_, opArith, 3, 1); pushed(-1); } break;
      case 22: if (int i = index(in), j = index(in); i && j && room(5)) { lua_pushvalue(L_, i); lua_pushvalue(L_, j); lua_pushinteger(L_, in.byte() % 3); protectedOp(L_, opCompare, 3, 1); pushed(-1); } break;
      case 23: {  // a whole traversal with lua_next
        int i = index(in);
        if (!i || lua_type(L_, i) != LUA_TTABLE || !room(3)) break;
        int t = lua_absindex(L_, i);
        lua_pushnil(L_);
        int count = 0;
        while (lua_next(L_, t) && count++ < 1000) lua_pop(L_, 1);
        if (count > 1000) lua_pop(L_, 2);
        break;
      }
      case 24: if (int i = index(in), j = index(in); i && j && lua_type(L_, i) == LUA_TTABLE && lua_type(L_, j) == LUA_TTABLE) { lua_pushvalue(L_, j); lua_setmetatable(L_, i); } break;
      case 25: {  // a userdata with user values
        if (!room(2)) break;
        int nuv = in.byte() % 4;
        size_t size = in.byte() * 3u;
        auto* p = static_cast<unsigned char*>(lua_newuserdatauv(L_, size, nuv));
        if (size) std::memset(p, 0xab, size);
        pushed(LUA_TUSERDATA);
        if (nuv && top() >= 2) {
          lua_pushvalue(L_, -2);
          if (!lua_setiuservalue(L_, -2, 1)) fail("setiuservalue refused a valid slot", nuv, 0);
          lua_getiuservalue(L_, -1, nuv + 1);  // out of range: nil, LUA_TNONE
          lua_pop(L_, 1);
        }
        if (lua_touserdata(L_, -1) != p || lua_rawlen(L_, -1) != size) fail("userdata address or size changed", int(size), 0);
        break;
      }
      case 26: lua_gc(L_, LUA_GCCOLLECT); break;
      case 27: if (int i = index(in); i && room(1)) { lua_pushvalue(L_, i); refs_.push_back(luaL_ref(L_, LUA_REGISTRYINDEX)); } break;
      case 28: if (!refs_.empty() && room(1)) { lua_rawgeti(L_, LUA_REGISTRYINDEX, refs_[in.byte() % refs_.size()]); pushed(-1); } break;
      case 29: {  // a coroutine fed through xmove
        if (!room(3) || top() < 1) break;
        lua_State* co = lua_newthread(L_);
        pushed(LUA_TTHREAD);
        luaL_loadstring(co, "local a = ... local b = coroutine.yield(a) return b, a");
        lua_pushvalue(L_, -2);
        lua_xmove(L_, co, 1);
        int nres = 0;
        if (lua_resume(co, L_, 1, &nres) == LUA_YIELD) {
          lua_pushinteger(co, 7);
          lua_resume(co, L_, 1, &nres);
        }
        break;
      }
    }
  }
};

// A fresh state per input, so a failing input reproduces alone.
lua_State* newState(bool relocate) {
  if (relocate) setenv("WEFT_GC_STRESS", "relocate", 1);
  lua_State* L = luaL_newstate();
  unsetenv("WEFT_GC_STRESS");
  if (L) luaL_openlibs(L);
  return L;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  bool relocate = data[0] % 8 == 0;
  lua_State* L = newState(relocate);
  if (!L) return 0;
  Harness(L).run(Input{data + 1, size - 1});
  // The buffer case runs once per input, protected, with what the stack left.
  lua_pushinteger(L, int64_t(size % 40));
  lua_pushlstring(L, reinterpret_cast<const char*>(data), size < 300 ? size : 300);
  protectedOp(L, opBuffer, 2, 1);
  protectedOp(L, opToString, 1, 1);
  lua_close(L);
  return 0;
}
