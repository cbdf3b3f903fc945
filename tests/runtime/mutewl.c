/* A workload whose failures test the runner's "did it say why": its setup
 * tries an optional file (`optional`, absent) whose open fails with the
 * backend's line and carries on, as one without a mean file does; its
 * step then fails with only -DLG_EIO (`step = silent`), or after a worker
 * thread said why during it (`step = worker`), or the step after one
 * during which a worker said why (`step = prefetched`: a prefetching
 * pool's failed read, said when read, fails the step that takes it). */
#include <dlgauge/plugin.h>

#include <pthread.h>
#include <stdlib.h>

enum { O_OPTIONAL, O_STEP, O_COUNT };

static const dlg_option mw_options[] = {
    [O_OPTIONAL] = {"optional", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "a file tried at setup", 0},
    [O_STEP] = {"step", DLG_OPT_ENUM, "silent", NULL, NULL, "silent|worker|prefetched", "how a step fails", 0},
    [O_COUNT] = {0},
};

typedef struct mw_state {
    const dlg_host *h;
    int64_t step;
    int steps;
} mw_state;

static int mw_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)j;
    mw_state *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->step = o[O_STEP].i;
    dlg_file *f = NULL;
    if (o[O_OPTIONAL].text && h->file_open(h, NULL, o[O_OPTIONAL].text, &f) == 0)
        h->file_close(h, f);
    *st = s;
    return 0;
}

static void *mw_worker(void *arg)
{
    const mw_state *s = arg;
    s->h->error(s->h, DLG_EIO, "loader: worker 2: record 17 is truncated");
    return NULL;
}

static int mw_step(void *st, dlg_step *out)
{
    mw_state *s = st;
    bool first = s->steps++ == 0;
    pthread_t t;
    if ((s->step == 1 || (s->step == 2 && first)) && pthread_create(&t, NULL, mw_worker, s) == 0)
        pthread_join(t, NULL);
    out->items = 1;
    return s->step == 2 && first ? 0 : -DLG_EIO;
}

static void mw_teardown(void *st) { free(st); }

static const dlg_workload_ops mw_ops = {1, "steps", mw_setup, mw_step, NULL, mw_teardown, NULL, NULL};

static const dlg_plugin_desc mw_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "mute_step", "1.0",
                                        "a step that fails after a recovered error at setup", mw_options, NULL,
                                        &mw_ops};

DLG_PLUGIN("mutewl", &mw_desc)
