// Lua patterns (manual §6.4.1): a standalone backtracking matcher over byte strings,
// used by string.find, match, gmatch and gsub. It knows nothing of the VM, so it can be
// unit-tested alone and never collects.
//
// Protocol:
//  - Construct with the subject and the pattern; call matchAt(pos) for each start
//    position the caller wants to try. Captures describe the last successful match.
//  - Errors (malformed patterns, too many captures, too deep a recursion) stop the match;
//    matchAt then returns false and error() holds Lua's message. The caller raises it.
//  - The subject and pattern are borrowed byte ranges. A caller that re-enters Lua
//    between matches (gsub with a function) calls rebind() with the possibly moved
//    strings before matching again; capture offsets stay meaningful.
//
// Invariants:
//  1. Recursion depth is bounded by kMaxPatternDepth: deeper patterns fail with
//     "pattern too complex" instead of exhausting the C++ stack.
//  2. Every read of the subject or pattern is bounds-checked against its end: embedded
//     zeros are ordinary bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace weft::vm {

inline constexpr int kMaxPatternCaptures = 32;
inline constexpr int kMaxPatternDepth = 200;

// What a capture holds after a match.
struct PatternCapture {
  enum class Kind : uint8_t { Substring, Position, Unfinished };
  Kind kind;
  size_t start;   // byte offset in the subject
  size_t length;  // Substring only
};

class PatternMatcher {
 public:
  // With honourAnchor false (gmatch) a leading '^' is an ordinary character.
  PatternMatcher(std::string_view subject, std::string_view pattern, bool honourAnchor = true);

  // Points the matcher at moved copies of the same subject and pattern.
  void rebind(std::string_view subject, std::string_view pattern);

  // Tries to match the pattern starting exactly at subject offset `pos` (the pattern's
  // own '^' anchor is the caller's business: see anchored()). On success sets `end` to
  // the offset one past the match.
  bool matchAt(size_t pos, size_t& end);

  // The pattern starts with '^' (find/match/gsub try one position only).
  bool anchored() const { return anchored_; }

  // After a successful match: the number of captures (0 when the pattern has none).
  int captureCount() const { return level_; }
  // Capture i (0-based). Only valid after a success; i < captureCount().
  PatternCapture capture(int i) const;

  // Non-null after a matchAt that failed because of an error.
  const char* error() const { return error_; }
  // Lua's full message for that error ("invalid capture index %1", ...).
  std::string errorMessage() const;

 private:
  struct Slot {
    const char* init;
    ptrdiff_t len;  // kUnfinished / kPosition or a length
  };
  static constexpr ptrdiff_t kUnfinished = -1;
  static constexpr ptrdiff_t kPosition = -2;

  const char* doMatch(const char* s, const char* p);
  const char* matchDefault(const char* s, const char* p, const char* ep);
  const char* maxExpand(const char* s, const char* p, const char* ep);
  const char* minExpand(const char* s, const char* p, const char* ep);
  const char* startCapture(const char* s, const char* p, ptrdiff_t what);
  const char* endCapture(const char* s, const char* p);
  const char* matchBalance(const char* s, const char* p);
  const char* matchBackref(const char* s, int l);
  const char* matchFrontier(const char* s, const char* p);
  const char* classEnd(const char* p);
  bool singleMatch(const char* s, const char* p, const char* ep) const;
  bool matchBracketClass(unsigned char c, const char* p, const char* ec) const;
  int captureToClose();
  int checkCapture(int l);
  const char* fail(const char* message);

  const char* src_;
  const char* srcEnd_;
  const char* pat_;
  const char* patEnd_;
  bool anchored_;
  bool honourAnchor_;
  int depth_ = 0;
  int level_ = 0;
  const char* error_ = nullptr;
  int errorArg_ = 0;
  Slot captures_[kMaxPatternCaptures];
};

// True if the character class letter (after '%') matches byte c ("%a", "%d", ...), with
// the C locale's classes whatever os.setlocale says; other letters match themselves.
bool patternClassMatches(unsigned char c, unsigned char cl);

// True if the pattern has no magic characters, so a plain substring search suffices.
bool patternIsPlain(std::string_view pattern);

// Plain substring search from `from`; returns the offset or npos.
size_t findPlain(std::string_view subject, std::string_view needle, size_t from);

}  // namespace weft::vm
