// A recorded schedule: every decision of a deterministic run (deterministic.h), in the
// order it was made, as `--record` writes and `--replay` and the explorer read it.
//
// Format (version 2; docs/design/deterministic.md "The recording" has the rationale):
//   "WEFTSCHD"                  8 bytes of magic
//   version                     1 byte (2)
//   seed                        8 bytes, little endian: the run's seed
//   budget                      varint: work units per step (the run's slice)
//   decisions, each:
//     head                      varint: index * 2 + kind (the choice, an index into the
//                               candidates; DecisionKind)
//     size                      varint: zigzag of (how many candidates there were - the
//                               previous decision's count; 0 before the first)
//     set hash                  2 bytes, little endian: foldSetHash of the candidates
//   checksum                    8 bytes, little endian: FNV-1a 64 of every byte before it,
//                               taken 8 bytes (a little-endian word) at a time
// Varints are LEB128 (7 bits a byte, low first). A decision takes 4 bytes or so; a run
// appends them as it goes (ScheduleWriter), so the file has no count. Version 1 (read,
// no longer written) had per decision a kind byte, the index and the count as varints, a
// 4-byte hash and the chosen task's id: 8 to 12 bytes.
#pragma once

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace weft::runtime {

enum class DecisionKind : uint8_t {
  kRun = 0,     // which enabled task runs the next step
  kSelect = 1,  // which ready case of task.select fires (Scheduler::choose)
};

struct Decision {
  DecisionKind kind = DecisionKind::kRun;
  uint32_t index = 0;
  uint32_t size = 0;
  uint16_t setHash = 0;  // foldSetHash
};

struct Schedule {
  uint64_t seed = 0;
  uint32_t budget = 0;
  std::vector<Decision> decisions;
};

// The checksum: FNV-1a 64 over little-endian 8-byte words, then the bytes left (a
// recording of millions of decisions is summed in milliseconds). Streamed: the words
// span the pieces a file is written from.
class ScheduleChecksum {
 public:
  void update(const char* p, size_t n) {
    while (n > 0 && fill_ > 0) {
      take(uint8_t(*p++));
      n--;
    }
    for (; n >= 8; p += 8, n -= 8) mixWord(loadLittle(p));
    while (n-- > 0) take(uint8_t(*p++));
  }
  uint64_t value() const {
    uint64_t h = h_;
    for (size_t i = 0; i < fill_; i++) {
      h ^= uint8_t(partial_ >> (8 * i));
      h *= kPrime;
    }
    return h;
  }

 private:
  static constexpr uint64_t kPrime = 0x100000001b3ull;
  static uint64_t loadLittle(const char* p) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    return std::endian::native == std::endian::little ? w : __builtin_bswap64(w);
  }
  void mixWord(uint64_t w) {
    h_ ^= w;
    h_ *= kPrime;
  }
  void take(uint8_t b) {
    partial_ |= uint64_t(b) << (8 * fill_);
    if (++fill_ == 8) {
      mixWord(partial_);
      partial_ = 0;
      fill_ = 0;
    }
  }
  uint64_t h_ = 0xcbf29ce484222325ull;
  uint64_t partial_ = 0;  // the bytes of an unfinished word, low first
  size_t fill_ = 0;
};

// Encodes decisions as a run makes them, a few bytes each, into a buffer of a fixed size
// that goes, whenever it fills, to the file (streamTo) or to the bytes finish() returns:
// a recording of millions of decisions is never held whole nor copied as it grows.
// One thread (the coordinator's role holder) uses it.
class ScheduleWriter {
 public:
  ScheduleWriter(uint64_t seed, uint32_t budget);
  ~ScheduleWriter();
  ScheduleWriter(const ScheduleWriter&) = delete;
  ScheduleWriter& operator=(const ScheduleWriter&) = delete;
  // From now on the bytes go to `path`, created when the first buffer fills (so that a
  // replay may record over the file it read) or at finishFile.
  void streamTo(std::string path);
  void add(const Decision& d);
  // In memory: the whole file (header, decisions, checksum).
  std::string finish();
  // Streamed: writes the rest and the checksum; false with `error` set if any write
  // failed. Once.
  bool finishFile(std::string& error);

 private:
  static constexpr size_t kMaxDecisionBytes = 5 + 5 + 2;
  static constexpr size_t kBufferBytes = size_t(1) << 20;
  void put(const char* p, size_t n);
  void flush();
  std::unique_ptr<char[]> buffer_;  // kBufferBytes long
  size_t used_ = 0;
  uint32_t lastSize_ = 0;
  ScheduleChecksum sum_;
  std::string bytes_;          // in memory: what was flushed
  std::string path_;           // streamed: where
  std::FILE* file_ = nullptr;
  bool failed_ = false;        // streamed: a write failed
};

// The bytes of `s` in the format above.
std::string encodeSchedule(const Schedule& s);
// Parses `bytes`; false with `error` set (a sentence) for anything malformed: a wrong
// magic or version, a truncated decision, a checksum that does not match.
bool decodeSchedule(const std::string& bytes, Schedule& out, std::string& error);
// File helpers; false with `error` set. `bytes` is a whole file (ScheduleWriter::finish,
// encodeSchedule).
bool writeScheduleFile(const std::string& path, const std::string& bytes, std::string& error);
bool readScheduleFile(const std::string& path, Schedule& out, std::string& error);

// The order-independent hash of a candidate set, kept incrementally as tasks come and
// go: the sum of a mix of each member's id (a task enters and leaves in O(1)).
inline uint64_t decisionMemberHash(uint64_t id) {
  uint64_t z = id + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The recorded form of a set's hash (the sum of its members' decisionMemberHash): 16
// bits. A replay checks the count too, and a divergence that a folded hash misses shows
// at a later decision.
inline uint16_t foldSetHash(uint64_t sum) {
  auto h = uint32_t(sum ^ (sum >> 32));
  return uint16_t(h ^ (h >> 16));
}

}  // namespace weft::runtime
