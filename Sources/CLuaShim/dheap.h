/*
 * dheap.h — a deterministic heap for one Lua state (internal to CLuaShim).
 *
 * Lua hashes tables, closures, userdata and threads by the low 32 bits of
 * their address. This heap hands out addresses inside a private region whose
 * base is aligned to 4 GiB, by size class, with LIFO free lists and a bump
 * pointer: the same sequence of allocations and frees gives the same offsets
 * in every process and thread, so `pairs` visits such keys in the same order
 * everywhere. Not thread-safe (one state, one thread at a time).
 */
#ifndef DHEAP_H
#define DHEAP_H

#include <stddef.h>

#define DHEAP_CLASSES 160

typedef struct dheap {
    char *base;            /* region start (4 GiB aligned) */
    size_t reserved;       /* bytes of address space reserved */
    size_t committed;      /* bytes made read/write from base */
    size_t bump;           /* offset of the first never-used byte */
    void *free_list[DHEAP_CLASSES];
    int fallback;          /* region exhausted at least once: malloc used since */
} dheap;

/* Reserves the region; returns 0 on success, -1 if the address space could not be reserved. */
int dheap_init(dheap *h, size_t reserve);
/* Returns the region to the system. Blocks from the malloc fallback must be freed first. */
void dheap_destroy(dheap *h);
/* lua_Alloc semantics: osize is the block's size when ptr != NULL; nsize 0 frees. */
void *dheap_realloc(dheap *h, void *ptr, size_t osize, size_t nsize);
/* Offset of p inside the region (for deterministic identities), or (size_t)-1. */
size_t dheap_offset(const dheap *h, const void *p);

#endif
