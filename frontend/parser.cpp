// Statements, the parser's helpers and the main chunk.
#include "frontend/parser.h"

#include "frontend/compiler.h"

namespace weft::frontend {

struct Parser::LhsAssign {
  LhsAssign* prev = nullptr;
  ExpDesc v;
};

Parser::Parser(std::string_view source, std::string_view chunkName)
    : lex_(source, shortSourceName(chunkName)), source_(chunkName) {
  envName_ = lex_.intern("_ENV");
  breakName_ = lex_.intern("break");
}

// ---- helpers ----

void Parser::enterLevel() {
  if (++level_ > kMaxSyntaxLevels) errorLimit(fs_, kMaxSyntaxLevels, "C levels");
}

void Parser::errorExpected(int token) { lex_.syntaxError(Lexer::tokenToString(token) + " expected"); }

void Parser::errorLimit(FuncState* fs, int limit, const char* what) {
  int line = fs->proto()->lineDefined;
  std::string where = line == 0 ? "main function" : "function at line " + std::to_string(line);
  lex_.syntaxError("too many " + std::string(what) + " (limit is " + std::to_string(limit) + ") in " + where);
}

void Parser::checkLimit(int v, int limit, const char* what) {
  if (v > limit) errorLimit(fs_, limit, what);
}

bool Parser::testNext(int c) {
  if (lex_.token() != c) return false;
  lex_.next();
  return true;
}

void Parser::check(int c) {
  if (lex_.token() != c) errorExpected(c);
}

void Parser::checkNext(int c) {
  check(c);
  lex_.next();
}

void Parser::checkCondition(bool c, const char* msg) {
  if (!c) lex_.syntaxError(msg);
}

void Parser::checkMatch(int what, int who, int where) {
  if (testNext(what)) return;
  if (where == lex_.line()) errorExpected(what);
  lex_.syntaxError(Lexer::tokenToString(what) + " expected (to close " + Lexer::tokenToString(who) +
                   " at line " + std::to_string(where) + ")");
}

std::string_view Parser::strCheckName() {
  check(kTkName);
  std::string_view s = lex_.current().text;
  lex_.next();
  return s;
}

void Parser::codeName(ExpDesc& e) {
  e = ExpDesc::make(ExpKind::KStr);
  e.strval = strCheckName();
}

bool Parser::blockFollow(bool withUntil) {
  switch (lex_.token()) {
    case kTkElse: case kTkElseif: case kTkEnd: case kTkEos: return true;
    case kTkUntil: return withUntil;
    default: return false;
  }
}

// ---- main chunk ----

std::unique_ptr<ProtoData> Parser::parseMainChunk() {
  auto main = std::make_unique<ProtoData>();
  main->fromSource = true;
  FuncState fs(main.get(), nullptr, lex_, dyd_);
  BlockScope bl;
  openFunction(fs, bl);
  main->isVararg = true;
  fs.codeABC(Op::VARARGPREP, 0, 0, 0);
  UpvalueDesc env;
  env.name = "_ENV";
  env.inStack = true;
  env.index = 0;
  main->upvalues.push_back(env);
  lex_.next();
  statList();
  check(kTkEos);
  closeFunction();
  return main;
}

// ---- statements ----

void Parser::statList() {
  while (!blockFollow(true)) {
    if (lex_.token() == kTkReturn) {
      statement();
      return;
    }
    statement();
  }
}

void Parser::statement() {
  int line = lex_.line();
  enterLevel();
  switch (lex_.token()) {
    case ';': lex_.next(); break;
    case kTkIf: ifStat(line); break;
    case kTkWhile: whileStat(line); break;
    case kTkDo:
      lex_.next();
      block();
      checkMatch(kTkEnd, kTkDo, line);
      break;
    case kTkFor: forStat(line); break;
    case kTkRepeat: repeatStat(line); break;
    case kTkFunction: funcStat(line); break;
    case kTkLocal:
      lex_.next();
      if (testNext(kTkFunction)) localFunc();
      else localStat();
      break;
    case kTkDbColon:
      lex_.next();
      labelStat(strCheckName(), line);
      break;
    case kTkReturn:
      lex_.next();
      retStat();
      break;
    case kTkBreak: breakStat(); break;
    case kTkGoto:
      lex_.next();
      gotoStat();
      break;
    default: exprStat(); break;
  }
  fs_->freereg_ = fs_->nvarstack();
  leaveLevel();
}

void Parser::block() {
  BlockScope bl;
  enterBlock(bl, false);
  statList();
  leaveBlock();
}

int Parser::cond() {
  ExpDesc v;
  expr(v);
  if (v.k == ExpKind::Nil) v.k = ExpKind::False;
  fs_->goIfTrue(v);
  return v.f;
}

void Parser::testThenBlock(int& escapeList) {
  BlockScope bl;
  FuncState* fs = fs_;
  ExpDesc v;
  int jf;
  lex_.next();
  expr(v);
  checkNext(kTkThen);
  if (lex_.token() == kTkBreak) {
    int line = lex_.line();
    fs->goIfFalse(v);
    lex_.next();
    enterBlock(bl, false);
    newLabelEntry(dyd_.gotos, breakName_, line, v.t);
    while (testNext(';')) {
    }
    if (blockFollow(false)) {
      leaveBlock();
      return;
    }
    jf = fs->jump();
  } else {
    fs->goIfTrue(v);
    enterBlock(bl, false);
    jf = v.f;
  }
  statList();
  leaveBlock();
  if (lex_.token() == kTkElse || lex_.token() == kTkElseif) fs->concatJumps(escapeList, fs->jump());
  fs->patchToHere(jf);
}

void Parser::ifStat(int line) {
  int escapeList = kNoJump;
  testThenBlock(escapeList);
  while (lex_.token() == kTkElseif) testThenBlock(escapeList);
  if (testNext(kTkElse)) block();
  checkMatch(kTkEnd, kTkIf, line);
  fs_->patchToHere(escapeList);
}

void Parser::whileStat(int line) {
  FuncState* fs = fs_;
  BlockScope bl;
  lex_.next();
  int whileInit = fs->getLabel();
  int condExit = cond();
  enterBlock(bl, true);
  checkNext(kTkDo);
  block();
  fs->jumpTo(whileInit);
  checkMatch(kTkEnd, kTkWhile, line);
  leaveBlock();
  fs->patchToHere(condExit);
}

void Parser::repeatStat(int line) {
  FuncState* fs = fs_;
  int repeatInit = fs->getLabel();
  BlockScope loop, scope;
  enterBlock(loop, true);
  enterBlock(scope, false);
  lex_.next();
  statList();
  checkMatch(kTkUntil, kTkRepeat, line);
  int condExit = cond();
  leaveBlock();
  if (scope.upval) {
    int exit = fs->jump();
    fs->patchToHere(condExit);
    fs->codeABC(Op::CLOSE, fs->regLevel(scope.nactvar), 0, 0);
    condExit = fs->jump();
    fs->patchToHere(exit);
  }
  fs->patchList(condExit, repeatInit);
  leaveBlock();
}

void Parser::exp1() {
  ExpDesc e;
  expr(e);
  fs_->exp2nextreg(e);
}

void Parser::forBody(int base, int line, int nvars, bool isGeneric) {
  FuncState* fs = fs_;
  BlockScope bl;
  checkNext(kTkDo);
  int prep = fs->codeABx(isGeneric ? Op::TFORPREP : Op::FORPREP, base, 0);
  enterBlock(bl, false);
  adjustLocalVars(nvars);
  fs->reserveRegs(nvars);
  block();
  leaveBlock();
  int dest = fs->getLabel();
  int offset = dest - (prep + 1);
  if (offset > kMaxArgBx) lex_.syntaxError("control structure too long");
  fs->instr(prep) = setBx(fs->instr(prep), static_cast<unsigned>(offset));
  if (isGeneric) {
    fs->codeABC(Op::TFORCALL, base, 0, nvars);
    fs->fixLine(line);
  }
  int endFor = fs->codeABx(isGeneric ? Op::TFORLOOP : Op::FORLOOP, base, 0);
  offset = endFor + 1 - (prep + 1);
  if (offset > kMaxArgBx) lex_.syntaxError("control structure too long");
  fs->instr(endFor) = setBx(fs->instr(endFor), static_cast<unsigned>(offset));
  fs->fixLine(line);
}

void Parser::forNum(std::string_view varName, int line) {
  FuncState* fs = fs_;
  int base = fs->freereg_;
  std::string_view state = lex_.intern("(for state)");
  newLocalVar(state);
  newLocalVar(state);
  newLocalVar(state);
  newLocalVar(varName);
  checkNext('=');
  exp1();
  checkNext(',');
  exp1();
  if (testNext(',')) {
    exp1();
  } else {
    fs->loadInt(fs->freereg_, 1);
    fs->reserveRegs(1);
  }
  adjustLocalVars(3);
  forBody(base, line, 1, false);
}

void Parser::forList(std::string_view indexName) {
  FuncState* fs = fs_;
  ExpDesc e;
  int nvars = 5;
  int base = fs->freereg_;
  std::string_view state = lex_.intern("(for state)");
  for (int i = 0; i < 4; ++i) newLocalVar(state);
  newLocalVar(indexName);
  while (testNext(',')) {
    newLocalVar(strCheckName());
    ++nvars;
  }
  checkNext(kTkIn);
  int line = lex_.line();
  adjustAssign(4, expList(e), e);
  adjustLocalVars(4);
  markToBeClosed();
  fs->checkStack(3);
  forBody(base, line, nvars - 4, true);
}

void Parser::forStat(int line) {
  BlockScope bl;
  enterBlock(bl, true);
  lex_.next();
  std::string_view varName = strCheckName();
  switch (lex_.token()) {
    case '=': forNum(varName, line); break;
    case ',': case kTkIn: forList(varName); break;
    default: lex_.syntaxError("'=' or 'in' expected");
  }
  checkMatch(kTkEnd, kTkFor, line);
  leaveBlock();
}

bool Parser::funcName(ExpDesc& v) {
  bool isMethod = false;
  singleVar(v);
  while (lex_.token() == '.') fieldSel(v);
  if (lex_.token() == ':') {
    isMethod = true;
    fieldSel(v);
  }
  return isMethod;
}

void Parser::funcStat(int line) {
  ExpDesc v, b;
  lex_.next();
  bool isMethod = funcName(v);
  body(b, isMethod, line);
  checkReadonly(v);
  fs_->storeVar(v, b);
  fs_->fixLine(line);
}

void Parser::localFunc() {
  ExpDesc b;
  FuncState* fs = fs_;
  int fvar = fs->nactvar_;
  newLocalVar(strCheckName());
  adjustLocalVars(1);
  body(b, false, lex_.line());
  localDebugInfo(fvar)->startPc = fs->pc();
}

VarKind Parser::localAttribute() {
  if (!testNext('<')) return VarKind::Regular;
  std::string_view attr = strCheckName();
  checkNext('>');
  if (attr == "const") return VarKind::Const;
  if (attr == "close") return VarKind::Close;
  lex_.semanticError("unknown attribute '" + std::string(attr) + "'");
}

void Parser::checkToClose(int level) {
  if (level == -1) return;
  markToBeClosed();
  fs_->codeABC(Op::TBC, fs_->regLevel(level), 0, 0);
}

void Parser::localStat() {
  FuncState* fs = fs_;
  int toClose = -1;
  int vidx = 0;
  int nvars = 0;
  int nexps;
  ExpDesc e;
  do {
    vidx = newLocalVar(strCheckName());
    VarKind kind = localAttribute();
    fs->localVar(vidx).kind = kind;
    if (kind == VarKind::Close) {
      if (toClose != -1) lex_.semanticError("multiple to-be-closed variables in local list");
      toClose = fs->nactvar_ + nvars;
    }
    ++nvars;
  } while (testNext(','));
  if (testNext('=')) {
    nexps = expList(e);
  } else {
    e = ExpDesc::make(ExpKind::Void);
    nexps = 0;
  }
  VarDesc& var = fs->localVar(vidx);
  ExpDesc value;
  if (nvars == nexps && var.kind == VarKind::Const && fs->exp2const(e, value)) {
    var.kind = VarKind::CompileTimeConst;
    var.constant = value;
    adjustLocalVars(nvars - 1);
    fs->nactvar_++;
  } else {
    adjustAssign(nvars, nexps, e);
    adjustLocalVars(nvars);
  }
  checkToClose(toClose);
}

// In "a, b[a] = ...", a later target may be a local or upvalue used as a table or key
// by an earlier indexed target: copy it first so the earlier store sees the old value.
void Parser::checkConflict(LhsAssign* lh, const ExpDesc& v) {
  FuncState* fs = fs_;
  int extra = fs->freereg_;
  bool conflict = false;
  for (; lh; lh = lh->prev) {
    if (!lh->v.isIndexed()) continue;
    if (lh->v.k == ExpKind::IndexUp) {
      if (v.k == ExpKind::Upval && lh->v.indT == v.info) {
        conflict = true;
        lh->v.k = ExpKind::IndexStr;
        lh->v.indT = extra;
      }
    } else {
      if (v.k == ExpKind::Local && lh->v.indT == v.ridx) {
        conflict = true;
        lh->v.indT = extra;
      }
      if (lh->v.k == ExpKind::Indexed && v.k == ExpKind::Local && lh->v.indIdx == v.ridx) {
        conflict = true;
        lh->v.indIdx = extra;
      }
    }
  }
  if (conflict) {
    if (v.k == ExpKind::Local) fs->codeABC(Op::MOVE, extra, v.ridx, 0);
    else fs->codeABC(Op::GETUPVAL, extra, v.info, 0);
    fs->reserveRegs(1);
  }
}

void Parser::restAssign(LhsAssign* lh, int nvars) {
  ExpDesc e;
  checkCondition(lh->v.isVar(), "syntax error");
  checkReadonly(lh->v);
  if (testNext(',')) {
    LhsAssign nv;
    nv.prev = lh;
    suffixedExp(nv.v);
    if (!nv.v.isIndexed()) checkConflict(lh, nv.v);
    enterLevel();
    restAssign(&nv, nvars + 1);
    leaveLevel();
  } else {
    checkNext('=');
    int nexps = expList(e);
    if (nexps != nvars) {
      adjustAssign(nvars, nexps, e);
    } else {
      fs_->setOneRet(e);
      fs_->storeVar(lh->v, e);
      return;
    }
  }
  e = ExpDesc::make(ExpKind::NonReloc, fs_->freereg_ - 1);
  fs_->storeVar(lh->v, e);
}

void Parser::exprStat() {
  LhsAssign v;
  suffixedExp(v.v);
  if (lex_.token() == '=' || lex_.token() == ',') {
    restAssign(&v, 1);
  } else {
    checkCondition(v.v.k == ExpKind::Call, "syntax error");
    Instruction& in = fs_->instrOf(v.v);
    in = setC(in, 1);
  }
}

void Parser::retStat() {
  FuncState* fs = fs_;
  ExpDesc e;
  int nret;
  int first = fs->nvarstack();
  if (blockFollow(true) || lex_.token() == ';') {
    nret = 0;
  } else {
    nret = expList(e);
    if (e.hasMultRet()) {
      fs->setMultRet(e);
      if (e.k == ExpKind::Call && nret == 1 && !fs->bl_->insideTbc) {
        Instruction& in = fs->instrOf(e);
        in = (in & ~Instruction(0x7f)) | static_cast<Instruction>(Op::TAILCALL);
      }
      nret = kMultRet;
    } else if (nret == 1) {
      first = fs->exp2anyreg(e);
    } else {
      fs->exp2nextreg(e);
    }
  }
  fs->ret(first, nret);
  testNext(';');
}

void Parser::breakStat() {
  int line = lex_.line();
  lex_.next();
  newLabelEntry(dyd_.gotos, breakName_, line, fs_->jump());
}

void Parser::gotoStat() {
  FuncState* fs = fs_;
  int line = lex_.line();
  std::string_view name = strCheckName();
  int lb = findLabel(name);
  if (lb < 0) {
    newLabelEntry(dyd_.gotos, name, line, fs->jump());
    return;
  }
  int lbLevel = fs->regLevel(dyd_.labels[static_cast<size_t>(lb)].nactvar);
  if (fs->nvarstack() > lbLevel) fs->codeABC(Op::CLOSE, lbLevel, 0, 0);
  fs->patchList(fs->jump(), dyd_.labels[static_cast<size_t>(lb)].pc);
}

void Parser::checkRepeated(std::string_view name) {
  int lb = findLabel(name);
  if (lb >= 0) {
    lex_.semanticError("label '" + std::string(name) + "' already defined on line " +
                       std::to_string(dyd_.labels[static_cast<size_t>(lb)].line));
  }
}

void Parser::labelStat(std::string_view name, int line) {
  checkNext(kTkDbColon);
  while (lex_.token() == ';' || lex_.token() == kTkDbColon) statement();
  checkRepeated(name);
  createLabel(name, line, blockFollow(false));
}

}  // namespace weft::frontend
