/*
 * cstudylua.h — the Lua the study runtime runs, embedded at build time.
 *
 * lua/runtime.lua (the runtime prelude: delegate delivery, SensorKit error
 * values, the `time` and `log` modules) is compiled into the binary with
 * #embed, so an installed `sensorium` and a fresh clone need no file beside it.
 * This target holds data only: no Lua API is called here.
 */
#ifndef CSTUDYLUA_H
#define CSTUDYLUA_H

#include <stddef.h>

/* The text of lua/runtime.lua; `*size` gets its length in bytes (a NUL follows). */
const char *cstudylua_runtime_source(size_t *size);

#endif
