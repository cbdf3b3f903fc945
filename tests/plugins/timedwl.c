/* Workloads for the begin_timed op (workload ops version 2): `timed_count`
 * reports how many steps ran before begin_timed, how often it was called
 * and how many steps followed; `timed_v1` is a version-1 plugin whose ops
 * table is the version-1 layout followed by a poisoned pointer where
 * begin_timed would be, so a host that reads past version 1 fails it. */
#include <dlgauge/plugin.h>

#include <stdlib.h>

typedef struct tc_state {
    const dlg_host *h;
    int64_t steps, before, calls, after;
} tc_state;

static const dlg_metric tc_metrics[] = {
    {"steps_before_timed", DLG_FIELD_INT, "", "steps run before begin_timed (the warm-up)"},
    {"begin_timed_calls", DLG_FIELD_INT, "", "begin_timed calls in the repetition"},
    {"steps_after_timed", DLG_FIELD_INT, "", "steps run after begin_timed"},
    {NULL, 0, NULL, NULL},
};

static int tc_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)o, (void)j;
    tc_state *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->before = -1; /* reported as such when begin_timed never came */
    *st = s;
    return 0;
}

static int tc_step(void *st, dlg_step *out)
{
    tc_state *s = st;
    s->steps++;
    if (s->calls > 0)
        s->after++;
    out->items = 1;
    return 0;
}

static int tc_begin_timed(void *st)
{
    tc_state *s = st;
    if (s->calls++ == 0)
        s->before = s->steps;
    return 0;
}

static int tc_report(void *st, const dlg_report_api *api, dlg_fields *f)
{
    tc_state *s = st;
    api->add_int(f, "steps_before_timed", s->before);
    api->add_int(f, "begin_timed_calls", s->calls);
    api->add_int(f, "steps_after_timed", s->after);
    return 0;
}

static void tc_teardown(void *st) { free(st); }

static const dlg_workload_ops tc_ops = {2, "steps", tc_setup, tc_step, tc_report, tc_teardown, tc_begin_timed};

static const dlg_plugin_desc tc_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "timed_count", "1.0",
                                        "counts the steps around begin_timed", NULL, tc_metrics, &tc_ops};

/* The ops table as a plugin built against workload ops version 1 has it. */
typedef struct v1_ops {
    uint32_t version;
    const char *unit;
    int (*setup)(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state);
    int (*step)(void *state, dlg_step *out);
    int (*report)(void *state, const dlg_report_api *api, dlg_fields *f);
    void (*teardown)(void *state);
} v1_ops;

_Static_assert(sizeof(v1_ops) == offsetof(dlg_workload_ops, begin_timed), "v1 layout");

static int v1_poison(void *st)
{
    tc_state *s = st;
    return s->h->error(s->h, DLG_EINTERNAL, "timed_v1: the host called a member past ops version 1");
}

/* Whatever follows a version-1 table in memory: here a callable trap. */
static const struct {
    v1_ops ops;
    int (*next)(void *state);
} v1_table = {{1, "steps", tc_setup, tc_step, tc_report, tc_teardown}, v1_poison};

static const dlg_plugin_desc v1_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "timed_v1", "1.0",
                                        "a version-1 workload (no begin_timed)", NULL, tc_metrics, &v1_table};

DLG_PLUGIN("timedwl", &tc_desc, &v1_desc)
