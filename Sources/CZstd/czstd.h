/* The buffer-less streaming decompression (ZSTD_decompressContinue and friends) that
   ZstdSource decodes with is in zstd.h's static-linking section; Debian's libzstd.so
   exports it. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>
