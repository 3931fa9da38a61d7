// The debug interface of the C API (manual §4.7): activation records, lua_getinfo, locals,
// upvalues and hooks written in C.
//
// A lua_Debug names its activation by frame index (i_ci, internal.h frameToken). Strings
// handed to C point to stable storage: a prototype's debug information (off-heap),
// static text, or names interned for the State's life (internName).
#include <cstring>

#include "frontend/compiler.h"
#include "runtime/capi/internal.h"
#include "runtime/capi/lock.h"
#include "vm/debug.h"
#include "vm/string.h"
#include "vm/table.h"

using namespace weft;
using namespace weft::capi;
using vm::Tag;
using vm::Value;

LUA_API int lua_getstack(lua_State* L, int level, lua_Debug* ar) {
  if (level < 0) return 0;
  int idx = vm::frameAtLevel(threadOf(L), level);
  if (idx < 0) return 0;
  ar->i_ci = frameToken(uint32_t(idx));
  return 1;
}

namespace {

void copyShortSource(lua_Debug* ar, const std::string& shortSrc) {
  size_t n = std::min(shortSrc.size(), size_t(LUA_IDSIZE - 1));
  std::memcpy(ar->short_src, shortSrc.data(), n);
  ar->short_src[n] = '\0';
}

// The 'S' fields. A separate function: its std::string is gone before anything raises.
void fillSource(lua_Debug* ar, const Value& fn) {
  if (fn.isLuaClosure()) {
    const frontend::ProtoData& d = *fn.asLuaClosure()->proto->data;
    ar->source = d.source.empty() ? "=?" : d.source.c_str();
    ar->srclen = d.source.empty() ? 2 : d.source.size();
    copyShortSource(ar, frontend::shortSourceName(d.source.empty() ? "=?" : d.source));
    ar->linedefined = d.lineDefined;
    ar->lastlinedefined = d.lastLineDefined;
    ar->what = d.lineDefined == 0 ? "main" : "Lua";
  } else {
    ar->source = "=[C]";
    ar->srclen = 4;
    copyShortSource(ar, "[C]");
    ar->linedefined = -1;
    ar->lastlinedefined = -1;
    ar->what = "C";
  }
}

void fillName(lua_State* L, lua_Debug* ar, vm::ThreadData* t, int frameIdx) {
  std::string name;
  const char* kind = frameIdx >= 0 ? vm::frameFunctionName(t, uint32_t(frameIdx), name) : nullptr;
  if (kind) {
    ar->name = internName(capiOf(L), name);
    ar->namewhat = kind;
  } else {
    ar->name = nullptr;
    ar->namewhat = "";
  }
}

// The activelines table of 'L' (nil for a C function).
void pushActiveLinesMayGC(lua_State* L, const Value& fn) {
  if (!fn.isLuaClosure()) {
    pushMayGC(L, Value::nil());
    return;
  }
  vm::State& S = stateOf(L);
  vm::Table* lines = vm::newTable(S);
  if (!lines) raiseMemory(L);
  pushMayGC(L, Value::table(lines));
  const frontend::ProtoData& d = *fn.asLuaClosure()->proto->data;
  for (size_t i = d.isVararg ? 1 : 0; i < d.lineinfo.size(); i++) {
    if (d.lineinfo[i] == 0) continue;
    if (!vm::tableSetInt(S, lines, d.lineinfo[i], Value::boolean(true)).isOk()) raiseMemory(L);
  }
}

}  // namespace

LUA_API int lua_getinfo(lua_State* L, const char* what, lua_Debug* ar) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  Value fn;
  int frameIdx = -1;
  if (*what == '>') {
    fn = t->stack[t->top - 1];
    t->top--;
    what++;
    if (!fn.isFunction()) raiseMessageMayGC(L, "function expected");
  } else {
    frameIdx = frameOfToken(ar);
    if (frameIdx < 0 || uint32_t(frameIdx) >= t->frameCount) return 0;
    fn = t->stack[t->frames[frameIdx].func];
  }
  int ok = 1;
  for (const char* p = what; *p; p++) {
    switch (*p) {
      case 'S': fillSource(ar, fn); break;
      case 'l': ar->currentline = frameIdx >= 0 ? vm::currentLine(t, t->frames[frameIdx]) : -1; break;
      case 'u':
        if (fn.isLuaClosure()) {
          vm::LuaClosure* c = fn.asLuaClosure();
          ar->nups = (unsigned char)c->numUpvalues;
          ar->nparams = c->proto->numParams;
          ar->isvararg = char(c->proto->isVararg);
        } else {
          ar->nups = (unsigned char)(fn.tag == Tag::NativeClosure ? fn.asNativeClosure()->numUpvalues : 0);
          ar->nparams = 0;
          ar->isvararg = 1;
        }
        break;
      case 'n': fillName(L, ar, t, frameIdx); break;
      case 't': ar->istailcall = char(frameIdx >= 0 && (t->frames[frameIdx].flags & vm::kFrameTail) ? 1 : 0); break;
      case 'r': {
        vm::Transfer tr = vm::hookTransfer(t, frameIdx);
        ar->ftransfer = (unsigned short)tr.first;
        ar->ntransfer = (unsigned short)tr.count;
        break;
      }
      case 'f':
      case 'L': break;
      default: ok = 0;
    }
  }
  if (std::strchr(what, 'f')) pushMayGC(L, fn);
  if (std::strchr(what, 'L')) pushActiveLinesMayGC(L, fn);
  return ok;
}

LUA_API const char* lua_getlocal(lua_State* L, const lua_Debug* ar, int n) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  if (!ar) {
    Value f = t->stack[t->top - 1];
    return f.isLuaClosure() ? vm::activeLocalName(f.asLuaClosure()->proto, n, 0) : nullptr;
  }
  int idx = frameOfToken(ar);
  if (idx < 0 || uint32_t(idx) >= t->frameCount) return nullptr;
  uint32_t index = 0;
  const char* name = vm::frameLocal(t, idx, n, index);
  if (!name) return nullptr;
  vm::syncOpenUpvalueAt(t, index);
  pushMayGC(L, t->stack[index]);
  return name;
}

LUA_API const char* lua_setlocal(lua_State* L, const lua_Debug* ar, int n) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  int idx = frameOfToken(ar);
  uint32_t index = 0;
  const char* name = idx >= 0 && uint32_t(idx) < t->frameCount ? vm::frameLocal(t, idx, n, index) : nullptr;
  if (name) {
    vm::markStackDirty(t);
    t->stack[index] = t->stack[t->top - 1];
    vm::syncOpenUpvalueAt(t, index);
  }
  t->top--;
  return name;
}

namespace {

// Upvalue n of the function at funcindex: its cell and name, or false.
bool upvalueOf(lua_State* L, int funcindex, int n, Value*& slot, const char*& name, gc::Object*& holder) {
  Value f = valueAt(L, funcindex);
  if (f.isLuaClosure()) {
    vm::LuaClosure* c = f.asLuaClosure();
    if (n < 1 || uint32_t(n) > c->numUpvalues) return false;
    vm::Upvalue* uv = c->upvalues[n - 1];
    slot = &uv->cell;
    holder = vm::asGc(uv);
    const auto& ups = c->proto->data->upvalues;
    name = size_t(n - 1) < ups.size() && !ups[n - 1].name.empty() ? ups[n - 1].name.c_str() : "(no name)";
    return true;
  }
  if (f.tag == Tag::NativeClosure) {
    vm::NativeClosure* c = f.asNativeClosure();
    if (n < 1 || uint32_t(n) > c->numUpvalues) return false;
    slot = &c->upvalues[n - 1];
    holder = vm::asGc(c);
    name = "";
    return true;
  }
  return false;
}

}  // namespace

LUA_API const char* lua_getupvalue(lua_State* L, int funcindex, int n) {
  API_ENTRY(L);
  Value* slot;
  const char* name;
  gc::Object* holder;
  if (!upvalueOf(L, funcindex, n, slot, name, holder)) return nullptr;
  pushMayGC(L, vm::loadSlot(*slot));
  return name;
}

LUA_API const char* lua_setupvalue(lua_State* L, int funcindex, int n) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  Value* slot;
  const char* name;
  gc::Object* holder;
  if (!upvalueOf(L, funcindex, n, slot, name, holder)) return nullptr;
  Value v = t->stack[t->top - 1];
  Value f = valueAt(L, funcindex);
  if (f.isLuaClosure()) {
    vm::storeUpvalue(t, f.asLuaClosure()->upvalues[n - 1], v);
  } else {
    vm::storeValue(holder, *slot, v);
  }
  t->top--;
  return name;
}

LUA_API void* lua_upvalueid(lua_State* L, int fidx, int n) {
  API_ENTRY(L);
  Value f = valueAt(L, fidx);
  // Objects move: an upvalue's identity is its identity hash (a Lua upvalue object's, or
  // the C closure's with the index), never its address.
  if (f.isLuaClosure()) {
    vm::LuaClosure* c = f.asLuaClosure();
    if (n < 1 || uint32_t(n) > c->numUpvalues) return nullptr;
    return reinterpret_cast<void*>(uintptr_t(c->upvalues[n - 1]->header.hash) + 1);
  }
  if (f.tag == Tag::NativeClosure) {
    vm::NativeClosure* c = f.asNativeClosure();
    if (n < 1 || uint32_t(n) > c->numUpvalues) return nullptr;
    return reinterpret_cast<void*>((uintptr_t(c->header.hash) << 8 | uintptr_t(n)) + (uintptr_t(1) << 40));
  }
  return nullptr;
}

LUA_API void lua_upvaluejoin(lua_State* L, int fidx1, int n1, int fidx2, int n2) {
  API_ENTRY(L);
  Value f1 = valueAt(L, fidx1);
  Value f2 = valueAt(L, fidx2);
  if (!f1.isLuaClosure() || !f2.isLuaClosure()) raiseMessageMayGC(L, "Lua function expected");
  vm::LuaClosure* c1 = f1.asLuaClosure();
  vm::LuaClosure* c2 = f2.asLuaClosure();
  if (n1 < 1 || uint32_t(n1) > c1->numUpvalues || n2 < 1 || uint32_t(n2) > c2->numUpvalues) {
    raiseMessageMayGC(L, "invalid upvalue index");
  }
  vm::storeRef(c1, c1->upvalues[n1 - 1], c2->upvalues[n2 - 1]);
}

// ---- Hooks ----

namespace {

// A C hook runs as a C closure (the VM's hook value) with the hook in its upvalue; the
// VM calls it with (event, line) and it hands the C hook a lua_Debug of the hooked frame,
// the one below its own.
int runHook(lua_State* L) {
  auto hook = reinterpret_cast<lua_Hook>(lua_touserdata(L, lua_upvalueindex(1)));
  const char* event = lua_tostring(L, 1);
  lua_Debug ar{};
  ar.event = std::strcmp(event, "call") == 0        ? LUA_HOOKCALL
             : std::strcmp(event, "return") == 0    ? LUA_HOOKRET
             : std::strcmp(event, "line") == 0      ? LUA_HOOKLINE
             : std::strcmp(event, "count") == 0     ? LUA_HOOKCOUNT
                                                    : LUA_HOOKTAILCALL;
  ar.currentline = lua_isinteger(L, 2) ? int(lua_tointeger(L, 2)) : -1;
  vm::ThreadData* t = threadOf(L);
  ar.i_ci = frameToken(t->frameCount >= 2 ? t->frameCount - 2 : 0);
  lua_settop(L, 0);
  hook(L, &ar);
  return 0;
}

}  // namespace

LUA_API void lua_sethook(lua_State* L, lua_Hook func, int mask, int count) {
  API_ENTRY(L);
  vm::ThreadData* t = threadOf(L);
  if (!func || mask == 0) {
    t->hookMask = 0;
    if (t->rare) {
      t->rare->hook = Value::nil();
      t->rare->hookCount = 0;
      t->rare->hookCounter = 0;
    }
    return;
  }
  vm::ThreadRare* rare = vm::makeThreadRare(t);
  if (!rare) raiseMemory(L);
  lua_pushlightuserdata(L, reinterpret_cast<void*>(func));
  lua_pushcclosure(L, runHook, 1);
  Value closure = t->stack[t->top - 1];
  t->top--;
  uint8_t m = uint8_t(mask & (LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE));
  if (count > 0 && (mask & LUA_MASKCOUNT)) m |= vm::kHookMaskCount;
  vm::markStackDirty(t);
  rare->hook = closure;
  t->hookMask = m;
  rare->hookCount = count;
  rare->hookCounter = count;
}

LUA_API lua_Hook lua_gethook(lua_State* L) {
  const vm::ThreadRare* rare = threadOf(L)->rare;
  Value h = rare ? rare->hook : Value::nil();
  if (h.tag != Tag::NativeClosure || h.asNativeClosure()->cfunction != reinterpret_cast<void (*)()>(runHook)) {
    return nullptr;
  }
  return reinterpret_cast<lua_Hook>(vm::loadSlot(h.asNativeClosure()->upvalues[0]).u.p);
}

LUA_API int lua_gethookmask(lua_State* L) { return threadOf(L)->hookMask; }
LUA_API int lua_gethookcount(lua_State* L) {
  const vm::ThreadRare* rare = threadOf(L)->rare;
  return rare ? rare->hookCount : 0;
}
// Lua 5.4.8 ignores the limit too and returns LUAI_MAXCCALLS.
LUA_API int lua_setcstacklimit(lua_State*, unsigned int) { return 200; }
