/*
** luaconf.h: Weft's build configuration for the Lua 5.4 C API.
**
** Weft is binary-compatible with a stock 64-bit Lua 5.4 (as Debian builds it): 64-bit
** integers (long long), double floats, the same stack limit and the same sizes of every
** public struct. Changing any value here breaks loading C modules compiled for lua5.4.
** Written for Weft from the Lua 5.4 reference manual.
*/
#ifndef luaconf_h
#define luaconf_h

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* The stack can grow to this many slots; LUA_REGISTRYINDEX lies beyond it. */
#define LUAI_MAXSTACK 1000000

/* Size of lua_Debug.short_src and of chunk-name abbreviations. */
#define LUA_IDSIZE 60

/* Bytes of raw memory in front of every lua_State (lua_getextraspace). */
#define LUA_EXTRASPACE (sizeof(void *))

/* Platform selection flags (kept for modules that test them). */
#if defined(__linux__) && !defined(LUA_USE_LINUX)
#define LUA_USE_LINUX
#endif
#if defined(LUA_USE_LINUX)
#define LUA_USE_POSIX
#define LUA_USE_DLOPEN
#endif

#define LUAI_IS32INT ((UINT_MAX >> 30) >= 3)

/* Number types: selection constants and the choice this build makes. */
#define LUA_INT_INT 1
#define LUA_INT_LONG 2
#define LUA_INT_LONGLONG 3
#define LUA_FLOAT_FLOAT 1
#define LUA_FLOAT_DOUBLE 2
#define LUA_FLOAT_LONGDOUBLE 3
#define LUA_INT_DEFAULT LUA_INT_LONGLONG
#define LUA_FLOAT_DEFAULT LUA_FLOAT_DOUBLE
#define LUA_32BITS 0
#define LUA_C89_NUMBERS 0
#define LUA_INT_TYPE LUA_INT_LONGLONG
#define LUA_FLOAT_TYPE LUA_FLOAT_DOUBLE

/* Search paths (Debian lua5.4's defaults: same directories, same order). */
#define LUA_PATH_SEP ";"
#define LUA_PATH_MARK "?"
#define LUA_EXEC_DIR "!"
#define LUA_VDIR LUA_VERSION_MAJOR "." LUA_VERSION_MINOR
#define LUA_ROOT "/usr/local/"
#define LUA_ROOT2 "/usr/"
#define LUA_LDIR LUA_ROOT "share/lua/" LUA_VDIR "/"
#define LUA_LDIR2 LUA_ROOT2 "share/lua/" LUA_VDIR "/"
#define LUA_CDIR LUA_ROOT "lib/lua/" LUA_VDIR "/"
#define LUA_CDIR2 LUA_ROOT2 "lib/x86_64-linux-gnu/lua/" LUA_VDIR "/"
#define LUA_CDIR3 LUA_ROOT2 "lib/lua/" LUA_VDIR "/"
#if !defined(LUA_PATH_DEFAULT)
#define LUA_PATH_DEFAULT                                                    \
  LUA_LDIR "?.lua;" LUA_LDIR "?/init.lua;" LUA_CDIR "?.lua;" LUA_CDIR       \
           "?/init.lua;" LUA_LDIR2 "?.lua;" LUA_LDIR2 "?/init.lua;"         \
           "./?.lua;./?/init.lua"
#endif
#if !defined(LUA_CPATH_DEFAULT)
#define LUA_CPATH_DEFAULT                                                   \
  LUA_CDIR "?.so;" LUA_CDIR2 "?.so;" LUA_CDIR3 "?.so;" LUA_CDIR             \
           "loadall.so;./?.so"
#endif
#if !defined(LUA_DIRSEP)
#define LUA_DIRSEP "/"
#endif

/* Linkage of the API. */
#ifdef __cplusplus
#define LUA_API extern "C"
#else
#define LUA_API extern
#endif
#define LUALIB_API LUA_API
#define LUAMOD_API LUA_API
#define LUAI_FUNC extern
#define LUAI_DDEC(dec) LUAI_FUNC dec
#define LUAI_DDEF

/* Compatibility with Lua 5.3 (as the stock build enables). */
#if defined(LUA_COMPAT_5_3)
#define LUA_COMPAT_MATHLIB
#define LUA_COMPAT_APIINTCASTS
#define LUA_COMPAT_LT_LE
#define lua_strlen(L, i) lua_rawlen(L, (i))
#define lua_objlen(L, i) lua_rawlen(L, (i))
#define lua_equal(L, a, b) lua_compare(L, (a), (b), LUA_OPEQ)
#define lua_lessthan(L, a, b) lua_compare(L, (a), (b), LUA_OPLT)
#endif

/* Floats. */
#define LUA_NUMBER double
#define l_floatatt(n) (DBL_##n)
#define LUAI_UACNUMBER double
#define LUA_NUMBER_FRMLEN ""
#define LUA_NUMBER_FMT "%.14g"
#define l_mathop(op) op
#define lua_str2number(s, p) strtod((s), (p))
#define lua_number2str(s, sz, n) \
  l_sprintf((s), sz, LUA_NUMBER_FMT, (LUAI_UACNUMBER)(n))
#define l_floor(x) (l_mathop(floor)(x))
/* Converts a float to an integer when it fits, storing it in *p; yields 0 when not. */
#define lua_numbertointeger(n, p)                       \
  ((n) >= (LUA_NUMBER)(LUA_MININTEGER) &&               \
   (n) < -(LUA_NUMBER)(LUA_MININTEGER) &&               \
   (*(p) = (LUA_INTEGER)(n), 1))

/* Integers. */
#define LUA_INTEGER long long
#define LUA_INTEGER_FRMLEN "ll"
#define LUA_INTEGER_FMT "%" LUA_INTEGER_FRMLEN "d"
#define LUAI_UACINT LUA_INTEGER
#define LUA_UNSIGNED unsigned LUAI_UACINT
#define LUA_MAXINTEGER LLONG_MAX
#define LUA_MININTEGER LLONG_MIN
#define LUA_MAXUNSIGNED ULLONG_MAX
#define lua_integer2str(s, sz, n) \
  l_sprintf((s), sz, LUA_INTEGER_FMT, (LUAI_UACINT)(n))

#define l_sprintf(s, sz, f, i) snprintf(s, sz, f, i)
#define lua_strx2number(s, p) lua_str2number(s, p)
#define lua_pointer2str(buff, sz, p) l_sprintf(buff, sz, "%p", p)
#define lua_number2strx(L, b, sz, f, n) \
  ((void)L, l_sprintf(b, sz, f, (LUAI_UACNUMBER)(n)))
#define lua_getlocaledecpoint() (localeconv()->decimal_point[0])

#if defined(__GNUC__)
#define luai_likely(x) (__builtin_expect(((x) != 0), 1))
#define luai_unlikely(x) (__builtin_expect(((x) != 0), 0))
#else
#define luai_likely(x) (x)
#define luai_unlikely(x) (x)
#endif
#define l_likely(x) luai_likely(x)
#define l_unlikely(x) luai_unlikely(x)

/* Continuation contexts hold an integer or a pointer. */
#define LUA_KCONTEXT intptr_t

/* Alignment every userdata payload and every luaL_Buffer honours. */
#define LUAI_MAXALIGN \
  lua_Number n;       \
  double u;           \
  void *s;            \
  lua_Integer i;      \
  long l

/* Size of luaL_Buffer's initial in-struct space. */
#define LUAL_BUFFERSIZE ((int)(16 * sizeof(void *) * sizeof(lua_Number)))

#endif
