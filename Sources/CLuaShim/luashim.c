/*
 * luashim.c — the only place in Sensorium where Lua may longjmp.
 *
 * Sections: the host record, the capped allocator, stops (hook, watchdog,
 * SIGINT), trampolines, protected helpers, coroutine guards, deterministic
 * iteration, loading, and macro forms. Each function states its stack effect.
 */
#define _GNU_SOURCE
#include "luashim.h"
#include "dheap.h"
#include "dseed.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* ===================================================================== */
/* The host record, kept in the state's extra space (copied to threads)  */
/* ===================================================================== */

typedef struct luashim_host {
    /* memory */
    size_t used, limit, peak, refused;
    int in_host;                 /* > 0 while Swift runs: the cap is soft */
    int overshoot;               /* Swift allocated past the cap */
    int collecting;              /* refused once: Lua is collecting before it retries */
    /* stops */
    volatile sig_atomic_t stop;  /* enum luashim_stop */
    long long budget, instr_used;
    int step;
    volatile sig_atomic_t lua_running;
    lua_State *main;
    lua_State *volatile running; /* innermost coroutine being resumed, or NULL */
    /* watchdog */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t watchdog;
    int watchdog_started, quit;
    long long deadline_ns, deadline_ms;
    /* embedder */
    void *context;
    int deferred_pending;        /* tables of results not computed yet (luashim_push_deferred_table) */
    int deferred_failed;         /* failed deferred tables not collected yet (luashim_fail_deferred_table) */
    luashim_Dispatcher dispatcher;
    luashim_Release release;
    luashim_UserdataRelease udrelease;
    int overshoot_msg_ref;
    dheap heap;                  /* the state's deterministic heap */
} luashim_host;

static luashim_host *gethost(lua_State *L) { return *(luashim_host **)lua_getextraspace(L); }

static const char TRACEBACK_KEY = 'T';
static const char CLOSUREBOX_MT[] = "luashim.closurebox";
static const char NEXT_CACHE_KEY = 'N';

static long long monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ===================================================================== */
/* Stops: the hook raises, sticky, until the host clears the stop        */
/* ===================================================================== */

static void format_bytes(char *out, size_t n, size_t bytes) {
    if (bytes >= 1024 * 1024) snprintf(out, n, "%.0f MiB", (double)bytes / (1024.0 * 1024.0));
    else if (bytes >= 1024) snprintf(out, n, "%.0f KiB", (double)bytes / 1024.0);
    else snprintf(out, n, "%zu bytes", bytes);
}

/* The count hook: counts the instruction budget and raises a stop. Once a stop
 * is set it re-arms itself to fire on every instruction, so a script's own
 * pcall cannot carry on (Redis's SCRIPT KILL trick). */
static void raise_stop(lua_State *L, int level);

static void stop_hook(lua_State *L, lua_Debug *ar) {
    luashim_host *h = gethost(L);
    (void)ar;
    if (h->stop == LUASHIM_STOP_NONE && h->budget > 0) {
        h->instr_used += h->step;
        if (h->instr_used >= h->budget) h->stop = LUASHIM_STOP_BUDGET;
    }
    if (h->stop == LUASHIM_STOP_NONE) return;
    lua_sethook(L, stop_hook, LUA_MASKCOUNT, 1);
    raise_stop(L, 0); /* inside a hook, level 0 is the Lua function being run */
}

/* Raises the stop in force, prefixed with the position of stack level `level`,
 * or of the first level above it that runs Lua code (a stop raised in a C
 * function that a C function called, as table.sort's comparisons, names the
 * script's line). */
static void raise_stop(lua_State *L, int level) {
    luashim_host *h = gethost(L);
    char size[32];
    lua_Debug ar;
    for (int l = level; lua_getstack(L, l, &ar); l++) {
        lua_getinfo(L, "l", &ar);
        if (ar.currentline > 0) { level = l; break; }
    }
    luaL_where(L, level);
    switch (h->stop) {
    case LUASHIM_STOP_BUDGET:
        lua_pushfstring(L, "stopped: instruction budget of %I instructions exceeded", (lua_Integer)h->budget);
        break;
    case LUASHIM_STOP_DEADLINE:
        lua_pushfstring(L, "stopped: time limit of %I ms exceeded", (lua_Integer)h->deadline_ms);
        break;
    case LUASHIM_STOP_MEMORY: {
        format_bytes(size, sizeof size, h->limit);
        if (h->refused) {
            char refused[32];
            format_bytes(refused, sizeof refused, h->refused);
            lua_pushfstring(L, "stopped: memory limit of %s exceeded (an allocation of %s was refused)", size, refused);
        } else {
            lua_pushfstring(L, "stopped: memory limit of %s exceeded", size);
        }
        break;
    }
    default:
        lua_pushliteral(L, "stopped: interrupted");
    }
    lua_concat(L, 2);
    lua_error(L);
}

/* Arms the stop hook on the main thread and on the running coroutine. */
static void arm_hooks(luashim_host *h) {
    lua_sethook(h->main, stop_hook, LUA_MASKCOUNT, 1);
    lua_State *co = h->running;
    if (co) lua_sethook(co, stop_hook, LUA_MASKCOUNT, 1);
}

static void trigger_stop(luashim_host *h, int reason) {
    if (h->stop != LUASHIM_STOP_NONE) return;
    h->stop = reason;
    arm_hooks(h);
}

/* Restores the normal hook (budget counting or none) on the main thread. */
static void restore_hook(luashim_host *h) {
    if (h->budget > 0) lua_sethook(h->main, stop_hook, LUA_MASKCOUNT, h->step);
    else lua_sethook(h->main, NULL, 0, 0);
}

/* ===================================================================== */
/* The capped allocator                                                   */
/* ===================================================================== */

/* Hard in Lua code: past the limit the stop is raised at the next
 * instruction, and a single request past limit + headroom is refused outright.
 * Soft while Swift runs (in_host > 0): the allocation succeeds and the
 * trampoline raises once the Swift frame has returned. */
static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    luashim_host *h = (luashim_host *)ud;
    if (ptr == NULL) osize = 0;
    if (nsize == 0) {
        dheap_realloc(&h->heap, ptr, osize, 0);
        h->used -= osize;
        return NULL;
    }
    if (h->limit && nsize > osize) {
        size_t next = h->used - osize + nsize;
        if (next > h->limit) {
            if (h->in_host > 0) {
                h->overshoot = 1;
            } else if (!h->collecting) {
                /* Refuse once: Lua runs an emergency full collection and asks again. */
                h->collecting = 1;
                return NULL;
            } else {
                /* Still over the limit after collecting: the script is stopped. */
                size_t headroom = h->limit / 4 > (1u << 20) ? h->limit / 4 : (1u << 20);
                h->collecting = 0;
                if (next > h->limit + headroom) h->refused = nsize;
                trigger_stop(h, LUASHIM_STOP_MEMORY);
                if (next > h->limit + headroom) return NULL;
            }
        } else {
            h->collecting = 0;
        }
    }
    void *p = dheap_realloc(&h->heap, ptr, osize, nsize);
    if (p == NULL) return NULL;
    h->used = h->used - osize + nsize;
    if (h->used > h->peak) h->peak = h->used;
    return p;
}

/* ===================================================================== */
/* Watchdog (deadline) and SIGINT                                         */
/* ===================================================================== */

static void *watchdog_main(void *arg) {
    luashim_host *h = (luashim_host *)arg;
    pthread_mutex_lock(&h->lock);
    while (!h->quit) {
        if (h->deadline_ns == 0) {
            pthread_cond_wait(&h->cond, &h->lock);
            continue;
        }
        struct timespec ts = { h->deadline_ns / 1000000000LL, h->deadline_ns % 1000000000LL };
        pthread_cond_timedwait(&h->cond, &h->lock, &ts);
        if (h->deadline_ns != 0 && monotonic_ns() >= h->deadline_ns) {
            h->deadline_ns = 0;
            if (h->lua_running) trigger_stop(h, LUASHIM_STOP_DEADLINE);
        }
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

void luashim_deadline_arm(lua_State *L, long long ms) {
    luashim_host *h = gethost(L);
    if (ms <= 0) { luashim_deadline_disarm(L); return; }
    pthread_mutex_lock(&h->lock);
    if (!h->watchdog_started) {
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_destroy(&h->cond);
        pthread_cond_init(&h->cond, &attr);
        pthread_condattr_destroy(&attr);
        if (pthread_create(&h->watchdog, NULL, watchdog_main, h) == 0) h->watchdog_started = 1;
    }
    h->deadline_ms = ms;
    h->deadline_ns = monotonic_ns() + ms * 1000000LL;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

void luashim_deadline_disarm(lua_State *L) {
    luashim_host *h = gethost(L);
    pthread_mutex_lock(&h->lock);
    h->deadline_ns = 0;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

static luashim_host *volatile sigint_host = NULL;
static volatile sig_atomic_t sigint_flag = 0;

static void on_sigint(int sig) {
    (void)sig;
    sigint_flag = 1;
    luashim_host *h = sigint_host;
    if (h && h->lua_running) trigger_stop(h, LUASHIM_STOP_INTERRUPT); /* as lua.c's laction */
}

void luashim_install_sigint(lua_State *L) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (L) {
        sigint_host = gethost(L);
        sa.sa_handler = on_sigint;
    } else {
        sigint_host = NULL;
        sa.sa_handler = SIG_DFL;
    }
    sigaction(SIGINT, &sa, NULL);
}

int luashim_take_sigint(void) {
    int was = sigint_flag;
    sigint_flag = 0;
    return was;
}

void luashim_request_interrupt(lua_State *L) {
    luashim_host *h = gethost(L);
    trigger_stop(h, LUASHIM_STOP_INTERRUPT);
}

int luashim_stop_reason(lua_State *L) { return gethost(L)->stop; }

void luashim_clear_stop(lua_State *L) {
    luashim_host *h = gethost(L);
    pthread_mutex_lock(&h->lock);
    h->stop = LUASHIM_STOP_NONE;
    h->refused = 0;
    restore_hook(h);
    pthread_mutex_unlock(&h->lock);
}

size_t luashim_refused_allocation(lua_State *L) { return gethost(L)->refused; }

void luashim_stop_for_memory(lua_State *L, size_t requested) {
    luashim_host *h = gethost(L);
    h->refused = requested;
    trigger_stop(h, LUASHIM_STOP_MEMORY);
}

int luashim_raise_stop(lua_State *L) {
    raise_stop(L, 1);
    return 0;
}

size_t luashim_memory_available(lua_State *L) {
    luashim_host *h = gethost(L);
    if (h->limit == 0) return (size_t)-1;
    return h->used < h->limit ? h->limit - h->used : 0;
}

void luashim_set_instruction_budget(lua_State *L, long long budget, int step) {
    luashim_host *h = gethost(L);
    h->budget = budget > 0 ? budget : 0;
    h->step = step > 0 ? step : 1000;
    h->instr_used = 0;
    if (h->stop == LUASHIM_STOP_NONE) restore_hook(h);
}

long long luashim_instructions_used(lua_State *L) { return gethost(L)->instr_used; }

/* ===================================================================== */
/* State lifecycle                                                        */
/* ===================================================================== */

/* The fixed string-hash seed every state gets (see dseed.c). */
#define LUASHIM_STRING_SEED 0x5e4503u
/* Address space each state's heap reserves (committed only as used) where nothing caps it... */
#define LUASHIM_HEAP_RESERVE ((size_t)32 << 30)
/* ...and never less than this: past the region, the heap falls back to malloc. */
#define LUASHIM_HEAP_RESERVE_MIN ((size_t)64 << 20)

size_t luashim_address_space_cap(void) {
    struct rlimit cap;
    if (getrlimit(RLIMIT_AS, &cap) != 0 || cap.rlim_cur == RLIM_INFINITY) return 0;
    return (size_t)cap.rlim_cur;
}

/* The reserve for a new state's heap. Without an address-space cap: LUASHIM_HEAP_RESERVE.
 * Under one (`ulimit -v`, as clusters set it): the state's memory limit, or a sixteenth of
 * the cap for a state without one, within [LUASHIM_HEAP_RESERVE_MIN, LUASHIM_HEAP_RESERVE].
 * It follows from the cap and the limit alone, never from what other threads hold at that
 * moment, so a run under a cap fits or fails the same way every time (the host checks the
 * sum for its --jobs before any work: luashim_heap_reserve_for). */
size_t luashim_heap_reserve_for(size_t memory_limit) {
    size_t cap = luashim_address_space_cap();
    if (cap == 0) return LUASHIM_HEAP_RESERVE;
    size_t reserve = memory_limit > 0 ? memory_limit : cap / 16;
    reserve = (reserve + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
    if (reserve > LUASHIM_HEAP_RESERVE) reserve = LUASHIM_HEAP_RESERVE;
    return reserve < LUASHIM_HEAP_RESERVE_MIN ? LUASHIM_HEAP_RESERVE_MIN : reserve;
}

static const char *newstate_error = NULL;

const char *luashim_newstate_error(void) { return newstate_error; }

static void destroy_host(luashim_host *h) {
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->cond);
    dheap_destroy(&h->heap);
    free(h);
}

lua_State *luashim_newstate(size_t memory_limit) {
    luashim_host *h = (luashim_host *)calloc(1, sizeof *h);
    if (!h) return NULL;
    if (dheap_init(&h->heap, luashim_heap_reserve_for(memory_limit)) != 0) {
        free(h);
        newstate_error = "cannot reserve address space for the Lua heap";
        return NULL;
    }
    h->limit = memory_limit;
    h->in_host = 1; /* Swift owns the thread until a protected call enters Lua */
    h->step = 1000;
    h->overshoot_msg_ref = LUA_NOREF;
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cond, NULL);
    lua_State *L = lua_newstate(capped_alloc, h);
    if (!L) {
        destroy_host(h);
        newstate_error = "cannot create a Lua state: out of memory";
        return NULL;
    }
    if (dseed_fix(L, LUASHIM_STRING_SEED) != 0) {
        lua_close(L);
        destroy_host(h);
        newstate_error = "the Lua library's internal layout is not Lua 5.4's as Sensorium expects "
                         "(string-hash seed check failed); Sensorium needs Debian's liblua5.4 (5.4.4)";
        return NULL;
    }
    *(luashim_host **)lua_getextraspace(L) = h;
    h->main = L;
    return L;
}

void luashim_close(lua_State *L) {
    luashim_host *h = gethost(L);
    if (sigint_host == h) luashim_install_sigint(NULL);
    pthread_mutex_lock(&h->lock);
    h->quit = 1;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
    if (h->watchdog_started) pthread_join(h->watchdog, NULL);
    h->in_host = 1;
    lua_close(L);
    destroy_host(h);
}

size_t luashim_heap_offset(lua_State *L, const void *p) { return dheap_offset(&gethost(L)->heap, p); }

void luashim_set_context(lua_State *L, void *context) { gethost(L)->context = context; }
void *luashim_get_context(lua_State *L) { return gethost(L)->context; }

static int closurebox_gc(lua_State *L) {
    void **slot = (void **)lua_touserdata(L, 1);
    luashim_host *h = gethost(L);
    if (slot && *slot && h->release) {
        h->release(*slot);
        *slot = NULL;
    }
    return 0;
}

/* Opens the standard libraries (with the stoppable pattern and library functions)
 * and the host's registry entries. Raises on a memory error. [-0, +0] */
static void open_libraries(lua_State *L) {
    luashim_host *h = gethost(L);
    luaL_openlibs(L);
    lua_getglobal(L, "string");
    luashim_install_patterns(L);
    luashim_install_stoppable(L);
    lua_pop(L, 1);
    lua_pushliteral(L, "not enough memory (a host function exceeded the memory limit)");
    h->overshoot_msg_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    luaL_newmetatable(L, CLOSUREBOX_MT);
    lua_pushcfunction(L, closurebox_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushliteral(L, "locked");
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
    lua_newtable(L);                                      /* next's snapshot cache */
    lua_newtable(L);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &NEXT_CACHE_KEY);
}

/* ===================================================================== */
/* Trampolines: Swift returns a count or a sentinel, C raises             */
/* ===================================================================== */

static int finish_host_call(lua_State *L, luashim_host *h, int n) {
    h->in_host--;
    if (h->overshoot && h->in_host == 0) {
        h->overshoot = 0;
        lua_settop(L, 0); /* drop what Swift pushed, and reclaim it now */
        lua_gc(L, LUA_GCCOLLECT);
        lua_rawgeti(L, LUA_REGISTRYINDEX, h->overshoot_msg_ref);
        return lua_error(L);
    }
    if (n == LUASHIM_RAISE) {
        if (lua_type(L, -1) == LUA_TSTRING) { /* like luaL_error: name the caller's line */
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
        }
        return lua_error(L);
    }
    if (n == LUASHIM_RAISE_NOPREFIX) return lua_error(L);
    if (n <= LUASHIM_YIELD_BASE) return lua_yield(L, LUASHIM_YIELD_BASE - n);
    return n;
}

static int fn_trampoline(lua_State *L) {
    luashim_SwiftFn fn = (luashim_SwiftFn)lua_touserdata(L, lua_upvalueindex(1));
    luashim_host *h = gethost(L);
    h->in_host++;
    return finish_host_call(L, h, fn(L));
}

static int closure_trampoline(lua_State *L) {
    void **slot = (void **)lua_touserdata(L, lua_upvalueindex(1));
    luashim_host *h = gethost(L);
    if (*slot == NULL) return 0; /* released while the state closes */
    h->in_host++;
    return finish_host_call(L, h, h->dispatcher(L, *slot));
}

void luashim_set_dispatcher(lua_State *L, luashim_Dispatcher dispatcher, luashim_Release release) {
    luashim_host *h = gethost(L);
    h->dispatcher = dispatcher;
    h->release = release;
}

void luashim_push_swiftfn(lua_State *L, luashim_SwiftFn fn) {
    lua_pushlightuserdata(L, (void *)fn);
    lua_pushcclosure(L, fn_trampoline, 1);
}

void luashim_push_closure(lua_State *L, void *box) {
    void **slot = (void **)lua_newuserdatauv(L, sizeof(void *), 0);
    *slot = box;
    luaL_setmetatable(L, CLOSUREBOX_MT);
    lua_pushcclosure(L, closure_trampoline, 1);
}

/* lua.c's pmain for the host: everything of a state's set-up that may raise,
 * in the one protected call of luashim_push_host_main. Argument 1 is the
 * Swift set-up's closure box (a light userdata; NULL for none), run through the
 * dispatcher as a host function once the libraries are open. */
static int host_main(lua_State *L) {
    luashim_host *h = gethost(L);
    void *box = lua_touserdata(L, 1);
    lua_settop(L, 0);
    open_libraries(L);
    luashim_install_coroutine_guards(L);
    luashim_install_deferred(L);
    luashim_close_light_functions(L);
    if (h->stop != LUASHIM_STOP_NONE) raise_stop(L, 0); /* a limit passed in C, where no hook runs */
    if (box != NULL) {
        h->in_host++;
        finish_host_call(L, h, h->dispatcher(L, box));
    }
    if (h->stop != LUASHIM_STOP_NONE) raise_stop(L, 0);
    return 0;
}

void luashim_push_host_main(lua_State *L, void *box) {
    lua_pushcfunction(L, host_main);
    lua_pushlightuserdata(L, box);
}

/* __gc and __close of host userdata: slot[0] the object, slot[1] its releaser. */
static int userdata_release(lua_State *L) {
    void **slot = (void **)lua_touserdata(L, 1);
    luashim_host *h = gethost(L);
    if (slot && slot[0] && h->udrelease) {
        void *object = slot[0];
        slot[0] = NULL;
        h->udrelease(object, slot[1]);
    }
    return 0;
}

void luashim_set_userdata_release(lua_State *L, luashim_UserdataRelease release) { gethost(L)->udrelease = release; }
void luashim_push_userdata_release(lua_State *L) { lua_pushcfunction(L, userdata_release); }

static int c_identity(lua_State *L) {
    lua_settop(L, 1);
    return 1;
}

void luashim_push_c_identity(lua_State *L) { lua_pushcfunction(L, c_identity); }

/* ===================================================================== */
/* Protected calls                                                        */
/* ===================================================================== */

/* Message handler: keeps a traceback of the error beside it and returns the
 * error value unchanged. Skips the traceback when memory is nearly exhausted. */
static int msghandler(lua_State *L) {
    luashim_host *h = gethost(L);
    if (h->limit == 0 || h->used + (256u << 10) < h->limit + h->limit / 4) {
        luaL_traceback(L, L, NULL, 1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &TRACEBACK_KEY);
    }
    lua_settop(L, 1);
    return 1;
}

int luashim_pcall(lua_State *L, int nargs, int nresults) {
    luashim_host *h = gethost(L);
    int base = lua_gettop(L) - nargs;
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &TRACEBACK_KEY);
    lua_pushcfunction(L, msghandler);
    lua_insert(L, base);
    int saved_in_host = h->in_host;
    int saved_running = h->lua_running;
    h->in_host = 0;
    h->overshoot = 0;
    h->lua_running = 1;
    int status = lua_pcall(L, nargs, nresults, base);
    h->lua_running = saved_running;
    h->in_host = saved_in_host;
    lua_remove(L, base);
    return status;
}

void luashim_push_last_traceback(lua_State *L) { lua_rawgetp(L, LUA_REGISTRYINDEX, &TRACEBACK_KEY); }

static int tolstring_body(lua_State *L) {
    luaL_tolstring(L, 1, NULL);
    return 1;
}

int luashim_tolstring_protected(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, tolstring_body);
    lua_pushvalue(L, idx);
    return luashim_pcall(L, 1, 1);
}

static int gettable_body(lua_State *L) {
    lua_gettable(L, 1);
    return 1;
}

int luashim_gettable_protected(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, gettable_body);
    lua_pushvalue(L, idx);
    lua_rotate(L, -3, -1); /* key, fn, t -> fn, t, key */
    lua_rotate(L, -3, 2);
    return luashim_pcall(L, 2, 1);
}

static int settable_body(lua_State *L) {
    lua_settable(L, 1);
    return 0;
}

int luashim_settable_protected(lua_State *L, int idx) {
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, settable_body); /* key, value, fn */
    lua_pushvalue(L, idx);               /* key, value, fn, t */
    lua_rotate(L, -4, 2);                /* fn, t, key, value */
    return luashim_pcall(L, 3, 0);
}

/* ===================================================================== */
/* Guards: the stop hook follows the running coroutine; pcall, xpcall and */
/* coroutine.resume pass uncatchable host errors on                       */
/* ===================================================================== */

/* Resumes `co` with `narg` values from L; returns the number of results moved
 * to L, or -1 with an error value on L's top (lcorolib's auxresume). */
static int guarded_resume(lua_State *L, lua_State *co, int narg) {
    luashim_host *h = gethost(L);
    if (h->stop != LUASHIM_STOP_NONE) {
        lua_pushliteral(L, "stopped");
        return -1;
    }
    if (!lua_checkstack(co, narg)) {
        lua_pushliteral(L, "too many arguments to resume");
        return -1;
    }
    lua_sethook(co, lua_gethook(L), lua_gethookmask(L), lua_gethookcount(L));
    pthread_mutex_lock(&h->lock);
    lua_State *previous = h->running;
    h->running = co;
    pthread_mutex_unlock(&h->lock);
    lua_xmove(L, co, narg);
    int nres = 0;
    int status = lua_resume(co, L, narg, &nres);
    pthread_mutex_lock(&h->lock);
    h->running = previous;
    pthread_mutex_unlock(&h->lock);
    if (status == LUA_OK || status == LUA_YIELD) {
        if (!lua_checkstack(L, nres + 1)) {
            lua_pop(co, nres);
            lua_pushliteral(L, "too many results to resume");
            return -1;
        }
        lua_xmove(co, L, nres);
        return nres;
    }
    lua_xmove(co, L, 1);
    return -1;
}

/* Whether the value at `idx` is an uncatchable host error. */
static int is_uncatchable(lua_State *L, int idx) {
    return lua_type(L, idx) == LUA_TUSERDATA && luaL_testudata(L, idx, LUASHIM_UNCATCHABLE_MT) != NULL;
}

static int guarded_coresume(lua_State *L) {
    lua_State *co = lua_tothread(L, 1);
    luaL_argexpected(L, co, 1, "coroutine");
    int r = guarded_resume(L, co, lua_gettop(L) - 1);
    if (gethost(L)->stop != LUASHIM_STOP_NONE) raise_stop(L, 1); /* re-raise in the resumer */
    if (r < 0 && is_uncatchable(L, -1)) return lua_error(L);      /* passed on, not returned */
    if (r < 0) {
        lua_pushboolean(L, 0);
        lua_insert(L, -2);
        return 2;
    }
    lua_pushboolean(L, 1);
    lua_insert(L, -(r + 1));
    return r + 1;
}

static int guarded_auxwrap(lua_State *L) {
    lua_State *co = lua_tothread(L, lua_upvalueindex(1));
    int r = guarded_resume(L, co, lua_gettop(L));
    if (gethost(L)->stop != LUASHIM_STOP_NONE) raise_stop(L, 1);
    if (r < 0) {
        int stat = lua_status(co);
        if (stat != LUA_OK && stat != LUA_YIELD) {
            stat = lua_resetthread(co);
            lua_xmove(co, L, 1);
        }
        if (stat != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
            luaL_where(L, 1);
            lua_insert(L, -2);
            lua_concat(L, 2);
        }
        return lua_error(L);
    }
    return r;
}

static int guarded_cowrap(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushcclosure(L, guarded_auxwrap, 1);
    return 1;
}

/* pcall and xpcall as the base library's, except that an uncatchable host error
 * is raised again in the caller instead of being returned as (false, error).
 * `extra` is the number of stack slots below the results' `true` (lua_pcallk's
 * continuation context), as lbaselib's continuation has it. */
static int settle_deferred_protected(lua_State *L, int msgh);

static int finish_guarded_pcall(lua_State *L, int status, lua_KContext extra) {
    /* LUA_YIELD here: the continuation of a call that yielded and then returned. */
    int ok = status == LUA_OK || status == LUA_YIELD;
    if (!ok && is_uncatchable(L, -1)) return lua_error(L);
    if (gethost(L)->deferred_pending && gethost(L)->stop == LUASHIM_STOP_NONE) {
        /* Results the call asked for and did not use are computed before pcall returns,
         * whether the call ended well or in an error, so that an error computing them is
         * this pcall's (through xpcall's handler, slot 2), as it would have been had they
         * been computed when asked for: before the call's own error, so it wins. */
        if (settle_deferred_protected(L, extra == 2 ? 2 : 0) != LUA_OK) {
            if (is_uncatchable(L, -1) || gethost(L)->stop != LUASHIM_STOP_NONE) return lua_error(L);
            lua_pushboolean(L, 0);
            lua_insert(L, -2);
            return 2;
        }
    }
    if (ok) return lua_gettop(L) - (int)extra;
    lua_pushboolean(L, 0);
    lua_pushvalue(L, -2);
    return 2;
}

static void settle_deferred(lua_State *L, int idx);

static int guarded_pcall(lua_State *L) {
    luaL_checkany(L, 1);
    /* Results asked for before the call are computed before it: their error is not its. */
    if (gethost(L)->deferred_pending) settle_deferred(L, 0);
    lua_pushboolean(L, 1); /* the first result when the call succeeds */
    lua_insert(L, 1);
    int status = lua_pcallk(L, lua_gettop(L) - 2, LUA_MULTRET, 0, 0, finish_guarded_pcall);
    return finish_guarded_pcall(L, status, 0);
}

/* xpcall's message handler, upvalue 1, is not run on an uncatchable host error,
 * nor when a stop is in force: the error value is kept. (Lua runs a message
 * handler with hooks off when the error comes from a hook, as the limits' stops
 * do, so a handler that loops would never be stopped.) */
static int guarded_handler(lua_State *L) {
    if (gethost(L)->stop != LUASHIM_STOP_NONE || is_uncatchable(L, 1)) {
        lua_settop(L, 1);
        return 1;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

static int guarded_xpcall(lua_State *L) {
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    if (gethost(L)->deferred_pending) settle_deferred(L, 0);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, guarded_handler, 1);
    lua_replace(L, 2);     /* slot 2: the handler */
    lua_pushboolean(L, 1); /* the first result when the call succeeds */
    lua_pushvalue(L, 1);   /* the function */
    lua_rotate(L, 3, 2);   /* both below the function's arguments */
    int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, finish_guarded_pcall);
    return finish_guarded_pcall(L, status, 2);
}

/* ---- deferred tables ------------------------------------------------------
 * A table of results the host computes when the script first uses them (see
 * LuaState+Deferred.swift): an empty table whose metatable (DEFERRED_MT) asks the
 * host's settle function (registry SETTLE_KEY) to fill every pending table, then
 * removes itself. The raw functions that see past metamethods (next, rawget,
 * rawset, rawlen, getmetatable, setmetatable) settle first when given one. */
static const char *const DEFERRED_MT = "luashim.deferred";
static const char *const SETTLE_KEY = "luashim.settle";
/* The base library's functions the wrappers call (the same in every state; written by
 * every state's set-up, possibly on several threads at once, so read and written atomically). */
static lua_CFunction base_next, base_rawget, base_rawset, base_rawlen, base_getmetatable, base_setmetatable;
#define BASE(f) (__atomic_load_n(&(f), __ATOMIC_RELAXED))

/* Calls the host's settle function with the table at `idx` (0: none), which is then
 * filled, or raises the error that computing it raised. Raises what it raises. [-0, +0] */
static void settle_deferred(lua_State *L, int idx) {
    if (lua_getfield(L, LUA_REGISTRYINDEX, SETTLE_KEY) != LUA_TFUNCTION) { lua_pop(L, 1); return; }
    if (idx != 0) lua_pushvalue(L, idx); else lua_pushnil(L);
    lua_call(L, 1, 0);
}

static int settle_deferred_call(lua_State *L) { settle_deferred(L, 0); return 0; }

/* settle_deferred in a protected call (`msgh`: its message handler's index, or 0): LUA_OK,
 * or the status with the error on top. [-0, +(0|1)] */
static int settle_deferred_protected(lua_State *L, int msgh) {
    lua_pushcfunction(L, settle_deferred_call);
    return lua_pcall(L, 0, 0, msgh);
}

/* The key (its address) of a failed table's error box in the table's own metatable. */
static const char FAILED_KEY = 0;

/* Settles when the value at `idx` is a pending deferred table; raises its error again
 * when it is a failed one. [-0, +0] */
static void settle_if_deferred(lua_State *L, int idx) {
    luashim_host *h = gethost(L);
    if ((!h->deferred_pending && !h->deferred_failed) || lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx)) return;
    luaL_getmetatable(L, DEFERRED_MT);
    int deferred = lua_rawequal(L, -1, -2);
    lua_pop(L, 1);
    if (!deferred && h->deferred_failed) {
        deferred = lua_rawgetp(L, -1, &FAILED_KEY) != LUA_TNIL; /* a failed one: raises */
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (deferred) settle_deferred(L, idx);
}

/* A failed table's metatable's __gc: one failed table fewer. */
static int failed_gc(lua_State *L) {
    gethost(L)->deferred_failed--;
    return 0;
}

static int deferred_index(lua_State *L) { settle_deferred(L, 1); lua_settop(L, 2); lua_rawget(L, 1); return 1; }
static int deferred_newindex(lua_State *L) { settle_deferred(L, 1); lua_settop(L, 3); lua_rawset(L, 1); return 0; }
static int deferred_len(lua_State *L) { settle_deferred(L, 1); lua_pushinteger(L, (lua_Integer)lua_rawlen(L, 1)); return 1; }
static int deferred_pairs(lua_State *L) {
    settle_deferred(L, 1);
    lua_pushcfunction(L, BASE(base_next));
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

static int d_next(lua_State *L) { settle_if_deferred(L, 1); return BASE(base_next)(L); }
static int d_rawget(lua_State *L) { settle_if_deferred(L, 1); return BASE(base_rawget)(L); }
static int d_rawset(lua_State *L) { settle_if_deferred(L, 1); return BASE(base_rawset)(L); }
static int d_rawlen(lua_State *L) { settle_if_deferred(L, 1); return BASE(base_rawlen)(L); }
static int d_getmetatable(lua_State *L) { settle_if_deferred(L, 1); return BASE(base_getmetatable)(L); }
static int d_setmetatable(lua_State *L) { settle_if_deferred(L, 1); return BASE(base_setmetatable)(L); }

/* Replaces a base function by its settling wrapper, keeping the original in `*base`. */
static void wrap_base(lua_State *L, const char *name, lua_CFunction *base, lua_CFunction wrapper) {
    lua_getglobal(L, name);
    lua_CFunction f = lua_tocfunction(L, -1);
    lua_pop(L, 1);
    if (f == NULL || f == wrapper) return;
    __atomic_store_n(base, f, __ATOMIC_RELAXED);
    lua_pushcfunction(L, wrapper);
    lua_setglobal(L, name);
}

/* Sets the metamethods that settle first (__index, __newindex, __len, __pairs) on the
 * table on top. [-0, +0] */
static void set_settling_metamethods(lua_State *L) {
    static const luaL_Reg settling[] = {
        {"__index", deferred_index}, {"__newindex", deferred_newindex},
        {"__len", deferred_len}, {"__pairs", deferred_pairs}, {NULL, NULL}};
    luaL_setfuncs(L, settling, 0);
}

void luashim_install_deferred(lua_State *L) {
    luaL_newmetatable(L, DEFERRED_MT);
    set_settling_metamethods(L);
    lua_pop(L, 1);
    wrap_base(L, "next", &base_next, d_next);
    wrap_base(L, "rawget", &base_rawget, d_rawget);
    wrap_base(L, "rawset", &base_rawset, d_rawset);
    wrap_base(L, "rawlen", &base_rawlen, d_rawlen);
    wrap_base(L, "getmetatable", &base_getmetatable, d_getmetatable);
    wrap_base(L, "setmetatable", &base_setmetatable, d_setmetatable);
}

void luashim_set_settle(lua_State *L) { lua_setfield(L, LUA_REGISTRYINDEX, SETTLE_KEY); }
void luashim_push_settle(lua_State *L) { lua_getfield(L, LUA_REGISTRYINDEX, SETTLE_KEY); }

void luashim_push_deferred_table(lua_State *L) {
    lua_createtable(L, 0, 0);
    luaL_setmetatable(L, DEFERRED_MT);
}

void luashim_fail_deferred_table(lua_State *L) {
    lua_createtable(L, 0, 6);
    lua_rotate(L, -2, 1); /* table, metatable, box */
    lua_rawsetp(L, -2, &FAILED_KEY);
    set_settling_metamethods(L);
    lua_pushcfunction(L, failed_gc);
    lua_setfield(L, -2, "__gc"); /* before setmetatable: the table is then finalized */
    lua_setmetatable(L, -2);
    lua_pop(L, 1);
    gethost(L)->deferred_failed++;
}

int luashim_push_failed_box(lua_State *L, int idx) {
    if (!gethost(L)->deferred_failed || lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx)) return 0;
    if (lua_rawgetp(L, -1, &FAILED_KEY) == LUA_TNIL) {
        lua_pop(L, 2);
        return 0;
    }
    lua_remove(L, -2);
    return 1;
}

int luashim_deferred_failed(lua_State *L) { return gethost(L)->deferred_failed; }

int luashim_deferred_any(lua_State *L) {
    luashim_host *h = gethost(L);
    return h->deferred_pending | h->deferred_failed;
}

void luashim_set_deferred_pending(lua_State *L, int pending) { gethost(L)->deferred_pending = pending; }
int luashim_deferred_pending(lua_State *L) { return gethost(L)->deferred_pending; }

/* coroutine.close as the library's (upvalue 1, called in this frame), except that
 * an uncatchable host error raised by a to-be-closed variable's __close is passed
 * on instead of being returned as (false, error). */
static int guarded_coclose(lua_State *L) {
    int n = lua_tocfunction(L, lua_upvalueindex(1))(L);
    if (n == 2 && !lua_toboolean(L, -2) && is_uncatchable(L, -1)) return lua_error(L);
    return n;
}

void luashim_install_coroutine_guards(lua_State *L) {
    lua_pushcfunction(L, guarded_pcall);
    lua_setglobal(L, "pcall");
    lua_pushcfunction(L, guarded_xpcall);
    lua_setglobal(L, "xpcall");
    if (lua_getglobal(L, "coroutine") == LUA_TTABLE) {
        lua_pushcfunction(L, guarded_coresume);
        lua_setfield(L, -2, "resume");
        lua_pushcfunction(L, guarded_cowrap);
        lua_setfield(L, -2, "wrap");
        lua_getfield(L, -1, "close");
        if (lua_tocfunction(L, -1) != NULL) {
            lua_pushcclosure(L, guarded_coclose, 1);
            lua_setfield(L, -2, "close");
        } else {
            lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

/* ===================================================================== */
/* Deterministic iteration: pairs/next in a stable key order              */
/* ===================================================================== */

typedef struct sort_key {
    int rank;          /* 0 number, 1 string, 2 boolean, 3 other */
    int isint;
    lua_Integer i;
    lua_Number n;
    const char *s;
    size_t len;
    int b;
    int original;      /* raw traversal position: the last tie-breaker */
} sort_key;

static int compare_keys(const void *pa, const void *pb) {
    const sort_key *a = (const sort_key *)pa, *b = (const sort_key *)pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    switch (a->rank) {
    case 0:
        if (a->isint && b->isint) {
            if (a->i != b->i) return a->i < b->i ? -1 : 1;
        } else {
            lua_Number x = a->isint ? (lua_Number)a->i : a->n;
            lua_Number y = b->isint ? (lua_Number)b->i : b->n;
            if (x != y) return x < y ? -1 : 1;
            if (a->isint != b->isint) return a->isint ? -1 : 1;
        }
        break;
    case 1: {
        size_t m = a->len < b->len ? a->len : b->len;
        int c = memcmp(a->s, b->s, m);
        if (c != 0) return c < 0 ? -1 : 1;
        if (a->len != b->len) return a->len < b->len ? -1 : 1;
        break;
    }
    case 2:
        if (a->b != b->b) return a->b < b->b ? -1 : 1;
        break;
    }
    return a->original < b->original ? -1 : (a->original > b->original);
}

/* Pushes a new array of t's keys in stable order (t at absolute index t). [-0, +1] */
static void push_sorted_keys(lua_State *L, int t) {
    lua_Integer n = 0;
    lua_newtable(L);                                    /* keys */
    int keys = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, keys, ++n);
    }
    if (n < 2) return;
    sort_key *buf = (sort_key *)lua_newuserdatauv(L, sizeof(sort_key) * (size_t)n, 0);
    for (lua_Integer k = 1; k <= n; k++) {
        sort_key *e = &buf[k - 1];
        memset(e, 0, sizeof *e);
        e->original = (int)k;
        int type = lua_rawgeti(L, keys, k);
        if (type == LUA_TNUMBER) {
            e->rank = 0;
            e->isint = lua_isinteger(L, -1);
            if (e->isint) e->i = lua_tointeger(L, -1); else e->n = lua_tonumber(L, -1);
        } else if (type == LUA_TSTRING) {
            e->rank = 1;
            e->s = lua_tolstring(L, -1, &e->len); /* anchored by `keys` */
        } else if (type == LUA_TBOOLEAN) {
            e->rank = 2;
            e->b = lua_toboolean(L, -1);
        } else {
            e->rank = 3;
        }
        lua_pop(L, 1);
    }
    qsort(buf, (size_t)n, sizeof(sort_key), compare_keys);
    lua_createtable(L, (int)n, 0);                       /* sorted */
    for (lua_Integer k = 1; k <= n; k++) {
        lua_rawgeti(L, keys, buf[k - 1].original);
        lua_rawseti(L, -2, k);
    }
    lua_replace(L, keys);
    lua_pop(L, 1);                                       /* buf */
}

/* Iterator closure of sorted pairs: upvalues (keys, position). */
static int sorted_pairs_step(lua_State *L) {
    lua_Integer pos = lua_tointeger(L, lua_upvalueindex(2));
    for (;;) {
        pos++;
        if (lua_rawgeti(L, lua_upvalueindex(1), pos) == LUA_TNIL) {
            lua_pushinteger(L, pos - 1);
            lua_replace(L, lua_upvalueindex(2));
            return 1;
        }
        lua_pushvalue(L, -1);
        if (lua_rawget(L, 1) != LUA_TNIL) {           /* skip keys removed meanwhile */
            lua_pushinteger(L, pos);
            lua_replace(L, lua_upvalueindex(2));
            return 2;
        }
        lua_pop(L, 2);
    }
}

static int sorted_pairs(lua_State *L) {
    if (luaL_getmetafield(L, 1, "__pairs") != LUA_TNIL) {
        lua_pushvalue(L, 1);
        lua_call(L, 1, 3);
        return 3;
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    push_sorted_keys(L, 1);
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, sorted_pairs_step, 2);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* next(t, k) in the same order. The key order of t is cached (weakly, in the
 * registry) so a traversal costs O(n log n) once, then O(1) a step in the usual
 * sequence; snapshot[0] remembers the last position handed out. */
static int sorted_next(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &NEXT_CACHE_KEY);  /* 3: cache */
    lua_pushvalue(L, 1);
    int have = lua_rawget(L, 3) == LUA_TTABLE;             /* 4: snapshot or nil */
    lua_Integer pos = 0;
    if (lua_isnil(L, 2) || !have) {
        lua_pop(L, 1);
        push_sorted_keys(L, 1);                            /* 4: snapshot */
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 4);
        lua_rawset(L, 3);
    }
    if (!lua_isnil(L, 2)) {
        lua_rawgeti(L, 4, 0);
        lua_Integer last = lua_tointeger(L, -1);
        lua_pop(L, 1);
        lua_rawgeti(L, 4, last);
        int same = last > 0 && lua_rawequal(L, -1, 2);
        lua_pop(L, 1);
        if (same) pos = last;
        else {
            lua_Integer n = (lua_Integer)lua_rawlen(L, 4);
            for (lua_Integer i = 1; i <= n && pos == 0; i++) {
                lua_rawgeti(L, 4, i);
                if (lua_rawequal(L, -1, 2)) pos = i;
                lua_pop(L, 1);
            }
            if (pos == 0) return luaL_error(L, "invalid key to 'next'");
        }
    }
    for (;;) {
        pos++;
        if (lua_rawgeti(L, 4, pos) == LUA_TNIL) {          /* end: forget the snapshot */
            lua_pushvalue(L, 1);
            lua_pushnil(L);
            lua_rawset(L, 3);
            lua_pushnil(L);
            return 1;
        }
        lua_pushvalue(L, -1);
        if (lua_rawget(L, 1) != LUA_TNIL) {
            lua_pushinteger(L, pos);
            lua_rawseti(L, 4, 0);
            return 2;
        }
        lua_pop(L, 2);
    }
}

void luashim_push_sorted_iterators(lua_State *L) {
    lua_pushcfunction(L, sorted_pairs);
    lua_pushcfunction(L, sorted_next);
}

/* ===================================================================== */
/* Loading text chunks                                                    */
/* ===================================================================== */

int luashim_load_text(lua_State *L, const char *buffer, size_t size, const char *chunkname) {
    if (size > 0 && buffer[0] == LUA_SIGNATURE[0]) {
        lua_pushfstring(L, "%s: precompiled bytecode is refused; Sensorium loads Lua source text only",
                        chunkname[0] == '@' || chunkname[0] == '=' ? chunkname + 1 : chunkname);
        return LUA_ERRSYNTAX;
    }
    return luaL_loadbufferx(L, buffer, size, chunkname, "t");
}

/* ===================================================================== */
/* Function forms of macros                                               */
/* ===================================================================== */

int luashim_registryindex(void) { return LUA_REGISTRYINDEX; }
int luashim_upvalueindex(int i) { return lua_upvalueindex(i); }
void luashim_pop(lua_State *L, int n) { lua_pop(L, n); }
void luashim_newtable(lua_State *L) { lua_newtable(L); }
int luashim_isnoneornil(lua_State *L, int idx) { return lua_isnoneornil(L, idx); }
const char *luashim_tolstring_raw(lua_State *L, int idx, size_t *len) {
    if (lua_type(L, idx) != LUA_TSTRING) return NULL;
    return lua_tolstring(L, idx, len);
}
double luashim_tonumber(lua_State *L, int idx) { return (double)lua_tonumberx(L, idx, NULL); }
long long luashim_tointeger(lua_State *L, int idx, int *isnum) { return (long long)lua_tointegerx(L, idx, isnum); }
void luashim_insert(lua_State *L, int idx) { lua_insert(L, idx); }
void luashim_remove(lua_State *L, int idx) { lua_remove(L, idx); }
void luashim_replace(lua_State *L, int idx) { lua_replace(L, idx); }
int luashim_getmetatable_named(lua_State *L, const char *name) { return luaL_getmetatable(L, name); }
int luashim_gc_collect(lua_State *L) { return lua_gc(L, LUA_GCCOLLECT); }
int luashim_gc_count_kb(lua_State *L) { return lua_gc(L, LUA_GCCOUNT); }
int luashim_gc_generational(lua_State *L) { return lua_gc(L, LUA_GCGEN, 0, 0); }

void luashim_set_memory_limit(lua_State *L, size_t limit) { gethost(L)->limit = limit; }
size_t luashim_memory_limit(lua_State *L) { return gethost(L)->limit; }
size_t luashim_memory_used(lua_State *L) { return gethost(L)->used; }
size_t luashim_memory_peak(lua_State *L) { return gethost(L)->peak; }
void luashim_reset_memory_peak(lua_State *L) { luashim_host *h = gethost(L); h->peak = h->used; }

/* lauxlib's pushglobalfuncname: finds "mod.name" of the function at the top in
 * package.loaded (registry), pushes its name and returns 1, or returns 0. [-1, +(0|1)] */
static int findfield(lua_State *L, int objidx, int level) {
    if (level == 0 || !lua_istable(L, -1)) return 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (lua_type(L, -2) == LUA_TSTRING) {
            if (lua_rawequal(L, objidx, -1)) {
                lua_pop(L, 1);
                return 1;
            } else if (findfield(L, objidx, level - 1)) {
                lua_pushliteral(L, ".");
                lua_replace(L, -3);
                lua_concat(L, 3);
                return 1;
            }
        }
        lua_pop(L, 1);
    }
    return 0;
}

static int pushglobalfuncname(lua_State *L, lua_Debug *ar) {
    int top = lua_gettop(L);
    lua_getinfo(L, "f", ar);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    if (findfield(L, top + 1, 2)) {
        const char *name = lua_tostring(L, -1);
        if (strncmp(name, LUA_GNAME ".", 3) == 0) {
            lua_pushstring(L, name + 3);
            lua_remove(L, -2);
        }
        lua_copy(L, -1, top + 1);
        lua_settop(L, top + 1);
        return 1;
    }
    /* Not a standard library function: the host's modules are global tables (report.row, time.parse). */
    lua_settop(L, top + 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    if (findfield(L, top + 1, 2)) {
        lua_copy(L, -1, top + 1);
        lua_settop(L, top + 1);
        return 1;
    }
    lua_settop(L, top);
    return 0;
}

void luashim_push_argerror(lua_State *L, int arg, const char *extramsg) {
    lua_Debug ar;
    if (!lua_getstack(L, 0, &ar)) {
        lua_pushfstring(L, "bad argument #%d (%s)", arg, extramsg);
        return;
    }
    lua_getinfo(L, "n", &ar);
    if (ar.namewhat && strcmp(ar.namewhat, "method") == 0) {
        arg--;
        if (arg == 0) {
            lua_pushfstring(L, "calling '%s' on bad self (%s)", ar.name ? ar.name : "?", extramsg);
            return;
        }
    }
    if (ar.name == NULL) {
        if (pushglobalfuncname(L, &ar)) {
            lua_pushfstring(L, "bad argument #%d to '%s' (%s)", arg, lua_tostring(L, -1), extramsg);
            lua_remove(L, -2);
            return;
        }
    }
    lua_pushfstring(L, "bad argument #%d to '%s' (%s)", arg, ar.name ? ar.name : "?", extramsg);
}

/* ===================================================================== */
/* Process allocator                                                      */
/* ===================================================================== */

void luashim_tune_process_allocator(void) {
    /* Sample chunks are megabytes of columns, allocated and freed chunk after chunk.
     * By default glibc hands such blocks back to the kernel (mmap/trim) and every new
     * chunk page-faults its memory in again, which costs more than the work on the
     * samples. Keep them in the heap instead; peak memory stays bounded by the chunk. */
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
}
