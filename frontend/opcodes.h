// The instruction set, declared once. Everything that needs the opcode list (the
// compiler, the listing, the interpreter's dispatch table, the JIT) expands WEFT_OPCODES.
//
// Encoding (32-bit instructions; the same field layout as PUC Lua 5.4, so its
// bytecode documentation describes ours):
//   bits 0..6  opcode            iABC : A(8) k(1) B(8) C(8)
//   bits 7..14 A                 iABx : A(8) Bx(17, unsigned)
//   bit  15    k                 iAsBx: A(8) sBx(17, signed, excess kOffsetSBx)
//   bits 16..23 B                iAx  : Ax(25)
//   bits 24..31 C                isJ  : sJ(25, signed, excess kOffsetSJ)
// sC/sB are C/B read as signed (excess kOffsetSC). R[x] is register x of the frame,
// K[x] constant x, U[x] upvalue x, RK(C) is K[C] when k is set and R[C] otherwise.
//
// Invariants:
//  1. Every opcode that can fall back to a metamethod after an arithmetic fast path
//     (OP_ADD..OP_SHR, OP_ADDI, OP_*K, OP_SHRI, OP_SHLI) is followed by an OP_MMBIN,
//     OP_MMBINI or OP_MMBINK that the fast path skips.
//  2. A test or comparison (OP_EQ..OP_GEI, OP_TEST, OP_TESTSET) is followed by OP_JMP:
//     when the condition differs from k the next instruction is skipped, otherwise the
//     jump is taken.
//  3. OP_LOADKX and OP_NEWTABLE/OP_SETLIST with a large count are followed by OP_EXTRAARG.
#pragma once

#include <cstdint>

namespace weft::frontend {

// X(name, format, description)
#define WEFT_OPCODES(X)                                                              \
  X(MOVE, ABC, "R[A] := R[B]")                                                      \
  X(LOADI, AsBx, "R[A] := sBx (integer)")                                           \
  X(LOADF, AsBx, "R[A] := (float)sBx")                                              \
  X(LOADK, ABx, "R[A] := K[Bx]")                                                    \
  X(LOADKX, ABx, "R[A] := K[extra arg]")                                            \
  X(LOADFALSE, ABC, "R[A] := false")                                                \
  X(LFALSESKIP, ABC, "R[A] := false; pc++")                                         \
  X(LOADTRUE, ABC, "R[A] := true")                                                  \
  X(LOADNIL, ABC, "R[A], R[A+1], ..., R[A+B] := nil")                               \
  X(GETUPVAL, ABC, "R[A] := U[B]")                                                  \
  X(SETUPVAL, ABC, "U[B] := R[A]")                                                  \
  X(GETTABUP, ABC, "R[A] := U[B][K[C]:shortstring]")                                \
  X(GETTABLE, ABC, "R[A] := R[B][R[C]]")                                            \
  X(GETI, ABC, "R[A] := R[B][C]")                                                   \
  X(GETFIELD, ABC, "R[A] := R[B][K[C]:shortstring]")                                \
  X(SETTABUP, ABC, "U[A][K[B]:shortstring] := RK(C)")                               \
  X(SETTABLE, ABC, "R[A][R[B]] := RK(C)")                                           \
  X(SETI, ABC, "R[A][B] := RK(C)")                                                  \
  X(SETFIELD, ABC, "R[A][K[B]:shortstring] := RK(C)")                               \
  X(NEWTABLE, ABC, "R[A] := {} (B: log2(hash size)+1, C: array size; k: EXTRAARG)") \
  X(SELF, ABC, "R[A+1] := R[B]; R[A] := R[B][RK(C):string]")                        \
  X(ADDI, ABC, "R[A] := R[B] + sC")                                                 \
  X(ADDK, ABC, "R[A] := R[B] + K[C]:number")                                        \
  X(SUBK, ABC, "R[A] := R[B] - K[C]:number")                                        \
  X(MULK, ABC, "R[A] := R[B] * K[C]:number")                                        \
  X(MODK, ABC, "R[A] := R[B] % K[C]:number")                                        \
  X(POWK, ABC, "R[A] := R[B] ^ K[C]:number")                                        \
  X(DIVK, ABC, "R[A] := R[B] / K[C]:number")                                        \
  X(IDIVK, ABC, "R[A] := R[B] // K[C]:number")                                      \
  X(BANDK, ABC, "R[A] := R[B] & K[C]:integer")                                      \
  X(BORK, ABC, "R[A] := R[B] | K[C]:integer")                                       \
  X(BXORK, ABC, "R[A] := R[B] ~ K[C]:integer")                                      \
  X(SHRI, ABC, "R[A] := R[B] >> sC")                                                \
  X(SHLI, ABC, "R[A] := sC << R[B]")                                                \
  X(ADD, ABC, "R[A] := R[B] + R[C]")                                                \
  X(SUB, ABC, "R[A] := R[B] - R[C]")                                                \
  X(MUL, ABC, "R[A] := R[B] * R[C]")                                                \
  X(MOD, ABC, "R[A] := R[B] % R[C]")                                                \
  X(POW, ABC, "R[A] := R[B] ^ R[C]")                                                \
  X(DIV, ABC, "R[A] := R[B] / R[C]")                                                \
  X(IDIV, ABC, "R[A] := R[B] // R[C]")                                              \
  X(BAND, ABC, "R[A] := R[B] & R[C]")                                               \
  X(BOR, ABC, "R[A] := R[B] | R[C]")                                                \
  X(BXOR, ABC, "R[A] := R[B] ~ R[C]")                                               \
  X(SHL, ABC, "R[A] := R[B] << R[C]")                                               \
  X(SHR, ABC, "R[A] := R[B] >> R[C]")                                               \
  X(MMBIN, ABC, "call C metamethod over R[A] and R[B]; result to the previous op's A") \
  X(MMBINI, ABC, "call C metamethod over R[A] and sB (k: operands flipped)")        \
  X(MMBINK, ABC, "call C metamethod over R[A] and K[B] (k: operands flipped)")      \
  X(UNM, ABC, "R[A] := -R[B]")                                                      \
  X(BNOT, ABC, "R[A] := ~R[B]")                                                     \
  X(NOT, ABC, "R[A] := not R[B]")                                                   \
  X(LEN, ABC, "R[A] := #R[B] (length operator)")                                    \
  X(CONCAT, ABC, "R[A] := R[A].. ... ..R[A + B - 1]")                               \
  X(CLOSE, ABC, "close all upvalues and to-be-closed variables >= R[A]")            \
  X(TBC, ABC, "mark variable A \"to be closed\"")                                   \
  X(JMP, sJ, "pc += sJ")                                                            \
  X(EQ, ABC, "if ((R[A] == R[B]) ~= k) then pc++")                                  \
  X(LT, ABC, "if ((R[A] <  R[B]) ~= k) then pc++")                                  \
  X(LE, ABC, "if ((R[A] <= R[B]) ~= k) then pc++")                                  \
  X(EQK, ABC, "if ((R[A] == K[B]) ~= k) then pc++")                                 \
  X(EQI, ABC, "if ((R[A] == sB) ~= k) then pc++ (C: operand was a float)")          \
  X(LTI, ABC, "if ((R[A] < sB) ~= k) then pc++ (C: operand was a float)")           \
  X(LEI, ABC, "if ((R[A] <= sB) ~= k) then pc++ (C: operand was a float)")          \
  X(GTI, ABC, "if ((R[A] > sB) ~= k) then pc++ (C: operand was a float)")           \
  X(GEI, ABC, "if ((R[A] >= sB) ~= k) then pc++ (C: operand was a float)")          \
  X(TEST, ABC, "if (not R[A] == k) then pc++")                                      \
  X(TESTSET, ABC, "if (not R[B] == k) then pc++ else R[A] := R[B]")                 \
  X(CALL, ABC, "R[A], ... ,R[A+C-2] := R[A](R[A+1], ... ,R[A+B-1])")               \
  X(TAILCALL, ABC, "return R[A](R[A+1], ... ,R[A+B-1]) (k: close upvalues; C: vararg params+1)") \
  X(RETURN, ABC, "return R[A], ... ,R[A+B-2] (k: close; C: vararg params+1)")      \
  X(RETURN0, ABC, "return")                                                         \
  X(RETURN1, ABC, "return R[A]")                                                    \
  X(FORLOOP, ABx, "update counters; if loop continues then pc-=Bx;")                \
  X(FORPREP, ABx, "check values and prepare counters; if not to run then pc+=Bx+1;") \
  X(TFORPREP, ABx, "create upvalue for R[A + 3]; pc+=Bx")                           \
  X(TFORCALL, ABC, "R[A+4], ... ,R[A+3+C] := R[A](R[A+1], R[A+2]);")                \
  X(TFORLOOP, ABx, "if R[A+4] ~= nil then { R[A+2]=R[A+4]; pc -= Bx }")             \
  X(SETLIST, ABC, "R[A][C+i] := R[A+i], 1 <= i <= B (B 0: up to top; k: EXTRAARG)") \
  X(CLOSURE, ABx, "R[A] := closure(KPROTO[Bx])")                                    \
  X(VARARG, ABC, "R[A], R[A+1], ..., R[A+C-2] = vararg")                            \
  X(VARARGPREP, ABC, "(adjust vararg parameters; A: number of fixed parameters)")   \
  X(EXTRAARG, Ax, "extra (larger) argument for previous opcode")

enum class OpFormat : uint8_t { ABC, ABx, AsBx, Ax, sJ };

enum class Op : uint8_t {
#define WEFT_OP_ENUM(name, fmt, desc) name,
  WEFT_OPCODES(WEFT_OP_ENUM)
#undef WEFT_OP_ENUM
};

inline constexpr int kNumOpcodes = 0
#define WEFT_OP_COUNT(name, fmt, desc) +1
    WEFT_OPCODES(WEFT_OP_COUNT)
#undef WEFT_OP_COUNT
    ;

inline constexpr const char* kOpNames[] = {
#define WEFT_OP_NAME(name, fmt, desc) #name,
    WEFT_OPCODES(WEFT_OP_NAME)
#undef WEFT_OP_NAME
};

inline constexpr OpFormat kOpFormats[] = {
#define WEFT_OP_FMT(name, fmt, desc) OpFormat::fmt,
    WEFT_OPCODES(WEFT_OP_FMT)
#undef WEFT_OP_FMT
};

using Instruction = uint32_t;

inline constexpr int kSizeOp = 7, kSizeA = 8, kSizeB = 8, kSizeC = 8, kSizeBx = 17, kSizeAx = 25;
inline constexpr int kPosA = 7, kPosK = 15, kPosB = 16, kPosC = 24, kPosBx = 15, kPosAx = 7;
inline constexpr int kMaxArgA = (1 << kSizeA) - 1;
inline constexpr int kMaxArgB = (1 << kSizeB) - 1;
inline constexpr int kMaxArgC = (1 << kSizeC) - 1;
inline constexpr int kMaxArgBx = (1 << kSizeBx) - 1;
inline constexpr int kMaxArgAx = (1 << kSizeAx) - 1;
inline constexpr int kOffsetSBx = kMaxArgBx >> 1;
inline constexpr int kOffsetSJ = kMaxArgAx >> 1;
inline constexpr int kOffsetSC = kMaxArgC >> 1;
inline constexpr int kMaxRegisters = 255;  // registers per frame, as in Lua
inline constexpr int kNoReg = kMaxArgA;     // "no register"
// OP_SETLIST flushes every kFieldsPerFlush list items.
inline constexpr int kFieldsPerFlush = 50;

constexpr Op getOp(Instruction i) { return static_cast<Op>(i & 0x7f); }
constexpr int getA(Instruction i) { return (i >> kPosA) & 0xff; }
constexpr int getB(Instruction i) { return (i >> kPosB) & 0xff; }
constexpr int getC(Instruction i) { return (i >> kPosC) & 0xff; }
constexpr int getSB(Instruction i) { return getB(i) - kOffsetSC; }
constexpr int getSC(Instruction i) { return getC(i) - kOffsetSC; }
constexpr bool getK(Instruction i) { return (i >> kPosK) & 1; }
constexpr int getBx(Instruction i) { return static_cast<int>(i >> kPosBx); }
constexpr int getSBx(Instruction i) { return getBx(i) - kOffsetSBx; }
constexpr int getAx(Instruction i) { return static_cast<int>(i >> kPosAx); }
constexpr int getSJ(Instruction i) { return getAx(i) - kOffsetSJ; }

constexpr Instruction makeABC(Op o, int a, int b, int c, bool k = false) {
  return static_cast<Instruction>(o) | (Instruction(a) << kPosA) | (Instruction(k) << kPosK) |
         (Instruction(b) << kPosB) | (Instruction(c) << kPosC);
}
constexpr Instruction makeABx(Op o, int a, unsigned bx) {
  return static_cast<Instruction>(o) | (Instruction(a) << kPosA) | (Instruction(bx) << kPosBx);
}
constexpr Instruction makeAsBx(Op o, int a, int sbx) { return makeABx(o, a, unsigned(sbx + kOffsetSBx)); }
constexpr Instruction makeAx(Op o, int ax) { return static_cast<Instruction>(o) | (Instruction(ax) << kPosAx); }
constexpr Instruction makeSJ(Op o, int sj) { return makeAx(o, sj + kOffsetSJ); }

// Rewriting fields in place (the compiler patches jumps and registers).
constexpr Instruction setA(Instruction i, int a) { return (i & ~(Instruction(0xff) << kPosA)) | (Instruction(a) << kPosA); }
constexpr Instruction setB(Instruction i, int b) { return (i & ~(Instruction(0xff) << kPosB)) | (Instruction(b) << kPosB); }
constexpr Instruction setC(Instruction i, int c) { return (i & ~(Instruction(0xff) << kPosC)) | (Instruction(c) << kPosC); }
constexpr Instruction setK(Instruction i, bool k) { return (i & ~(Instruction(1) << kPosK)) | (Instruction(k) << kPosK); }
constexpr Instruction setBx(Instruction i, unsigned bx) { return (i & 0x7fff) | (Instruction(bx) << kPosBx); }
constexpr Instruction setSJ(Instruction i, int sj) { return (i & 0x7f) | (Instruction(sj + kOffsetSJ) << kPosAx); }

// Metamethod events as OP_MMBIN* carry them in C (the order of Lua's TM enum for the
// arithmetic and bitwise events, so listings match luac).
enum class MetaEvent : uint8_t {
  Index, NewIndex, Gc, Mode, Len, Eq, Add, Sub, Mul, Mod, Pow, Div, IDiv,
  BAnd, BOr, BXor, Shl, Shr, Unm, BNot, Lt, Le, Concat, Call, Close,
};

}  // namespace weft::frontend
