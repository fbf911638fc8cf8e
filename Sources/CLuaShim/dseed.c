/*
 * dseed.c — a fixed string-hash seed for a new state (internal to CLuaShim).
 *
 * lua_newstate seeds string hashing from the time and ASLR addresses, so the
 * order in which `pairs` visits string keys differs between runs. Right after
 * lua_newstate, before anything else is created, this replaces the seed with
 * a fixed one and rehashes the strings already interned (reserved words and
 * metamethod names).
 *
 * Lua's API has no door to the seed, so this reads a few fields of Lua 5.4's
 * internal structures through the minimal mirror below (written for the 5.4
 * series: lstate.h's global_State up to `seed`, lobject.h's TString). Because
 * a different Lua build could lay them out differently, the mirror is checked
 * before anything is written: the allocator fields must equal lua_getallocf's
 * answer, the string table must be a power-of-two array holding exactly
 * `nuse` strings, and every interned string's stored hash must equal the
 * hash recomputed from the seed read (Lua's documented string hash). Any
 * mismatch leaves the state untouched and reports failure.
 */
#include "dseed.h"

#include <stddef.h>
#include <string.h>

/* ---- the minimal mirror of Lua 5.4's layouts ---- */

typedef struct mirror_string {        /* TString */
    struct mirror_string *next;       /* CommonHeader */
    unsigned char tt, marked;
    unsigned char extra, shrlen;
    unsigned int hash;
    struct mirror_string *hnext;      /* u.hnext for short strings */
    char contents[1];
} mirror_string;

typedef struct mirror_value {         /* TValue */
    void *value;
    unsigned char tt;
} mirror_value;

typedef struct mirror_global {        /* global_State, first fields */
    lua_Alloc frealloc;
    void *ud;
    ptrdiff_t totalbytes, GCdebt;
    size_t GCestimate, lastatomic;
    mirror_string **hash;             /* strt */
    int nuse, size;
    mirror_value l_registry, nilvalue;
    unsigned int seed;
} mirror_global;

typedef struct mirror_state {         /* lua_State, first fields */
    void *next;
    unsigned char tt, marked, status, allowhook;
    unsigned short nci;
    void *top;
    mirror_global *l_G;
} mirror_state;

#define SHORT_STRING_TAG (4 | (0 << 4)) /* LUA_VSHRSTR */

/* lstring.c's luaS_hash, as the reference manual's implementation defines it. */
static unsigned int string_hash(const char *s, size_t l, unsigned int seed) {
    unsigned int h = seed ^ (unsigned int)l;
    for (; l > 0; l--) h ^= ((h << 5) + (h >> 2) + (unsigned char)s[l - 1]);
    return h;
}

/* Checks the mirror against the live state; returns the global state or NULL. */
static mirror_global *checked_global(lua_State *L) {
    mirror_global *g = ((mirror_state *)(void *)L)->l_G;
    void *ud = NULL;
    lua_Alloc f = lua_getallocf(L, &ud);
    if (g == NULL || g->frealloc != f || g->ud != ud) return NULL;
    if (g->size <= 0 || (g->size & (g->size - 1)) != 0 || g->nuse <= 0 || g->nuse > 4096) return NULL;
    int count = 0;
    for (int i = 0; i < g->size; i++) {
        for (mirror_string *s = g->hash[i]; s; s = s->hnext) {
            if (s->tt != SHORT_STRING_TAG || s->shrlen > 40) return NULL;
            if (string_hash(s->contents, s->shrlen, g->seed) != s->hash) return NULL;
            if ((int)(s->hash & (unsigned int)(g->size - 1)) != i) return NULL;
            if (++count > g->nuse) return NULL;
        }
    }
    return count == g->nuse ? g : NULL;
}

int dseed_fix(lua_State *L, unsigned int seed) {
    mirror_global *g = checked_global(L);
    if (g == NULL) return -1;
    mirror_string *all = NULL;                  /* unlink every string into one list */
    for (int i = 0; i < g->size; i++) {
        mirror_string *s = g->hash[i];
        while (s) {
            mirror_string *following = s->hnext;
            s->hnext = all;
            all = s;
            s = following;
        }
        g->hash[i] = NULL;
    }
    g->seed = seed;
    while (all) {                               /* rehash into the buckets */
        mirror_string *following = all->hnext;
        all->hash = string_hash(all->contents, all->shrlen, seed);
        int b = (int)(all->hash & (unsigned int)(g->size - 1));
        all->hnext = g->hash[b];
        g->hash[b] = all;
        all = following;
    }
    return checked_global(L) ? 0 : -1;
}
