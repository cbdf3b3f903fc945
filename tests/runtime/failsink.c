/* A sink whose writes fail: `fail = said` with a message naming its path
 * (as csv's "PATH: ...: No space left on device"), `fail = silent` with
 * only -DLG_EIO, as a terse third-party sink.  What the run prints for
 * either must have one form.  `fail = recovers`: a write raises an error
 * and then succeeds after all (as influx's spool refusing points it holds
 * in memory): no later failure of another sink may borrow its text. */
#include <dlgauge/plugin.h>

#include <stdlib.h>

enum { OPT_FAIL, OPT_COUNT };

static const dlg_option options[] = {
    [OPT_FAIL] = {"fail", DLG_OPT_ENUM, "silent", NULL, NULL, "silent|said|recovers", "how a write fails",
                  0},
    [OPT_COUNT] = {0},
};

typedef struct fs_state {
    const dlg_host *h;
    int64_t how; /* OPT_FAIL's index */
} fs_state;

static int fs_open(const dlg_host *h, const dlg_value *o, const char *name, void **state)
{
    (void)name;
    fs_state *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->how = o[OPT_FAIL].i;
    *state = s;
    return 0;
}

static int fs_write(void *state, const dlg_point *pts, size_t n)
{
    (void)pts, (void)n;
    fs_state *s = state;
    if (s->how == 2) {
        s->h->error(s->h, DLG_EIO, "results/spool.x: cannot spool points: they wait in memory");
        return 0;
    }
    return s->how == 1 ? s->h->error(s->h, DLG_EIO, "results/out.x: injected write error") : -DLG_EIO;
}

static void fs_close(void *state) { free(state); }

static const dlg_sink_ops ops = {.version = 1, .open = fs_open, .write = fs_write, .close = fs_close};
static const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_SINK, "failing", "1.0",
                                     "writes fail, with or without a message", options, NULL, &ops};
DLG_PLUGIN("failsink", &desc)
