// Fault injection (fault.h).
//
// Protocol: gMode says whether the table is unread (kUnset), empty (kOff) or holds
// entries (kOn). Any thread may call hit(): with kOff it returns after one relaxed load;
// otherwise it takes gMutex, which guards the table and the counts, so the relaxed load
// publishes nothing: it only chooses between the free path and the locked one, and a
// stale kOn costs one lock. The first hit() with kUnset reads WEFT_FAULT under the lock.
#include "gc/fault.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace weft::gc::fault {

namespace detail {
std::atomic<int> gMode{0};  // see fault.h
}  // namespace detail

namespace {

using detail::gMode;
enum Mode : int { kUnset, kOff, kOn };
static_assert(kOff == 1, "fault.h's inline hit() tests for 1");

struct Entry {
  std::string site;
  unsigned long occurrence;
};

std::mutex gMutex;
std::vector<Entry> gEntries;                 // gMutex
std::map<std::string, unsigned long> gSeen;  // gMutex: hits so far per site
std::string gSpec;                           // gMutex

void parseLocked(std::string_view spec) {
  gEntries.clear();
  gSeen.clear();
  gSpec = std::string(spec);
  while (!spec.empty()) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    size_t colon = item.find(':');
    unsigned long occurrence = 1;
    if (colon != std::string_view::npos) {
      occurrence = std::strtoul(std::string(item.substr(colon + 1)).c_str(), nullptr, 10);
      item = item.substr(0, colon);
    }
    if (!item.empty() && occurrence > 0) gEntries.push_back({std::string(item), occurrence});
  }
  gMode.store(gEntries.empty() ? kOff : kOn, std::memory_order_relaxed);
}

void loadLocked() {
  if (gMode.load(std::memory_order_relaxed) != kUnset) return;
  const char* env = std::getenv("WEFT_FAULT");
  parseLocked(env ? env : "");
}

}  // namespace

void configure(std::string_view spec) {
  std::lock_guard lock(gMutex);
  parseLocked(spec);
}

bool detail::hitSlow(const char* site) {
  std::lock_guard lock(gMutex);
  loadLocked();
  if (gEntries.empty()) return false;
  unsigned long seen = ++gSeen[site];
  for (const Entry& entry : gEntries)
    if (entry.occurrence == seen && entry.site == site) return true;
  return false;
}

std::string describe() {
  std::lock_guard lock(gMutex);
  loadLocked();
  return gSpec;
}

}  // namespace weft::gc::fault
