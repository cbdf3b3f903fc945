/* The CPU stand-in runtime's count of calls that waited for the device
 * (fakegpu_host_waits in fakegpu's cuda.so, FAKEGPU_CUDA_SO), for tests
 * that reach the module through the engine.  The module is opened here
 * and kept loaded, so the engine's later dlopen of the same file gets the
 * same copy and the count lives from net to net. */
#ifndef DLG_TEST_FAKEGPU_WAITS_H
#define DLG_TEST_FAKEGPU_WAITS_H

#include <dlfcn.h>
#include <stdint.h>

static inline uint64_t fakegpu_waits_now(void)
{
    static uint64_t (*fn)(void);
    if (!fn) {
        void *dl = dlopen(FAKEGPU_CUDA_SO, RTLD_NOW | RTLD_LOCAL);
        assert_non_null(dl);
        *(void **)&fn = dlsym(dl, "fakegpu_host_waits");
        assert_non_null(fn);
    }
    return fn();
}

#endif
