/* lua_load with readers (text and binary, in pieces, with modes and chunk names) and
   lua_dump with writers (stripped or not), round trips between the two. */
#include "common.h"

struct buffer {
  char data[1 << 16];
  size_t size;
  int calls;
};

static int writer(lua_State *L, const void *p, size_t sz, void *ud) {
  struct buffer *b = (struct buffer *)ud;
  (void)L;
  memcpy(b->data + b->size, p, sz);
  b->size += sz;
  b->calls++;
  return 0;
}

static int failing_writer(lua_State *L, const void *p, size_t sz, void *ud) { return 7; }

static int c_function(lua_State *L) { return 0; }

/* Hands out the chunk a few bytes at a time. */
struct piece_reader {
  const char *s;
  size_t n, pos, step;
};

static const char *read_pieces(lua_State *L, void *ud, size_t *size) {
  struct piece_reader *r = (struct piece_reader *)ud;
  if (r->pos >= r->n) return NULL;
  size_t k = r->n - r->pos < r->step ? r->n - r->pos : r->step;
  *size = k;
  r->pos += k;
  return r->s + r->pos - k;
}

/* A reader that raises after its first piece, and a writer that raises: the buffers
   lua_load and lua_dump hold meanwhile must not leak (LeakSanitizer in the ASan stage). */
static const char *raising_reader(lua_State *L, void *ud, size_t *size) {
  int *calls = (int *)ud;
  if ((*calls)++ == 0) {
    *size = 9;
    return "return 1 ";
  }
  lua_pushstring(L, "reader fails");
  lua_error(L);
  return NULL;
}

static int raising_writer(lua_State *L, const void *p, size_t sz, void *ud) {
  (void)p, (void)sz, (void)ud;
  lua_pushstring(L, "writer fails");
  return lua_error(L);
}

static int load_raising(lua_State *L) {
  int calls = 0;
  lua_load(L, raising_reader, &calls, "=raising", NULL);
  return 1;
}

static int dump_raising(lua_State *L) {
  load_string(L, "return 1", "=one");
  lua_dump(L, raising_writer, NULL, 0);
  return 1;
}

static void call_and_show(lua_State *L, const char *label) {
  int st = lua_pcall(L, 0, LUA_MULTRET, 0);
  show_stack(L, label);
  (void)st;
  lua_settop(L, 0);
}

int main(void) {
  lua_State *L = new_state();
  const char *code = "local a, b = ... ; local t = {} for i = 1, 10 do t[i] = i * i end\n"
                     "return 'sum', (function() local s = 0 for _, v in ipairs(t) do s = s + v end return s end)(), a";
  struct piece_reader r = {code, strlen(code), 0, 3};
  printf("load in pieces=%d\n", lua_load(L, read_pieces, &r, "=pieces", NULL));
  lua_pushvalue(L, -1);
  call_and_show(L, "pieces");
  r.pos = 0;
  lua_load(L, read_pieces, &r, "=pieces", "bt");
  struct buffer *b = (struct buffer *)calloc(1, sizeof *b);
  printf("dump status=%d nonempty=%d\n", lua_dump(L, writer, b, 0), b->size > 0);
  printf("binary signature ok=%d\n", memcmp(b->data, LUA_SIGNATURE, 4) == 0);
  lua_settop(L, 0);
  struct piece_reader br = {b->data, b->size, 0, 5};
  printf("load binary=%d\n", lua_load(L, read_pieces, &br, "=binary", "b"));
  call_and_show(L, "binary");
  br.pos = 0;
  printf("load binary in text mode=%d ", lua_load(L, read_pieces, &br, "=binary", "t"));
  show_stack(L, "");
  lua_settop(L, 0);
  r.pos = 0;
  printf("load text in binary mode=%d ", lua_load(L, read_pieces, &r, "=text", "b"));
  show_stack(L, "");
  lua_settop(L, 0);
  /* Stripped dumps lose line information. */
  load_string(L, "local x = nil\nreturn x.field", "=named");
  size_t full;
  b->size = 0;
  lua_dump(L, writer, b, 0);
  full = b->size;
  b->size = 0;
  lua_dump(L, writer, b, 1);
  printf("stripped smaller=%d\n", b->size < full);
  lua_settop(L, 0);
  struct piece_reader sr = {b->data, b->size, 0, 1 << 20};
  lua_load(L, read_pieces, &sr, "=stripped", NULL);
  call_and_show(L, "stripped error");
  /* Syntax errors and chunk names. */
  printf("syntax error=%d ", load_string(L, "x = = 1", "@file.lua"));
  show_stack(L, "");
  lua_settop(L, 0);
  printf("syntax error default name=%d ", lua_load(L, read_string, &(struct string_reader){"return +", 8}, NULL, NULL));
  show_stack(L, "");
  lua_settop(L, 0);
  /* Empty chunk; a writer's error; dumping a C function. */
  printf("empty chunk=%d ", lua_load(L, read_string, &(struct string_reader){"", 0}, "=empty", NULL));
  call_and_show(L, "empty");
  load_string(L, "return 1", "=one");
  printf("failing writer=%d\n", lua_dump(L, failing_writer, NULL, 0));
  lua_pushcfunction(L, c_function);
  printf("dump C function=%d\n", lua_dump(L, writer, b, 0));
  lua_settop(L, 0);
  /* Readers and writers that raise. */
  pcall_and_show(L, load_raising, 1, "raising reader=");
  pcall_and_show(L, dump_raising, 1, "raising writer=");
  /* The loaded chunk's first upvalue is the global table. */
  load_string(L, "y = 5 return _ENV == _G", "=env");
  call_and_show(L, "env");
  lua_getglobal(L, "y");
  show_stack(L, "global set by chunk");
  free(b);
  lua_close(L);
  return 0;
}
