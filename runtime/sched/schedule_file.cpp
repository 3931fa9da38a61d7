// The schedule file format (schedule_file.h).
#include "runtime/sched/schedule_file.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>

namespace weft::runtime {
namespace {

constexpr char kMagic[8] = {'W', 'E', 'F', 'T', 'S', 'C', 'H', 'D'};
constexpr uint8_t kVersion = 1;

// FNV-1a 64 over little-endian 8-byte words, then the bytes left: a recording of
// millions of decisions is summed in milliseconds. Streamed: the words span the pieces
// a file is written from (header, decision chunks).
class Fnv1a64 {
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

uint64_t fnv1a(const char* p, size_t n) {
  Fnv1a64 f;
  f.update(p, n);
  return f.value();
}

// Appends a varint to a fixed buffer (at most 10 bytes); returns the new end.
char* varintAt(char* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = char(uint8_t(v) | 0x80);
    v >>= 7;
  }
  *out++ = char(uint8_t(v));
  return out;
}

void putFixed(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) out.push_back(char(uint8_t(v >> (8 * i))));
}

void putVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(uint8_t(v) | 0x80));
    v >>= 7;
  }
  out.push_back(char(uint8_t(v)));
}

// Reads from a byte range, failing (and staying failed) past its end.
struct Reader {
  const std::string& bytes;
  size_t pos = 0;
  size_t end = 0;
  bool ok = true;

  uint64_t fixed(int n) {
    if (end - pos < size_t(n)) return fail();
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= uint64_t(uint8_t(bytes[pos + i])) << (8 * i);
    pos += size_t(n);
    return v;
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end) return fail();
      auto b = uint8_t(bytes[pos++]);
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return fail();  // more than 10 bytes
  }
  uint64_t fail() {
    ok = false;
    pos = end;
    return 0;
  }
};

}  // namespace

// Most fields are below 128: one byte, without the loop.
char* smallVarintAt(char* out, uint64_t v) {
  if (v >= 0x80) return varintAt(out, v);
  *out = char(v);
  return out + 1;
}

void ScheduleWriter::add(const Decision& d) {
  if (chunks_.empty() || chunks_.back().used + kMaxDecisionBytes > kChunkBytes) {
    chunks_.push_back(Chunk{std::make_unique_for_overwrite<char[]>(kChunkBytes), 0});
  }
  Chunk& c = chunks_.back();
  char* start = c.bytes.get() + c.used;
  char* end = start;
  *end++ = char(d.kind);
  end = smallVarintAt(end, d.index);
  end = smallVarintAt(end, d.size);
  uint32_t hash = std::endian::native == std::endian::little ? d.setHash : __builtin_bswap32(d.setHash);
  std::memcpy(end, &hash, 4);
  end = varintAt(end + 4, d.chosen);
  c.used += size_t(end - start);
}

std::string ScheduleWriter::header(uint64_t seed, uint32_t budget) {
  std::string out(kMagic, sizeof kMagic);
  out.push_back(char(kVersion));
  putFixed(out, seed, 8);
  putVarint(out, budget);
  return out;
}

std::string ScheduleWriter::finish(uint64_t seed, uint32_t budget) const {
  std::string out = header(seed, budget);
  for (const Chunk& c : chunks_) out.append(c.bytes.get(), c.used);
  putFixed(out, fnv1a(out.data(), out.size()), 8);
  return out;
}

bool ScheduleWriter::writeFile(const std::string& path, uint64_t seed, uint32_t budget, std::string& error) const {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), std::fclose);
  bool ok = f != nullptr;
  Fnv1a64 sum;
  auto put = [&](const char* piece, size_t n) {
    sum.update(piece, n);
    ok = ok && std::fwrite(piece, 1, n, f.get()) == n;
  };
  std::string head = header(seed, budget);
  put(head.data(), head.size());
  for (const Chunk& c : chunks_) put(c.bytes.get(), c.used);
  std::string tail;
  putFixed(tail, sum.value(), 8);
  put(tail.data(), tail.size());
  if (!ok || std::fflush(f.get()) != 0) {
    error = "cannot write the schedule to '" + path + "'";
    return false;
  }
  return true;
}

std::string encodeSchedule(const Schedule& s) {
  ScheduleWriter w;
  for (const Decision& d : s.decisions) w.add(d);
  return w.finish(s.seed, s.budget);
}

bool decodeSchedule(const std::string& bytes, Schedule& out, std::string& error) {
  if (bytes.size() < sizeof kMagic + 1 + 8 + 1 + 8 || bytes.compare(0, sizeof kMagic, kMagic, sizeof kMagic) != 0) {
    error = "not a schedule file (no WEFTSCHD header)";
    return false;
  }
  Reader sum{bytes, bytes.size() - 8, bytes.size()};
  if (sum.fixed(8) != fnv1a(bytes.data(), bytes.size() - 8)) {
    error = "the schedule file is corrupt (checksum mismatch)";
    return false;
  }
  Reader r{bytes, sizeof kMagic, bytes.size() - 8};
  if (r.fixed(1) != kVersion) {
    error = "unsupported schedule file version";
    return false;
  }
  out.seed = r.fixed(8);
  out.budget = uint32_t(r.varint());
  out.decisions.clear();
  while (r.ok && r.pos < r.end) {
    Decision d;
    uint64_t kind = r.fixed(1);
    d.kind = DecisionKind(kind);
    d.index = uint32_t(r.varint());
    d.size = uint32_t(r.varint());
    d.setHash = uint32_t(r.fixed(4));
    d.chosen = r.varint();
    if (kind > uint64_t(DecisionKind::kSelect) || (d.size != 0 && d.index >= d.size)) r.fail();
    out.decisions.push_back(d);
  }
  if (!r.ok || r.pos != r.end) {
    error = "the schedule file is malformed";
    return false;
  }
  return true;
}

bool writeScheduleFile(const std::string& path, const std::string& bytes, std::string& error) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size() || std::fflush(f.get()) != 0) {
    error = "cannot write the schedule to '" + path + "'";
    return false;
  }
  return true;
}

bool readScheduleFile(const std::string& path, Schedule& out, std::string& error) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) {
    error = "cannot open the schedule '" + path + "'";
    return false;
  }
  std::string bytes;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) bytes.append(buf, n);
  if (!decodeSchedule(bytes, out, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

}  // namespace weft::runtime
