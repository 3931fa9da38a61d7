// Binary chunks: dump/undump round trips preserve everything, and corrupt input
// (truncated at every byte, random flips, foreign headers) is an error, never a crash.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "frontend/chunkio.h"
#include "frontend/compiler.h"
#include "frontend/listing.h"
#include "frontend/verify.h"

namespace weft::frontend {
namespace {

const char* kProgram = R"(
local a, b <const>, c = 1, 2, "three"
local t = {1, 2.5, "x", true, false, nil, n = 0x7fffffffffffffff}
local function f(x, ...)
  local up = a
  return function(y) up = up + y return up, x end, ...
end
for i = 1, 3 do t[i] = f(i) end
for k, v in pairs(t) do if v == nil then break end end
do local r <close> = nil end
return t, f, -1.5e300
)";

std::unique_ptr<ProtoData> compileOk(const char* src) {
  auto r = compile(src, "@prog.lua");
  EXPECT_TRUE(r.hasValue()) << (r.hasValue() ? "" : r.error().message);
  return r.hasValue() ? std::move(r.value()) : nullptr;
}

TEST(ChunkIo, CompiledCodeVerifies) {
  auto p = compileOk(kProgram);
  ASSERT_TRUE(p);
  EXPECT_EQ(verifyProto(*p), std::nullopt);
}

TEST(ChunkIo, RoundTripPreservesListing) {
  auto p = compileOk(kProgram);
  ASSERT_TRUE(p);
  std::string bytes = dumpChunk(*p, false);
  EXPECT_EQ(bytes.substr(0, 4), "\x1bLua");
  auto back = undumpChunk(bytes, "@prog.luac");
  ASSERT_TRUE(back.hasValue()) << back.error().message;
  EXPECT_EQ(listing(*back.value(), true), listing(*p, true));
  EXPECT_EQ(dumpChunk(*back.value(), false), bytes);
}

TEST(ChunkIo, StrippedChunkDropsDebugInfo) {
  auto p = compileOk(kProgram);
  ASSERT_TRUE(p);
  std::string stripped = dumpChunk(*p, true);
  EXPECT_LT(stripped.size(), dumpChunk(*p, false).size());
  auto back = undumpChunk(stripped, "=stripped");
  ASSERT_TRUE(back.hasValue()) << back.error().message;
  const ProtoData& f = *back.value();
  EXPECT_TRUE(f.locals.empty());
  EXPECT_EQ(f.lineinfo.size(), f.code.size());
  EXPECT_EQ(f.code, p->code);
  EXPECT_EQ(f.upvalues[0].name, "");
}

TEST(ChunkIo, ForeignHeadersAreRejected) {
  auto p = compileOk("return 1");
  std::string bytes = dumpChunk(*p, false);
  auto check = [](std::string b, const std::string& why) {
    auto r = undumpChunk(b, "=c");
    ASSERT_FALSE(r.hasValue());
    EXPECT_EQ(r.error().message, "c: bad binary format (" + why + ")");
  };
  std::string v = bytes;
  v[4] = 0x53;
  check(v, "version mismatch");
  v = bytes;
  v[5] = 0x57;  // the format byte of Weft's former chunks
  check(v, "format mismatch");
  v = bytes;
  v[8] = 'X';
  check(v, "corrupted chunk");
  check(bytes.substr(0, 20), "truncated chunk");
  check("\x1bLux", "not a binary chunk");
  auto named = undumpChunk(bytes.substr(0, 10), "\x1bLua...");
  ASSERT_FALSE(named.hasValue());
  EXPECT_EQ(named.error().message, "binary string: bad binary format (truncated chunk)");
}

TEST(ChunkIo, HeaderIsLuacs) {
  auto p = compileOk("return 1");
  std::string bytes = dumpChunk(*p, true);
  std::string header("\x1bLua\x54\x00\x19\x93\r\n\x1a\n\x04\x08\x08"
                     "\x78\x56\0\0\0\0\0\0"                // 0x5678
                     "\0\0\0\0\0\x28\x77\x40",             // 370.5
                     31);
  EXPECT_EQ(bytes.substr(0, 31), header);
  EXPECT_EQ(static_cast<uint8_t>(bytes[31]), 1);  // the main function's one upvalue
}

// Lines far apart and long runs on one line need luac's absolute entries; loading them
// back gives every instruction its line again.
TEST(ChunkIo, AbsoluteLineEntriesRoundTrip) {
  std::string src = "local x = 0\n";
  for (int i = 0; i < 150; ++i) src += "x = x + 1 ";
  src += std::string(300, '\n') + "x = x * 2\n" + std::string(200, '\n') + "return function() return x end\n";
  auto p = compileOk(src.c_str());
  ASSERT_TRUE(p);
  std::string bytes = dumpChunk(*p, false);
  auto back = undumpChunk(bytes, "=lines");
  ASSERT_TRUE(back.hasValue()) << back.error().message;
  EXPECT_EQ(back.value()->lineinfo, p->lineinfo);
  EXPECT_EQ(back.value()->protos[0]->lineinfo, p->protos[0]->lineinfo);
  EXPECT_EQ(back.value()->protos[0]->source, p->source);  // written once, inherited
}

// Lines that deltas push past the largest int a chunk can carry would load but not
// survive a redump (an absolute entry could not be read back), so they are refused.
TEST(ChunkIo, LinesStayWritable) {
  auto p = compileOk("return 1");
  ASSERT_TRUE(p);
  constexpr int kMaxLine = 2147483519;  // INT_MAX - 128: the largest size luac can read
  p->lineinfo.assign(p->code.size(), kMaxLine - 10);
  std::string bytes = dumpChunk(*p, false);
  auto back = undumpChunk(bytes, "=l");
  ASSERT_TRUE(back.hasValue()) << back.error().message;
  EXPECT_EQ(back.value()->lineinfo, p->lineinfo);
  std::string deltas("\x80\x00", 2);  // pc 0 absolute, pc 1 on the same line
  size_t at = bytes.rfind(deltas);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1] = 20;  // pc 1 twenty lines further: past kMaxLine
  auto r = undumpChunk(bytes, "=l");
  ASSERT_FALSE(r.hasValue());
  EXPECT_EQ(r.error().message, "l: bad binary format (bad line information)");
  bytes[at + 1] = 10;  // exactly kMaxLine
  EXPECT_TRUE(undumpChunk(bytes, "=l").hasValue());
}

TEST(ChunkIo, OverlongSizeIsAnOverflow) {
  auto p = compileOk("return 1");
  std::string bytes = dumpChunk(*p, false);
  bytes.insert(32, std::string(12, '\x7f'));  // the main function's source size
  auto r = undumpChunk(bytes, "=o");
  ASSERT_FALSE(r.hasValue());
  EXPECT_EQ(r.error().message, "o: bad binary format (integer overflow)");
}

TEST(ChunkIo, TruncationAtEveryByteIsAnError) {
  auto p = compileOk(kProgram);
  ASSERT_TRUE(p);
  std::string bytes = dumpChunk(*p, false);
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = undumpChunk(std::string_view(bytes).substr(0, n), "=t");
    EXPECT_FALSE(r.hasValue()) << "prefix of " << n << " bytes loaded";
  }
}

TEST(ChunkIo, RandomCorruptionNeverCrashes) {
  auto p = compileOk(kProgram);
  ASSERT_TRUE(p);
  std::string bytes = dumpChunk(*p, false);
  std::mt19937 rng(12345);
  int loaded = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string b = bytes;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) b[rng() % b.size()] = static_cast<char>(rng());
    auto r = undumpChunk(b, "=fuzz");
    if (r.hasValue()) {
      ++loaded;
      EXPECT_EQ(verifyProto(*r.value()), std::nullopt);
      listing(*r.value(), true);
    } else {
      EXPECT_NE(r.error().message.find("bad binary format"), std::string::npos);
    }
  }
  EXPECT_LT(loaded, 3000);
}

TEST(Verify, RejectsHandMadeBadCode) {
  auto make = [] {
    auto p = std::make_unique<ProtoData>();
    p->maxStackSize = 2;
    p->code = {makeABC(Op::RETURN0, 0, 1, 0)};
    p->lineinfo = {1};
    return p;
  };
  EXPECT_EQ(verifyProto(*make()), std::nullopt);
  auto p = make();
  p->code.insert(p->code.begin(), makeABC(Op::MOVE, 0, 7, 0));
  p->lineinfo.push_back(1);
  EXPECT_NE(verifyProto(*p), std::nullopt);  // register out of range
  p = make();
  p->code.insert(p->code.begin(), makeABx(Op::LOADK, 0, 0));
  p->lineinfo.push_back(1);
  EXPECT_NE(verifyProto(*p), std::nullopt);  // no constant 0
  p = make();
  p->code.insert(p->code.begin(), makeSJ(Op::JMP, 5));
  p->lineinfo.push_back(1);
  EXPECT_NE(verifyProto(*p), std::nullopt);  // jump out of the code
  p = make();
  p->code.insert(p->code.begin(), makeABC(Op::ADD, 0, 0, 1));
  p->lineinfo.push_back(1);
  EXPECT_NE(verifyProto(*p), std::nullopt);  // ADD without MMBIN
  p = make();
  p->code.insert(p->code.begin(), makeABC(Op::CALL, 0, 0, 1));
  p->lineinfo.push_back(1);
  EXPECT_NE(verifyProto(*p), std::nullopt);  // "to top" without an open producer
  p = make();
  p->code[0] = 0x7f;
  EXPECT_NE(verifyProto(*p), std::nullopt);  // invalid opcode
  p = make();
  p->isVararg = true;
  EXPECT_NE(verifyProto(*p), std::nullopt);  // vararg without VARARGPREP
  p = make();
  p->lineinfo.clear();
  EXPECT_NE(verifyProto(*p), std::nullopt);
}

}  // namespace
}  // namespace weft::frontend
