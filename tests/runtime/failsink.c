/* A sink whose writes fail: `fail = said` with a message naming its path
 * (as csv's "PATH: ...: No space left on device"), `fail = silent` with
 * only -DLG_EIO, as a terse third-party sink.  What the run prints for
 * either must have one form.  `fail = recovers`: a write raises an error
 * and then succeeds after all (as influx's spool refusing points it holds
 * in memory): no later failure of another sink may borrow its text.
 *
 * `at = N` (tests/e2e/sink_fail.sh): only the Nth result row this process
 * writes fails, as `fail` says; with `fail = crash` it dies of SIGSEGV
 * there instead.  Every other result row is appended to `path`, one line
 * each ("job=J status=S start=T throughput=X", what a test compares with
 * another sink's row of the same cell), with write(2) at once, as the
 * csv sink does; other points are taken and dropped. */
#include <dlgauge/plugin.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_FAIL, OPT_AT, OPT_PATH, OPT_COUNT };

static const dlg_option options[] = {
    [OPT_FAIL] = {"fail", DLG_OPT_ENUM, "silent", NULL, NULL, "silent|said|recovers|crash", "how a write fails",
                  0},
    [OPT_AT] = {"at", DLG_OPT_INT, "0", "0", NULL, NULL, "the result row that fails (0: every write)", 0},
    [OPT_PATH] = {"path", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "where the rows it takes go (with at)",
                  DLG_OPT_NOSWEEP | DLG_OPT_PATH_OUT},
    [OPT_COUNT] = {0},
};

typedef struct fs_state {
    const dlg_host *h;
    int64_t how; /* OPT_FAIL's index */
    int64_t at, rows;
    int fd;
    volatile uintptr_t nowhere; /* where `crash` writes: unmapped, and no
                                 * sanitizer check stands in front of it */
} fs_state;

static int fs_open(const dlg_host *h, const dlg_value *o, const char *name, void **state)
{
    (void)name;
    fs_state *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->how = o[OPT_FAIL].i;
    s->at = o[OPT_AT].i;
    s->fd = -1;
    s->nowhere = 16;
    if (o[OPT_PATH].set && (s->fd = open(o[OPT_PATH].text, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
        free(s);
        return h->error(h, DLG_EIO, "path = %s: cannot open", o[OPT_PATH].text);
    }
    *state = s;
    return 0;
}

static int fail_now(fs_state *s)
{
    if (s->how == 3)
        *(volatile int *)s->nowhere = 1; /* SIGSEGV, as a sink with a bug */
    if (s->how == 2) {
        s->h->error(s->h, DLG_EIO, "results/spool.x: cannot spool points: they wait in memory");
        return 0;
    }
    return s->how == 1 ? s->h->error(s->h, DLG_EIO, "results/out.x: injected write error") : -DLG_EIO;
}

static const char *tag(const dlg_point *p, const char *key)
{
    for (size_t i = 0; i < p->ntags; i++)
        if (strcmp(p->tags[i].key, key) == 0)
            return p->tags[i].value;
    return "-";
}

static double number(const dlg_point *p, const char *key)
{
    for (size_t i = 0; i < p->nfields; i++)
        if (strcmp(p->fields[i].key, key) == 0)
            return p->fields[i].type == DLG_FIELD_DOUBLE ? p->fields[i].v.d
                   : p->fields[i].type == DLG_FIELD_UINT ? (double)p->fields[i].v.u
                                                         : (double)p->fields[i].v.i;
    return -1;
}

static const char *text(const dlg_point *p, const char *key)
{
    for (size_t i = 0; i < p->nfields; i++)
        if (strcmp(p->fields[i].key, key) == 0 && p->fields[i].type == DLG_FIELD_STRING)
            return p->fields[i].v.s;
    return "-";
}

static int fs_write(void *state, const dlg_point *pts, size_t n)
{
    fs_state *s = state;
    if (s->at == 0)
        return fail_now(s);
    for (size_t k = 0; k < n; k++) {
        if (strcmp(pts[k].measurement, "dlgauge_result") != 0)
            continue;
        if (++s->rows == s->at)
            return fail_now(s);
        if (s->fd >= 0)
            dprintf(s->fd, "job=%s status=%s start=%s throughput=%.17g\n", tag(&pts[k], "job"),
                    tag(&pts[k], "status"), text(&pts[k], "start_time"), number(&pts[k], "throughput"));
    }
    return 0;
}

static void fs_close(void *state)
{
    fs_state *s = state;
    if (s->fd >= 0)
        close(s->fd);
    free(s);
}

static const dlg_sink_ops ops = {.version = 1, .open = fs_open, .write = fs_write, .close = fs_close};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_SINK, "failing", "1.0",
                                     "writes fail, with or without a message", options, NULL, &ops};
DLG_PLUGIN("failsink", &desc)
