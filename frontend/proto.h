// What the compiler produces: a tree of function prototypes that knows nothing of the
// VM's heap. The VM turns a ProtoData into heap objects when it loads a chunk
// (interning constant strings); string.dump serialises one (frontend/chunkio.h).
//
// Invariants:
//  1. code.size() == lineinfo.size(): lineinfo[pc] is the source line of code[pc].
//  2. Every constant index, prototype index and upvalue index an instruction names is
//     in range; maxStackSize covers every register an instruction names.
//  3. upvalues[i].inStack means "register index of the enclosing function", otherwise
//     "upvalue index of the enclosing function".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frontend/opcodes.h"

namespace weft::frontend {

struct Constant {
  enum class Kind : uint8_t { Nil, False, True, Integer, Float, String };
  Kind kind = Kind::Nil;
  int64_t integer = 0;
  double number = 0;
  std::string string;

  static Constant makeInteger(int64_t v) { Constant c; c.kind = Kind::Integer; c.integer = v; return c; }
  static Constant makeFloat(double v) { Constant c; c.kind = Kind::Float; c.number = v; return c; }
  static Constant makeString(std::string v) { Constant c; c.kind = Kind::String; c.string = std::move(v); return c; }
  static Constant makeBool(bool v) { Constant c; c.kind = v ? Kind::True : Kind::False; return c; }
};

// Variable kinds as Lua 5.4 has them: regular, <const>, <close>, compile-time constant.
enum class VarKind : uint8_t { Regular, Const, Close, CompileTimeConst };

struct UpvalueDesc {
  std::string name;
  bool inStack = false;  // captured from the enclosing function's registers
  uint8_t index = 0;     // register or upvalue index in the enclosing function
  VarKind kind = VarKind::Regular;
};

struct LocalVarInfo {
  std::string name;
  int startPc = 0;  // first pc where the variable is active
  int endPc = 0;    // first pc where it is dead
};

struct ProtoData {
  std::string source;  // chunk name, e.g. "@script.lua" or "=stdin"
  int lineDefined = 0;
  int lastLineDefined = 0;
  uint8_t numParams = 0;
  bool isVararg = false;
  uint8_t maxStackSize = 2;
  std::vector<Instruction> code;
  std::vector<int> lineinfo;
  std::vector<Constant> constants;
  std::vector<std::unique_ptr<ProtoData>> protos;
  std::vector<UpvalueDesc> upvalues;
  std::vector<LocalVarInfo> locals;
  // Set by the compiler, not by the binary loader (a binary chunk may break these
  // rules): registers are used as Lua's compiler uses them (at a statement boundary
  // exactly the locals `locals` lists as active; a call's or an allocation's target is
  // the first free register), so the collector may drop the others (vm/call.cpp).
  bool fromSource = false;
};

}  // namespace weft::frontend
