/*
 * stoppable.c — library functions whose running time a script controls,
 * written so that the limits can stop them.
 *
 * Hooks do not fire inside C functions, so a C loop whose length a script
 * chooses (table.remove on a table whose border is 2^40, table.move over a
 * huge range, table.concat through an __index that is a C function,
 * string.rep of an empty string 2^62 times, table.sort of millions of
 * numbers) would run past the time limit. These versions give Lua 5.4.4's
 * results and errors and look at the host's stop flag as they go
 * (luashim_stop_reason), raising the stop (luashim_raise_stop) when one is
 * in force. They replace the originals in the `table` and `string` tables
 * when the state is opened (host_main in luashim.c), for the host and protocols alike.
 */
#include "luashim.h"

#include <limits.h>
#include <string.h>

#define CHECK_EVERY 1024   /* loop steps between looks at the stop flag */

/* Raises the stop in force, if any, every CHECK_EVERY calls (counted in *steps). */
static void check_stop(lua_State *L, unsigned *steps) {
    if ((++*steps & (CHECK_EVERY - 1)) == 0 && luashim_stop_reason(L) != LUASHIM_STOP_NONE)
        luashim_raise_stop(L);
}

/* ---- table: what ltablib checks before it reads or writes ---- */

enum { TAB_R = 1, TAB_W = 2, TAB_L = 4, TAB_RW = TAB_R | TAB_W };

/* Is field `key` of the metatable on top (below n - 1 other values) present? [-0, +1] */
static int has_field(lua_State *L, const char *key, int n) {
    lua_pushstring(L, key);
    return lua_rawget(L, -n) != LUA_TNIL;
}

/* Argument `arg` must be a table, or have the metamethods for `what`
 * (as the table library requires: "table expected, got X" otherwise). [-0, +0] */
static void check_table(lua_State *L, int arg, int what) {
    if (lua_type(L, arg) == LUA_TTABLE) return;
    int n = 1;
    if (lua_getmetatable(L, arg) &&
        (!(what & TAB_R) || has_field(L, "__index", ++n)) &&
        (!(what & TAB_W) || has_field(L, "__newindex", ++n)) &&
        (!(what & TAB_L) || has_field(L, "__len", ++n))) {
        lua_pop(L, n);
    } else {
        luaL_checktype(L, arg, LUA_TTABLE);
    }
}

/* #t as the table library reads it (may call __len). [-0, +0] */
static lua_Integer table_length(lua_State *L, int arg, int what) {
    check_table(L, arg, what | TAB_L);
    return luaL_len(L, arg);
}

/* t[to] = t[from] for the table at index 1. [-0, +0] */
static void move_one(lua_State *L, int dst, lua_Integer from, lua_Integer to) {
    lua_geti(L, 1, from);
    lua_seti(L, dst, to);
}

/* table.insert(t, [pos,] value) */
static int t_insert(lua_State *L) {
    lua_Integer e = table_length(L, 1, TAB_RW);
    e = (lua_Integer)((lua_Unsigned)e + 1u);          /* first empty slot */
    lua_Integer pos;
    unsigned steps = 0;
    switch (lua_gettop(L)) {
    case 2:
        pos = e;
        break;
    case 3:
        pos = luaL_checkinteger(L, 2);
        luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)e, 2, "position out of bounds");
        for (lua_Integer i = e; i > pos; i--) {       /* shift up */
            check_stop(L, &steps);
            move_one(L, 1, i - 1, i);
        }
        break;
    default:
        return luaL_error(L, "wrong number of arguments to 'insert'");
    }
    lua_seti(L, 1, pos);
    return 0;
}

/* table.remove(t [, pos]) */
static int t_remove(lua_State *L) {
    lua_Integer size = table_length(L, 1, TAB_RW);
    lua_Integer pos = luaL_optinteger(L, 2, size);
    unsigned steps = 0;
    if (pos != size)                                  /* Lua 5.4.4 names argument #1 here */
        luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 1, "position out of bounds");
    lua_geti(L, 1, pos);                              /* the result */
    for (; pos < size; pos++) {                       /* shift down */
        check_stop(L, &steps);
        move_one(L, 1, pos + 1, pos);
    }
    lua_pushnil(L);
    lua_seti(L, 1, pos);
    return 1;
}

/* table.move(a1, f, e, t [, a2]) */
static int t_move(lua_State *L) {
    lua_Integer f = luaL_checkinteger(L, 2);
    lua_Integer e = luaL_checkinteger(L, 3);
    lua_Integer t = luaL_checkinteger(L, 4);
    int dst = !lua_isnoneornil(L, 5) ? 5 : 1;
    unsigned steps = 0;
    check_table(L, 1, TAB_R);
    check_table(L, dst, TAB_W);
    if (e >= f) {
        luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
        lua_Integer n = e - f + 1;
        luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
        if (t > e || t <= f || (dst != 1 && !lua_compare(L, 1, dst, LUA_OPEQ))) {
            for (lua_Integer i = 0; i < n; i++) {
                check_stop(L, &steps);
                move_one(L, dst, f + i, t + i);
            }
        } else {                                      /* overlapping, moving up: from the end */
            for (lua_Integer i = n - 1; i >= 0; i--) {
                check_stop(L, &steps);
                move_one(L, dst, f + i, t + i);
            }
        }
    }
    lua_pushvalue(L, dst);
    return 1;
}

/* Appends t[i] (a string or number) to the buffer. */
static void concat_field(lua_State *L, luaL_Buffer *b, lua_Integer i) {
    lua_geti(L, 1, i);
    if (!lua_isstring(L, -1))
        luaL_error(L, "invalid value (%s) at index %I in table for 'concat'", luaL_typename(L, -1), (LUAI_UACINT)i);
    luaL_addvalue(b);
}

/* table.concat(t [, sep [, i [, j]]]) */
static int t_concat(lua_State *L) {
    luaL_Buffer b;
    lua_Integer last = table_length(L, 1, TAB_R);
    size_t lsep;
    const char *sep = luaL_optlstring(L, 2, "", &lsep);
    lua_Integer i = luaL_optinteger(L, 3, 1);
    unsigned steps = 0;
    last = luaL_optinteger(L, 4, last);
    luaL_buffinit(L, &b);
    for (; i < last; i++) {
        check_stop(L, &steps);
        concat_field(L, &b, i);
        luaL_addlstring(&b, sep, lsep);
    }
    if (i == last) concat_field(L, &b, i);
    luaL_pushresult(&b);
    return 1;
}

/* The comparison table.sort makes without a comparator (or with one that is
 * a C function, upvalue 1): the same result, with a look at the stop flag. */
static int checked_less(lua_State *L) {
    if (luashim_stop_reason(L) != LUASHIM_STOP_NONE) luashim_raise_stop(L);
    if (lua_isnil(L, lua_upvalueindex(1))) {
        lua_pushboolean(L, lua_compare(L, 1, 2, LUA_OPLT));
    } else {
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_insert(L, 1);
        lua_call(L, 2, 1);
    }
    return 1;
}

/* table.sort(t [, comp]): Lua 5.4.4's own sort (upvalue 1), called in this
 * frame. A Lua comparator runs Lua code, where hooks fire; otherwise each
 * comparison goes through checked_less. */
static int t_sort(lua_State *L) {
    int t2 = lua_type(L, 2);
    if ((t2 == LUA_TNIL || t2 == LUA_TNONE || lua_iscfunction(L, 2)) && lua_type(L, 1) != LUA_TNONE) {
        lua_settop(L, 2);
        lua_pushcclosure(L, checked_less, 1);         /* the C comparator (or nil) as its upvalue */
    }
    return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

/* ---- string.rep ---- */

/* string.rep(s, n [, sep]) as Lua 5.4.4's, except that an empty result is
 * returned at once (stock copies zero bytes n times) and the copy looks at
 * the stop flag every CHECK_EVERY pieces. */
static int s_rep(lua_State *L) {
    size_t l, lsep;
    const char *s = luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    const char *sep = luaL_optlstring(L, 3, "", &lsep);
    unsigned steps = 0;
    if (n <= 0 || l + lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    if (l + lsep < l || l + lsep > (size_t)INT_MAX / (lua_Unsigned)n)   /* Lua's MAXSIZE for a 32-bit int */
        return luaL_error(L, "resulting string too large");
    size_t total = (size_t)n * l + (size_t)(n - 1) * lsep;
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, total);
    while (n-- > 1) {
        check_stop(L, &steps);
        memcpy(p, s, l);
        p += l;
        if (lsep > 0) {
            memcpy(p, sep, lsep);
            p += lsep;
        }
    }
    memcpy(p, s, l);
    luaL_pushresultsize(&b, total);
    return 1;
}

/* Replaces the functions above in the table library (global `table`) and
 * string.rep in the table on top (the string library). [-0, +0] */
void luashim_install_stoppable(lua_State *L) {
    lua_pushcfunction(L, s_rep);
    lua_setfield(L, -2, "rep");
    lua_getglobal(L, "table");
    static const luaL_Reg fns[] = {
        {"insert", t_insert}, {"remove", t_remove}, {"move", t_move}, {"concat", t_concat}, {NULL, NULL}};
    luaL_setfuncs(L, fns, 0);
    lua_getfield(L, -1, "sort");
    lua_pushcclosure(L, t_sort, 1);
    lua_setfield(L, -2, "sort");
    lua_pop(L, 1);
}
