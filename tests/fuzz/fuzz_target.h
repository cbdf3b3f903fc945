/* The libFuzzer entry point every fuzz_*.c defines; replay_main.c drives the
 * same entry points from corpus files in the normal (gcc) build. */
#ifndef DLG_FUZZ_TARGET_H
#define DLG_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A violated invariant is a bug in core/data: crash so the fuzzer saves it. */
#define FUZZ_CHECK(c)            \
    do {                         \
        if (!(c))                \
            __builtin_trap();    \
    } while (0)

#endif
