// A recorded schedule: every decision of a deterministic run (deterministic.h), in the
// order it was made, as `--record` writes and `--replay` and the explorer read it.
//
// Format (version 1; docs/design/deterministic.md has the rationale):
//   "WEFTSCHD"                  8 bytes of magic
//   version                     1 byte (1)
//   seed                        8 bytes, little endian: the run's seed
//   budget                      varint: work units per step (the run's slice)
//   decisions, each:
//     kind                      1 byte (DecisionKind)
//     index                     varint: the choice, an index into the candidates
//     size                      varint: how many candidates there were
//     set hash                  4 bytes, little endian: decisionMemberHash's sum, folded
//     chosen                    varint: the task id chosen (0 for a select case)
//   checksum                    8 bytes, little endian: FNV-1a 64 of every byte before it,
//                               taken 8 bytes (a little-endian word) at a time
// Varints are LEB128 (7 bits a byte, low first). A decision takes 8 bytes or so; a run
// appends them as it goes (ScheduleWriter), so the file has no count.
#pragma once

#include <cstdint>
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
  uint32_t setHash = 0;
  uint64_t chosen = 0;
};

struct Schedule {
  uint64_t seed = 0;
  uint32_t budget = 0;
  std::vector<Decision> decisions;
};

// Encodes decisions as a run makes them: a recording costs a few bytes a decision. They
// go into chunks of a fixed size, so that a recording of millions is never copied as it
// grows, nor to be written.
class ScheduleWriter {
 public:
  void add(const Decision& d);
  // The whole file: header, the decisions added so far, checksum.
  std::string finish(uint64_t seed, uint32_t budget) const;
  // The same bytes, written to `path` piece by piece; false with `error` set.
  bool writeFile(const std::string& path, uint64_t seed, uint32_t budget, std::string& error) const;

 private:
  static constexpr size_t kMaxDecisionBytes = 1 + 5 + 5 + 4 + 10;
  static constexpr size_t kChunkBytes = size_t(1) << 20;
  static std::string header(uint64_t seed, uint32_t budget);
  struct Chunk {
    std::unique_ptr<char[]> bytes;  // kChunkBytes long
    size_t used = 0;
  };
  std::vector<Chunk> chunks_;
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

}  // namespace weft::runtime
