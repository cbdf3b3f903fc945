/* Allocations that fail on purpose: this binary's malloc, calloc, realloc,
 * posix_memalign, aligned_alloc and memalign stand in for libc's (link
 * rt_oom.c into the test, or into a preloaded helper: tests/e2e/oom_at.c),
 * and while armed the n-th of them fails once with ENOMEM, as a brief
 * shortage would (counted across threads: with several, which one fails
 * varies).  Not under a sanitizer, whose allocator cannot be stood in for. */
#ifndef RT_OOM_H
#define RT_OOM_H

#include <stdbool.h>

/* false in sanitized builds: skip the test there */
bool rt_oom_possible(void);
/* from now on the n-th allocation fails (0: none does; they are counted) */
void rt_oom_arm(long n);
/* stops failing; returns how many allocations were made while armed */
long rt_oom_disarm(void);
/* Set before arming.  skip(caller), where caller is the code that called
 * the allocator: true leaves that allocation alone, neither failed nor
 * counted (NULL: every one counts).  on_fail runs as the allocation fails
 * (a trace, a breakpoint; NULL: nothing); neither may allocate. */
void rt_oom_filter(bool (*skip)(void *caller), void (*on_fail)(void));

#endif
