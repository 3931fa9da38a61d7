// Metamethods (Lua 5.4 manual §2.4): lookup with the absence cache, the slow paths of
// the opcodes (index/newindex chains, arithmetic, comparison, concatenation, length),
// and their synchronous forms for natives.
//
// Protocol: an opcode's slow path (the *Loop functions) either completes the opcode or
// calls a metamethod as a frame marked kFrameFinishOp (a Lua metamethod runs in the same
// loop invocation, so a coroutine may yield inside it); finishOpMayGC then completes the
// interrupted instruction (store the result, or do the conditional jump) when that
// frame returns. The loop saves pc before, and reloads its frame after, every *Loop call.
// The *Sync functions run the metamethod to completion in a nested loop invocation.
#pragma once

#include "frontend/opcodes.h"
#include "vm/debug.h"
#include "vm/interp.h"
#include "vm/number.h"

namespace weft::vm {

Table* metatableOf(State& S, const Value& v);
// A metamethod from a metatable (nil if absent); uses the absence cache for the first
// kFastMetaCount events.
Value metaField(State& S, Table* mt, Meta event);
Value metamethodOf(State& S, const Value& v, Meta event);
// A binary event's metamethod: the first operand's, else the second's (nil if neither).
Value binaryMetamethod(State& S, const Value& a, const Value& b, Meta event);
Meta metaOfEvent(frontend::MetaEvent e);

// Lua equality without metamethods.
bool rawEquals(const Value& a, const Value& b);

// "attempt to <op> a <type> value<varinfo>"
Status typeErrorMayGC(State& S, ThreadData* t, const Value& v, VarRef ref, const char* op);

// Opcode slow paths. `dest` is a stack index.
Status indexLoopMayGC(State& S, ThreadData* t, const Value& obj, const Value& key, VarRef ref, uint32_t dest);
Status newIndexLoopMayGC(State& S, ThreadData* t, const Value& obj, const Value& key, const Value& val, VarRef ref);
Status arithLoopMayGC(State& S, ThreadData* t, const Value& a, const Value& b, Meta event, VarRef ra, VarRef rb, uint32_t dest);
Status unaryLoopMayGC(State& S, ThreadData* t, const Value& a, Meta event, VarRef ref, uint32_t dest);
// Comparisons: when decided without a metamethod, applies the conditional jump of the
// instruction being executed (f->pc already saved past it).
Status compareLoopMayGC(State& S, ThreadData* t, const Value& a, const Value& b, Meta event);
Status equalsLoopMayGC(State& S, ThreadData* t, const Value& a, const Value& b);
Status concatLoopMayGC(State& S, ThreadData* t, uint32_t first, uint32_t count);
// OP_CONCAT's fast path: when the `count` values from stack index `first` are all
// strings or numbers, joins them into the first (no metamethod) and returns true; false
// when one is neither, or the heap refused the result, having changed nothing. Never
// collects: the allocation's collection request waits for the caller's next safepoint.
bool concatStrNums(State& S, ThreadData* t, uint32_t first, uint32_t count);
// Completes the instruction interrupted by a metamethod whose result is at `result`, or
// makes CLOSE or RETURN run again after a __close that yielded.
Status finishOpMayGC(State& S, ThreadData* t, uint32_t result);

// Synchronous forms.
Status indexMayGC(State& S, ThreadData* t, const Value& obj, const Value& key, Value& out);
Status newIndexMayGC(State& S, ThreadData* t, const Value& obj, const Value& key, const Value& val);
Status arithMayGC(State& S, ThreadData* t, const Value& a, const Value& b, Meta event, Value& out);
Status lengthMayGC(State& S, ThreadData* t, const Value& v, Value& out);
Status lessMayGC(State& S, ThreadData* t, const Value& a, const Value& b, Meta event, bool& out);
Status equalsMayGC(State& S, ThreadData* t, const Value& a, const Value& b, bool& out);
// Concatenates [first, first+count) in place; the result ends at `first`.
Status concatMayGC(State& S, ThreadData* t, uint32_t first, uint32_t count);
// tostring: __tostring, __name, default formats.
Status toStringMayGC(State& S, ThreadData* t, const Value& v, String*& out);
// Calls fn(args...) and returns its first result (nil when none).
Status callValueMayGC(State& S, ThreadData* t, const Value& fn, const Value* args, int nargs, Value& out);

// Formats "table: 0x...." style names (also for __name).
std::string defaultToString(State& S, const Value& v);
// luaL_typename with __name.
std::string typeNameWithMeta(State& S, const Value& v);

}  // namespace weft::vm
