/* Helpers of the runtime tests: a scratch folder per test, INI files
 * written into it, and checks on error messages. */
#ifndef RT_UTIL_H
#define RT_UTIL_H

#include <stddef.h>

typedef struct rt_dir {
    char path[256];
} rt_dir;

/* cmocka setup/teardown: *state becomes an rt_dir under $TMPDIR. */
int rt_dir_setup(void **state);
int rt_dir_teardown(void **state);

/* Writes text to dir/name (creating subfolders); path[] gets the full path. */
void rt_write(const rt_dir *d, const char *name, const char *text, char *path, size_t len);

/* Fails the test unless err starts with "<file>:<line>: " (line 0: "<file>: ")
 * and contains every NULL-terminated substring. */
void rt_assert_error_at(const char *err, const char *file, int line, ...);

/* Runs fn(arg) with fd 2 sent to a file; text[] gets what it wrote there. */
void rt_capture_stderr(void (*fn)(void *), void *arg, char *text, size_t len);

/* Runs fn(arg) in a forked child (which exits 4 if fn returns) with its
 * fd 2 into text[]; returns the signal the child died of, 0 if it exited. */
int rt_child_stderr(void (*fn)(void *), void *arg, char *text, size_t len);

#endif
