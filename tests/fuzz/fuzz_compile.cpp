// libFuzzer entry point for the frontend: compiles arbitrary bytes; when that succeeds,
// the result must verify, survive a dump/undump round trip unchanged, and list.
// Any undump of the raw input must fail cleanly or yield verified code.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "frontend/chunkio.h"
#include "frontend/compiler.h"
#include "frontend/listing.h"
#include "frontend/verify.h"

using namespace weft::frontend;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto undumped = undumpChunk(input, "=fuzz");
  if (undumped.hasValue() && verifyProto(*undumped.value())) std::abort();

  auto result = compile(input, "=fuzz");
  if (!result.hasValue()) return 0;
  const ProtoData& proto = *result.value();
  if (auto problem = verifyProto(proto)) {
    std::fprintf(stderr, "compiled code does not verify: %s\n", problem->c_str());
    std::abort();
  }
  std::string full = listing(proto, true);
  for (bool strip : {false, true}) {
    std::string bytes = dumpChunk(proto, strip);
    auto back = undumpChunk(bytes, "=fuzz");
    if (!back.hasValue()) {
      std::fprintf(stderr, "round trip failed: %s\n", back.error().message.c_str());
      std::abort();
    }
    if (!strip && listing(*back.value(), true) != full) std::abort();
  }
  return 0;
}
