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
#include <sys/stat.h>
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

/* rt_deep_ops (rt_crash.h): only images recurse. */
typedef struct deep_file {
    dlg_file f;
    int fd;
    int image;
} deep_file;

static int deep_open(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f)
{
    (void)inst;
    (void)flags;
    deep_file *df = (deep_file *)f;
    size_t n = strlen(path);
    df->image = n > 4 && strcmp(path + n - 4, ".jpg") == 0;
    df->fd = open(path, O_RDONLY | O_CLOEXEC);
    return df->fd < 0 ? h->error(h, DLG_EIO, "%s: cannot open", path) : 0;
}

static int deep_close(dlg_file *f) { return close(((deep_file *)f)->fd); }

static int deep_size(dlg_file *f, uint64_t *out)
{
    struct stat st;
    if (fstat(((deep_file *)f)->fd, &st) != 0)
        return -DLG_EIO;
    *out = (uint64_t)st.st_size;
    return 0;
}

static int64_t deep_read(dlg_file *f, void *buf, size_t n, uint64_t off)
{
    if (((deep_file *)f)->image)
        return rt_recurse(NULL, 0);
    ssize_t k = pread(((deep_file *)f)->fd, buf, n, (off_t)off);
    return k < 0 ? -DLG_EIO : (int64_t)k;
}

const dlg_storage_ops rt_deep_ops = {.version = 1, .file_size = sizeof(deep_file), .open = deep_open,
                                         .close = deep_close, .size = deep_size, .read = deep_read};
