/* The debug interface (manual 4.7): lua_getstack/lua_getinfo with every option letter
   (and '>'), locals, upvalues (ids, joins), hooks written in C. */
#include "common.h"

static void show_info(lua_State *L, lua_Debug *ar, const char *what) {
  lua_getinfo(L, what, ar);
  printf("  what=%s src=%s short=%s lines=%d-%d cur=%d name=%s namewhat=%s nups=%d nparams=%d vararg=%d tail=%d\n",
         ar->what, ar->source, ar->short_src, ar->linedefined, ar->lastlinedefined, ar->currentline,
         ar->name ? ar->name : "(null)", ar->namewhat, ar->nups, ar->nparams, ar->isvararg, ar->istailcall);
}

static int inspect(lua_State *L) {
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar); level++) {
    printf("level %d:\n", level);
    show_info(L, &ar, "nSltu");
    const char *name;
    for (int i = 1; (name = lua_getlocal(L, &ar, i)) != NULL; i++) {
      printf("    local %d %s = ", i, name);
      show_value(L, -1);
      printf("\n");
      lua_pop(L, 1);
    }
  }
  printf("getstack(99)=%d\n", lua_getstack(L, 99, &ar));
  return 0;
}

static int set_local(lua_State *L) {
  lua_Debug ar;
  lua_getstack(L, 1, &ar);
  lua_pushstring(L, "changed");
  printf("setlocal name=%s\n", lua_setlocal(L, &ar, 1));
  return 0;
}

static int hook_lines;
static int hook_calls;

static void hook(lua_State *L, lua_Debug *ar) {
  if (ar->event == LUA_HOOKLINE) {
    hook_lines++;
    lua_getinfo(L, "S", ar);
    if (hook_lines <= 3) printf("line hook at %s:%d\n", ar->short_src, ar->currentline);
  } else if (ar->event == LUA_HOOKCALL || ar->event == LUA_HOOKTAILCALL) {
    hook_calls++;
  }
}

/* A hook that yields (count and line events may, with no values): a coroutine
   time-sliced by its hook, as schedulers built on Lua do. */
static void yielding_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_yield(L, 0);
}

static void time_slice(lua_State *L, int mask, int count) {
  lua_State *co = lua_newthread(L);
  load_string(co, "local s = 0\nfor i = 1, 20 do\n  s = s + i\nend\nreturn s", "=slice");
  lua_sethook(co, yielding_hook, mask, count);
  int slices = 0, nres = 0, status;
  while ((status = lua_resume(co, L, 0, &nres)) == LUA_YIELD) {
    slices++;
    printf("%s", nres == 0 ? "" : "values! ");
    lua_pushinteger(co, slices);  /* a resume's values go nowhere after a hook's yield */
    if (slices > 1000) break;
  }
  printf("mask %d count %d: status %d after %d yields, result %d\n", mask, count, status, slices,
         (int)lua_tointeger(co, -1));
  lua_pop(L, 1);
}

int main(void) {
  lua_State *L = new_state();
  lua_pushcfunction(L, inspect);
  lua_setglobal(L, "inspect");
  lua_pushcfunction(L, set_local);
  lua_setglobal(L, "set_local");
  run(L, "local function f(a, b, ...)\n  local c = a + b\n  inspect()\n  return c\nend\n"
         "local t = {f = f}\nt.f(1, 2, 3, 4)\n");
  run(L, "local x = 'orig'\nset_local()\nprint('x is now', x)");
  /* '>' with a function on the stack. Zeroed: ">Su" leaves currentline as it was. */
  lua_Debug ar;
  memset(&ar, 0, sizeof ar);
  load_string(L, "local a, b = 1\nreturn function(p, q, ...) return a, b end", "=defs");
  lua_call(L, 0, 1);
  lua_pushvalue(L, -1);
  show_info(L, &ar, ">Su");
  lua_pushvalue(L, -1);
  lua_getinfo(L, ">fL", &ar);
  printf("'>fL' pushed function equal=%d activelines type=%s\n", lua_rawequal(L, -2, -3),
         lua_typename(L, lua_type(L, -1)));
  lua_pop(L, 2);
  int lines = 0;
  lua_pushvalue(L, -1);
  lua_getinfo(L, ">L", &ar);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lines++;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  printf("active lines %d\n", lines);
  printf("param 1 %s param 2 %s param 3 %s\n", lua_getlocal(L, NULL, 1), lua_getlocal(L, NULL, 2),
         lua_getlocal(L, NULL, 3) ? "?" : "(null)");
  lua_pushcfunction(L, inspect);
  show_info(L, &ar, ">Su");
  /* Upvalues. */
  printf("upvalue 1 %s = ", lua_getupvalue(L, -1, 1));
  show_value(L, -1);
  lua_pop(L, 1);
  printf(", upvalue 2 %s, upvalue 3 %s\n", lua_getupvalue(L, -1, 2), lua_getupvalue(L, -2, 3) ? "?" : "(null)");
  lua_pop(L, 1);
  lua_pushinteger(L, 7);
  printf("setupvalue %s\n", lua_setupvalue(L, -2, 1));
  lua_pushvalue(L, -1);
  lua_call(L, 0, 2);
  show_stack(L, "after setupvalue");
  lua_pop(L, 2);
  load_string(L, "local a, b = 1, 2\nreturn function() return a end, function() return b end", "=pair");
  lua_call(L, 0, 2);
  printf("ids differ %d same %d\n", lua_upvalueid(L, -1, 1) != lua_upvalueid(L, -2, 1),
         lua_upvalueid(L, -1, 1) == lua_upvalueid(L, -1, 1));
  lua_upvaluejoin(L, -2, 1, -1, 1);
  printf("after join ids equal %d\n", lua_upvalueid(L, -1, 1) == lua_upvalueid(L, -2, 1));
  lua_call(L, 0, 1);
  show_stack(L, "joined");
  lua_settop(L, 0);
  lua_pushcfunction(L, inspect);
  lua_pushinteger(L, 5);
  lua_pushcclosure(L, inspect, 2);
  printf("C upvalue name '%s' ", lua_getupvalue(L, -1, 2));
  show_value(L, -1);
  printf("\n");
  lua_settop(L, 0);
  /* Hooks written in C. */
  lua_sethook(L, hook, LUA_MASKLINE | LUA_MASKCALL, 0);
  printf("gethook set %d mask %d count %d\n", lua_gethook(L) == hook, lua_gethookmask(L), lua_gethookcount(L));
  run(L, "local s = 0\nfor i = 1, 3 do\n  s = s + i\nend\nlocal function g() return s end\ng()");
  lua_sethook(L, NULL, 0, 0);
  printf("hook lines %d calls %d, gethook after clear %d\n", hook_lines, hook_calls, lua_gethook(L) == NULL);
  time_slice(L, LUA_MASKCOUNT, 7);
  time_slice(L, LUA_MASKLINE, 0);
  time_slice(L, LUA_MASKCOUNT | LUA_MASKLINE, 5);
  /* Outside a coroutine the hook's yield is an error, raised in the hooked code. */
  lua_sethook(L, yielding_hook, LUA_MASKCOUNT, 3);
  int st = load_string(L, "local x = 0 for i = 1, 10 do x = x + i end", "=main") || lua_pcall(L, 0, 0, 0);
  lua_sethook(L, NULL, 0, 0);
  printf("yield in the main thread's hook: %d %s\n", st, lua_tostring(L, -1));
  lua_close(L);
  return 0;
}
