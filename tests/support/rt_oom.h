/* Allocations that fail on purpose: this test binary's malloc, calloc and
 * realloc stand in for libc's (link rt_oom.c into the test), and while
 * armed the n-th of them fails once with ENOMEM, as a brief shortage
 * would (counted across threads: with several, which one fails varies).
 * Not under a sanitizer, whose allocator cannot be stood in for. */
#ifndef RT_OOM_H
#define RT_OOM_H

#include <stdbool.h>

/* false in sanitized builds: skip the test there */
bool rt_oom_possible(void);
/* from now on the n-th allocation fails (0: none does) */
void rt_oom_arm(long n);
/* stops failing; returns how many allocations were made while armed */
long rt_oom_disarm(void);

#endif
