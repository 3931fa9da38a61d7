// The package library (manual §6.3): require and its four searchers, package.path from
// the environment, searchpath. package.cpath is empty: Weft loads no shared libraries
// (native modules come through the embedding API, e.g. package.preload), so the C
// searchers only ever report what they did not find, exactly as Lua does for an
// empty cpath.
//
// package.loaded is registry._LOADED and package.preload registry._PRELOAD; the package
// table itself is reached through package.loaded.package (our natives carry no
// upvalues), as require reads package.path and package.searchers from it on each call.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "vm/interp.h"
#include "vm/number.h"
#include "vm/lib/libs.h"
#include "vm/lib/string.h"
#include "vm/string.h"
#include "vm/table.h"

namespace weft::vm {

namespace {

constexpr const char* kDefaultPath =
    "/usr/local/share/lua/5.4/?.lua;/usr/local/share/lua/5.4/?/init.lua;"
    "/usr/local/lib/lua/5.4/?.lua;/usr/local/lib/lua/5.4/?/init.lua;"
    "/usr/share/lua/5.4/?.lua;/usr/share/lua/5.4/?/init.lua;"
    "./?.lua;./?/init.lua";
constexpr const char* kConfig = "/\n;\n?\n!\n-\n";

Value registryField(State& state, const char* key) {
  String* k = newString(state, key);
  return k ? tableGetStr(state.registry, k) : Value::nil();
}

// package.loaded.package (nil if someone removed it).
Value packageTable(State& state) {
  Value loaded = registryField(state, "_LOADED");
  String* k = newString(state, "package");
  if (!loaded.isTable() || !k) return Value::nil();
  return tableGetStr(loaded.asTable(), k);
}

Value rawField(State& state, const Value& t, const char* key) {
  String* k = newString(state, key);
  if (!t.isTable() || !k) return Value::nil();
  return tableGetStr(t.asTable(), k);
}

bool readable(const std::string& file) {
  FILE* f = std::fopen(file.c_str(), "r");
  if (!f) return false;
  std::fclose(f);
  return true;
}

std::string replaceAll(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  size_t i = 0;
  while (true) {
    size_t at = from.empty() ? std::string_view::npos : s.find(from, i);
    if (at == std::string_view::npos) break;
    out.append(s.substr(i, at - i));
    out.append(to);
    i = at + from.size();
  }
  out.append(s.substr(i));
  return out;
}

// Lua's searchpath: each template with '?' replaced; returns the first readable file,
// or "" with `notFound` listing every candidate.
std::string searchPath(std::string_view name, std::string_view path, std::string_view sep, std::string_view dirsep,
                       std::string& notFound) {
  std::string n = (!sep.empty() && name.find(sep[0]) != std::string_view::npos) ? replaceAll(name, sep.substr(0, 1), dirsep)
                                                                                  : std::string(name);
  std::string candidates = replaceAll(path, "?", n);
  size_t i = 0;
  while (i <= candidates.size()) {
    size_t end = candidates.find(';', i);
    if (end == std::string::npos) end = candidates.size();
    std::string file = candidates.substr(i, end - i);
    if (!file.empty() && readable(file)) return file;
    i = end + 1;
  }
  notFound = "no file '" + replaceAll(candidates, ";", "'\n\tno file '") + "'";
  return {};
}

NativeResult pkgSearchpath(CallContext& cx) {
  String* name;
  String* path;
  String* sep;
  String* rep;
  if (!cx.checkString(1, name) || !cx.checkString(2, path) || !cx.optString(3, nullptr, sep) || !cx.optString(4, nullptr, rep))
    return cx.failure();
  std::string notFound;
  std::string file = searchPath(name->view(), path->view(), sep ? sep->view() : ".", rep ? rep->view() : "/", notFound);
  if (!file.empty()) return returnString(cx, file);
  return failResult(cx, notFound, 0);
}

// Pushes (loader, extra) or (message) as a searcher's results.
NativeResult searcherPreload(CallContext& cx) {
  String* name;
  if (!cx.checkString(1, name)) return cx.failure();
  Value preload = registryField(cx.state(), "_PRELOAD");
  if (!preload.isTable()) return cx.error("'package.preload' must be a table");
  Value loader = tableGetStr(preload.asTable(), name);
  if (loader.isNil()) return returnString(cx, "no field package.preload['" + std::string(name->view()) + "']");
  if (!cx.ensureStack(2)) return cx.stackOverflow();
  cx.push(loader);
  if (!pushString(cx, ":preload:")) return cx.failure();
  return cx.results(2);
}

bool pathField(CallContext& cx, const char* field, std::string& out, NativeResult& outcome) {
  Value v = rawField(cx.state(), packageTable(cx.state()), field);
  if (v.isString()) {
    out.assign(v.asString()->view());
    return true;
  }
  if (v.isNumber()) {
    char buf[64];
    out.assign(buf, formatNumber(v, buf));
    return true;
  }
  outcome = cx.error("'package.%s' must be a string", field);
  return false;
}

bool readSource(const std::string& file, std::string& text) {
  FILE* f = std::fopen(file.c_str(), "rb");
  if (!f) return false;
  char buf[8192];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  bool ok = !std::ferror(f);
  std::fclose(f);
  // A first line starting with '#' (a shebang) is skipped; its newline stays so line
  // numbers are unchanged.
  if (ok && !text.empty() && text[0] == '#') {
    size_t nl = text.find('\n');
    text.erase(0, nl == std::string::npos ? text.size() : nl);
  }
  return ok;
}

NativeResult searcherLua(CallContext& cx) {
  String* name;
  if (!cx.checkString(1, name)) return cx.failure();
  std::string modName(name->view());
  std::string path, notFound;
  NativeResult outcome;
  if (!pathField(cx, "path", path, outcome)) return outcome;
  std::string file = searchPath(modName, path, ".", "/", notFound);
  if (file.empty()) return returnString(cx, notFound);
  std::string text, err;
  Value fn;
  Status st = Status(StatusCode::kRuntimeError);
  if (readSource(file, text)) st = loadChunk(cx.state(), text, "@" + file, "bt", fn, err);
  else err = "cannot read " + file;
  if (!st.isOk())
    return cx.error("error loading module '%s' from file '%s':\n\t%s", modName.c_str(), file.c_str(), err.c_str());
  if (!cx.push(fn)) return cx.stackOverflow();
  if (!pushString(cx, file)) return cx.failure();
  return cx.results(2);
}

// Shared libraries are not supported: a found file is reported as Lua reports it when
// built without dynamic loading.
NativeResult searchCpath(CallContext& cx, const std::string& modName, std::string_view searchName) {
  std::string cpath, notFound;
  NativeResult outcome;
  if (!pathField(cx, "cpath", cpath, outcome)) return outcome;
  std::string file = searchPath(searchName, cpath, ".", "/", notFound);
  if (file.empty()) return returnString(cx, notFound);
  return cx.error("error loading module '%s' from file '%s':\n\tdynamic libraries not enabled; check your Lua installation",
                  modName.c_str(), file.c_str());
}

NativeResult searcherC(CallContext& cx) {
  String* name;
  if (!cx.checkString(1, name)) return cx.failure();
  std::string modName(name->view());
  return searchCpath(cx, modName, modName);
}

NativeResult searcherCroot(CallContext& cx) {
  String* name;
  if (!cx.checkString(1, name)) return cx.failure();
  std::string modName(name->view());
  size_t dot = modName.find('.');
  if (dot == std::string::npos) return cx.results(0);
  return searchCpath(cx, modName, std::string_view(modName).substr(0, dot));
}

// Runs the searchers until one returns a loader; leaves (loader, extra) at the top.
NativeResult findLoaderMayGC(CallContext& cx, uint32_t nameSlot, uint32_t& loaderSlot) {
  Value searchers = rawField(cx.state(), packageTable(cx.state()), "searchers");
  if (!searchers.isTable()) return cx.error("'package.searchers' must be a table");
  uint32_t searchersSlot = cx.top();
  if (!cx.push(searchers)) return cx.stackOverflow();
  BufferLease lease;
  std::string& msg = lease.get();
  for (int64_t i = 1;; i++) {
    Value searcher = tableGetInt(cx.at(searchersSlot).asTable(), i);
    if (searcher.isNil()) {
      std::string_view name = cx.at(nameSlot).asString()->view();
      return cx.error("module '%.*s' not found:%s", int(name.size()), name.data(), msg.c_str());
    }
    uint32_t base = cx.top();
    if (!cx.ensureStack(2)) return cx.stackOverflow();
    cx.push(searcher);
    cx.push(cx.at(nameSlot));
    if (Status st = cx.callMayGC(base, 1, 2); !st.isOk()) return NativeResult{0, st.code()};
    Value found = cx.at(base);
    if (found.isFunction()) {
      loaderSlot = base;
      return cx.results(0);
    }
    if (found.isString()) {
      msg += "\n\t";
      msg.append(found.asString()->view());
    } else if (found.isNumber()) {
      char buf[64];
      msg += "\n\t";
      msg.append(buf, formatNumber(found, buf));
    }
    cx.setTop(base);
  }
}

NativeResult pkgRequire(CallContext& cx) {
  String* name;
  if (!cx.checkString(1, name)) return cx.failure();
  cx.setTop(cx.argIndex(1) + 1);
  uint32_t nameSlot = cx.argIndex(1);
  cx.setAt(nameSlot, Value::string(name));
  Value loaded = registryField(cx.state(), "_LOADED");
  if (!loaded.isTable()) return cx.error("'package.loaded' must be a table");
  Value have = tableGetStr(loaded.asTable(), name);
  if (have.isTruthy()) {
    if (!cx.push(have)) return cx.stackOverflow();
    return cx.results(1);
  }
  uint32_t loaderSlot = 0;
  NativeResult r = findLoaderMayGC(cx, nameSlot, loaderSlot);
  if (r.status != StatusCode::kOk) return r;
  // Call loader(name, extra); keep extra for our second result.
  uint32_t extraSlot = loaderSlot + 1;
  if (!cx.ensureStack(3)) return cx.stackOverflow();
  uint32_t callBase = cx.top();
  cx.push(cx.at(loaderSlot));
  cx.push(cx.at(nameSlot));
  cx.push(cx.at(extraSlot));
  if (Status st = cx.callMayGC(callBase, 2, 1); !st.isOk()) return NativeResult{0, st.code()};
  Value result = cx.at(callBase);
  loaded = registryField(cx.state(), "_LOADED");
  if (!loaded.isTable()) return cx.error("'package.loaded' must be a table");
  String* key = cx.at(nameSlot).asString();
  if (!result.isNil()) {
    if (Status st = tableSetStr(cx.state(), loaded.asTable(), key, result); !st.isOk()) return cx.memoryError();
  } else if (tableGetStr(loaded.asTable(), key).isNil()) {
    Status st = tableSetStr(cx.state(), loaded.asTable(), key, Value::boolean(true));
    if (!st.isOk()) return cx.memoryError();
  }
  cx.setTop(callBase);
  cx.push(tableGetStr(loaded.asTable(), key));
  cx.push(cx.at(extraSlot));
  return cx.results(2);
}

// LUA_PATH_5_4 or LUA_PATH, with the first ";;" replaced by the default path; the
// default alone when registry.LUA_NOENV is set (the CLI's -E, set before opening).
std::string pathFromEnvironment(State& state) {
  if (registryField(state, "LUA_NOENV").isTruthy()) return kDefaultPath;
  const char* env = std::getenv("LUA_PATH_5_4");
  if (!env) env = std::getenv("LUA_PATH");
  if (!env) return kDefaultPath;
  std::string path(env);
  size_t mark = path.find(";;");
  if (mark == std::string::npos) return path;
  std::string out = path.substr(0, mark);
  if (mark > 0) out += ';';
  out += kDefaultPath;
  if (mark + 2 < path.size()) {
    out += ';';
    out += path.substr(mark + 2);
  }
  return out;
}

constexpr LibEntry kPackageLib[] = {{"searchpath", pkgSearchpath}};

Status setField(State& state, Table* t, const char* name, const Value& v) {
  String* key = newString(state, name);
  if (!key) return Status(StatusCode::kMemoryError);
  return tableSetStr(state, t, key, v);
}

// registry[key], created as an empty table when missing.
Table* registryTable(State& state, const char* key) {
  Value v = registryField(state, key);
  if (v.isTable()) return v.asTable();
  Table* t = newTable(state, 0, 16);
  if (!t || !setField(state, state.registry, key, Value::table(t)).isOk()) return nullptr;
  return t;
}

}  // namespace

Status openPackageLib(State& state) {
  const Status noMemory(StatusCode::kMemoryError);
  Table* pkg;
  if (Status st = openLibrary(state, "package", kPackageLib, &pkg); !st.isOk()) return st;
  Table* searchers = newTable(state, 4, 0);
  Table* loaded = registryTable(state, "_LOADED");
  Table* preload = registryTable(state, "_PRELOAD");
  if (!searchers || !loaded || !preload) return noMemory;
  NativeFn fns[] = {searcherPreload, searcherLua, searcherC, searcherCroot};
  for (int i = 0; i < 4; i++)
    if (!tableSetInt(state, searchers, i + 1, Value::lightNative(fns[i])).isOk()) return noMemory;
  String* path = newString(state, pathFromEnvironment(state));
  String* cpath = newString(state, "");
  String* config = newString(state, kConfig);
  if (!path || !cpath || !config) return noMemory;
  const struct {
    const char* key;
    Value value;
  } fields[] = {
      {"searchers", Value::table(searchers)}, {"loaded", Value::table(loaded)}, {"preload", Value::table(preload)},
      {"path", Value::string(path)},          {"cpath", Value::string(cpath)},  {"config", Value::string(config)},
  };
  for (const auto& f : fields)
    if (Status st = setField(state, pkg, f.key, f.value); !st.isOk()) return st;
  return setField(state, state.globals, "require", Value::lightNative(worldEffect<pkgRequire>));
}

}  // namespace weft::vm
