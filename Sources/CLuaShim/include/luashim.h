/*
 * luashim.h — the C side of Sensorium's Lua host.
 *
 * Everything that may longjmp lives behind this header: the trampolines that
 * raise errors on behalf of Swift callbacks, the stop hook (instruction budget,
 * wall-clock deadline, memory limit, interrupt), the capped allocator, the
 * protected helpers, and function forms of Lua's macros, which Swift cannot import.
 *
 * Rule: Swift never calls lua_error, lua_call or any API that may raise outside
 * a protected call. Swift callbacks return a count of results, or one of the
 * sentinels below, and the C trampoline acts on it after the Swift frame is gone.
 */
#ifndef LUASHIM_H
#define LUASHIM_H

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>
#include <stddef.h>
#include <stdint.h>

/* ---- sentinels a Swift callback may return instead of a result count ---- */
#define LUASHIM_RAISE (-1)          /* raise the value on top (a string gets the caller's file:line:) */
#define LUASHIM_RAISE_NOPREFIX (-2) /* raise the value on top unchanged */
#define LUASHIM_YIELD_BASE (-1000)  /* LUASHIM_YIELD_BASE - n: yield n values */
/* The metatable name of an uncatchable host error (`LuaUncatchableError` in Swift):
 * a userdata carrying a Swift error, raised like any error value, that the
 * script's pcall, xpcall, coroutine.resume and coroutine.close pass on instead
 * of catching, so
 * only the host's own protected call ends with it. */
#define LUASHIM_UNCATCHABLE_MT "host error"

/* ---- why a script was stopped ---- */
enum luashim_stop {
    LUASHIM_STOP_NONE = 0,
    LUASHIM_STOP_BUDGET = 1,     /* instruction budget used up */
    LUASHIM_STOP_DEADLINE = 2,   /* wall-clock deadline passed */
    LUASHIM_STOP_MEMORY = 3,     /* memory limit exceeded */
    LUASHIM_STOP_INTERRUPT = 4,  /* Ctrl-C (SIGINT) */
};

/* A Swift function callable from Lua through the safe trampoline. */
typedef int (*luashim_SwiftFn)(lua_State *L);
/* The one dispatcher for capturing Swift closures: `box` is the retained closure box. */
typedef int (*luashim_Dispatcher)(lua_State *L, void *box);
/* Releases a closure box when Lua collects it (never raises). */
typedef void (*luashim_Release)(void *box);

/* Releases a host object held by a userdata (`releaser` is the class's token). */
typedef void (*luashim_UserdataRelease)(void *object, void *releaser);

/* ---- state lifecycle ---- */

/* Creates a state with the capped allocator (memory_limit bytes; 0 = none) and
 * a host record in its extra space. Returns NULL if even that fails. */
lua_State *luashim_newstate(size_t memory_limit);
/* The address-space cap (RLIMIT_AS, `ulimit -v`) in bytes, or 0 where there is none. */
size_t luashim_address_space_cap(void);
/* The address space a new state with `memory_limit` (0 = none) reserves for its heap:
 * under a cap, the limit (or a sixteenth of the cap), the same every run. */
size_t luashim_heap_reserve_for(size_t memory_limit);
/* Why the last luashim_newstate returned NULL (a static string), or NULL. */
const char *luashim_newstate_error(void);
/* Offset of a heap object (table, function, userdata, thread) in the state's
 * deterministic heap: the same in every run of the same program. (size_t)-1 if
 * the object is not in the heap. */
size_t luashim_heap_offset(lua_State *L, const void *p);
/* Closes the state and frees the host record. */
void luashim_close(lua_State *L);
/* Replaces find, match, gmatch and gsub in the table on top by the stoppable
 * matcher of pattern.c (same results and errors as Lua 5.4.4's). [-0, +0] */
void luashim_install_patterns(lua_State *L);
/* Replaces table.insert/remove/move/concat/sort (in the global `table`) and
 * rep in the table on top (the string library) by versions of stoppable.c
 * that the limits can stop (same results and errors as Lua 5.4.4's). [-0, +0] */
void luashim_install_stoppable(lua_State *L);
/* Pushes the host's set-up, as lua.c's pmain, and its argument: a C function that,
 * called protected with the argument (luashim_pcall(L, 1, 0)), opens the standard
 * libraries (with the stoppable pattern and library functions), installs the
 * coroutine guards, closes light C functions, then runs the Swift set-up closure
 * `box` (retained by the caller; NULL for none) through the dispatcher as a host
 * function. Everything of a state's set-up that may raise runs inside that one
 * call. Allocates nothing. [-0, +2] */
void luashim_push_host_main(lua_State *L, void *box);
/* An opaque pointer the embedder keeps with the state (Swift's LuaState object). */
void luashim_set_context(lua_State *L, void *context);
void *luashim_get_context(lua_State *L);

/* ---- closures ---- */
void luashim_set_dispatcher(lua_State *L, luashim_Dispatcher dispatcher, luashim_Release release);
/* Pushes a Lua function that calls `fn` through the trampoline. [-0, +1] */
void luashim_push_swiftfn(lua_State *L, luashim_SwiftFn fn);
/* Pushes a Lua function that calls the dispatcher with `box` (retained by the caller;
 * released through the release callback when collected). [-0, +1] */
void luashim_push_closure(lua_State *L, void *box);
/* Host userdata are two pointers: the object and its class's releaser token.
 * This pushes the C function used as their __gc and __close: it clears the
 * object pointer and calls the release callback once. [-0, +1] */
void luashim_set_userdata_release(lua_State *L, luashim_UserdataRelease release);
void luashim_push_userdata_release(lua_State *L);
/* Pushes a plain C function (for benchmarks: the trampoline's baseline). [-0, +1] */
void luashim_push_c_identity(lua_State *L);

/* ---- protected calls ---- */
/* lua_pcall with the traceback message handler below the function. The traceback
 * of the last error is kept and read with luashim_last_traceback. [-(nargs+1), +(nresults|1)] */
int luashim_pcall(lua_State *L, int nargs, int nresults);
/* Pushes the traceback string of the last error handled by luashim_pcall (or nil). [-0, +1] */
void luashim_push_last_traceback(lua_State *L);
/* Runs luaL_tolstring (may call __tostring) in a protected call. Pushes the string or the error. [-0, +1] */
int luashim_tolstring_protected(lua_State *L, int idx);
/* Protected lua_gettable / lua_settable: t[k] with t at idx, key (and value) on top. */
int luashim_gettable_protected(lua_State *L, int idx);
int luashim_settable_protected(lua_State *L, int idx);

/* ---- limits ---- */
void luashim_set_memory_limit(lua_State *L, size_t limit);
size_t luashim_memory_limit(lua_State *L);
size_t luashim_memory_used(lua_State *L);
size_t luashim_memory_peak(lua_State *L);
void luashim_reset_memory_peak(lua_State *L);
/* Sets an instruction budget (0 = none) counted in steps of `step` instructions.
 * Install it before creating coroutines: threads inherit hooks when created. */
void luashim_set_instruction_budget(lua_State *L, long long budget, int step);
long long luashim_instructions_used(lua_State *L);
/* Arms a wall-clock deadline `ms` from now (0 disarms). Costs nothing until it fires. */
void luashim_deadline_arm(lua_State *L, long long ms);
void luashim_deadline_disarm(lua_State *L);
/* Requests a stop (async-signal-safe: for a SIGINT handler). */
void luashim_request_interrupt(lua_State *L);
/* The stop in force (enum luashim_stop), and clearing it before the next chunk. */
int luashim_stop_reason(lua_State *L);
void luashim_clear_stop(lua_State *L);
/* Stops the running script for memory, as if `requested` bytes had been refused
 * (the sandbox's string.rep check). The stop is raised at the next instruction. */
void luashim_stop_for_memory(lua_State *L, size_t requested);
/* Raises the stop in force at the caller's position (never returns). */
int luashim_raise_stop(lua_State *L);
/* Bytes the script may still allocate under the memory limit ((size_t)-1: no limit). */
size_t luashim_memory_available(lua_State *L);
/* Size of an allocation refused outright because it alone broke the limit (0 if none). */
size_t luashim_refused_allocation(lua_State *L);
/* Installs a SIGINT handler that interrupts the given state; pass NULL to restore. */
void luashim_install_sigint(lua_State *L);
/* Was SIGINT received since the last call? (clears the flag) */
int luashim_take_sigint(void);

/* ---- sandbox primitives (registered as globals by the host's policy) ---- */
/* Replaces coroutine.resume/wrap with versions that keep the stop hook on every
 * running coroutine, and pcall, xpcall, coroutine.resume and coroutine.close with versions that
 * pass an uncatchable host error (LUASHIM_UNCATCHABLE_MT) on to their caller
 * instead of returning it (host_main calls it after opening the libraries;
 * raises on a memory error). [-0, +0] */
void luashim_install_coroutine_guards(lua_State *L);
/* Deferred tables: results the host computes when the script first uses them.
 * luashim_install_deferred (host_main calls it) makes their metatable — __index,
 * __newindex, __len and __pairs call the settle function first — and replaces
 * next, rawget, rawset, rawlen, getmetatable and setmetatable by versions that
 * settle first when given a pending table; pcall/xpcall settle when they start
 * (an error then is raised to their caller) and before they return, after an
 * error too (an error then is their result). [-0, +0] */
void luashim_install_deferred(lua_State *L);
/* Pops a function and makes it the settle function: called with a deferred table
 * or nil, it fills every pending table and removes their metatable, and raises
 * again the error of the table given when computing it failed. [-1, +0] */
void luashim_set_settle(lua_State *L);
/* Pushes the settle function. [-0, +1] */
void luashim_push_settle(lua_State *L);
/* Pushes a new empty table with the deferred metatable. [-0, +1] */
void luashim_push_deferred_table(lua_State *L);
/* Tells the wrappers whether any table is pending (0: none; they then cost a load). */
void luashim_set_deferred_pending(lua_State *L, int pending);
/* Whether any deferred table is pending (as last set). */
int luashim_deferred_pending(lua_State *L);
/* Makes the deferred table below the top a failed one: its own metatable keeps the value
 * on top (the box of its error, which luashim_push_failed_box returns), and looking at
 * it — metamethods, the wrappers above — calls the settle function with it, which raises
 * that error again. Collected with the table. Allocates: call it where an allocation
 * cannot raise (in a host function). [-2, +0] */
void luashim_fail_deferred_table(lua_State *L);
/* Pushes the error box of the failed deferred table at `idx` and returns 1; returns 0
 * and pushes nothing for any other value. [-0, +(0|1)] */
int luashim_push_failed_box(lua_State *L, int idx);
/* Failed deferred tables not collected yet. */
int luashim_deferred_failed(lua_State *L);
/* Non-zero while any deferred table is pending or failed (one load for a host call's check). */
int luashim_deferred_any(lua_State *L);
/* Pushes a `pairs` that visits keys in a stable order (numbers ascending, then
 * strings bytewise, then booleans, then other keys) and a matching `next`;
 * the sandbox's pretty-printer uses them. [-0, +2] */
void luashim_push_sorted_iterators(lua_State *L);
/* Replaces every light C function in _G and in the tables _G holds by a C
 * closure of the same function (an object in the deterministic heap, so
 * tables keyed by library functions iterate in the same order in every run).
 * Raises on a memory error: host_main calls it inside its protected call. [-0, +0] */
void luashim_close_light_functions(lua_State *L);
/* Sets the sandbox's C primitives as fields of the table on top: pairs,
 * ipairs, wrap_format(original, tostring), wrap_rep(original),
 * wrap_collectgarbage(original, allowed options as a set), wrap_setmetatable(original),
 * wrap_tostring(identify). [-0, +0] */
void luashim_push_sandbox_primitives(lua_State *L);
/* The sandbox bootstrap (lua/sandbox.lua, embedded at build time). */
const char *luashim_sandbox_source(size_t *size);
/* The cases `sensorium bench lua` compares with stock lua5.4 (lua/bench.lua). */
const char *luashim_bench_source(size_t *size);
/* Loads a text chunk (bytecode refused) with the given chunk name. Returns a
 * Lua status; pushes the function or an error message. [-0, +1] */
int luashim_load_text(lua_State *L, const char *buffer, size_t size, const char *chunkname);

/* Pushes "bad argument #arg to 'name' (extramsg)" for the running C function,
 * as luaL_argerror words it, without raising. [-0, +1] */
void luashim_push_argerror(lua_State *L, int arg, const char *extramsg);

/* Tunes glibc's allocator for chunked sample processing (call once, at start). */
void luashim_tune_process_allocator(void);

/* ---- function forms of Lua macros ---- */
int luashim_registryindex(void);
int luashim_upvalueindex(int i);
void luashim_pop(lua_State *L, int n);
void luashim_newtable(lua_State *L);
int luashim_isnoneornil(lua_State *L, int idx);
const char *luashim_tolstring_raw(lua_State *L, int idx, size_t *len); /* strings only; NULL otherwise */
double luashim_tonumber(lua_State *L, int idx);
long long luashim_tointeger(lua_State *L, int idx, int *isnum);
void luashim_insert(lua_State *L, int idx);
void luashim_remove(lua_State *L, int idx);
void luashim_replace(lua_State *L, int idx);
int luashim_getmetatable_named(lua_State *L, const char *name);
int luashim_gc_collect(lua_State *L);
int luashim_gc_count_kb(lua_State *L);
int luashim_gc_generational(lua_State *L);

#endif
