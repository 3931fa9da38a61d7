// The schedule file format (schedule_file.h).
#include "runtime/sched/schedule_file.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <memory>

namespace weft::runtime {
namespace {

constexpr char kMagic[8] = {'W', 'E', 'F', 'T', 'S', 'C', 'H', 'D'};
constexpr uint8_t kVersion = 2;  // the one written; version 1 is read too

uint64_t fnv1a(const char* p, size_t n) {
  ScheduleChecksum f;
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

ScheduleWriter::ScheduleWriter(uint64_t seed, uint32_t budget)
    : buffer_(std::make_unique_for_overwrite<char[]>(kBufferBytes)) {
  std::string head(kMagic, sizeof kMagic);
  head.push_back(char(kVersion));
  putFixed(head, seed, 8);
  putVarint(head, budget);
  std::memcpy(buffer_.get(), head.data(), head.size());
  used_ = head.size();
}

ScheduleWriter::~ScheduleWriter() {
  if (file_) std::fclose(file_);
}

void ScheduleWriter::streamTo(std::string path) { path_ = std::move(path); }

void ScheduleWriter::add(const Decision& d) {
  if (used_ + kMaxDecisionBytes > kBufferBytes) flush();
  char* start = buffer_.get() + used_;
  char* end = smallVarintAt(start, uint64_t(d.index) << 1 | uint8_t(d.kind));
  int64_t delta = int64_t(d.size) - int64_t(lastSize_);
  lastSize_ = d.size;
  end = smallVarintAt(end, delta < 0 ? (uint64_t(-delta) << 1) - 1 : uint64_t(delta) << 1);
  *end++ = char(uint8_t(d.setHash));
  *end++ = char(uint8_t(d.setHash >> 8));
  used_ += size_t(end - start);
}

// The buffer's bytes go to the checksum and their destination; the buffer is reused.
void ScheduleWriter::flush() {
  sum_.update(buffer_.get(), used_);
  put(buffer_.get(), used_);
  used_ = 0;
}

void ScheduleWriter::put(const char* p, size_t n) {
  if (path_.empty()) {
    bytes_.append(p, n);
    return;
  }
  if (!file_ && !failed_) file_ = std::fopen(path_.c_str(), "wb");
  failed_ = failed_ || !file_ || std::fwrite(p, 1, n, file_) != n;
}

std::string ScheduleWriter::finish() {
  flush();
  putFixed(bytes_, sum_.value(), 8);
  return std::move(bytes_);
}

bool ScheduleWriter::finishFile(std::string& error) {
  flush();
  std::string tail;
  putFixed(tail, sum_.value(), 8);
  put(tail.data(), tail.size());
  if (file_) {
    failed_ = std::fclose(file_) != 0 || failed_;
    file_ = nullptr;
  }
  if (!failed_) return true;
  error = "cannot write the schedule to '" + path_ + "'";
  return false;
}

std::string encodeSchedule(const Schedule& s) {
  ScheduleWriter w(s.seed, s.budget);
  for (const Decision& d : s.decisions) w.add(d);
  return w.finish();
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
  uint64_t version = r.fixed(1);
  if (version != kVersion && version != 1) {
    error = "unsupported schedule file version";
    return false;
  }
  out.seed = r.fixed(8);
  out.budget = uint32_t(r.varint());
  out.decisions.clear();
  uint32_t lastSize = 0;
  while (r.ok && r.pos < r.end) {
    Decision d;
    uint64_t kind;
    if (version == 1) {
      kind = r.fixed(1);
      d.index = uint32_t(r.varint());
      d.size = uint32_t(r.varint());
      d.setHash = foldSetHash(r.fixed(4));
      r.varint();  // the chosen task
    } else {
      uint64_t head = r.varint();
      kind = head & 1;
      d.index = uint32_t(head >> 1);
      uint64_t zigzag = r.varint();
      d.size = lastSize + uint32_t(zigzag & 1 ? ~(zigzag >> 1) : zigzag >> 1);
      lastSize = d.size;
      d.setHash = uint16_t(r.fixed(2));
    }
    d.kind = DecisionKind(kind);
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
