// The skipped reload of the fault "jit.reload-skip" (jit/stale_reload.h).
#include "jit/stale_reload.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Module.h>

namespace weft::jit {
namespace {

constexpr uint8_t kTagFirstHeap = 16;  // vm/value.h Tag::kFirstHeap: tags from here are heap references

}  // namespace

llvm::GlobalVariable* StaleReload::global(llvm::Module& m, llvm::Type* type, const char* name) {
  return new llvm::GlobalVariable(m, type, false, llvm::GlobalValue::InternalLinkage,
                                  llvm::Constant::getNullValue(type), name);
}

StaleReload::StaleReload(llvm::Module& m) {
  llvm::LLVMContext& ctx = m.getContext();
  pendingPc_ = global(m, llvm::Type::getInt32Ty(ctx), "stale_pc");
  reg_ = global(m, llvm::Type::getInt32Ty(ctx), "stale_reg");
  payload_ = global(m, llvm::Type::getInt64Ty(ctx), "stale_payload");
  spent_ = global(m, llvm::Type::getInt8Ty(ctx), "stale_spent");
}

void StaleReload::keep(llvm::IRBuilder<>& b, uint32_t target, const RegSet& live,
                       const std::vector<llvm::AllocaInst*>& pay, const std::vector<llvm::AllocaInst*>& tag) {
  llvm::Value* reg = b.getInt32(-1);
  llvm::Value* payload = b.getInt64(0);
  // Downwards, so the lowest heap register's select is the outermost.
  for (int r = int(live.size()) - 1; r >= 0; r--) {
    if (!live[r] || !pay[r]) continue;
    llvm::Value* heap = b.CreateICmpUGE(b.CreateLoad(b.getInt8Ty(), tag[r]), b.getInt8(kTagFirstHeap));
    reg = b.CreateSelect(heap, b.getInt32(uint32_t(r)), reg);
    payload = b.CreateSelect(heap, b.CreateLoad(b.getInt64Ty(), pay[r]), payload);
  }
  llvm::Value* unspent = b.CreateICmpEQ(b.CreateLoad(b.getInt8Ty(), spent_), b.getInt8(0));
  llvm::Value* found = b.CreateAnd(unspent, b.CreateICmpNE(reg, b.getInt32(-1)));
  b.CreateStore(b.CreateSelect(found, b.getInt32(target + 1), b.getInt32(0)), pendingPc_);
  b.CreateStore(reg, reg_);
  b.CreateStore(payload, payload_);
}

void StaleReload::skipReload(llvm::IRBuilder<>& b, uint32_t pc, const RegSet& live,
                             const std::vector<llvm::AllocaInst*>& pay) {
  llvm::Value* pending = b.CreateLoad(b.getInt32Ty(), pendingPc_);
  llvm::Value* here = b.CreateICmpEQ(pending, b.getInt32(pc + 1));
  llvm::Value* reg = b.CreateLoad(b.getInt32Ty(), reg_);
  llvm::Value* kept = b.CreateLoad(b.getInt64Ty(), payload_);
  for (int r = 0; r < int(live.size()); r++) {
    if (!live[r] || !pay[r]) continue;
    llvm::Value* stale = b.CreateAnd(here, b.CreateICmpEQ(reg, b.getInt32(uint32_t(r))));
    b.CreateStore(b.CreateSelect(stale, kept, b.CreateLoad(b.getInt64Ty(), pay[r])), pay[r]);
  }
  b.CreateStore(b.getInt32(0), pendingPc_);
  llvm::Value* spent = b.CreateLoad(b.getInt8Ty(), spent_);
  b.CreateStore(b.CreateSelect(here, b.getInt8(1), spent), spent_);
}

}  // namespace weft::jit
