// The VM instance: heap, string table, registry, globals and the root source that
// makes the collector see the State's own references.
#include "vm/state.h"

#include "vm/jit.h"
#include "vm/thread.h"

#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

thread_local constinit ExecContext* tlsExecContext = nullptr;

namespace {

// Meta order (state.h): metaNames[i] is the event name of Meta(i).
constexpr const char* kMetaNames[] = {
    "__index", "__newindex", "__gc",  "__mode", "__len",  "__eq",     "__add",   "__sub",
    "__mul",   "__mod",      "__pow", "__div",  "__idiv", "__band",   "__bor",   "__bxor",
    "__shl",   "__shr",      "__unm", "__bnot", "__lt",   "__le",     "__concat", "__call",
    "__close", "__tostring", "__name", "__metatable", "__pairs",
};
static_assert(sizeof(kMetaNames) / sizeof(kMetaNames[0]) == size_t(Meta::kCount));

// Registry slots, as in Lua (LUA_RIDX_MAINTHREAD, LUA_RIDX_GLOBALS).
constexpr int64_t kRegistryMainThread = 1;
constexpr int64_t kRegistryGlobals = 2;

template <typename T>
void visitField(gc::Visitor& visitor, T*& field) {
  if (field) visitor.visit(reinterpret_cast<gc::Object*&>(field));
}

}  // namespace

class State::Roots final : public gc::RootSource {
 public:
  explicit Roots(State& state) : state_(state) {}
  void traceRoots(gc::Visitor& visitor) override {
    visitField(visitor, state_.registry);
    visitField(visitor, state_.globals);
    for (Table*& mt : state_.typeMetatables) visitField(visitor, mt);
    for (String*& name : state_.metaNames) visitField(visitor, name);
    for (String*& name : state_.typeNames) visitField(visitor, name);
    visitField(visitor, state_.memoryErrorMessage);
    visitField(visitor, state_.mainThread);
  }

 private:
  State& state_;
};

State::State(const StateOptions& options)
    : options_(options),
      jit_(options.jit.mode != JitMode::kOff ? std::make_unique<JitTier>(*this, options.jit) : nullptr),
      threadPool_(std::make_unique<ThreadPool>()),
      heap_(options.gc),
      mainContext_{this, &heap_.mainMutator(), nullptr, {}},
      strings_(std::make_unique<StringTable>()),
      hashSeed_(processHashSeed()),
      roots_(std::make_unique<Roots>(*this)) {
  registerObjectKinds(heap_);
  registerThreadKind(heap_);
  heap_.addWeakRootSource(strings_.get());
  heap_.addRootSource(roots_.get());
  initStatus_ = initialise();
}

// Allocation never collects, so the raw pointers below stay valid throughout.
Status State::initialise() {
  const Status noMemory(StatusCode::kMemoryError);
  for (size_t i = 0; i < size_t(Meta::kCount); ++i) {
    metaNames[i] = newString(*this, kMetaNames[i]);
    if (!metaNames[i]) return noMemory;
  }
  for (size_t i = 0; i < std::size(kBasicTypeNames); ++i) {
    typeNames[i] = newString(*this, kBasicTypeNames[i]);
    if (!typeNames[i]) return noMemory;
  }
  memoryErrorMessage = newString(*this, "not enough memory");
  registry = newTable(*this, 2, 0);
  globals = newTable(*this, 0, 64);
  if (!memoryErrorMessage || !registry || !globals) return noMemory;
  mainThread = newThread(*this);
  if (!mainThread) return noMemory;
  if (!tableSetInt(*this, registry, kRegistryMainThread, Value::thread(mainThread)).isOk() ||
      !tableSetInt(*this, registry, kRegistryGlobals, Value::table(globals)).isOk()) {
    return noMemory;
  }
  return Status::ok();
}

State::~State() {
  if (capiRelease) capiRelease(*this);
  threadPool_->flush(mainContext_);
  heap_.removeRootSource(roots_.get());
  heap_.removeWeakRootSource(strings_.get());
}

}  // namespace weft::vm
