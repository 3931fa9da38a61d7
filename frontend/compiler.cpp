// compile() and shortSourceName(): the frontend's public entry points. Internal errors
// unwind as SyntaxError and become Error values here; nothing escapes.
#include "frontend/compiler.h"

#include <cstring>
#include <new>

#include "frontend/parser.h"

namespace weft::frontend {

Expected<std::unique_ptr<ProtoData>> compile(std::string_view source, std::string_view chunkName) {
  try {
    Parser parser(source, chunkName);
    return parser.parseMainChunk();
  } catch (const SyntaxError& e) {
    return Error{StatusCode::kSyntaxError, e.message};
  } catch (const std::bad_alloc&) {
    return Error{StatusCode::kMemoryError, "not enough memory"};
  }
}

std::string shortSourceName(std::string_view source) {
  constexpr size_t kBuf = kIdSize;
  if (!source.empty() && source[0] == '=') {
    std::string_view rest = source.substr(1);
    return std::string(rest.substr(0, std::min(rest.size(), kBuf - 1)));
  }
  if (!source.empty() && source[0] == '@') {
    std::string_view rest = source.substr(1);
    if (rest.size() <= kBuf - 1) return std::string(rest);
    return "..." + std::string(rest.substr(rest.size() - (kBuf - 4)));
  }
  // A string source: [string "first line..."]
  constexpr size_t kAvail = kBuf - (sizeof("[string \"...\"]") - 1) - 1;
  size_t nl = source.find('\n');
  std::string out = "[string \"";
  if (source.size() < kAvail && nl == std::string_view::npos) {
    out += source;
  } else {
    size_t len = nl != std::string_view::npos ? nl : source.size();
    out += source.substr(0, std::min(len, kAvail));
    out += "...";
  }
  return out + "\"]";
}

}  // namespace weft::frontend
