/* The files dlgauge report and compare name on their command line
 * (cmd_files.h): inputs checked before they are read, outputs written
 * whole or not at all. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

/* A .part file under a stdio stream: a write fails at once once a stop
 * signal is pending or a write failed, keeping the first failure's errno. */
typedef struct part_out {
    int fd, err, stop;
    const sigset_t *stops;
} part_out;

static ssize_t part_write(void *c, const char *buf, size_t n)
{
    part_out *o = c;
    if (o->err || o->stop || (o->stop = stop_pending(o->stops)) != 0)
        return 0; /* stdio: an error */
    for (size_t done = 0; done < n;) {
        ssize_t k = write(o->fd, buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            o->err = k < 0 ? errno : EIO;
            return 0;
        }
        done += (size_t)k;
    }
    return (ssize_t)n;
}

static int part_close(void *c)
{
    part_out *o = c;
    if (close(o->fd) != 0) {
        o->err = o->err ? o->err : errno;
        return -1;
    }
    return 0;
}

/* ctx through fn into part, then part renamed to final; the part is gone
 * on any failure.  old: final's stat, NULL for a new file.  0, -DLG_EIO or
 * a stop signal, as rep_output_write. */
static int write_part(const char *shown, const char *final, const char *part, const struct stat *old, rep_writer *fn,
                      const void *ctx, const sigset_t *stops, char *err, size_t errlen)
{
    unlink(part); /* an interrupted run's; O_EXCL: never through a link someone put there */
    part_out o = {.fd = open(part, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, old ? 0600 : 0666), .stops = stops};
    if (o.fd < 0) {
        snprintf(err, errlen, "%s: cannot write: %s", shown, strerror(errno));
        return -DLG_EIO;
    }
    /* the file replaced keeps its permissions (a private report stays
     * private); should that fail, the part stays owner-only */
    if (old)
        (void)fchmod(o.fd, old->st_mode & 07777);
    FILE *f = fopencookie(&o, "w", (cookie_io_functions_t){.write = part_write, .close = part_close});
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", shown, strerror(errno));
        close(o.fd);
        unlink(part);
        return -DLG_EIO;
    }
    fn(f, ctx);
    bool bad = (ferror(f) != 0) | (fclose(f) != 0);
    if (!o.stop)
        o.stop = stop_pending(stops);
    if (!bad && !o.stop && rename(part, final) != 0) {
        o.err = errno;
        bad = true;
    }
    if (!bad && !o.stop)
        return 0;
    unlink(part);
    if (o.stop) {
        snprintf(err, errlen, "%s: stopped by signal %d (%s) before it was complete; any earlier %s is left as it was",
                 shown, o.stop, strsignal(o.stop), shown);
        return o.stop;
    }
    snprintf(err, errlen, "%s: write failed: %s; any earlier %s is left as it was", shown,
             strerror(o.err ? o.err : EIO), shown);
    return -DLG_EIO;
}

/* A stream written where it is (standard output, a device, a FIFO). */
static int write_stream(FILE *f, const char *shown, rep_writer *fn, const void *ctx, char *err, size_t errlen)
{
    errno = 0;
    fn(f, ctx);
    int e = errno;
    bool bad = ferror(f) != 0;
    if (f == stdout)
        bad |= fflush(f) != 0;
    else
        bad |= fclose(f) != 0;
    if (!bad)
        return 0;
    e = errno ? errno : e;
    snprintf(err, errlen, "%s: write failed: %s", shown, e ? strerror(e) : "an I/O error");
    return -DLG_EIO;
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
    /* a link to a file: the file it names is replaced, the link kept */
    char *real = exists ? realpath(path, NULL) : NULL;
    const char *final = real ? real : path;
    char *part = malloc(strlen(final) + sizeof ".part");
    if (!part) {
        free(real);
        snprintf(err, errlen, "%s: out of memory", path);
        return -DLG_ENOMEM;
    }
    sprintf(part, "%s.part", final);
    sigset_t stops, old;
    block_stops(&stops, &old);
    int rc = write_part(path, final, part, exists ? &st : NULL, fn, ctx, &stops, err, errlen);
    if (rc > 0) { /* taken here: it is answered by the exit status */
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, rc);
        sigtimedwait(&one, NULL, &(struct timespec){0, 0});
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(part);
    free(real);
    return rc;
}
