// The negative test of the safepoint and reload rule (docs/design/jit.md): code compiled
// from a request with `faultSkipReload` (the VM sets it at the WEFT_FAULT site
// "jit.reload-skip") skips one reload of a heap reference after a safepoint. At a poll's
// exit it keeps the payload of the lowest register, live at the loop header, that holds
// a heap reference; when the interpreter re-enters at that header after running the
// safepoint, the entry takes that register's payload from what it kept instead of from
// the slot. Once per code: the first re-entry that uses it spends it.
//
// A collection at that safepoint that moved the object leaves the register pointing into
// old space, which --gc-stress=relocate poisons and protects: the next access through it
// (an inline table read, or a helper reading the slot the register was written back to)
// stops the run with "weft: gc: stale reference" and exit status 3. tests/cli/jit_stale_reload.py
// shows that, and that the same code runs clean when nothing moves. Never used outside
// that test: the state is one set of module globals, with no synchronisation between
// workers.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <cstdint>
#include <vector>

#include "jit/flow.h"

namespace weft::jit {

class StaleReload {
 public:
  // Adds the module's globals: the pending header (pc + 1, 0 for none), the register, its
  // payload, and whether the one skip is spent.
  explicit StaleReload(llvm::Module& m);

  // At a poll's exit towards the loop header `target`, whose entry loads `live`: keeps
  // the lowest register of `live` that holds a heap reference now.
  void keep(llvm::IRBuilder<>& b, uint32_t target, const RegSet& live, const std::vector<llvm::AllocaInst*>& pay,
            const std::vector<llvm::AllocaInst*>& tag);
  // At the entry at `pc`, after its reloads of `live`: when a poll's exit kept a register
  // for this header, replaces the payload just loaded with the one it kept.
  void skipReload(llvm::IRBuilder<>& b, uint32_t pc, const RegSet& live, const std::vector<llvm::AllocaInst*>& pay);

 private:
  llvm::GlobalVariable* global(llvm::Module& m, llvm::Type* type, const char* name);

  llvm::GlobalVariable* pendingPc_;
  llvm::GlobalVariable* reg_;
  llvm::GlobalVariable* payload_;
  llvm::GlobalVariable* spent_;
};

}  // namespace weft::jit
