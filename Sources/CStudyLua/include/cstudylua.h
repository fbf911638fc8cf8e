/*
 * cstudylua.h — the Lua the study runtime runs, embedded at build time.
 *
 * lua/runtime.lua (the runtime prelude: delegate delivery, SensorKit error
 * values, the `log` module and the primitives of `time`), the stdlib modules
 * protocols `require` (stdlib/NAME.lua at the top of the repository) and the Lua
 * API reference (docs/lua-api.md, for the REPL's :help) are compiled into the
 * binary with #embed, so an installed `sensorium`, a program that embeds the
 * runtime and a fresh clone need no file beside them.
 * This target holds data only: no Lua API is called here.
 */
#ifndef CSTUDYLUA_H
#define CSTUDYLUA_H

#include <stddef.h>

/* The text of lua/runtime.lua; `*size` gets its length in bytes (a NUL follows). */
const char *cstudylua_runtime_source(size_t *size);

/* The text of lua/plain.lua (what a plain script gets: time, durations, a sensorkit that
   says it needs a study); `*size` gets its length in bytes (a NUL follows). */
const char *cstudylua_plain_source(size_t *size);

/* One embedded stdlib module: its name for `require` ("summary"), its text and length. */
struct cstudylua_module {
    const char *name;
    const char *source;
    size_t size;
};

/* Every stdlib module, in name order, ended by an entry whose name is NULL. */
const struct cstudylua_module *cstudylua_stdlib_modules(void);

/* The text of docs/lua-api.md; `*size` gets its length in bytes (a NUL follows). */
const char *cstudylua_lua_api_docs(size_t *size);

#endif
