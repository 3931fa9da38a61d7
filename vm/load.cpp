// Loading chunks: text through the compiler, binary through frontend/chunkio.h.
#include <cstring>

#include "frontend/chunkio.h"
#include "frontend/compiler.h"
#include "vm/interp.h"
#include "vm/proto.h"

namespace weft::vm {

Status loadChunk(State& S, std::string_view chunk, std::string_view chunkName, std::string_view mode, Value& fn,
                 std::string& err) {
  bool binary = !chunk.empty() && chunk[0] == frontend::kChunkSignature[0];
  if (binary && mode.find('b') == std::string_view::npos) {
    err = "attempt to load a binary chunk (mode is '" + std::string(mode) + "')";
    return Status(StatusCode::kSyntaxError);
  }
  if (!binary && mode.find('t') == std::string_view::npos) {
    err = "attempt to load a text chunk (mode is '" + std::string(mode) + "')";
    return Status(StatusCode::kSyntaxError);
  }
  auto compiled = binary ? frontend::undumpChunk(chunk, chunkName) : frontend::compile(chunk, chunkName);
  if (!compiled) {
    err = compiled.error().message;
    return Status(compiled.error().code == StatusCode::kMemoryError ? StatusCode::kMemoryError
                                                                     : StatusCode::kSyntaxError);
  }
  size_t nup = (*compiled)->upvalues.size();
  Proto* p = loadProto(S, std::move(*compiled));
  if (!p) {
    err = "not enough memory";
    return Status(StatusCode::kMemoryError);
  }
  LuaClosure* c = newLuaClosure(S, p, uint32_t(nup));
  if (!c) {
    err = "not enough memory";
    return Status(StatusCode::kMemoryError);
  }
  for (size_t i = 0; i < nup; i++) {
    Upvalue* uv = newUpvalueClosed(S, i == 0 ? Value::table(S.globals) : Value::nil());
    if (!uv) {
      err = "not enough memory";
      return Status(StatusCode::kMemoryError);
    }
    storeRef(c, c->upvalues[i], uv);
  }
  fn = Value::luaClosure(c);
  return Status::ok();
}

}  // namespace weft::vm
