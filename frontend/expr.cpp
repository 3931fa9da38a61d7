// Expressions: operator precedence climbing, primary and suffixed expressions, calls,
// table constructors and function bodies.
#include "frontend/parser.h"

namespace weft::frontend {
namespace {

struct Priority {
  uint8_t left;
  uint8_t right;
};

// In BinOpr order. '..' and '^' are right associative (right < left).
constexpr Priority kPriority[] = {
    {10, 10}, {10, 10},          // + -
    {11, 11}, {11, 11},          // * %
    {14, 13},                    // ^
    {11, 11}, {11, 11},          // / //
    {6, 6}, {4, 4}, {5, 5},      // & | ~
    {7, 7}, {7, 7},              // << >>
    {9, 8},                      // ..
    {3, 3}, {3, 3}, {3, 3},      // == < <=
    {3, 3}, {3, 3}, {3, 3},      // ~= > >=
    {2, 2}, {1, 1},              // and or
};
constexpr int kUnaryPriority = 12;

UnOpr unaryOperator(int token) {
  switch (token) {
    case kTkNot: return UnOpr::Not;
    case '-': return UnOpr::Minus;
    case '~': return UnOpr::BNot;
    case '#': return UnOpr::Len;
    default: return UnOpr::None;
  }
}

BinOpr binaryOperator(int token) {
  switch (token) {
    case '+': return BinOpr::Add;
    case '-': return BinOpr::Sub;
    case '*': return BinOpr::Mul;
    case '%': return BinOpr::Mod;
    case '^': return BinOpr::Pow;
    case '/': return BinOpr::Div;
    case kTkIDiv: return BinOpr::IDiv;
    case '&': return BinOpr::BAnd;
    case '|': return BinOpr::BOr;
    case '~': return BinOpr::BXor;
    case kTkShl: return BinOpr::Shl;
    case kTkShr: return BinOpr::Shr;
    case kTkConcat: return BinOpr::Concat;
    case kTkNe: return BinOpr::Ne;
    case kTkEq: return BinOpr::Eq;
    case '<': return BinOpr::Lt;
    case kTkLe: return BinOpr::Le;
    case '>': return BinOpr::Gt;
    case kTkGe: return BinOpr::Ge;
    case kTkAnd: return BinOpr::And;
    case kTkOr: return BinOpr::Or;
    default: return BinOpr::None;
  }
}

// Table constructor bookkeeping.
struct ConsControl {
  ExpDesc v;          // last list item read
  ExpDesc* t = nullptr;
  int nh = 0;         // record fields
  int na = 0;         // list items already stored
  int toStore = 0;    // list items pending
};

}  // namespace

void Parser::expr(ExpDesc& v) { subexpr(v, 0); }

BinOpr Parser::subexpr(ExpDesc& v, int limit) {
  enterLevel();
  UnOpr uop = unaryOperator(lex_.token());
  if (uop != UnOpr::None) {
    int line = lex_.line();
    lex_.next();
    subexpr(v, kUnaryPriority);
    fs_->prefix(uop, v, line);
  } else {
    simpleExp(v);
  }
  BinOpr op = binaryOperator(lex_.token());
  while (op != BinOpr::None && kPriority[static_cast<int>(op)].left > limit) {
    ExpDesc v2;
    int line = lex_.line();
    lex_.next();
    fs_->infix(op, v);
    BinOpr nextOp = subexpr(v2, kPriority[static_cast<int>(op)].right);
    fs_->posfix(op, v, v2, line);
    op = nextOp;
  }
  leaveLevel();
  return op;
}

void Parser::simpleExp(ExpDesc& v) {
  const TokenInfo& tok = lex_.current();
  switch (tok.token) {
    case kTkFloat:
      v = ExpDesc::make(ExpKind::KFlt);
      v.nval = tok.number;
      break;
    case kTkInt:
      v = ExpDesc::make(ExpKind::KInt);
      v.ival = tok.integer;
      break;
    case kTkString:
      v = ExpDesc::make(ExpKind::KStr);
      v.strval = tok.text;
      break;
    case kTkNil: v = ExpDesc::make(ExpKind::Nil); break;
    case kTkTrue: v = ExpDesc::make(ExpKind::True); break;
    case kTkFalse: v = ExpDesc::make(ExpKind::False); break;
    case kTkDots:
      checkCondition(fs_->proto()->isVararg, "cannot use '...' outside a vararg function");
      v = ExpDesc::make(ExpKind::Vararg, fs_->codeABC(Op::VARARG, 0, 0, 1));
      break;
    case '{':
      constructor(v);
      return;
    case kTkFunction:
      lex_.next();
      body(v, false, lex_.line());
      return;
    default:
      suffixedExp(v);
      return;
  }
  lex_.next();
}

void Parser::primaryExp(ExpDesc& v) {
  switch (lex_.token()) {
    case '(': {
      int line = lex_.line();
      lex_.next();
      expr(v);
      checkMatch(')', '(', line);
      fs_->dischargeVars(v);
      return;
    }
    case kTkName:
      singleVar(v);
      return;
    default:
      lex_.syntaxError("unexpected symbol");
  }
}

void Parser::suffixedExp(ExpDesc& v) {
  primaryExp(v);
  for (;;) {
    switch (lex_.token()) {
      case '.':
        fieldSel(v);
        break;
      case '[': {
        ExpDesc key;
        fs_->exp2anyregup(v);
        yindex(key);
        fs_->indexed(v, key);
        break;
      }
      case ':': {
        ExpDesc key;
        lex_.next();
        codeName(key);
        fs_->self(v, key);
        funcArgs(v);
        break;
      }
      case '(': case kTkString: case '{':
        fs_->exp2nextreg(v);
        funcArgs(v);
        break;
      default:
        return;
    }
  }
}

void Parser::fieldSel(ExpDesc& v) {
  ExpDesc key;
  fs_->exp2anyregup(v);
  lex_.next();
  codeName(key);
  fs_->indexed(v, key);
}

void Parser::yindex(ExpDesc& v) {
  lex_.next();
  expr(v);
  fs_->exp2val(v);
  checkNext(']');
}

void Parser::funcArgs(ExpDesc& f) {
  FuncState* fs = fs_;
  ExpDesc args;
  // The call belongs to the line where its arguments start (Lua 5.4.6), not to the line
  // of the expression's first token: "a\n(23)" fails on line 2.
  int line = lex_.line();
  switch (lex_.token()) {
    case '(':
      lex_.next();
      if (lex_.token() == ')') {
        args = ExpDesc::make(ExpKind::Void);
      } else {
        expList(args);
        if (args.hasMultRet()) fs->setMultRet(args);
      }
      checkMatch(')', '(', line);
      break;
    case '{':
      constructor(args);
      break;
    case kTkString:
      args = ExpDesc::make(ExpKind::KStr);
      args.strval = lex_.current().text;
      lex_.next();
      break;
    default:
      lex_.syntaxError("function arguments expected");
  }
  int base = f.info;
  int nparams;
  if (args.hasMultRet()) {
    nparams = kMultRet;
  } else {
    if (args.k != ExpKind::Void) fs->exp2nextreg(args);
    nparams = fs->freereg_ - (base + 1);
  }
  f = ExpDesc::make(ExpKind::Call, fs->codeABC(Op::CALL, base, nparams + 1, 2));
  fs->fixLine(line);
  fs->freereg_ = base + 1;
}

int Parser::expList(ExpDesc& v) {
  int n = 1;
  expr(v);
  while (testNext(',')) {
    fs_->exp2nextreg(v);
    expr(v);
    ++n;
  }
  return n;
}

void Parser::constructor(ExpDesc& t) {
  FuncState* fs = fs_;
  int line = lex_.line();
  int pc = fs->codeABC(Op::NEWTABLE, 0, 0, 0);
  fs->code(0);  // room for the EXTRAARG
  ConsControl cc;
  cc.t = &t;
  t = ExpDesc::make(ExpKind::NonReloc, fs->freereg_);
  fs->reserveRegs(1);
  cc.v = ExpDesc::make(ExpKind::Void);
  checkNext('{');
  do {
    if (lex_.token() == '}') break;
    // Close the previous list item, flushing a full batch to the table.
    if (cc.v.k != ExpKind::Void) {
      fs->exp2nextreg(cc.v);
      cc.v.k = ExpKind::Void;
      if (cc.toStore == kFieldsPerFlush) {
        fs->setList(t.info, cc.na, cc.toStore);
        cc.na += cc.toStore;
        cc.toStore = 0;
      }
    }
    bool isRecord = lex_.token() == '[' || (lex_.token() == kTkName && lex_.lookahead() == '=');
    if (isRecord) {
      int reg = fs->freereg_;
      ExpDesc key, val;
      if (lex_.token() == kTkName) {
        codeName(key);
      } else {
        yindex(key);
      }
      cc.nh++;
      checkNext('=');
      ExpDesc tab = t;
      fs->indexed(tab, key);
      expr(val);
      fs->storeVar(tab, val);
      fs->freereg_ = reg;
    } else {
      expr(cc.v);
      cc.toStore++;
    }
  } while (testNext(',') || testNext(';'));
  checkMatch('}', '{', line);
  if (cc.toStore != 0) {
    if (cc.v.hasMultRet()) {
      fs->setMultRet(cc.v);
      fs->setList(t.info, cc.na, kMultRet);
      cc.na--;
    } else {
      if (cc.v.k != ExpKind::Void) fs->exp2nextreg(cc.v);
      fs->setList(t.info, cc.na, cc.toStore);
    }
    cc.na += cc.toStore;
  }
  fs->setTableSize(pc, t.info, cc.na, cc.nh);
}

void Parser::parList() {
  FuncState* fs = fs_;
  int nparams = 0;
  bool isVararg = false;
  if (lex_.token() != ')') {
    do {
      switch (lex_.token()) {
        case kTkName:
          newLocalVar(strCheckName());
          ++nparams;
          break;
        case kTkDots:
          lex_.next();
          isVararg = true;
          break;
        default:
          lex_.syntaxError("<name> or '...' expected");
      }
    } while (!isVararg && testNext(','));
  }
  adjustLocalVars(nparams);
  fs->proto()->numParams = static_cast<uint8_t>(fs->nactvar_);
  if (isVararg) {
    fs->proto()->isVararg = true;
    fs->codeABC(Op::VARARGPREP, fs->proto()->numParams, 0, 0);
  }
  fs->reserveRegs(fs->nactvar_);
}

void Parser::body(ExpDesc& e, bool isMethod, int line) {
  ProtoData* proto = addPrototype();
  proto->lineDefined = line;
  auto fs = std::make_unique<FuncState>(proto, fs_, lex_, dyd_);
  BlockScope bl;
  openFunction(*fs, bl);
  if (isMethod) {
    newLocalVar(lex_.intern("self"));
    adjustLocalVars(1);
  }
  checkNext('(');
  parList();
  checkNext(')');
  statList();
  proto->lastLineDefined = lex_.line();
  checkMatch(kTkEnd, kTkFunction, line);
  codeClosure(e);
  closeFunction();
}

}  // namespace weft::frontend
