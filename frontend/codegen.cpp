// Registers, constants, jump lists and expression discharge for one function.
#include "frontend/codegen.h"

#include <cmath>
#include <cstring>

namespace weft::frontend {
namespace {

bool fitsSBx(int64_t i) { return -kOffsetSBx <= i && i <= kMaxArgBx - kOffsetSBx; }

// Float with an exact integer value that fits in int64.
bool floatToIntegerExact(double d, int64_t& out) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return false;
  double fl = std::floor(d);
  if (fl != d) return false;
  out = static_cast<int64_t>(fl);
  return true;
}

bool isTestOp(Op op) {
  return (op >= Op::EQ && op <= Op::TESTSET);
}

}  // namespace

bool isNumeral(const ExpDesc& e) {
  return !e.hasJumps() && (e.k == ExpKind::KInt || e.k == ExpKind::KFlt);
}

FuncState::FuncState(ProtoData* proto, FuncState* prev, Lexer& lex, DynData& dyd)
    : f_(proto), prev_(prev), lex_(lex), dyd_(dyd) {}

int FuncState::regLevel(int nvar) {
  while (nvar-- > 0) {
    const VarDesc& vd = localVar(nvar);
    if (vd.kind != VarKind::CompileTimeConst) return vd.ridx + 1;
  }
  return 0;
}

// ---- emission ----

int FuncState::code(Instruction i) {
  f_->code.push_back(i);
  f_->lineinfo.push_back(lex_.lastLine());
  return pc() - 1;
}

int FuncState::codeABC(Op o, int a, int b, int c, bool k) { return code(makeABC(o, a, b, c, k)); }
int FuncState::codeABx(Op o, int a, unsigned bx) { return code(makeABx(o, a, bx)); }
int FuncState::codeAsBx(Op o, int a, int sbx) { return code(makeAsBx(o, a, sbx)); }
int FuncState::codeSJ(Op o, int sj) { return code(makeSJ(o, sj)); }
int FuncState::codeExtraArg(int ax) { return code(makeAx(Op::EXTRAARG, ax)); }

int FuncState::codeK(int reg, int k) {
  if (k <= kMaxArgBx) return codeABx(Op::LOADK, reg, static_cast<unsigned>(k));
  int p = codeABx(Op::LOADKX, reg, 0);
  codeExtraArg(k);
  return p;
}

void FuncState::fixLine(int line) { f_->lineinfo.back() = line; }

void FuncState::removeLastInstruction() {
  f_->code.pop_back();
  f_->lineinfo.pop_back();
}

Instruction* FuncState::previousInstruction() {
  static const Instruction kInvalid = ~Instruction(0);
  if (pc() > lastTarget_) return &instr(pc() - 1);
  return const_cast<Instruction*>(&kInvalid);
}

void FuncState::loadNil(int from, int n) {
  int last = from + n - 1;
  Instruction* prev = previousInstruction();
  if (getOp(*prev) == Op::LOADNIL && *prev != ~Instruction(0)) {
    int pfrom = getA(*prev);
    int plast = pfrom + getB(*prev);
    if ((pfrom <= from && from <= plast + 1) || (from <= pfrom && pfrom <= last + 1)) {
      from = std::min(from, pfrom);
      last = std::max(last, plast);
      *prev = setB(setA(*prev, from), last - from);
      return;
    }
  }
  codeABC(Op::LOADNIL, from, n - 1, 0);
}

void FuncState::loadInt(int reg, int64_t i) {
  if (fitsSBx(i)) codeAsBx(Op::LOADI, reg, static_cast<int>(i));
  else codeK(reg, intK(i));
}

void FuncState::loadFloat(int reg, double d) {
  int64_t fi = 0;
  if (floatToIntegerExact(d, fi) && fitsSBx(fi)) codeAsBx(Op::LOADF, reg, static_cast<int>(fi));
  else codeK(reg, numberK(d));
}

void FuncState::ret(int first, int nret) {
  Op op = nret == 0 ? Op::RETURN0 : nret == 1 ? Op::RETURN1 : Op::RETURN;
  codeABC(op, first, nret + 1, 0);
}

void FuncState::setTableSize(int pc, int ra, int asize, int hsize) {
  int rb = 0;
  if (hsize != 0) {
    int log = 0;
    while ((1u << log) < static_cast<unsigned>(hsize)) ++log;
    rb = log + 1;
  }
  int extra = asize / (kMaxArgC + 1);
  int rc = asize % (kMaxArgC + 1);
  instr(pc) = makeABC(Op::NEWTABLE, ra, rb, rc, extra > 0);
  instr(pc + 1) = makeAx(Op::EXTRAARG, extra);
}

void FuncState::setList(int base, int nelems, int tostore) {
  if (tostore == kMultRet) tostore = 0;
  if (nelems <= kMaxArgC) {
    codeABC(Op::SETLIST, base, tostore, nelems);
  } else {
    int extra = nelems / (kMaxArgC + 1);
    codeABC(Op::SETLIST, base, tostore, nelems % (kMaxArgC + 1), true);
    codeExtraArg(extra);
  }
  freereg_ = base + 1;
}

// Final pass: returns learn whether they close upvalues and whether the function is
// vararg; jumps to jumps go straight to the final target.
void FuncState::finish() {
  for (int i = 0; i < pc(); ++i) {
    Instruction& in = instr(i);
    switch (getOp(in)) {
      case Op::RETURN0: case Op::RETURN1:
        if (!(needClose_ || f_->isVararg)) break;
        in = (in & ~Instruction(0x7f)) | static_cast<Instruction>(Op::RETURN);
        [[fallthrough]];
      case Op::RETURN: case Op::TAILCALL:
        if (needClose_) in = setK(in, true);
        if (f_->isVararg) in = setC(in, f_->numParams + 1);
        break;
      case Op::JMP: {
        int target = i;
        for (int count = 0; count < 100; ++count) {
          Instruction t = instr(target);
          if (getOp(t) != Op::JMP) break;
          target += getSJ(t) + 1;
        }
        fixJump(i, target);
        break;
      }
      default:
        break;
    }
  }
}

// ---- registers ----

void FuncState::checkStack(int n) {
  int newStack = freereg_ + n;
  if (newStack > f_->maxStackSize) {
    if (newStack >= kMaxRegisters) lex_.syntaxError("function or expression needs too many registers");
    f_->maxStackSize = static_cast<uint8_t>(newStack);
  }
}

void FuncState::reserveRegs(int n) {
  checkStack(n);
  freereg_ += n;
}

void FuncState::freeReg(int reg) {
  if (reg >= nvarstack()) --freereg_;
}

void FuncState::freeRegs(int r1, int r2) {
  if (r1 > r2) {
    freeReg(r1);
    freeReg(r2);
  } else {
    freeReg(r2);
    freeReg(r1);
  }
}

void FuncState::freeExp(const ExpDesc& e) {
  if (e.k == ExpKind::NonReloc) freeReg(e.info);
}

void FuncState::freeExps(const ExpDesc& e1, const ExpDesc& e2) {
  int r1 = e1.k == ExpKind::NonReloc ? e1.info : -1;
  int r2 = e2.k == ExpKind::NonReloc ? e2.info : -1;
  freeRegs(r1, r2);
}

// ---- constants ----

// kind tags: 0 nil, 1 false, 2 true, 3 integer, 4 float; strings use dyd_.scache.
int FuncState::addConstant(const Constant& c, uint64_t key, int kind) {
  auto it = dyd_.kcache.find({kind, key});
  if (it != dyd_.kcache.end()) {
    size_t k = static_cast<size_t>(it->second);
    if (k < f_->constants.size() && f_->constants[k].kind == c.kind && f_->constants[k].integer == c.integer &&
        (c.kind != Constant::Kind::Float || f_->constants[k].number == c.number)) {
      return it->second;
    }
  }
  int idx = static_cast<int>(f_->constants.size());
  if (idx >= kMaxArgAx) lex_.syntaxError("too many constants");
  f_->constants.push_back(c);
  dyd_.kcache[{kind, key}] = idx;
  return idx;
}

int FuncState::stringK(std::string_view s) {
  auto it = dyd_.scache.find(s);
  if (it != dyd_.scache.end()) {
    size_t k = static_cast<size_t>(it->second);
    if (k < f_->constants.size() && f_->constants[k].kind == Constant::Kind::String && f_->constants[k].string == s) {
      return it->second;
    }
  }
  int idx = static_cast<int>(f_->constants.size());
  if (idx >= kMaxArgAx) lex_.syntaxError("too many constants");
  f_->constants.push_back(Constant::makeString(std::string(s)));
  dyd_.scache[s] = idx;
  return idx;
}

int FuncState::intK(int64_t v) { return addConstant(Constant::makeInteger(v), static_cast<uint64_t>(v), 3); }

int FuncState::numberK(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return addConstant(Constant::makeFloat(v), bits, 4);
}

int FuncState::boolK(bool v) { return addConstant(Constant::makeBool(v), 0, v ? 2 : 1); }
int FuncState::nilK() { return addConstant(Constant{}, 0, 0); }

// ---- jumps ----

int FuncState::jump() { return codeSJ(Op::JMP, kNoJump); }

int FuncState::getLabel() {
  lastTarget_ = pc();
  return pc();
}

int FuncState::getJump(int pc) {
  int offset = getSJ(instr(pc));
  if (offset == kNoJump) return kNoJump;
  return pc + 1 + offset;
}

void FuncState::fixJump(int pc, int dest) {
  int offset = dest - (pc + 1);
  if (!(-kOffsetSJ <= offset && offset <= kMaxArgAx - kOffsetSJ)) lex_.syntaxError("control structure too long");
  instr(pc) = setSJ(instr(pc), offset);
}

void FuncState::concatJumps(int& l1, int l2) {
  if (l2 == kNoJump) return;
  if (l1 == kNoJump) {
    l1 = l2;
    return;
  }
  int list = l1;
  for (int next; (next = getJump(list)) != kNoJump;) list = next;
  fixJump(list, l2);
}

Instruction* FuncState::jumpControl(int pc) {
  if (pc >= 1 && isTestOp(getOp(instr(pc - 1)))) return &instr(pc - 1);
  return &instr(pc);
}

bool FuncState::patchTestReg(int node, int reg) {
  Instruction* i = jumpControl(node);
  if (getOp(*i) != Op::TESTSET) return false;
  if (reg != kNoReg && reg != getB(*i)) *i = setA(*i, reg);
  else *i = makeABC(Op::TEST, getB(*i), 0, 0, getK(*i));
  return true;
}

void FuncState::removeValues(int list) {
  for (; list != kNoJump; list = getJump(list)) patchTestReg(list, kNoReg);
}

void FuncState::patchListAux(int list, int vtarget, int reg, int dtarget) {
  while (list != kNoJump) {
    int next = getJump(list);
    if (patchTestReg(list, reg)) fixJump(list, vtarget);
    else fixJump(list, dtarget);
    list = next;
  }
}

void FuncState::patchList(int list, int target) { patchListAux(list, target, kNoReg, target); }

void FuncState::patchToHere(int list) { patchList(list, getLabel()); }

bool FuncState::needValue(int list) {
  for (; list != kNoJump; list = getJump(list)) {
    if (getOp(*jumpControl(list)) != Op::TESTSET) return true;
  }
  return false;
}

int FuncState::condJump(Op op, int a, int b, int c, bool k) {
  codeABC(op, a, b, c, k);
  return jump();
}

int FuncState::codeLoadBool(int a, Op op) {
  getLabel();
  return codeABC(op, a, 0, 0);
}

// ---- expressions ----

void FuncState::const2exp(const ExpDesc& value, ExpDesc& e) {
  e.k = value.k;
  e.ival = value.ival;
  e.nval = value.nval;
  e.strval = value.strval;
}

bool FuncState::exp2const(const ExpDesc& e, ExpDesc& value) {
  if (e.hasJumps()) return false;
  switch (e.k) {
    case ExpKind::False: case ExpKind::True: case ExpKind::Nil: case ExpKind::KStr:
    case ExpKind::KInt: case ExpKind::KFlt:
      value = ExpDesc::make(e.k);
      const2exp(e, value);
      return true;
    case ExpKind::Const:
      value = dyd_.actvar[static_cast<size_t>(e.info)].constant;
      return true;
    default:
      return false;
  }
}

void FuncState::setReturns(ExpDesc& e, int nresults) {
  Instruction& i = instrOf(e);
  i = setC(i, nresults + 1);
  if (e.k == ExpKind::Vararg) {
    i = setA(i, freereg_);
    reserveRegs(1);
  }
}

void FuncState::str2K(ExpDesc& e) {
  e.info = stringK(e.strval);
  e.k = ExpKind::K;
}

void FuncState::setOneRet(ExpDesc& e) {
  if (e.k == ExpKind::Call) {
    e.k = ExpKind::NonReloc;
    e.info = getA(instrOf(e));
  } else if (e.k == ExpKind::Vararg) {
    instrOf(e) = setC(instrOf(e), 2);
    e.k = ExpKind::Reloc;
  }
}

void FuncState::dischargeVars(ExpDesc& e) {
  switch (e.k) {
    case ExpKind::Const:
      const2exp(dyd_.actvar[static_cast<size_t>(e.info)].constant, e);
      e.k = dyd_.actvar[static_cast<size_t>(e.info)].constant.k;
      break;
    case ExpKind::Local:
      e.info = e.ridx;
      e.k = ExpKind::NonReloc;
      break;
    case ExpKind::Upval:
      e.info = codeABC(Op::GETUPVAL, 0, e.info, 0);
      e.k = ExpKind::Reloc;
      break;
    case ExpKind::IndexUp:
      e.info = codeABC(Op::GETTABUP, 0, e.indT, e.indIdx);
      e.k = ExpKind::Reloc;
      break;
    case ExpKind::IndexI:
      freeReg(e.indT);
      e.info = codeABC(Op::GETI, 0, e.indT, e.indIdx);
      e.k = ExpKind::Reloc;
      break;
    case ExpKind::IndexStr:
      freeReg(e.indT);
      e.info = codeABC(Op::GETFIELD, 0, e.indT, e.indIdx);
      e.k = ExpKind::Reloc;
      break;
    case ExpKind::Indexed:
      freeRegs(e.indT, e.indIdx);
      e.info = codeABC(Op::GETTABLE, 0, e.indT, e.indIdx);
      e.k = ExpKind::Reloc;
      break;
    case ExpKind::Vararg: case ExpKind::Call:
      setOneRet(e);
      break;
    default:
      break;
  }
}

void FuncState::discharge2reg(ExpDesc& e, int reg) {
  dischargeVars(e);
  switch (e.k) {
    case ExpKind::Nil: loadNil(reg, 1); break;
    case ExpKind::False: codeABC(Op::LOADFALSE, reg, 0, 0); break;
    case ExpKind::True: codeABC(Op::LOADTRUE, reg, 0, 0); break;
    case ExpKind::KStr: str2K(e); codeK(reg, e.info); break;
    case ExpKind::K: codeK(reg, e.info); break;
    case ExpKind::KFlt: loadFloat(reg, e.nval); break;
    case ExpKind::KInt: loadInt(reg, e.ival); break;
    case ExpKind::Reloc: instrOf(e) = setA(instrOf(e), reg); break;
    case ExpKind::NonReloc:
      if (reg != e.info) codeABC(Op::MOVE, reg, e.info, 0);
      break;
    default:
      return;  // a jump: nothing to do yet
  }
  e.info = reg;
  e.k = ExpKind::NonReloc;
}

void FuncState::discharge2anyreg(ExpDesc& e) {
  if (e.k != ExpKind::NonReloc) {
    reserveRegs(1);
    discharge2reg(e, freereg_ - 1);
  }
}

void FuncState::exp2reg(ExpDesc& e, int reg) {
  discharge2reg(e, reg);
  if (e.k == ExpKind::Jmp) concatJumps(e.t, e.info);
  if (e.hasJumps()) {
    int loadFalse = kNoJump;
    int loadTrue = kNoJump;
    if (needValue(e.t) || needValue(e.f)) {
      int fj = e.k == ExpKind::Jmp ? kNoJump : jump();
      loadFalse = codeLoadBool(reg, Op::LFALSESKIP);
      loadTrue = codeLoadBool(reg, Op::LOADTRUE);
      patchToHere(fj);
    }
    int final = getLabel();
    patchListAux(e.f, final, reg, loadFalse);
    patchListAux(e.t, final, reg, loadTrue);
  }
  e.f = e.t = kNoJump;
  e.info = reg;
  e.k = ExpKind::NonReloc;
}

void FuncState::exp2nextreg(ExpDesc& e) {
  dischargeVars(e);
  freeExp(e);
  reserveRegs(1);
  exp2reg(e, freereg_ - 1);
}

int FuncState::exp2anyreg(ExpDesc& e) {
  dischargeVars(e);
  if (e.k == ExpKind::NonReloc) {
    if (!e.hasJumps()) return e.info;
    if (e.info >= nvarstack()) {
      exp2reg(e, e.info);
      return e.info;
    }
  }
  exp2nextreg(e);
  return e.info;
}

void FuncState::exp2anyregup(ExpDesc& e) {
  if (e.k != ExpKind::Upval || e.hasJumps()) exp2anyreg(e);
}

void FuncState::exp2val(ExpDesc& e) {
  // A comparison (Jmp) is a value only once materialised: left pending as a key, code
  // emitted for the indexed table would land between its jump and its LOADTRUE.
  if (e.k == ExpKind::Jmp || e.hasJumps()) exp2anyreg(e);
  else dischargeVars(e);
}

bool FuncState::exp2K(ExpDesc& e) {
  if (e.hasJumps()) return false;
  int info;
  switch (e.k) {
    case ExpKind::True: info = boolK(true); break;
    case ExpKind::False: info = boolK(false); break;
    case ExpKind::Nil: info = nilK(); break;
    case ExpKind::KInt: info = intK(e.ival); break;
    case ExpKind::KFlt: info = numberK(e.nval); break;
    case ExpKind::KStr: info = stringK(e.strval); break;
    case ExpKind::K: info = e.info; break;
    default: return false;
  }
  if (info > kMaxArgC) return false;
  e.k = ExpKind::K;
  e.info = info;
  return true;
}

bool FuncState::exp2RK(ExpDesc& e) {
  if (exp2K(e)) return true;
  exp2anyreg(e);
  return false;
}

void FuncState::codeABRK(Op o, int a, int b, ExpDesc& ec) {
  bool k = exp2RK(ec);
  codeABC(o, a, b, ec.info, k);
}

void FuncState::storeVar(const ExpDesc& var, ExpDesc& ex) {
  switch (var.k) {
    case ExpKind::Local:
      freeExp(ex);
      exp2reg(ex, var.ridx);
      return;
    case ExpKind::Upval: {
      int e = exp2anyreg(ex);
      codeABC(Op::SETUPVAL, e, var.info, 0);
      break;
    }
    case ExpKind::IndexUp: codeABRK(Op::SETTABUP, var.indT, var.indIdx, ex); break;
    case ExpKind::IndexI: codeABRK(Op::SETI, var.indT, var.indIdx, ex); break;
    case ExpKind::IndexStr: codeABRK(Op::SETFIELD, var.indT, var.indIdx, ex); break;
    case ExpKind::Indexed: codeABRK(Op::SETTABLE, var.indT, var.indIdx, ex); break;
    default: break;
  }
  freeExp(ex);
}

void FuncState::self(ExpDesc& e, ExpDesc& key) {
  exp2anyreg(e);
  int ereg = e.info;
  freeExp(e);
  e.info = freereg_;
  e.k = ExpKind::NonReloc;
  reserveRegs(2);
  codeABRK(Op::SELF, e.info, ereg, key);
  freeExp(key);
}

bool FuncState::isKstr(const ExpDesc& e) {
  if (e.k != ExpKind::K || e.hasJumps() || e.info > kMaxArgB) return false;
  const Constant& c = f_->constants[static_cast<size_t>(e.info)];
  return c.kind == Constant::Kind::String && c.string.size() <= kMaxShortString;
}

void FuncState::indexed(ExpDesc& t, ExpDesc& k) {
  if (k.k == ExpKind::KStr) str2K(k);
  if (t.k == ExpKind::Upval && !isKstr(k)) exp2anyreg(t);
  if (t.k == ExpKind::Upval) {
    t.indT = t.info;
    t.indIdx = k.info;
    t.k = ExpKind::IndexUp;
    return;
  }
  t.indT = t.k == ExpKind::Local ? t.ridx : t.info;
  if (isKstr(k)) {
    t.indIdx = k.info;
    t.k = ExpKind::IndexStr;
  } else if (k.k == ExpKind::KInt && !k.hasJumps() && static_cast<uint64_t>(k.ival) <= kMaxArgC) {
    t.indIdx = static_cast<int>(k.ival);
    t.k = ExpKind::IndexI;
  } else {
    t.indIdx = exp2anyreg(k);
    t.k = ExpKind::Indexed;
  }
}

void FuncState::negateCondition(ExpDesc& e) {
  Instruction* i = jumpControl(e.info);
  *i = setK(*i, !getK(*i));
}

int FuncState::jumpOnCond(ExpDesc& e, bool cond) {
  if (e.k == ExpKind::Reloc) {
    Instruction ie = instrOf(e);
    if (getOp(ie) == Op::NOT) {
      removeLastInstruction();
      return condJump(Op::TEST, getB(ie), 0, 0, !cond);
    }
  }
  discharge2anyreg(e);
  freeExp(e);
  return condJump(Op::TESTSET, kNoReg, e.info, 0, cond);
}

void FuncState::goIfTrue(ExpDesc& e) {
  dischargeVars(e);
  int pcj;
  switch (e.k) {
    case ExpKind::Jmp:
      negateCondition(e);
      pcj = e.info;
      break;
    case ExpKind::K: case ExpKind::KFlt: case ExpKind::KInt: case ExpKind::KStr: case ExpKind::True:
      pcj = kNoJump;
      break;
    default:
      pcj = jumpOnCond(e, false);
      break;
  }
  concatJumps(e.f, pcj);
  patchToHere(e.t);
  e.t = kNoJump;
}

void FuncState::goIfFalse(ExpDesc& e) {
  dischargeVars(e);
  int pcj;
  switch (e.k) {
    case ExpKind::Jmp: pcj = e.info; break;
    case ExpKind::Nil: case ExpKind::False: pcj = kNoJump; break;
    default: pcj = jumpOnCond(e, true); break;
  }
  concatJumps(e.t, pcj);
  patchToHere(e.f);
  e.f = kNoJump;
}

void FuncState::codeNot(ExpDesc& e) {
  switch (e.k) {
    case ExpKind::Nil: case ExpKind::False:
      e.k = ExpKind::True;
      break;
    case ExpKind::K: case ExpKind::KFlt: case ExpKind::KInt: case ExpKind::KStr: case ExpKind::True:
      e.k = ExpKind::False;
      break;
    case ExpKind::Jmp:
      negateCondition(e);
      break;
    case ExpKind::Reloc: case ExpKind::NonReloc:
      discharge2anyreg(e);
      freeExp(e);
      e.info = codeABC(Op::NOT, 0, e.info, 0);
      e.k = ExpKind::Reloc;
      break;
    default:
      break;
  }
  std::swap(e.f, e.t);
  removeValues(e.f);
  removeValues(e.t);
}

}  // namespace weft::frontend
