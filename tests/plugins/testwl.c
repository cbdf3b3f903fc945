/* A well-formed plugin whose workloads exercise the runner's edge cases:
 * a required option, failures in setup and in a step (with and without a
 * message), and a deterministic counter that reports its own fields. */
#include <dlgauge/plugin.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct tw_state {
    const dlg_host *h;
    int64_t steps, fail_at, items;
    uint64_t seed;
} tw_state;

static int tw_new(const dlg_host *h, const dlg_job_info *job, void **st)
{
    tw_state *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->seed = job->seed;
    s->items = 1;
    *st = s;
    return 0;
}

static void tw_teardown(void *st) { free(st); }

/* needs: `size` has no default and is required */
static const dlg_option needs_options[] = {
    {"size", DLG_OPT_SIZE, NULL, "1", NULL, NULL, "bytes per step (required)", DLG_OPT_REQUIRED},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};
static int needs_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    if (!o[0].set)
        return h->error(h, DLG_EINVAL, "size is unset although required");
    int rc = tw_new(h, j, st);
    if (rc == 0)
        ((tw_state *)*st)->items = o[0].i;
    return rc;
}
static int plain_step(void *st, dlg_step *out)
{
    tw_state *s = st;
    s->steps++;
    out->items = (uint64_t)s->items;
    return 0;
}

/* fail_setup: refuses to start, saying why */
static int fail_setup_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)o, (void)j;
    *st = NULL;
    return h->error(h, DLG_EINVAL, "fail_setup: refusing to start, on purpose");
}

/* fail_step: step number fail_at (0-based, warm-up included) fails */
static const dlg_option fail_step_options[] = {
    {"fail_at", DLG_OPT_INT, "3", "0", NULL, NULL, "0-based step that fails", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};
static int fail_step_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    int rc = tw_new(h, j, st);
    if (rc == 0)
        ((tw_state *)*st)->fail_at = o[0].i;
    return rc;
}
static int fail_step_step(void *st, dlg_step *out)
{
    tw_state *s = st;
    if (s->steps == s->fail_at)
        return s->h->error(s->h, DLG_EIO, "fail_step: step %lld failed on purpose", (long long)s->steps);
    return plain_step(st, out);
}

/* silent: fails its first step without a message */
static int silent_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)o;
    return tw_new(h, j, st);
}
static int silent_step(void *st, dlg_step *out)
{
    (void)st, (void)out;
    return -DLG_EIO;
}

/* count: `per_step` items a step; reports the seed it got and a constant (and
 * tries each with the call of the other type) */
static const dlg_option count_options[] = {
    {"per_step", DLG_OPT_INT, "7", "0", "1000000", NULL, "items per step", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};
static const dlg_metric count_metrics[] = {
    {"seed_seen", DLG_FIELD_INT, "", "seed of the repetition (mean over repetitions)"},
    {"flavour", DLG_FIELD_STRING, "", "a constant string"},
    {NULL, 0, NULL, NULL},
};
static int count_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    int rc = tw_new(h, j, st);
    if (rc == 0)
        ((tw_state *)*st)->items = o[0].i;
    return rc;
}
static int count_report(void *st, const dlg_report_api *api, dlg_fields *f)
{
    tw_state *s = st;
    api->add_int(f, "seed_seen", (int64_t)s->seed);
    api->add_string(f, "flavour", "a \"quoted\", comma string");
    /* the wrong call for each type: warned and dropped, the values stand */
    api->add_string(f, "seed_seen", "not a number");
    api->add_double(f, "flavour", 1.5);
    return 0;
}

/* segv: step number fail_at dies of SIGSEGV (a crashing cell) */
static int segv_step(void *st, dlg_step *out)
{
    tw_state *s = st;
    if (s->steps++ == s->fail_at) {
        /* a real SIGSEGV with the default action, even where a sanitizer
         * would catch a NULL store or install its own SEGV handler */
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
    }
    out->items = 1;
    return 0;
}

/* hang: every step sleeps an hour and ignores stop requests (a hung cell) */
static int hang_step(void *st, dlg_step *out)
{
    (void)st;
    for (;;)
        sleep(3600);
    out->items = 1;
    return 0;
}

/* hog: each step allocates and touches `size` more bytes, never freed
 * until teardown (a cell that outgrows its memory limit) */
typedef struct hog_state {
    tw_state base;
    char **blocks;
    size_t n, cap;
} hog_state;
static const dlg_option hog_options[] = {
    {"size", DLG_OPT_SIZE, "16MiB", "4KiB", NULL, NULL, "bytes allocated per step", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};
static int hog_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    hog_state *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->base.h = h;
    s->base.items = o[0].i;
    *st = s;
    return 0;
}
static int hog_step(void *st, dlg_step *out)
{
    hog_state *s = st;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **b = realloc(s->blocks, cap * sizeof *b);
        if (!b)
            return s->base.h->error(s->base.h, DLG_ENOMEM, "out of memory");
        s->blocks = b;
        s->cap = cap;
    }
    char *m = malloc((size_t)s->base.items);
    if (!m)
        return s->base.h->error(s->base.h, DLG_ENOMEM, "out of memory");
    memset(m, 1, (size_t)s->base.items);
    s->blocks[s->n++] = m;
    out->items = 1;
    return 0;
}
static void hog_teardown(void *st)
{
    hog_state *s = st;
    for (size_t i = 0; i < s->n; i++)
        free(s->blocks[i]);
    free(s->blocks);
    free(s);
}

/* gpuish: a step of 20 ms "on" the device named by its device option, so
 * that the runner's NVML sampling can be checked against a fake driver */
static const dlg_option gpuish_options[] = {
    {"device", DLG_OPT_STRING, "cuda:0", NULL, NULL, NULL, "auto | cpu | cuda:N", DLG_OPT_NOSWEEP},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};
static int gpuish_step(void *st, dlg_step *out)
{
    (void)st;
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    out->items = 10;
    return 0;
}

static const dlg_workload_ops needs_ops = {1, "bytes", needs_setup, plain_step, NULL, tw_teardown, NULL, NULL};
static const dlg_workload_ops fail_setup_ops = {1, "steps", fail_setup_setup, plain_step, NULL, tw_teardown, NULL, NULL};
static const dlg_workload_ops fail_step_ops = {1, "steps", fail_step_setup, fail_step_step, NULL, tw_teardown, NULL, NULL};
static const dlg_workload_ops silent_ops = {1, "steps", silent_setup, silent_step, NULL, tw_teardown, NULL, NULL};
static const dlg_workload_ops count_ops = {1, "things", count_setup, plain_step, count_report, tw_teardown, NULL, NULL};
static const dlg_workload_ops segv_ops = {1, "steps", fail_step_setup, segv_step, NULL, tw_teardown, NULL, NULL};
static const dlg_workload_ops hang_ops = {1, "steps", silent_setup, hang_step, NULL, tw_teardown, NULL, NULL};
static const dlg_workload_ops hog_ops = {1, "steps", hog_setup, hog_step, NULL, hog_teardown, NULL, NULL};
static const dlg_workload_ops gpuish_ops = {1, "images", silent_setup, gpuish_step, NULL, tw_teardown, NULL, NULL};

#define DESC(var, nm, opts, mets, opsp)                                                        \
    static const dlg_plugin_desc var = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, nm, "1.0", \
                                        "test workload " nm, opts, mets, opsp}
DESC(needs_desc, "needs", needs_options, NULL, &needs_ops);
DESC(fail_setup_desc, "fail_setup", NULL, NULL, &fail_setup_ops);
DESC(fail_step_desc, "fail_step", fail_step_options, NULL, &fail_step_ops);
DESC(silent_desc, "silent", NULL, NULL, &silent_ops);
DESC(count_desc, "count", count_options, count_metrics, &count_ops);
DESC(segv_desc, "segv", fail_step_options, NULL, &segv_ops);
DESC(hang_desc, "hang", NULL, NULL, &hang_ops);
DESC(hog_desc, "hog", hog_options, NULL, &hog_ops);
DESC(gpuish_desc, "gpuish", gpuish_options, NULL, &gpuish_ops);

DLG_PLUGIN("testwl", &needs_desc, &fail_setup_desc, &fail_step_desc, &silent_desc, &count_desc, &segv_desc,
           &hang_desc, &hog_desc, &gpuish_desc)
