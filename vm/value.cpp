// The start-up check behind value.h's slotAccessIsAtomic.
#include "vm/value.h"

namespace weft::vm {

bool slotAccessIsAtomic() {
#if defined(__x86_64__)
  // The vendors' single-access guarantee for aligned 16-byte vector accesses is stated
  // for processors with AVX (Intel SDM vol. 3A §9.1.1; AMD APM vol. 2 §7.3.2).
  static const bool atomic = __builtin_cpu_supports("avx");
  return atomic;
#else
  return false;
#endif
}

}  // namespace weft::vm
