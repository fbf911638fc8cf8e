/*
 * sandboxlib.c — C primitives of the sandbox: stock-speed library functions
 * with deterministic identities, and the embedded sandbox bootstrap.
 *
 * Wrappers call the original C function directly in their own frame (never
 * through lua_call), so the original's errors name the caller's file:line
 * and the function as Lua does ("bad argument #1 to 'format'").
 */
#include "luashim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#pragma clang diagnostic ignored "-Wc23-extensions"

static const char sandbox_source[] = {
#embed "lua/sandbox.lua"
    , 0
};

static const char bench_source[] = {
#embed "lua/bench.lua"
    , 0
};

const char *luashim_bench_source(size_t *size) {
    *size = sizeof bench_source - 1;
    return bench_source;
}

const char *luashim_sandbox_source(size_t *size) {
    *size = sizeof sandbox_source - 1;
    return sandbox_source;
}

/* ---- light C functions become closures: identities in the deterministic heap ---- */

/* A light C function is hashed by its address in the library (ASLR); a C
 * closure is an object in the state's deterministic heap. [-0, +0] */
static int is_light_cfunction(lua_State *L, int idx) {
    if (!lua_iscfunction(L, idx)) return 0;
    if (lua_getupvalue(L, idx, 1) == NULL) return 1;
    lua_pop(L, 1);
    return 0;
}

static void close_light(lua_State *L, int t) {
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {                 /* key, value */
        if (is_light_cfunction(L, -1)) {
            lua_CFunction f = lua_tocfunction(L, -1);
            lua_pushvalue(L, -2);                   /* key, value, key */
            lua_pushnil(L);                         /* an unused upvalue */
            lua_pushcclosure(L, f, 1);              /* key, value, key, closure */
            lua_rawset(L, t);
        }
        lua_pop(L, 1);
    }
}

void luashim_close_light_functions(lua_State *L) {
    lua_pushglobaltable(L);
    int g = lua_gettop(L);
    close_light(L, g);
    lua_pushnil(L);
    while (lua_next(L, g) != 0) {
        if (lua_type(L, -1) == LUA_TTABLE && !lua_rawequal(L, -1, g)) close_light(L, lua_gettop(L));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* ---- pairs and ipairs: stock semantics, iterators from the deterministic heap ---- */

static int pairs_continue(lua_State *L, int status, lua_KContext k) {
    (void)L; (void)status; (void)k;
    return 3;
}

/* lbaselib's pairs: __pairs (yieldable) or next, t, nil; upvalue 1 is `next`. */
static int sb_pairs(lua_State *L) {
    luaL_checkany(L, 1);
    if (luaL_getmetafield(L, 1, "__pairs") == LUA_TNIL) {
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_pushvalue(L, 1);
        lua_pushnil(L);
    } else {
        lua_pushvalue(L, 1);
        lua_callk(L, 1, 3, 0, pairs_continue);
    }
    return 3;
}

static int sb_ipairs_step(lua_State *L) {
    lua_Integer i = luaL_checkinteger(L, 2);
    i = (lua_Integer)((lua_Unsigned)i + 1u);
    lua_pushinteger(L, i);
    return lua_geti(L, 1, i) == LUA_TNIL ? 1 : 2;
}

static int sb_ipairs(lua_State *L) {
    luaL_checkany(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 0);
    return 3;
}

/* ---- tostring: stock, with numbered identities instead of addresses ---- */

/* tostring(v) as stock Lua's luaL_tolstring, except that NaN prints as "nan"
 * and a table, userdata, function or thread without __tostring is named by
 * the sandbox's identify(v, typename) (upvalue 1: "table: 1", in order of
 * first appearance) instead of by its address. A string __name names the type,
 * as in stock Lua. */
static int sb_tostring(lua_State *L) {
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    int t = lua_type(L, 1);
    if (t == LUA_TNUMBER && !lua_isinteger(L, 1) && isnan(lua_tonumber(L, 1))) {
        lua_pushliteral(L, "nan");                        /* numbers have no metatable in protocols */
        return 1;
    }
    if (t != LUA_TTABLE && t != LUA_TUSERDATA && t != LUA_TFUNCTION && t != LUA_TTHREAD) {
        luaL_tolstring(L, 1, NULL);
        return 1;
    }
    if (luaL_getmetafield(L, 1, "__tostring") != LUA_TNIL) {
        lua_pop(L, 1);
        luaL_tolstring(L, 1, NULL);
        return 1;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    if (luaL_getmetafield(L, 1, "__name") != LUA_TSTRING) {
        if (lua_gettop(L) > 3) lua_pop(L, 1);              /* a __name that is not a string */
        lua_pushstring(L, luaL_typename(L, 1));
    }
    lua_call(L, 2, 1);
    return 1;
}

static int make_tostring(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    lua_pushcclosure(L, sb_tostring, 1);
    return 1;
}

/* ---- string.format: no addresses, one spelling of NaN ---- */

/* Pushes what %p shows for the value at idx: its offset in the deterministic
 * heap, or "(null)" for values that are not objects (as glibc prints NULL). */
static void push_pointer_identity(lua_State *L, int idx) {
    const void *p = lua_topointer(L, idx);
    size_t offset = p ? luashim_heap_offset(L, p) : (size_t)-1;
    if (p == NULL) lua_pushliteral(L, "(null)");
    else if (offset == (size_t)-1) lua_pushliteral(L, "0xffffffff");
    else {
        char text[32];
        snprintf(text, sizeof text, "0x%08zx", offset);
        lua_pushstring(L, text);
    }
}

/* Upvalues: 1 the original string.format, 2 the sandbox's tostring. Values a
 * %s would show by address go through the sandbox's tostring; %p shows the
 * heap identity; "-nan" prints as "nan" on every platform. */
static int sb_format(lua_State *L) {
    size_t len;
    const char *fmt = luaL_checklstring(L, 1, &len);
    int top = lua_gettop(L), arg = 1, rewrite = 0, nan = 0;
    for (size_t i = 0; i < len; i++) {
        if (fmt[i] != '%') continue;
        if (++i < len && fmt[i] == '%') continue;
        while (i < len && strchr("-+ #0123456789.", fmt[i])) i++;
        if (i >= len) break;
        if (++arg > top) break;
        char conv = fmt[i];
        int t = lua_type(L, arg);
        if (conv == 's' && t != LUA_TSTRING && t != LUA_TNUMBER) {
            lua_pushvalue(L, lua_upvalueindex(2));
            lua_pushvalue(L, arg);
            lua_call(L, 1, 1);
            lua_replace(L, arg);
        } else if (conv == 'p') {
            rewrite = 1;
        } else if (strchr("aAeEfFgG", conv) && t == LUA_TNUMBER && !lua_isinteger(L, arg) &&
                   isnan(lua_tonumber(L, arg))) {
            nan = 1;
        }
    }
    if (rewrite) {                       /* %p → %s of the identity, flags and width kept */
        luaL_Buffer b;
        arg = 1;
        luaL_buffinit(L, &b);
        for (size_t i = 0; i < len; i++) {
            if (fmt[i] != '%') { luaL_addchar(&b, fmt[i]); continue; }
            luaL_addchar(&b, '%');
            if (i + 1 < len && fmt[i + 1] == '%') { luaL_addchar(&b, '%'); i++; continue; }
            size_t j = i + 1, precision = 0;
            while (j < len && strchr("-+ #0123456789.", fmt[j])) { precision |= fmt[j] == '.'; j++; }
            luaL_addlstring(&b, fmt + i + 1, j - i - 1);
            if (j >= len) { i = j - 1; continue; }
            ++arg;
            if (fmt[j] == 'p' && !precision && arg <= top) {
                push_pointer_identity(L, arg);
                lua_replace(L, arg);
                luaL_addchar(&b, 's');
            } else {
                luaL_addchar(&b, fmt[j]);
            }
            i = j;
        }
        luaL_pushresult(&b);
        lua_replace(L, 1);
    }
    lua_CFunction original = lua_tocfunction(L, lua_upvalueindex(1));
    int n = original(L);
    if (nan && lua_type(L, -1) == LUA_TSTRING) {
        luaL_gsub(L, lua_tostring(L, -1), "-nan", "nan");
        lua_replace(L, -2);
    }
    return n;
}

/* string.rep with the memory limit checked before the string is built: a
 * request within Lua's own limit (INT_MAX bytes; the original raises
 * "resulting string too large" beyond) but past the memory left stops the
 * script. Upvalue 1: the original string.rep. */
static int sb_rep(lua_State *L) {
    size_t l, lsep;
    luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (n > 0 && l + lsep > 0 && l + lsep <= (size_t)0x7fffffff / (lua_Unsigned)n) {
        size_t total = (l + lsep) * (size_t)n;
        if (total > luashim_memory_available(L)) {
            luashim_stop_for_memory(L, total);
            return luashim_raise_stop(L);
        }
    }
    return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

/* Is t.__gc (raw) not nil, for the table at idx? [-0, +0] */
static int has_raw_gc(lua_State *L, int idx) {
    lua_pushliteral(L, "__gc");
    int present = lua_rawget(L, idx) != LUA_TNIL;
    lua_pop(L, 1);
    return present;
}

/* ---- collectgarbage: only the options that leave the collector as the limits need ---- */

/* Upvalues: 1 the original collectgarbage, 2 a set of the allowed options.
 * A stock option not in the set is refused with the reason; anything else
 * (allowed, or not an option at all) goes to the original in this frame, so
 * its errors are stock's ("invalid option 'x'", "string expected, got table"). */
static int sb_collectgarbage(lua_State *L) {
    static const char *const stock[] = {"stop", "restart", "collect", "count", "step", "setpause",
                                        "setstepmul", "isrunning", "generational", "incremental", NULL};
    const char *opt = luaL_optstring(L, 1, "collect");
    int allowed = lua_getfield(L, lua_upvalueindex(2), opt) != LUA_TNIL;
    lua_pop(L, 1);
    if (!allowed) {
        for (int i = 0; stock[i]; i++) {
            if (strcmp(stock[i], opt) == 0)
                return luaL_argerror(L, 1, lua_pushfstring(L, "option '%s' is not available in protocols", opt));
        }
    }
    return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

static int make_collectgarbage(lua_State *L) {
    luaL_argexpected(L, lua_tocfunction(L, 1) != NULL, 1, "C function");
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lua_pushcclosure(L, sb_collectgarbage, 2);
    return 1;
}

/* ---- setmetatable: no finalizers ---- */

/* Finalizers cannot be interrupted by the limits, so a metatable with a __gc
 * field is refused; otherwise the original runs in this frame (stock errors,
 * named 'setmetatable'). Upvalue 1: the original setmetatable. */
static int sb_setmetatable(lua_State *L) {
    if (lua_type(L, 2) == LUA_TTABLE && has_raw_gc(L, 2))
        return luaL_error(L, "setmetatable: __gc metamethods are not allowed in protocols (finalizers cannot be stopped)");
    return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

static int make_setmetatable(lua_State *L) {
    luaL_argexpected(L, lua_tocfunction(L, 1) != NULL, 1, "C function");
    lua_settop(L, 1);
    lua_pushcclosure(L, sb_setmetatable, 1);
    return 1;
}

static int make_format(lua_State *L) {
    luaL_argexpected(L, lua_tocfunction(L, 1) != NULL, 1, "C function");
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    lua_pushcclosure(L, sb_format, 2);
    return 1;
}

static int make_rep(lua_State *L) {
    luaL_argexpected(L, lua_tocfunction(L, 1) != NULL, 1, "C function");
    lua_settop(L, 1);
    lua_pushcclosure(L, sb_rep, 1);
    return 1;
}

void luashim_push_sandbox_primitives(lua_State *L) {
    lua_pushcfunction(L, make_tostring);
    lua_setfield(L, -2, "wrap_tostring");
    lua_pushcfunction(L, make_format);
    lua_setfield(L, -2, "wrap_format");
    lua_pushcfunction(L, make_rep);
    lua_setfield(L, -2, "wrap_rep");
    lua_pushcfunction(L, make_collectgarbage);
    lua_setfield(L, -2, "wrap_collectgarbage");
    lua_pushcfunction(L, make_setmetatable);
    lua_setfield(L, -2, "wrap_setmetatable");
    lua_getglobal(L, "next");
    lua_pushcclosure(L, sb_pairs, 1);
    lua_setfield(L, -2, "pairs");
    lua_pushnil(L);
    lua_pushcclosure(L, sb_ipairs_step, 1);
    lua_pushcclosure(L, sb_ipairs, 1);
    lua_setfield(L, -2, "ipairs");
}

