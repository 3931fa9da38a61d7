/*
** lauxlib.h: Weft's declaration of the Lua 5.4 auxiliary library (reference manual §5).
**
** Written for Weft from the manual. Every name, macro, constant and structure layout is
** Lua 5.4's, so that C code written for Lua 5.4 compiles unchanged and a module built
** against Lua 5.4's headers runs against Weft's library (binary compatibility):
**   - luaL_Buffer is {b, size, n, L, init} with init a union of LUAI_MAXALIGN and
**     LUAL_BUFFERSIZE bytes (1024 on x86_64), since the buffer macros below touch its
**     fields directly and modules allocate it on their own C stack;
**   - luaL_Stream is {f, closef}, as the io library and modules that make files share it;
**   - luaL_checkversion passes LUA_VERSION_NUM and LUAL_NUMSIZES, which the library
**     compares with its own.
** Every function is implemented on top of the public lua_* API only
** (runtime/capi/lauxlib.cpp).
*/
#ifndef lauxlib_h
#define lauxlib_h

#include <stddef.h>
#include <stdio.h>

#include "lua.h"

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(LUALIB_API)
#define LUALIB_API LUA_API
#endif

#if !defined(luai_likely)
#define luai_likely(x) (x)
#endif

typedef struct luaL_Buffer luaL_Buffer;

/* The global table's name in the loaded-modules table. */
#define LUA_GNAME "_G"

/* luaL_loadfilex's status when the file cannot be opened or read. */
#define LUA_ERRFILE (LUA_ERRERR + 1)

/* Registry keys of the loaded-modules table and of the preload table. */
#define LUA_LOADED_TABLE "_LOADED"
#define LUA_PRELOAD_TABLE "_PRELOAD"

/* A function entry for luaL_setfuncs and luaL_newlib; the list ends with {NULL, NULL}. */
typedef struct luaL_Reg {
  const char *name;
  lua_CFunction func;
} luaL_Reg;

/* The sizes of the numeric types, checked by luaL_checkversion. */
#define LUAL_NUMSIZES (sizeof(lua_Integer) * 16 + sizeof(lua_Number))

LUALIB_API void(luaL_checkversion_)(lua_State *L, lua_Number ver, size_t sz);
#define luaL_checkversion(L) luaL_checkversion_(L, LUA_VERSION_NUM, LUAL_NUMSIZES)

LUALIB_API int(luaL_getmetafield)(lua_State *L, int obj, const char *e);
LUALIB_API int(luaL_callmeta)(lua_State *L, int obj, const char *e);
LUALIB_API const char *(luaL_tolstring)(lua_State *L, int idx, size_t *len);
LUALIB_API int(luaL_argerror)(lua_State *L, int arg, const char *extramsg);
LUALIB_API int(luaL_typeerror)(lua_State *L, int arg, const char *tname);
LUALIB_API const char *(luaL_checklstring)(lua_State *L, int arg, size_t *l);
LUALIB_API const char *(luaL_optlstring)(lua_State *L, int arg, const char *def, size_t *l);
LUALIB_API lua_Number(luaL_checknumber)(lua_State *L, int arg);
LUALIB_API lua_Number(luaL_optnumber)(lua_State *L, int arg, lua_Number def);
LUALIB_API lua_Integer(luaL_checkinteger)(lua_State *L, int arg);
LUALIB_API lua_Integer(luaL_optinteger)(lua_State *L, int arg, lua_Integer def);

LUALIB_API void(luaL_checkstack)(lua_State *L, int sz, const char *msg);
LUALIB_API void(luaL_checktype)(lua_State *L, int arg, int t);
LUALIB_API void(luaL_checkany)(lua_State *L, int arg);

LUALIB_API int(luaL_newmetatable)(lua_State *L, const char *tname);
LUALIB_API void(luaL_setmetatable)(lua_State *L, const char *tname);
LUALIB_API void *(luaL_testudata)(lua_State *L, int ud, const char *tname);
LUALIB_API void *(luaL_checkudata)(lua_State *L, int ud, const char *tname);

LUALIB_API void(luaL_where)(lua_State *L, int lvl);
LUALIB_API int(luaL_error)(lua_State *L, const char *fmt, ...);

LUALIB_API int(luaL_checkoption)(lua_State *L, int arg, const char *def, const char *const lst[]);

LUALIB_API int(luaL_fileresult)(lua_State *L, int stat, const char *fname);
LUALIB_API int(luaL_execresult)(lua_State *L, int stat);

/* References (luaL_ref): never a valid reference; the reference of nil. */
#define LUA_NOREF (-2)
#define LUA_REFNIL (-1)

LUALIB_API int(luaL_ref)(lua_State *L, int t);
LUALIB_API void(luaL_unref)(lua_State *L, int t, int ref);

LUALIB_API int(luaL_loadfilex)(lua_State *L, const char *filename, const char *mode);
#define luaL_loadfile(L, f) luaL_loadfilex(L, f, NULL)

LUALIB_API int(luaL_loadbufferx)(lua_State *L, const char *buff, size_t sz, const char *name,
                                 const char *mode);
LUALIB_API int(luaL_loadstring)(lua_State *L, const char *s);

LUALIB_API lua_State *(luaL_newstate)(void);

LUALIB_API lua_Integer(luaL_len)(lua_State *L, int idx);

LUALIB_API void(luaL_addgsub)(luaL_Buffer *b, const char *s, const char *p, const char *r);
LUALIB_API const char *(luaL_gsub)(lua_State *L, const char *s, const char *p, const char *r);

LUALIB_API void(luaL_setfuncs)(lua_State *L, const luaL_Reg *l, int nup);
LUALIB_API int(luaL_getsubtable)(lua_State *L, int idx, const char *fname);
LUALIB_API void(luaL_traceback)(lua_State *L, lua_State *L1, const char *msg, int level);
LUALIB_API void(luaL_requiref)(lua_State *L, const char *modname, lua_CFunction openf, int glb);

/* Convenience macros (manual §5.1). */
#define luaL_newlibtable(L, l) lua_createtable(L, 0, sizeof(l) / sizeof((l)[0]) - 1)
#define luaL_newlib(L, l) (luaL_checkversion(L), luaL_newlibtable(L, l), luaL_setfuncs(L, l, 0))

#define luaL_argcheck(L, cond, arg, extramsg) \
  ((void)(luai_likely(cond) || luaL_argerror(L, (arg), (extramsg))))
#define luaL_argexpected(L, cond, arg, tname) \
  ((void)(luai_likely(cond) || luaL_typeerror(L, (arg), (tname))))

#define luaL_checkstring(L, n) (luaL_checklstring(L, (n), NULL))
#define luaL_optstring(L, n, d) (luaL_optlstring(L, (n), (d), NULL))

#define luaL_typename(L, i) lua_typename(L, lua_type(L, (i)))

#define luaL_dofile(L, fn) (luaL_loadfile(L, fn) || lua_pcall(L, 0, LUA_MULTRET, 0))
#define luaL_dostring(L, s) (luaL_loadstring(L, s) || lua_pcall(L, 0, LUA_MULTRET, 0))

#define luaL_getmetatable(L, n) (lua_getfield(L, LUA_REGISTRYINDEX, (n)))

#define luaL_opt(L, f, n, d) (lua_isnoneornil(L, (n)) ? (d) : f(L, (n)))

#define luaL_loadbuffer(L, s, sz, n) luaL_loadbufferx(L, s, sz, n, NULL)

/* Integer arithmetic that wraps around, done on unsigned values to avoid overflow. */
#define luaL_intop(op, v1, v2) ((lua_Integer)((lua_Unsigned)(v1)op(lua_Unsigned)(v2)))

/* The value a library function returns to signal failure. */
#define luaL_pushfail(L) lua_pushnil(L)

/* Assertions for debugging builds of C code (no-ops unless LUAI_ASSERT is defined). */
#if !defined(lua_assert)
#if defined LUAI_ASSERT
#include <assert.h>
#define lua_assert(c) assert(c)
#else
#define lua_assert(c) ((void)0)
#endif
#endif

/*
** String buffers (manual §5.1, luaL_Buffer). A buffer starts in 'init', inside the
** structure; when it outgrows it, the bytes move to a block owned by a userdata (the
** "box") that the buffer keeps on the Lua stack, so an error while building releases
** them. While a buffer is in use it owns one stack slot (a placeholder or the box):
** code may push values above it but must pop them before the next buffer call.
*/
#if !defined(LUAL_BUFFERSIZE)
#define LUAL_BUFFERSIZE ((int)(16 * sizeof(void *) * sizeof(lua_Number)))
#endif

#if !defined(LUAI_MAXALIGN)
#define LUAI_MAXALIGN \
  lua_Number n;       \
  double u;           \
  void *s;            \
  lua_Integer i;      \
  long l
#endif

struct luaL_Buffer {
  char *b;     /* the bytes: init.b or the box's block */
  size_t size; /* capacity of b */
  size_t n;    /* bytes in use */
  lua_State *L;
  union {
    LUAI_MAXALIGN; /* aligns the initial bytes for any use */
    char b[LUAL_BUFFERSIZE];
  } init;
};

#define luaL_bufflen(bf) ((bf)->n)
#define luaL_buffaddr(bf) ((bf)->b)

#define luaL_addchar(B, c)                                        \
  ((void)((B)->n < (B)->size || luaL_prepbuffsize((B), 1)), \
   ((B)->b[(B)->n++] = (c)))

#define luaL_addsize(B, s) ((B)->n += (s))
#define luaL_buffsub(B, s) ((B)->n -= (s))

LUALIB_API void(luaL_buffinit)(lua_State *L, luaL_Buffer *B);
LUALIB_API char *(luaL_prepbuffsize)(luaL_Buffer *B, size_t sz);
LUALIB_API void(luaL_addlstring)(luaL_Buffer *B, const char *s, size_t l);
LUALIB_API void(luaL_addstring)(luaL_Buffer *B, const char *s);
LUALIB_API void(luaL_addvalue)(luaL_Buffer *B);
LUALIB_API void(luaL_pushresult)(luaL_Buffer *B);
LUALIB_API void(luaL_pushresultsize)(luaL_Buffer *B, size_t sz);
LUALIB_API char *(luaL_buffinitsize)(lua_State *L, luaL_Buffer *B, size_t sz);

#define luaL_prepbuffer(B) luaL_prepbuffsize(B, LUAL_BUFFERSIZE)

/*
** File handles of the io library: a full userdata whose metatable is registered under
** LUA_FILEHANDLE and whose payload starts with a luaL_Stream. closef is NULL once the
** handle is closed.
*/
#define LUA_FILEHANDLE "FILE*"

typedef struct luaL_Stream {
  FILE *f;              /* the stream, or NULL for an incompletely created handle */
  lua_CFunction closef; /* closes the stream; NULL when closed */
} luaL_Stream;

/* Where the standalone interpreter and the libraries write (overridable before inclusion). */
#if !defined(lua_writestring)
#define lua_writestring(s, l) fwrite((s), sizeof(char), (l), stdout)
#endif

#if !defined(lua_writeline)
#define lua_writeline() (lua_writestring("\n", 1), fflush(stdout))
#endif

#if !defined(lua_writestringerror)
#define lua_writestringerror(s, p) (fprintf(stderr, (s), (p)), fflush(stderr))
#endif

/* Conversions of Lua 5.2, kept when LUA_COMPAT_APIINTCASTS is defined. */
#if defined(LUA_COMPAT_APIINTCASTS)
#define luaL_checkunsigned(L, a) ((lua_Unsigned)luaL_checkinteger(L, a))
#define luaL_optunsigned(L, a, d) ((lua_Unsigned)luaL_optinteger(L, a, (lua_Integer)(d)))
#define luaL_checkint(L, n) ((int)luaL_checkinteger(L, (n)))
#define luaL_optint(L, n, d) ((int)luaL_optinteger(L, (n), (d)))
#define luaL_checklong(L, n) ((long)luaL_checkinteger(L, (n)))
#define luaL_optlong(L, n, d) ((long)luaL_optinteger(L, (n), (d)))
#endif

#ifdef __cplusplus
}
#endif

#endif
