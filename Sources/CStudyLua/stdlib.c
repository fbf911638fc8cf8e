/*
 * stdlib.c — the project's stdlib (stdlib/NAME.lua at the repository's top, where
 * researchers read it) and the Lua API reference (docs/lua-api.md), embedded with
 * #embed, so that `require "summary"` and the REPL's :help work in any program
 * built from this package, wherever it runs. See cstudylua.h.
 *
 * A module added to stdlib/ gets one line in `modules` below; a test
 * (StdlibEmbeddingTests) fails while a stdlib/NAME.lua file is missing here.
 */
#include "cstudylua.h"

#pragma clang diagnostic ignored "-Wc23-extensions"

static const char stdlib_expect[] = {
#embed "../../stdlib/expect.lua"
    , 0
};
static const char stdlib_plot[] = {
#embed "../../stdlib/plot.lua"
    , 0
};
static const char stdlib_report[] = {
#embed "../../stdlib/report.lua"
    , 0
};
static const char stdlib_stats[] = {
#embed "../../stdlib/stats.lua"
    , 0
};
static const char stdlib_summary[] = {
#embed "../../stdlib/summary.lua"
    , 0
};
static const char stdlib_time[] = {
#embed "../../stdlib/time.lua"
    , 0
};
static const char lua_api_docs[] = {
#embed "../../docs/lua-api.md"
    , 0
};

#define MODULE(name) { #name, stdlib_##name, sizeof stdlib_##name - 1 }
static const struct cstudylua_module modules[] = {
    MODULE(expect), MODULE(plot), MODULE(report), MODULE(stats), MODULE(summary), MODULE(time),
    { 0, 0, 0 }
};

const struct cstudylua_module *cstudylua_stdlib_modules(void) {
    return modules;
}

const char *cstudylua_lua_api_docs(size_t *size) {
    *size = sizeof lua_api_docs - 1;
    return lua_api_docs;
}
