// Variables, upvalues, blocks, labels and gotos, and opening/closing functions.
#include "frontend/parser.h"

namespace weft::frontend {

int Parser::newLocalVar(std::string_view name) {
  FuncState* fs = fs_;
  checkLimit(static_cast<int>(dyd_.actvar.size()) + 1 - fs->firstLocal_, kMaxVars, "local variables");
  VarDesc vd;
  vd.name = name;
  dyd_.actvar.push_back(vd);
  return static_cast<int>(dyd_.actvar.size()) - 1 - fs->firstLocal_;
}

int Parser::registerLocalVar(std::string_view name) {
  ProtoData* f = fs_->proto();
  LocalVarInfo info;
  info.name = std::string(name);
  info.startPc = fs_->pc();
  f->locals.push_back(std::move(info));
  return static_cast<int>(f->locals.size()) - 1;
}

LocalVarInfo* Parser::localDebugInfo(int vidx) {
  VarDesc& vd = fs_->localVar(vidx);
  if (vd.kind == VarKind::CompileTimeConst) return nullptr;
  return &fs_->proto()->locals[static_cast<size_t>(vd.pidx)];
}

void Parser::adjustLocalVars(int nvars) {
  FuncState* fs = fs_;
  int reg = fs->nvarstack();
  for (int i = 0; i < nvars; ++i) {
    int vidx = fs->nactvar_++;
    VarDesc& vd = fs->localVar(vidx);
    vd.ridx = reg++;
    vd.pidx = registerLocalVar(vd.name);
  }
}

void Parser::removeVars(int toLevel) {
  FuncState* fs = fs_;
  size_t remove = static_cast<size_t>(fs->nactvar_ - toLevel);
  while (fs->nactvar_ > toLevel) {
    LocalVarInfo* var = localDebugInfo(--fs->nactvar_);
    if (var) var->endPc = fs->pc();
  }
  dyd_.actvar.resize(dyd_.actvar.size() - remove);
}

void Parser::checkReadonly(const ExpDesc& e) {
  std::string_view name;
  switch (e.k) {
    case ExpKind::Const:
      name = dyd_.actvar[static_cast<size_t>(e.info)].name;
      break;
    case ExpKind::Local: {
      const VarDesc& vd = fs_->localVar(e.vidx);
      if (vd.kind != VarKind::Regular) name = vd.name;
      break;
    }
    case ExpKind::Upval: {
      const UpvalueDesc& up = fs_->proto()->upvalues[static_cast<size_t>(e.info)];
      if (up.kind != VarKind::Regular) name = up.name;
      break;
    }
    default:
      return;
  }
  if (!name.empty()) {
    lex_.semanticError("attempt to assign to const variable '" + std::string(name) + "'");
  }
}

int Parser::searchUpvalue(FuncState* fs, std::string_view name) {
  const auto& ups = fs->proto()->upvalues;
  for (size_t i = 0; i < ups.size(); ++i) {
    if (ups[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int Parser::newUpvalue(FuncState* fs, std::string_view name, const ExpDesc& v) {
  ProtoData* f = fs->proto();
  if (static_cast<int>(f->upvalues.size()) + 1 > kMaxUpvalues) errorLimit(fs, kMaxUpvalues, "upvalues");
  UpvalueDesc up;
  FuncState* prev = fs->prev();
  if (v.k == ExpKind::Local) {
    up.inStack = true;
    up.index = static_cast<uint8_t>(v.ridx);
    up.kind = prev->localVar(v.vidx).kind;
  } else {
    up.inStack = false;
    up.index = static_cast<uint8_t>(v.info);
    up.kind = prev->proto()->upvalues[static_cast<size_t>(v.info)].kind;
  }
  up.name = std::string(name);
  f->upvalues.push_back(std::move(up));
  return static_cast<int>(f->upvalues.size()) - 1;
}

int Parser::searchVar(FuncState* fs, std::string_view name, ExpDesc& var) {
  for (int i = fs->nactvar_ - 1; i >= 0; --i) {
    VarDesc& vd = fs->localVar(i);
    if (vd.name != name) continue;
    if (vd.kind == VarKind::CompileTimeConst) {
      var = ExpDesc::make(ExpKind::Const, fs->firstLocal_ + i);
    } else {
      var = ExpDesc::make(ExpKind::Local);
      var.vidx = i;
      var.ridx = vd.ridx;
    }
    return static_cast<int>(var.k);
  }
  return -1;
}

void Parser::markUpval(FuncState* fs, int level) {
  BlockScope* bl = fs->bl_;
  while (bl->nactvar > level) bl = bl->previous;
  bl->upval = true;
  fs->needClose_ = true;
}

void Parser::markToBeClosed() {
  BlockScope* bl = fs_->bl_;
  bl->upval = true;
  bl->insideTbc = true;
  fs_->needClose_ = true;
}

void Parser::singleVarAux(FuncState* fs, std::string_view name, ExpDesc& var, bool base) {
  if (fs == nullptr) {
    var = ExpDesc::make(ExpKind::Void);  // global
    return;
  }
  int kind = searchVar(fs, name, var);
  if (kind >= 0) {
    if (kind == static_cast<int>(ExpKind::Local) && !base) markUpval(fs, var.vidx);
    return;
  }
  int idx = searchUpvalue(fs, name);
  if (idx < 0) {
    singleVarAux(fs->prev(), name, var, false);
    if (var.k != ExpKind::Local && var.k != ExpKind::Upval) return;  // global or constant
    idx = newUpvalue(fs, name, var);
  }
  var = ExpDesc::make(ExpKind::Upval, idx);
}

void Parser::singleVar(ExpDesc& var) {
  std::string_view name = strCheckName();
  singleVarAux(fs_, name, var, true);
  if (var.k == ExpKind::Void) {
    singleVarAux(fs_, envName_, var, true);
    fs_->exp2anyregup(var);
    ExpDesc key = ExpDesc::make(ExpKind::KStr);
    key.strval = name;
    fs_->indexed(var, key);
  }
}

void Parser::adjustAssign(int nvars, int nexps, ExpDesc& e) {
  FuncState* fs = fs_;
  int needed = nvars - nexps;
  if (e.hasMultRet()) {
    int extra = std::max(needed + 1, 0);
    fs->setReturns(e, extra);
  } else {
    if (e.k != ExpKind::Void) fs->exp2nextreg(e);
    if (needed > 0) fs->loadNil(fs->freereg_, needed);
  }
  if (needed > 0) fs->reserveRegs(needed);
  else fs->freereg_ += needed;
}

void Parser::enterBlock(BlockScope& bl, bool isLoop) {
  FuncState* fs = fs_;
  bl.isLoop = isLoop;
  bl.nactvar = fs->nactvar_;
  bl.firstLabel = static_cast<int>(dyd_.labels.size());
  bl.firstGoto = static_cast<int>(dyd_.gotos.size());
  bl.upval = false;
  bl.insideTbc = fs->bl_ != nullptr && fs->bl_->insideTbc;
  bl.previous = fs->bl_;
  fs->bl_ = &bl;
}

void Parser::undefGoto(const LabelDesc& gt) {
  if (gt.name == breakName_) {
    lex_.semanticError("break outside loop at line " + std::to_string(gt.line));
  }
  lex_.semanticError("no visible label '" + std::string(gt.name) + "' for <goto> at line " +
                     std::to_string(gt.line));
}

void Parser::jumpScopeError(const LabelDesc& gt) {
  std::string_view var = fs_->localVar(gt.nactvar).name;
  lex_.semanticError("<goto " + std::string(gt.name) + "> at line " + std::to_string(gt.line) +
                     " jumps into the scope of local '" + std::string(var) + "'");
}

void Parser::moveGotosOut(BlockScope& bl) {
  for (size_t i = static_cast<size_t>(bl.firstGoto); i < dyd_.gotos.size(); ++i) {
    LabelDesc& gt = dyd_.gotos[i];
    if (fs_->regLevel(gt.nactvar) > fs_->regLevel(bl.nactvar)) gt.close |= bl.upval;
    gt.nactvar = bl.nactvar;
  }
}

void Parser::leaveBlock() {
  FuncState* fs = fs_;
  BlockScope* bl = fs->bl_;
  bool hasClose = false;
  int stackLevel = fs->regLevel(bl->nactvar);
  // The block's locals go first: a CLOSE that the break label emits closes from the level
  // outside the block, not from the innermost local (a captured loop variable left the
  // for loop's to-be-closed state unclosed).
  removeVars(bl->nactvar);
  if (bl->isLoop) hasClose = createLabel(breakName_, 0, false);
  if (!hasClose && bl->previous && bl->upval) fs->codeABC(Op::CLOSE, stackLevel, 0, 0);
  fs->freereg_ = stackLevel;
  dyd_.labels.resize(static_cast<size_t>(bl->firstLabel));
  fs->bl_ = bl->previous;
  if (bl->previous) {
    moveGotosOut(*bl);
  } else if (static_cast<size_t>(bl->firstGoto) < dyd_.gotos.size()) {
    undefGoto(dyd_.gotos[static_cast<size_t>(bl->firstGoto)]);
  }
}

int Parser::findLabel(std::string_view name) {
  for (size_t i = static_cast<size_t>(fs_->firstLabel_); i < dyd_.labels.size(); ++i) {
    if (dyd_.labels[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int Parser::newLabelEntry(std::vector<LabelDesc>& list, std::string_view name, int line, int pc) {
  LabelDesc d;
  d.name = name;
  d.line = line;
  d.nactvar = fs_->nactvar_;
  d.close = false;
  d.pc = pc;
  list.push_back(d);
  return static_cast<int>(list.size()) - 1;
}

void Parser::solveGoto(size_t g, const LabelDesc& label) {
  LabelDesc gt = dyd_.gotos[g];
  if (gt.nactvar < label.nactvar) jumpScopeError(gt);
  fs_->patchList(gt.pc, label.pc);
  dyd_.gotos.erase(dyd_.gotos.begin() + static_cast<long>(g));
}

bool Parser::solveGotos(const LabelDesc& label) {
  size_t i = static_cast<size_t>(fs_->bl_->firstGoto);
  bool needsClose = false;
  while (i < dyd_.gotos.size()) {
    if (dyd_.gotos[i].name == label.name) {
      needsClose |= dyd_.gotos[i].close;
      solveGoto(i, label);
    } else {
      ++i;
    }
  }
  return needsClose;
}

bool Parser::createLabel(std::string_view name, int line, bool last) {
  FuncState* fs = fs_;
  int l = newLabelEntry(dyd_.labels, name, line, fs->getLabel());
  if (last) dyd_.labels[static_cast<size_t>(l)].nactvar = fs->bl_->nactvar;
  LabelDesc label = dyd_.labels[static_cast<size_t>(l)];
  if (solveGotos(label)) {
    fs->codeABC(Op::CLOSE, fs->nvarstack(), 0, 0);
    return true;
  }
  return false;
}

ProtoData* Parser::addPrototype() {
  auto p = std::make_unique<ProtoData>();
  p->source = source_;
  p->fromSource = true;
  ProtoData* raw = p.get();
  auto& protos = fs_->proto()->protos;
  if (protos.size() >= static_cast<size_t>(kMaxArgBx)) errorLimit(fs_, kMaxArgBx, "functions");
  protos.push_back(std::move(p));
  return raw;
}

void Parser::openFunction(FuncState& fs, BlockScope& bl) {
  fs.firstLocal_ = static_cast<int>(dyd_.actvar.size());
  fs.firstLabel_ = static_cast<int>(dyd_.labels.size());
  fs.proto()->source = source_;
  fs.proto()->maxStackSize = 2;
  fs_ = &fs;
  enterBlock(bl, false);
}

void Parser::closeFunction() {
  FuncState* fs = fs_;
  fs->ret(fs->nvarstack(), 0);
  leaveBlock();
  fs->finish();
  fs_ = fs->prev();
}

void Parser::codeClosure(ExpDesc& v) {
  FuncState* fs = fs_->prev();
  int np = static_cast<int>(fs->proto()->protos.size());
  v = ExpDesc::make(ExpKind::Reloc, fs->codeABx(Op::CLOSURE, 0, static_cast<unsigned>(np - 1)));
  fs->exp2nextreg(v);
}

}  // namespace weft::frontend
