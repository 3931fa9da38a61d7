// Stress schedules and relocate mode's stale-reference trap.
//
// Protocol: with stress on, collectionRequested() stays true, so the VM calls
// safepointMayGC at every safepoint and stressSaysCollect counts them: every
// `interval`-th one collects, or with a seed, each collects with probability 1/interval
// from a seeded xorshift64 (the same seed gives the same schedule). Each mutator keeps
// its own count and generator (owning thread, no lock), so a safepoint that collects
// nothing touches nothing shared, as without stress: with a shared count, four workers
// polling spent most of a stressed run on its cache line and the heap lock. With many
// threads, each thread's own safepoints decide its requests.
//
// In relocate mode old space is never reused: each old chunk is filled with kPoisonByte,
// mprotect(PROT_NONE)'d and recorded in a fixed table the SIGSEGV/SIGBUS handler reads.
// A fault inside a recorded range is a stale reference: the handler reports it and exits
// with status 3. Any other fault gets the previous disposition back and re-faults. The
// table keeps the most recent old space whole, and older ones while the total stays
// under kQuarantineBudget; the oldest ranges are unmapped first.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <algorithm>
#include <deque>
#include <mutex>

#include "gc/heap_internal.h"

namespace weft::gc {

bool Heap::stressSaysCollect(Mutator& m) {
  uint64_t interval = config_.interval ? config_.interval : 1;
  if (config_.seed == 0) return ++m.stressSafepoints_ % interval == 0;
  if (m.stressSeed_ != config_.seed) {  // first draw, or a seed set through mutableConfig()
    m.stressSeed_ = config_.seed;
    m.stressRng_ = config_.seed * 0x9e3779b97f4a7c15ull | 1;
  }
  uint64_t x = m.stressRng_;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  m.stressRng_ = x;
  return (x >> 11) % interval == 0;
}

namespace {

constexpr size_t kQuarantineBudget = 64u << 20;
constexpr size_t kQuarantineSlots = 4096;

// Read by the signal handler without locks: a slot is cleared before its memory is
// unmapped and filled only after its memory is protected (release stores, acquire
// loads), so the handler never claims memory that is not a protected old space.
struct QuarantineSlot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<uint64_t> collection{0};
};
QuarantineSlot gSlots[kQuarantineSlots];

struct Quarantined {
  Chunk* chunk;
  size_t slot;
  uint64_t collection;
};

// Writers' bookkeeping, under `mutex`. Never destroyed: quarantined chunks outlive
// every static destructor (the leak checker runs after them).
struct QuarantineState {
  std::mutex mutex;
  std::deque<Quarantined> entries;  // oldest first
  size_t bytes = 0;
  std::vector<size_t> freeSlots;
  bool slotsReady = false;
  bool handlerInstalled = false;
};
QuarantineState& state() {
  static QuarantineState* s = new QuarantineState;
  return *s;
}
struct sigaction gPrevious[2];  // SIGSEGV, SIGBUS; written once, before the handler is live

void evictOldest(QuarantineState& st) {
  Quarantined q = st.entries.front();
  st.entries.pop_front();
  gSlots[q.slot].begin.store(0, std::memory_order_release);
  gSlots[q.slot].end.store(0, std::memory_order_release);
  st.freeSlots.push_back(q.slot);
  st.bytes -= q.chunk->size;
  unmapChunk(q.chunk);
}

// Async-signal-safe: formats with no allocation and writes with write(2).
size_t appendText(char* out, size_t at, const char* text) {
  while (*text) out[at++] = *text++;
  return at;
}

size_t appendNumber(char* out, size_t at, uint64_t value, unsigned base) {
  char digits[24];
  size_t n = 0;
  do {
    digits[n++] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value);
  while (n) out[at++] = digits[--n];
  return at;
}

void onFault(int sig, siginfo_t* info, void* context) {
  auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const QuarantineSlot& slot : gSlots) {
    uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin && addr >= begin && addr < slot.end.load(std::memory_order_acquire)) {
      char msg[160];
      size_t n = appendText(msg, 0, "weft: gc: stale reference: access to relocated object memory at 0x");
      n = appendNumber(msg, n, addr, 16);
      n = appendText(msg, n, " (collection #");
      n = appendNumber(msg, n, slot.collection.load(std::memory_order_relaxed), 10);
      n = appendText(msg, n, ")\n");
      ssize_t ignored = write(STDERR_FILENO, msg, n);
      (void)ignored;
      _exit(3);
    }
  }
  // Not ours: restore the previous disposition; the faulting access re-executes under it.
  sigaction(sig, &gPrevious[sig == SIGSEGV ? 0 : 1], nullptr);
  if (info->si_code <= 0) raise(sig);  // sent by kill(2): there is no access to re-execute
}

void installAltStack() {
  thread_local bool installed = false;
  if (installed) return;
  installed = true;
  size_t size = 64u << 10;
  void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;
  stack_t stack{};
  stack.ss_sp = mem;
  stack.ss_size = size;
  sigaltstack(&stack, nullptr);
}

}  // namespace

// The alternate stack is per thread (installed by each collection and each attach) and
// lets the handler run even when the fault is a stack overflow; the handler is
// process-wide and installed once.
void installStaleReferenceHandler() {
  installAltStack();
  QuarantineState& st = state();
  std::lock_guard lock(st.mutex);
  if (st.handlerInstalled) return;
  st.handlerInstalled = true;
  struct sigaction action{};
  action.sa_sigaction = onFault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &gPrevious[0]);
  sigaction(SIGBUS, &action, &gPrevious[1]);
}

void quarantineOldSpace(const std::vector<Chunk*>& input, uint64_t collection) {
  // Chunks of an embedder's allocator go back to it now: the quarantine outlives the
  // heap, and lua_close must return every block (poisoned first, all the same).
  std::vector<Chunk*> chunks;
  for (Chunk* chunk : input) {
    std::memset(chunk->base, kPoisonByte, chunk->size);
    if (chunk->block) {
      unmapChunk(chunk);
      continue;
    }
    mprotect(chunk->base, chunk->size, PROT_NONE);
    chunks.push_back(chunk);
  }
  QuarantineState& st = state();
  std::lock_guard lock(st.mutex);
  if (!st.slotsReady) {
    for (size_t i = kQuarantineSlots; i-- > 0;) st.freeSlots.push_back(i);
    st.slotsReady = true;
  }
  size_t bytes = 0;
  for (Chunk* chunk : chunks) bytes += chunk->size;
  // Everything already queued is older than this collection: evict it first.
  while (!st.entries.empty() && (st.bytes + bytes > kQuarantineBudget || st.freeSlots.size() < chunks.size()))
    evictOldest(st);
  for (Chunk* chunk : chunks) {
    if (st.freeSlots.empty()) {  // more chunks than slots: the rest cannot be trapped
      unmapChunk(chunk);
      continue;
    }
    size_t slot = st.freeSlots.back();
    st.freeSlots.pop_back();
    gSlots[slot].collection.store(collection, std::memory_order_relaxed);
    gSlots[slot].end.store(reinterpret_cast<uintptr_t>(chunk->base + chunk->size), std::memory_order_release);
    gSlots[slot].begin.store(reinterpret_cast<uintptr_t>(chunk->base), std::memory_order_release);
    st.entries.push_back({chunk, slot, collection});
    st.bytes += chunk->size;
  }
}

}  // namespace weft::gc
