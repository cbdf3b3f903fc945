/* The crash guard's tests (test_thread_stack.c, test_ticker_crash.c): a
 * fault on one of a cell's threads, in a forked child, must get the
 * guard's one line before the process dies of SIGSEGV. */
#ifndef RT_CRASH_H
#define RT_CRASH_H

#include <stdint.h>

#include <dlgauge/plugin.h>

#include "rt_util.h"

/* Forks a child whose stderr goes to d/stderr.txt and whose crash guard is
 * armed for `who`; there fn(arg) must kill the process (it exits 4 if it
 * returns).  Fails the test unless the child died of SIGSEGV having written
 * exactly one line, "dlgauge: WHO: killed by SIGSEGV...". */
void rt_dies_with_line(const rt_dir *d, const char *who, void (*fn)(void *), void *arg);

/* Recurses deeper than any thread's stack (2 KiB a frame, depth up to
 * 2^30): call it with (NULL, 0) to overflow the calling thread's stack. */
int64_t rt_recurse(volatile char *up, long depth);

/* A storage whose reads of *.jpg files recurse without end (a decoder gone
 * wrong) and whose other files read plainly (a list file): register it on
 * a mock host so that the thread that reads an image overflows. */
extern const dlg_storage_ops rt_deep_ops;

#endif
