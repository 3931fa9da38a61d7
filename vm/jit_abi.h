// The interface between the VM and the JIT's compiler module (libweft_jit.so, jit/),
// which the VM loads with dlopen on the first compilation (docs/design/jit.md, "Lazy
// loading"). Plain C structs and one exported C function: the `weft` executable links
// libstdc++ statically and the module uses the shared one, so no C++ object crosses.
//
// Protocol:
//  - The VM's compile thread calls weft_jit_module(kWeftJitAbiVersion) once and keeps
//    the table; every other call is through it, from that thread only, so the module
//    needs no locks of its own.
//  - compile() turns a WeftJitRequest (a snapshot: it never reads the heap) into code
//    whose entry is a WeftJitEntry, or declines (kWeftJitRejected).
//  - release() frees one compiled function's code; destroy() frees the engine and any
//    code still alive.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

inline constexpr uint32_t kWeftJitAbiVersion = 24;

// Compiled code: runs the frame whose register 0 is `base` from instruction `pc` and
// returns exitPc | (kind << 32) (docs/design/jit.md, "The frame contract"). `thread` is
// the vm::ThreadData that runs the frame (and owns `budget`), for the call helpers.
// `deferred` is 0 from the VM: the frame is the thread's top CallFrame. Compiled code
// may pass a callee whose code takes one (JitCode::deferEntry) a deferred frame, not yet
// written to the frame array (docs/design/jit.md, "Deferred frames"): its index |
// the results wanted (16 bits, -1 for all) << 32 | the nest's depth << 48.
using WeftJitEntry = uint64_t (*)(void* base, int32_t* budget, uint32_t pc, void* thread, uint64_t deferred);
inline constexpr uint64_t kWeftJitExitInterpret = 0;  // the interpreter runs exitPc first
inline constexpr uint64_t kWeftJitExitSafepoint = 1;  // a back-edge poll fired: the loop safepoint, then re-entry
inline constexpr uint64_t kWeftJitExitNoEntry = 2;    // `pc` is not an entry: nothing ran
inline constexpr uint64_t kWeftJitExitSafepointFrame = 3;  // as kWeftJitExitSafepoint, keeping every register
inline constexpr uint64_t kWeftJitExitGuard = 4;      // a guard built on type feedback failed: as kWeftJitExitInterpret, counted
inline constexpr uint64_t kWeftJitExitReturned =
    5;  // the frame returned: exitPc is 0, or a deferred frame's result count
// A native called from compiled code (WeftJitHelpers::callNative) failed or yielded:
// exitPc is the vm::StatusCode, which the interpreter raises (or returns) as after its
// own call.
inline constexpr uint64_t kWeftJitExitStatus = 6;
// A native called from compiled code returned, but the code cannot go on (the stack
// moved, a collection ran, a hook was set): the thread's top frame resumes at its saved
// pc, as after an interpreted call.
inline constexpr uint64_t kWeftJitExitResume = 7;
// An entry's test of a register's tag failed (docs/design/jit.md, "Entry speculation"):
// nothing ran, the frame stays at the entry's pc; exitPc is the instruction whose
// feedback the test came from, which the VM widens and counts as a guard exit there,
// and the code's next version tests no entry (WeftJitRequest::noEntryTests).
inline constexpr uint64_t kWeftJitExitEntryGuard = 8;
// Or'ed into a kind: the exit is in a frame that compiled code called (a compiled call,
// docs/design/jit.md "Compiled calls"), the thread's top frame, not the entered one.
inline constexpr uint64_t kWeftJitExitInCallee = 0x100;

// Type feedback (docs/design/jit.md, "Type feedback"): one byte per instruction, the
// types the interpreter saw there while it profiled. Arithmetic: its register operands
// (B in bits 0-2, a register C in bits 4-6); comparisons: A and B (or A alone against a
// constant or an immediate); FORPREP: init, limit and step together; FORLOOP: the step;
// CALL, TAILCALL and TFORCALL: kWeftJitSeenKnown | id << 3 when they called the known native `id`
// (below) in a shape it fits, kWeftJitSeenLuaFunction when they called a Lua function,
// CALL and TAILCALL kWeftJitSeenNativeFn when they called another native, else kWeftJitSeenOther, which is also what two different kinds of callee at one site
// make (and a guard exit of a compiled call: the callee will never have code there);
// GETTABLE, GETI, GETFIELD: kWeftJitSeenTable when R[B] was a table, kWeftJitSeenOther
// when it was not, and GETTABLE's key in bits 4-6.
// GETTABUP, GETTABLE..SETFIELD: kWeftJitSeenOther once their helper failed in
// compiled code (an exit at a table read that was not cold; SETTABUP, which has no
// helper: its inline store's slow path), which the next version then leaves to the
// interpreter. 0: never seen, the compiler speculates nothing.
inline constexpr uint8_t kWeftJitSeenInt = 1, kWeftJitSeenFloat = 2, kWeftJitSeenOther = 4, kWeftJitSeenTable = 8;
inline constexpr uint8_t kWeftJitSeenKnown = 1, kWeftJitSeenLuaFunction = 2;
// Field slot hints (WeftJitRequest::slotHints) name nodes below this index.
inline constexpr uint8_t kWeftJitSlotHintLimit = 255;
// CALL: a native (not a known one, nor pcall or xpcall), which compiled code calls
// through WeftJitHelpers::callNative. Bit 0 clear, so no known native's byte is it.
inline constexpr uint8_t kWeftJitSeenNativeFn = 8;

// The natives compiled code computes in place (docs/design/jit.md, "Known natives"), by
// id: WeftJitHost::natives[id] is the function (a LightNative payload).
enum WeftJitNative : uint8_t {
  kWeftJitNativeNone = 0,
  kWeftJitNativeSqrt,       // math.sqrt
  kWeftJitNativeFloor,      // math.floor
  kWeftJitNativeCeil,       // math.ceil
  kWeftJitNativeAbs,        // math.abs
  kWeftJitNativeMin,        // math.min, of two arguments
  kWeftJitNativeMax,        // math.max, of two arguments
  kWeftJitNativeStrLen,     // string.len
  kWeftJitNativeByte,       // string.byte, of one or two arguments, for one result
  kWeftJitNativeIpairs,     // ipairs, of one argument
  kWeftJitNativePairs,      // pairs, of one argument
  kWeftJitNativeIpairsAux,  // the iterator ipairs returns (TFORCALL)
  kWeftJitNativeNext,       // next, which pairs returns (TFORCALL)
  kWeftJitNativeCount
};
// Whether native `id` is compiled at a CALL of `nargs` arguments for `nresults` results
// (both fixed), or at a TFORCALL (`forCall`): the VM records it only then.
inline constexpr bool weftJitNativeFits(uint8_t id, int nargs, int nresults, bool forCall) {
  if (id == kWeftJitNativeIpairsAux || id == kWeftJitNativeNext) return forCall;
  if (forCall || nresults < 1 || id == kWeftJitNativeNone || id >= kWeftJitNativeCount) return false;
  if (id == kWeftJitNativeMin || id == kWeftJitNativeMax) return nargs == 2;
  if (id == kWeftJitNativeByte) return nargs == 1 || nargs == 2;
  return nargs == 1;
}
inline constexpr uint8_t weftJitSeenNative(uint8_t id) { return uint8_t(kWeftJitSeenKnown | id << 3); }
// Arithmetic whose feedback saw an operand that was never a number (B, or a register C:
// `regC`): its metamethod or its error every time, which compiled code calls through
// WeftJitHelpers::arithMeta (docs/design/jit.md, "Metamethod arithmetic").
inline constexpr bool weftJitArithOnOther(uint8_t seen, bool regC) {
  return (seen & 7) == kWeftJitSeenOther || (regC && ((seen >> 4) & 7) == kWeftJitSeenOther);
}

// A constant of the prototype as the compiler may fold it.
struct WeftJitConstant {
  uint8_t kind;  // 0 nil, 1 false, 2 true, 3 integer, 4 float, 5 a heap reference
  int64_t integer;
  double number;
  uint32_t hash;        // a short string: its hash (header.hash, fixed for the string's life)
  uint8_t shortString;  // kind 5 and an interned (short) string
};

// A Lua function a CALL of the prototype was found to call at the request: the closure
// in the upvalue that the instruction loading the callee reads (vm/jit.cpp
// resolveInlines). The module may run its body in place of the call (jit/lower_inline.cpp),
// behind a test of the callee's Proto::uid; the prototype itself comes without its
// code, and the module may call its own function directly (jit/lower_call.cpp).
struct WeftJitInline {
  uint32_t pc;  // the CALL
  uint64_t uid;
  const uint32_t* code;
  uint32_t codeSize;
  uint32_t numConstants;
  const WeftJitConstant* constants;
  uint8_t numParams;
  uint8_t isVararg;
};

struct WeftJitRequest {
  const uint32_t* code;
  uint32_t codeSize;
  uint32_t numConstants;
  const WeftJitConstant* constants;
  const void* constantSlots;   // the prototype's off-heap constant array (Value[]), stable while it lives
  uint8_t numParams;
  uint8_t maxStackSize;
  uint8_t isVararg;
  const char* name;            // "source:line", for the symbol name
  const uint8_t* profile;      // codeSize bytes of type feedback, or null (eager mode: no speculation)
  uint8_t faultSkipReload;     // a test fault: skip one reload after a safepoint (jit/stale_reload.h)
  const void* codeAddress;     // the prototype's own (off-heap, stable) code: a frame's saved pc points into it
  const WeftJitInline* inlines;  // by increasing pc
  uint32_t inlineCount;
  uint64_t uid;                  // the prototype's Proto::uid: an inline entry with it is a call of itself
  // 32 bytes, bit r (byte r / 8, bit r % 8) set when a closure it makes captures register
  // r: its frames may then be shared (docs/design/jit.md, "Shared frames"); null: none.
  const uint8_t* captured;
  // codeSize bytes, or null: at a GETFIELD or SETFIELD, 1 + the index of the node where
  // the interpreter last found its key when a collision had put it past its home node;
  // 0 otherwise (nodes from kWeftJitSlotHintLimit on have none). Code tests that node
  // first (docs/design/jit.md, "Inline table reads").
  const uint8_t* slotHints;
  // An entry's tag test failed in a version before (kWeftJitExitEntryGuard): entries
  // test no tags (docs/design/jit.md, "Entry speculation").
  uint8_t noEntryTests;
};

// The VM's fast paths that compiled code calls (vm/interp.cpp, jitHelpers): each does
// what its opcode's fast path does and returns 1, or returns 0 having changed nothing
// (the code then exits at that instruction). They never call Lua, raise, collect or
// reallocate the stack; stores go through the write barrier (storeValue). `state` is
// WeftJitHost::state; Value pointers are stack slots or constant slots.
struct WeftJitHelpers {
  int (*getTable)(void* state, void* dst, const void* obj, const void* key);  // GETTABLE, GETFIELD
  int (*getInt)(void* state, void* dst, const void* obj, int64_t key);        // GETI
  int (*setTable)(void* state, const void* obj, const void* key, const void* val);  // SETTABLE, SETFIELD
  int (*setInt)(void* state, const void* obj, int64_t key, const void* val);        // SETI
  int (*getTabUp)(void* state, void* dst, const void* funcSlot, uint32_t index, const void* key);  // GETTABUP
  // Compiled calls (docs/design/jit.md, "Compiled calls"); they do not follow the rule
  // above: callLua pushes a frame and returnLua pops one. callLua: CALL of the Lua
  // function at `funcSlot` with `nargs` arguments after it for `nresults` results, from
  // instruction `callerPc` of the thread's top frame: saves the caller's pc, pushes the
  // callee's frame and returns its compiled code, to run from pc 0 with the callee's
  // base; or returns null (nothing changed: the interpreter makes the call) or
  // kWeftJitCallNever (likewise, and the callee will never have code to enter there).
  // `budget` is the entry's (its poll is the callee's start).
  WeftJitEntry (*callLua)(void* state, void* thread, int32_t* budget, void* funcSlot, uint32_t nargs,
                          int32_t nresults, uint32_t callerPc);
  // RETURN of `n` values from `first` (a slot of the thread's top frame) into a Lua
  // caller: moves them, pops the frame, returns 1; or 0 having changed nothing. A
  // metamethod's frame (kFrameFinishOp) returns so only into an arithmetic instruction
  // (its MMBIN), whose R[A] gets the first value, as finishOpMayGC stores it.
  int (*returnLua)(void* state, void* thread, void* first, uint32_t n);
  // LEN of `obj` into `dst` where no metamethod applies (a string; a table whose
  // metatable has no __len).
  int (*len)(void* state, void* dst, const void* obj);
  // TFORCALL of next: `ra` is the loop's R[A]; next(R[A+1], R[A+2]) into R[A+4] and
  // R[A+5] (R[A+4] nil at the end); 0 for a key next rejects or an R[A+1] not a table.
  int (*next)(void* state, void* ra);
  // CLOSE at slot `level` of the thread's top frame: 1 when it has nothing to close (no
  // open upvalue, no to-be-closed variable at or above it); it changes nothing.
  int (*closes)(void* thread, const void* level);
  // SELF: R[A+1] := R[B]; R[A] := R[B][key] (`ra` is R[A], `obj` R[B], `key` a string
  // constant or slot) where a table's field, one level of __index tables or a string's
  // or userdata's metatable gives it (OP_SELF's fast paths).
  int (*self)(void* state, void* ra, const void* obj, const void* key);
  // SETUPVAL: the value at `value` into upvalue `index` of the Lua function at
  // `funcSlot`, as OP_SETUPVAL stores it (storeUpvalue: the barrier, an open upvalue's
  // owner told). It cannot fail.
  void (*setUpval)(void* thread, const void* funcSlot, uint32_t index, const void* value);
  // NEWTABLE: a table with room for `arraySize` and `hashSize` entries into `dst`. It
  // allocates (a collection it asks for waits for the code's next poll); 0 where the
  // heap refuses (the interpreter raises the memory error).
  int (*newTable)(void* state, void* dst, uint32_t arraySize, uint32_t hashSize);
  // SETLIST of a fixed count: the `n` values after `ra` (R[A], a table) into keys
  // last+1..last+n, as OP_SETLIST stores them; 0 where R[A] is not a table (a hostile
  // binary chunk) or the array part cannot grow.
  int (*setList)(void* state, void* ra, uint32_t n, uint32_t last);
  // Not bound by the rule above (docs/design/jit.md, "Native calls"): CALL of the native
  // at `funcSlot` with `nargs` arguments for `nresults` results (both fixed) from
  // instruction `callerPc` of the thread's top frame, as OP_CALL makes it, then the
  // safepoint the interpreter runs after a call. The native may run Lua, collect, grow
  // the stack or yield; compiled code writes its frame back before, and after
  // kWeftJitNativeDone reloads every register it reads. Returns one of the codes below,
  // or kWeftJitNativeStatus + a vm::StatusCode (an error, a yield: the exit's).
  int (*callNative)(void* state, void* thread, void* funcSlot, uint32_t nargs, int32_t nresults, uint32_t callerPc);
  // CONCAT of the `count` values from `first` (R[A], a slot of the thread's top frame)
  // into R[A] where they are all strings or numbers (no metamethod). It allocates (a
  // collection it asks for waits for the code's next poll); 0 having changed nothing
  // otherwise (the interpreter calls __concat, raises, or raises the memory error).
  int (*concat)(void* state, void* thread, void* first, uint32_t count);
  // TAILCALL that compiled code leaves to the interpreter: 1 when the Lua function at
  // `funcSlot` will never have code to enter at its start (rejected, blacklisted,
  // varargs), which with feedback makes the exit a guard's; it asks for a deferred one.
  int (*tailCallee)(void* state, const void* funcSlot);
  // Around a call from a frame whose registers open upvalues refer to (docs/design/
  // values.md's shared frames): reconciles its registers, from `base` (written back),
  // with their cells, as the interpreter does at its calls. It changes slots of the frame.
  void (*syncShared)(void* thread, const void* base);
  // A callLua-class helper (docs/design/jit.md, "Metamethod arithmetic"): the arithmetic
  // instruction at `callerPc` of the thread's top frame, whose operands (read through the
  // MMBIN after it, from the written-back frame) have a Lua metamethod with code to enter
  // at its start, pushes the metamethod's frame as OP_MMBIN does (kFrameFinishOp, one
  // result), its arguments in place and the caller's pc saved past the MMBIN; it returns
  // that code and the callee's base in `calleeBase`, or null having changed nothing (no
  // such metamethod or code, a hook, no room, the budget spent, a collection requested:
  // the interpreter runs the instruction). The callee's return (returnLua) stores the
  // result in the instruction's R[A]. It never collects.
  WeftJitEntry (*arithMeta)(void* state, void* thread, int32_t* budget, uint32_t callerPc, void** calleeBase);
};
inline constexpr int kWeftJitNativeDone = 0;     // results in place: go on
inline constexpr int kWeftJitNativeResume = 1;   // results in place: kWeftJitExitResume
inline constexpr int kWeftJitNativeRefused = 2;  // nothing done: exit at the call
inline constexpr int kWeftJitNativeDeep = 3;     // nothing done: exit at the call, uncounted (the nest)
inline constexpr int kWeftJitNativeStatus = 16;
inline const WeftJitEntry kWeftJitCallNever = reinterpret_cast<WeftJitEntry>(uintptr_t(1));

// Where compiled code finds what it reads and writes inline (docs/design/jit.md, "Inline
// table reads" and "Inline table stores"): byte offsets and sizes of vm/object.h's
// structs, vm/value.h's tags and gc/heap.h's barrier test, filled by the VM from those
// definitions (vm/jit.cpp, jitLayout), so the module has no copy of them. The protocols
// are table.h invariants 6 (reads) and 7 (stores).
struct WeftJitLayout {
  uint32_t valueSize, valueTag;                                  // Value: 16 bytes, tag byte
  uint32_t tableMetatable, tableArray, tableNodes, tableArraySize;  // Table
  uint32_t arrayCapacity, arrayData;                             // ValueArray
  uint32_t nodesCapacity, nodesData, nodeSize, nodeKey, nodeValue;  // NodeArray, Node
  uint32_t closureUpvalues, upvalueCell;                         // LuaClosure, Upvalue (GETTABUP)
  uint32_t stringLength, stringData;                             // String (LEN, known natives)
  uint8_t tagNil, tagInt, tagString, tagTable, tagLuaClosure;    // Tag
  uint32_t tableSync, objectAux, objectGcBits;                   // Table::sync, header.aux, header.gcBits
  uint8_t tagFirstHeap;                                          // Tag::kFirstHeap: isCollectable
  uint8_t barrierHolderMask, gcBitOld;                           // a table's barrier test (gc::writeBarrier)
  // Compiled calls and returns inline (docs/design/jit.md, "Compiled calls"): vm/thread.h's
  // ThreadData and CallFrame, vm/object.h's LuaClosure and Proto, vm/jit.h's JitCode.
  uint32_t threadStack, threadStackSize, threadTop, threadFrames, threadFrameCap, threadFrameCount;
  uint32_t threadHookMask, threadJitDepth;                       // bytes
  uint32_t threadOpenTop, threadCellWrites, threadSeenCellWrites;  // shared frames: u32, u64, u64
  uint32_t sharedSyncMask;                                         // kSharedSyncInterval - 1
  uint32_t frameSize, framePc, frameFunc, frameBase, frameTop, frameNresults, frameFlags, frameErrStatus;
  uint32_t frameVarargDelta, frameExtra;
  uint32_t closureProto, protoCode, protoNumParams, protoMaxStackSize, protoJit, protoUid;
  uint32_t codeCallEntry, codeDeferEntry;                        // JitCode
  uint16_t frameLua, frameNoCompiledReturn, frameTail;           // kFrameLua; kFrameEntry | kFrameFinishOp; kFrameTail
  uint8_t hookReturn;                                            // kHookMaskReturn
  uint32_t extraStack, maxJitDepth, maxCallDepth;                // kExtraStack, kJitMaxCallDepth, StateOptions
};

// What the VM looks like to compiled code: the poll's flags (Heap::collectionRequested)
// and the helpers.
struct WeftJitHost {
  const void* gcRequested;     // std::atomic<bool>, read relaxed
  const void* gcStopRequested; // std::atomic<bool>, read relaxed
  uint8_t stress;              // --gc-stress: every poll fires
  void* state;                 // the vm::State, passed to the helpers
  WeftJitHelpers helpers;
  const void* natives[kWeftJitNativeCount];  // by WeftJitNative id; [0] null
  WeftJitLayout layout;
  // ThreadSanitizer builds only (else null): told of every table slot compiled code
  // reads, as loadSlot tells it (vm/value.h, slotObserved), and writes, as storeSlot
  // tells it (slotPublished).
  void (*slotObserved)(const void* slot);
  void (*slotPublished)(const void* slot);
  // The write barrier of a table store compiled inline: the test is inline (the layout's
  // barrierHolderMask and gcBitOld); barrierSlow is its slow path for a young value
  // stored into slot `field` of an old table (the card, the record); barrierCheck the
  // barrier's other slow path (gc::writeBarrierSlow: the checks of --gc-verify, the
  // marking half of an incremental major), called when the bool at barrierChecks (the
  // gc's gBarrierSlow) is set.
  void (*barrierSlow)(void* table, void* field);
  void (*barrierCheck)(void* holder, void* value);
  const void* barrierChecks;
  // intHome's tables (vm/table.cpp), by the log2 of a node part's capacity: the prime
  // an integer key is reduced by, and floor(2^64 / it), for integer keys read inline in
  // the node part.
  const uint32_t* intModuli;
  const uint64_t* intReciprocals;
  uint32_t intSpread;
};

inline constexpr uint8_t kWeftJitEntryForCalls = 2;

inline constexpr int kWeftJitOk = 0;
inline constexpr int kWeftJitRejected = 1;  // nothing worth compiling
inline constexpr int kWeftJitFailed = 2;    // LLVM failed: `error` says why

struct WeftJitResult {
  WeftJitEntry entry;
  // codeSize bytes, 1 where `entry` may start, kWeftJitEntryForCalls at pc 0 where only
  // compiled calls start it (the interpreter's calls do not); owned by the module until release.
  uint8_t* entryMap;
  void* handle;        // for release()
  uint32_t compiledOps;
  char error[256];
  uint64_t codeSize;   // bytes of machine code from `entry` (the perf map's SIZE)
  uint8_t defersFrames;  // the code takes deferred frames (--jit-stats says so)
};

struct WeftJitModule {
  uint32_t version;
  void* (*create)(const WeftJitHost* host, char* error, size_t errorSize);
  int (*compile)(void* engine, const WeftJitRequest* request, WeftJitResult* result);
  void (*release)(void* engine, void* handle);
  uint32_t (*liveCode)(void* engine);  // compiled functions not yet released
  void (*destroy)(void* engine);
};

// Exported by libweft_jit.so; nullptr when `version` is not the module's.
using WeftJitModuleFn = const WeftJitModule* (*)(uint32_t version);
inline constexpr const char* kWeftJitModuleSymbol = "weft_jit_module";
inline constexpr const char* kWeftJitModuleFile = "libweft_jit.so";

}  // extern "C"
