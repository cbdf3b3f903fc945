#define _GNU_SOURCE
#include "rt_oom.h"

#include <errno.h>
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

/* atomic: a loader's workers allocate beside the test's thread */
static atomic_bool armed;
static atomic_long calls, fail_at;

bool rt_oom_possible(void) { return !SANITIZED; }

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
static bool fail_now(void)
{
    if (!atomic_load(&armed) || atomic_fetch_add(&calls, 1) + 1 != atomic_load(&fail_at))
        return false;
    errno = ENOMEM;
    return true;
}

void *malloc(size_t n) { return fail_now() ? NULL : __libc_malloc(n); }
void *calloc(size_t a, size_t b) { return fail_now() ? NULL : __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { return fail_now() ? NULL : __libc_realloc(p, n); }
#endif
