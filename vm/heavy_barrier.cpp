// See heavy_barrier.h for the protocol.
#include "vm/heavy_barrier.h"

#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "weft/status.h"

namespace weft::vm {

namespace {

long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

// Registered once per process; the command fails on every call before that.
bool registerExpedited() {
  long supported = membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0 || !(supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

}  // namespace

bool heavyBarrierUsesMembarrier() {
  static const bool expedited = registerExpedited();
  return expedited;
}

// The page is mapped at first use (a failure there is fatal: without the barrier, racing
// table stores could be lost). It is written before each change of protection so that it is mapped and may be
// in any processor's TLB; revoking write access must then reach every processor that ran
// this process, each of which takes the interrupt as a serialising event. The mutex
// keeps two callers from interleaving protection changes of the one page.
void heavyBarrierByPageProtection() {
  static std::mutex mutex;
  static void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  std::lock_guard lock(mutex);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  WEFT_CHECK(page != MAP_FAILED, "the heavy barrier's page is mapped (one page, at first use)");
  __atomic_fetch_add(static_cast<int*>(page), 1, __ATOMIC_SEQ_CST);
  mprotect(page, 4096, PROT_READ);
  mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

// The fences order this thread's own accesses around the call; the system call does
// the rest (file comment).
void heavyBarrier() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!heavyBarrierUsesMembarrier() || membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
    heavyBarrierByPageProtection();
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace weft::vm
