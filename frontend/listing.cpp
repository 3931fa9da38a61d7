// The listing printer. Operand layout and comments follow luac 5.4's print.c so the
// two listings can be compared line by line.
#include "frontend/listing.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace weft::frontend {
namespace {

constexpr const char* kEventNames[] = {
    "__index", "__newindex", "__gc", "__mode", "__len", "__eq", "__add", "__sub", "__mul",
    "__mod", "__pow", "__div", "__idiv", "__band", "__bor", "__bxor", "__shl", "__shr",
    "__unm", "__bnot", "__lt", "__le", "__concat", "__call", "__close"};

class Printer {
 public:
  explicit Printer(std::string& out) : out_(out) {}

  void function(const ProtoData& f, const std::string& name, bool full) {
    header(f, name);
    for (size_t pc = 0; pc < f.code.size(); ++pc) instruction(f, static_cast<int>(pc), name);
    if (full) debug(f, name);
    for (size_t i = 0; i < f.protos.size(); ++i) {
      if (f.protos[i]) function(*f.protos[i], name + "." + std::to_string(i), full);
    }
  }

 private:
  template <typename... Args>
  void put(const char* fmt, Args... args) {
    char buf[256];
    int n = std::snprintf(buf, sizeof buf, fmt, args...);
    if (n > 0) out_.append(buf, std::min(static_cast<size_t>(n), sizeof buf - 1));
  }

  static const char* plural(int n) { return n == 1 ? "" : "s"; }

  void header(const ProtoData& f, const std::string& name) {
    std::string src = f.source.empty() ? "=?" : f.source;
    if (src[0] == '@' || src[0] == '=') src = src.substr(1);
    else if (src[0] == '\x1b') src = "(bstring)";
    else src = "(string)";
    int n = static_cast<int>(f.code.size());
    out_ += "\n";
    out_ += f.lineDefined == 0 ? "main" : "function";
    out_ += " <" + src;
    put(":%d,%d> (%d instruction%s at %s)\n", f.lineDefined, f.lastLineDefined, n, plural(n), name.c_str());
    put("%d%s param%s, %d slot%s, %d upvalue%s, ", f.numParams, f.isVararg ? "+" : "", plural(f.numParams),
        f.maxStackSize, plural(f.maxStackSize), static_cast<int>(f.upvalues.size()),
        plural(static_cast<int>(f.upvalues.size())));
    int nl = static_cast<int>(f.locals.size()), nk = static_cast<int>(f.constants.size()),
        np = static_cast<int>(f.protos.size());
    put("%d local%s, %d constant%s, %d function%s\n", nl, plural(nl), nk, plural(nk), np, plural(np));
  }

  void constant(const ProtoData& f, int i) {
    if (i < 0 || static_cast<size_t>(i) >= f.constants.size()) {
      out_ += "?";
      return;
    }
    out_ += constantToString(f.constants[static_cast<size_t>(i)]);
  }

  void upvalName(const ProtoData& f, int i) {
    if (i >= 0 && static_cast<size_t>(i) < f.upvalues.size() && !f.upvalues[static_cast<size_t>(i)].name.empty()) {
      out_ += f.upvalues[static_cast<size_t>(i)].name;
    } else {
      out_ += "-";
    }
  }

  void instruction(const ProtoData& f, int pc, const std::string& name) {
    Instruction i = f.code[static_cast<size_t>(pc)];
    int opn = static_cast<int>(getOp(i));
    if (opn >= kNumOpcodes) {
      put("\t%d\t[%d]\t<bad opcode %d>\n", pc + 1, f.lineinfo.size() > static_cast<size_t>(pc) ? f.lineinfo[static_cast<size_t>(pc)] : 0, opn);
      return;
    }
    Op o = getOp(i);
    int a = getA(i), b = getB(i), c = getC(i), ax = getAx(i), bx = getBx(i);
    int sb = getSB(i), sc = getSC(i), sbx = getSBx(i);
    bool k = getK(i);
    const char* isk = k ? "k" : "";
    int line = static_cast<size_t>(pc) < f.lineinfo.size() ? f.lineinfo[static_cast<size_t>(pc)] : 0;
    int extra = static_cast<size_t>(pc) + 1 < f.code.size() ? getAx(f.code[static_cast<size_t>(pc) + 1]) : 0;
    put("\t%d\t", pc + 1);
    if (line > 0) put("[%d]\t", line);
    else out_ += "[-]\t";
    put("%-9s\t", kOpNames[opn]);
    const char* comment = "\t; ";
    switch (o) {
      case Op::MOVE: put("%d %d", a, b); break;
      case Op::LOADI: case Op::LOADF: put("%d %d", a, sbx); break;
      case Op::LOADK: put("%d %d", a, bx); out_ += comment; constant(f, bx); break;
      case Op::LOADKX: put("%d", a); out_ += comment; constant(f, extra); break;
      case Op::LOADFALSE: case Op::LFALSESKIP: case Op::LOADTRUE: put("%d", a); break;
      case Op::LOADNIL: put("%d %d", a, b); put("\t; %d out", b + 1); break;
      case Op::GETUPVAL: case Op::SETUPVAL: put("%d %d", a, b); out_ += comment; upvalName(f, b); break;
      case Op::GETTABUP:
        put("%d %d %d", a, b, c);
        out_ += comment;
        upvalName(f, b);
        out_ += " ";
        constant(f, c);
        break;
      case Op::GETTABLE: case Op::GETI: put("%d %d %d", a, b, c); break;
      case Op::GETFIELD: put("%d %d %d", a, b, c); out_ += comment; constant(f, c); break;
      case Op::SETTABUP:
        put("%d %d %d%s", a, b, c, isk);
        out_ += comment;
        upvalName(f, a);
        out_ += " ";
        constant(f, b);
        if (k) { out_ += " "; constant(f, c); }
        break;
      case Op::SETTABLE: case Op::SETI: case Op::SELF:
        put("%d %d %d%s", a, b, c, isk);
        if (k) { out_ += comment; constant(f, c); }
        break;
      case Op::SETFIELD:
        put("%d %d %d%s", a, b, c, isk);
        out_ += comment;
        constant(f, b);
        if (k) { out_ += " "; constant(f, c); }
        break;
      case Op::NEWTABLE: put("%d %d %d", a, b, c); put("\t; %lld", c + (long long)extra * (kMaxArgC + 1)); break;
      case Op::ADDI: case Op::SHRI: case Op::SHLI: put("%d %d %d", a, b, sc); break;
      case Op::ADDK: case Op::SUBK: case Op::MULK: case Op::MODK: case Op::POWK: case Op::DIVK:
      case Op::IDIVK: case Op::BANDK: case Op::BORK: case Op::BXORK:
        put("%d %d %d", a, b, c);
        out_ += comment;
        constant(f, c);
        break;
      case Op::ADD: case Op::SUB: case Op::MUL: case Op::MOD: case Op::POW: case Op::DIV: case Op::IDIV:
      case Op::BAND: case Op::BOR: case Op::BXOR: case Op::SHL: case Op::SHR:
        put("%d %d %d", a, b, c);
        break;
      case Op::MMBIN: put("%d %d %d", a, b, c); put("\t; %s", event(c)); break;
      case Op::MMBINI:
        put("%d %d %d %d", a, sb, c, k ? 1 : 0);
        put("\t; %s", event(c));
        if (k) out_ += " flip";
        break;
      case Op::MMBINK:
        put("%d %d %d %d", a, b, c, k ? 1 : 0);
        put("\t; %s ", event(c));
        constant(f, b);
        if (k) out_ += " flip";
        break;
      case Op::UNM: case Op::BNOT: case Op::NOT: case Op::LEN: case Op::CONCAT: put("%d %d", a, b); break;
      case Op::CLOSE: case Op::TBC: case Op::RETURN1: case Op::VARARGPREP: put("%d", a); break;
      case Op::JMP: put("%d", getSJ(i)); put("\t; to %d", getSJ(i) + pc + 2); break;
      case Op::EQ: case Op::LT: case Op::LE: put("%d %d %d", a, b, k ? 1 : 0); break;
      case Op::EQK: put("%d %d %d", a, b, k ? 1 : 0); out_ += comment; constant(f, b); break;
      case Op::EQI: case Op::LTI: case Op::LEI: case Op::GTI: case Op::GEI: put("%d %d %d", a, sb, k ? 1 : 0); break;
      case Op::TEST: put("%d %d", a, k ? 1 : 0); break;
      case Op::TESTSET: put("%d %d %d", a, b, k ? 1 : 0); break;
      case Op::CALL:
        put("%d %d %d", a, b, c);
        out_ += comment;
        if (b == 0) out_ += "all in "; else put("%d in ", b - 1);
        if (c == 0) out_ += "all out"; else put("%d out", c - 1);
        break;
      case Op::TAILCALL: put("%d %d %d%s", a, b, c, isk); put("\t; %d in", b - 1); break;
      case Op::RETURN:
        put("%d %d %d%s", a, b, c, isk);
        out_ += comment;
        if (b == 0) out_ += "all out"; else put("%d out", b - 1);
        break;
      case Op::RETURN0: break;
      case Op::FORLOOP: put("%d %d", a, bx); put("\t; to %d", pc - bx + 2); break;
      case Op::FORPREP: put("%d %d", a, bx); put("\t; exit to %d", pc + bx + 3); break;
      case Op::TFORPREP: put("%d %d", a, bx); put("\t; to %d", pc + bx + 2); break;
      case Op::TFORCALL: put("%d %d", a, c); break;
      case Op::TFORLOOP: put("%d %d", a, bx); put("\t; to %d", pc - bx + 2); break;
      case Op::SETLIST:
        put("%d %d %d", a, b, c);
        if (k) put("\t; %lld", c + (long long)extra * (kMaxArgC + 1));
        break;
      case Op::CLOSURE: put("%d %d", a, bx); put("\t; %s.%d", name.c_str(), bx); break;
      case Op::VARARG:
        put("%d %d", a, c);
        out_ += comment;
        if (c == 0) out_ += "all out"; else put("%d out", c - 1);
        break;
      case Op::EXTRAARG: put("%d", ax); break;
    }
    out_ += "\n";
  }

  static const char* event(int c) {
    return c >= 0 && c < static_cast<int>(std::size(kEventNames)) ? kEventNames[c] : "?";
  }

  void debug(const ProtoData& f, const std::string& name) {
    put("constants (%d) for %s:\n", static_cast<int>(f.constants.size()), name.c_str());
    for (size_t i = 0; i < f.constants.size(); ++i) {
      const Constant& k = f.constants[i];
      const char* type = "N";
      switch (k.kind) {
        case Constant::Kind::Nil: type = "N"; break;
        case Constant::Kind::False: case Constant::Kind::True: type = "B"; break;
        case Constant::Kind::Integer: type = "I"; break;
        case Constant::Kind::Float: type = "F"; break;
        case Constant::Kind::String: type = "S"; break;
      }
      put("\t%d\t%s\t", static_cast<int>(i), type);
      out_ += constantToString(k);
      out_ += "\n";
    }
    put("locals (%d) for %s:\n", static_cast<int>(f.locals.size()), name.c_str());
    for (size_t i = 0; i < f.locals.size(); ++i) {
      put("\t%d\t", static_cast<int>(i));
      out_ += f.locals[i].name;
      put("\t%d\t%d\n", f.locals[i].startPc + 1, f.locals[i].endPc + 1);
    }
    put("upvalues (%d) for %s:\n", static_cast<int>(f.upvalues.size()), name.c_str());
    for (size_t i = 0; i < f.upvalues.size(); ++i) {
      put("\t%d\t", static_cast<int>(i));
      out_ += f.upvalues[i].name.empty() ? "-" : f.upvalues[i].name;
      put("\t%d\t%d\n", f.upvalues[i].inStack ? 1 : 0, f.upvalues[i].index);
    }
  }

  std::string& out_;
};

}  // namespace

std::string constantToString(const Constant& k) {
  char buf[64];
  switch (k.kind) {
    case Constant::Kind::Nil: return "nil";
    case Constant::Kind::False: return "false";
    case Constant::Kind::True: return "true";
    case Constant::Kind::Integer:
      std::snprintf(buf, sizeof buf, "%" PRId64, k.integer);
      return buf;
    case Constant::Kind::Float: {
      std::snprintf(buf, sizeof buf, "%.14g", k.number);
      std::string s = buf;
      if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
      return s;
    }
    case Constant::Kind::String: {
      std::string s = "\"";
      for (unsigned char c : k.string) {
        switch (c) {
          case '"': s += "\\\""; break;
          case '\\': s += "\\\\"; break;
          case '\a': s += "\\a"; break;
          case '\b': s += "\\b"; break;
          case '\f': s += "\\f"; break;
          case '\n': s += "\\n"; break;
          case '\r': s += "\\r"; break;
          case '\t': s += "\\t"; break;
          case '\v': s += "\\v"; break;
          default:
            if (c >= 32 && c < 127) {
              s += static_cast<char>(c);
            } else {
              std::snprintf(buf, sizeof buf, "\\%03d", c);
              s += buf;
            }
        }
      }
      return s + "\"";
    }
  }
  return "?";
}

std::string listing(const ProtoData& proto, bool full) {
  std::string out;
  Printer(out).function(proto, "F0", full);
  return out;
}

}  // namespace weft::frontend
