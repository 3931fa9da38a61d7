// The host stack interface (vm/host.h) over the main thread, and the standard state.
#include "vm/host.h"

#include "vm/debug.h"
#include "vm/interp.h"
#include "vm/lib/libs.h"
#include "vm/meta.h"
#include "vm/string.h"
#include "vm/table.h"
#include "vm/thread.h"

namespace weft::vm {


std::unique_ptr<State> newStandardState(const StateOptions& options) {
  return newStandardState(options, false);
}

std::unique_ptr<State> newStandardState(const StateOptions& options, bool ignoreEnvironment) {
  auto state = std::make_unique<State>(options);
  if (!state->initStatus().isOk()) return nullptr;
  currentThread(*state);
  if (ignoreEnvironment) {
    // lua.c's registry.LUA_NOENV: the package library reads it while opening.
    String* key = newString(*state, "LUA_NOENV");
    if (!key || !tableSetStr(*state, state->registry, key, Value::boolean(true)).isOk()) return nullptr;
  }
  Status (*const openers[])(State&) = {openBaseLib, openPackageLib, openCoroutineLib, openTableLib, openIoLib,
                                       openOsLib,   openStringLib,  openMathLib,      openUtf8Lib, openDebugLib};
  for (auto opener : openers) {
    if (!opener(*state).isOk()) return nullptr;
  }
  return state;
}

namespace {

ThreadData* mainData(State& S) { return currentThread(S)->isMain ? currentThread(S) : S.mainThread->data; }

// Slot 0 of the main thread is reserved (errFunc 0 means "no handler"), so host index i
// is stack slot i.
uint32_t absIndex(ThreadData* t, int index) {
  if (index > 0) return uint32_t(index);
  return uint32_t(int(t->top) + index);
}

// lua.c's message handler: a traceback appended to string messages.
NativeResult hostMessageHandler(CallContext& cx) {
  Value v = cx.arg(1);
  State& S = cx.state();
  ThreadData* t = cx.threadData();
  std::string msg;
  if (v.isString() || v.isNumber()) {
    msg = defaultToString(S, v);
  } else {
    Value tm = metamethodOf(S, v, Meta::ToString);
    if (!tm.isNil()) {
      String* s;
      Status st = cx.toStringMayGC(v, s);
      if (st.isOk()) {
        cx.push(Value::string(s));
        return cx.results(1);
      }
    }
    msg = "(error object is a " + typeNameWithMeta(S, v) + " value)";
  }
  std::string tb = traceback(S, t, msg, 1, true);
  String* s = cx.newString(tb);
  if (!s) return cx.memoryError();
  cx.push(Value::string(s));
  return cx.results(1);
}

}  // namespace

HostStack::HostStack(State& state) : state_(state) {
  ThreadData* t = currentThread(state_);
  if (t->top == 0) {
    t->stack[0] = Value::nil();
    t->top = 1;
  }
}

int HostStack::top() const { return int(state_.mainThread->data->top) - 1; }

void HostStack::setTop(int n) {
  ThreadData* t = state_.mainThread->data;
  uint32_t nt = n >= 0 ? uint32_t(n) + 1 : uint32_t(int(t->top) + n + 1);
  if (nt > t->top) {
    if (!ensureStackSlots(t, uint64_t(nt) + kMinNativeStack)) return;
    for (uint32_t j = t->top; j < nt; j++) t->stack[j] = Value::nil();
  }
  t->top = nt;
}

static void hostPush(State& S, const Value& v) {
  ThreadData* t = S.mainThread->data;
  if (!ensureStackSlots(t, uint64_t(t->top) + 1 + kMinNativeStack)) return;
  t->stack[t->top++] = v;
}

void HostStack::pushNil() { hostPush(state_, Value::nil()); }
void HostStack::pushInteger(int64_t i) { hostPush(state_, Value::integer(i)); }
void HostStack::pushNumber(double n) { hostPush(state_, Value::number(n)); }
void HostStack::pushBoolean(bool b) { hostPush(state_, Value::boolean(b)); }
bool HostStack::pushString(std::string_view s) {
  String* str = newString(state_, s);
  if (!str) return false;
  hostPush(state_, Value::string(str));
  return true;
}
void HostStack::pushValue(int index) { hostPush(state_, at(index)); }

bool HostStack::pushGlobal(std::string_view name) {
  String* key = newString(state_, name);
  if (!key) return false;
  hostPush(state_, tableGetStr(state_.globals, key));
  return true;
}

bool HostStack::setGlobal(std::string_view name) {
  ThreadData* t = state_.mainThread->data;
  String* key = newString(state_, name);
  if (!key || t->top <= 1) return false;
  Value v = t->stack[--t->top];
  return tableSetStr(state_, state_.globals, key, v).isOk();
}

bool HostStack::newTable() {
  Table* h = vm::newTable(state_);
  if (!h) return false;
  hostPush(state_, Value::table(h));
  return true;
}

bool HostStack::rawSetInt(int tableIndex, int64_t key) {
  ThreadData* t = state_.mainThread->data;
  Value tv = at(tableIndex);
  if (!tv.isTable() || t->top <= 1) return false;
  Value v = t->stack[--t->top];
  return tableSetInt(state_, tv.asTable(), key, v).isOk();
}

Value HostStack::at(int index) const {
  ThreadData* t = state_.mainThread->data;
  uint32_t i = absIndex(t, index);
  return i < t->top ? t->stack[i] : Value::nil();
}

bool HostStack::isNil(int index) const { return at(index).isNil(); }

Status HostStack::loadMayGC(std::string_view chunk, std::string_view chunkName, std::string_view mode) {
  Value fn;
  std::string err;
  Status st = loadChunk(state_, chunk, chunkName, mode, fn, err);
  if (!st.isOk()) {
    if (!pushString(err)) pushNil();
    return st;
  }
  hostPush(state_, fn);
  return st;
}

Status HostStack::pcallMayGC(int nargs, int nresults, bool withTraceback) {
  ThreadData* t = mainData(state_);
  uint32_t func = t->top - uint32_t(nargs) - 1;
  uint32_t savedErrFunc = t->errFunc;
  uint32_t callAt = func;
  if (withTraceback) {
    if (!ensureStackSlots(t, uint64_t(t->top) + 1 + kMinNativeStack)) return Status(StatusCode::kMemoryError);
    for (uint32_t j = t->top; j > func; j--) t->stack[j] = t->stack[j - 1];
    t->stack[func] = Value::lightNative(hostMessageHandler);
    t->top++;
    t->errFunc = func;
    callAt = func + 1;
  }
  // Not vm::pcallMayGC: it hides outer handlers (pcall semantics), and the handler
  // installed above must run at the error point to see the frames for the traceback.
  uint32_t savedFrames = t->frameCount;
  Status st = vm::callMayGC(state_, t, callAt, nresults);
  if (!st.isOk()) {
    st = unwindForErrorMayGC(state_, t, savedFrames, callAt, st);
    t->stack[callAt] = t->error;
    t->top = callAt + 1;
  }
  t->errFunc = savedErrFunc;
  if (withTraceback) {
    for (uint32_t j = func; j + 1 < t->top; j++) t->stack[j] = t->stack[j + 1];
    t->top--;
  }
  return st;
}

Status HostStack::toStringMayGC(int index, std::string& out) {
  String* s;
  Status st = vm::toStringMayGC(state_, mainData(state_), at(index), s);
  if (st.isOk()) out = std::string(s->view());
  return st;
}

void HostStack::closeMayGC() {
  ThreadData* t = mainData(state_);
  closeUpvalues(t, 0);
  Status st = closeTbcMayGC(state_, t, 0, Status::ok());
  (void)st;
  state_.heap().queueAllFinalizers();
  runFinalizersMayGC(state_, t);
}

void requestInterrupt(State& state) {
  state.interruptPending.store(true, std::memory_order_relaxed);
  if (ThreadData* t = state.mainRunning()) __atomic_store_n(&t->budget, -1, __ATOMIC_RELAXED);
}

}  // namespace weft::vm
