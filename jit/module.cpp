// libweft_jit.so: the compiler module the VM loads on its first compilation
// (vm/jit_abi.h, docs/design/jit.md "Lazy loading"). One LLJIT per engine (per State);
// each compiled prototype is one IR module with its own resource tracker, so its code
// is freed alone when the prototype dies. Called from the State's compile thread only.
// Each object file passes through a transform that reads its function's size from the
// symbol table (for the perf map, vm/jit_perf_map.h): LLJIT materialises on the thread
// that looks the symbol up, so the size is there when compile() returns.
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Object/SymbolSize.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "jit/lower.h"

namespace weft::jit {
namespace {

struct Engine {
  // The code generator's, shared by every compilation (one at a time, on the compile
  // thread): compile() picks its instruction selector per function.
  std::unique_ptr<llvm::TargetMachine> target;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  WeftJitHost host;
  uint64_t nextId = 0;
  uint32_t live = 0;
  std::string compiling;      // the function compile() is looking up
  uint64_t compiledSize = 0;  // its machine code's size, from the object transform
  std::string dumpDir;        // WEFT_JIT_DUMP: where each function's IR and object go, or empty
};

// With WEFT_JIT_DUMP=DIR, DIR/NAME.ll (the IR after the pipeline, its source_filename the
// prototype's "source:line") and DIR/NAME.o (the object before linking), for reading the
// code perf's map points at (docs/design/jit.md, "Profiling compiled code"). A file that
// cannot be written is skipped: a dump never fails a compilation.
void dumpFile(const Engine* e, const std::string& name, const char* extension,
              llvm::function_ref<void(llvm::raw_ostream&)> write) {
  if (e->dumpDir.empty()) return;
  std::error_code ec;
  llvm::raw_fd_ostream os(e->dumpDir + "/" + name + extension, ec);
  if (!ec) write(os);
}

struct Compiled {
  llvm::orc::ResourceTrackerSP tracker;
  std::vector<uint8_t> entryMap;
};

void copyError(char* out, size_t size, const std::string& text) {
  if (size == 0) return;
  std::snprintf(out, size, "%s", text.c_str());
}

std::string errorText(llvm::Error err) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << err;
  return os.str();
}

// The size past which compile() selects instructions with FastISel.
constexpr unsigned kFastISelInstructions = 1000;

// The passes of LLVM's O1 pipeline that this IR gains from, over the one function,
// without O1's module and call-graph passes (one function per module, nothing to inline)
// and most of its repeated rounds (docs/design/jit.md, "The pipeline"): scalar
// replacement of the register variables, tag tests folded, slot values promoted to
// registers inside loops (the stack and the budget are noalias), full unrolling and a
// last LICM, which loops.lua's inner loop needs. 14% less compile time than O1 over ten
// benchmark scripts, run times equal or better. O2 cost five times O1's compile time.
std::string pipelineText() {
  const std::string cfg =
      "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;"
      "keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;"
      "no-speculate-unpredictables>";
  const std::string combine = "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>";
  const std::string loops =
      "loop-mssa(loop-instsimplify,loop-simplifycfg,licm<no-allowspeculation>,"
      "loop-rotate<header-duplication;no-prepare-for-lto>,licm<allowspeculation>,"
      "simple-loop-unswitch<no-nontrivial;trivial>)";
  return "function(sroa<modify-cfg>,early-cse<memssa>," + combine + "," + cfg + "," + loops + "," + cfg + "," +
         combine + ",loop(indvars,loop-deletion,loop-unroll-full),sccp," + combine + ",adce," + cfg +
         ",loop-mssa(licm<allowspeculation>))";
}

llvm::Error optimise(llvm::Module& m) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (llvm::Error err = pb.parsePassPipeline(mpm, pipelineText())) return err;
  mpm.run(m, mam);
  return llvm::Error::success();
}

// Records the size of e->compiling's symbol in `object`; the object goes on unchanged.
void recordCodeSize(Engine* e, const llvm::MemoryBuffer& object) {
  auto file = llvm::object::ObjectFile::createObjectFile(object.getMemBufferRef());
  if (!file) {
    llvm::consumeError(file.takeError());
    return;
  }
  for (const auto& [symbol, size] : llvm::object::computeSymbolSizes(**file)) {
    auto name = symbol.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == e->compiling) e->compiledSize = size;
  }
}

// Code generator options LLVM has as command-line options only, set once in the process
// (an embedder's own LLVM, if any, gets them too):
// - Every jump kept off the ends of 32-byte blocks, as -mbranches-within-32B-boundaries
//   does: on cores with Intel's JCC erratum (Skylake and its successors) a jump that
//   crosses or ends at one is not cached as decoded, and a hot loop ran a third slower or
//   not by where its jumps fell (bench/tasks/parallel.lua, one worker: 0.95 or 1.31 s for
//   the same IR).
// - No X86 domain reassignment: it moves integer code to AVX-512 mask registers, which
//   nothing here gains from, and cost a tenth of the code generator's time on cores that
//   have AVX-512 (docs/design/jit.md, "Compile time").
// - Conditions of a branch never merged into one flag (setcc and or) before a single
//   jump: compiled code's conditions are guards that hold, which separate jumps predict
//   for free, while a merged flag computes every condition each time. Which way LLVM
//   chose hung on the order of two loads: fib ran 5% slower merged.
void setCodegenOptions() {
#if defined(__x86_64__)
  const char* argv[] = {"weft", "-x86-branches-within-32B-boundaries", "-disable-x86-domain-reassignment",
                        "-x86-br-merging-base-cost=-1"};
  llvm::cl::ParseCommandLineOptions(4, argv, "", &llvm::nulls());
#endif
}

void* create(const WeftJitHost* host, char* error, size_t errorSize) {
  if (!layoutAgrees(host->layout)) {
    copyError(error, errorSize, "the VM's value layout is not the one this module was built for");
    return nullptr;
  }
  static std::once_flag targets;
  std::call_once(targets, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();  // the inline asm of table slot reads (jit/lower.cpp)
    setCodegenOptions();
  });
  auto machine = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machine) {
    copyError(error, errorSize, errorText(machine.takeError()));
    return nullptr;
  }
  machine->setCodeGenOptLevel(llvm::CodeGenOptLevel::Less);
  auto target = machine->createTargetMachine();
  if (!target) {
    copyError(error, errorSize, errorText(target.takeError()));
    return nullptr;
  }
  llvm::TargetMachine* tm = target->get();
  auto jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*machine))
          .setCompileFunctionCreator([tm](llvm::orc::JITTargetMachineBuilder)
                                         -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
            return std::make_unique<llvm::orc::SimpleCompiler>(*tm);
          })
          .create();
  if (!jit) {
    copyError(error, errorSize, errorText(jit.takeError()));
    return nullptr;
  }
  auto* e = new Engine();
  e->target = std::move(*target);
  e->jit = std::move(*jit);
  e->host = *host;
  if (const char* dir = std::getenv("WEFT_JIT_DUMP")) e->dumpDir = dir;
  e->jit->getObjTransformLayer().setTransform(
      [e](std::unique_ptr<llvm::MemoryBuffer> object) -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
        recordCodeSize(e, *object);
        dumpFile(e, e->compiling, ".o", [&](llvm::raw_ostream& os) { os << object->getBuffer(); });
        return object;
      });
  return e;
}

int compile(void* engine, const WeftJitRequest* req, WeftJitResult* res) {
  auto* e = static_cast<Engine*>(engine);
  std::string name = "lua_" + std::to_string(e->nextId++);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>(name, *ctx);
  mod->setDataLayout(e->jit->getDataLayout());
  mod->setTargetTriple(e->jit->getTargetTriple().str());
  LowerResult lowered = lowerPrototype(*mod, name, *req, e->host);
  if (!lowered.fn) return kWeftJitRejected;
  std::string verifyText;
  llvm::raw_string_ostream vos(verifyText);
  if (llvm::verifyModule(*mod, &vos)) {
    copyError(res->error, sizeof res->error, "invalid IR for " + std::string(req->name) + ": " + vos.str());
    return kWeftJitFailed;
  }
  if (llvm::Error err = optimise(*mod)) {
    copyError(res->error, sizeof res->error, errorText(std::move(err)));
    return kWeftJitFailed;
  }
  // Instruction selection and register allocation are most of the time LLVM takes, and
  // grow faster than the function: a large function goes through FastISel, a third
  // faster there, a small one through SelectionDAG, whose calls are tighter (the bench
  // figures are in docs/design/jit.md, "Compile time").
  e->target->setFastISel(lowered.fn->getInstructionCount() > kFastISelInstructions);
  mod->setSourceFileName(req->name);
  dumpFile(e, name, ".ll", [&](llvm::raw_ostream& os) { mod->print(os, nullptr); });
  auto compiled = std::make_unique<Compiled>();
  compiled->tracker = e->jit->getMainJITDylib().createResourceTracker();
  compiled->entryMap = std::move(lowered.entryMap);
  if (llvm::Error err = e->jit->addIRModule(compiled->tracker, llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx)))) {
    copyError(res->error, sizeof res->error, errorText(std::move(err)));
    return kWeftJitFailed;
  }
  e->compiling = name;
  e->compiledSize = 0;
  auto sym = e->jit->lookup(name);
  if (!sym) {
    copyError(res->error, sizeof res->error, errorText(sym.takeError()));
    llvm::consumeError(compiled->tracker->remove());
    return kWeftJitFailed;
  }
  res->entry = sym->toPtr<WeftJitEntry>();
  res->entryMap = compiled->entryMap.data();
  res->compiledOps = lowered.compiledOps;
  res->defersFrames = lowered.defersFrames;
  res->codeSize = e->compiledSize;
  res->handle = compiled.release();
  e->live++;
  return kWeftJitOk;
}

void release(void* engine, void* handle) {
  auto* e = static_cast<Engine*>(engine);
  std::unique_ptr<Compiled> c(static_cast<Compiled*>(handle));
  llvm::consumeError(c->tracker->remove());
  e->live--;
}

uint32_t liveCode(void* engine) { return static_cast<Engine*>(engine)->live; }

void destroy(void* engine) { delete static_cast<Engine*>(engine); }

const WeftJitModule kModule = {kWeftJitAbiVersion, create, compile, release, liveCode, destroy};

}  // namespace
}  // namespace weft::jit

extern "C" __attribute__((visibility("default"))) const WeftJitModule* weft_jit_module(uint32_t version) {
  return version == kWeftJitAbiVersion ? &weft::jit::kModule : nullptr;
}
