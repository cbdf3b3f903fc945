#define _GNU_SOURCE
#include "rt_util.h"
#include "child_pipe.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <ftw.h>
#include <unistd.h>

int rt_dir_setup(void **state)
{
    rt_dir *d = calloc(1, sizeof *d);
    if (!d)
        return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(d->path, sizeof d->path, "%s/dlg-rt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d->path)) {
        free(d);
        return -1;
    }
    *state = d;
    return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

int rt_dir_teardown(void **state)
{
    rt_dir *d = *state;
    nftw(d->path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(d);
    return 0;
}

void rt_write(const rt_dir *d, const char *name, const char *text, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", d->path, name);
    for (char *p = path + strlen(d->path) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

void rt_assert_error_at(const char *err, const char *file, int line, ...)
{
    char want[1024];
    if (line > 0)
        snprintf(want, sizeof want, "%s:%d: ", file, line);
    else
        snprintf(want, sizeof want, "%s: ", file);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("error does not start with '%s':\n  %s", want, err);
    if (strchr(err, '\n'))
        fail_msg("error spans several lines:\n  %s", err);
    va_list ap;
    va_start(ap, line);
    for (const char *s; (s = va_arg(ap, const char *));)
        if (!strstr(err, s)) {
            va_end(ap);
            fail_msg("error lacks '%s':\n  %s", s, err);
        }
    va_end(ap);
}

void rt_capture_stderr(void (*fn)(void *), void *arg, char *text, size_t len)
{
    FILE *err = tmpfile();
    assert_non_null(err);
    fflush(stderr);
    int saved = dup(2);
    assert_true(saved >= 0 && dup2(fileno(err), 2) == 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(err);
    size_t n = fread(text, 1, len - 1, err);
    text[n] = '\0';
    fclose(err);
}

struct stderr_call {
    void (*fn)(void *);
    void *arg;
};

/* child_pipe_run's fn: the call with fd 2 into the pipe, exit 4 if it returns */
static int with_stderr(int fd, void *arg)
{
    const struct stderr_call *c = arg;
    dup2(fd, STDERR_FILENO);
    c->fn(c->arg);
    return 4;
}

int rt_child_stderr(void (*fn)(void *), void *arg, char *text, size_t len)
{
    struct stderr_call c = {fn, arg};
    int status = child_pipe_run(with_stderr, &c, text, len);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}
