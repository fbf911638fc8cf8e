/*
 * pattern.c — string.find, string.match, string.gmatch and string.gsub with a
 * matcher that the limits can stop.
 *
 * Lua's pattern matcher can backtrack for exponential time inside one C call,
 * where no hook fires. This is an independent implementation of the pattern
 * language of the Lua 5.4 reference manual (§6.4.1), with the same results and
 * error messages as Lua 5.4.4's string library (the official test suite's
 * pm.lua is the judge), and one addition: every few thousand matching steps it
 * looks at the host's stop flag (time limit, interrupt), and raises the stop.
 */
#define _GNU_SOURCE
#include "luashim.h"

#include <ctype.h>
#include <string.h>

#ifndef LUA_MAXCAPTURES
#define LUA_MAXCAPTURES 32           /* as lstrlib.c */
#endif
#define ESCAPE '%'
#define SPECIAL_CHARS "^$*+?.([%-"
#define MAX_DEPTH 200                /* recursion depth of the matcher, as Lua's MAXCCALLS */
#define CHECK_EVERY 4096             /* matching steps between looks at the stop flag */
#define OPEN (-1)                    /* capture still open */
#define POSITION (-2)                /* position capture () */

typedef struct matcher {
    const char *subject, *subject_end, *pattern_end;
    lua_State *L;
    int depth;
    unsigned steps;
    int ncaptures;
    struct { const char *start; ptrdiff_t len; } capture[LUA_MAXCAPTURES];
} matcher;

static const char *match_here(matcher *m, const char *s, const char *p);

/* One more step: every CHECK_EVERY steps, raise a pending stop. */
static void step(matcher *m) {
    if ((++m->steps & (CHECK_EVERY - 1)) == 0 && luashim_stop_reason(m->L) != LUASHIM_STOP_NONE)
        luashim_raise_stop(m->L);
}

/* Index of the open capture a back reference %1..%9 names. */
static int capture_index(matcher *m, int c) {
    int i = c - '1';
    if (i < 0 || i >= m->ncaptures || m->capture[i].len == OPEN)
        return luaL_error(m->L, "invalid capture index %%%d", i + 1);
    return i;
}

static int innermost_open_capture(matcher *m) {
    for (int i = m->ncaptures - 1; i >= 0; i--)
        if (m->capture[i].len == OPEN) return i;
    return luaL_error(m->L, "invalid pattern capture");
}

/* End of the single-character class starting at p. */
static const char *class_end(matcher *m, const char *p) {
    char c = *p++;
    if (c == ESCAPE) {
        if (p == m->pattern_end) luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 1;
    }
    if (c == '[') {
        if (*p == '^') p++;
        do {
            if (p == m->pattern_end) luaL_error(m->L, "malformed pattern (missing ']')");
            if (*(p++) == ESCAPE && p < m->pattern_end) p++;
        } while (*p != ']');
        return p + 1;
    }
    return p;
}

/* Does byte c belong to class %cl (upper case: the complement)? */
static int in_class(int c, int cl) {
    int yes;
    switch (tolower(cl)) {
    case 'a': yes = isalpha(c); break;
    case 'c': yes = iscntrl(c); break;
    case 'd': yes = isdigit(c); break;
    case 'g': yes = isgraph(c); break;
    case 'l': yes = islower(c); break;
    case 'p': yes = ispunct(c); break;
    case 's': yes = isspace(c); break;
    case 'u': yes = isupper(c); break;
    case 'w': yes = isalnum(c); break;
    case 'x': yes = isxdigit(c); break;
    case 'z': yes = (c == 0); break;
    default: return cl == c;
    }
    return islower(cl) ? yes != 0 : !yes;
}

/* Is c in the set [ ... ] from p ('[') to last (its ']')? */
static int in_set(int c, const char *p, const char *last) {
    int wanted = 1;
    if (p[1] == '^') {
        wanted = 0;
        p++;
    }
    while (++p < last) {
        if (*p == ESCAPE) {
            p++;
            if (in_class(c, (unsigned char)*p)) return wanted;
        } else if (p[1] == '-' && p + 2 < last) {
            p += 2;
            if ((unsigned char)p[-2] <= c && c <= (unsigned char)*p) return wanted;
        } else if ((unsigned char)*p == c) {
            return wanted;
        }
    }
    return !wanted;
}

static int single(matcher *m, const char *s, const char *p, const char *ep) {
    if (s >= m->subject_end) return 0;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return 1;
    case ESCAPE: return in_class(c, (unsigned char)p[1]);
    case '[': return in_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

static const char *balanced(matcher *m, const char *s, const char *p) {
    if (p >= m->pattern_end - 1) luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    if (s >= m->subject_end || *s != *p) return NULL;
    char open = p[0], close = p[1];
    int depth = 1;
    while (++s < m->subject_end) {
        if (*s == close) {
            if (--depth == 0) return s + 1;
        } else if (*s == open) {
            depth++;
        }
    }
    return NULL;
}

static const char *greedy(matcher *m, const char *s, const char *p, const char *ep) {
    ptrdiff_t n = 0;
    while (single(m, s + n, p, ep)) n++;
    for (; n >= 0; n--) {
        step(m);
        const char *r = match_here(m, s + n, ep + 1);
        if (r) return r;
    }
    return NULL;
}

static const char *lazy(matcher *m, const char *s, const char *p, const char *ep) {
    for (;;) {
        step(m);
        const char *r = match_here(m, s, ep + 1);
        if (r) return r;
        if (!single(m, s, p, ep)) return NULL;
        s++;
    }
}

static const char *open_capture(matcher *m, const char *s, const char *p, ptrdiff_t kind) {
    int n = m->ncaptures;
    if (n >= LUA_MAXCAPTURES) luaL_error(m->L, "too many captures");
    m->capture[n].start = s;
    m->capture[n].len = kind;
    m->ncaptures = n + 1;
    const char *r = match_here(m, s, p);
    if (r == NULL) m->ncaptures--;
    return r;
}

static const char *close_capture(matcher *m, const char *s, const char *p) {
    int i = innermost_open_capture(m);
    m->capture[i].len = s - m->capture[i].start;
    const char *r = match_here(m, s, p);
    if (r == NULL) m->capture[i].len = OPEN;
    return r;
}

static const char *back_reference(matcher *m, const char *s, int c) {
    int i = capture_index(m, c);
    size_t len = (size_t)m->capture[i].len;
    if ((size_t)(m->subject_end - s) >= len && memcmp(m->capture[i].start, s, len) == 0) return s + len;
    return NULL;
}

/* Matches pattern p at subject position s; returns the end of the match or NULL. */
static const char *match_here(matcher *m, const char *s, const char *p) {
    if (m->depth-- == 0) luaL_error(m->L, "pattern too complex");
    step(m);
    for (;;) {
        if (p == m->pattern_end) break;
        if (*p == '(') {
            s = p[1] == ')' ? open_capture(m, s, p + 2, POSITION) : open_capture(m, s, p + 1, OPEN);
            break;
        }
        if (*p == ')') {
            s = close_capture(m, s, p + 1);
            break;
        }
        if (*p == '$' && p + 1 == m->pattern_end) {
            s = s == m->subject_end ? s : NULL;
            break;
        }
        if (*p == ESCAPE && p[1] == 'b') {
            s = balanced(m, s, p + 2);
            if (s == NULL) break;
            p += 4;
            continue;
        }
        if (*p == ESCAPE && p[1] == 'f') {
            p += 2;
            if (*p != '[') luaL_error(m->L, "missing '[' after '%%f' in pattern");
            const char *ep = class_end(m, p);
            int before = s == m->subject ? 0 : (unsigned char)s[-1];
            int here = s < m->subject_end ? (unsigned char)*s : 0;
            if (!in_set(before, p, ep - 1) && in_set(here, p, ep - 1)) {
                p = ep;
                continue;
            }
            s = NULL;
            break;
        }
        if (*p == ESCAPE && isdigit((unsigned char)p[1])) {
            s = back_reference(m, s, (unsigned char)p[1]);
            if (s == NULL) break;
            p += 2;
            continue;
        }
        const char *ep = class_end(m, p);
        if (!single(m, s, p, ep)) {
            if (*ep == '*' || *ep == '?' || *ep == '-') {
                p = ep + 1;
                continue;
            }
            s = NULL;
            break;
        }
        if (*ep == '?') {
            const char *r = match_here(m, s + 1, ep + 1);
            if (r) {
                s = r;
                break;
            }
            p = ep + 1;
            continue;
        }
        if (*ep == '+') {
            s = greedy(m, s + 1, p, ep);
            break;
        }
        if (*ep == '*') {
            s = greedy(m, s, p, ep);
            break;
        }
        if (*ep == '-') {
            s = lazy(m, s, p, ep);
            break;
        }
        s++;
        p = ep;
    }
    m->depth++;
    return s;
}

/* ---- captures ---- */

/* Capture i of a match s..e: its text (returns its length) or, for a position
 * capture, pushes the position and returns POSITION. With no captures, capture
 * 0 is the whole match. */
static ptrdiff_t get_capture(matcher *m, int i, const char *s, const char *e, const char **text) {
    if (i >= m->ncaptures) {
        if (i != 0) luaL_error(m->L, "invalid capture index %%%d", i + 1);
        *text = s;
        return e - s;
    }
    ptrdiff_t len = m->capture[i].len;
    *text = m->capture[i].start;
    if (len == OPEN) luaL_error(m->L, "unfinished capture");
    else if (len == POSITION) lua_pushinteger(m->L, (m->capture[i].start - m->subject) + 1);
    return len;
}

static void push_capture(matcher *m, int i, const char *s, const char *e) {
    const char *text;
    ptrdiff_t len = get_capture(m, i, s, e, &text);
    if (len != POSITION) lua_pushlstring(m->L, text, (size_t)len);
}

static int push_captures(matcher *m, const char *s, const char *e) {
    int n = (m->ncaptures == 0 && s) ? 1 : m->ncaptures;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++) push_capture(m, i, s, e);
    return n;
}

static void start(matcher *m, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
    m->L = L;
    m->depth = MAX_DEPTH;
    m->steps = 0;
    m->subject = s;
    m->subject_end = s + ls;
    m->pattern_end = p + lp;
}

static void restart(matcher *m) { m->ncaptures = 0; }

/* ---- the library functions ---- */

static size_t start_position(lua_Integer pos, size_t len) {
    if (pos > 0) return (size_t)pos;
    if (pos == 0) return 1;
    if (pos < -(lua_Integer)len) return 1;
    return len + (size_t)pos + 1;
}

static int has_specials(const char *p, size_t lp) {
    for (size_t i = 0; i < lp; i++)
        if (p[i] != '\0' && strchr(SPECIAL_CHARS, p[i])) return 1;
    return 0;
}

static const char *find_plain(const char *s, size_t ls, const char *p, size_t lp) {
    if (lp == 0) return s;
    if (lp > ls) return NULL;
    return memmem(s, ls, p, lp);
}

static int find_or_match(lua_State *L, int find) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_position(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        const char *at = find_plain(s + init, ls - init, p, lp);
        if (at) {
            lua_pushinteger(L, (at - s) + 1);
            lua_pushinteger(L, (lua_Integer)((at - s) + (ptrdiff_t)lp));
            return 2;
        }
    } else {
        matcher m;
        const char *from = s + init;
        int anchored = (*p == '^');
        if (anchored) {
            p++;
            lp--;
        }
        start(&m, L, s, ls, p, lp);
        do {
            restart(&m);
            const char *e = match_here(&m, from, p);
            if (e) {
                if (find) {
                    lua_pushinteger(L, (from - s) + 1);
                    lua_pushinteger(L, e - s);
                    return push_captures(&m, NULL, 0) + 2;
                }
                return push_captures(&m, from, e);
            }
        } while (from++ < m.subject_end && !anchored);
    }
    luaL_pushfail(L);
    return 1;
}

static int sb_find(lua_State *L) { return find_or_match(L, 1); }
static int sb_match(lua_State *L) { return find_or_match(L, 0); }

typedef struct gmatch_state {
    const char *at, *pattern, *last;
    matcher m;
} gmatch_state;

static int gmatch_step(lua_State *L) {
    gmatch_state *g = (gmatch_state *)lua_touserdata(L, lua_upvalueindex(3));
    g->m.L = L;
    for (const char *s = g->at; s <= g->m.subject_end; s++) {
        restart(&g->m);
        const char *e = match_here(&g->m, s, g->pattern);
        if (e != NULL && e != g->last) {
            g->at = g->last = e;
            return push_captures(&g->m, s, e);
        }
    }
    return 0;
}

static int sb_gmatch(lua_State *L) {
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_position(luaL_optinteger(L, 3, 1), ls) - 1;
    lua_settop(L, 2);
    gmatch_state *g = (gmatch_state *)lua_newuserdatauv(L, sizeof(gmatch_state), 0);
    if (init > ls) init = ls + 1;
    start(&g->m, L, s, ls, p, lp);
    g->at = s + init;
    g->pattern = p;
    g->last = NULL;
    lua_pushcclosure(L, gmatch_step, 3);
    return 1;
}

/* Appends the replacement string (argument 3) with %0-%9 and %% expanded. */
static void add_template(matcher *m, luaL_Buffer *b, const char *s, const char *e) {
    lua_State *L = m->L;
    size_t l;
    const char *t = lua_tolstring(L, 3, &l);
    const char *pct;
    while ((pct = memchr(t, ESCAPE, l)) != NULL) {
        luaL_addlstring(b, t, (size_t)(pct - t));
        pct++;
        if (*pct == ESCAPE) {
            luaL_addchar(b, *pct);
        } else if (*pct == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit((unsigned char)*pct)) {
            const char *text;
            ptrdiff_t len = get_capture(m, *pct - '1', s, e, &text);
            if (len == POSITION) luaL_addvalue(b);
            else luaL_addlstring(b, text, (size_t)len);
        } else {
            luaL_error(L, "invalid use of '%c' in replacement string", ESCAPE);
        }
        l -= (size_t)(pct + 1 - t);
        t = pct + 1;
    }
    luaL_addlstring(b, t, l);
}

/* Appends the replacement of match s..e; returns whether the text changed. */
static int add_replacement(matcher *m, luaL_Buffer *b, const char *s, const char *e, int kind) {
    lua_State *L = m->L;
    if (kind == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = push_captures(m, s, e);
        lua_call(L, n, 1);
    } else if (kind == LUA_TTABLE) {
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        add_template(m, b, s, e);
        return 1;
    }
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return 0;
    }
    if (!lua_isstring(L, -1)) return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return 1;
}

static int sb_gsub(lua_State *L) {
    size_t ls, lp;
    const char *src = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    const char *last = NULL;
    int kind = lua_type(L, 3);
    lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    int anchored = (*p == '^');
    lua_Integer n = 0;
    int changed = 0;
    matcher m;
    luaL_Buffer b;
    luaL_argexpected(L, kind == LUA_TNUMBER || kind == LUA_TSTRING || kind == LUA_TFUNCTION || kind == LUA_TTABLE, 3,
                     "string/function/table");
    luaL_buffinit(L, &b);
    if (anchored) {
        p++;
        lp--;
    }
    start(&m, L, src, ls, p, lp);
    while (n < max) {
        restart(&m);
        const char *e = match_here(&m, src, p);
        if (e != NULL && e != last) {
            n++;
            changed = add_replacement(&m, &b, src, e, kind) | changed;
            src = last = e;
        } else if (src < m.subject_end) {
            luaL_addchar(&b, *src++);
        } else {
            break;
        }
        if (anchored) break;
    }
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, src, (size_t)(m.subject_end - src));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    return 2;
}

void luashim_install_patterns(lua_State *L) {
    static const luaL_Reg fns[] = {
        { "find", sb_find }, { "match", sb_match }, { "gmatch", sb_gmatch }, { "gsub", sb_gsub }, { NULL, NULL },
    };
    for (const luaL_Reg *f = fns; f->name; f++) {
        lua_pushnil(L);                       /* an unused upvalue: a closure, not a light function */
        lua_pushcclosure(L, f->func, 1);
        lua_setfield(L, -2, f->name);
    }
}
