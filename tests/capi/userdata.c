/* Full userdata and user values (manual 4.6): lua_newuserdatauv with 0..many user
   values, payload addresses that stay valid while Lua runs (and collects), metatables,
   __gc, __index methods written in C, lua_touserdata, light userdata. */
#include "common.h"

typedef struct {
  double x, y;
  char name[16];
} Point;

static int point_new(lua_State *L) {
  Point *p = (Point *)lua_newuserdatauv(L, sizeof(Point), 2);
  p->x = lua_tonumber(L, 1);
  p->y = lua_tonumber(L, 2);
  snprintf(p->name, sizeof p->name, "P%d", (int)p->x);
  lua_getfield(L, LUA_REGISTRYINDEX, "Point");
  lua_setmetatable(L, -2);
  return 1;
}

static int point_len(lua_State *L) {
  Point *p = (Point *)lua_touserdata(L, 1);
  lua_pushnumber(L, p->x * p->x + p->y * p->y);
  return 1;
}

static int point_tostring(lua_State *L) {
  Point *p = (Point *)lua_touserdata(L, 1);
  lua_pushfstring(L, "%s(%f, %f)", p->name, p->x, p->y);
  return 1;
}

static int gc_count;

static int point_gc(lua_State *L) {
  Point *p = (Point *)lua_touserdata(L, 1);
  if (p->name[0] == 'P') gc_count++;
  return 0;
}

int main(void) {
  lua_State *L = new_state();
  lua_newtable(L);
  lua_pushcfunction(L, point_len);
  lua_setfield(L, -2, "__len");
  lua_pushcfunction(L, point_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushcfunction(L, point_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushstring(L, "Point");
  lua_setfield(L, -2, "__name");
  lua_setfield(L, LUA_REGISTRYINDEX, "Point");
  lua_pushcfunction(L, point_new);
  lua_setglobal(L, "Point");
  run(L, "local p = Point(3, 4) print(#p, tostring(p)) local ps = {} for i = 1, 50 do ps[i] = Point(i, -i) end"
         " local s = 0 for i = 1, 50 do s = s + #ps[i] end print('sum', s)");

  /* A payload pointer held by C across Lua code that allocates and collects. */
  Point *held = (Point *)lua_newuserdatauv(L, sizeof(Point), 0);
  held->x = 1.25;
  held->y = -2.5;
  strcpy(held->name, "held");
  run(L, "local t = {} for i = 1, 300 do t[i] = {i, tostring(i)} end collectgarbage() t = nil collectgarbage()");
  printf("held payload intact: %s %.2f %.2f same=%d\n", held->name, held->x, held->y, lua_touserdata(L, -1) == held);
  lua_pop(L, 1);

  /* User values: none, one, many. */
  void *u0 = lua_newuserdatauv(L, 0, 0);
  printf("zero-size userdata non-null=%d rawlen=%llu\n", u0 != NULL, (unsigned long long)lua_rawlen(L, -1));
  lua_pushinteger(L, 1);
  printf("setiuservalue on none=%d ", lua_setiuservalue(L, -2, 1));
  printf("getiuservalue on none type=%d\n", lua_getiuservalue(L, -1, 1));
  lua_settop(L, 0);
  lua_newuserdatauv(L, 8, 1);
  lua_pushstring(L, "only");
  lua_setuservalue(L, 1);
  printf("getuservalue type=%d ", lua_getuservalue(L, 1));
  show_value(L, -1);
  printf("\n");
  lua_settop(L, 0);
  const int n = 40;
  lua_newuserdatauv(L, 24, n);
  for (int i = 1; i <= n; i++) {
    lua_pushfstring(L, "uv%d", i);
    lua_setiuservalue(L, 1, i);
  }
  run(L, "collectgarbage() collectgarbage()");
  int ok = 1;
  for (int i = 1; i <= n; i++) {
    lua_getiuservalue(L, 1, i);
    char want[16];
    snprintf(want, sizeof want, "uv%d", i);
    if (strcmp(lua_tostring(L, -1), want) != 0) ok = 0;
    lua_pop(L, 1);
  }
  printf("%d user values intact=%d, value %d type=%d, value 0 type=%d\n", n, ok, n + 1, lua_getiuservalue(L, 1, n + 1),
         lua_getiuservalue(L, 1, 0));
  lua_settop(L, 0);
  run(L, "print(debug.getuservalue(Point(1, 1), 2)) local p = Point(2, 2) debug.setuservalue(p, 'x', 2)"
         " print(debug.getuservalue(p, 2)) print(debug.getuservalue(p, 3))");
  /* Light userdata: equal by pointer, no metatable of their own. */
  static int a, b;
  lua_pushlightuserdata(L, &a);
  lua_pushlightuserdata(L, &a);
  lua_pushlightuserdata(L, &b);
  printf("light a==a %d a==b %d touserdata ok %d\n", lua_rawequal(L, 1, 2), lua_rawequal(L, 1, 3),
         lua_touserdata(L, 3) == &b);
  lua_settop(L, 0);
  run(L, "collectgarbage()");
  lua_close(L);
  printf("finalized points: %d\n", gc_count);
  return 0;
}
