/*
** Weft's extensions of the Lua 5.4 C API (docs/embedding.md, "Blocking calls").
** Include after lua.h.
*/
#ifndef lweft_h
#define lweft_h

#include "lua.h"

/* Work that blocks on the operating system (a socket read, a database call). It runs on
** another thread: it must not touch any lua_State. */
typedef void (*weft_Work)(void *ud);

/*
** Runs work(ud) without holding up a task worker, then continues with k(L, LUA_YIELD,
** ctx), whose results are the C function's. Called as `return weft_blockingk(...)` from
** a C function that Lua called, like lua_yieldk. A task that can suspend there does
** (work runs on the runtime's blocking pool, `weft --blocking-threads`); elsewhere (the
** main chunk, a host thread, a C function under a metamethod) work runs on the calling
** thread, detached from the collector. A C++ exception escaping work raises "blocking
** call failed: <what>" in the caller instead. A task cancelled while work is queued
** never runs it and never runs k; one cancelled while work runs waits for it, then ends
** without running k: free what ud owns from a to-be-closed value or a __gc, not from k.
*/
LUA_API int (weft_blockingk)(lua_State *L, weft_Work work, void *ud, lua_KContext ctx, lua_KFunction k);

#endif
