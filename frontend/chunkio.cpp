// Binary chunks: a writer that emits what luac5.4 emits, and a defensive reader. The
// reader unwinds with a private exception on the first inconsistency; undumpChunk turns
// it into an Error, so nothing escapes.
#include "frontend/chunkio.h"

#include <climits>
#include <cstring>
#include <utility>
#include <vector>

#include "frontend/verify.h"

namespace weft::frontend {
namespace {

constexpr char kLuacData[] = "\x19\x93\r\n\x1a\n";
constexpr int64_t kTestInt = 0x5678;
constexpr double kTestNum = 370.5;

// Constant tags: Lua's type tags with their variant bits (lobject.h's LUA_V*).
constexpr uint8_t kTagNil = 0x00, kTagFalse = 0x01, kTagTrue = 0x11, kTagInteger = 0x03, kTagFloat = 0x13,
                  kTagShortString = 0x04, kTagLongString = 0x14;
constexpr size_t kMaxShortString = 40;  // LUAI_MAXSHORTLEN: longer strings get the long tag
constexpr size_t kMaxUpvalues = 255;     // Lua's MAXUPVAL; the main function's count is a byte

// Line information: a delta byte of kAbsLine means "see the absolute entry for this pc";
// luac writes one when the delta is out of byte range or every kMaxRelativeRun lines.
constexpr int kAbsLine = -0x80;
constexpr int kLineDeltaLimit = 0x80;
constexpr int kMaxRelativeRun = 128;
// The largest int luac's reader (and ours) accepts: a size whose value before its last
// 7 bits reaches INT_MAX >> 7 is an overflow. Derived lines stay below it, so any of
// them can be written back as an absolute entry and read again.
constexpr int64_t kMaxLine = ((int64_t{INT_MAX} >> 7) - 1) * 128 + 127;

// The fewest bytes a nested function can take (a one-byte size for each of its source,
// two line numbers, code, constant, upvalue and prototype counts and four debug counts,
// and three plain bytes), to bound a prototype count by the input left.
constexpr size_t kMinFunctionBytes = 14;

class Writer {
 public:
  explicit Writer(bool strip) : strip_(strip) {}
  std::string take() { return std::move(out_); }

  void byte(uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  void size(uint64_t v) {
    uint8_t buf[10];
    int n = 0;
    do {
      buf[9 - n++] = v & 0x7f;
      v >>= 7;
    } while (v);
    buf[9] |= 0x80;
    raw(buf + 10 - n, static_cast<size_t>(n));
  }
  // Lua widens an int to size_t, so a negative one (never in compiled code) takes 10 bytes.
  void integer(int64_t v) { size(static_cast<uint64_t>(v)); }
  void none() { size(0); }
  void string(const std::string& s) {
    size(s.size() + 1);
    raw(s.data(), s.size());
  }
  // Names that are absent (from a stripped chunk) are empty in ProtoData.
  void name(const std::string& s) { s.empty() ? none() : string(s); }
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

  // parentSource is null for the function being dumped, whose source is always written.
  void function(const ProtoData& f, const std::string* parentSource) {
    if (strip_ || (parentSource && f.source == *parentSource)) {
      none();
    } else {
      string(f.source);
    }
    integer(f.lineDefined);
    integer(f.lastLineDefined);
    byte(f.numParams);
    byte(f.isVararg ? 1 : 0);
    byte(f.maxStackSize);
    integer(static_cast<int64_t>(f.code.size()));
    for (Instruction i : f.code) u32(i);
    constants(f);
    integer(static_cast<int64_t>(f.upvalues.size()));
    for (const auto& u : f.upvalues) {
      byte(u.inStack ? 1 : 0);
      byte(u.index);
      byte(static_cast<uint8_t>(u.kind));
    }
    integer(static_cast<int64_t>(f.protos.size()));
    for (const auto& p : f.protos) function(*p, &f.source);
    lines(f);
    debugNames(f);
  }

  void constants(const ProtoData& f) {
    integer(static_cast<int64_t>(f.constants.size()));
    for (const auto& k : f.constants) {
      switch (k.kind) {
        case Constant::Kind::Nil: byte(kTagNil); break;
        case Constant::Kind::False: byte(kTagFalse); break;
        case Constant::Kind::True: byte(kTagTrue); break;
        case Constant::Kind::Integer:
          byte(kTagInteger);
          u64(static_cast<uint64_t>(k.integer));
          break;
        case Constant::Kind::Float:
          byte(kTagFloat);
          number(k.number);
          break;
        case Constant::Kind::String:
          byte(k.string.size() <= kMaxShortString ? kTagShortString : kTagLongString);
          string(k.string);
          break;
      }
    }
  }

  // A function loaded from a stripped chunk has line 0 everywhere: it has no lines.
  static bool hasLines(const ProtoData& f) {
    if (f.lineinfo.size() != f.code.size()) return false;
    for (int line : f.lineinfo) {
      if (line != 0) return true;
    }
    return false;
  }

  // Re-encodes absolute lines the way luac's code generator records them as it emits.
  void lines(const ProtoData& f) {
    if (strip_ || !hasLines(f)) {
      integer(0);
      integer(0);
      return;
    }
    std::vector<std::pair<int64_t, int64_t>> absolute;
    integer(static_cast<int64_t>(f.code.size()));
    int64_t previous = f.lineDefined;
    int run = 0;
    for (size_t pc = 0; pc < f.code.size(); ++pc) {
      int64_t line = f.lineinfo[pc];
      int64_t delta = line - previous;
      if (delta >= kLineDeltaLimit || delta <= -kLineDeltaLimit || run++ >= kMaxRelativeRun) {
        absolute.emplace_back(static_cast<int64_t>(pc), line);
        byte(static_cast<uint8_t>(kAbsLine));
        run = 1;
      } else {
        byte(static_cast<uint8_t>(static_cast<int8_t>(delta)));
      }
      previous = line;
    }
    integer(static_cast<int64_t>(absolute.size()));
    for (const auto& [pc, line] : absolute) {
      integer(pc);
      integer(line);
    }
  }

  void debugNames(const ProtoData& f) {
    integer(strip_ ? 0 : static_cast<int64_t>(f.locals.size()));
    if (!strip_) {
      for (const auto& l : f.locals) {
        name(l.name);
        integer(l.startPc);
        integer(l.endPc);
      }
    }
    integer(strip_ ? 0 : static_cast<int64_t>(f.upvalues.size()));
    if (!strip_) {
      for (const auto& u : f.upvalues) name(u.name);
    }
  }

 private:
  std::string out_;
  bool strip_;
};

struct LoadError {
  std::string why;
};

[[noreturn]] void fail(const char* why) { throw LoadError{why}; }

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  size_t left() const { return in_.size() - pos_; }
  void need(size_t n) const {
    if (left() < n) fail("truncated chunk");
  }
  uint8_t byte() {
    need(1);
    return static_cast<uint8_t>(in_[pos_++]);
  }
  std::string_view take(size_t n) {
    need(n);
    std::string_view s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  // A size: 7 bits a byte, most significant first, the last byte flagged by 0x80.
  uint64_t size(uint64_t limit) {
    uint64_t v = 0;
    limit >>= 7;
    uint8_t b;
    do {
      b = byte();
      if (v >= limit) fail("integer overflow");
      v = (v << 7) | (b & 0x7f);
    } while (!(b & 0x80));
    return v;
  }
  int integer() { return static_cast<int>(size(INT_MAX)); }
  // A count of items that each take at least minBytes of input.
  size_t count(size_t minBytes) {
    size_t n = static_cast<size_t>(integer());
    if (n > left() / minBytes) fail("truncated chunk");
    return n;
  }
  // A string that may be absent (size 0).
  bool string(std::string& out) {
    uint64_t n = size(UINT64_MAX);
    if (n == 0) return false;
    out = std::string(take(static_cast<size_t>(n - 1)));
    return true;
  }
  uint64_t u64() {
    std::string_view b = take(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(b[static_cast<size_t>(i)])) << (8 * i);
    return v;
  }
  uint32_t u32() {
    std::string_view b = take(4);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(b[static_cast<size_t>(i)])) << (8 * i);
    return v;
  }
  double number() {
    uint64_t bits = u64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  void literal(const char* s, size_t n, const char* why) {
    if (take(n) != std::string_view(s, n)) fail(why);
  }

  void header() {
    literal(kChunkSignature, 4, "not a binary chunk");
    if (byte() != kChunkVersion) fail("version mismatch");
    if (byte() != kChunkFormat) fail("format mismatch");
    literal(kLuacData, 6, "corrupted chunk");
    if (byte() != sizeof(Instruction)) fail("Instruction size mismatch");
    if (byte() != sizeof(int64_t)) fail("lua_Integer size mismatch");
    if (byte() != sizeof(double)) fail("lua_Number size mismatch");
    if (static_cast<int64_t>(u64()) != kTestInt) fail("integer format mismatch");
    if (number() != kTestNum) fail("float format mismatch");
  }

  std::unique_ptr<ProtoData> function(const std::string& parentSource, int depth) {
    if (depth > kMaxChunkNesting) fail("functions nested too deeply");
    auto f = std::make_unique<ProtoData>();
    if (!string(f->source)) f->source = parentSource;
    f->lineDefined = integer();
    f->lastLineDefined = integer();
    f->numParams = byte();
    f->isVararg = byte() != 0;
    f->maxStackSize = byte();
    size_t ncode = count(sizeof(Instruction));
    f->code.reserve(ncode);
    for (size_t i = 0; i < ncode; ++i) f->code.push_back(u32());
    constants(*f);
    upvalues(*f);
    size_t nprotos = count(kMinFunctionBytes);
    f->protos.reserve(nprotos);
    for (size_t i = 0; i < nprotos; ++i) f->protos.push_back(function(f->source, depth + 1));
    lines(*f);
    debugNames(*f);
    return f;
  }

  void constants(ProtoData& f) {
    size_t n = count(1);
    f.constants.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      switch (byte()) {
        case kTagNil: f.constants.push_back(Constant{}); break;
        case kTagFalse: f.constants.push_back(Constant::makeBool(false)); break;
        case kTagTrue: f.constants.push_back(Constant::makeBool(true)); break;
        case kTagInteger: f.constants.push_back(Constant::makeInteger(static_cast<int64_t>(u64()))); break;
        case kTagFloat: f.constants.push_back(Constant::makeFloat(number())); break;
        case kTagShortString:
        case kTagLongString: {
          std::string s;
          if (!string(s)) fail("bad format for constant string");
          f.constants.push_back(Constant::makeString(std::move(s)));
          break;
        }
        default: fail("bad constant type");
      }
    }
  }

  void upvalues(ProtoData& f) {
    size_t n = count(3);
    if (n > kMaxUpvalues) fail("too many upvalues");
    f.upvalues.resize(n);
    for (auto& u : f.upvalues) {
      u.inStack = byte() != 0;
      u.index = byte();
      uint8_t kind = byte();
      if (kind > static_cast<uint8_t>(VarKind::CompileTimeConst)) fail("bad upvalue kind");
      u.kind = static_cast<VarKind>(kind);
    }
  }

  // Turns luac's relative line bytes and absolute entries into one line per instruction
  // (0 everywhere when the chunk has none), with the meaning Lua's getfuncline gives
  // them: an instruction that has an absolute entry takes its line, any other adds its
  // delta to the previous instruction's line.
  void lines(ProtoData& f) {
    size_t nlines = count(1);
    if (nlines != 0 && nlines != f.code.size()) fail("bad line information");
    std::string_view deltas = take(nlines);
    size_t nabsolute = count(2);
    std::vector<std::pair<size_t, int>> absolute(nabsolute);
    for (auto& [pc, line] : absolute) {
      pc = static_cast<size_t>(integer());
      line = integer();
    }
    f.lineinfo.assign(f.code.size(), 0);
    if (nlines == 0) return;
    int64_t line = f.lineDefined;
    size_t next = 0;
    for (size_t pc = 0; pc < nlines; ++pc) {
      if (next < absolute.size() && absolute[next].first == pc) {
        line = absolute[next++].second;
      } else {
        line += static_cast<int8_t>(deltas[pc]);
      }
      if (line < 0 || line > kMaxLine) fail("bad line information");
      f.lineinfo[pc] = static_cast<int>(line);
    }
    if (next != absolute.size()) fail("bad line information");
  }

  void debugNames(ProtoData& f) {
    size_t nlocals = count(3);
    f.locals.resize(nlocals);
    for (auto& l : f.locals) {
      string(l.name);
      l.startPc = integer();
      l.endPc = integer();
    }
    // Any nonzero count means "every upvalue has a name", as in Lua.
    if (integer() == 0) return;
    need(f.upvalues.size());
    for (auto& u : f.upvalues) string(u.name);
  }

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
  w.function(proto, nullptr);
  return w.take();
}

Expected<std::unique_ptr<ProtoData>> undumpChunk(std::string_view bytes, std::string_view chunkName) {
  std::string name = loaderName(chunkName);
  try {
    Reader r(bytes);
    r.header();
    uint8_t nups = r.byte();
    auto main = r.function("=?", 0);  // a stripped chunk has no source, whatever its name
    if (main->upvalues.size() != nups) fail("upvalue count mismatch");
    if (auto problem = verifyProto(*main)) throw LoadError{"invalid code: " + *problem};
    return main;
  } catch (const LoadError& e) {
    return Error{StatusCode::kSyntaxError, name + ": bad binary format (" + e.why + ")"};
  } catch (const std::bad_alloc&) {
    return Error{StatusCode::kMemoryError, "not enough memory"};
  }
}

}  // namespace weft::frontend
