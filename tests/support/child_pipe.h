/* Runs a piece of a test in a forked child and reads what it wrote back:
 * for what must not touch the test process itself (a setrlimit, a crash,
 * a switch of user). */
#ifndef DLG_TEST_CHILD_PIPE_H
#define DLG_TEST_CHILD_PIPE_H

#include <stddef.h>

/* Runs fn(fd, arg) in a forked child, which then _exits with what fn
 * returned (no exit handlers: LeakSanitizer's would start a thread, and
 * allocate, after the child's setrlimit); text[] gets what the child
 * wrote to fd, up to len - 1 bytes, NUL-terminated.  Returns the child's
 * wait status. */
int child_pipe_run(int (*fn)(int fd, void *arg), void *arg, char *text, size_t len);

#endif
