// Lowering one prototype's bytecode to an LLVM IR function (docs/design/jit.md, "The
// frame contract" and "Guards and exits"). Part of libweft_jit.so.
//
// The function is a WeftJitEntry, `i64 (ptr base, ptr budget, i32 pc, ptr thread, i64
// deferred)`; `deferred` is 0 but in its calls of itself ("Deferred frames"). Each instruction is a basic
// block; an entry switch on `pc` reaches the blocks the entry map marks through blocks
// that load registers from their stack slots (a 16-byte Value: payload at 0, tag byte
// at 8): the start's those live there, every other entry's those live at any of them.
// Registers then live in machine registers, most written through to their slots as
// well; each `ret` first writes back the loops' registers written since the entry
// (jit/flow.h), so it leaves the frame exact; a failed tag guard or an instruction
// outside the subset returns its own pc (kWeftJitExitInterpret).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vm/jit_abi.h"

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace weft::jit {

struct LowerResult {
  llvm::Function* fn = nullptr;
  std::vector<uint8_t> entryMap;  // 1 where the interpreter may enter
  uint32_t compiledOps = 0;
  bool defersFrames = false;  // the code takes deferred frames
};

// Whether the VM's layout (WeftJitHost::layout) has the tags and Value shape the
// lowering was written for; the engine refuses to start otherwise.
bool layoutAgrees(const WeftJitLayout& layout);

// Adds `name` to `module`; fn is null when no instruction starts a useful entry.
LowerResult lowerPrototype(llvm::Module& module, const std::string& name, const WeftJitRequest& request,
                           const WeftJitHost& host);

}  // namespace weft::jit
