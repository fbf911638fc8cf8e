/*
 * dheap.c — see dheap.h. Size classes: 16-byte steps up to 256 bytes, then
 * four steps per power of two. A block's class follows from the size Lua
 * passes back on free/realloc, so blocks carry no header. Freed blocks of
 * 128 KiB and more give their pages back to the system (madvise) and keep
 * their address for reuse.
 */
#define _GNU_SOURCE
#include "dheap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ALIGN4G ((size_t)1 << 32)
#define COMMIT_STEP ((size_t)4 << 20)
#define PAGE ((size_t)4096)
#define RELEASE_AT ((size_t)128 << 10)

/* The class of a request of n bytes (n >= 1), and the block size of a class. */
static int size_class(size_t n) {
    if (n <= 256) return (int)((n + 15) >> 4) - 1;               /* 0..15 */
    size_t m = n - 1;
    int k = 63 - __builtin_clzll((unsigned long long)m);           /* 2^k <= n-1 < 2^(k+1) */
    size_t quarter = (size_t)1 << (k - 2);
    int j = (int)((m - ((size_t)1 << k)) / quarter);               /* 0..3 */
    return 16 + (k - 8) * 4 + j;
}

static size_t class_size(int c) {
    if (c < 16) return (size_t)(c + 1) << 4;
    int k = 8 + (c - 16) / 4, j = (c - 16) % 4;
    return ((size_t)1 << k) + (size_t)(j + 1) * ((size_t)1 << (k - 2));
}

/* Maps `size` bytes of inaccessible address space at a 4 GiB-aligned address, or returns NULL.
 * First by over-reserving 4 GiB and trimming; where the address space is capped (`ulimit -v`)
 * and that fails, by asking for the region at aligned addresses without replacing anything. */
static char *map_aligned(size_t size) {
    const int prot = PROT_NONE, flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    char *raw = mmap(NULL, size + ALIGN4G, prot, flags, -1, 0);
    if (raw != MAP_FAILED) {
        uintptr_t start = ((uintptr_t)raw + ALIGN4G - 1) & ~(uintptr_t)(ALIGN4G - 1);
        size_t head = start - (uintptr_t)raw;
        if (head) munmap(raw, head);
        size_t tail = ALIGN4G - head;
        if (tail) munmap((char *)start + size, tail);
        return (char *)start;
    }
    raw = mmap(NULL, size, prot, flags, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    if (((uintptr_t)raw & (ALIGN4G - 1)) == 0) return raw;
    uintptr_t hint = ((uintptr_t)raw + ALIGN4G - 1) & ~(uintptr_t)(ALIGN4G - 1);
    munmap(raw, size);
    for (int attempt = 0; attempt < 64; attempt++, hint += ALIGN4G) {
        char *p = mmap((void *)hint, size, prot, flags | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == (char *)hint) return p;
        if (p != MAP_FAILED) munmap(p, size); /* a kernel without MAP_FIXED_NOREPLACE placed it elsewhere */
    }
    return NULL;
}

int dheap_init(dheap *h, size_t reserve) {
    memset(h, 0, sizeof *h);
    reserve = (reserve + COMMIT_STEP - 1) & ~(COMMIT_STEP - 1);
    char *start = map_aligned(reserve);
    if (!start) return -1;
    h->base = start;
    h->reserved = reserve;
    return 0;
}

void dheap_destroy(dheap *h) {
    if (h->base) munmap(h->base, h->reserved);
    h->base = NULL;
}

static int in_region(const dheap *h, const void *p) {
    return h->base && (const char *)p >= h->base && (const char *)p < h->base + h->reserved;
}

size_t dheap_offset(const dheap *h, const void *p) {
    return in_region(h, p) ? (size_t)((const char *)p - h->base) : (size_t)-1;
}

/* A fresh block of `size` bytes from the bump pointer, committing pages as needed. */
static void *bump(dheap *h, size_t size) {
    if (h->reserved - h->bump < size) return NULL;
    size_t end = h->bump + size;
    if (end > h->committed) {
        size_t want = (end - h->committed + COMMIT_STEP - 1) & ~(COMMIT_STEP - 1);
        if (want > h->reserved - h->committed) want = h->reserved - h->committed;
        if (mprotect(h->base + h->committed, want, PROT_READ | PROT_WRITE) != 0) return NULL;
        h->committed += want;
    }
    void *p = h->base + h->bump;
    h->bump = end;
    return p;
}

static void *block_alloc(dheap *h, size_t n) {
    if (n > ((size_t)1 << 40)) return NULL;
    int c = size_class(n);
    void *p = h->free_list[c];
    if (p) {
        h->free_list[c] = *(void **)p;
        return p;
    }
    p = bump(h, class_size(c));
    if (p) return p;
    h->fallback = 1;
    return malloc(n);
}

static void block_free(dheap *h, void *p, size_t n) {
    if (!in_region(h, p)) {
        free(p);
        return;
    }
    int c = size_class(n);
    size_t size = class_size(c);
    if (size >= RELEASE_AT) {
        uintptr_t from = ((uintptr_t)p + sizeof(void *) + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
        uintptr_t to = ((uintptr_t)p + size) & ~(uintptr_t)(PAGE - 1);
        if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
    }
    *(void **)p = h->free_list[c];
    h->free_list[c] = p;
}

void *dheap_realloc(dheap *h, void *ptr, size_t osize, size_t nsize) {
    if (nsize == 0) {
        if (ptr) block_free(h, ptr, osize);
        return NULL;
    }
    if (ptr == NULL) return block_alloc(h, nsize);
    if (in_region(h, ptr) && size_class(osize) == size_class(nsize)) return ptr;
    void *q = block_alloc(h, nsize);
    if (q == NULL) return nsize < osize ? ptr : NULL; /* a shrink never fails */
    memcpy(q, ptr, osize < nsize ? osize : nsize);
    block_free(h, ptr, osize);
    return q;
}
