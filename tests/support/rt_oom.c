#define _GNU_SOURCE
#include "rt_oom.h"

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* atomic: a loader's workers allocate beside the test's thread */
static atomic_bool armed;
static atomic_long calls, fail_at;
static bool (*skip_fn)(void *caller);
static void (*on_fail_fn)(void);

bool rt_oom_possible(void) { return !SANITIZED; }

void rt_oom_filter(bool (*skip)(void *caller), void (*on_fail)(void))
{
    skip_fn = skip;
    on_fail_fn = on_fail;
}

void rt_oom_arm(long n)
{
    calls = 0;
    fail_at = n;
    armed = true;
}

long rt_oom_disarm(void)
{
    armed = false;
    return calls;
}

#if !SANITIZED
static bool fail_now(void *caller)
{
    if (!atomic_load(&armed) || (skip_fn && skip_fn(caller)) ||
        atomic_fetch_add(&calls, 1) + 1 != atomic_load(&fail_at))
        return false;
    if (on_fail_fn)
        on_fail_fn();
    errno = ENOMEM;
    return true;
}

#define CALLER __builtin_return_address(0)
void *malloc(size_t n) { return fail_now(CALLER) ? NULL : __libc_malloc(n); }
void *calloc(size_t a, size_t b) { return fail_now(CALLER) ? NULL : __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { return fail_now(CALLER) ? NULL : __libc_realloc(p, n); }
void *aligned_alloc(size_t a, size_t n) { return fail_now(CALLER) ? NULL : __libc_memalign(a, n); }
void *memalign(size_t a, size_t n) { return fail_now(CALLER) ? NULL : __libc_memalign(a, n); }

int posix_memalign(void **out, size_t a, size_t n)
{
    if (fail_now(CALLER))
        return ENOMEM;
    void *p = __libc_memalign(a, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
#endif
