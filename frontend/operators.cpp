// Unary and binary operators: constant folding and the choice between the register,
// immediate (sC/sB) and constant (K) forms of each opcode, as PUC Lua 5.4 chooses.
#include <cmath>

#include "frontend/codegen.h"

namespace weft::frontend {
namespace {

// Arithmetic operations in BinOpr order, then the two foldable unary ones.
constexpr int kOpUnm = 12;
constexpr int kOpBNot = 13;

bool toIntegerExact(const ExpDesc& e, int64_t& out) {
  if (e.k == ExpKind::KInt) {
    out = e.ival;
    return true;
  }
  double d = e.nval;
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || std::floor(d) != d) return false;
  out = static_cast<int64_t>(d);
  return true;
}

double toFloat(const ExpDesc& e) { return e.k == ExpKind::KInt ? static_cast<double>(e.ival) : e.nval; }

bool fitsC(int64_t i) { return static_cast<uint64_t>(i) + kOffsetSC <= static_cast<uint64_t>(kMaxArgC); }
int int2sC(int i) { return i + kOffsetSC; }

bool isKint(const ExpDesc& e) { return e.k == ExpKind::KInt && !e.hasJumps(); }
bool isSCint(const ExpDesc& e) { return isKint(e) && fitsC(e.ival); }

bool isSCnumber(const ExpDesc& e, int& imm, bool& isFloat) {
  int64_t i;
  if (e.k == ExpKind::KInt) {
    i = e.ival;
  } else if (e.k == ExpKind::KFlt && toIntegerExact(e, i)) {
    isFloat = true;
  } else {
    return false;
  }
  if (e.hasJumps() || !fitsC(i)) return false;
  imm = int2sC(static_cast<int>(i));
  return true;
}

int64_t shiftLeft(int64_t x, int64_t y) {
  uint64_t ux = static_cast<uint64_t>(x);
  if (y < 0) return y <= -64 ? 0 : static_cast<int64_t>(ux >> static_cast<unsigned>(-y));
  return y >= 64 ? 0 : static_cast<int64_t>(ux << static_cast<unsigned>(y));
}

int64_t intArith(int op, int64_t a, int64_t b) {
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case static_cast<int>(BinOpr::Add): return static_cast<int64_t>(ua + ub);
    case static_cast<int>(BinOpr::Sub): return static_cast<int64_t>(ua - ub);
    case static_cast<int>(BinOpr::Mul): return static_cast<int64_t>(ua * ub);
    case static_cast<int>(BinOpr::Mod): {
      if (b == -1) return 0;
      int64_t m = a % b;
      if (m != 0 && (m ^ b) < 0) m += b;
      return m;
    }
    case static_cast<int>(BinOpr::IDiv): {
      if (b == -1) return static_cast<int64_t>(0u - ua);
      int64_t q = a / b;
      if ((a % b != 0) && ((a ^ b) < 0)) q -= 1;
      return q;
    }
    case static_cast<int>(BinOpr::BAnd): return static_cast<int64_t>(ua & ub);
    case static_cast<int>(BinOpr::BOr): return static_cast<int64_t>(ua | ub);
    case static_cast<int>(BinOpr::BXor): return static_cast<int64_t>(ua ^ ub);
    case static_cast<int>(BinOpr::Shl): return shiftLeft(a, b);
    case static_cast<int>(BinOpr::Shr): return shiftLeft(a, static_cast<int64_t>(0u - ub));
    case kOpUnm: return static_cast<int64_t>(0u - ua);
    case kOpBNot: return static_cast<int64_t>(~ua);
    default: return 0;
  }
}

double floatArith(int op, double a, double b) {
  switch (op) {
    case static_cast<int>(BinOpr::Add): return a + b;
    case static_cast<int>(BinOpr::Sub): return a - b;
    case static_cast<int>(BinOpr::Mul): return a * b;
    case static_cast<int>(BinOpr::Div): return a / b;
    case static_cast<int>(BinOpr::Pow): return b == 2 ? a * a : std::pow(a, b);
    case static_cast<int>(BinOpr::IDiv): return std::floor(a / b);
    case static_cast<int>(BinOpr::Mod): {
      // fmod truncates; a non-zero remainder whose sign differs from the divisor's moves
      // by one divisor (the rule of floatMod in vm/number.cpp, which the folder must match).
      double m = std::fmod(a, b);
      if (m != 0 && ((m > 0) != (b > 0))) m += b;
      return m;
    }
    case kOpUnm: return -a;
    default: return 0;
  }
}

bool isBitwise(int op) {
  return (op >= static_cast<int>(BinOpr::BAnd) && op <= static_cast<int>(BinOpr::Shr)) || op == kOpBNot;
}

}  // namespace

bool FuncState::constFolding(int op, ExpDesc& e1, const ExpDesc& e2) {
  if (!isNumeral(e1) || !isNumeral(e2)) return false;
  int64_t i1, i2;
  if (isBitwise(op)) {
    if (!toIntegerExact(e1, i1) || !toIntegerExact(e2, i2)) return false;
    e1.k = ExpKind::KInt;
    e1.ival = intArith(op, i1, i2);
    return true;
  }
  bool divides = op == static_cast<int>(BinOpr::Div) || op == static_cast<int>(BinOpr::IDiv) ||
                 op == static_cast<int>(BinOpr::Mod);
  if (divides && toFloat(e2) == 0) return false;
  bool floatOnly = op == static_cast<int>(BinOpr::Div) || op == static_cast<int>(BinOpr::Pow);
  if (!floatOnly && e1.k == ExpKind::KInt && e2.k == ExpKind::KInt) {
    e1.ival = intArith(op, e1.ival, e2.ival);
    return true;
  }
  double n = floatArith(op, toFloat(e1), toFloat(e2));
  if (std::isnan(n) || n == 0) return false;  // never fold NaN or a possible -0.0
  e1.k = ExpKind::KFlt;
  e1.nval = n;
  return true;
}

void FuncState::codeUnExpVal(Op op, ExpDesc& e, int line) {
  int r = exp2anyreg(e);
  freeExp(e);
  e.info = codeABC(op, 0, r, 0);
  e.k = ExpKind::Reloc;
  fixLine(line);
}

void FuncState::prefix(UnOpr op, ExpDesc& e, int line) {
  dischargeVars(e);
  ExpDesc zero = ExpDesc::make(ExpKind::KInt);
  switch (op) {
    case UnOpr::Minus:
      if (constFolding(kOpUnm, e, zero)) break;
      codeUnExpVal(Op::UNM, e, line);
      break;
    case UnOpr::BNot:
      if (constFolding(kOpBNot, e, zero)) break;
      codeUnExpVal(Op::BNOT, e, line);
      break;
    case UnOpr::Len:
      codeUnExpVal(Op::LEN, e, line);
      break;
    case UnOpr::Not:
      codeNot(e);
      break;
    default:
      break;
  }
}

void FuncState::finishBinExpVal(ExpDesc& e1, ExpDesc& e2, Op op, int v2, bool flip, int line,
                                Op mmop, MetaEvent event) {
  int v1 = exp2anyreg(e1);
  int pcOp = codeABC(op, 0, v1, v2);
  freeExps(e1, e2);
  e1.info = pcOp;
  e1.k = ExpKind::Reloc;
  fixLine(line);
  codeABC(mmop, v1, v2, static_cast<int>(event), flip);
  fixLine(line);
}

void FuncState::codeBinExpVal(Op op, ExpDesc& e1, ExpDesc& e2, int line) {
  int v2 = exp2anyreg(e2);
  auto event = static_cast<MetaEvent>(static_cast<int>(op) - static_cast<int>(Op::ADD) + static_cast<int>(MetaEvent::Add));
  finishBinExpVal(e1, e2, op, v2, false, line, Op::MMBIN, event);
}

void FuncState::codeBinI(Op op, ExpDesc& e1, ExpDesc& e2, bool flip, int line, MetaEvent event) {
  int v2 = int2sC(static_cast<int>(e2.ival));
  finishBinExpVal(e1, e2, op, v2, flip, line, Op::MMBINI, event);
}

// "x - 1" as ADDI x -1 (and "x << 1" as SHRI x -1), with the metamethod seeing +1.
bool FuncState::finishBinExpNeg(ExpDesc& e1, ExpDesc& e2, Op op, int line, MetaEvent event) {
  if (!isKint(e2)) return false;
  int64_t i2 = e2.ival;
  if (!(fitsC(i2) && fitsC(-i2))) return false;
  int v2 = static_cast<int>(i2);
  finishBinExpVal(e1, e2, op, int2sC(-v2), false, line, Op::MMBINI, event);
  instr(pc() - 1) = setB(instr(pc() - 1), int2sC(v2));
  return true;
}

void FuncState::codeArith(BinOpr opr, ExpDesc& e1, ExpDesc& e2, bool flip, int line) {
  auto event = static_cast<MetaEvent>(static_cast<int>(opr) + static_cast<int>(MetaEvent::Add));
  if (isNumeral(e2) && exp2K(e2)) {
    auto op = static_cast<Op>(static_cast<int>(opr) + static_cast<int>(Op::ADDK));
    finishBinExpVal(e1, e2, op, e2.info, flip, line, Op::MMBINK, event);
    return;
  }
  if (flip) std::swap(e1, e2);
  codeBinExpVal(static_cast<Op>(static_cast<int>(opr) + static_cast<int>(Op::ADD)), e1, e2, line);
}

void FuncState::codeCommutative(BinOpr opr, ExpDesc& e1, ExpDesc& e2, int line) {
  bool flip = false;
  if (isNumeral(e1)) {
    std::swap(e1, e2);
    flip = true;
  }
  if (opr == BinOpr::Add && isSCint(e2)) codeBinI(Op::ADDI, e1, e2, flip, line, MetaEvent::Add);
  else codeArith(opr, e1, e2, flip, line);
}

void FuncState::codeBitwise(BinOpr opr, ExpDesc& e1, ExpDesc& e2, int line) {
  bool flip = false;
  // exp2K, not exp2RK: a constant that does not fit a K operand (past the 256th) stays a
  // constant here; loaded early into a register, it came after the other operand's
  // register and the two were freed out of order (1 ~ (2 or 3) gave 0).
  if (e1.k == ExpKind::KInt && exp2K(e1)) {
    std::swap(e1, e2);
    flip = true;
  } else if (!(e2.k == ExpKind::KInt && exp2K(e2))) {
    codeBinExpVal(static_cast<Op>(static_cast<int>(opr) + static_cast<int>(Op::ADD)), e1, e2, line);
    return;
  }
  auto op = static_cast<Op>(static_cast<int>(opr) + static_cast<int>(Op::ADDK));
  auto event = static_cast<MetaEvent>(static_cast<int>(opr) + static_cast<int>(MetaEvent::Add));
  finishBinExpVal(e1, e2, op, e2.info, flip, line, Op::MMBINK, event);
}

void FuncState::codeOrder(Op op, ExpDesc& e1, ExpDesc& e2) {
  int r1, r2, imm;
  bool isFloat = false;
  if (isSCnumber(e2, imm, isFloat)) {
    r1 = exp2anyreg(e1);
    r2 = imm;
    op = op == Op::LT ? Op::LTI : Op::LEI;
  } else if (isSCnumber(e1, imm, isFloat)) {
    r1 = exp2anyreg(e2);
    r2 = imm;
    op = op == Op::LT ? Op::GTI : Op::GEI;
  } else {
    r1 = exp2anyreg(e1);
    r2 = exp2anyreg(e2);
  }
  freeExps(e1, e2);
  e1.info = condJump(op, r1, r2, isFloat ? 1 : 0, true);
  e1.k = ExpKind::Jmp;
}

void FuncState::codeEq(BinOpr opr, ExpDesc& e1, ExpDesc& e2) {
  int r2, imm;
  bool isFloat = false;
  Op op;
  if (e1.k != ExpKind::NonReloc) std::swap(e1, e2);
  int r1 = exp2anyreg(e1);
  if (isSCnumber(e2, imm, isFloat)) {
    op = Op::EQI;
    r2 = imm;
  } else if (exp2RK(e2)) {
    op = Op::EQK;
    r2 = e2.info;
  } else {
    op = Op::EQ;
    r2 = exp2anyreg(e2);
  }
  freeExps(e1, e2);
  e1.info = condJump(op, r1, r2, isFloat ? 1 : 0, opr == BinOpr::Eq);
  e1.k = ExpKind::Jmp;
}

void FuncState::codeConcat(ExpDesc& e1, ExpDesc& e2, int line) {
  Instruction* ie2 = previousInstruction();
  if (getOp(*ie2) == Op::CONCAT && *ie2 != ~Instruction(0)) {
    int n = getB(*ie2);
    freeExp(e2);
    *ie2 = setB(setA(*ie2, e1.info), n + 1);
  } else {
    codeABC(Op::CONCAT, e1.info, 2, 0);
    freeExp(e2);
    fixLine(line);
  }
}

void FuncState::infix(BinOpr op, ExpDesc& v) {
  dischargeVars(v);
  switch (op) {
    case BinOpr::And: goIfTrue(v); break;
    case BinOpr::Or: goIfFalse(v); break;
    case BinOpr::Concat: exp2nextreg(v); break;
    case BinOpr::Eq: case BinOpr::Ne:
      if (!isNumeral(v)) exp2RK(v);
      break;
    case BinOpr::Lt: case BinOpr::Le: case BinOpr::Gt: case BinOpr::Ge: {
      int imm;
      bool isFloat;
      if (!isSCnumber(v, imm, isFloat)) exp2anyreg(v);
      break;
    }
    default:  // arithmetic and bitwise: keep numerals for folding
      if (!isNumeral(v)) exp2anyreg(v);
      break;
  }
}

void FuncState::posfix(BinOpr opr, ExpDesc& e1, ExpDesc& e2, int line) {
  dischargeVars(e2);
  if (opr <= BinOpr::Shr && constFolding(static_cast<int>(opr), e1, e2)) return;
  switch (opr) {
    case BinOpr::And:
      concatJumps(e2.f, e1.f);
      e1 = e2;
      break;
    case BinOpr::Or:
      concatJumps(e2.t, e1.t);
      e1 = e2;
      break;
    case BinOpr::Concat:
      exp2nextreg(e2);
      codeConcat(e1, e2, line);
      break;
    case BinOpr::Add: case BinOpr::Mul:
      codeCommutative(opr, e1, e2, line);
      break;
    case BinOpr::Sub:
      if (finishBinExpNeg(e1, e2, Op::ADDI, line, MetaEvent::Sub)) break;
      codeArith(opr, e1, e2, false, line);
      break;
    case BinOpr::Div: case BinOpr::IDiv: case BinOpr::Mod: case BinOpr::Pow:
      codeArith(opr, e1, e2, false, line);
      break;
    case BinOpr::BAnd: case BinOpr::BOr: case BinOpr::BXor:
      codeBitwise(opr, e1, e2, line);
      break;
    case BinOpr::Shl:
      if (isSCint(e1)) {
        std::swap(e1, e2);
        codeBinI(Op::SHLI, e1, e2, true, line, MetaEvent::Shl);
      } else if (!finishBinExpNeg(e1, e2, Op::SHRI, line, MetaEvent::Shl)) {
        codeBinExpVal(Op::SHL, e1, e2, line);
      }
      break;
    case BinOpr::Shr:
      if (isSCint(e2)) codeBinI(Op::SHRI, e1, e2, false, line, MetaEvent::Shr);
      else codeBinExpVal(Op::SHR, e1, e2, line);
      break;
    case BinOpr::Eq: case BinOpr::Ne:
      codeEq(opr, e1, e2);
      break;
    case BinOpr::Lt: case BinOpr::Le:
      codeOrder(opr == BinOpr::Lt ? Op::LT : Op::LE, e1, e2);
      break;
    case BinOpr::Gt: case BinOpr::Ge:
      std::swap(e1, e2);
      codeOrder(opr == BinOpr::Gt ? Op::LT : Op::LE, e1, e2);
      break;
    default:
      break;
  }
}

}  // namespace weft::frontend
