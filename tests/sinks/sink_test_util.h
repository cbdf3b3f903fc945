/* Helpers for the sink tests: temp dirs, reading outputs back, points. */
#ifndef DLG_SINK_TEST_UTIL_H
#define DLG_SINK_TEST_UTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "mock_host.h"

/* A fresh directory under $TMPDIR (or /tmp); caller removes it with
 * st_rmtree. */
char *st_tempdir(void);
void st_rmtree(const char *dir);

/* Whole file, NUL-terminated (caller frees), or NULL when missing. */
char *st_slurp(const char *path, size_t *len);
size_t st_count_lines(const char *text);
/* "dir/name" into a static-free malloc'd string (caller frees). */
char *st_join(const char *dir, const char *name);

/* Limits the size of files this process writes (RLIMIT_FSIZE, SIGXFSZ
 * ignored, so a write past it is short, then fails with EFBIG), as a full
 * disk would; st_fsize_unlimit() undoes it. */
void st_fsize_limit(long long bytes);
void st_fsize_unlimit(void);

/* CLOCK_MONOTONIC in seconds. */
double st_mono_s(void);

/* Opens sink `name` of plugin file so_name with "key=value" overrides. */
int st_open_sink(mock_host *m, const char *so_name, const char *name, const char *const *overrides,
                 const dlg_sink_ops **ops, void **state);
/* The same for a sink of plugin `type` called `name` (its spool's name, say). */
int st_open_named(mock_host *m, const char *so_name, const char *type, const char *name,
                  const char *const *overrides, const dlg_sink_ops **ops, void **state);

/* tests/sinks/fake_influx.py answering with script_steps (NULL-ended, 12
 * at most) in a new directory base/name, where it logs the requests. */
typedef struct st_fake {
    pid_t pid;
    char *dir;
    int port;
} st_fake;
/* 0, or -1 when it did not start (st_fake_stop it all the same). */
int st_fake_start(st_fake *fk, const char *base, const char *name, const char *const *script_steps);
void st_fake_stop(st_fake *fk);

#endif
