// The VM instance: the heap, the string table, the registry and globals, per-type
// metatables, and the threads (coroutines) that run Lua code. One State is shared by
// every thread of execution (tasks on several workers, scheduler issue); what belongs to
// one thread of execution lives in Thread (vm/thread.h).
//
// Fields are touched only by the thread that owns the State today; the scheduler issue
// documents per field which workers may touch it.
#pragma once

#include <atomic>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string_view>

#include "gc/heap.h"
#include "vm/jit_options.h"
#include "vm/object.h"
#include "weft/status.h"

namespace weft::vm {

class BlockingJob;
class JitTier;
class StringTable;
class ThreadPool;
struct Thread;
struct ThreadData;

// Names of the metamethod events, interned at start-up (State::metaName).
enum class Meta : uint8_t {
  Index, NewIndex, Gc, Mode, Len, Eq, Add, Sub, Mul, Mod, Pow, Div, IDiv,
  BAnd, BOr, BXor, Shl, Shr, Unm, BNot, Lt, Le, Concat, Call, Close,
  ToString, Name, Metatable, Pairs,
  kCount
};
// The absence cache in Table::header.aux covers the first kFastMetaCount events.
inline constexpr int kFastMetaCount = 6;  // Index, NewIndex, Gc, Mode, Len, Eq

class State;

// What belongs to one OS thread running Lua code of a State: its allocation context
// (a gc::Mutator) and the thread of execution it runs now. A State has a main context
// for the thread that created it; the runtime binds one per worker thread
// (bindExecContext). Touched only by the OS thread it is bound to.
// How long a wait on the operating system may take (enterOsWait).
enum class OsWait : uint8_t {
  kLong,   // may block for ever (a read, a child process): the task's worker is handed on
  kShort,  // normally done at once but may block (a write to a full pipe): detach only
};

// Finished task threads an OS thread gave back, for its next spawns without the pool's
// lock (vm/thread.cpp: ThreadPool). Part of its ExecContext, so touched by that thread only.
struct ThreadCache {
  static constexpr uint32_t kSize = 16;
  ThreadData* slots[kSize] = {};
  uint32_t count = 0;
};

struct ExecContext {
  State* state = nullptr;
  gc::Mutator* mutator = nullptr;
  ThreadData* running = nullptr;  // set on first use to the main thread's data
  ThreadCache threads;            // handed back to the pool when the thread unbinds
};

// The context bound to the calling OS thread, or nullptr. Thread-local: the lookup is a
// single fs-relative load.
extern thread_local constinit ExecContext* tlsExecContext;
// Binds the calling OS thread to `ctx` (nullptr unbinds: the State's main context).
inline void bindExecContext(ExecContext* ctx) { tlsExecContext = ctx; }

struct StateOptions {
  gc::Config gc;
  // Lua frames per thread ("stack overflow" beyond). As many as stack slots, so by default
  // the stack's size (kMaxStackSlots) binds first, as in Lua: depth depends on the frames'
  // sizes (f(n) = 1 + f(n - 1) reaches about 500,000, as in lua5.4).
  uint32_t maxCallDepth = 1000000;
  uint32_t maxNativeDepth = 200;   // nested native->Lua re-entries ("C stack overflow")
  JitOptions jit;                  // docs/design/jit.md
};

class State {
 public:
  explicit State(const StateOptions& options = {});
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  gc::Heap& heap() { return heap_; }
  // The calling OS thread's context for this State: the bound one, else the main one.
  ExecContext& context() {
    ExecContext* c = tlsExecContext;
    return c && c->state == this ? *c : mainContext_;
  }
  gc::Mutator& mutator() { return *context().mutator; }
  // The thread the State's own (main) context runs now; read by a signal handler
  // (requestInterrupt in vm/host.h), hence the atomic load.
  ThreadData* mainRunning() const { return __atomic_load_n(&mainContext_.running, __ATOMIC_RELAXED); }
  // Whether the calling OS thread runs the State's own (main) context.
  bool onMainContext() const {
    ExecContext* c = tlsExecContext;
    return !c || c->state != this || c == &mainContext_;
  }
  StringTable& strings() { return *strings_; }
  ThreadPool& threadPool() { return *threadPool_; }
  const StateOptions& options() const { return options_; }
  // The JIT tier, or nullptr when the JIT is off (vm/jit.h).
  JitTier* jit() const { return jit_.get(); }

  uint32_t hashSeed() const { return hashSeed_; }
  // kMemoryError if the constructor could not allocate the initial objects (a heap
  // limit too small); the state must then not be used beyond destruction.
  Status initStatus() const { return initStatus_; }

 private:
  class Roots;
  Status initialise();

  StateOptions options_;
  // The JIT's queue and compile thread (null with the JIT off). Before heap_: the heap's
  // last releases drop compiled code (releaseProto), which the tier then frees.
  std::unique_ptr<JitTier> jit_;
  // Before heap_: destroyed after it, since the heap's last releases read pooled data.
  std::unique_ptr<ThreadPool> threadPool_;
  gc::Heap heap_;
  ExecContext mainContext_;
  std::unique_ptr<StringTable> strings_;
  uint32_t hashSeed_;
  std::unique_ptr<Roots> roots_;  // the RootSource tracing the public fields below
  Status initStatus_;

 public:
  // Roots owned by the state (traced by the state's RootSource). Read them after any
  // safepoint; they may move.
  Table* registry = nullptr;
  Table* globals = nullptr;
  Table* typeMetatables[16] = {};   // indexed by a basic-type index (string, number, ...)
  String* metaNames[size_t(Meta::kCount)] = {};
  // kBasicTypeNames interned at start-up, by BasicType: what type() returns. Interned at
  // every call, type() ran 25% slower than lua5.4's (a loop of `type(v) == "table"`).
  String* typeNames[std::size(kBasicTypeNames)] = {};
  String* memoryErrorMessage = nullptr;  // "not enough memory", preallocated
  Thread* mainThread = nullptr;

  // Warnings follow warn("@on"/"@off"); `warningContinues` is set while a multi-part
  // warning is open.
  bool warningsOn = false;
  bool warningContinues = false;
  // The runtime layer running tasks on this State (runtime/runtime_impl.h; opaque here).
  void* runtime = nullptr;
  // Set (by the spawning thread, before its first task is published) once tasks may run
  // in parallel: table writers then claim their table (vm/table.cpp).
  // Relaxed: it only goes from false to true, before the first task is published (the
  // publication orders it for the workers).
  std::atomic<bool> tablesShared{false};
  // Set by the runtime: around a wait on the operating system (a read from a terminal or
  // a pipe, os.execute, the prompt, where no blocking pool takes them; a write to a
  // terminal or a pipe) the calling thread
  // is detached from the collector, so it never delays a collection (vm/api.h:
  // enterOsWait/leaveOsWait).
  void (*osWaitEnter)(State&, OsWait) = nullptr;
  Status (*osWaitLeave)(State&, OsWait) = nullptr;
  // Set by the runtime: hands a BlockingJob to its blocking pool and suspends the
  // calling task (true), or declines (false: the caller runs the job itself). vm/api.h
  // runBlockingMayGC; the job is a vm::BlockingJob.
  bool (*blockingSubmit)(CallContext&, const std::shared_ptr<BlockingJob>&) = nullptr;
  // Ctrl-C (the CLI's SIGINT handler, requestInterrupt in vm/host.h): the main
  // context's running Lua code stops with "interrupted!" at its next loop safepoint.
  // Relaxed: the handler also sends that thread's budget below zero, which is what
  // makes the safepoint look.
  std::atomic<bool> interruptPending{false};
  // Deterministic mode (runtime/sched/deterministic.h), set by the runtime before any
  // Lua runs; nullptr in a normal run.
  struct DeterministicHooks {
    int32_t slice = 0;  // the main context's budget between its schedule points
    // The logical clock: nanoseconds since the run began (os.time, os.clock, os.date).
    uint64_t (*nowNanos)(State&) = nullptr;
    // Code on the main context spent its budget or finished an ordered operation: other
    // tasks run their steps until the chooser picks the main task again.
    Status (*schedulePointMayGC)(State&, ThreadData*) = nullptr;
    // math.random's seed for the chain whose root is `root` (the run's seed and its task).
    uint64_t (*randomSeed)(State&, ThreadData* root) = nullptr;
    // With parallel steps: the code of `t`'s task reached a gate (vm/api.h worldEffect);
    // returns once its step is committed (non-ok: the runtime closed). Null otherwise.
    Status (*gateMayGC)(State&, ThreadData* t) = nullptr;
    // A task's step ends at this loop safepoint of `t` (its budget ran out, or an ordered
    // operation ended it) and its chain can suspend: the chooser decides here what runs
    // next. true: it picked the task again, whose next step goes on here with a fresh
    // budget (set by the hook); false: the task suspends as preempted. Never collects.
    bool (*continueStep)(State&, ThreadData* t) = nullptr;
  };
  const DeterministicHooks* deterministic = nullptr;
  // The runtime's host lane (runtime/sched/host_lane.cpp): hostCall runs around each call
  // of the embedder into the main context (the main thread's outermost call: entering
  // true, then false), flushHostLane publishes what the lane holds while hostLanePending
  // says it may hold a task (set by the runtime, cleared by the flush). Main thread only.
  void (*hostCall)(State&, bool entering) = nullptr;
  // The main thread's code suspended (kYield) at the bottom of such a call: runs it to
  // its end, returning how it ended (runtime/wait.cpp driveMainMayGC).
  Status (*driveMainMayGC)(State&, ThreadData*) = nullptr;
  void (*flushHostLane)(State&) = nullptr;
  bool hostLanePending = false;
  // Set by the host's prompt (the CLI's REPL) while it runs lines: a deadlock of the main
  // task is then an error of the line, since a later line may end the wait
  // (runtime/wait.cpp). Main thread only.
  bool atPrompt = false;
  // The C API layer (runtime/capi/capi.h): its per-State data, and the native that runs
  // a light C function value (Tag::LightCFunction). Both are set before such a value
  // exists on this State; null while the C API was never used on it.
  void* capi = nullptr;
  NativeFn callLightC = nullptr;
  // Frees `capi` when the State ends (set with it; a State the C API made frees it in
  // lua_close instead and clears both).
  void (*capiRelease)(State&) = nullptr;
  // lua_setwarnf's warn function: when set, every warning piece goes to it, control
  // messages ("@on", "@off") included, instead of the built-in stderr writer.
  void (*warnHook)(State&, std::string_view message, bool toContinue) = nullptr;
  // The main thread's bottom level is a host function (the CLI runs chunks as lua.c's
  // pmain does): tracebacks end with "[C]: in ?". lua_newstate's hosts call Lua from C
  // directly, without that level.
  bool hostLevel = true;
  // collectgarbage's mode (lua.c starts in generational mode); set it with setGcMode.
  bool gcGenerational = true;
  void setGcMode(bool generational) {
    gcGenerational = generational;
    heap_.setWholeCycleFinalizers(!generational);
  }
  // collectgarbage's "setpause"/"setstepmul" values, kept in quarters as lua5.4 keeps them
  // (so 150 reads back as 148); the copying collector does not use them.
  int64_t gcPauseQuarters = 50;
  int64_t gcStepMulQuarters = 25;
};

}  // namespace weft::vm

namespace weft::vm {
// Implemented beside the interpreter (vm/thread.cpp); the State constructor calls them.
void registerThreadKind(gc::Heap& heap);
// nullptr on exhaustion. Its stack has at least minStackSlots slots (0: the default,
// room for a C function's pushes: kMinCStack above slot 0).
Thread* newThread(State& state, uint32_t minStackSlots = 0);
}  // namespace weft::vm
