// Code generation for one function: registers, constants, jumps and the expression
// descriptors the parser hands over. The instruction selection follows PUC Lua 5.4's
// code generator so that our bytecode matches `luac5.4 -l` instruction for instruction.
//
// Invariants:
//  1. Registers are allocated and freed in stack order: freereg only moves by
//     reserveRegs() and freeReg(); registers below nvarstack() hold active locals.
//  2. A jump list is threaded through the sJ fields of OP_JMP instructions and ends
//     with kNoJump; patching turns every element into a real offset before finish().
//  3. lastTarget_ is the last pc that is a jump target: peephole merges (LOADNIL,
//     CONCAT) never look across it.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontend/lexer.h"
#include "frontend/proto.h"

namespace weft::frontend {

inline constexpr int kNoJump = -1;
inline constexpr int kMultRet = -1;
inline constexpr int kMaxVars = 200;
inline constexpr int kMaxUpvalues = 255;
inline constexpr int kMaxShortString = 40;

enum class ExpKind : uint8_t {
  Void,      // empty expression list / no value
  Nil, True, False,
  K,         // info = constant index
  KFlt,      // nval
  KInt,      // ival
  KStr,      // strval
  NonReloc,  // info = result register
  Local,     // ridx = register, vidx = index among the function's active variables
  Upval,     // info = upvalue index
  Const,     // info = absolute index in DynData::actvar (compile-time constant)
  Indexed,   // indT = table register, indIdx = key register
  IndexUp,   // indT = upvalue, indIdx = key constant
  IndexI,    // indT = table register, indIdx = integer key
  IndexStr,  // indT = table register, indIdx = key constant (short string)
  Jmp,       // info = pc of the test's jump
  Reloc,     // info = pc of the instruction whose A can be set
  Call,      // info = pc of OP_CALL
  Vararg,    // info = pc of OP_VARARG
};

struct ExpDesc {
  ExpKind k = ExpKind::Void;
  int info = 0;
  int64_t ival = 0;
  double nval = 0;
  std::string_view strval;
  int indT = 0;
  int indIdx = 0;
  int ridx = 0;
  int vidx = 0;
  int t = kNoJump;  // patch list of "exit when true"
  int f = kNoJump;  // patch list of "exit when false"

  static ExpDesc make(ExpKind kind, int info = 0) {
    ExpDesc e;
    e.k = kind;
    e.info = info;
    return e;
  }
  bool hasJumps() const { return t != f; }
  bool isVar() const { return k >= ExpKind::Local && k <= ExpKind::IndexStr; }
  bool isIndexed() const { return k >= ExpKind::Indexed && k <= ExpKind::IndexStr; }
  bool hasMultRet() const { return k == ExpKind::Call || k == ExpKind::Vararg; }
};

struct VarDesc {
  std::string_view name;
  VarKind kind = VarKind::Regular;
  int ridx = 0;       // register holding the variable
  int pidx = 0;       // index in ProtoData::locals
  ExpDesc constant;   // the value of a compile-time constant
};

struct LabelDesc {
  std::string_view name;
  int pc = 0;
  int line = 0;
  int nactvar = 0;  // active variables at that point
  bool close = false;
};

struct ConstKeyHash {
  size_t operator()(const std::pair<int, uint64_t>& p) const {
    return std::hash<uint64_t>()(p.second) * 31 + static_cast<size_t>(p.first);
  }
};

// State shared by all functions of one compilation.
struct DynData {
  std::vector<VarDesc> actvar;
  std::vector<LabelDesc> gotos;   // pending gotos (and breaks)
  std::vector<LabelDesc> labels;  // active labels
  // Constant cache: value -> index most recently given to it, in whichever function.
  // Shared like Lua's scanner table, so constant numbering matches luac exactly (a
  // nested function can evict an entry, and the outer one then adds a duplicate).
  std::unordered_map<std::pair<int, uint64_t>, int, ConstKeyHash> kcache;
  std::unordered_map<std::string_view, int> scache;
};

enum class BinOpr : uint8_t {
  Add, Sub, Mul, Mod, Pow, Div, IDiv, BAnd, BOr, BXor, Shl, Shr, Concat,
  Eq, Lt, Le, Ne, Gt, Ge, And, Or, None,
};
enum class UnOpr : uint8_t { Minus, BNot, Not, Len, None };

struct BlockScope {
  BlockScope* previous = nullptr;
  int firstLabel = 0;
  int firstGoto = 0;
  int nactvar = 0;        // active locals outside the block
  bool upval = false;     // some variable of the block is captured
  bool isLoop = false;
  bool insideTbc = false;
};

class FuncState {
 public:
  FuncState(ProtoData* proto, FuncState* prev, Lexer& lex, DynData& dyd);

  ProtoData* proto() const { return f_; }
  FuncState* prev() const { return prev_; }
  int pc() const { return static_cast<int>(f_->code.size()); }
  Instruction& instr(int pc) { return f_->code[static_cast<size_t>(pc)]; }
  Instruction& instrOf(const ExpDesc& e) { return instr(e.info); }

  // Variables (the parser owns the scoping rules; these are the shared views).
  VarDesc& localVar(int vidx) { return dyd_.actvar[static_cast<size_t>(firstLocal_ + vidx)]; }
  int regLevel(int nvar);
  int nvarstack() { return regLevel(nactvar_); }

  // Emission.
  int code(Instruction i);
  int codeABC(Op o, int a, int b, int c, bool k = false);
  int codeABx(Op o, int a, unsigned bx);
  int codeAsBx(Op o, int a, int sbx);
  int codeSJ(Op o, int sj);
  int codeExtraArg(int ax);
  int codeK(int reg, int k);
  void fixLine(int line);
  void removeLastInstruction();
  void loadNil(int from, int n);
  void loadInt(int reg, int64_t i);
  void loadFloat(int reg, double d);
  void ret(int first, int nret);
  void setTableSize(int pc, int ra, int asize, int hsize);
  void setList(int base, int nelems, int tostore);
  void finish();

  // Registers.
  void checkStack(int n);
  void reserveRegs(int n);
  void freeReg(int reg);
  void freeRegs(int r1, int r2);
  void freeExp(const ExpDesc& e);
  void freeExps(const ExpDesc& e1, const ExpDesc& e2);

  // Constants.
  int stringK(std::string_view s);
  int intK(int64_t v);
  int numberK(double v);
  int boolK(bool v);
  int nilK();

  // Jumps.
  int jump();
  int getLabel();
  void concatJumps(int& l1, int l2);
  void patchList(int list, int target);
  void patchToHere(int list);
  void jumpTo(int target) { patchList(jump(), target); }

  // Expressions.
  void dischargeVars(ExpDesc& e);
  void exp2nextreg(ExpDesc& e);
  int exp2anyreg(ExpDesc& e);
  void exp2anyregup(ExpDesc& e);
  void exp2val(ExpDesc& e);
  bool exp2K(ExpDesc& e);
  bool exp2RK(ExpDesc& e);
  bool exp2const(const ExpDesc& e, ExpDesc& value);
  void setReturns(ExpDesc& e, int nresults);
  void setMultRet(ExpDesc& e) { setReturns(e, kMultRet); }
  void setOneRet(ExpDesc& e);
  void storeVar(const ExpDesc& var, ExpDesc& ex);
  void self(ExpDesc& e, ExpDesc& key);
  void indexed(ExpDesc& t, ExpDesc& k);
  void goIfTrue(ExpDesc& e);
  void goIfFalse(ExpDesc& e);
  void prefix(UnOpr op, ExpDesc& e, int line);
  void infix(BinOpr op, ExpDesc& v);
  void posfix(BinOpr op, ExpDesc& e1, ExpDesc& e2, int line);

  // Per-function parser state (lparser's FuncState fields).
  BlockScope* bl_ = nullptr;
  int firstLocal_ = 0;
  int firstLabel_ = 0;
  int nactvar_ = 0;
  int freereg_ = 0;
  bool needClose_ = false;

 private:
  Instruction* previousInstruction();
  int getJump(int pc);
  void fixJump(int pc, int dest);
  Instruction* jumpControl(int pc);
  bool patchTestReg(int node, int reg);
  void removeValues(int list);
  void patchListAux(int list, int vtarget, int reg, int dtarget);
  bool needValue(int list);
  int condJump(Op op, int a, int b, int c, bool k);
  int codeLoadBool(int a, Op op);
  void discharge2reg(ExpDesc& e, int reg);
  void discharge2anyreg(ExpDesc& e);
  void exp2reg(ExpDesc& e, int reg);
  void str2K(ExpDesc& e);
  void const2exp(const ExpDesc& value, ExpDesc& e);
  void codeABRK(Op o, int a, int b, ExpDesc& ec);
  bool isKstr(const ExpDesc& e);
  void negateCondition(ExpDesc& e);
  int jumpOnCond(ExpDesc& e, bool cond);
  void codeNot(ExpDesc& e);
  int addConstant(const Constant& c, uint64_t key, int kind);
  // Operators (operators.cpp).
  bool constFolding(int op, ExpDesc& e1, const ExpDesc& e2);
  void codeUnExpVal(Op op, ExpDesc& e, int line);
  void finishBinExpVal(ExpDesc& e1, ExpDesc& e2, Op op, int v2, bool flip, int line, Op mmop,
                       MetaEvent event);
  void codeBinExpVal(Op op, ExpDesc& e1, ExpDesc& e2, int line);
  void codeBinI(Op op, ExpDesc& e1, ExpDesc& e2, bool flip, int line, MetaEvent event);
  bool finishBinExpNeg(ExpDesc& e1, ExpDesc& e2, Op op, int line, MetaEvent event);
  void codeArith(BinOpr opr, ExpDesc& e1, ExpDesc& e2, bool flip, int line);
  void codeCommutative(BinOpr opr, ExpDesc& e1, ExpDesc& e2, int line);
  void codeBitwise(BinOpr opr, ExpDesc& e1, ExpDesc& e2, int line);
  void codeOrder(Op op, ExpDesc& e1, ExpDesc& e2);
  void codeEq(BinOpr opr, ExpDesc& e1, ExpDesc& e2);
  void codeConcat(ExpDesc& e1, ExpDesc& e2, int line);

  ProtoData* f_;
  FuncState* prev_;
  Lexer& lex_;
  DynData& dyd_;
  int lastTarget_ = 0;
};

// Expression predicates shared with the parser.
bool isNumeral(const ExpDesc& e);

}  // namespace weft::frontend
