/*
 * runtime.c — lua/runtime.lua and lua/plain.lua embedded with #embed (see cstudylua.h).
 */
#include "cstudylua.h"

#pragma clang diagnostic ignored "-Wc23-extensions"

static const char runtime_source[] = {
#embed "lua/runtime.lua"
    , 0
};

const char *cstudylua_runtime_source(size_t *size) {
    *size = sizeof runtime_source - 1;
    return runtime_source;
}

static const char plain_source[] = {
#embed "lua/plain.lua"
    , 0
};

const char *cstudylua_plain_source(size_t *size) {
    *size = sizeof plain_source - 1;
    return plain_source;
}
