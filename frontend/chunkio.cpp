// Binary chunks: a straightforward writer and a defensive reader. The reader unwinds
// with a private exception on the first inconsistency; undumpChunk turns it into an
// Error, so nothing escapes.
#include "frontend/chunkio.h"

#include <cstring>

#include "frontend/verify.h"

namespace weft::frontend {
namespace {

constexpr char kLuacData[] = "\x19\x93\r\n\x1a\n";
constexpr int64_t kTestInt = 0x5678;
constexpr double kTestNum = 370.5;

class Writer {
 public:
  explicit Writer(bool strip) : strip_(strip) {}
  std::string take() { return std::move(out_); }

  void byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  void varint(uint64_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      byte(static_cast<uint8_t>(b | (v ? 0x80 : 0)));
    } while (v);
  }
  void svarint(int64_t v) { varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
  void string(const std::string& s) {
    varint(s.size());
    raw(s.data(), s.size());
  }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void number(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    u64(bits);
  }

  void header() {
    raw(kChunkSignature, 4);
    byte(kChunkVersion);
    byte(kChunkFormat);
    raw(kLuacData, 6);
    byte(sizeof(Instruction));
    byte(sizeof(int64_t));
    byte(sizeof(double));
    u64(static_cast<uint64_t>(kTestInt));
    number(kTestNum);
  }

  void function(const ProtoData& f, const std::string& parentSource) {
    string(strip_ || f.source == parentSource ? std::string() : f.source);
    byte(!strip_ && f.source != parentSource && !f.source.empty() ? 1 : 0);
    svarint(f.lineDefined);
    svarint(f.lastLineDefined);
    byte(f.numParams);
    byte(f.isVararg ? 1 : 0);
    byte(f.maxStackSize);
    varint(f.code.size());
    for (Instruction i : f.code) u32(i);
    constants(f);
    varint(f.upvalues.size());
    for (const auto& u : f.upvalues) {
      byte(u.inStack ? 1 : 0);
      byte(u.index);
      byte(static_cast<uint8_t>(u.kind));
    }
    varint(f.protos.size());
    for (const auto& p : f.protos) function(*p, f.source);
    debug(f);
  }

  void constants(const ProtoData& f) {
    varint(f.constants.size());
    for (const auto& k : f.constants) {
      byte(static_cast<uint8_t>(k.kind));
      switch (k.kind) {
        case Constant::Kind::Integer: u64(static_cast<uint64_t>(k.integer)); break;
        case Constant::Kind::Float: number(k.number); break;
        case Constant::Kind::String: string(k.string); break;
        default: break;
      }
    }
  }

  void debug(const ProtoData& f) {
    if (strip_) {
      varint(0);
      varint(0);
      varint(0);
      return;
    }
    varint(f.lineinfo.size());
    int prev = f.lineDefined;
    for (int line : f.lineinfo) {
      svarint(static_cast<int64_t>(line) - prev);
      prev = line;
    }
    varint(f.locals.size());
    for (const auto& l : f.locals) {
      string(l.name);
      varint(static_cast<uint64_t>(l.startPc));
      varint(static_cast<uint64_t>(l.endPc));
    }
    varint(f.upvalues.size());
    for (const auto& u : f.upvalues) string(u.name);
  }

 private:
  std::string out_;
  bool strip_;
};

struct LoadError {
  std::string why;
};

class Reader {
 public:
  Reader(std::string_view in) : in_(in) {}

  uint8_t byte() {
    need(1);
    return static_cast<uint8_t>(in_[pos_++]);
  }
  void need(size_t n) {
    if (in_.size() - pos_ < n) throw LoadError{"truncated chunk"};
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = byte();
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw LoadError{"bad varint"};
  }
  int64_t svarint() {
    uint64_t z = varint();
    return static_cast<int64_t>((z >> 1) ^ (0u - (z & 1)));
  }
  int intField() {
    int64_t v = svarint();
    if (v < INT32_MIN || v > INT32_MAX) throw LoadError{"integer field out of range"};
    return static_cast<int>(v);
  }
  // A count of items that each take at least minBytes of input.
  size_t count(size_t minBytes) {
    uint64_t n = varint();
    if (n > (in_.size() - pos_) / minBytes) throw LoadError{"truncated chunk"};
    return static_cast<size_t>(n);
  }
  std::string string() {
    size_t n = count(1);
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  uint32_t u32() {
    need(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(in_[pos_++])) << (8 * i);
    return v;
  }
  uint64_t u64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_++])) << (8 * i);
    return v;
  }
  double number() {
    uint64_t bits = u64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  void literal(const char* s, size_t n, const char* why) {
    need(n);
    if (in_.substr(pos_, n) != std::string_view(s, n)) throw LoadError{why};
    pos_ += n;
  }

  void header() {
    literal(kChunkSignature, 4, "not a binary chunk");
    if (byte() != kChunkVersion) throw LoadError{"version mismatch"};
    if (byte() != kChunkFormat) throw LoadError{"format mismatch"};
    literal(kLuacData, 6, "corrupted chunk");
    if (byte() != sizeof(Instruction)) throw LoadError{"Instruction size mismatch"};
    if (byte() != sizeof(int64_t)) throw LoadError{"lua_Integer size mismatch"};
    if (byte() != sizeof(double)) throw LoadError{"lua_Number size mismatch"};
    if (static_cast<int64_t>(u64()) != kTestInt) throw LoadError{"integer format mismatch"};
    if (number() != kTestNum) throw LoadError{"float format mismatch"};
  }

  std::unique_ptr<ProtoData> function(const std::string& parentSource, int depth) {
    if (depth > kMaxChunkNesting) throw LoadError{"functions nested too deeply"};
    auto f = std::make_unique<ProtoData>();
    std::string src = string();
    bool hasSource = byte() != 0;
    f->source = hasSource ? std::move(src) : parentSource;
    f->lineDefined = intField();
    f->lastLineDefined = intField();
    f->numParams = byte();
    f->isVararg = byte() != 0;
    f->maxStackSize = byte();
    size_t ncode = count(4);
    f->code.reserve(ncode);
    for (size_t i = 0; i < ncode; ++i) f->code.push_back(u32());
    constants(*f);
    size_t nups = count(3);
    if (nups > 255) throw LoadError{"too many upvalues"};
    f->upvalues.resize(nups);
    for (auto& u : f->upvalues) {
      u.inStack = byte() != 0;
      u.index = byte();
      uint8_t kind = byte();
      if (kind > static_cast<uint8_t>(VarKind::CompileTimeConst)) throw LoadError{"bad upvalue kind"};
      u.kind = static_cast<VarKind>(kind);
    }
    size_t nprotos = count(8);
    for (size_t i = 0; i < nprotos; ++i) f->protos.push_back(function(f->source, depth + 1));
    debug(*f);
    return f;
  }

  void constants(ProtoData& f) {
    size_t n = count(1);
    f.constants.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      uint8_t tag = byte();
      switch (static_cast<Constant::Kind>(tag)) {
        case Constant::Kind::Nil: f.constants.push_back(Constant{}); break;
        case Constant::Kind::False: f.constants.push_back(Constant::makeBool(false)); break;
        case Constant::Kind::True: f.constants.push_back(Constant::makeBool(true)); break;
        case Constant::Kind::Integer: f.constants.push_back(Constant::makeInteger(static_cast<int64_t>(u64()))); break;
        case Constant::Kind::Float: f.constants.push_back(Constant::makeFloat(number())); break;
        case Constant::Kind::String: f.constants.push_back(Constant::makeString(string())); break;
        default: throw LoadError{"bad constant type"};
      }
    }
  }

  void debug(ProtoData& f) {
    size_t nlines = count(1);
    if (nlines != 0 && nlines != f.code.size()) throw LoadError{"bad line info"};
    f.lineinfo.assign(f.code.size(), 0);
    int64_t line = f.lineDefined;
    for (size_t i = 0; i < nlines; ++i) {
      line += svarint();
      if (line < 0 || line > INT32_MAX) throw LoadError{"bad line info"};
      f.lineinfo[i] = static_cast<int>(line);
    }
    size_t nlocals = count(3);
    f.locals.resize(nlocals);
    for (auto& l : f.locals) {
      l.name = string();
      uint64_t s = varint(), e = varint();
      if (s > f.code.size() || e > f.code.size()) throw LoadError{"bad local variable range"};
      l.startPc = static_cast<int>(s);
      l.endPc = static_cast<int>(e);
    }
    size_t nnames = count(1);
    if (nnames != 0 && nnames != f.upvalues.size()) throw LoadError{"bad upvalue names"};
    for (size_t i = 0; i < nnames; ++i) f.upvalues[i].name = string();
  }

  bool atEnd() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

std::string loaderName(std::string_view chunkName) {
  if (!chunkName.empty() && (chunkName[0] == '@' || chunkName[0] == '=')) return std::string(chunkName.substr(1));
  if (!chunkName.empty() && chunkName[0] == kChunkSignature[0]) return "binary string";
  return std::string(chunkName);
}

}  // namespace

std::string dumpChunk(const ProtoData& proto, bool stripDebug) {
  Writer w(stripDebug);
  w.header();
  w.byte(static_cast<uint8_t>(proto.upvalues.size()));
  w.function(proto, std::string(1, '\0'));
  return w.take();
}

Expected<std::unique_ptr<ProtoData>> undumpChunk(std::string_view bytes, std::string_view chunkName) {
  std::string name = loaderName(chunkName);
  try {
    Reader r(bytes);
    r.header();
    uint8_t nups = r.byte();
    auto main = r.function("=?", 0);  // a stripped chunk has no source, whatever its name
    if (main->upvalues.size() != nups) throw LoadError{"upvalue count mismatch"};
    if (!r.atEnd()) throw LoadError{"trailing bytes"};
    if (auto problem = verifyProto(*main)) throw LoadError{"invalid code: " + *problem};
    return main;
  } catch (const LoadError& e) {
    return Error{StatusCode::kSyntaxError, name + ": bad binary format (" + e.why + ")"};
  } catch (const std::bad_alloc&) {
    return Error{StatusCode::kMemoryError, "not enough memory"};
  }
}

}  // namespace weft::frontend
