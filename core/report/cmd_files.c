/* The files dlgauge report and compare name on their command line
 * (cmd_files.h): inputs checked before they are read, outputs written
 * whole or not at all. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dlgauge/plugin.h>

#include "cmd_files.h"

int rep_input_check(const char *path, const char *what, char *err, size_t errlen)
{
    struct stat st; /* no open: a FIFO would block, or lose its writer */
    if (stat(path, &st) != 0 || (!S_ISDIR(st.st_mode) && access(path, R_OK) != 0)) {
        snprintf(err, errlen, "%s: cannot open the %s: %s", path, what, strerror(errno));
        return -DLG_EIO;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a directory; give the %s itself", path, what);
        return -DLG_EIO;
    }
    return 0;
}

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

/* The stop signals that would end the process now, blocked: not those
 * ignored (nohup), which would stay pending once blocked, nor those the
 * caller blocked. */
static void block_stops(sigset_t *stops, sigset_t *old)
{
    sigprocmask(SIG_BLOCK, NULL, old);
    sigemptyset(stops);
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) {
        struct sigaction sa;
        if (sigaction(stop_signals[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN &&
            !sigismember(old, stop_signals[i]))
            sigaddset(stops, stop_signals[i]);
    }
    sigprocmask(SIG_BLOCK, stops, NULL);
}

/* The first stop signal pending, or 0. */
static int stop_pending(const sigset_t *stops)
{
    sigset_t p;
    if (sigpending(&p) != 0)
        return 0;
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
        if (sigismember(stops, stop_signals[i]) && sigismember(&p, stop_signals[i]))
            return stop_signals[i];
    return 0;
}

/* A report being written under a stdio stream: to a .part file (fd), or
 * to memory (fd < 0) when it is to be copied over F in place.  A write
 * fails at once once a stop signal is pending or a write failed, keeping
 * the first failure's errno. */
typedef struct part_out {
    int fd, err, stop;
    const sigset_t *stops;
    char *buf;
    size_t len, cap;
} part_out;

static int put_mem(part_out *o, const char *buf, size_t n)
{
    if (n == 0)
        return 0;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 1 << 16;
        while (cap < o->len + n)
            cap *= 2;
        char *b = realloc(o->buf, cap);
        if (!b)
            return ENOMEM;
        o->buf = b;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, buf, n);
    o->len += n;
    return 0;
}

/* n bytes at fd's offset off, or errno */
static int put_fd(int fd, const char *buf, size_t n, off_t off)
{
    for (size_t done = 0; done < n;) {
        ssize_t k = pwrite(fd, buf + done, n - done, off + (off_t)done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        done += (size_t)k;
    }
    return 0;
}

static ssize_t part_write(void *c, const char *buf, size_t n)
{
    part_out *o = c;
    if (o->err || o->stop || (o->stop = stop_pending(o->stops)) != 0)
        return 0; /* stdio: an error */
    o->err = o->fd < 0 ? put_mem(o, buf, n) : put_fd(o->fd, buf, n, (off_t)o->len);
    if (o->err)
        return 0;
    if (o->fd >= 0)
        o->len += n;
    return (ssize_t)n;
}

static int part_close(void *c)
{
    part_out *o = c;
    if (o->fd >= 0 && close(o->fd) != 0) {
        o->err = o->err ? o->err : errno;
        return -1;
    }
    return 0;
}

/* ctx through fn into o; false on a failure or a stop signal (in o) */
static bool fill(part_out *o, rep_writer *fn, const void *ctx)
{
    FILE *f = fopencookie(o, "w", (cookie_io_functions_t){.write = part_write, .close = part_close});
    if (!f) {
        o->err = errno;
        if (o->fd >= 0)
            close(o->fd);
        return false;
    }
    int lost = fn(f, ctx);
    bool bad = (ferror(f) != 0) | (fclose(f) != 0) | (lost != 0);
    if (lost && !o->err)
        o->err = lost;
    if (!o->stop)
        o->stop = stop_pending(o->stops);
    return !bad && !o->stop;
}

/* The answer to a write that did not complete: the stop signal (> 0) or
 * -DLG_EIO, with err saying what became of the earlier file. */
static int not_written(const part_out *o, const char *shown, const char *left, char *err, size_t errlen)
{
    if (o->stop) {
        snprintf(err, errlen, "%s: stopped by signal %d (%s) before it was complete; %s", shown, o->stop,
                 strsignal(o->stop), left);
        return o->stop;
    }
    if (o->err == ENOMEM) {
        snprintf(err, errlen, "%s: out of memory; %s", shown, left);
        return -DLG_ENOMEM;
    }
    snprintf(err, errlen, "%s: write failed: %s; %s", shown, strerror(o->err ? o->err : EIO), left);
    return -DLG_EIO;
}

/* "FINAL.part-PID" (free it), or NULL after "SHOWN: out of memory" in
 * err.  One per process: several writers of one report at once (every
 * rank of an mpirun, two scripts) each rename a whole file over FINAL,
 * where one shared .part was unlinked and renamed under the others. */
static char *part_name(const char *final, const char *shown, char *err, size_t errlen)
{
    size_t len = strlen(final) + sizeof ".part-" + 3 * sizeof(long);
    char *part = malloc(len);
    if (part)
        snprintf(part, len, "%s.part-%ld", final, (long)getpid());
    else
        snprintf(err, errlen, "%s: out of memory", shown);
    return part;
}

/* The .part beside final with old's owner, group and mode (a private
 * report stays private; a file root rewrites stays its owner's); or -1
 * with errno when it cannot be created, -2 when F's owner or group
 * cannot be given to it. */
static int open_part(const char *part, const struct stat *old)
{
    unlink(part); /* a killed run's of this PID; O_EXCL: never through a link someone put there */
    int fd = open(part, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, old ? 0600 : 0666);
    if (fd < 0 || !old)
        return fd;
    struct stat now;
    if (fstat(fd, &now) != 0 ||
        ((now.st_uid != old->st_uid || now.st_gid != old->st_gid) && fchown(fd, old->st_uid, old->st_gid) != 0)) {
        close(fd);
        unlink(part);
        return -2;
    }
    (void)fchmod(fd, old->st_mode & 07777); /* should it fail, the part stays owner-only */
    return fd;
}

/* ctx through fn into the open part, then part renamed to final; the part
 * is gone on any failure.  0, -DLG_EIO or a stop signal. */
static int write_part(const char *shown, const char *final, const char *part, int fd, rep_writer *fn,
                      const void *ctx, const sigset_t *stops, char *err, size_t errlen)
{
    part_out o = {.fd = fd, .stops = stops};
    bool ok = fill(&o, fn, ctx);
    if (ok && rename(part, final) != 0) {
        o.err = errno;
        ok = false;
    }
    if (ok)
        return 0;
    unlink(part);
    char left[PATH_MAX + 64];
    snprintf(left, sizeof left, "any earlier %s is left as it was", shown);
    return not_written(&o, shown, left, err, errlen);
}

/* ctx through fn into memory, then copied over F (fd, old: its stat) from
 * its first byte: the file, its links, owner and mode stay.  A failure or
 * stop signal while the report is made, or too little space for it (the
 * space is reserved before F is touched), leaves F as it was. */
static int write_in_place(const char *shown, int fd, const struct stat *old, rep_writer *fn, const void *ctx,
                          const sigset_t *stops, char *err, size_t errlen)
{
    part_out o = {.fd = -1, .stops = stops};
    char left[PATH_MAX + 64];
    snprintf(left, sizeof left, "%s is left as it was", shown);
    bool ok = fill(&o, fn, ctx);
    if (ok && o.len && fallocate(fd, 0, 0, (off_t)o.len) != 0 && errno != EOPNOTSUPP && errno != ENOSYS) {
        o.err = errno;
        (void)ftruncate(fd, old->st_size); /* a part of the space it may have added */
        ok = false;
    }
    if (ok && ((o.err = put_fd(fd, o.buf, o.len, 0)) != 0 || (ftruncate(fd, (off_t)o.len) != 0 && (o.err = errno)))) {
        snprintf(left, sizeof left, "%s may be incomplete", shown);
        ok = false;
    }
    free(o.buf);
    if (close(fd) != 0 && ok) {
        o.err = errno;
        snprintf(left, sizeof left, "%s may be incomplete", shown);
        ok = false;
    }
    return ok ? 0 : not_written(&o, shown, left, err, errlen);
}

/* An existing regular file F (fd: open for writing; old: its stat):
 * replaced by a renamed .part, unless that would lose what F is to other
 * names and users (its hard links, its owner or group) or its folder
 * takes no new file; then written in place. */
static int write_existing(const char *shown, const char *final, int fd, const struct stat *old, rep_writer *fn,
                          const void *ctx, const sigset_t *stops, char *err, size_t errlen)
{
    if (old->st_nlink > 1)
        return write_in_place(shown, fd, old, fn, ctx, stops, err, errlen);
    char *part = part_name(final, shown, err, errlen);
    if (!part) {
        close(fd);
        return -DLG_ENOMEM;
    }
    int pfd = open_part(part, old);
    int rc;
    if (pfd >= 0) {
        close(fd);
        rc = write_part(shown, final, part, pfd, fn, ctx, stops, err, errlen);
    } else {
        if (pfd == -1) /* not for F's owner or group: in place keeps them */
            fprintf(stderr, "dlgauge: note: %s: written in place: cannot create %s beside it (%s)\n", shown,
                    strrchr(part, '/') ? strrchr(part, '/') + 1 : part, strerror(errno));
        rc = write_in_place(shown, fd, old, fn, ctx, stops, err, errlen);
    }
    free(part);
    return rc;
}

/* A stream written where it is (standard output, a device, a FIFO). */
static int write_stream(FILE *f, const char *shown, rep_writer *fn, const void *ctx, char *err, size_t errlen)
{
    errno = 0;
    int lost = fn(f, ctx);
    int e = errno;
    bool bad = ferror(f) != 0;
    if (f == stdout)
        bad |= fflush(f) != 0;
    else
        bad |= fclose(f) != 0;
    if (!bad && lost) {
        snprintf(err, errlen, "%s: out of memory: part of the report is missing", shown);
        return -DLG_ENOMEM;
    }
    if (!bad)
        return 0;
    e = errno ? errno : e;
    snprintf(err, errlen, "%s: write failed: %s", shown, e ? strerror(e) : "an I/O error");
    return -DLG_EIO;
}

/* A file that did not exist: written as path.part, renamed when whole. */
static int write_new(const char *path, rep_writer *fn, const void *ctx, const sigset_t *stops, char *err,
                     size_t errlen)
{
    char *part = part_name(path, path, err, errlen);
    if (!part)
        return -DLG_ENOMEM;
    int fd = open_part(part, NULL);
    int rc = fd < 0 ? -DLG_EIO : write_part(path, path, part, fd, fn, ctx, stops, err, errlen);
    if (fd < 0)
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    free(part);
    return rc;
}

int rep_output_write(const char *path, rep_writer *fn, const void *ctx, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0)
        return write_stream(stdout, "standard output", fn, ctx, err, errlen);
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a directory; name the file to write", path);
        return -DLG_EIO;
    }
    if (exists && !S_ISREG(st.st_mode)) { /* /dev/stdout, a FIFO: nothing to replace */
        FILE *f = fopen(path, "w");
        if (!f) {
            snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
            return -DLG_EIO;
        }
        return write_stream(f, path, fn, ctx, err, errlen);
    }
    /* a link to a file: the file it names is written, the link kept */
    char *real = exists ? realpath(path, NULL) : NULL;
    const char *final = real ? real : path;
    /* F opened, not truncated: one it may not write is refused, as a
     * write in place would be, not replaced through its folder */
    int fd = exists ? open(final, O_WRONLY | O_CLOEXEC | O_NOCTTY) : -1;
    if (exists && (fd < 0 || fstat(fd, &st) != 0)) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(real);
        return -DLG_EIO;
    }
    sigset_t stops, old;
    block_stops(&stops, &old);
    int rc = exists ? write_existing(path, final, fd, &st, fn, ctx, &stops, err, errlen)
                    : write_new(path, fn, ctx, &stops, err, errlen);
    if (rc > 0) { /* taken here: it is answered by the exit status */
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, rc);
        sigtimedwait(&one, NULL, &(struct timespec){0, 0});
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(real);
    return rc;
}
