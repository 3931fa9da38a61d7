// The io library (manual §6.8). A file is a full userdata holding a FileBox (the C
// stream and how to close it) whose metatable is registry["FILE*"]; the default input
// and output files live in the registry too. Userdata move, so natives read the FILE*
// out of the box at the start of each call; the FILE itself is off-heap and stable.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cctype>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <vector>

#include "vm/lib/libs.h"
#include "vm/lib/string.h"
#include "vm/meta.h"
#include "vm/number.h"
#include "vm/proto.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

namespace {

// The payload has luaL_Stream's layout (include/weft/lua/lauxlib.h), so C modules that
// take a file with luaL_checkudata(L, i, LUA_FILEHANDLE) read its FILE* and see it closed
// when closef is null (lfs.lock, luaposix). Weft's own handles hold in closef the address
// of one of the tags below, saying how to close them; a handle made by a C module holds
// its lua_CFunction, which this library cannot call from the VM: it closes such a handle
// with fclose.
struct FileBox {
  FILE* f;            // nullptr once closed by this library
  const void* closef;  // nullptr once closed; otherwise a closer tag or a module's function
};

constexpr char kStdCloser = 's';   // standard streams: never closed by Lua
constexpr char kFileCloser = 'f';  // fclose
constexpr char kPipeCloser = 'p';  // pclose, with execResult's results

bool isOpen(const FileBox* box) { return box->f != nullptr && box->closef != nullptr; }

constexpr const char* kFileKey = "FILE*";
constexpr const char* kInputKey = "_IO_input";
constexpr const char* kOutputKey = "_IO_output";
constexpr size_t kMaxNumeral = 200;  // longest numeral read("n") accepts
constexpr int kMaxLinesFormats = 250;

Value registryGet(State& state, const char* key) {
  String* k = newString(state, key);
  return k && state.registry ? tableGetStr(state.registry, k) : Value::nil();
}

Status registrySet(State& state, const char* key, const Value& v) {
  String* k = newString(state, key);
  if (!k) return Status(StatusCode::kMemoryError);
  return tableSetStr(state, state.registry, k, v);
}

FileBox* fileBoxOf(State& state, const Value& v) {
  if (v.tag != Tag::Userdata) return nullptr;
  Value mt = registryGet(state, kFileKey);
  Userdata* u = v.asUserdata();
  if (!mt.isTable() || u->metatable != mt.asTable() || u->size < sizeof(FileBox)) return nullptr;
  return reinterpret_cast<FileBox*>(u->data);
}

// luaL_checkudata(arg, "FILE*").
bool checkFileBox(CallContext& cx, uint32_t arg, FileBox*& box, NativeResult& outcome) {
  box = fileBoxOf(cx.state(), cx.arg(arg));
  if (box) return true;
  outcome = cx.typeError(arg, "FILE*");
  return false;
}

// An open file argument ("attempt to use a closed file" otherwise).
bool checkOpenFile(CallContext& cx, uint32_t arg, FILE*& f, NativeResult& outcome) {
  FileBox* box;
  if (!checkFileBox(cx, arg, box, outcome)) return false;
  if (!isOpen(box)) {
    outcome = cx.error("attempt to use a closed file");
    return false;
  }
  f = box->f;
  return true;
}

// Pushes a new file userdata (closed until the caller stores a stream into it). File
// handles carry no user value, as in lua5.4 (debug.getuservalue gives fail).
FileBox* newFile(CallContext& cx) {
  State& state = cx.state();
  Value mt = registryGet(state, kFileKey);
  Userdata* u = newUserdata(state, sizeof(FileBox), 0);
  if (!u || !mt.isTable()) return nullptr;
  auto* box = reinterpret_cast<FileBox*>(u->data);
  box->f = nullptr;
  box->closef = &kFileCloser;
  storeRef(u, u->metatable, mt.asTable());
  state.heap().registerFinalizable(asGc(u));
  if (!cx.push(Value::userdata(u))) return nullptr;
  return box;
}

NativeResult pushOne(CallContext& cx, const Value& v) {
  if (!cx.push(v)) return cx.stackOverflow();
  return cx.results(1);
}

// luaL_execresult for pclose.
NativeResult execResult(CallContext& cx, int stat) {
  if (stat == -1) return fileResult(cx, false, nullptr);
  const char* what = "exit";
  if (WIFEXITED(stat)) {
    stat = WEXITSTATUS(stat);
  } else if (WIFSIGNALED(stat)) {
    stat = WTERMSIG(stat);
    what = "signal";
  }
  if (!cx.ensureStack(3)) return cx.stackOverflow();
  cx.push(*what == 'e' && stat == 0 ? Value::boolean(true) : Value::nil());
  if (!pushString(cx, what)) return cx.failure();
  cx.push(Value::integer(stat));
  return cx.results(3);
}

// A pipe's child, waited for by pclose off the heap (on the blocking pool when the task
// can suspend).
struct PipeCloseJob final : BlockingJob {
  explicit PipeCloseJob(FILE* pipe) : f(pipe) {}
  FILE* f;
  int stat = 0;
  int err = 0;
  void run() override {
    errno = 0;
    stat = pclose(f);
    err = errno;
  }
  NativeResult finishMayGC(CallContext& cx) override {
    errno = err;
    return execResult(cx, stat);
  }
};

// How a pipe's close waits for its child: through runBlockingMayGC (a native's own
// results), or here between enterOsWait and leaveOsWait (a close inside another
// native's work, whose results are that native's).
enum class PipeWait : uint8_t { kAsNative, kInline };

NativeResult closeBox(CallContext& cx, FileBox* box, PipeWait pipeWait = PipeWait::kAsNative) {
  if (box->closef == &kStdCloser) return failResult(cx, "cannot close standard file", 0);
  FILE* f = box->f;
  const void* closer = box->closef;
  box->f = nullptr;
  box->closef = nullptr;
  errno = 0;
  if (closer == &kPipeCloser) {
    auto job = std::make_shared<PipeCloseJob>(f);
    if (pipeWait == PipeWait::kAsNative) return runBlockingMayGC(cx, std::move(job));
    enterOsWait(cx.state());
    job->run();
    if (!leaveOsWait(cx.state()).isOk()) return NativeResult{0, StatusCode::kFatal};
    return job->finishMayGC(cx);
  }
  return fileResult(cx, std::fclose(f) == 0, nullptr);
}

// ---- reading ------------------------------------------------------------------------

bool readLine(FILE* f, std::string& out, bool keepNewline) {
  int c;
  bool any = false;
  while ((c = getc_unlocked(f)) != EOF) {
    any = true;
    if (c == '\n') {
      if (keepNewline) out += '\n';
      return true;
    }
    out += char(c);
  }
  return any;
}

void readAll(FILE* f, std::string& out) {
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
}

bool readChars(FILE* f, int64_t count, std::string& out) {
  char buf[4096];
  uint64_t left = uint64_t(count);
  while (left > 0) {
    size_t want = left < sizeof buf ? size_t(left) : sizeof buf;
    size_t n = std::fread(buf, 1, want, f);
    out.append(buf, n);
    left -= n;
    if (n < want) break;
  }
  return !out.empty();
}

// Reads the longest prefix that looks like a numeral (at most kMaxNumeral bytes), then
// converts it with Lua's rules; a malformed numeral reads as fail.
struct NumeralReader {
  FILE* f;
  int c;
  std::string buf;
  bool overflow = false;
  bool next() {
    if (buf.size() >= kMaxNumeral) {
      overflow = true;
      return false;
    }
    buf += char(c);
    c = getc_unlocked(f);
    return true;
  }
  bool accept(const char* set) {
    if (c == EOF || (c != set[0] && c != set[1])) return false;
    return next();
  }
  int digits(bool hex) {
    int n = 0;
    while (c != EOF && (hex ? std::isxdigit(c) : std::isdigit(c)) && next()) n++;
    return n;
  }
};

bool readNumber(FILE* f, Value& out) {
  NumeralReader r{f, 0, {}};
  do {
    r.c = getc_unlocked(f);
  } while (r.c != EOF && std::isspace(r.c));
  int count = 0;
  bool hex = false;
  r.accept("-+");
  if (r.accept("00")) {
    if (r.accept("xX")) hex = true;
    else count = 1;
  }
  count += r.digits(hex);
  if (r.accept("..")) count += r.digits(hex);
  if (count > 0 && r.accept(hex ? "pP" : "eE")) {
    r.accept("-+");
    r.digits(false);
  }
  if (r.c != EOF) ungetc(r.c, f);
  if (r.overflow) return false;
  std::optional<Value> v = stringToNumber(r.buf);
  if (!v) return false;
  out = *v;
  return true;
}


// One format of read and lines, checked before anything is read.
struct ReadFormat {
  char kind;          // 'l', 'L', 'a', 'n', or 'c' (count bytes; 0 tests for end of file)
  int64_t count = 0;
};

// Reads a list of formats from `f` into C++ buffers (so off the heap, on the blocking
// pool for a stream that may wait), then pushes one value per format read, failing (nil)
// at the first miss, as g_read does. A format found invalid is raised only if every
// format before it succeeded, where g_read would have reached it.
struct ReadJob final : BlockingJob {
  FILE* f = nullptr;
  std::vector<ReadFormat> formats;
  uint32_t base = 0;              // the native's stack top before its results
  bool forLines = false;          // the lines iterator: linesAfterRead ends it
  // The first invalid format: its argument and error (argError, or a type error).
  uint32_t badArg = 0;
  const char* badMessage = nullptr;
  bool badIsType = false;
  // run()'s results.
  std::vector<std::string> strings;
  std::vector<Value> numbers;     // 'n' only: numbers are not heap objects
  size_t attempted = 0;
  bool success = true;
  bool failed = false;            // ferror
  int err = 0;

  void run() override;
  NativeResult finishMayGC(CallContext& cx) override;
  NativeResult pushResults(CallContext& cx);
};

void ReadJob::run() {
  clearerr(f);
  errno = 0;
  strings.resize(formats.size());
  numbers.resize(formats.size(), Value::nil());
  for (attempted = 0; attempted < formats.size() && success; attempted++) {
    const ReadFormat& fmt = formats[attempted];
    std::string& buf = strings[attempted];
    switch (fmt.kind) {
      case 'n': success = readNumber(f, numbers[attempted]); break;
      case 'l': success = readLine(f, buf, false); break;
      case 'L': success = readLine(f, buf, true); break;
      case 'a': readAll(f, buf); break;
      default:
        if (fmt.count == 0) {
          int c = getc_unlocked(f);
          if (c != EOF) ungetc(c, f);
          success = c != EOF;
        } else {
          success = readChars(f, fmt.count, buf);
        }
    }
  }
  failed = std::ferror(f) != 0;
  err = errno;
}

NativeResult ReadJob::pushResults(CallContext& cx) {
  if (failed) {
    errno = err;
    cx.setTop(base);
    return fileResult(cx, false, nullptr);
  }
  if (success && badMessage) {
    return badIsType ? cx.typeError(badArg, badMessage) : cx.argError(badArg, badMessage);
  }
  if (!cx.ensureStack(uint32_t(attempted) + 1)) return cx.error("too many arguments");
  for (size_t i = 0; i < attempted; i++) {
    if (formats[i].kind == 'n') {
      cx.push(numbers[i]);
    } else if (!pushString(cx, strings[i])) {
      return cx.failure();
    }
  }
  strings.clear();
  if (!success) cx.setAt(cx.top() - 1, Value::nil());
  return cx.results(int32_t(attempted));
}

NativeResult linesAfterRead(CallContext& cx, uint32_t base, NativeResult r);

NativeResult ReadJob::finishMayGC(CallContext& cx) {
  NativeResult r = pushResults(cx);
  return forLines ? linesAfterRead(cx, base, r) : r;
}

// Checks format i (argument `arg`) into `job`; false records the first invalid one.
bool parseFormat(ReadJob& job, const Value& fmt, uint32_t arg) {
  if (fmt.isInt() || fmt.isFloat()) {
    int64_t len;
    if (!toInteger(fmt, len)) {
      job.badMessage = "number has no integer representation";
    } else {
      job.formats.push_back({'c', len});
      return true;
    }
  } else if (!fmt.isString()) {
    job.badMessage = "string";
    job.badIsType = true;
  } else {
    std::string_view p = fmt.asString()->view();
    if (!p.empty() && p[0] == '*') p.remove_prefix(1);
    char kind = p.empty() ? 0 : p[0];
    if (kind == 'n' || kind == 'l' || kind == 'L' || kind == 'a') {
      job.formats.push_back({kind});
      return true;
    }
    job.badMessage = "invalid format";
  }
  job.badArg = arg;
  return false;
}

// Formats come from `formatAt(i)`, i in [0, count); `firstArg` numbers them in
// argument errors. A stream that may wait is read by a blocking job.
template <typename FormatAt>
NativeResult readFormatsMayGC(CallContext& cx, FILE* f, int count, uint32_t firstArg, FormatAt formatAt,
                         bool forLines = false) {
  if (!cx.ensureStack(uint32_t(count) + 1)) return cx.error("too many arguments");
  auto job = std::make_shared<ReadJob>();
  job->f = f;
  job->base = cx.top();
  job->forLines = forLines;
  if (count == 0) job->formats.push_back({'l'});
  for (int i = 0; i < count; i++) {
    if (!parseFormat(*job, formatAt(i), firstArg + uint32_t(i))) break;
  }
  if (streamMayWait(f)) return runBlockingMayGC(cx, std::move(job));
  job->run();
  return job->finishMayGC(cx);
}

NativeResult readArgsMayGC(CallContext& cx, FILE* f, uint32_t first) {
  int count = cx.argCount() >= first ? int(cx.argCount() - first + 1) : 0;
  return readFormatsMayGC(cx, f, count, first, [&](int i) { return cx.arg(first + uint32_t(i)); });
}

// ---- writing ------------------------------------------------------------------------

// A write that may block (a full pipe, a terminal) runs detached from the collector
// (OsWait::kShort), so it never holds up a collection: the arguments are copied into a
// C++ buffer first, since heap strings may move meanwhile.
bool writeDetached(CallContext& cx, FILE* f, const std::string& buf) {
  enterOsWait(cx.state(), OsWait::kShort);
  bool ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
  if (!leaveOsWait(cx.state(), OsWait::kShort).isOk()) return false;
  return ok;
}

void appendNumber(std::string& buf, const Value& v) {
  char num[64];
  int n = v.isInt() ? std::snprintf(num, sizeof num, "%lld", static_cast<long long>(v.asInt()))
                    : std::snprintf(num, sizeof num, "%.14g", v.asFloat());
  buf.append(num, size_t(n));
}

// The file a write returns: `file:write` its first argument, `io.write` the default
// output. Read after the write, since a detached write may see the file object move.
Value writtenFile(CallContext& cx, uint32_t first) {
  return first == 1 ? registryGet(cx.state(), kOutputKey) : cx.arg(1);
}

NativeResult writeBuffered(CallContext& cx, FILE* f, uint32_t first) {
  BufferLease lease;
  std::string& buf = lease.get();
  buf.clear();
  errno = 0;
  for (uint32_t i = first; i <= cx.argCount(); i++) {
    Value v = cx.arg(i);
    if (v.isInt() || v.isFloat()) {
      appendNumber(buf, v);
      continue;
    }
    String* s;
    if (!cx.checkString(i, s)) {
      (void)writeDetached(cx, f, buf);  // what came before the bad argument is written, as in lua
      return cx.failure();
    }
    buf.append(s->data, s->length);
  }
  if (!writeDetached(cx, f, buf)) return fileResult(cx, false, nullptr);
  return pushOne(cx, writtenFile(cx, first));
}

// `first` is the first value to write: 1 for io.write, 2 for file:write.
NativeResult writeArgs(CallContext& cx, FILE* f, uint32_t first) {
  if (streamMayWait(f)) return writeBuffered(cx, f, first);
  bool ok = true;
  errno = 0;
  for (uint32_t i = first; i <= cx.argCount(); i++) {
    Value v = cx.arg(i);
    if (v.isInt()) {
      ok = ok && std::fprintf(f, "%lld", static_cast<long long>(v.asInt())) > 0;
    } else if (v.isFloat()) {
      ok = ok && std::fprintf(f, "%.14g", v.asFloat()) > 0;
    } else {
      String* s;
      if (!cx.checkString(i, s)) return cx.failure();
      ok = ok && std::fwrite(s->data, 1, s->length, f) == s->length;
    }
  }
  if (!ok) return fileResult(cx, false, nullptr);
  return pushOne(cx, writtenFile(cx, first));
}

// fflush of a stream that may block, detached like a write.
bool flushStream(CallContext& cx, FILE* f) {
  if (!streamMayWait(f)) return std::fflush(f) == 0;
  enterOsWait(cx.state(), OsWait::kShort);
  bool ok = std::fflush(f) == 0;
  if (!leaveOsWait(cx.state(), OsWait::kShort).isOk()) return false;
  return ok;
}

// ---- default files ------------------------------------------------------------------

bool defaultFile(CallContext& cx, const char* key, FILE*& f, Value& file, NativeResult& outcome) {
  file = registryGet(cx.state(), key);
  FileBox* box = fileBoxOf(cx.state(), file);
  if (!box || !isOpen(box)) {
    outcome = cx.error("default %s file is closed", key == kInputKey ? "input" : "output");
    return false;
  }
  f = box->f;
  return true;
}

bool openInto(CallContext& cx, const char* name, const char* mode, NativeResult& outcome) {
  FileBox* box = newFile(cx);
  if (!box) {
    outcome = cx.memoryError();
    return false;
  }
  errno = 0;
  box->f = std::fopen(name, mode);
  if (!box->f) {
    outcome = cx.error("cannot open file '%s' (%s)", name, std::strerror(errno));
    return false;
  }
  return true;
}

NativeResult setDefault(CallContext& cx, const char* key, const char* mode) {
  Value a = cx.arg(1);
  if (!a.isNil()) {
    if (a.isString() || a.isNumber()) {
      String* name;
      if (!cx.checkString(1, name)) return cx.failure();
      NativeResult outcome;
      if (!openInto(cx, std::string(name->view()).c_str(), mode, outcome)) return outcome;
      if (!registrySet(cx.state(), key, cx.at(cx.top() - 1)).isOk()) return cx.memoryError();
    } else {
      FILE* f;
      NativeResult outcome;
      if (!checkOpenFile(cx, 1, f, outcome)) return outcome;
      if (!registrySet(cx.state(), key, a).isOk()) return cx.memoryError();
    }
  }
  return pushOne(cx, registryGet(cx.state(), key));
}

NativeResult ioInput(CallContext& cx) { return setDefault(cx, kInputKey, "r"); }
NativeResult ioOutput(CallContext& cx) { return setDefault(cx, kOutputKey, "w"); }

// ---- lines ----------------------------------------------------------------------------

// The lines iterator: upvalue 0 the file, 1 the format count, 2 whether to close the
// file at the end, then the formats.
NativeResult linesStep(CallContext& cx) {
  FileBox* box = fileBoxOf(cx.state(), cx.upvalue(0));
  if (!box || !isOpen(box)) return cx.error("file is already closed");
  int count = int(cx.upvalue(1).asInt());
  return readFormatsMayGC(cx, box->f, count, 2, [&](int i) { return cx.upvalue(3 + uint32_t(i)); }, true);
}

// The end of a lines step, after its read pushed `r`: a miss with a message raises it,
// and at the end of the file an iterator that opened it closes it.
NativeResult linesAfterRead(CallContext& cx, uint32_t base, NativeResult r) {
  if (r.status != StatusCode::kOk) return r;
  if (r.count > 0 && cx.at(cx.top() - uint32_t(r.count)).isTruthy()) return r;
  if (r.count > 1) {
    Value msg = cx.at(cx.top() - uint32_t(r.count) + 1);
    if (msg.isString()) return cx.error("%s", std::string(msg.asString()->view()).c_str());
  }
  cx.setTop(base);
  if (cx.upvalue(2).isTruthy()) {
    FileBox* box = fileBoxOf(cx.state(), cx.upvalue(0));
    if (box && isOpen(box)) {
      NativeResult c = closeBox(cx, box, PipeWait::kInline);
      if (c.status != StatusCode::kOk) return c;
      cx.setTop(base);
    }
  }
  return cx.results(0);
}

// Makes the iterator for the file at `fileValue` with formats args first..argCount.
NativeResult makeLines(CallContext& cx, const Value& fileValue, uint32_t first, bool toClose) {
  int count = cx.argCount() >= first ? int(cx.argCount() - first + 1) : 0;
  if (count > kMaxLinesFormats) return cx.argError(uint32_t(kMaxLinesFormats) + 2, "too many arguments");
  NativeClosure* c = newNativeClosure(cx.state(), worldEffect<linesStep>, "for iterator", uint32_t(3 + count));
  if (!c) return cx.memoryError();
  storeValue(c, c->upvalues[0], fileValue);
  c->upvalues[1] = Value::integer(count);
  c->upvalues[2] = Value::boolean(toClose);
  for (int i = 0; i < count; i++) storeValue(c, c->upvalues[3 + i], cx.arg(first + uint32_t(i)));
  return pushOne(cx, Value::nativeClosure(c));
}

NativeResult ioLines(CallContext& cx) {
  if (cx.arg(1).isNil()) {
    Value file;
    FILE* f;
    NativeResult outcome;
    if (!defaultFile(cx, kInputKey, f, file, outcome)) return outcome;
    return makeLines(cx, file, 2, false);
  }
  String* name;
  if (!cx.checkString(1, name)) return cx.failure();
  NativeResult outcome;
  if (!openInto(cx, std::string(name->view()).c_str(), "r", outcome)) return outcome;
  uint32_t fileSlot = cx.top() - 1;
  NativeResult r = makeLines(cx, cx.at(fileSlot), 2, true);
  if (r.status != StatusCode::kOk) return r;
  // Four results: iterator, nil, nil, and the file as the to-be-closed value.
  if (!cx.ensureStack(3)) return cx.stackOverflow();
  cx.push(Value::nil());
  cx.push(Value::nil());
  cx.push(cx.at(fileSlot));
  return cx.results(4);
}

// ---- io functions -------------------------------------------------------------------

bool validOpenMode(std::string_view m) {
  if (m.empty() || std::strchr("rwa", m[0]) == nullptr || m[0] == 0) return false;
  m.remove_prefix(1);
  if (!m.empty() && m[0] == '+') m.remove_prefix(1);
  return m.find_first_not_of('b') == std::string_view::npos;
}

NativeResult ioOpen(CallContext& cx) {
  String* name;
  String* mode;
  if (!cx.checkString(1, name) || !cx.optString(2, nullptr, mode)) return cx.failure();
  std::string m = mode ? std::string(mode->view()) : "r";
  if (!validOpenMode(m)) return cx.argError(2, "invalid mode");
  std::string path(name->view());
  FileBox* box = newFile(cx);
  if (!box) return cx.memoryError();
  errno = 0;
  box->f = std::fopen(path.c_str(), m.c_str());
  if (!box->f) return fileResult(cx, false, path.c_str());
  return cx.results(1);
}

NativeResult ioPopen(CallContext& cx) {
  String* prog;
  String* mode;
  if (!cx.checkString(1, prog) || !cx.optString(2, nullptr, mode)) return cx.failure();
  std::string m = mode ? std::string(mode->view()) : "r";
  if (m != "r" && m != "w") return cx.argError(2, "invalid mode");
  std::string command(prog->view());
  FileBox* box = newFile(cx);
  if (!box) return cx.memoryError();
  std::fflush(nullptr);
  errno = 0;
  box->f = popen(command.c_str(), m.c_str());
  box->closef = &kPipeCloser;
  if (!box->f) return fileResult(cx, false, command.c_str());
  return cx.results(1);
}

NativeResult ioTmpfile(CallContext& cx) {
  FileBox* box = newFile(cx);
  if (!box) return cx.memoryError();
  errno = 0;
  box->f = std::tmpfile();
  if (!box->f) return fileResult(cx, false, nullptr);
  return cx.results(1);
}

NativeResult ioType(CallContext& cx) {
  if (!cx.checkAny(1)) return cx.failure();
  FileBox* box = fileBoxOf(cx.state(), cx.arg(1));
  if (!box) return pushOne(cx, Value::nil());
  return returnString(cx, isOpen(box) ? "file" : "closed file");
}

NativeResult ioClose(CallContext& cx) {
  if (cx.arg(1).isNil()) {
    Value file = registryGet(cx.state(), kOutputKey);
    FileBox* box = fileBoxOf(cx.state(), file);
    if (!box || !isOpen(box)) return cx.error("attempt to use a closed file");
    return closeBox(cx, box);
  }
  FILE* f;
  NativeResult outcome;
  if (!checkOpenFile(cx, 1, f, outcome)) return outcome;
  return closeBox(cx, fileBoxOf(cx.state(), cx.arg(1)));
}

NativeResult ioRead(CallContext& cx) {
  Value file;
  FILE* f;
  NativeResult outcome;
  if (!defaultFile(cx, kInputKey, f, file, outcome)) return outcome;
  return readArgsMayGC(cx, f, 1);
}

NativeResult ioWrite(CallContext& cx) {
  Value file;
  FILE* f;
  NativeResult outcome;
  if (!defaultFile(cx, kOutputKey, f, file, outcome)) return outcome;
  return writeArgs(cx, f, 1);
}

NativeResult ioFlush(CallContext& cx) {
  Value file;
  FILE* f;
  NativeResult outcome;
  if (!defaultFile(cx, kOutputKey, f, file, outcome)) return outcome;
  errno = 0;
  return fileResult(cx, flushStream(cx, f), nullptr);
}

// ---- methods ----------------------------------------------------------------------

NativeResult fClose(CallContext& cx) {
  FILE* f;
  NativeResult outcome;
  if (!checkOpenFile(cx, 1, f, outcome)) return outcome;
  return closeBox(cx, fileBoxOf(cx.state(), cx.arg(1)));
}

NativeResult fFlush(CallContext& cx) {
  FILE* f;
  NativeResult outcome;
  if (!checkOpenFile(cx, 1, f, outcome)) return outcome;
  errno = 0;
  return fileResult(cx, flushStream(cx, f), nullptr);
}

NativeResult fLines(CallContext& cx) {
  FILE* f;
  NativeResult outcome;
  if (!checkOpenFile(cx, 1, f, outcome)) return outcome;
  return makeLines(cx, cx.arg(1), 2, false);
}

NativeResult fRead(CallContext& cx) {
  FILE* f;
  NativeResult outcome;
  if (!checkOpenFile(cx, 1, f, outcome)) return outcome;
  return readArgsMayGC(cx, f, 2);
}

NativeResult fWrite(CallContext& cx) {
  FILE* f;
  NativeResult outcome;
  if (!checkOpenFile(cx, 1, f, outcome)) return outcome;
  return writeArgs(cx, f, 2);
}

// luaL_checkoption: index of `name` in `options`, or an argument error.
bool checkOption(CallContext& cx, uint32_t arg, const char* def, std::initializer_list<const char*> options, int& index,
                 NativeResult& outcome) {
  String* s;
  if (!cx.optString(arg, nullptr, s)) {
    outcome = cx.failure();
    return false;
  }
  std::string_view name = s ? s->view() : std::string_view(def);
  int i = 0;
  for (const char* o : options) {
    if (name == o) {
      index = i;
      return true;
    }
    i++;
  }
  outcome = cx.argError(arg, "invalid option '" + std::string(name) + "'");
  return false;
}

NativeResult fSeek(CallContext& cx) {
  FILE* f;
  NativeResult outcome;
  int whence;
  int64_t offset;
  if (!checkOpenFile(cx, 1, f, outcome) || !checkOption(cx, 2, "cur", {"set", "cur", "end"}, whence, outcome))
    return outcome;
  if (!cx.optInteger(3, 0, offset)) return cx.failure();
  static constexpr int kWhence[] = {SEEK_SET, SEEK_CUR, SEEK_END};
  errno = 0;
  if (fseeko(f, off_t(offset), kWhence[whence]) != 0) return fileResult(cx, false, nullptr);
  return pushOne(cx, Value::integer(int64_t(ftello(f))));
}

NativeResult fSetvbuf(CallContext& cx) {
  FILE* f;
  NativeResult outcome;
  int mode;
  int64_t size;
  if (!checkOpenFile(cx, 1, f, outcome) || !checkOption(cx, 2, nullptr, {"no", "full", "line"}, mode, outcome))
    return outcome;
  if (!cx.optInteger(3, BUFSIZ, size)) return cx.failure();
  static constexpr int kModes[] = {_IONBF, _IOFBF, _IOLBF};
  errno = 0;
  return fileResult(cx, std::setvbuf(f, nullptr, kModes[mode], size_t(size)) == 0, nullptr);
}

// __gc and __close: close an open file, ignoring failures (standard files stay open).
NativeResult fGc(CallContext& cx) {
  FileBox* box;
  NativeResult outcome;
  if (!checkFileBox(cx, 1, box, outcome)) return outcome;  // called by hand on a non-file
  if (isOpen(box) && box->closef != &kStdCloser) {
    uint32_t base = cx.top();
    closeBox(cx, box);
    cx.setTop(base);
  }
  return cx.results(0);
}

NativeResult fToString(CallContext& cx) {
  FileBox* box;
  NativeResult outcome;
  if (!checkFileBox(cx, 1, box, outcome)) return outcome;
  if (!isOpen(box)) return returnString(cx, "file (closed)");
  char buf[48];
  std::snprintf(buf, sizeof buf, "file (%p)", static_cast<void*>(box->f));
  return returnString(cx, buf);
}

constexpr LibEntry kIoLib[] = {
    {"close", worldEffect<ioClose>}, {"flush", worldEffect<ioFlush>}, {"input", worldEffect<ioInput>},
    {"lines", worldEffect<ioLines>}, {"open", worldEffect<ioOpen>}, {"output", worldEffect<ioOutput>},
    {"popen", worldEffect<ioPopen>}, {"read", worldEffect<ioRead>}, {"tmpfile", worldEffect<ioTmpfile>},
    {"type", ioType}, {"write", worldEffect<ioWrite>},
};

constexpr LibEntry kFileMethods[] = {
    {"close", worldEffect<fClose>}, {"flush", worldEffect<fFlush>}, {"lines", worldEffect<fLines>},
    {"read", worldEffect<fRead>}, {"seek", worldEffect<fSeek>}, {"setvbuf", worldEffect<fSetvbuf>},
    {"write", worldEffect<fWrite>},
};

Status setField(State& state, Table* t, const char* name, const Value& v) {
  String* key = newString(state, name);
  if (!key) return Status(StatusCode::kMemoryError);
  return tableSetStr(state, t, key, v);
}

// The metatable of files: methods under __index, plus __gc/__close/__tostring/__name.
Status makeFileMetatable(State& state) {
  Table* mt = newTable(state, 0, 8);
  Table* methods = newTable(state, 0, 8);
  if (!mt || !methods) return Status(StatusCode::kMemoryError);
  for (const LibEntry& e : kFileMethods)
    if (Status st = setField(state, methods, e.name, Value::lightNative(e.fn)); !st.isOk()) return st;
  String* name = newString(state, kFileKey);
  if (!name) return Status(StatusCode::kMemoryError);
  const struct {
    const char* key;
    Value value;
  } fields[] = {
      {"__index", Value::table(methods)},    {"__gc", Value::lightNative(fGc)},
      {"__close", Value::lightNative(worldEffect<fGc>)},  {"__tostring", Value::lightNative(fToString)},
      {"__name", Value::string(name)},
  };
  for (const auto& f : fields)
    if (Status st = setField(state, mt, f.key, f.value); !st.isOk()) return st;
  return registrySet(state, kFileKey, Value::table(mt));
}

// A standard stream: never closed by Lua (close reports "cannot close standard file").
Status makeStdFile(State& state, Table* lib, FILE* f, const char* field, const char* registryKey) {
  Value mt = registryGet(state, kFileKey);
  Userdata* u = newUserdata(state, sizeof(FileBox), 0);
  if (!u || !mt.isTable()) return Status(StatusCode::kMemoryError);
  auto* box = reinterpret_cast<FileBox*>(u->data);
  box->f = f;
  box->closef = &kStdCloser;
  storeRef(u, u->metatable, mt.asTable());
  if (Status st = setField(state, lib, field, Value::userdata(u)); !st.isOk()) return st;
  if (registryKey) return registrySet(state, registryKey, Value::userdata(u));
  return Status::ok();
}

}  // namespace

Status openIoLib(State& state) {
  Table* lib;
  if (Status st = openLibrary(state, "io", kIoLib, &lib); !st.isOk()) return st;
  if (Status st = makeFileMetatable(state); !st.isOk()) return st;
  if (Status st = makeStdFile(state, lib, stdin, "stdin", kInputKey); !st.isOk()) return st;
  if (Status st = makeStdFile(state, lib, stdout, "stdout", kOutputKey); !st.isOk()) return st;
  return makeStdFile(state, lib, stderr, "stderr", nullptr);
}

bool streamMayWait(FILE* f) {
  struct stat st;
  return fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode);
}

bool stdoutMayWait() {
  static const bool mayWait = streamMayWait(stdout);
  return mayWait;
}

NativeResult execResultOf(CallContext& cx, int stat) { return execResult(cx, stat); }

}  // namespace weft::vm
