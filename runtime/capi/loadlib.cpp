// The C module loader (manual §6.3, docs/design/c-modules.md): package.loadlib,
// package.cpath, and the searchers that find C modules (package.searchers[3], the C
// searcher, and [4], the all-in-one "Croot" searcher), as Lua 5.4 has them with dlopen.
//
// Written with the public C API only, as a C module would be: it runs under the C API's
// trampoline, raises by luaL_error, and holds no C++ object with a destructor anywhere a
// lua_* call may raise. Shared state lives where Lua keeps it: the open libraries in
// registry._CLIBS (path -> handle, and 1..n in opening order), closed in reverse order by
// that table's __gc when the State closes; since _CLIBS is made finalizable before any
// module's userdata, it is finalized after them.
#include "runtime/capi/loadlib.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lauxlib.h"
#include "lualib.h"
#include "runtime/capi/capi.h"

namespace weft::capi {

namespace {

// Debian's lua5.4 default, directory by directory (WEFT_MULTIARCH: the architecture
// triplet of Debian's library directories, from CMake; absent elsewhere).
#ifdef WEFT_MULTIARCH
#define WEFT_MULTIARCH_CPATH "/usr/lib/" WEFT_MULTIARCH "/lua/5.4/?.so;"
#else
#define WEFT_MULTIARCH_CPATH
#endif
constexpr const char* kDefaultCPath = "/usr/local/lib/lua/5.4/?.so;" WEFT_MULTIARCH_CPATH
                                      "/usr/lib/lua/5.4/?.so;/usr/local/lib/lua/5.4/loadall.so;./?.so";
constexpr const char* kCLibs = "_CLIBS";
constexpr const char* kOpenPrefix = "luaopen_";
constexpr const char* kOpenSeparator = "_";  // LUA_OFSEP: replaces the dots of a module name
constexpr char kIgnoreMark = '-';  // LUA_IGMARK: a module name's suffix from here is ignored

// lookForFunction's outcomes besides 0 (found): the library did not open, or has no
// such function; either leaves the loader's message on the stack.
constexpr int kNoLibrary = 1;
constexpr int kNoFunction = 2;

// The handle registry._CLIBS keeps for `path`, or nullptr.
void* openedLibrary(lua_State* L, const char* path) {
  lua_getfield(L, LUA_REGISTRYINDEX, kCLibs);
  lua_getfield(L, -1, path);
  void* handle = lua_touserdata(L, -1);
  lua_pop(L, 2);
  return handle;
}

void rememberLibrary(lua_State* L, const char* path, void* handle) {
  lua_getfield(L, LUA_REGISTRYINDEX, kCLibs);
  lua_pushlightuserdata(L, handle);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, path);
  lua_rawseti(L, -2, luaL_len(L, -2) + 1);
  lua_pop(L, 1);
}

// _CLIBS.__gc: closes the libraries, last opened first.
int closeLibraries(lua_State* L) {
  for (lua_Integer n = luaL_len(L, 1); n >= 1; n--) {
    lua_rawgeti(L, 1, n);
    dlclose(lua_touserdata(L, -1));
    lua_pop(L, 1);
  }
  return 0;
}

// Opens `path` (once per State) and looks `sym` up in it. "*" only opens it, with its
// symbols made global for the libraries opened after it, and pushes true; otherwise the
// function is pushed. On failure pushes dlerror()'s message.
int lookForFunction(lua_State* L, const char* path, const char* sym) {
  void* handle = openedLibrary(L, path);
  if (!handle) {
    handle = dlopen(path, RTLD_NOW | (sym[0] == '*' ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!handle) {
      lua_pushstring(L, dlerror());
      return kNoLibrary;
    }
    rememberLibrary(L, path, handle);
  }
  if (sym[0] == '*') {
    lua_pushboolean(L, 1);
    return 0;
  }
  auto f = reinterpret_cast<lua_CFunction>(dlsym(handle, sym));
  if (!f) {
    lua_pushstring(L, dlerror());
    return kNoFunction;
  }
  lua_pushcfunction(L, f);
  return 0;
}

// package.loadlib(path, funcname): the function, or fail, the message and where it
// failed ("open" or "init").
int packageLoadlib(lua_State* L) {
  const char* path = luaL_checkstring(L, 1);
  const char* init = luaL_checkstring(L, 2);
  int outcome = lookForFunction(L, path, init);
  if (outcome == 0) return 1;
  luaL_pushfail(L);
  lua_insert(L, -2);
  lua_pushstring(L, outcome == kNoLibrary ? "open" : "init");
  return 3;
}

bool readable(const char* file) {
  FILE* f = std::fopen(file, "r");
  if (!f) return false;
  std::fclose(f);
  return true;
}

// package.cpath's templates with '?' replaced by `name` (dots become directory
// separators): pushes the first readable file and returns it, or pushes the list of
// files tried ("no file '...'" lines) and returns nullptr.
const char* findFile(lua_State* L, const char* name) {
  lua_getfield(L, lua_upvalueindex(1), "cpath");
  const char* cpath = lua_tostring(L, -1);
  if (!cpath) luaL_error(L, "'package.%s' must be a string", "cpath");
  if (std::strchr(name, '.')) name = luaL_gsub(L, name, ".", LUA_DIRSEP);
  const char* candidates = luaL_gsub(L, cpath, LUA_PATH_MARK, name);
  for (const char* at = candidates;;) {
    const char* end = std::strchr(at, *LUA_PATH_SEP);
    size_t length = end ? size_t(end - at) : std::strlen(at);
    const char* file = lua_pushlstring(L, at, length);
    if (readable(file)) return file;
    lua_pop(L, 1);
    if (!end) break;
    at = end + 1;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "no file '");
  luaL_addgsub(&b, candidates, LUA_PATH_SEP, "'\n\tno file '");
  luaL_addstring(&b, "'");
  luaL_pushresult(&b);
  return nullptr;
}

// The open function of module `modname` in `file`: luaopen_ and the name with dots as
// underscores. With a hyphen, the part before it names the function; failing that,
// the part after it (the older rule).
int loadFunction(lua_State* L, const char* file, const char* modname) {
  modname = luaL_gsub(L, modname, ".", kOpenSeparator);
  if (const char* mark = std::strchr(modname, kIgnoreMark)) {
    lua_pushlstring(L, modname, size_t(mark - modname));
    const char* openName = lua_pushfstring(L, "%s%s", kOpenPrefix, lua_tostring(L, -1));
    int outcome = lookForFunction(L, file, openName);
    if (outcome != kNoFunction) return outcome;
    modname = mark + 1;
  }
  return lookForFunction(L, file, lua_pushfstring(L, "%s%s", kOpenPrefix, modname));
}

// A searcher's two results (the loader is on the top), or the error of a module whose
// file was found but would not load.
int foundOrRaise(lua_State* L, bool found, const char* file) {
  if (!found)
    return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", lua_tostring(L, 1), file,
                      lua_tostring(L, -1));
  lua_pushstring(L, file);
  return 2;
}

int searcherC(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  const char* file = findFile(L, name);
  if (!file) return 1;
  return foundOrRaise(L, loadFunction(L, file, name) == 0, file);
}

// a.b.c from the library of its root module a: "no module" when that library exists
// but has no open function for a.b.c.
int searcherCroot(lua_State* L) {
  const char* name = luaL_checkstring(L, 1);
  const char* dot = std::strchr(name, '.');
  if (!dot) return 0;
  lua_pushlstring(L, name, size_t(dot - name));
  const char* file = findFile(L, lua_tostring(L, -1));
  if (!file) return 1;
  int outcome = loadFunction(L, file, name);
  if (outcome == kNoFunction) {
    lua_pushfstring(L, "no module '%s' in file '%s'", name, file);
    return 1;
  }
  return foundOrRaise(L, outcome == 0, file);
}

// package.cpath: LUA_CPATH_5_4, else LUA_CPATH, with its first ";;" standing for the
// default; the default alone without either, or when registry.LUA_NOENV is set (-E).
void pushCPath(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
  bool noEnv = lua_toboolean(L, -1);
  lua_pop(L, 1);
  const char* env = noEnv ? nullptr : std::getenv("LUA_CPATH_5_4");
  if (!env && !noEnv) env = std::getenv("LUA_CPATH");
  const char* mark = env ? std::strstr(env, LUA_PATH_SEP LUA_PATH_SEP) : nullptr;
  if (!env) {
    lua_pushstring(L, kDefaultCPath);
  } else if (!mark) {
    lua_pushstring(L, env);
  } else {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    if (mark > env) {
      luaL_addlstring(&b, env, size_t(mark - env));
      luaL_addchar(&b, *LUA_PATH_SEP);
    }
    luaL_addstring(&b, kDefaultCPath);
    if (mark[2] != '\0') {
      luaL_addchar(&b, *LUA_PATH_SEP);
      luaL_addstring(&b, mark + 2);
    }
    luaL_pushresult(&b);
  }
}

// registry._CLIBS, made once per State with its closing __gc.
void makeCLibs(lua_State* L) {
  if (luaL_getsubtable(L, LUA_REGISTRYINDEX, kCLibs) == 0) {
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, closeLibraries);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
  }
  lua_pop(L, 1);
}

}  // namespace

int openCLoader(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, LUA_LOADLIBNAME) != LUA_TTABLE) return 0;
  int package = lua_gettop(L);
  makeCLibs(L);
  lua_pushcfunction(L, packageLoadlib);
  lua_setfield(L, package, "loadlib");
  pushCPath(L);
  lua_setfield(L, package, "cpath");
  if (lua_getfield(L, package, "searchers") == LUA_TTABLE) {
    const lua_CFunction searchers[] = {searcherC, searcherCroot};
    for (int i = 0; i < 2; i++) {
      lua_pushvalue(L, package);
      lua_pushcclosure(L, searchers[i], 1);
      lua_rawseti(L, -2, i + 3);
    }
  }
  return 0;
}

bool attachCLoaderMayGC(vm::State& state) {
  if (!attachCApi(state)) return false;
  lua_State* L = luaStateOf(state.mainThread->data);
  int top = lua_gettop(L);
  lua_pushcfunction(L, openCLoader);
  bool ok = lua_pcall(L, 0, 0, 0) == LUA_OK;
  lua_settop(L, top);
  return ok;
}

}  // namespace weft::capi
