// Variable and function names for messages, current lines, tracebacks (vm/debug.h).
// Names come from a symbolic walk over the bytecode, as the manual's messages need
// ("global 'x'", "field 'y'", "method 'm'", "upvalue 'u'", "constant 'c'").
#include "vm/debug.h"

#include <cstring>
#include <string>

#include "frontend/compiler.h"
#include "frontend/opcodes.h"
#include "vm/api.h"
#include "vm/meta.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

using namespace frontend;

namespace {

// Name of the n-th (1-based) local variable active at pc, or nullptr.
const char* localName(const ProtoData* p, int n, int pc) {
  for (const auto& lv : p->locals) {
    if (lv.startPc > pc) break;
    if (pc < lv.endPc) {
      if (--n == 0) return lv.name.c_str();
    }
  }
  return nullptr;
}

bool setsRegisterA(Op op) {
  switch (op) {
    case Op::SETTABUP: case Op::SETTABLE: case Op::SETI: case Op::SETFIELD: case Op::SETUPVAL:
    case Op::MMBIN: case Op::MMBINI: case Op::MMBINK: case Op::CLOSE: case Op::TBC: case Op::JMP:
    case Op::EQ: case Op::LT: case Op::LE: case Op::EQK: case Op::EQI: case Op::LTI: case Op::LEI:
    case Op::GTI: case Op::GEI: case Op::TEST: case Op::RETURN: case Op::RETURN0: case Op::RETURN1:
    case Op::TFORPREP: case Op::TFORCALL: case Op::SETLIST: case Op::VARARGPREP: case Op::EXTRAARG:
      return false;
    default:
      return true;
  }
}

// The pc of the last instruction before lastpc that set `reg`, or -1.
int findSetReg(const ProtoData* p, int lastpc, int reg) {
  int setreg = -1;
  int jmptarget = 0;
  if (getOp(p->code[lastpc]) == Op::MMBIN || getOp(p->code[lastpc]) == Op::MMBINI ||
      getOp(p->code[lastpc]) == Op::MMBINK) {
    lastpc--;
  }
  for (int pc = 0; pc < lastpc; pc++) {
    Instruction i = p->code[pc];
    Op op = getOp(i);
    int a = getA(i);
    bool change = false;
    switch (op) {
      case Op::LOADNIL: change = a <= reg && reg <= a + getB(i); break;
      case Op::TFORCALL: change = reg >= a + 2; break;
      case Op::CALL: case Op::TAILCALL: change = reg >= a; break;
      case Op::JMP: {
        int dest = pc + 1 + getSJ(i);
        if (dest <= lastpc && dest > jmptarget) jmptarget = dest;
        break;
      }
      default: change = setsRegisterA(op) && reg == a; break;
    }
    if (change) setreg = pc < jmptarget ? -1 : pc;
  }
  return setreg;
}

const char* getObjName(const ProtoData* p, int lastpc, int reg, std::string& name);

std::string constantName(const ProtoData* p, int k) {
  if (k < int(p->constants.size()) && p->constants[k].kind == Constant::Kind::String) return p->constants[k].string;
  return "?";
}

// Key name for RK operands: a string constant, or "?".
std::string rkName(const ProtoData* p, int pc, Instruction i) {
  int c = getC(i);
  if (getK(i)) return constantName(p, c);
  std::string n;
  const char* what = getObjName(p, pc, c, n);
  if (what && std::strcmp(what, "constant") == 0) return n;
  return "?";
}

// A stripped chunk's upvalues have no names (empty in ProtoData); Lua calls them '?'.
std::string upvalueName(const ProtoData* p, int index) {
  if (index >= int(p->upvalues.size()) || p->upvalues[size_t(index)].name.empty()) return "?";
  return p->upvalues[size_t(index)].name;
}

bool isEnv(const ProtoData* p, int pc, Instruction i, bool isUp) {
  int t = getB(i);
  std::string n;
  if (isUp) {
    if (t < int(p->upvalues.size())) n = p->upvalues[t].name;
  } else {
    // Only a variable named _ENV is the environment (Lua 5.4.8): a field or a string
    // constant "_ENV" that a register came from is not.
    const char* what = getObjName(p, pc, t, n);
    if (!what || (std::strcmp(what, "local") != 0 && std::strcmp(what, "upvalue") != 0)) return false;
  }
  return n == "_ENV";
}

const char* getObjName(const ProtoData* p, int lastpc, int reg, std::string& name) {
  if (const char* ln = localName(p, reg + 1, lastpc)) {
    name = ln;
    return "local";
  }
  int pc = findSetReg(p, lastpc, reg);
  if (pc == -1) return nullptr;
  Instruction i = p->code[pc];
  switch (getOp(i)) {
    case Op::MOVE: {
      int b = getB(i);
      if (b < getA(i)) return getObjName(p, pc, b, name);
      return nullptr;
    }
    case Op::GETTABUP:
      name = constantName(p, getC(i));
      return isEnv(p, pc, i, true) ? "global" : "field";
    case Op::GETTABLE: {
      std::string n;
      const char* what = getObjName(p, pc, getC(i), n);
      name = (what && std::strcmp(what, "constant") == 0) ? n : "?";
      return isEnv(p, pc, i, false) ? "global" : "field";
    }
    case Op::GETI:
      name = "integer index";
      return "field";
    case Op::GETFIELD:
      name = constantName(p, getC(i));
      return isEnv(p, pc, i, false) ? "global" : "field";
    case Op::GETUPVAL:
      name = upvalueName(p, getB(i));
      return "upvalue";
    case Op::LOADK:
    case Op::LOADKX: {
      int k = getOp(i) == Op::LOADK ? getBx(i) : getAx(p->code[pc + 1]);
      if (k < int(p->constants.size()) && p->constants[k].kind == Constant::Kind::String) {
        name = p->constants[k].string;
        return "constant";
      }
      return nullptr;
    }
    case Op::SELF:
      name = rkName(p, pc, i);
      return "method";
    default:
      return nullptr;
  }
}

const char* metaEventName(MetaEvent e) {
  static const char* const kNames[] = {"index", "newindex", "gc", "mode", "len", "eq", "add", "sub", "mul",
                                       "mod", "pow", "div", "idiv", "band", "bor", "bxor", "shl", "shr",
                                       "unm", "bnot", "lt", "le", "concat", "call", "close"};
  return kNames[int(e)];
}

// How the instruction at the caller's current pc names the function it called.
const char* funcNameFromCode(const ProtoData* p, int pc, std::string& name) {
  Instruction i = p->code[pc];
  MetaEvent tm;
  switch (getOp(i)) {
    case Op::CALL:
    case Op::TAILCALL:
      return getObjName(p, pc, getA(i), name);
    case Op::TFORCALL:
      name = "for iterator";
      return "for iterator";
    case Op::SELF: case Op::GETTABUP: case Op::GETTABLE: case Op::GETI: case Op::GETFIELD:
      tm = MetaEvent::Index; break;
    case Op::SETTABUP: case Op::SETTABLE: case Op::SETI: case Op::SETFIELD:
      tm = MetaEvent::NewIndex; break;
    case Op::MMBIN: case Op::MMBINI: case Op::MMBINK:
      tm = MetaEvent(getC(i)); break;
    case Op::UNM: tm = MetaEvent::Unm; break;
    case Op::BNOT: tm = MetaEvent::BNot; break;
    case Op::LEN: tm = MetaEvent::Len; break;
    case Op::CONCAT: tm = MetaEvent::Concat; break;
    case Op::EQ: tm = MetaEvent::Eq; break;
    case Op::LT: case Op::LTI: case Op::GTI: tm = MetaEvent::Lt; break;
    case Op::LE: case Op::LEI: case Op::GEI: tm = MetaEvent::Le; break;
    case Op::CLOSE: case Op::RETURN: tm = MetaEvent::Close; break;
    default: return nullptr;
  }
  name = metaEventName(tm);
  return "metamethod";
}

bool findField(State& S, const Value& fn, const Value& obj, int level, std::string& out) {
  if (level == 0 || !obj.isTable()) return false;
  Value key = Value::nil(), val;
  bool found = false;
  while (tableNext(obj.asTable(), key, val, found).isOk() && found) {
    if (key.isString()) {
      if (rawEquals(val, fn)) {
        out = std::string(key.asString()->view());
        return true;
      }
      std::string sub;
      if (findField(S, fn, val, level - 1, sub)) {
        out = std::string(key.asString()->view()) + "." + sub;
        return true;
      }
    }
  }
  return false;
}

}  // namespace

Proto* frameProto(ThreadData* t, const CallFrame& f) { return t->stack[f.func].asLuaClosure()->proto; }

int currentPc(const CallFrame& f, const Proto* p) { return int(f.pc - p->code) - 1; }

Transfer hookTransfer(const ThreadData* t, int frameIdx) {
  bool hooked = frameIdx >= 0 && uint32_t(frameIdx) + 1 < t->frameCount &&
                (t->frames[frameIdx + 1].flags & kFrameHook);
  if (!hooked) return {};
  return {t->rare->hookFtransfer, t->rare->hookNtransfer};
}

int currentLine(ThreadData* t, const CallFrame& f) {
  if (!(f.flags & kFrameLua)) return -1;
  Proto* p = frameProto(t, f);
  int pc = currentPc(f, p);
  if (pc < 0) pc = 0;
  if (pc >= int(p->data->lineinfo.size())) return p->data->lineDefined;
  int line = p->data->lineinfo[pc];
  return line > 0 ? line : -1;  // 0: a stripped chunk's (compiled code starts at line 1)
}

std::string varInfo(ThreadData* t, VarRef ref) {
  if (ref.kind == VarRef::None || t->frameCount == 0) return {};
  const CallFrame& f = t->frame();
  if (!(f.flags & kFrameLua)) return {};
  Proto* p = frameProto(t, f);
  std::string name;
  const char* kind = nullptr;
  if (ref.kind == VarRef::Upvalue) {
    if (ref.index < p->data->upvalues.size()) {
      name = upvalueName(p->data, int(ref.index));
      kind = "upvalue";
    }
  } else {
    kind = getObjName(p->data, currentPc(f, p), ref.index, name);
  }
  if (!kind) return {};
  return std::string(" (") + kind + " '" + name + "')";
}

std::string callInfo(ThreadData* t) {
  if (t->frameCount == 0) return {};
  const CallFrame& f = t->frame();
  if (!(f.flags & kFrameLua)) return {};
  Proto* p = frameProto(t, f);
  std::string name;
  const char* kind = funcNameFromCode(p->data, currentPc(f, p), name);
  if (!kind) return {};
  return std::string(" (") + kind + " '" + name + "')";
}

int frameAtLevel(ThreadData* t, int level) {
  int idx = int(t->frameCount) - 1 - level;
  return idx >= 0 ? idx : -1;
}

const char* frameFunctionName(ThreadData* t, uint32_t frameIndex, std::string& name) {
  const CallFrame& f = t->frames[frameIndex];
  if (f.flags & kFrameTail) return nullptr;
  if (f.flags & kFrameFinalizer) {
    name = "__gc";
    return "metamethod";
  }
  if (f.flags & kFrameHook) {
    name = "?";
    return "hook";
  }
  if (frameIndex == 0) return nullptr;
  const CallFrame& caller = t->frames[frameIndex - 1];
  if (!(caller.flags & kFrameLua)) return nullptr;
  Proto* p = frameProto(t, caller);
  return funcNameFromCode(p->data, currentPc(caller, p), name);
}

std::string globalFunctionName(State& S, const Value& fn) {
  if (!S.registry) return {};
  String* key = newString(S, "_LOADED");
  if (!key) return {};
  Value loaded = tableGetStr(S.registry, key);
  std::string out;
  if (!findField(S, fn, loaded, 2, out)) return {};
  if (out.rfind("_G.", 0) == 0) out = out.substr(3);
  return out;
}

std::string traceback(State& S, ThreadData* t, std::string_view message, int level, bool hasMessage) {
  std::string out;
  if (hasMessage) {
    out.append(message);
    out += '\n';
  }
  out += "stack traceback:";
  int top = int(t->frameCount) - 1;
  // The main thread's bottom level is the host that called the chunk ("[C]: in ?"), as
  // lua.c's pmain is; a C host calling lua_pcall itself has no such level.
  int lastLv = top + (t->isMain && S.hostLevel ? 1 : 0);
  int limit2show = (lastLv - level > 21) ? 10 : -1;
  int lv = level;
  while (lv <= lastLv) {
    int cur = lv++;
    if (limit2show-- == 0) {
      int n = lastLv - lv - 11 + 1;
      out += "\n\t...\t(skipping " + std::to_string(n) + " levels)";
      lv += n;
      continue;
    }
    int idx = top - cur;
    if (idx < 0) {
      out += "\n\t[C]: in ?";
      continue;
    }
    const CallFrame& f = t->frames[idx];
    bool isLua = f.flags & kFrameLua;
    Value fn = t->stack[f.func];
    if (isLua) {
      Proto* p = frameProto(t, f);
      int line = currentLine(t, f);
      out += "\n\t" + shortSourceName(p->data->source) + (line > 0 ? ":" + std::to_string(line) : "") + ": in ";
    } else {
      out += "\n\t[C]: in ";
    }
    std::string gname = globalFunctionName(S, fn);
    std::string name;
    const char* kind = frameFunctionName(t, uint32_t(idx), name);
    if (!gname.empty()) {
      out += "function '" + gname + "'";
    } else if (kind) {
      out += std::string(kind) + " '" + name + "'";
    } else if (isLua) {
      Proto* p = frameProto(t, f);
      if (p->data->lineDefined == 0) out += "main chunk";
      else out += "function <" + shortSourceName(p->data->source) + ":" + std::to_string(p->data->lineDefined) + ">";
    } else {
      out += "?";
    }
    if (f.flags & kFrameTail) out += "\n\t(...tail calls...)";
  }
  return out;
}

}  // namespace weft::vm
