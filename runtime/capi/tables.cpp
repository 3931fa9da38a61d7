// Tables, metatables, globals, full userdata and user values, to-be-closed slots
// (manual §4.6, the get and set functions).

#include "runtime/capi/internal.h"
#include "runtime/capi/lock.h"
#include "vm/meta.h"
#include "vm/proto.h"
#include "vm/string.h"
#include "vm/table.h"

using namespace weft;
using namespace weft::capi;
using vm::Tag;
using vm::Value;

namespace {

void checkStatus(lua_State* L, Status st) {
  if (!st.isOk()) raiseStatus(L, st);
}

Value stringValue(lua_State* L, const char* k) {
  vm::String* s = vm::newString(stateOf(L), k);
  if (!s) raiseMemory(L);
  return Value::string(s);
}

// t[k] with metamethods; pushes the result and returns its type.
int getAndPushMayGC(lua_State* L, const Value& t, const Value& k) {
  Value out;
  if (t.isTable()) {
    out = vm::tableGet(t.asTable(), k);
    if (out.isNil() && vm::tableMetatable(t.asTable())) {
      checkStatus(L, vm::indexMayGC(stateOf(L), threadOf(L), t, k, out));
    }
  } else {
    checkStatus(L, vm::indexMayGC(stateOf(L), threadOf(L), t, k, out));
  }
  pushMayGC(L, out);
  return int(vm::basicType(out));
}

void setWithMetaMayGC(lua_State* L, const Value& t, const Value& k, const Value& v) {
  checkStatus(L, vm::newIndexMayGC(stateOf(L), threadOf(L), t, k, v));
}

vm::Table* tableAtMayGC(lua_State* L, int idx) {
  Value v = valueAt(L, idx);
  if (!v.isTable()) raiseMessageMayGC(L, "table expected");
  return v.asTable();
}

void rawSetMayGC(lua_State* L, vm::Table* h, const Value& k, const Value& v) {
  if (k.isNil()) raiseMessageMayGC(L, "table index is nil");
  if (k.isFloat() && k.u.n != k.u.n) raiseMessageMayGC(L, "table index is NaN");
  Status st = vm::tableSet(stateOf(L), h, k, v);
  if (st.code() == StatusCode::kMemoryError) raiseMemory(L);
  checkStatus(L, st);
}

Value globals(lua_State* L) { return vm::tableGetInt(stateOf(L).registry, LUA_RIDX_GLOBALS); }

}  // namespace

LUA_API int lua_getglobal(lua_State* L, const char* name) {
  API_ENTRY(L);
  Value k = stringValue(L, name);
  return getAndPushMayGC(L, globals(L), k);
}

LUA_API void lua_setglobal(lua_State* L, const char* name) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  Value k = stringValue(L, name);
  setWithMetaMayGC(L, globals(L), k, t->stack[t->top - 1]);
  t->top--;
}

LUA_API int lua_gettable(lua_State* L, int idx) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  Value obj = valueAt(L, idx);
  Value k = t->stack[t->top - 1];
  t->top--;
  return getAndPushMayGC(L, obj, k);
}

LUA_API int lua_getfield(lua_State* L, int idx, const char* k) {
  API_ENTRY(L);
  Value obj = valueAt(L, idx);
  Value key = stringValue(L, k);
  return getAndPushMayGC(L, obj, key);
}

LUA_API int lua_geti(lua_State* L, int idx, lua_Integer n) { return getAndPushMayGC(L, valueAt(L, idx), Value::integer(n)); }

LUA_API int lua_rawget(lua_State* L, int idx) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  vm::Table* h = tableAtMayGC(L, idx);
  Value out = vm::tableGet(h, t->stack[t->top - 1]);
  t->stack[t->top - 1] = out;
  return int(vm::basicType(out));
}

LUA_API int lua_rawgeti(lua_State* L, int idx, lua_Integer n) {
  API_ENTRY(L);
  Value out = vm::tableGetInt(tableAtMayGC(L, idx), n);
  pushMayGC(L, out);
  return int(vm::basicType(out));
}

LUA_API int lua_rawgetp(lua_State* L, int idx, const void* p) {
  API_ENTRY(L);
  Value out = vm::tableGet(tableAtMayGC(L, idx), Value::lightUserdata(const_cast<void*>(p)));
  pushMayGC(L, out);
  return int(vm::basicType(out));
}

LUA_API void lua_createtable(lua_State* L, int narr, int nrec) {
  API_ENTRY(L);
  vm::Table* h = vm::newTable(stateOf(L), uint32_t(narr > 0 ? narr : 0), uint32_t(nrec > 0 ? nrec : 0));
  if (!h) raiseMemory(L);
  pushMayGC(L, Value::table(h));
}

LUA_API void lua_settable(lua_State* L, int idx) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  Value obj = valueAt(L, idx);
  setWithMetaMayGC(L, obj, t->stack[t->top - 2], t->stack[t->top - 1]);
  t->top -= 2;
}

LUA_API void lua_setfield(lua_State* L, int idx, const char* k) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  Value obj = valueAt(L, idx);
  Value key = stringValue(L, k);
  setWithMetaMayGC(L, obj, key, t->stack[t->top - 1]);
  t->top--;
}

LUA_API void lua_seti(lua_State* L, int idx, lua_Integer n) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  Value obj = valueAt(L, idx);
  setWithMetaMayGC(L, obj, Value::integer(n), t->stack[t->top - 1]);
  t->top--;
}

LUA_API void lua_rawset(lua_State* L, int idx) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  rawSetMayGC(L, tableAtMayGC(L, idx), t->stack[t->top - 2], t->stack[t->top - 1]);
  t->top -= 2;
}

LUA_API void lua_rawseti(lua_State* L, int idx, lua_Integer n) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  rawSetMayGC(L, tableAtMayGC(L, idx), Value::integer(n), t->stack[t->top - 1]);
  t->top--;
}

LUA_API void lua_rawsetp(lua_State* L, int idx, const void* p) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  rawSetMayGC(L, tableAtMayGC(L, idx), Value::lightUserdata(const_cast<void*>(p)), t->stack[t->top - 1]);
  t->top--;
}

LUA_API int lua_next(lua_State* L, int idx) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  vm::Table* h = tableAtMayGC(L, idx);
  Value key = t->stack[t->top - 1];
  Value value;
  bool found = false;
  Status st = vm::tableNext(h, key, value, found);
  if (!st.isOk()) raiseMessageMayGC(L, "invalid key to 'next'");
  if (!found) {
    t->top--;
    return 0;
  }
  t->stack[t->top - 1] = key;
  pushMayGC(L, value);
  return 1;
}

// ---- Metatables ----

LUA_API int lua_getmetatable(lua_State* L, int objindex) {
  API_ENTRY(L);
  vm::Table* mt = vm::metatableOf(stateOf(L), valueAt(L, objindex));
  if (!mt) return 0;
  pushMayGC(L, Value::table(mt));
  return 1;
}

LUA_API int lua_setmetatable(lua_State* L, int objindex) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  vm::ThreadData* t = threadOf(L);
  Value obj = valueAt(L, objindex);
  Value mtv = t->stack[t->top - 1];
  if (!mtv.isNil() && !mtv.isTable()) raiseMessageMayGC(L, "table expected");
  vm::Table* mt = mtv.isNil() ? nullptr : mtv.asTable();
  switch (obj.tag) {
    case Tag::Table:
      vm::tableSetMetatable(obj.asTable(), mt);
      break;
    case Tag::Userdata: {
      vm::Userdata* u = obj.asUserdata();
      vm::storeRef(u, u->metatable, mt);
      break;
    }
    default:
      S.typeMetatables[int(vm::basicType(obj))] = mt;
      break;
  }
  if (mt && (obj.isTable() || obj.tag == Tag::Userdata) && !vm::metaField(S, mt, vm::Meta::Gc).isNil()) {
    S.heap().registerFinalizable(obj.u.obj);
  }
  t->top--;
  return 1;
}

// ---- Full userdata ----

LUA_API void* lua_newuserdatauv(lua_State* L, size_t sz, int nuvalue) {
  API_ENTRY(L);
  if (nuvalue < 0 || uint32_t(nuvalue) > vm::kMaxUserValues) raiseMessageMayGC(L, "invalid value");
  vm::Userdata* u = vm::newUserdata(stateOf(L), sz, uint32_t(nuvalue));
  if (!u) raiseMemory(L);
  pushMayGC(L, Value::userdata(u));
  return u->data;
}

LUA_API int lua_getiuservalue(lua_State* L, int idx, int n) {
  API_ENTRY(L);
  Value v = valueAt(L, idx);
  if (v.tag != Tag::Userdata) raiseMessageMayGC(L, "full userdata expected");
  vm::Userdata* u = v.asUserdata();
  if (n <= 0 || uint32_t(n) > u->userValues) {
    pushMayGC(L, Value::nil());
    return LUA_TNONE;
  }
  Value out = vm::loadSlot(vm::userValueSlot(u, uint32_t(n - 1)));
  pushMayGC(L, out);
  return int(vm::basicType(out));
}

LUA_API int lua_setiuservalue(lua_State* L, int idx, int n) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  Value v = valueAt(L, idx);
  if (v.tag != Tag::Userdata) raiseMessageMayGC(L, "full userdata expected");
  vm::Userdata* u = v.asUserdata();
  int ok = 0;
  if (n > 0 && uint32_t(n) <= u->userValues) {
    vm::storeValue(u, vm::userValueSlot(u, uint32_t(n - 1)), t->stack[t->top - 1]);
    ok = 1;
  }
  t->top--;
  return ok;
}

// ---- To-be-closed slots ----

LUA_API void lua_toclose(lua_State* L, int idx) {
  API_ENTRY(L);
  vm::State& S = stateOf(L);
  vm::ThreadData* t = threadOf(L);
  uint32_t slot = slotOfMayGC(L, idx);
  Value v = t->stack[slot];
  if (v.isFalsy()) return;  // false and nil need no closing
  if (vm::metamethodOf(S, v, vm::Meta::Close).isNil()) raiseMessageMayGC(L, "variable got a non-closable value");
  if (!t->pushTbc(slot)) raiseMemory(L);
}

LUA_API void lua_closeslot(lua_State* L, int idx) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  uint32_t slot = slotOfMayGC(L, idx);
  Status st = vm::closeTbcMayGC(stateOf(L), t, slot, Status::ok());
  if (!st.isOk()) raiseStatus(L, st);
  t->stack[slot] = Value::nil();
}
