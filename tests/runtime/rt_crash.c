/* The forked-child harness of the crash guard's tests (rt_crash.h). */
#define _GNU_SOURCE
#include "rt_crash.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "signals.h"

__attribute__((noinline)) int64_t rt_recurse(volatile char *up, long depth)
{
    volatile char frame[2048];
    frame[0] = up ? up[0] : 1;
    if (depth >= 1L << 30)
        return frame[0];
    return rt_recurse(frame, depth + 1) + frame[1]; /* not a tail call */
}

/* The child: stderr to errpath, the guard armed, then fn's death. */
static void child(const char *errpath, const char *who, void (*fn)(void *), void *arg)
{
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
        _exit(2);
    dlg_crash_guard g;
    dlg_crash_guard_arm(&g, who);
    fn(arg);
    _exit(4); /* not reached: fn kills the process */
}

void rt_dies_with_line(const rt_dir *d, const char *who, void (*fn)(void *), void *arg)
{
    char errpath[600], err[4096] = "";
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", d->path);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        child(errpath, who, fn, arg);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    FILE *f = fopen(errpath, "r");
    assert_non_null(f);
    err[fread(err, 1, sizeof err - 1, f)] = '\0';
    fclose(f);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
        fail_msg("child: status %#x, expected death by SIGSEGV; stderr: %s", status, err);
    char want[256];
    snprintf(want, sizeof want, "dlgauge: %s: killed by SIGSEGV", who);
    if (strncmp(err, want, strlen(want)) != 0 || !strchr(err, '\n') || strchr(err, '\n')[1])
        fail_msg("stderr \"%s\" is not the one line \"%s...\"", err, want);
}
