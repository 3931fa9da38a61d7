/* lua_gc with every option (results that do not depend on memory layout), lua_setwarnf
   and lua_warning (control messages, continued pieces, warn from Lua), lua_atpanic's
   previous function, lua_version. */
#include "common.h"

static void warnf(void *ud, const char *msg, int tocont) {
  printf("[warn %s] %s%s\n", (const char *)ud, msg, tocont ? " (continued)" : "");
}

static int my_panic(lua_State *L) { return 0; }

int main(void) {
  lua_State *L = new_state();
  printf("version %.0f\n", lua_version(L));
  printf("isrunning %d\n", lua_gc(L, LUA_GCISRUNNING));
  printf("stop %d isrunning %d\n", lua_gc(L, LUA_GCSTOP), lua_gc(L, LUA_GCISRUNNING));
  printf("restart %d isrunning %d\n", lua_gc(L, LUA_GCRESTART), lua_gc(L, LUA_GCISRUNNING));
  run(L, "garbage = {} for i = 1, 1000 do garbage[i] = {i} end garbage = nil");
  int kb = lua_gc(L, LUA_GCCOUNT);
  int b = lua_gc(L, LUA_GCCOUNTB);
  printf("count positive %d countb in range %d\n", kb > 0, b >= 0 && b < 1024);
  printf("collect %d\n", lua_gc(L, LUA_GCCOLLECT));
  printf("count after collect not larger %d\n", lua_gc(L, LUA_GCCOUNT) <= kb);
  printf("step returns %d\n", lua_gc(L, LUA_GCSTEP, 0) >= 0);
  printf("setpause old %d\n", lua_gc(L, LUA_GCSETPAUSE, 150));
  printf("setpause old %d\n", lua_gc(L, LUA_GCSETPAUSE, 200));
  printf("setstepmul old %d\n", lua_gc(L, LUA_GCSETSTEPMUL, 300));
  printf("gen (was inc=%d)\n", lua_gc(L, LUA_GCGEN, 0, 0) == LUA_GCINC);
  printf("inc (was gen=%d)\n", lua_gc(L, LUA_GCINC, 0, 0, 0) == LUA_GCGEN);
  run(L, "print('collectgarbage count is a number:', type(collectgarbage('count')))");
  printf("atpanic previous is ours %d\n", lua_atpanic(L, my_panic) == test_panic);
  printf("atpanic previous is my_panic %d\n", lua_atpanic(L, test_panic) == my_panic);

  lua_setwarnf(L, warnf, "A");
  lua_warning(L, "plain", 0);
  lua_warning(L, "first ", 1);
  lua_warning(L, "second", 0);
  lua_warning(L, "@on", 0);
  run(L, "warn('from ', 'Lua') warn('@off')");
  lua_setwarnf(L, NULL, NULL);
  lua_warning(L, "dropped", 0);
  run(L, "warn('also dropped')");
  printf("warnings done\n");
  lua_close(L);
  return 0;
}
