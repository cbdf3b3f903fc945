/* Workloads for the ops added by versions.  begin_timed (version 2):
 * `timed_count` reports how many steps ran before begin_timed, how often it
 * was called and how many steps followed; `timed_v1` is a version-1 plugin
 * whose ops table is the version-1 layout followed by a poisoned pointer
 * where begin_timed would be, so a host that reads past version 1 fails it.
 * check (version 3): `checked` refuses lo above hi, and storage caps other
 * than its `caps` option asks (dlg_job_info.storage_caps), in check and
 * (by the same function) in setup; `check_v2` is a version-2 plugin whose table is
 * followed by a poisoned pointer where check would be, so a host that
 * reads past version 2 fails its cells before they run.  `times` reports
 * step timings as its `bad` option says: a wait longer than the step, an
 * elapsed_ns of garbage, or a wait that passes its own elapsed_ns within
 * the host's time for the step (two clocks apart); its report gives field
 * `twice` twice, 100 then its step count. */
#include <dlgauge/plugin.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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

static const dlg_workload_ops tc_ops = {2, "steps", tc_setup, tc_step, tc_report, tc_teardown, tc_begin_timed, NULL};

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

/* ---- check (version 3) ---- */

enum { O_LO, O_HI, O_CALLS, O_CAPS, O_COUNT };

static const dlg_option ck_options[] = {
    [O_LO] = {"lo", DLG_OPT_INT, "1", "0", NULL, NULL, "lower bound", 0},
    [O_HI] = {"hi", DLG_OPT_INT, "2", "0", NULL, NULL, "upper bound: at least lo", 0},
    [O_CALLS] = {"calls", DLG_OPT_STRING, "", NULL, NULL, NULL, "a file check appends one byte to per call", 0},
    [O_CAPS] = {"caps", DLG_OPT_INT, "-1", "-1", NULL, NULL,
                "the job's storage_caps that check and setup accept (-1: any)", 0},
    [O_COUNT] = {0},
};

static int ck_rules(const dlg_host *h, const dlg_value *o, const dlg_job_info *j)
{
    if (o[O_LO].i > o[O_HI].i)
        return h->error(h, DLG_EINVAL, "lo = %s: above hi = %s", o[O_LO].text, o[O_HI].text);
    if (o[O_CAPS].i >= 0 && !DLG_JOB_HAS(j, storage_caps))
        return h->error(h, DLG_EINVAL, "caps = %s: the host says no storage_caps", o[O_CAPS].text);
    if (o[O_CAPS].i >= 0 && j->storage_caps != (uint32_t)o[O_CAPS].i)
        return h->error(h, DLG_EINVAL, "caps = %s: the job's storage has caps %u", o[O_CAPS].text,
                        (unsigned)j->storage_caps);
    return 0;
}

static int ck_check(const dlg_host *h, const dlg_value *o, const dlg_job_info *j)
{
    FILE *calls = o[O_CALLS].text && *o[O_CALLS].text ? fopen(o[O_CALLS].text, "a") : NULL;
    if (calls) {
        fputc('.', calls);
        fclose(calls);
    }
    return ck_rules(h, o, j);
}

static int ck_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    *st = NULL;
    int rc = ck_rules(h, o, j);
    if (rc < 0)
        return rc;
    if (!(*st = calloc(1, 1)))
        return h->error(h, DLG_ENOMEM, "out of memory");
    return 0;
}

static int ck_step(void *st, dlg_step *out)
{
    (void)st;
    out->items = 1;
    return 0;
}

static void ck_teardown(void *st) { free(st); }

static const dlg_workload_ops ck_ops = {3, "steps", ck_setup, ck_step, NULL, ck_teardown, NULL, ck_check};

static const dlg_plugin_desc ck_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "checked", "1.0",
                                        "refuses lo above hi before any cell runs", ck_options, NULL, &ck_ops};

/* The ops table as a plugin built against workload ops version 2 has it. */
typedef struct v2_ops {
    v1_ops v1;
    int (*begin_timed)(void *state);
} v2_ops;

_Static_assert(sizeof(v2_ops) == offsetof(dlg_workload_ops, check), "v2 layout");

static int v2_poison(const dlg_host *h, const dlg_value *o, const dlg_job_info *j)
{
    (void)o, (void)j;
    return h->error(h, DLG_EINTERNAL, "check_v2: the host called a member past ops version 2");
}

/* Whatever follows a version-2 table in memory: here a callable trap. */
static const struct {
    v2_ops ops;
    int (*next)(const dlg_host *h, const dlg_value *o, const dlg_job_info *j);
} v2_table = {{{2, "steps", ck_setup, ck_step, NULL, ck_teardown}, NULL}, v2_poison};

static const dlg_plugin_desc v2_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "check_v2", "1.0",
                                        "a version-2 workload (no check)", ck_options, NULL, &v2_table};

/* ---- step timings ---- */

enum { TM_NONE, TM_WAIT, TM_ELAPSED, TM_APART };

static const dlg_option tm_options[] = {
    {"bad", DLG_OPT_ENUM, "none", NULL, NULL, "none|wait|elapsed|apart",
     "step 3's timings: wait_ns 10 s, elapsed_ns UINT64_MAX, or (every step, of 1 ms) elapsed_ns 1 us and "
     "wait_ns 2 us", 0},
    {0},
};

typedef struct tm_state {
    int bad;
    uint64_t steps;
} tm_state;

static int tm_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)j;
    tm_state *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->bad = (int)o[0].i;
    *st = s;
    return 0;
}

static int tm_step(void *st, dlg_step *out)
{
    tm_state *s = st;
    out->items = 1;
    if (++s->steps == 3 && s->bad == TM_WAIT)
        out->wait_ns = 10000000000ull;
    if (s->steps == 3 && s->bad == TM_ELAPSED)
        out->elapsed_ns = UINT64_MAX;
    if (s->bad == TM_APART) {
        nanosleep(&(struct timespec){0, 1000000}, NULL);
        out->elapsed_ns = 1000;
        out->wait_ns = 2000;
    }
    return 0;
}

static int tm_report(void *st, const dlg_report_api *api, dlg_fields *f)
{
    api->add_int(f, "twice", 100);
    api->add_int(f, "twice", (int64_t)((tm_state *)st)->steps);
    return 0;
}

static void tm_teardown(void *st) { free(st); }

static const dlg_metric tm_metrics[] = {
    {"twice", DLG_FIELD_INT, "", "reported twice a repetition: 100, then the steps"},
    {NULL, 0, NULL, NULL},
};

static const dlg_workload_ops tm_ops = {1, "steps", tm_setup, tm_step, tm_report, tm_teardown, NULL, NULL};

static const dlg_plugin_desc tm_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "times", "1.0",
                                        "reports step timings as told", tm_options, tm_metrics, &tm_ops};

DLG_PLUGIN("timedwl", &tc_desc, &v1_desc, &ck_desc, &v2_desc, &tm_desc)
