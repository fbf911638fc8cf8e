/*
 * runtime.c — lua/runtime.lua embedded with #embed (see cstudylua.h).
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
