// How the collector sizes and traces each VM object kind (gc/object.h TypeInfo).
//
// Tables and their parts: a table's ValueArray and NodeArray are separate heap objects
// (so they move with the collector like anything else), but they are marked
// kPartOwnedByTable and their own trace does nothing. The table's trace visits the part
// slots (which copies the parts) and then visits the parts' contents itself, because
// only the table knows whether it is weak: its metatable's "__mode", read at trace
// time (manual §2.5.4). The mode found is written into the parts' header.aux so that
// clearWeak and traceEphemeron, which the collector calls with the table only, know it.
// The same rule suits a future generational barrier: every store into a part names the
// table as holder, and re-tracing a remembered table re-visits its parts' contents.
//
// Weak entries: strings are values, not objects, for weakness (manual §2.5.4: only
// objects with an explicit construction are removed), so string keys and values of live
// entries are traced strongly, except that in a table weak in both a string key lives
// as long as its entry: it is traced only once its weak value is found live (the
// ephemeron fixpoint), as Lua marks it only then. A dead weak value becomes nil (the
// key stays, dead, as after an assignment of nil); a dead weak key becomes
// tableDeadKey() with a nil value, which keeps probe chains intact.
// Dead entries (nil value) of every table, weak or not, hold their collectable key
// weakly, as Lua's dead keys do: it is kept and updated while something else reaches it
// (so `next` continues from a key a traversal holds: table.h invariant 3), and becomes
// tableDeadKey() otherwise, so a key assigned nil does not keep its object alive.
//
// Writes made here (clearing entries, updating slots) happen inside a collection with
// the world stopped; they bypass the write barrier, which exists for mutator stores.
#include <algorithm>
#include <cstring>
#include <utility>

#include "gc/pass.h"
#include "vm/object.h"
#include "vm/jit.h"
#include "vm/state.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

namespace {

using gc::Object;
using gc::Visitor;

template <typename T>
inline Object*& slotOf(T*& field) {
  return reinterpret_cast<Object*&>(field);
}

inline void visitValue(Value& v, Visitor& visitor) {
  if (v.isCollectable()) visitor.visit(referenceSlot(v));
}

// During a collection an object may already have been copied: its old image's header
// then holds the new address (gc/object.h).
template <typename T>
inline const T* current(const T* p) {
  return reinterpret_cast<const T*>(gc::currentAddress(reinterpret_cast<Object*>(const_cast<T*>(p))));
}

// A reference another marker may be updating while this one reads it (weakMode, below):
// either address is good, since an old image keeps its body. Acquire: the marker that
// stored a copy's address did so with release, after copying (gc/marker.h).
template <typename T>
inline T* loadShared(T* const& field) {
  return __atomic_load_n(&field, __ATOMIC_ACQUIRE);
}

// A weak reference: a collectable value other than a string.
inline bool isWeakRef(const Value& v) { return v.isCollectable() && !v.isString(); }

// The weakness the metatable's raw "__mode" field asks for (kPartWeakKeys/Values). In a
// parallel major another marker may be tracing `mt` meanwhile, updating its part
// reference and the part's keys and values: those are read with loadShared, and each
// object read is followed to its current address (gc-v2.md "Parallel majors").
uint16_t weakMode(const Table* mt) {
  static const uint32_t modeHash = hashBytes("__mode", processHashSeed());
  const NodeArray* na = loadShared(mt->nodes);
  if (!na) return 0;
  na = current(na);
  uint32_t mask = na->capacity - 1;
  uint32_t i = modeHash & mask;
  for (uint32_t n = 0; n <= mask; ++n, i = (i + 1) & mask) {
    const Node& node = na->nodes[i];
    if (node.key.isNil()) return 0;
    if (!node.key.isString()) continue;
    const auto* key = reinterpret_cast<const String*>(current(loadShared(node.key.u.obj)));
    if (key->length != 6 || std::memcmp(key->data, "__mode", 6) != 0) continue;
    if (!node.value.isString()) return 0;
    const auto* mode = reinterpret_cast<const String*>(current(loadShared(node.value.u.obj)));
    uint16_t bits = 0;
    if (std::memchr(mode->data, 'k', mode->length)) bits |= kPartWeakKeys;
    if (std::memchr(mode->data, 'v', mode->length)) bits |= kPartWeakValues;
    return bits;
  }
  return 0;
}

// Atomic: in a parallel major another marker may read the part's header meanwhile
// (weakMode, or its own trace of the part, which a marker may get in a batch while the
// table's trace still runs: gc/marker.h). kPartOwnedByTable never changes.
template <typename Part>
void setPartAux(Part* part, uint16_t mode) {
  __atomic_store_n(&part->header.aux, uint16_t(kPartOwnedByTable | mode), __ATOMIC_RELAXED);
}

template <typename Part>
bool ownedByTable(const Part* part) {
  return __atomic_load_n(&part->header.aux, __ATOMIC_RELAXED) & kPartOwnedByTable;
}

uint16_t partMode(const Table* t) {
  if (t->nodes) return t->nodes->header.aux & (kPartWeakKeys | kPartWeakValues);
  if (t->array) return t->array->header.aux & (kPartWeakKeys | kPartWeakValues);
  return 0;
}

// ---- String ----

size_t stringSizeOf(const Object* obj) { return stringSize(reinterpret_cast<const String*>(obj)->length); }

// ---- Table ----

size_t tableSizeOf(const Object*) { return sizeof(Table); }

void traceArraySlots(ValueArray* a, uint32_t from, uint32_t to, bool weakValues, Visitor& visitor) {
  for (uint32_t i = from; i < to; ++i) {
    if (!weakValues || !isWeakRef(a->data[i])) visitValue(a->data[i], visitor);
  }
}

// Whether slots [from, to) refer to a young object: after a minor's trace, the
// survivors it kept young (gc-v2.md "Survivor age").
bool holdsYoung(const ValueArray* a, uint32_t from, uint32_t to) {
  for (uint32_t i = from; i < to; ++i) {
    if (a->data[i].isCollectable() && !(gc::loadGcBits(a->data[i].u.obj) & gc::kBitOld)) return true;
  }
  return false;
}

// A large part a minor promoted in place (gc-v2.md "Survivor age"), traced whole: the
// minor that next traces its table by cards must find the young values this one left
// (its survivors). A young table's (a survivor itself): every card, since the stores
// into the part until the table is promoted mark none (the barrier sees a young
// holder). An old table's: the cards that hold survivors.
// VmGenerational.ASurvivingTablesLargePartKeepsItsYoungValues,
// VmGenerational.APromotedTablesNewLargePartKeepsItsSurvivors.
void coverPromotedPart(Object* table, ValueArray* a, uint32_t used) {
  uint8_t* cards = valueArrayCards(a);
  uint32_t count = valueArrayCardCount(a->capacity);
  if (!(gc::loadGcBits(table) & gc::kBitOld)) {
    std::memset(cards, 1, count);
    return;
  }
  for (uint32_t c = 0; c < count && c * kCardSlots < used; ++c) {
    uint32_t to = (c + 1) * kCardSlots < used ? (c + 1) * kCardSlots : used;
    if (holdsYoung(a, c * kCardSlots, to)) cards[c] = 1;
  }
}

// An old table's old array part with cards (gc-v2.md "Cards"): a minor traces only the
// dirty cards' slots (the barrier set a card for every young value stored there since
// the last collection) and cleans them, except those where it left survivors, which
// the minor that promotes them must trace; a major traces every slot and cleans every
// card; verification traces every slot, telling the verifier which ones a minor would
// skip, so a young value in a clean card is reported (heap.h invariant 3).
void traceArrayByCards(ValueArray* a, uint32_t used, bool weakValues, Visitor& visitor) {
  gc::Pass pass = gc::passOf(visitor);
  uint8_t* cards = valueArrayCards(a);
  uint32_t count = valueArrayCardCount(a->capacity);
  for (uint32_t c = 0; c < count; ++c) {
    // A minor skips clean cards eight at a time (a million-slot part has 7,813 cards).
    if (pass == gc::Pass::kMinor && c % 8 == 0 && c + 8 <= count) {
      uint64_t word;
      std::memcpy(&word, cards + c, sizeof word);
      if (word == 0) {
        c += 7;
        continue;
      }
    }
    bool dirty = cards[c] != 0;
    uint32_t from = c * kCardSlots;
    uint32_t to = from + kCardSlots < used ? from + kCardSlots : used;
    if (pass == gc::Pass::kCheck) {
      if (!dirty) gc::setSkippedByMinor(visitor, true);
      traceArraySlots(a, from, to, weakValues, visitor);
      if (!dirty) gc::setSkippedByMinor(visitor, false);
      continue;
    }
    cards[c] = 0;
    if (dirty || pass == gc::Pass::kMajor) traceArraySlots(a, from, to, weakValues, visitor);
    if (dirty && pass == gc::Pass::kMinor && holdsYoung(a, from, to)) cards[c] = 1;
  }
}

void traceTable(Object* obj, Visitor& visitor) {
  auto* t = reinterpret_cast<Table*>(obj);
  uint16_t mode = 0;
  if (t->metatable) {
    visitor.visit(slotOf(t->metatable));
    mode = weakMode(t->metatable);
  }
  bool weakKeys = mode & kPartWeakKeys;
  bool weakValues = mode & kPartWeakValues;
  bool deadKeys = false;
  if (t->array) {
    // Decided before the visit, which may promote a young part: cards cover only what
    // an old table's old part received since the last collection.
    // loadGcBits: a parallel marker that lost the race to claim t may be failing its
    // compare-and-swap on t's header meanwhile (gc/marker.h).
    bool carded = valueArrayCardCount(t->array->capacity) && (gc::loadGcBits(obj) & gc::kBitOld) &&
                  (gc::loadGcBits(reinterpret_cast<Object*>(t->array)) & gc::kBitOld);
    visitor.visit(slotOf(t->array));
    ValueArray* a = t->array;
    setPartAux(a, mode);
    // Slots from arraySize on are nil (table.cpp); reading them would also map the
    // untouched pages of a doubled buffer, which the appends then fault in again.
    uint32_t used = t->arraySize < a->capacity ? t->arraySize : a->capacity;
    if (carded) {
      traceArrayByCards(a, used, weakValues, visitor);
    } else {
      traceArraySlots(a, 0, used, weakValues, visitor);
      if (valueArrayCardCount(a->capacity) && gc::passOf(visitor) == gc::Pass::kMinor &&
          (gc::loadGcBits(reinterpret_cast<Object*>(a)) & gc::kBitOld))
        coverPromotedPart(obj, a, used);
    }
  }
  if (t->nodes) {
    visitor.visit(slotOf(t->nodes));
    NodeArray* na = t->nodes;
    setPartAux(na, mode);
    for (uint32_t i = 0; i < na->capacity; ++i) {
      Node& node = na->nodes[i];
      if (node.key.isNil()) continue;
      if (node.value.isNil()) {
        deadKeys = deadKeys || node.key.isCollectable();  // decided by clearTableWeak
        continue;
      }
      bool keyStrong = !weakKeys || !isWeakRef(node.key);
      bool valueWeak = weakValues && isWeakRef(node.value);
      if (keyStrong) {
        if (!(weakKeys && valueWeak)) visitValue(node.key, visitor);  // else traceEphemeron
        if (!valueWeak) visitValue(node.value, visitor);
      } else if (weakValues && !valueWeak) {
        visitValue(node.value, visitor);  // a string value in a 'kv' table
      }
      // Otherwise (weak key, ephemeron value) traceEphemeron decides.
    }
  }
  // The flags choose the collector's lists, clearTableWeak reads the real mode from the
  // parts: a table with weak keys joins the ephemeron fixpoint (weak in both, for its
  // string keys: traceTableEphemeron), any other only the clearing phases (weak values,
  // or just dead entries' keys).
  if (mode || deadKeys) visitor.deferWeak(obj, weakKeys, !weakKeys);
}

// An incremental major's slices trace a strong table in parts (gc::TypeInfo::tracePart):
// position 1 + i is array slot i, kNodePosition + j node j. A weak table is traced whole
// (its parts are decided together by the collector's weak phases), as is one that became
// weak since its first part. A dead key is reported as traceTable reports it.
constexpr size_t kNodePosition = size_t(1) << 40;

size_t traceTablePart(Object* obj, Visitor& visitor, size_t from, size_t& budget) {
  auto* t = reinterpret_cast<Table*>(obj);
  if (t->metatable && weakMode(t->metatable)) {
    traceTable(obj, visitor);
    return 0;
  }
  if (from == 0) {
    if (t->metatable) visitor.visit(slotOf(t->metatable));
    if (t->array) {
      visitor.visit(slotOf(t->array));
      setPartAux(t->array, 0);
    }
    if (t->nodes) {
      visitor.visit(slotOf(t->nodes));
      setPartAux(t->nodes, 0);
    }
    from = 1;
  }
  if (from < kNodePosition) {
    ValueArray* a = t->array;
    size_t used = a ? std::min<size_t>(t->arraySize, a->capacity) : 0;
    size_t i = from - 1;
    size_t to = i < used ? i + std::min(used - i, budget) : i;
    if (i < to) traceArraySlots(a, uint32_t(i), uint32_t(to), false, visitor);
    budget -= to - i;
    if (to < used) return to + 1;
    from = kNodePosition;
  }
  NodeArray* na = t->nodes;
  size_t j = from - kNodePosition;
  bool deadKeys = false;
  for (; na && j < na->capacity && budget > 0; ++j, --budget) {
    Node& node = na->nodes[j];
    if (node.key.isNil()) continue;
    if (node.value.isNil()) {
      deadKeys = deadKeys || node.key.isCollectable();
      continue;
    }
    visitValue(node.key, visitor);
    visitValue(node.value, visitor);
  }
  if (deadKeys) visitor.deferWeak(obj, false, true);
  return na && j < na->capacity ? kNodePosition + j : 0;
}

// Called for every table with weak keys (traceTable reports them all as ephemerons).
// Weak keys only: the values of live keys. Weak in both: the string keys of live weak
// values (traceTable left them).
bool traceTableEphemeron(Object* obj, Visitor& visitor) {
  auto* t = reinterpret_cast<Table*>(obj);
  NodeArray* na = t->nodes;
  if (!na) return false;
  bool reached = false;
  if (partMode(t) & kPartWeakValues) {
    for (uint32_t i = 0; i < na->capacity; ++i) {
      Node& node = na->nodes[i];
      if (!node.key.isString() || !isWeakRef(node.value) || !visitor.isLive(node.value.u.obj)) continue;
      if (!visitor.isLive(node.key.u.obj)) reached = true;
      visitor.visit(referenceSlot(node.key));
    }
    return reached;
  }
  for (uint32_t i = 0; i < na->capacity; ++i) {
    Node& node = na->nodes[i];
    if (!isWeakRef(node.key) || !node.value.isCollectable()) continue;
    if (!visitor.isLive(node.key.u.obj)) continue;
    if (!visitor.isLive(node.value.u.obj)) reached = true;
    visitor.visit(referenceSlot(node.value));
  }
  return reached;
}

// The keys traceTable left (after resurrection only: a finalizer's object may reach
// them). A dead entry's key is kept while reached from elsewhere, else replaced, so no
// slot is left pointing to a dead object. In a table weak in both, the string keys of
// the entries that stay were reached through their values; visiting them again updates
// nothing, but lets the verifier (isLive always true) check them.
void clearDeadKeys(NodeArray* na, bool allWeak, Visitor& visitor) {
  for (uint32_t i = 0; na && i < na->capacity; ++i) {
    Node& node = na->nodes[i];
    if (!node.key.isCollectable()) continue;
    if (!node.value.isNil()) {
      if (allWeak && node.key.isString()) visitor.visit(referenceSlot(node.key));
      continue;
    }
    if (visitor.isLive(node.key.u.obj)) visitor.visit(referenceSlot(node.key));
    else node.key = tableDeadKey();
  }
}

void clearTableWeak(Object* obj, Visitor& visitor, int phase) {
  auto* t = reinterpret_cast<Table*>(obj);
  uint16_t mode = partMode(t);
  if ((phase & gc::kClearValues) && (mode & kPartWeakValues)) {
    if (ValueArray* a = t->array) {
      for (uint32_t i = 0; i < a->capacity; ++i) {
        Value& v = a->data[i];
        if (!isWeakRef(v)) continue;
        if (visitor.isLive(v.u.obj)) visitor.visit(referenceSlot(v));
        else v = Value::nil();
      }
    }
    if (NodeArray* na = t->nodes) {
      for (uint32_t i = 0; i < na->capacity; ++i) {
        Node& node = na->nodes[i];
        if (node.key.isNil() || !isWeakRef(node.value)) continue;
        if (visitor.isLive(node.value.u.obj)) visitor.visit(referenceSlot(node.value));
        else node.value = Value::nil();
      }
    }
  }
  if ((phase & gc::kClearKeys) && (mode & kPartWeakKeys)) {
    NodeArray* na = t->nodes;
    for (uint32_t i = 0; na && i < na->capacity; ++i) {
      Node& node = na->nodes[i];
      if (!isWeakRef(node.key)) continue;
      if (!visitor.isLive(node.key.u.obj)) {
        node.key = tableDeadKey();
        node.value = Value::nil();
        continue;
      }
      visitor.visit(referenceSlot(node.key));
      if (node.value.isCollectable()) {
        // Reached by traceEphemeron; a value still dead here would be stale, so drop it.
        if (visitor.isLive(node.value.u.obj)) visitor.visit(referenceSlot(node.value));
        else node.value = Value::nil();
      }
    }
  }
  if (phase & gc::kClearKeys) {
    clearDeadKeys(t->nodes, (mode & kPartWeakKeys) && (mode & kPartWeakValues), visitor);
  }
}

// ---- ValueArray / NodeArray (not owned by a table: traced in full) ----

size_t valueArraySizeOf(const Object* obj) {
  return valueArraySize(reinterpret_cast<const ValueArray*>(obj)->capacity);
}

void traceValueArray(Object* obj, Visitor& visitor) {
  auto* a = reinterpret_cast<ValueArray*>(obj);
  if (ownedByTable(a)) return;
  for (uint32_t i = 0; i < a->capacity; ++i) visitValue(a->data[i], visitor);
}

size_t nodeArraySizeOf(const Object* obj) {
  return nodeArraySize(reinterpret_cast<const NodeArray*>(obj)->capacity);
}

void traceNodeArray(Object* obj, Visitor& visitor) {
  auto* na = reinterpret_cast<NodeArray*>(obj);
  if (ownedByTable(na)) return;
  for (uint32_t i = 0; i < na->capacity; ++i) {
    visitValue(na->nodes[i].key, visitor);
    visitValue(na->nodes[i].value, visitor);
  }
}

// ---- Closures, upvalues, userdata ----

size_t luaClosureSizeOf(const Object* obj) {
  return luaClosureSize(reinterpret_cast<const LuaClosure*>(obj)->numUpvalues);
}

void traceLuaClosure(Object* obj, Visitor& visitor) {
  auto* c = reinterpret_cast<LuaClosure*>(obj);
  if (c->proto) visitor.visit(slotOf(c->proto));
  for (uint32_t i = 0; i < c->numUpvalues; ++i) {
    if (c->upvalues[i]) visitor.visit(slotOf(c->upvalues[i]));
  }
}

size_t nativeClosureSizeOf(const Object* obj) {
  return nativeClosureSize(reinterpret_cast<const NativeClosure*>(obj)->numUpvalues);
}

void traceNativeClosure(Object* obj, Visitor& visitor) {
  auto* c = reinterpret_cast<NativeClosure*>(obj);
  for (uint32_t i = 0; i < c->numUpvalues; ++i) visitValue(c->upvalues[i], visitor);
}

size_t upvalueSizeOf(const Object*) { return sizeof(Upvalue); }

// An open upvalue keeps its thread alive: the variable's register lives in its stack.
// The shadow is traced too, so it stays equal to a register or cell that moved.
void traceUpvalue(Object* obj, Visitor& visitor) {
  auto* u = reinterpret_cast<Upvalue*>(obj);
  if (u->thread) visitor.visit(slotOf(u->thread));
  visitValue(u->cell, visitor);
  visitValue(u->shadow, visitor);
  if (u->nextOpen) visitor.visit(slotOf(u->nextOpen));
}

size_t userdataSizeOf(const Object* obj) {
  auto* u = reinterpret_cast<const Userdata*>(obj);
  return userdataSize(u->size, u->userValues);
}

size_t releaseUserdata(Object* obj) {
  auto* u = reinterpret_cast<Userdata*>(obj);
  UserdataRelease release = std::exchange(u->release, nullptr);
  return release ? release(u) : 0;
}

void traceUserdata(Object* obj, Visitor& visitor) {
  auto* u = reinterpret_cast<Userdata*>(obj);
  if (u->metatable) visitor.visit(slotOf(u->metatable));
  for (uint32_t i = 0; i < u->userValues; i++) visitValue(userValueSlot(u, i), visitor);
}

// ---- Proto ----

size_t protoSizeOf(const Object*) { return sizeof(Proto); }

void traceProto(Object* obj, Visitor& visitor) {
  auto* p = reinterpret_cast<Proto*>(obj);
  if (p->source) visitor.visit(slotOf(p->source));
  if (p->root) visitor.visit(slotOf(p->root));
  for (uint32_t i = 0; p->constants && i < p->numConstants; ++i) visitValue(p->constants[i], visitor);
  for (uint32_t i = 0; p->protos && i < p->numProtos; ++i) {
    if (p->protos[i]) visitor.visit(slotOf(p->protos[i]));
  }
}

size_t releaseProto(Object* obj) {
  auto* p = reinterpret_cast<Proto*>(obj);
  // No frame runs this code any more: a running frame keeps its closure, hence p, alive.
  if (p->jit) p->jit->tier->dropProtoRef(p->jit);
  p->jit = nullptr;
  delete[] p->jitProfile;
  p->jitProfile = nullptr;
  if (!p->root) delete p->data;
  delete[] p->constants;
  delete[] p->protos;
  p->data = nullptr;
  p->code = nullptr;
  p->constants = nullptr;
  p->protos = nullptr;
  p->numConstants = 0;
  p->numProtos = 0;
  p->codeSize = 0;
  return 0;  // compiled code is not counted in the pacing (it is made at load time)
}

}  // namespace

void registerObjectKinds(gc::Heap& heap) {
  auto reg = [&](Kind kind, const char* name, size_t fixed, size_t (*sizeOf)(const Object*),
                 void (*trace)(Object*, Visitor&)) {
    gc::TypeInfo info;
    info.name = name;
    info.fixedSize = fixed;
    info.sizeOf = sizeOf;
    info.trace = trace;
    if (kind == Kind::Table) {
      info.clearWeak = clearTableWeak;
      info.traceEphemeron = traceTableEphemeron;
      info.tracePart = traceTablePart;
    }
    info.writtenWhole = kind == Kind::String;  // its bytes are copied in as it is made
    if (kind == Kind::Proto) info.release = releaseProto;
    if (kind == Kind::Userdata) info.release = releaseUserdata;
    heap.registerType(uint8_t(kind), info);
  };
  reg(Kind::String, "string", 0, stringSizeOf, nullptr);
  reg(Kind::Table, "table", sizeof(Table), tableSizeOf, traceTable);
  reg(Kind::LuaClosure, "lua closure", 0, luaClosureSizeOf, traceLuaClosure);
  reg(Kind::NativeClosure, "native closure", 0, nativeClosureSizeOf, traceNativeClosure);
  reg(Kind::Userdata, "userdata", 0, userdataSizeOf, traceUserdata);
  reg(Kind::Proto, "proto", sizeof(Proto), protoSizeOf, traceProto);
  reg(Kind::Upvalue, "upvalue", sizeof(Upvalue), upvalueSizeOf, traceUpvalue);
  reg(Kind::ValueArray, "value array", 0, valueArraySizeOf, traceValueArray);
  reg(Kind::NodeArray, "node array", 0, nodeArraySizeOf, traceNodeArray);
}

}  // namespace weft::vm
