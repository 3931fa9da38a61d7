// The recursive-descent parser for Lua 5.4: one method per grammar rule, driving the
// FuncState code generator. Internal to the frontend; compile() is the public door.
//
// Invariants:
//  1. Every recursive rule passes through enterLevel(): nesting deeper than
//     kMaxSyntaxLevels is a syntax error, so hostile input cannot exhaust the C++ stack.
//  2. After each statement freereg == nvarstack(): statements leave no temporaries.
//  3. Scoping follows Lua 5.4: a block's locals, labels and pending gotos are popped by
//     leaveBlock(); gotos still pending at the end of a function are errors.
#pragma once

#include <memory>
#include <string_view>

#include "frontend/codegen.h"
#include "frontend/lexer.h"
#include "frontend/proto.h"

namespace weft::frontend {

inline constexpr int kMaxSyntaxLevels = 200;

class Parser {
 public:
  Parser(std::string_view source, std::string_view chunkName);
  std::unique_ptr<ProtoData> parseMainChunk();

 private:
  // Helpers (parser.cpp).
  void enterLevel();
  void leaveLevel() { --level_; }
  [[noreturn]] void errorExpected(int token);
  [[noreturn]] void errorLimit(FuncState* fs, int limit, const char* what);
  void checkLimit(int v, int limit, const char* what);
  bool testNext(int c);
  void check(int c);
  void checkNext(int c);
  void checkCondition(bool c, const char* msg);
  void checkMatch(int what, int who, int where);
  std::string_view strCheckName();
  void codeName(ExpDesc& e);
  bool blockFollow(bool withUntil);

  // Variables and scopes (scope.cpp).
  int newLocalVar(std::string_view name);
  void adjustLocalVars(int nvars);
  void removeVars(int toLevel);
  int registerLocalVar(std::string_view name);
  LocalVarInfo* localDebugInfo(int vidx);
  void checkReadonly(const ExpDesc& e);
  int searchUpvalue(FuncState* fs, std::string_view name);
  int newUpvalue(FuncState* fs, std::string_view name, const ExpDesc& v);
  int searchVar(FuncState* fs, std::string_view name, ExpDesc& var);
  void markUpval(FuncState* fs, int level);
  void markToBeClosed();
  void singleVarAux(FuncState* fs, std::string_view name, ExpDesc& var, bool base);
  void singleVar(ExpDesc& var);
  void adjustAssign(int nvars, int nexps, ExpDesc& e);
  void enterBlock(BlockScope& bl, bool isLoop);
  void leaveBlock();
  void moveGotosOut(BlockScope& bl);
  [[noreturn]] void undefGoto(const LabelDesc& gt);
  [[noreturn]] void jumpScopeError(const LabelDesc& gt);
  int findLabel(std::string_view name);
  int newLabelEntry(std::vector<LabelDesc>& list, std::string_view name, int line, int pc);
  void solveGoto(size_t g, const LabelDesc& label);
  bool solveGotos(const LabelDesc& label);
  bool createLabel(std::string_view name, int line, bool last);
  void openFunction(FuncState& fs, BlockScope& bl);
  void closeFunction();
  ProtoData* addPrototype();
  void codeClosure(ExpDesc& v);

  // Expressions (expr.cpp).
  void expr(ExpDesc& v);
  BinOpr subexpr(ExpDesc& v, int limit);
  void simpleExp(ExpDesc& v);
  void primaryExp(ExpDesc& v);
  void suffixedExp(ExpDesc& v);
  void fieldSel(ExpDesc& v);
  void yindex(ExpDesc& v);
  void funcArgs(ExpDesc& f);
  int expList(ExpDesc& v);
  void constructor(ExpDesc& t);
  void body(ExpDesc& e, bool isMethod, int line);
  void parList();

  // Statements (parser.cpp).
  void statList();
  void statement();
  void block();
  void ifStat(int line);
  void testThenBlock(int& escapeList);
  void whileStat(int line);
  void repeatStat(int line);
  void forStat(int line);
  void forNum(std::string_view varName, int line);
  void forList(std::string_view indexName);
  void forBody(int base, int line, int nvars, bool isGeneric);
  void exp1();
  int cond();
  void funcStat(int line);
  bool funcName(ExpDesc& v);
  void localFunc();
  void localStat();
  VarKind localAttribute();
  void checkToClose(int level);
  void exprStat();
  struct LhsAssign;
  void restAssign(LhsAssign* lh, int nvars);
  void checkConflict(LhsAssign* lh, const ExpDesc& v);
  void retStat();
  void breakStat();
  void gotoStat();
  void labelStat(std::string_view name, int line);
  void checkRepeated(std::string_view name);

  Lexer lex_;
  DynData dyd_;
  FuncState* fs_ = nullptr;
  int level_ = 0;
  std::string_view envName_;
  std::string_view breakName_;
  std::string source_;
};

}  // namespace weft::frontend
