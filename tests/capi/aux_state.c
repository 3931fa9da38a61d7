/* luaL_newstate's defaults: warnings start off and follow "@on"/"@off" (continued
   pieces, control messages ignored while off or mid-message), the panic function prints
   Lua's message before the process aborts (run in a child process), and the allocator
   is one lua_getallocf returns; lua_newstate's allocator sees the heap (a counting one
   and a limiting one). stderr is sent to stdout so the oracle comparison sees it. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capi_test.h"

static void warnings(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  runLua(L,
         "warn('dropped: warnings start off')\n"
         "warn('@on')\n"
         "warn('one piece')\n"
         "warn('several ', 'pieces', ' in one call')\n"
         "warn('@unknown control')\n"
         "warn('@off')\n"
         "warn('dropped again')\n"
         "warn('@on')\n"
         "warn('@on', ' not control: has a continuation')\n");
  lua_warning(L, "from C, ", 1);
  lua_warning(L, "@off", 1);
  lua_warning(L, " continued", 0);
  lua_warning(L, "@off", 0);
  lua_warning(L, "off from C", 0);
  fflush(stderr);
  lua_close(L);
}

static int raiseUnprotected(lua_State *L) {
  lua_pushliteral(L, "the error");
  return lua_error(L);
}

/* Runs an unprotected error in a child: prints what it wrote and how it ended. */
static void panics(int nonString) {
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    lua_State *L = luaL_newstate();
    lua_CFunction standard = lua_atpanic(L, NULL);
    CHECK(standard != NULL);
    lua_atpanic(L, standard);
    luaL_checkversion(L);
    lua_pushcfunction(L, raiseUnprotected);
    if (nonString) {
      lua_newtable(L);
      lua_error(L);
    }
    lua_call(L, 0, 0);
    printf("not reached\n");
    _exit(0);
  }
  int status;
  CHECK(waitpid(pid, &status, 0) == pid);
  printf("child %s\n", WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT ? "aborted" : "did not abort");
}

static int atPanicHere(lua_State *L) {
  printf("custom panic: %s\n", lua_tostring(L, -1));
  fflush(stdout);
  _exit(3);
}

static void customPanic(void) {
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    lua_State *L = luaL_newstate();
    lua_atpanic(L, atPanicHere);
    luaL_error(L, "raised by luaL_error at level %d", 1);
    _exit(0);
  }
  int status;
  CHECK(waitpid(pid, &status, 0) == pid);
  printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

struct counter {
  size_t in_use, peak, limit;
};

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  struct counter *c = (struct counter *)ud;
  size_t old = ptr ? osize : 0;  /* osize names a type when ptr is NULL */
  if (nsize == 0) {
    free(ptr);
    c->in_use -= old;
    return NULL;
  }
  if (c->limit && c->in_use - old + nsize > c->limit) return NULL;
  void *p = realloc(ptr, nsize);
  if (p) {
    c->in_use += nsize - old;
    if (c->in_use > c->peak) c->peak = c->in_use;
  }
  return p;
}

static void allocators(void) {
  struct counter c = {0, 0, 0};
  lua_State *L = lua_newstate(counting_alloc, &c);
  luaL_openlibs(L);
  int st = luaL_dostring(L, "local t = {} for i = 1, 8 do t[i] = ('x'):rep(1 << 20) .. i end return #t");
  printf("counting allocator: status %d, sees the heap %d\n", st, c.peak > (4u << 20));
  lua_close(L);
  printf("everything given back %d\n", c.in_use == 0);
  struct counter d = {0, 0, 8u << 20};
  L = lua_newstate(counting_alloc, &d);
  luaL_openlibs(L);
  st = luaL_dostring(L, "local t = {} for i = 1, 100 do t[i] = ('x'):rep(1 << 20) .. i end");
  printf("limiting allocator: status %d %s\n", st, lua_tostring(L, -1));
  lua_settop(L, 0);
  lua_close(L);
  printf("everything given back %d\n", d.in_use == 0);
}

int main(void) {
  CHECK(dup2(1, 2) == 2);
  setvbuf(stdout, NULL, _IONBF, 0);
  setvbuf(stderr, NULL, _IONBF, 0);
  warnings();
  panics(0);
  panics(1);
  customPanic();
  allocators();
  lua_State *L = luaL_newstate();
  void *ud = (void *)&ud;
  printf("allocator %s\n", lua_getallocf(L, &ud) != NULL && ud == NULL ? "set, ud NULL" : "?");
  lua_close(L);
  return 0;
}
