// The VM's side of the JIT (docs/design/jit.md): options, hotness, the compile queue and
// its thread, loading the compiler module, installing and freeing compiled code. Knows
// nothing of LLVM: the compiler is libweft_jit.so behind vm/jit_abi.h.
//
// Invariants:
//  1. A worker never waits on LLVM in `on` mode: it snapshots the prototype into a job
//     (bytecode, numeric constants, the constant array's address) and queues it; only
//     eager mode (a test mode) waits for the job it queued.
//  2. The compile thread never touches the heap: a job is a snapshot, and the result
//     goes into the prototype's off-heap JitCode, which the Proto and a pending job
//     share by reference count.
//  3. A JitCode's entry is written once, with a release store after its entry map; the
//     interpreter reads it with an acquire load (jitReady).
//  4. Compiled code is freed when the last of its Proto and its job lets go of it; the
//     module's resources are released on the compile thread (or at the tier's end).
//     Code replaced by a recompilation or a blacklisting stays alive, owned by its
//     successor (JitCode::previous): another worker may still be running it.
//  5. Type feedback only widens: the interpreter ORs what it sees into Proto::jitProfile
//     until the prototype is queued, and at every guard exit; a job compiles a snapshot
//     of it. The field slot hints after it (jitProfile[codeSize + pc]) are the last seen:
//     compiled code tests them before the key's home node and needs none to be right.
//
// Threads: the interpreter (any worker) calls jitChargeMayQueue / JitTier::request and
// reads JitCode; the collector (releaseProto) calls JitTier::dropProtoRef; the compile
// thread owns the module and the engine. Shared tier fields are under mu_.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "frontend/opcodes.h"
#include "vm/jit_abi.h"
#include "vm/jit_loops.h"
#include "vm/jit_options.h"
#include "vm/object.h"

namespace weft::vm {

class State;
class JitTier;
struct ThreadData;
struct CallFrame;

// After this many guard exits a prototype's code is replaced: recompiled with the types
// its guards met (widened feedback), or, at its kJitMaxVersions-th version, blacklisted.
inline constexpr uint32_t kJitGuardExitLimit = 64;
// A callee compiled in place of its call (vm/jit.cpp resolveInlines) has at most this
// many instructions, and the instruction that loads it is at most this far before the
// call (its arguments' loads lie between).
inline constexpr uint32_t kJitInlineMaxCode = 40;
inline constexpr uint32_t kJitInlineLookBack = 16;
inline constexpr uint8_t kJitMaxVersions = 3;
// Cold loops (docs/design/jit.md, "Cold loops"): after this many interpreted back-edges
// to loop headers where a prototype's code has no entry, a loop holding instructions its
// feedback never saw (it was queued before they ran) is profiled again for as many
// back-edges, and the code replaced if the feedback grew; at most kJitMaxColdRounds
// times per prototype. A power of two: the interpreter's back-edge tests the count with a
// mask, where a division by 2,000 cost a loop of rejected or queued code 12% (bench/loops.lua).
inline constexpr uint32_t kJitColdLoopLimit = 2048;
static_assert((kJitColdLoopLimit & (kJitColdLoopLimit - 1)) == 0);
inline constexpr uint8_t kJitMaxColdRounds = 4;
// A worker counts cold back-edges in tlsColdBackEdges and adds them to a JitCode this
// many at a time (jitColdLoopCounts): one counter that every worker wrote at every
// back-edge of a loop without an entry cost bench/tasks/skynet.lua 8% at two workers
// (the JitCode's cache line went back and forth, and with it the fields every
// back-edge and frame change reads). A power of two that divides the limit, so that
// the count still meets each multiple of the limit.
inline constexpr uint32_t kJitColdLoopBatch = 64;
static_assert(kJitColdLoopLimit % kJitColdLoopBatch == 0 && (kJitColdLoopBatch & (kJitColdLoopBatch - 1)) == 0);
// Compiled calls nest on the machine stack (docs/design/jit.md, "Compiled calls"): past
// this depth a call is left to the interpreter, which enters the callee's code afresh.
inline constexpr uint32_t kJitMaxCallDepth = 128;
// A native called from compiled code may run Lua, whose compiled calls nest again: past
// this depth of the nest its calls of natives are the interpreter's, so the machine stack
// holds at most this many compiled frames per native level (docs/design/jit.md, "Native
// calls").
inline constexpr uint32_t kJitMaxNativeCallDepth = 8;

// The entry points of a JitCode; compiled calls read callEntry and deferEntry inline
// (WeftJitLayout::codeCallEntry, codeDeferEntry).
struct JitCodeEntry {
  WeftJitEntry entry = nullptr;        // written once (release), read by jitReady (acquire)
  const uint8_t* entryMap = nullptr;   // valid once entry is set
  // `entry` where a call may run the code from its start (an entry there, fixed
  // parameters), else null: the one test compiled callers and jitCallLua make of the
  // callee's code. Written once before `entry` (release), read with acquire.
  WeftJitEntry callEntry = nullptr;
  // callEntry where the code takes a deferred frame (docs/design/jit.md, "Deferred
  // frames"), else null; written and read as callEntry.
  WeftJitEntry deferEntry = nullptr;
};
// One prototype's compiled code, off the heap (Proto::jit). `state` moves kNone ->
// kQueued -> kReady | kRejected | kFailed, each step by the compile thread but the first;
// a blacklisting installs a new JitCode that starts kBlacklisted (never entered); a
// prototype that only compiled calls would enter gets one that starts kDeferred, until
// a compiled call asks for it (JitTier::requestForCall) and a queued one replaces it; a
// main chunk run once whose hot loop looks too short to outlast its compilation gets
// one that starts kWaiting, until a loop looks long enough (JitTier::waitingLoop) and
// a queued one replaces it.
struct JitCode : JitCodeEntry {
  enum State : uint8_t { kQueued, kReady, kRejected, kFailed, kBlacklisted, kDeferred, kWaiting };
  std::atomic<uint8_t> state{kQueued};
  std::atomic<uint32_t> refs{2};       // the Proto's and the job's
  void* handle = nullptr;              // the module's, for release (compile thread)
  JitTier* tier = nullptr;
  JitCode* previous = nullptr;         // the code this one replaced, owned (invariant 4)
  uint8_t version = 0;                 // 0 for the first compilation
  uint8_t coldRounds = 0;              // replacements for cold loops before this code
  // No loop of the prototype may go round compiled (vm/jit_loops.cpp mayIterate, at the
  // request): an entry at its start only runs it to its return. Written before the
  // code is published, read by the interpreter after (jitFrame).
  bool loopless = false;
  std::atomic<uint32_t> guardExits{0};
  // An entry's tag test failed (any worker; relaxed: it only has to be seen by the
  // worker that replaces this code, after the guard exit it counted); and whether this
  // code's own compilation was told to test none (written before its job is queued).
  std::atomic<uint8_t> entryTestFailed{0};
  bool noEntryTests = false;
  // Cold loops: interpreted back-edges without an entry (a relaxed racy counter, as the
  // hotness, added to a batch at a time: jitColdLoopCounts); whether frames of the prototype profile again; the loop
  // that started it, how many of its instructions had no feedback then, and the count then (relaxed: racing starters
  // store a loop each, and either is a fine one to measure).
  uint32_t coldBackEdges = 0;
  std::atomic<uint8_t> reprofiling{0};
  std::atomic<uint32_t> coldHeader{0}, coldUnseen{0}, coldStart{0};
  // A cold site of this code exited (any worker, relaxed, as reprofiling): frames of the
  // prototype profile from then on, so that the next version sees the rest of the cold
  // path, not its first instruction alone.
  std::atomic<uint8_t> coldExited{0};
  // Whether frames of the prototype profile while interpreted: cold loops, cold exits.
  bool profilesFrames() const {
    return reprofiling.load(std::memory_order_relaxed) || coldExited.load(std::memory_order_relaxed);
  }
  // kWaiting (docs/design/jit.md, "Short loops"): the window the outermost loop is
  // measured over, from the clock and the rounds it had left at the window's start, and
  // whether it was found to end before its code could run (the frame's worker, relaxed:
  // a second frame of the prototype may race and measure its own).
  std::atomic<uint64_t> waitNanos{0};
  std::atomic<int64_t> waitLeft{0};
  std::atomic<uint32_t> waitHeader{0};
  std::atomic<uint8_t> waitWindows{0};  // windows started on waitHeader's loop
  std::atomic<uint8_t> waitShort{0};
  // The quiet epoch in which this code last left its frame at a call whose callee's code
  // was queued: the interpreter does not enter it at a loop header until the epoch moves
  // (docs/design/jit.md, "Quiet frames"). Any worker, relaxed (a stale value costs one
  // entry and exit more, or one less).
  std::atomic<uint16_t> calleeWait{0};
  std::vector<uint32_t> siteExits;     // guard exits by pc (relaxed counters, as below)
  // Sites the job's feedback had never seen run, which the compiler made cold exits:
  // their guard exits profile as the interpreter would and set coldExited
  // (JitTier::guardExit). Written before the job is queued, read-only after.
  std::vector<bool> coldSites;
  // Statistics (--jit-stats): relaxed counters, racy increments may lose counts.
  uint64_t entries = 0;
  uint64_t exits = 0;
  uint64_t safepointExits = 0;
  // Under --jit-stats only: the other exits (at an instruction left to the interpreter)
  // by pc, and the opcodes, for the report.
  std::vector<uint32_t> plainExits;
  std::vector<uint8_t> ops;
  uint32_t compiledOps = 0;
  bool defersFrames = false;
  double compileMs = 0;
  std::string name;                    // "source:line", set before queueing
  std::string perfName;                // lua:NAME:FILE:LINE with a perf map, set before queueing
};

// The prototype's code once it can run, else nullptr (invariant 3).
inline JitCode* jitReady(const Proto* p) {
  JitCode* c = __atomic_load_n(&p->jit, __ATOMIC_ACQUIRE);
  return c && __atomic_load_n(&c->entry, __ATOMIC_ACQUIRE) ? c : nullptr;
}
// Whether the interpreter may start compiled code at instruction `pc` of `p` (not at a
// start kept for compiled calls, kWeftJitEntryForCalls).
inline bool jitEntersAt(const Proto* p, uint32_t pc) {
  const JitCode* c = jitReady(p);
  return c && c->entryMap[pc] == 1;
}

template <typename T>
inline void jitCount(T& counter) {
  __atomic_store_n(&counter, __atomic_load_n(&counter, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

// Cold back-edges this worker took since it last added a batch to a JitCode (this
// thread only).
extern thread_local constinit uint32_t tlsColdBackEdges;
// A back-edge of a loop `code` has no entry for: counted by the worker, and each
// kJitColdLoopBatch-th adds the batch to coldBackEdges (relaxed and racy, as the
// hotness: the batch goes to the code whose back-edge completes it, so a loop is
// credited in proportion to its share of the worker's cold rounds); true when
// JitTier::coldLoop has something to decide, while the prototype profiles again or
// every kJitColdLoopLimit rounds. Never collects.
inline bool jitColdLoopCounts(JitCode* code) {
  bool reprofiling = code->reprofiling.load(std::memory_order_relaxed);
  if ((++tlsColdBackEdges & (kJitColdLoopBatch - 1)) != 0) [[likely]]
    return reprofiling;
  uint32_t n = __atomic_load_n(&code->coldBackEdges, __ATOMIC_RELAXED) + kJitColdLoopBatch;
  __atomic_store_n(&code->coldBackEdges, n, __ATOMIC_RELAXED);
  return reprofiling || (n & (kJitColdLoopLimit - 1)) == 0;
}

// The instructions the interpreter profiles (vm/jit_abi.h, type feedback).
constexpr bool jitProfiled(frontend::Op op) {
  using frontend::Op;
  return (op >= Op::ADDI && op <= Op::SHR) || (op >= Op::EQ && op <= Op::GEI) || op == Op::FORPREP ||
         op == Op::FORLOOP || op == Op::CALL || op == Op::TAILCALL || op == Op::TFORCALL || op == Op::GETTABLE ||
         op == Op::GETI || op == Op::GETFIELD;
}
// The instructions the interpreter visits while it profiles: those with type feedback,
// and the field accesses whose node it notes (vm/jit_abi.h, field slot hints).
constexpr bool jitProfileVisits(frontend::Op op) { return jitProfiled(op) || op == frontend::Op::SETFIELD; }
// Whether the interpreter profiles p now: it has not been queued. A request snapshots
// the feedback, so what the interpreter would see later reaches code only through guard
// exits (JitTier::guardExit). Never allocates.
inline bool jitProfilingNow(const Proto* p) { return !__atomic_load_n(&p->jit, __ATOMIC_ACQUIRE); }
// ORs the types of instruction pc's operands into p's feedback (invariant 5), and notes
// a field's node.
// `atGuardExit`: compiled code left at pc (a failed guard or helper) rather than the
// interpreter profiling it; a table read that already had feedback is then marked for
// the interpreter (vm/jit_abi.h).
void jitProfileRecord(Proto* p, uint32_t pc, const Value* base, bool atGuardExit = false);
// The metamethod the arithmetic instruction at `pc` of p (its MMBIN after it) calls with
// the operands in the frame at `base`, which it puts in x and y as OP_MMBIN passes them;
// nil where it calls none (numbers and strings compute; docs/design/jit.md, "Metamethod
// arithmetic"). Never collects.
Value arithMetamethod(State& S, const Proto* p, uint32_t pc, const Value* base, Value& x, Value& y);
// Whether a frame marked kFrameFinishOp returning into the Lua frame `caller` finishes
// an arithmetic instruction (finishOpMayGC's MMBIN case): its result goes to that
// instruction's R[A].
bool finishesArith(const CallFrame& caller);
// The native that the interpreted CALL at pc called yielded (a channel's receive, a
// coroutine's yield): the site is marked for the interpreter in p's feedback, as compiled
// code marks it after kJitGuardExitLimit yields (jitNativeYielded), so a loop that yields
// every round is not compiled for it at all. Never allocates.
void jitProfileYield(Proto* p, uint32_t pc);

class JitTier {
 public:
  JitTier(State& state, const JitOptions& options);
  ~JitTier();
  JitTier(const JitTier&) = delete;
  JitTier& operator=(const JitTier&) = delete;

  const JitOptions& options() const { return options_; }
  // Queues `p` once (a no-op if it was queued before). With `wait`, returns when the job
  // is done (eager mode). `t` runs a frame of p, the top one: its caller names the
  // function for the perf map. Never collects; allocates off the heap only.
  void request(Proto* p, bool wait, ThreadData* t);
  // A compiled call of cl's prototype p found `code` (kDeferred or kWaiting, else a
  // no-op): p is queued now, its code replacing `code`. Never collects; allocates off
  // the heap only.
  void requestForCall(const LuaClosure* cl, JitCode* code);
  // Whether the interpreter should profile a frame of p that starts or continues now;
  // allocates p's feedback (off the heap) the first time. Never collects.
  bool profile(Proto* p) { return jitProfilingNow(p) && options_.mode != JitMode::kEager && ensureProfile(p); }
  // Compiled code of p exited at a failed guard at pc: widens the feedback there, counts,
  // and replaces the code at kJitGuardExitLimit exits (invariant 4). `cl` is the
  // frame's closure (of p). Never collects.
  void guardExit(const LuaClosure* cl, JitCode* code, uint32_t pc, const Value* base);
  // The back-edge to `header` of a frame of cl's prototype p (`base` its registers)
  // brought p's hotness to the threshold: queues p, or, for a main chunk run once,
  // installs a kWaiting code that measures the loop, queued only if it looks likely to
  // outlast its compilation (docs/design/jit.md, "Short loops"). Never collects;
  // allocates off the heap only.
  void requestLoop(const LuaClosure* cl, ThreadData* t, uint32_t header, const Value* base);
  // The interpreter took a back-edge to `header`, where p's code (ready, rejected, deferred or
  // waiting) has no entry, and jitColdLoopCounts counted it and asks: true while frames
  // of p should profile (cold loops). `cl` is the frame's closure (of p), `base` its
  // registers. Never collects.
  bool coldLoop(const LuaClosure* cl, JitCode* code, uint32_t header, const Value* base);
  // releaseProto: the Proto lets go of its code (any thread, inside a collection).
  void dropProtoRef(JitCode* code);
  // Frame changes (vm/interp.cpp jitFrame) skip a prototype whose Proto::jitQuiet is
  // this epoch: its code had no entry and did not profile when a frame change last
  // looked, or it waits for a callee's (waitForCallee). Every change that gives a
  // prototype's frames work (an entry published, a compilation ended, a cold loop
  // profiling again) moves to the next epoch, so each prototype is looked at again. Read with acquire: a frame that
  // finds an epoch then finds the changes made before it moved there.
  uint16_t quietEpoch() const { return quietEpoch_.load(std::memory_order_acquire); }
  // Whether the instruction of p at `pc` (where compiled code left its frame, registers
  // at `base`) is a CALL or TAILCALL of a Lua function, or arithmetic calling a Lua
  // metamethod (arithMetamethod), whose code is queued. Never collects.
  static bool callsQueuedCode(State& S, const Proto* p, const Instruction* pc, const Value* base);
  // Code of p that left at such a call: neither p's frames at their start nor its loop
  // headers enter it again until the epoch moves, as the callee's code will move it
  // (docs/design/jit.md, "Quiet frames"). Never collects.
  void waitForCallee(Proto* p, JitCode* code);
  // Whether the compiler module has been loaded in this process (lazy loading).
  static bool moduleLoaded();
  // Compiled functions whose code the engine still holds (waits for pending releases).
  uint32_t liveCodeForTesting();
  // The --jit-stats report.
  std::string statsReport();
  // Whether the compile thread has a job in hand or queued (loading the module counts):
  // the weft CLI's exit does not wait for it (tools/weft/main.cpp).
  bool compiling();

 private:
  struct Job;
  bool ensureProfile(Proto* p);
  // The request for p; `cl`, a closure of p or null, says what its calls call
  // (resolveInlines).
  std::unique_ptr<Job> snapshot(Proto* p, JitCode* code, const LuaClosure* cl);
  // Installs the next code of cl's prototype p after `code` (a recompilation with
  // p's feedback, or a blacklisting at kJitMaxVersions) and queues it; `cold`: for a
  // cold loop, which counts as a cold round instead of a version.
  void replace(const LuaClosure* cl, JitCode* code, bool cold);
  // Installs a code of `state` without a job on p, unless another worker installed one
  // first, and counts it; a kWaiting one measures its first window from `window`. `t`
  // runs a frame of p (perf map names).
  void installIdle(Proto* p, ThreadData* t, JitCode::State state, const LoopLeft* window = nullptr);
  // Queues cl's prototype p, its new code replacing `code` (kDeferred or kWaiting, no
  // entry), unless another worker replaced it first; `first`: ahead of the jobs queued.
  void queueAfter(const LuaClosure* cl, JitCode* code, bool first);
  // coldLoop of a kWaiting code: measures the loop and queues p when it looks long.
  bool waitingLoop(const LuaClosure* cl, JitCode* code, uint32_t header, const Value* base);
  // Milliseconds until code for p would run if queued now: the module's load if not
  // loaded, and the compilations queued before it and its own, at the rate measured.
  double expectedWaitMs(const Proto* p);
  void writePerfMap(const JitCode* code, const WeftJitResult& res);
  // `first`: ahead of the jobs queued (a compiled call waits for it).
  void enqueue(std::unique_ptr<Job> job, bool first = false);
  void threadMain();
  void compileJob(Job& job);
  bool ensureEngine();
  void finishJob(JitCode* code);
  void releaseNow(JitCode* code);
  // After an entry is published or a cold loop starts profiling (quietEpoch); never 0,
  // the epoch of a Proto never looked at.
  void nextQuietEpoch();

  State& state_;
  JitOptions options_;
  // Moved by the compile thread and by workers in coldLoop (release), read by every
  // worker at frame changes (quietEpoch).
  std::atomic<uint16_t> quietEpoch_{1};
  std::mutex mu_;
  std::condition_variable work_;  // jobs or garbage arrived, or stop
  std::condition_variable done_;  // a job finished (eager waiters)
  std::deque<std::unique_ptr<Job>> queue_;
  std::vector<JitCode*> garbage_;  // codes whose last reference went, to release
  std::vector<JitCode*> live_;     // codes installed and not yet released (stats)
  std::thread thread_;
  bool stop_ = false;
  bool idle_ = true;               // the compile thread waits for work
  // Compile thread only:
  void* engine_ = nullptr;
  bool unavailable_ = false;
  bool perfMapFailed_ = false;     // reported once; the map then stays as it is
  // Totals (under mu_).
  uint64_t compiled_ = 0, rejected_ = 0, failed_ = 0, recompiled_ = 0, blacklisted_ = 0;
  uint64_t retiredEntries_ = 0, retiredExits_ = 0;
  uint64_t waited_ = 0;                // prototypes that waited for a long loop (kWaiting)
  uint64_t compiledInstructions_ = 0;  // bytecode of every compilation, for the rate
  uint64_t queuedInstructions_ = 0;    // bytecode of the jobs queued
  double compileMs_ = 0;
};

// The interpreter's fast paths for compiled code (vm/interp.cpp).
WeftJitHelpers jitHelpers();

// The interpreter's charges, JIT on: each call and loop back-edge adds to a prototype's
// hotness, which queues it when it reaches the threshold.
inline uint32_t jitHotter(Proto* p) {
  uint32_t h = __atomic_load_n(&p->jitHotness, __ATOMIC_RELAXED) + 1;
  __atomic_store_n(&p->jitHotness, h, __ATOMIC_RELAXED);
  return h;
}
// The charge at the start of t's top frame, a frame of p; counts the call (racy, as the
// hotness). Never collects.
inline void jitCharge(JitTier& tier, Proto* p, ThreadData* t) {
  uint8_t calls = __atomic_load_n(&p->jitCalls, __ATOMIC_RELAXED);
  if (calls < 2) __atomic_store_n(&p->jitCalls, uint8_t(calls + 1), __ATOMIC_RELAXED);
  if (jitHotter(p) == tier.options().threshold) [[unlikely]]
    tier.request(p, false, t);
}
// The charge at a back-edge to `header` of t's top frame, of cl, whose registers start
// at `base`. Never collects.
inline void jitChargeLoop(JitTier& tier, const LuaClosure* cl, ThreadData* t, uint32_t header, const Value* base) {
  if (jitHotter(cl->proto) == tier.options().threshold) [[unlikely]]
    tier.requestLoop(cl, t, header, base);
}

}  // namespace weft::vm
