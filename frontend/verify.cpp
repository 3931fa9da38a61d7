// The bytecode verifier. One pass per function; recursion over nested prototypes is
// bounded by the depth limit undumpChunk enforces (and by the parser for compiled code).
#include "frontend/verify.h"

#include <vector>

namespace weft::frontend {
namespace {

bool isArith(Op op) { return op >= Op::ADDI && op <= Op::SHR; }
bool isTest(Op op) { return op >= Op::EQ && op <= Op::TESTSET; }
// Instructions that leave "top" set for the next one: open calls and varargs, and a
// tail call (which returns here only when it called a C function).
bool isOpenProducer(Instruction i) {
  return ((getOp(i) == Op::CALL || getOp(i) == Op::VARARG) && getC(i) == 0) || getOp(i) == Op::TAILCALL;
}

class Verifier {
 public:
  Verifier(const ProtoData& f, const ProtoData* parent) : f_(f), parent_(parent) {}

  std::optional<std::string> run() {
    if (f_.code.size() != f_.lineinfo.size()) return fail(-1, "line info size mismatch");
    if (f_.code.empty()) return fail(-1, "empty code");
    if (f_.code.size() > (1u << 30)) return fail(-1, "code too large");
    if (f_.maxStackSize > kMaxRegisters || f_.numParams > f_.maxStackSize) return fail(-1, "bad frame size");
    if (auto e = checkUpvalues()) return e;
    if (auto e = checkLocals()) return e;
    needsClose_ = computeNeedsClose();
    int n = size();
    Op last = getOp(f_.code.back());
    if (last != Op::RETURN && last != Op::RETURN0 && last != Op::RETURN1) return fail(n - 1, "code does not end with a return");
    for (int pc = 0; pc < n; ++pc) {
      if (auto e = checkInstruction(pc)) return e;
    }
    for (const auto& p : f_.protos) {
      if (!p) return fail(-1, "missing prototype");
      if (auto e = Verifier(*p, &f_).run()) return e;
    }
    return std::nullopt;
  }

 private:
  int size() const { return static_cast<int>(f_.code.size()); }
  Instruction at(int pc) const { return f_.code[static_cast<size_t>(pc)]; }

  std::optional<std::string> fail(int pc, const std::string& what) const {
    std::string where = "function at line " + std::to_string(f_.lineDefined);
    if (pc >= 0) where += ", instruction " + std::to_string(pc + 1);
    return what + " (" + where + ")";
  }

  bool reg(int r) const { return r >= 0 && r < f_.maxStackSize; }
  bool konst(int k) const { return k >= 0 && static_cast<size_t>(k) < f_.constants.size(); }
  bool kstring(int k) const { return konst(k) && f_.constants[static_cast<size_t>(k)].kind == Constant::Kind::String; }
  bool knumber(int k, bool integerOnly) const {
    if (!konst(k)) return false;
    auto kind = f_.constants[static_cast<size_t>(k)].kind;
    return kind == Constant::Kind::Integer || (!integerOnly && kind == Constant::Kind::Float);
  }
  bool upval(int u) const { return u >= 0 && static_cast<size_t>(u) < f_.upvalues.size(); }
  bool rk(Instruction i) const { return getK(i) ? konst(getC(i)) : reg(getC(i)); }
  bool target(int t) const { return t >= 0 && t < size() && getOp(at(t)) != Op::EXTRAARG; }

  std::optional<std::string> checkUpvalues() const {
    if (!parent_) return std::nullopt;
    for (const auto& u : f_.upvalues) {
      bool ok = u.inStack ? u.index < parent_->maxStackSize : u.index < parent_->upvalues.size();
      if (!ok) return fail(-1, "bad upvalue descriptor");
    }
    return std::nullopt;
  }

  std::optional<std::string> checkLocals() const {
    for (const auto& l : f_.locals) {
      if (l.startPc < 0 || l.endPc < l.startPc || l.endPc > size()) return fail(-1, "bad local variable range");
    }
    return std::nullopt;
  }

  bool computeNeedsClose() const {
    for (Instruction i : f_.code) {
      Op op = getOp(i);
      if (op == Op::TBC || op == Op::TFORPREP) return true;
      if (op == Op::CLOSURE && static_cast<size_t>(getBx(i)) < f_.protos.size() && f_.protos[static_cast<size_t>(getBx(i))]) {
        for (const auto& u : f_.protos[static_cast<size_t>(getBx(i))]->upvalues) {
          if (u.inStack) return true;
        }
      }
    }
    return false;
  }

  // Instructions whose B == 0 means "up to the top set by the previous instruction".
  std::optional<std::string> checkOpenUse(int pc, bool open) const {
    bool prevOpen = pc > 0 && isOpenProducer(at(pc - 1));
    if (open != prevOpen) return fail(pc, "open result not produced or consumed by adjacent instructions");
    return std::nullopt;
  }

  std::optional<std::string> checkReturn(int pc, Instruction i) const {
    Op op = getOp(i);
    if (op == Op::RETURN0 || op == Op::RETURN1) {
      if (f_.isVararg || needsClose_) return fail(pc, "short return in a function that must close or adjust varargs");
      if (op == Op::RETURN1 && !reg(getA(i))) return fail(pc, "register out of range");
      return std::nullopt;
    }
    int expectedC = f_.isVararg ? f_.numParams + 1 : 0;
    if (getC(i) != expectedC) return fail(pc, "bad vararg marker on return");
    if (needsClose_ && !getK(i)) return fail(pc, "return does not close variables");
    int a = getA(i), b = getB(i);
    if (op == Op::TAILCALL) {
      if (!reg(a) || (b > 0 && !reg(a + b - 1))) return fail(pc, "register out of range");
    } else if (a > f_.maxStackSize || (b > 1 && !reg(a + b - 2))) {
      return fail(pc, "register out of range");
    }
    return checkOpenUse(pc, b == 0);
  }

  std::optional<std::string> checkFollower(int pc, bool ok, const char* what) const {
    if (!ok) return fail(pc, what);
    return std::nullopt;
  }

  std::optional<std::string> checkInstruction(int pc) const {
    Instruction i = at(pc);
    int opn = static_cast<int>(i & 0x7f);
    if (opn >= kNumOpcodes) return fail(pc, "invalid opcode");
    Op op = getOp(i);
    int a = getA(i), b = getB(i), c = getC(i), bx = getBx(i);
    Op next = pc + 1 < size() ? getOp(at(pc + 1)) : Op::EXTRAARG;
    bool hasNext = pc + 1 < size();
    auto bad = [&](const char* what) { return fail(pc, what); };
    if (isOpenProducer(i)) {
      Instruction n = hasNext ? at(pc + 1) : 0;
      Op nop = getOp(n);
      bool consumed = hasNext && getB(n) == 0 &&
                      (op == Op::TAILCALL ? nop == Op::RETURN
                                          : (nop == Op::CALL || nop == Op::TAILCALL || nop == Op::RETURN || nop == Op::SETLIST));
      if (!consumed) return bad("open result not consumed");
    }
    if (isArith(op) && !(hasNext && (next == Op::MMBIN || next == Op::MMBINI || next == Op::MMBINK))) {
      return bad("arithmetic not followed by MMBIN");
    }
    if (isTest(op) && !(hasNext && next == Op::JMP)) return bad("test not followed by JMP");
    switch (op) {
      case Op::MOVE: case Op::UNM: case Op::BNOT: case Op::NOT: case Op::LEN:
      case Op::ADDI: case Op::SHRI: case Op::SHLI:
        if (!reg(a) || !reg(b)) return bad("register out of range");
        break;
      case Op::LOADI: case Op::LOADF: case Op::LOADFALSE: case Op::LOADTRUE: case Op::TBC:
        if (!reg(a)) return bad("register out of range");
        break;
      case Op::LFALSESKIP:  // skips the next instruction: pc + 2 must be code
        if (!reg(a) || !target(pc + 2)) return bad("bad LFALSESKIP");
        break;
      case Op::LOADK:
        if (!reg(a) || !konst(bx)) return bad("bad LOADK");
        break;
      case Op::LOADKX:
        if (!reg(a) || next != Op::EXTRAARG || !hasNext || !konst(getAx(at(pc + 1)))) return bad("bad LOADKX");
        break;
      case Op::LOADNIL:
        if (!reg(a + b)) return bad("register out of range");
        break;
      case Op::GETUPVAL: case Op::SETUPVAL:
        if (!reg(a) || !upval(b)) return bad("bad upvalue access");
        break;
      case Op::GETTABUP:
        if (!reg(a) || !upval(b) || !kstring(c)) return bad("bad GETTABUP");
        break;
      case Op::GETTABLE:
        if (!reg(a) || !reg(b) || !reg(c)) return bad("register out of range");
        break;
      case Op::GETI:
        if (!reg(a) || !reg(b)) return bad("register out of range");
        break;
      case Op::GETFIELD:
        if (!reg(a) || !reg(b) || !kstring(c)) return bad("bad GETFIELD");
        break;
      case Op::SETTABUP:
        if (!upval(a) || !kstring(b) || !rk(i)) return bad("bad SETTABUP");
        break;
      case Op::SETTABLE:
        if (!reg(a) || !reg(b) || !rk(i)) return bad("bad SETTABLE");
        break;
      case Op::SETI:
        if (!reg(a) || !rk(i)) return bad("bad SETI");
        break;
      case Op::SETFIELD:
        if (!reg(a) || !kstring(b) || !rk(i)) return bad("bad SETFIELD");
        break;
      case Op::NEWTABLE:
        if (!reg(a) || next != Op::EXTRAARG || !hasNext) return bad("bad NEWTABLE");
        break;
      case Op::SELF:
        if (!reg(a + 1) || !reg(b) || (getK(i) ? !kstring(c) : !reg(c))) return bad("bad SELF");
        break;
      case Op::ADDK: case Op::SUBK: case Op::MULK: case Op::MODK: case Op::POWK: case Op::DIVK: case Op::IDIVK:
        if (!reg(a) || !reg(b) || !knumber(c, false)) return bad("bad arithmetic constant");
        break;
      case Op::BANDK: case Op::BORK: case Op::BXORK:
        if (!reg(a) || !reg(b) || !knumber(c, true)) return bad("bad bitwise constant");
        break;
      case Op::ADD: case Op::SUB: case Op::MUL: case Op::MOD: case Op::POW: case Op::DIV: case Op::IDIV:
      case Op::BAND: case Op::BOR: case Op::BXOR: case Op::SHL: case Op::SHR:
      case Op::EQ: case Op::LT: case Op::LE: case Op::TESTSET:
        if (!reg(a) || !reg(b) || (op != Op::EQ && op != Op::LT && op != Op::LE && op != Op::TESTSET && !reg(c))) {
          return bad("register out of range");
        }
        break;
      case Op::MMBIN: case Op::MMBINI: case Op::MMBINK: {
        if (pc == 0 || !isArith(getOp(at(pc - 1)))) return bad("MMBIN without arithmetic");
        if (c < static_cast<int>(MetaEvent::Add) || c > static_cast<int>(MetaEvent::Shr)) return bad("bad metamethod event");
        if (!reg(a) || (op == Op::MMBIN && !reg(b)) || (op == Op::MMBINK && !konst(b))) return bad("bad MMBIN operands");
        break;
      }
      case Op::CONCAT:
        if (b < 2 || !reg(a) || !reg(a + b - 1)) return bad("bad CONCAT");
        break;
      case Op::CLOSE:
        if (a > f_.maxStackSize) return bad("register out of range");
        break;
      case Op::JMP:
        if (!target(pc + 1 + getSJ(i))) return bad("jump out of range");
        break;
      case Op::EQK:
        if (!reg(a) || !konst(b)) return bad("bad EQK");
        break;
      case Op::EQI: case Op::LTI: case Op::LEI: case Op::GTI: case Op::GEI: case Op::TEST:
        if (!reg(a)) return bad("register out of range");
        break;
      case Op::CALL:
        if (!reg(a) || (b > 0 && !reg(a + b - 1)) || (c > 1 && !reg(a + c - 2))) return bad("register out of range");
        if (auto e = checkOpenUse(pc, b == 0)) return e;
        break;
      case Op::TAILCALL: case Op::RETURN: case Op::RETURN0: case Op::RETURN1:
        if (auto e = checkReturn(pc, i)) return e;
        break;
      case Op::FORPREP: {
        int loop = pc + 1 + bx;
        if (!reg(a + 3) || loop >= size() || getOp(at(loop)) != Op::FORLOOP || getA(at(loop)) != a ||
            loop + 1 - getBx(at(loop)) != pc + 1) {
          return bad("bad FORPREP");
        }
        break;
      }
      case Op::FORLOOP:
        if (!reg(a + 3) || !target(pc + 1 - bx)) return bad("bad FORLOOP");
        break;
      case Op::TFORPREP: {
        int call = pc + 1 + bx;
        if (!reg(a + 3) || call + 1 >= size() || getOp(at(call)) != Op::TFORCALL || getA(at(call)) != a ||
            getOp(at(call + 1)) != Op::TFORLOOP || getA(at(call + 1)) != a ||
            call + 2 - getBx(at(call + 1)) != pc + 1) {
          return bad("bad TFORPREP");
        }
        break;
      }
      case Op::TFORCALL:
        if (!reg(a + 6) || !reg(a + 3 + c) || next != Op::TFORLOOP || !hasNext) return bad("bad TFORCALL");
        break;
      case Op::TFORLOOP:
        if (!reg(a + 4) || !target(pc + 1 - bx)) return bad("bad TFORLOOP");
        break;
      case Op::SETLIST:
        if (!reg(a) || (b > 0 && !reg(a + b))) return bad("register out of range");
        if (getK(i) && !(hasNext && next == Op::EXTRAARG)) return bad("SETLIST without EXTRAARG");
        if (auto e = checkOpenUse(pc, b == 0)) return e;
        break;
      case Op::CLOSURE:
        if (!reg(a) || static_cast<size_t>(bx) >= f_.protos.size()) return bad("bad CLOSURE");
        break;
      case Op::VARARG:
        if (!f_.isVararg || !reg(a) || (c > 1 && !reg(a + c - 2))) return bad("bad VARARG");
        break;
      case Op::VARARGPREP:
        if (pc != 0 || !f_.isVararg || a != f_.numParams) return bad("bad VARARGPREP");
        break;
      case Op::EXTRAARG: {
        Instruction p = pc > 0 ? at(pc - 1) : 0;
        Op pop = getOp(p);
        bool ok = pc > 0 && (pop == Op::LOADKX || pop == Op::NEWTABLE || (pop == Op::SETLIST && getK(p)));
        if (!ok) return bad("stray EXTRAARG");
        break;
      }
    }
    if (pc == 0 && f_.isVararg && op != Op::VARARGPREP) return bad("vararg function without VARARGPREP");
    return std::nullopt;
  }

  const ProtoData& f_;
  const ProtoData* parent_;
  bool needsClose_ = false;
};

}  // namespace

std::optional<std::string> verifyProto(const ProtoData& proto) { return Verifier(proto, nullptr).run(); }

}  // namespace weft::frontend
