// The native calling convention (vm/api.h): CallContext, library registration, type names.
#include "vm/api.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "vm/debug.h"
#include "vm/interp.h"
#include "vm/meta.h"
#include "vm/number.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

CallContext::CallContext(State& state, Thread& thread, uint32_t func, uint32_t argCount)
    : state_(state), t_(thread.data), func_(func), argCount_(argCount) {}

Thread* CallContext::threadSelf() const { return t_->self; }

Value CallContext::callee() const { return t_->stack[func_]; }

Value CallContext::upvalue(uint32_t i) const {
  Value c = callee();
  if (c.tag != Tag::NativeClosure) return Value::nil();
  NativeClosure* nc = c.asNativeClosure();
  return i < nc->numUpvalues ? loadSlot(nc->upvalues[i]) : Value::nil();
}

void CallContext::setUpvalue(uint32_t i, const Value& v) {
  Value c = callee();
  if (c.tag != Tag::NativeClosure) return;
  NativeClosure* nc = c.asNativeClosure();
  if (i < nc->numUpvalues) storeValue(nc, nc->upvalues[i], v);
}

bool CallContext::pushSlow(const Value& v) {
  if (!ensureStackSlots(t_, uint64_t(t_->top) + 1 + kMinNativeStack)) return false;
  t_->stack[t_->top++] = v;
  return true;
}

bool CallContext::ensureStack(uint32_t n) { return ensureStackSlots(t_, uint64_t(t_->top) + n + kExtraStack); }

uint32_t CallContext::top() const { return t_->top; }

Value CallContext::at(uint32_t stackIndex) const {
  return stackIndex < t_->top ? t_->stack[stackIndex] : Value::nil();
}

void CallContext::setAt(uint32_t stackIndex, const Value& v) {
  if (stackIndex < t_->stackSize) t_->stack[stackIndex] = v;
}

void CallContext::setTop(uint32_t stackIndex) {
  if (stackIndex > t_->top) {
    if (!ensureStackSlots(t_, uint64_t(stackIndex) + kExtraStack)) return;
    for (uint32_t j = t_->top; j < stackIndex; j++) t_->stack[j] = Value::nil();
  }
  t_->top = stackIndex;
}

NativeResult CallContext::raise(const Value& v) {
  Status st = raiseValueMayGC(state_, t_, v);
  pending_ = NativeResult{0, st.code()};
  return pending_;
}

NativeResult CallContext::error(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::string msg = wherePrefix(t_, 1);
  if (n >= int(sizeof buf)) {
    std::string big(size_t(n) + 1, '\0');
    va_start(ap, fmt);
    std::vsnprintf(big.data(), big.size(), fmt, ap);
    va_end(ap);
    big.resize(size_t(n));
    msg += big;
  } else if (n > 0) {
    msg.append(buf, size_t(n));
  }
  String* s = vm::newString(state_, msg);
  if (!s) return memoryError();
  return raise(Value::string(s));
}

NativeResult CallContext::argError(uint32_t i, std::string_view message) {
  // The frame of this native: the topmost frame whose function slot is ours.
  int idx = int(t_->frameCount) - 1;
  while (idx >= 0 && t_->frames[idx].func != func_) idx--;
  std::string name;
  const char* kind = idx >= 0 ? frameFunctionName(t_, uint32_t(idx), name) : nullptr;
  if (kind && std::strcmp(kind, "method") == 0) {
    i--;
    if (i == 0) return error("calling '%s' on bad self (%.*s)", name.c_str(), int(message.size()), message.data());
  }
  if (!kind) {
    name = globalFunctionName(state_, callee());
    if (name.empty()) name = "?";
  }
  return error("bad argument #%u to '%s' (%.*s)", i, name.c_str(), int(message.size()), message.data());
}

NativeResult CallContext::typeError(uint32_t i, std::string_view expected) {
  std::string got;
  if (!hasArg(i)) {
    got = "no value";
  } else {
    Value v = arg(i);
    Value name = metaField(state_, metatableOf(state_, v), Meta::Name);
    if (name.isString()) got = std::string(name.asString()->view());
    else if (v.tag == Tag::LightUserdata) got = "light userdata";
    else got = typeName(v);
  }
  std::string msg = std::string(expected) + " expected, got " + got;
  return argError(i, msg);
}

NativeResult CallContext::memoryError() {
  Status st = memoryErrorStatus(state_, t_);
  pending_ = NativeResult{0, st.code()};
  return pending_;
}

NativeResult CallContext::stackOverflow() {
  Status st = stackOverflowMayGC(state_, t_);
  pending_ = NativeResult{0, st.code()};
  return pending_;
}

NativeResult CallContext::yield(int32_t n) {
  // Lua raises these inside yield itself: no position.
  const char* why = t_->isMain || t_->taskRoot ? "attempt to yield from outside a coroutine"
                    : t_->nny > 0 ? "attempt to yield across a C-call boundary" : nullptr;
  if (why) {
    String* s = vm::newString(state_, why);
    if (!s) return memoryError();
    return raise(Value::string(s));
  }
  t_->frame().k = nullptr;
  return NativeResult{n, StatusCode::kYield};
}

NativeResult CallContext::yieldK(int32_t n, intptr_t ctx, NativeK k) {
  NativeResult r = yield(n);
  if (r.status == StatusCode::kYield) {
    t_->frame().k = k;
    t_->frame().ctx = ctx;
  }
  return r;
}

namespace {

// The continuation of a native that ran a BlockingJob: its panic, or its finish.
NativeResult finishBlockingMayGC(CallContext& cx, StatusCode, intptr_t ctx) {
  auto* job = reinterpret_cast<BlockingJob*>(ctx);
  if (!job->panic.empty()) return cx.error("blocking call failed: %s", job->panic.c_str());
  return job->finishMayGC(cx);
}

}  // namespace

void runJobIsolated(BlockingJob& job) {
  try {
    job.run();
  } catch (const std::exception& e) {
    job.panic = *e.what() ? e.what() : "exception";
  } catch (...) {
    job.panic = "unknown exception";
  }
}

// The runtime keeps a submitted job alive until the task's next job or its end (the
// continuation reads it through ctx); here the caller's reference does.
NativeResult runBlockingMayGC(CallContext& cx, std::shared_ptr<BlockingJob> job) {
  State& S = cx.state();
  auto ctx = reinterpret_cast<intptr_t>(job.get());
  if (S.blockingSubmit && S.blockingSubmit(cx, job)) {
    CallFrame& f = cx.threadData()->frame();
    f.k = finishBlockingMayGC;
    f.ctx = ctx;
    return NativeResult{0, StatusCode::kYield};
  }
  enterOsWait(S);
  runJobIsolated(*job);
  if (!leaveOsWait(S).isOk()) return NativeResult{0, StatusCode::kFatal};
  return finishBlockingMayGC(cx, StatusCode::kOk, ctx);
}

NativeResult CallContext::callK(uint32_t func, int32_t nargs, int32_t nresults, intptr_t ctx, NativeK k) {
  t_->top = func + 1 + uint32_t(nargs);
  Status st = callKMayGC(state_, t_, func, nresults, k, ctx);
  if (st.isOk()) return k(*this, StatusCode::kOk, ctx);
  return NativeResult{st.code() == StatusCode::kYield ? kYieldedInCallee : 0, st.code()};
}

NativeResult CallContext::pcallK(uint32_t func, int32_t nargs, int32_t nresults, uint32_t errFunc, intptr_t ctx,
                                 NativeK k) {
  t_->top = func + 1 + uint32_t(nargs);
  Status st = pcallKMayGC(state_, t_, func, nresults, errFunc, k, ctx);
  if (st.code() == StatusCode::kYield) return NativeResult{kYieldedInCallee, st.code()};
  if (st.code() == StatusCode::kFatal) return NativeResult{0, st.code()};
  return k(*this, st.code(), ctx);
}

bool CallContext::checkIntegerSlow(uint32_t i, int64_t& out) {
  Value v = arg(i);
  if (toInteger(v, out)) return true;
  Value num;
  if (toNumeric(v, num)) pending_ = argError(i, "number has no integer representation");
  else pending_ = typeError(i, "number");
  return false;
}

bool CallContext::checkNumberSlow(uint32_t i, double& out) {
  if (toNumber(arg(i), out)) return true;
  pending_ = typeError(i, "number");
  return false;
}

bool CallContext::checkStringSlow(uint32_t i, String*& out) {
  Value v = arg(i);
  if (v.isNumber()) {
    char buf[64];
    size_t n = formatNumber(v, buf);
    out = vm::newString(state_, std::string_view(buf, n));
    if (!out) {
      pending_ = memoryError();
      return false;
    }
    t_->stack[func_ + i] = Value::string(out);  // like lua_tolstring: converted in place
    return true;
  }
  pending_ = typeError(i, "string");
  return false;
}

bool CallContext::checkTableSlow(uint32_t i, Table*& out) {
  out = nullptr;
  pending_ = typeError(i, "table");
  return false;
}

bool CallContext::checkAny(uint32_t i) {
  if (hasArg(i)) return true;
  pending_ = argError(i, "value expected");
  return false;
}

bool CallContext::checkType(uint32_t i, Tag tag) {
  Value v = arg(i);
  bool ok = v.tag == tag || (tag == Tag::LuaClosure && v.isFunction()) || (tag == Tag::False && v.isBoolean());
  if (hasArg(i) && ok) return true;
  Value model = Value::nil();
  model.tag = tag;
  pending_ = typeError(i, typeName(model));
  return false;
}

bool CallContext::optInteger(uint32_t i, int64_t def, int64_t& out) {
  if (arg(i).isNil()) {
    out = def;
    return true;
  }
  return checkInteger(i, out);
}

bool CallContext::optNumber(uint32_t i, double def, double& out) {
  if (arg(i).isNil()) {
    out = def;
    return true;
  }
  return checkNumber(i, out);
}

bool CallContext::optString(uint32_t i, String* def, String*& out) {
  if (arg(i).isNil()) {
    out = def;
    return true;
  }
  return checkString(i, out);
}

String* CallContext::newString(std::string_view bytes) { return vm::newString(state_, bytes); }
Table* CallContext::newTable(uint32_t arrayHint, uint32_t hashHint) { return vm::newTable(state_, arrayHint, hashHint); }

Status CallContext::callMayGC(uint32_t func, int32_t nargs, int32_t nresults) {
  t_->top = func + 1 + uint32_t(nargs);
  return vm::callMayGC(state_, t_, func, nresults);
}

Status CallContext::protectedCallMayGC(uint32_t func, int32_t nargs, int32_t nresults) {
  t_->top = func + 1 + uint32_t(nargs);
  return vm::pcallMayGC(state_, t_, func, nresults);
}

Status CallContext::getMayGC(const Value& object, const Value& key, Value& out) {
  return indexMayGC(state_, t_, object, key, out);
}
Status CallContext::setMayGC(const Value& object, const Value& key, const Value& value) {
  return newIndexMayGC(state_, t_, object, key, value);
}
Status CallContext::lengthMayGC(const Value& object, Value& out) { return vm::lengthMayGC(state_, t_, object, out); }
Status CallContext::lessThanMayGC(const Value& a, const Value& b, bool& out) {
  return lessMayGC(state_, t_, a, b, Meta::Lt, out);
}
Status CallContext::equalsMayGC(const Value& a, const Value& b, bool& out) {
  return vm::equalsMayGC(state_, t_, a, b, out);
}
Status CallContext::toStringMayGC(const Value& v, String*& out) { return vm::toStringMayGC(state_, t_, v, out); }

std::string CallContext::functionName() const {
  int idx = int(t_->frameCount) - 1;
  while (idx >= 0 && t_->frames[idx].func != func_) idx--;
  std::string name;
  if (idx >= 0 && frameFunctionName(t_, uint32_t(idx), name)) return name;
  name = globalFunctionName(state_, callee());
  return name.empty() ? "?" : name;
}

Status openLibrary(State& state, const char* name, std::span<const LibEntry> entries, Table** out) {
  const Status noMemory(StatusCode::kMemoryError);
  Table* lib = newTable(state, 0, uint32_t(entries.size()));
  if (!lib) return noMemory;
  for (const LibEntry& e : entries) {
    String* key = newString(state, e.name);
    if (!key || !tableSetStr(state, lib, key, Value::lightNative(e.fn)).isOk()) return noMemory;
  }
  if (name) {
    String* key = newString(state, name);
    if (!key || !tableSetStr(state, state.globals, key, Value::table(lib)).isOk()) return noMemory;
    // package.loaded is the registry's _LOADED table (created here if needed).
    String* loadedKey = newString(state, "_LOADED");
    if (!loadedKey) return noMemory;
    Value loaded = tableGetStr(state.registry, loadedKey);
    if (!loaded.isTable()) {
      Table* l = newTable(state, 0, 16);
      if (!l || !tableSetStr(state, state.registry, loadedKey, Value::table(l)).isOk()) return noMemory;
      loaded = Value::table(l);
    }
    if (!tableSetStr(state, loaded.asTable(), key, Value::table(lib)).isOk()) return noMemory;
  }
  if (out) *out = lib;
  return Status::ok();
}

const char* typeName(const Value& v) { return kBasicTypeNames[int(basicType(v))]; }

}  // namespace weft::vm
