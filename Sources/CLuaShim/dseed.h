/* dseed.h — fixes a new state's string-hash seed (internal to CLuaShim; see dseed.c). */
#ifndef DSEED_H
#define DSEED_H
#include <lua.h>
/* Call right after lua_newstate. Returns 0, or -1 (state untouched) if the
 * Lua library's internal layout is not the one this file mirrors. */
int dseed_fix(lua_State *L, unsigned int seed);
#endif
