// The Lua 5.4 auxiliary library (reference manual §5), written on top of the public
// lua_* API only, as a portable lauxlib is: nothing here knows Weft's internals, so the
// same file runs on Weft's C API and (for testing) on Debian's liblua5.4.
//
// Protocol: any lua_* call may raise a Lua error, which leaves by longjmp
// (docs/design/c-api.md). So no function here holds a C++ object with a destructor across
// a lua_* call, and memory that outlives one call belongs to a Lua value (a buffer's box
// is a userdata with __gc and __close) rather than to a C++ frame.
//
// Messages are Lua 5.4's word for word, since scripts and tests compare them.

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>

extern "C" {
#include "lua.h"
#include "lauxlib.h"
}

namespace {

// ---------------------------------------------------------------------------------------
// Naming functions in messages: the name a function has in package.loaded.

// Searches the table on top of the stack (and its string-keyed subtables, `depth` levels
// deep) for the value at `target`. On success leaves the dotted name above the table.
bool findNameIn(lua_State *L, int target, int depth) {
  if (depth == 0 || lua_type(L, -1) != LUA_TTABLE) return false;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      if (lua_rawequal(L, target, -1)) {
        lua_pop(L, 1);  // the key is the name
        return true;
      }
      if (findNameIn(L, target, depth - 1)) {
        // key, subtable, inner name -> "key.inner"
        lua_pushliteral(L, ".");
        lua_replace(L, -3);
        lua_concat(L, 3);
        return true;
      }
    }
    lua_pop(L, 1);
  }
  return false;
}

// Pushes on L the name under which the function of ar (a level of L1's stack) is
// reachable from package.loaded ("_G." dropped) and returns true, or pushes nothing and
// returns false.
bool pushLoadedName(lua_State *L, lua_State *L1, lua_Debug *ar) {
  int top = lua_gettop(L);
  luaL_checkstack(L1, 1, "not enough stack");
  lua_getinfo(L1, "f", ar);
  lua_xmove(L1, L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  luaL_checkstack(L, 6, "not enough stack");
  if (!findNameIn(L, top + 1, 2)) {
    lua_settop(L, top);
    return false;
  }
  const char *name = lua_tostring(L, -1);
  if (std::strncmp(name, LUA_GNAME ".", 3) == 0) {
    lua_pushstring(L, name + 3);
    lua_remove(L, -2);
  }
  lua_copy(L, -1, top + 1);
  lua_settop(L, top + 1);
  return true;
}

// Pushes on L how a traceback line names the function of ar (a level of L1's stack).
void pushFunctionDescription(lua_State *L, lua_State *L1, lua_Debug *ar) {
  if (pushLoadedName(L, L1, ar)) {
    lua_pushfstring(L, "function '%s'", lua_tostring(L, -1));
    lua_remove(L, -2);
  } else if (*ar->namewhat != '\0') {
    lua_pushfstring(L, "%s '%s'", ar->namewhat, ar->name);
  } else if (*ar->what == 'm') {
    lua_pushliteral(L, "main chunk");
  } else if (*ar->what != 'C') {
    lua_pushfstring(L, "function <%s:%d>", ar->short_src, ar->linedefined);
  } else {
    lua_pushliteral(L, "?");
  }
}

int typeTagError(lua_State *L, int arg, int tag) {
  return luaL_typeerror(L, arg, lua_typename(L, tag));
}

// ---------------------------------------------------------------------------------------
// Traceback.

constexpr int kTracebackHead = 10;  // levels shown before an elision
constexpr int kTracebackTail = 11;  // levels shown after it

// The deepest valid level of L's stack (0 if only the running function).
int deepestLevel(lua_State *L) {
  lua_Debug ar;
  int known = 1, beyond = 1;
  while (lua_getstack(L, beyond, &ar)) {
    known = beyond;
    beyond *= 2;
  }
  while (known < beyond) {
    int mid = known + (beyond - known) / 2;
    if (lua_getstack(L, mid, &ar))
      known = mid + 1;
    else
      beyond = mid;
  }
  return beyond - 1;
}

// ---------------------------------------------------------------------------------------
// Buffers. A buffer's slot holds a light userdata placeholder until its bytes outgrow
// init; then a box (a userdata owning an allocator block, freed by __gc or __close) takes
// the slot and is marked to-be-closed, so an error unwinding past the buffer frees it.

struct Box {
  void *block;
  size_t size;
};

constexpr const char *kBoxMetatable = "_UBOX*";

// Resizes the block of the box at idx (size 0 frees it). Raises a memory error on failure.
void *resizeBox(lua_State *L, int idx, size_t size) {
  void *ud;
  lua_Alloc alloc = lua_getallocf(L, &ud);
  Box *box = static_cast<Box *>(lua_touserdata(L, idx));
  void *block = alloc(ud, box->block, box->size, size);
  if (block == nullptr && size > 0) {
    lua_pushliteral(L, "not enough memory");
    lua_error(L);
  }
  box->block = block;
  box->size = size;
  return block;
}

int releaseBox(lua_State *L) {
  resizeBox(L, 1, 0);
  return 0;
}

void pushNewBox(lua_State *L) {
  Box *box = static_cast<Box *>(lua_newuserdatauv(L, sizeof(Box), 0));
  box->block = nullptr;
  box->size = 0;
  if (luaL_newmetatable(L, kBoxMetatable)) {
    lua_pushcfunction(L, releaseBox);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, releaseBox);
    lua_setfield(L, -2, "__close");
  }
  lua_setmetatable(L, -2);
}

bool isBoxed(const luaL_Buffer *B) { return B->b != B->init.b; }

// The largest buffer: a Lua string's length must fit a lua_Integer and a size_t.
constexpr size_t kMaxBufferSize = sizeof(size_t) < sizeof(lua_Integer)
                                      ? SIZE_MAX
                                      : static_cast<size_t>(LUA_MAXINTEGER);

// The capacity after growing B for `extra` more bytes: 1.5 times the old one, or just
// enough if that is more.
size_t grownSize(luaL_Buffer *B, size_t extra) {
  if (extra > kMaxBufferSize - B->n) luaL_error(B->L, "buffer too large");
  size_t size = (B->size / 2) * 3;
  if (size < B->n + extra) size = B->n + extra;
  return size;
}

// Makes room for `extra` bytes; boxIdx is where B's slot is (relative to the top).
char *reserve(luaL_Buffer *B, size_t extra, int boxIdx) {
  if (B->size - B->n >= extra) return B->b + B->n;
  lua_State *L = B->L;
  size_t size = grownSize(B, extra);
  char *bytes;
  if (isBoxed(B)) {
    bytes = static_cast<char *>(resizeBox(L, boxIdx, size));
  } else {
    lua_remove(L, boxIdx);  // the placeholder
    pushNewBox(L);
    lua_insert(L, boxIdx);
    lua_toclose(L, boxIdx);
    bytes = static_cast<char *>(resizeBox(L, boxIdx, size));
    std::memcpy(bytes, B->b, B->n);
  }
  B->b = bytes;
  B->size = size;
  return bytes + B->n;
}

// ---------------------------------------------------------------------------------------
// References. Free references form a list threaded through the table: t[kFreeList]
// holds the first free one (0 when none), and each free t[ref] holds the next. The head
// sits just past the registry's predefined entries (LUA_RIDX_LAST), so references in the
// registry never meet them; it is created on first use.

constexpr int kFreeList = LUA_RIDX_LAST + 1;

// Pushes nothing; returns the first free reference of t (0 if none), creating the list.
int firstFreeRef(lua_State *L, int t) {
  if (lua_rawgeti(L, t, kFreeList) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushinteger(L, 0);
    lua_rawseti(L, t, kFreeList);
    return 0;
  }
  int ref = static_cast<int>(lua_tointeger(L, -1));
  lua_pop(L, 1);
  return ref;
}

// ---------------------------------------------------------------------------------------
// Loading.

struct FileReader {
  FILE *file;
  int pending;  // bytes already in buf, delivered before reading on
  char buf[BUFSIZ];
};

const char *readFile(lua_State *, void *data, size_t *size) {
  FileReader *r = static_cast<FileReader *>(data);
  if (r->pending > 0) {
    *size = static_cast<size_t>(r->pending);
    r->pending = 0;
    return r->buf;
  }
  if (std::feof(r->file)) return nullptr;
  *size = std::fread(r->buf, 1, sizeof r->buf, r->file);
  return r->buf;
}

struct StringReader {
  const char *bytes;
  size_t size;
};

const char *readString(lua_State *, void *data, size_t *size) {
  StringReader *r = static_cast<StringReader *>(data);
  if (r->size == 0) return nullptr;
  *size = r->size;
  r->size = 0;
  return r->bytes;
}

// Replaces the chunk name at nameIdx ("@file") with "cannot <what> file[: reason]".
int fileError(lua_State *L, const char *what, int nameIdx, int err) {
  const char *file = lua_tostring(L, nameIdx) + 1;
  if (err != 0)
    lua_pushfstring(L, "cannot %s %s: %s", what, file, std::strerror(err));
  else
    lua_pushfstring(L, "cannot %s %s", what, file);
  lua_remove(L, nameIdx);
  return LUA_ERRFILE;
}

// Reads the start of the file: a UTF-8 byte-order mark is dropped (an incomplete one is
// kept as text), and a first line starting with '#' is skipped. Returns whether a line
// was skipped; *first is the first character after what was dropped (or EOF). Bytes
// read but not dropped are left in r->buf.
bool skipPrefix(FileReader *r, int *first) {
  static const unsigned char kBom[] = {0xEF, 0xBB, 0xBF};
  r->pending = 0;
  int c = std::getc(r->file);
  for (size_t i = 0; i < sizeof kBom && c == kBom[i]; ++i) {
    r->buf[r->pending++] = static_cast<char>(c);
    c = std::getc(r->file);
  }
  if (r->pending == static_cast<int>(sizeof kBom)) r->pending = 0;
  if (r->pending == 0 && c == '#') {
    do c = std::getc(r->file);
    while (c != EOF && c != '\n');
    *first = std::getc(r->file);
    return true;
  }
  *first = c;
  return false;
}

// ---------------------------------------------------------------------------------------
// The default allocator, panic and warning functions of luaL_newstate.

void *allocateWithMalloc(void *, void *block, size_t, size_t size) {
  if (size == 0) {
    std::free(block);
    return nullptr;
  }
  return std::realloc(block, size);
}

int panicToStderr(lua_State *L) {
  const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                   : "error object is not a string";
  lua_writestringerror("PANIC: unprotected error in call to Lua API (%s)\n", msg);
  return 0;
}

void warnOff(void *ud, const char *msg, int tocont);
void warnOn(void *ud, const char *msg, int tocont);
void warnContinued(void *ud, const char *msg, int tocont);

// "@on" and "@off" (a whole message starting with '@') switch warnings; other control
// messages are ignored.
bool isWarnControl(lua_State *L, const char *msg, int tocont) {
  if (tocont || msg[0] != '@') return false;
  if (std::strcmp(msg + 1, "off") == 0)
    lua_setwarnf(L, warnOff, L);
  else if (std::strcmp(msg + 1, "on") == 0)
    lua_setwarnf(L, warnOn, L);
  return true;
}

void warnOff(void *ud, const char *msg, int tocont) {
  isWarnControl(static_cast<lua_State *>(ud), msg, tocont);
}

void warnContinued(void *ud, const char *msg, int tocont) {
  lua_State *L = static_cast<lua_State *>(ud);
  lua_writestringerror("%s", msg);
  if (tocont) {
    lua_setwarnf(L, warnContinued, L);
  } else {
    lua_writestringerror("%s", "\n");
    lua_setwarnf(L, warnOn, L);
  }
}

void warnOn(void *ud, const char *msg, int tocont) {
  if (isWarnControl(static_cast<lua_State *>(ud), msg, tocont)) return;
  lua_writestringerror("%s", "Lua warning: ");
  warnContinued(ud, msg, tocont);
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------------------------------
// Errors.

LUALIB_API void luaL_where(lua_State *L, int level) {
  lua_Debug ar;
  if (lua_getstack(L, level, &ar)) {
    lua_getinfo(L, "Sl", &ar);
    if (ar.currentline > 0) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
  }
  lua_pushliteral(L, "");
}

LUALIB_API int luaL_error(lua_State *L, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  luaL_where(L, 1);
  lua_pushvfstring(L, fmt, args);
  va_end(args);
  lua_concat(L, 2);
  return lua_error(L);
}

LUALIB_API int luaL_argerror(lua_State *L, int arg, const char *extramsg) {
  lua_Debug ar;
  if (!lua_getstack(L, 0, &ar)) return luaL_error(L, "bad argument #%d (%s)", arg, extramsg);
  lua_getinfo(L, "n", &ar);
  if (ar.namewhat != nullptr && std::strcmp(ar.namewhat, "method") == 0) {
    --arg;  // self is not counted
    if (arg == 0) return luaL_error(L, "calling '%s' on bad self (%s)", ar.name, extramsg);
  }
  const char *name = ar.name;
  if (name == nullptr) name = pushLoadedName(L, L, &ar) ? lua_tostring(L, -1) : "?";
  return luaL_error(L, "bad argument #%d to '%s' (%s)", arg, name, extramsg);
}

LUALIB_API int luaL_typeerror(lua_State *L, int arg, const char *tname) {
  const char *actual;
  if (luaL_getmetafield(L, arg, "__name") == LUA_TSTRING)
    actual = lua_tostring(L, -1);
  else if (lua_type(L, arg) == LUA_TLIGHTUSERDATA)
    actual = "light userdata";
  else
    actual = luaL_typename(L, arg);
  return luaL_argerror(L, arg, lua_pushfstring(L, "%s expected, got %s", tname, actual));
}

LUALIB_API void luaL_checkversion_(lua_State *L, lua_Number ver, size_t sz) {
  lua_Number core = lua_version(L);
  if (sz != LUAL_NUMSIZES)
    luaL_error(L, "core and library have incompatible numeric types");
  else if (core != ver)
    luaL_error(L, "version mismatch: app. needs %f, Lua core provides %f",
               static_cast<LUAI_UACNUMBER>(ver), static_cast<LUAI_UACNUMBER>(core));
}

LUALIB_API int luaL_fileresult(lua_State *L, int stat, const char *fname) {
  int err = errno;  // before any call that might change it
  if (stat) {
    lua_pushboolean(L, 1);
    return 1;
  }
  luaL_pushfail(L);
  if (fname != nullptr)
    lua_pushfstring(L, "%s: %s", fname, std::strerror(err));
  else
    lua_pushstring(L, std::strerror(err));
  lua_pushinteger(L, err);
  return 3;
}

LUALIB_API int luaL_execresult(lua_State *L, int stat) {
  if (stat != 0 && errno != 0) return luaL_fileresult(L, 0, nullptr);
  const char *what = "exit";
  if (WIFEXITED(stat)) {
    stat = WEXITSTATUS(stat);
  } else if (WIFSIGNALED(stat)) {
    stat = WTERMSIG(stat);
    what = "signal";
  }
  if (what[0] == 'e' && stat == 0)
    lua_pushboolean(L, 1);
  else
    luaL_pushfail(L);
  lua_pushstring(L, what);
  lua_pushinteger(L, stat);
  return 3;
}

// ---------------------------------------------------------------------------------------
// Metatables and userdata.

LUALIB_API int luaL_newmetatable(lua_State *L, const char *tname) {
  if (luaL_getmetatable(L, tname) != LUA_TNIL) return 0;
  lua_pop(L, 1);
  lua_createtable(L, 0, 2);
  lua_pushstring(L, tname);
  lua_setfield(L, -2, "__name");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, tname);
  return 1;
}

LUALIB_API void luaL_setmetatable(lua_State *L, const char *tname) {
  luaL_getmetatable(L, tname);
  lua_setmetatable(L, -2);
}

LUALIB_API void *luaL_testudata(lua_State *L, int ud, const char *tname) {
  void *p = lua_touserdata(L, ud);
  if (p == nullptr || !lua_getmetatable(L, ud)) return nullptr;
  luaL_getmetatable(L, tname);
  if (!lua_rawequal(L, -1, -2)) p = nullptr;
  lua_pop(L, 2);
  return p;
}

LUALIB_API void *luaL_checkudata(lua_State *L, int ud, const char *tname) {
  void *p = luaL_testudata(L, ud, tname);
  luaL_argexpected(L, p != nullptr, ud, tname);
  return p;
}

LUALIB_API int luaL_getmetafield(lua_State *L, int obj, const char *e) {
  if (!lua_getmetatable(L, obj)) return LUA_TNIL;
  lua_pushstring(L, e);
  int type = lua_rawget(L, -2);
  if (type == LUA_TNIL)
    lua_pop(L, 2);
  else
    lua_remove(L, -2);
  return type;
}

LUALIB_API int luaL_callmeta(lua_State *L, int obj, const char *e) {
  obj = lua_absindex(L, obj);
  if (luaL_getmetafield(L, obj, e) == LUA_TNIL) return 0;
  lua_pushvalue(L, obj);
  lua_call(L, 1, 1);
  return 1;
}

// ---------------------------------------------------------------------------------------
// Arguments.

LUALIB_API void luaL_checkstack(lua_State *L, int space, const char *msg) {
  if (lua_checkstack(L, space)) return;
  if (msg != nullptr)
    luaL_error(L, "stack overflow (%s)", msg);
  else
    luaL_error(L, "stack overflow");
}

LUALIB_API void luaL_checktype(lua_State *L, int arg, int t) {
  if (lua_type(L, arg) != t) typeTagError(L, arg, t);
}

LUALIB_API void luaL_checkany(lua_State *L, int arg) {
  if (lua_type(L, arg) == LUA_TNONE) luaL_argerror(L, arg, "value expected");
}

LUALIB_API const char *luaL_checklstring(lua_State *L, int arg, size_t *len) {
  const char *s = lua_tolstring(L, arg, len);
  if (s == nullptr) typeTagError(L, arg, LUA_TSTRING);
  return s;
}

LUALIB_API const char *luaL_optlstring(lua_State *L, int arg, const char *def, size_t *len) {
  if (!lua_isnoneornil(L, arg)) return luaL_checklstring(L, arg, len);
  if (len != nullptr) *len = def != nullptr ? std::strlen(def) : 0;
  return def;
}

LUALIB_API lua_Number luaL_checknumber(lua_State *L, int arg) {
  int isnum;
  lua_Number n = lua_tonumberx(L, arg, &isnum);
  if (!isnum) typeTagError(L, arg, LUA_TNUMBER);
  return n;
}

LUALIB_API lua_Number luaL_optnumber(lua_State *L, int arg, lua_Number def) {
  return luaL_opt(L, luaL_checknumber, arg, def);
}

LUALIB_API lua_Integer luaL_checkinteger(lua_State *L, int arg) {
  int isnum;
  lua_Integer i = lua_tointegerx(L, arg, &isnum);
  if (!isnum) {
    if (lua_isnumber(L, arg))
      luaL_argerror(L, arg, "number has no integer representation");
    else
      typeTagError(L, arg, LUA_TNUMBER);
  }
  return i;
}

LUALIB_API lua_Integer luaL_optinteger(lua_State *L, int arg, lua_Integer def) {
  return luaL_opt(L, luaL_checkinteger, arg, def);
}

LUALIB_API int luaL_checkoption(lua_State *L, int arg, const char *def, const char *const lst[]) {
  const char *name = def != nullptr ? luaL_optstring(L, arg, def) : luaL_checkstring(L, arg);
  for (int i = 0; lst[i] != nullptr; ++i)
    if (std::strcmp(lst[i], name) == 0) return i;
  return luaL_argerror(L, arg, lua_pushfstring(L, "invalid option '%s'", name));
}

// ---------------------------------------------------------------------------------------
// Buffers.

LUALIB_API void luaL_buffinit(lua_State *L, luaL_Buffer *B) {
  B->L = L;
  B->b = B->init.b;
  B->n = 0;
  B->size = LUAL_BUFFERSIZE;
  lua_pushlightuserdata(L, static_cast<void *>(B));
}

LUALIB_API char *luaL_buffinitsize(lua_State *L, luaL_Buffer *B, size_t sz) {
  luaL_buffinit(L, B);
  return reserve(B, sz, -1);
}

LUALIB_API char *luaL_prepbuffsize(luaL_Buffer *B, size_t sz) { return reserve(B, sz, -1); }

LUALIB_API void luaL_addlstring(luaL_Buffer *B, const char *s, size_t l) {
  if (l == 0) return;  // s may be NULL then
  std::memcpy(reserve(B, l, -1), s, l);
  luaL_addsize(B, l);
}

LUALIB_API void luaL_addstring(luaL_Buffer *B, const char *s) {
  luaL_addlstring(B, s, std::strlen(s));
}

LUALIB_API void luaL_addvalue(luaL_Buffer *B) {
  lua_State *L = B->L;
  size_t len = 0;
  const char *s = lua_tolstring(L, -1, &len);
  if (s != nullptr && len > 0) {
    std::memcpy(reserve(B, len, -2), s, len);
    luaL_addsize(B, len);
  }
  lua_pop(L, 1);
}

LUALIB_API void luaL_pushresult(luaL_Buffer *B) {
  lua_State *L = B->L;
  lua_pushlstring(L, B->b, B->n);
  if (isBoxed(B)) lua_closeslot(L, -2);
  lua_remove(L, -2);
}

LUALIB_API void luaL_pushresultsize(luaL_Buffer *B, size_t sz) {
  luaL_addsize(B, sz);
  luaL_pushresult(B);
}

LUALIB_API void luaL_addgsub(luaL_Buffer *b, const char *s, const char *p, const char *r) {
  size_t plen = std::strlen(p);
  if (plen > 0) {  // an empty pattern would match forever
    const char *hit;
    while ((hit = std::strstr(s, p)) != nullptr) {
      luaL_addlstring(b, s, static_cast<size_t>(hit - s));
      luaL_addstring(b, r);
      s = hit + plen;
    }
  }
  luaL_addstring(b, s);
}

LUALIB_API const char *luaL_gsub(lua_State *L, const char *s, const char *p, const char *r) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addgsub(&b, s, p, r);
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

// ---------------------------------------------------------------------------------------
// References (kFreeList above).

LUALIB_API int luaL_ref(lua_State *L, int t) {
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return LUA_REFNIL;
  }
  t = lua_absindex(L, t);
  int ref = firstFreeRef(L, t);
  if (ref != 0) {
    lua_rawgeti(L, t, ref);  // unlink it: t[kFreeList] = t[ref]
    lua_rawseti(L, t, kFreeList);
  } else {
    ref = static_cast<int>(lua_rawlen(L, t)) + 1;
  }
  lua_rawseti(L, t, ref);
  return ref;
}

LUALIB_API void luaL_unref(lua_State *L, int t, int ref) {
  if (ref < 0) return;
  t = lua_absindex(L, t);
  lua_rawgeti(L, t, kFreeList);  // t[ref] = t[kFreeList]; t[kFreeList] = ref
  lua_rawseti(L, t, ref);
  lua_pushinteger(L, ref);
  lua_rawseti(L, t, kFreeList);
}

// ---------------------------------------------------------------------------------------
// Loading chunks.

LUALIB_API int luaL_loadfilex(lua_State *L, const char *filename, const char *mode) {
  FileReader r;
  int nameIdx = lua_gettop(L) + 1;
  if (filename == nullptr) {
    lua_pushliteral(L, "=stdin");
    r.file = stdin;
  } else {
    lua_pushfstring(L, "@%s", filename);
    errno = 0;
    r.file = std::fopen(filename, "r");
    if (r.file == nullptr) return fileError(L, "open", nameIdx, errno);
  }
  int first;
  if (skipPrefix(&r, &first)) r.buf[r.pending++] = '\n';  // keeps line numbers right
  if (first == LUA_SIGNATURE[0]) {  // a binary chunk: read it untranslated
    r.pending = 0;
    if (filename != nullptr) {
      errno = 0;
      r.file = std::freopen(filename, "rb", r.file);
      if (r.file == nullptr) return fileError(L, "reopen", nameIdx, errno);
      skipPrefix(&r, &first);
    }
  }
  if (first != EOF) r.buf[r.pending++] = static_cast<char>(first);
  errno = 0;
  int status = lua_load(L, readFile, &r, lua_tostring(L, -1), mode);
  bool failed = std::ferror(r.file) != 0;
  int readErr = errno;
  if (filename != nullptr) std::fclose(r.file);
  if (failed) {
    lua_settop(L, nameIdx);
    return fileError(L, "read", nameIdx, readErr);
  }
  lua_remove(L, nameIdx);
  return status;
}

LUALIB_API int luaL_loadbufferx(lua_State *L, const char *buff, size_t sz, const char *name,
                                const char *mode) {
  StringReader r{buff, sz};
  return lua_load(L, readString, &r, name, mode);
}

LUALIB_API int luaL_loadstring(lua_State *L, const char *s) {
  return luaL_loadbuffer(L, s, std::strlen(s), s);
}

// ---------------------------------------------------------------------------------------
// Tables, modules, strings.

LUALIB_API lua_Integer luaL_len(lua_State *L, int idx) {
  int isnum;
  lua_len(L, idx);
  lua_Integer n = lua_tointegerx(L, -1, &isnum);
  if (!isnum) luaL_error(L, "object length is not an integer");
  lua_pop(L, 1);
  return n;
}

LUALIB_API const char *luaL_tolstring(lua_State *L, int idx, size_t *len) {
  idx = lua_absindex(L, idx);
  if (luaL_callmeta(L, idx, "__tostring")) {
    if (!lua_isstring(L, -1)) luaL_error(L, "'__tostring' must return a string");
    return lua_tolstring(L, -1, len);
  }
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx))
        lua_pushfstring(L, "%I", static_cast<LUAI_UACINT>(lua_tointeger(L, idx)));
      else
        lua_pushfstring(L, "%f", static_cast<LUAI_UACNUMBER>(lua_tonumber(L, idx)));
      break;
    case LUA_TSTRING:
      lua_pushvalue(L, idx);
      break;
    case LUA_TBOOLEAN:
      lua_pushstring(L, lua_toboolean(L, idx) ? "true" : "false");
      break;
    case LUA_TNIL:
      lua_pushliteral(L, "nil");
      break;
    default: {
      int nameType = luaL_getmetafield(L, idx, "__name");
      const char *kind = nameType == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, idx);
      lua_pushfstring(L, "%s: %p", kind, lua_topointer(L, idx));
      if (nameType != LUA_TNIL) lua_remove(L, -2);
      break;
    }
  }
  return lua_tolstring(L, -1, len);
}

LUALIB_API void luaL_setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
  luaL_checkstack(L, nup, "too many upvalues");
  for (; l->name != nullptr; ++l) {
    if (l->func == nullptr) {
      lua_pushboolean(L, 0);  // a placeholder field
    } else {
      for (int i = 0; i < nup; ++i) lua_pushvalue(L, -nup);
      lua_pushcclosure(L, l->func, nup);
    }
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
}

LUALIB_API int luaL_getsubtable(lua_State *L, int idx, const char *fname) {
  if (lua_getfield(L, idx, fname) == LUA_TTABLE) return 1;
  lua_pop(L, 1);
  idx = lua_absindex(L, idx);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, idx, fname);
  return 0;
}

LUALIB_API void luaL_requiref(lua_State *L, const char *modname, lua_CFunction openf, int glb) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, modname);
  if (!lua_toboolean(L, -1)) {
    lua_pop(L, 1);
    lua_pushcfunction(L, openf);
    lua_pushstring(L, modname);
    lua_call(L, 1, 1);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, modname);
  }
  lua_remove(L, -2);  // the loaded table
  if (glb) {
    lua_pushvalue(L, -1);
    lua_setglobal(L, modname);
  }
}

LUALIB_API void luaL_traceback(lua_State *L, lua_State *L1, const char *msg, int level) {
  luaL_Buffer b;
  lua_Debug ar;
  int last = deepestLevel(L1);
  int untilElision = last - level > kTracebackHead + kTracebackTail ? kTracebackHead : -1;
  luaL_buffinit(L, &b);
  if (msg != nullptr) {
    luaL_addstring(&b, msg);
    luaL_addchar(&b, '\n');
  }
  luaL_addstring(&b, "stack traceback:");
  while (lua_getstack(L1, level++, &ar)) {
    if (untilElision-- == 0) {
      int skipped = last - level - kTracebackTail + 1;
      lua_pushfstring(L, "\n\t...\t(skipping %d levels)", skipped);
      luaL_addvalue(&b);
      level += skipped;
      continue;
    }
    lua_getinfo(L1, "Slnt", &ar);
    if (ar.currentline <= 0)
      lua_pushfstring(L, "\n\t%s: in ", ar.short_src);
    else
      lua_pushfstring(L, "\n\t%s:%d: in ", ar.short_src, ar.currentline);
    luaL_addvalue(&b);
    pushFunctionDescription(L, L1, &ar);
    luaL_addvalue(&b);
    if (ar.istailcall) luaL_addstring(&b, "\n\t(...tail calls...)");
  }
  luaL_pushresult(&b);
}

// ---------------------------------------------------------------------------------------
// States.

LUALIB_API lua_State *luaL_newstate(void) {
  lua_State *L = lua_newstate(allocateWithMalloc, nullptr);
  if (L != nullptr) {
    lua_atpanic(L, panicToStderr);
    lua_setwarnf(L, warnOff, L);
  }
  return L;
}

}  // extern "C"
