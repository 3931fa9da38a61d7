// Loading compiled prototypes into the heap, and the function/userdata constructors.
//
// GC safety: nothing here reaches a safepoint, and allocation never collects, so the
// raw Proto*/String* pointers held while a tree is built stay valid throughout.
#include "vm/proto.h"

#include <atomic>
#include <new>
#include <string_view>
#include <unordered_map>

#include "vm/state.h"
#include "vm/string.h"

namespace weft::vm {

namespace {

// Proto::uid's source: any thread may load a chunk. Relaxed: only distinctness matters.
std::atomic<uint64_t> gNextProtoUid{1};

template <typename T>
T* allocateObject(State& state, Kind kind, size_t bytes) {
  return reinterpret_cast<T*>(state.mutator().allocate(uint8_t(kind), bytes));
}

// The long string constants of one chunk, by content: Lua's compiler anchors each string
// of a chunk once, so equal long constants anywhere in the chunk are one object (their
// identity shows through string.format("%p")). Short strings are interned anyway.
using LongConstants = std::unordered_map<std::string_view, String*>;

String* longConstant(State& state, const std::string& bytes, LongConstants& shared) {
  auto it = shared.find(bytes);
  if (it != shared.end()) return it->second;
  String* s = newString(state, bytes);
  if (s) shared.emplace(std::string_view(bytes), s);
  return s;
}

Value constantValue(State& state, const frontend::Constant& c, LongConstants& shared, bool& ok) {
  using K = frontend::Constant::Kind;
  switch (c.kind) {
    case K::Nil: return Value::nil();
    case K::False: return Value::boolean(false);
    case K::True: return Value::boolean(true);
    case K::Integer: return Value::integer(c.integer);
    case K::Float: return Value::number(c.number);
    case K::String: {
      String* s = c.string.size() > kMaxShortString ? longConstant(state, c.string, shared)
                                                     : newString(state, c.string);
      ok = s != nullptr;
      return s ? Value::string(s) : Value::nil();
    }
  }
  return Value::nil();
}

// Builds the Proto of `data`. A nested Proto's data belongs to the tree of `root`; the
// root Proto takes the tree from `owner` as soon as it exists and is registered as
// external before anything else can fail, so a partly built tree is freed by the
// collector like any dead Proto. `shared` holds the tree's long string constants so far
// (keys point into the tree's ProtoData, which lives as long as the tree).
Proto* buildProto(State& state, frontend::ProtoData* data, Proto* root, String* parentSource,
                  LongConstants& shared, std::unique_ptr<frontend::ProtoData>* owner) {
  auto* p = allocateObject<Proto>(state, Kind::Proto, sizeof(Proto));
  if (!p) return nullptr;
  p->data = data;
  if (owner) owner->release();
  storeRef(p, p->root, root);
  state.mutator().registerExternal(asGc(p));
  p->code = data->code.data();
  p->codeSize = uint32_t(data->code.size());
  p->numUpvalues = uint16_t(data->upvalues.size());
  p->numParams = data->numParams;
  p->isVararg = data->isVararg ? 1 : 0;
  p->maxStackSize = data->maxStackSize;
  p->uid = gNextProtoUid.fetch_add(1, std::memory_order_relaxed);

  String* source = parentSource && parentSource->view() == data->source ? parentSource
                                                                         : newString(state, data->source);
  if (!source) return nullptr;
  storeRef(p, p->source, source);

  size_t nk = data->constants.size();
  if (nk) {
    p->constants = new (std::nothrow) Value[nk];
    if (!p->constants) return nullptr;
    for (size_t i = 0; i < nk; ++i) p->constants[i] = Value::nil();
    p->numConstants = uint32_t(nk);
    for (size_t i = 0; i < nk; ++i) {
      bool ok = true;
      Value v = constantValue(state, data->constants[i], shared, ok);
      if (!ok) return nullptr;
      storeValue(p, p->constants[i], v);
    }
  }
  size_t np = data->protos.size();
  if (np) {
    p->protos = new (std::nothrow) Proto*[np]();
    if (!p->protos) return nullptr;
    p->numProtos = uint32_t(np);
    Proto* treeRoot = root ? root : p;
    for (size_t i = 0; i < np; ++i) {
      Proto* child = buildProto(state, data->protos[i].get(), treeRoot, source, shared, nullptr);
      if (!child) return nullptr;
      storeRef(p, p->protos[i], child);
    }
  }
  return p;
}

}  // namespace

Proto* loadProto(State& state, std::unique_ptr<frontend::ProtoData> data) {
  if (!data) return nullptr;
  frontend::ProtoData* tree = data.get();
  LongConstants shared;
  return buildProto(state, tree, nullptr, nullptr, shared, &data);
}

LuaClosure* newLuaClosure(State& state, Proto* proto, uint32_t nup) {
  auto* c = allocateObject<LuaClosure>(state, Kind::LuaClosure, luaClosureSize(nup));
  if (!c) return nullptr;
  storeRef(c, c->proto, proto);
  c->numUpvalues = nup;
  return c;
}

NativeClosure* newNativeClosure(State& state, NativeFn fn, const char* name, uint32_t nup) {
  auto* c = allocateObject<NativeClosure>(state, Kind::NativeClosure, nativeClosureSize(nup));
  if (!c) return nullptr;
  c->fn = fn;
  c->name = name;
  c->numUpvalues = nup;  // zero-filled upvalues are nil (Tag::Nil == 0)
  return c;
}

Upvalue* newUpvalueClosed(State& state, const Value& value) {
  auto* u = allocateObject<Upvalue>(state, Kind::Upvalue, sizeof(Upvalue));
  if (!u) return nullptr;
  storeValue(u, u->cell, value);
  return u;
}

// Every userdata is non-moving (gc-v2.md "Pinning and non-moving objects"): the C API
// hands out its payload's address for as long as it lives.
Userdata* newUserdata(State& state, size_t size, uint32_t userValues) {
  if (size > (size_t(1) << 40) || userValues > kMaxUserValues) return nullptr;
  auto* u = reinterpret_cast<Userdata*>(
      state.mutator().allocateNonMoving(uint8_t(Kind::Userdata), userdataSize(size, userValues)));
  if (!u) return nullptr;
  u->size = size;
  u->userValues = userValues;
  u->release = nullptr;
  return u;
}

Userdata* newHostUserdata(State& state, size_t size, UserdataRelease release) {
  Userdata* u = newUserdata(state, size, 0);
  if (!u) return nullptr;
  u->release = release;
  state.mutator().registerExternal(asGc(u));
  return u;
}

}  // namespace weft::vm
