/* sleep: each step sleeps a configured time (plus seeded random jitter).
 * The runner's accuracy test: its measured step latency must match the
 * requested sleep, which this workload also reports. */
#define _GNU_SOURCE
#include "diag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dlgauge/splitmix.h>

enum { OPT_SLEEP, OPT_JITTER };
#define MAX_NS (3600ull * 1000000000ull)
/* Long sleeps wake this often to notice host->stopping(). */
#define POLL_NS (100ull * 1000000ull)

static const dlg_option sleep_options[] = {
    {"sleep", DLG_OPT_DURATION, "10ms", "0", "3600s", NULL, "time each step sleeps", 0},
    {"jitter", DLG_OPT_DURATION, "0", "0", "3600s", NULL,
     "extra sleep per step, uniformly random in [0, jitter], seeded by the job seed", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}};

static const dlg_metric sleep_metrics[] = {
    {"sleep_ns", DLG_FIELD_INT, "ns", "configured sleep per step"},
    {"jitter_ns", DLG_FIELD_INT, "ns", "configured jitter bound"},
    {"requested_ns_mean", DLG_FIELD_DOUBLE, "ns",
     "mean requested sleep (sleep + drawn jitter) over the repetition's timed steps"},
    {"oversleep_ns_mean", DLG_FIELD_DOUBLE, "ns", "mean wake-up delay past the deadline over the timed steps"},
    {"oversleep_ns_max", DLG_FIELD_INT, "ns", "largest wake-up delay past the deadline in the timed steps"},
    {NULL, 0, NULL, NULL}};

struct sleeper {
    const dlg_host *h;
    uint64_t sleep_ns, jitter_ns;
    uint64_t rng;
    /* since begin_timed (or setup), or the last report */
    uint64_t steps, requested_sum, over_sum, over_max;
};

/* Uniform in [0, bound] by multiply-shift (no modulo bias worth noting). */
static uint64_t draw(uint64_t *state, uint64_t bound)
{
    if (bound == 0)
        return 0;
    return (uint64_t)(((unsigned __int128)dlg_splitmix_next(state) * (bound + 1)) >> 64);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int check_duration(const dlg_host *h, const char *key, const dlg_value *v)
{
    if (v->i < 0 || (uint64_t)v->i > MAX_NS)
        return h->error(h, DLG_EINVAL, "%s = %s: must be between 0 and 1h", key,
                        v->text ? v->text : "(unset)");
    return 0;
}

/* The workload's check, and the first thing setup applies. */
static int sleep_check(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job)
{
    int rc = check_duration(h, "sleep", &opts[OPT_SLEEP]);
    return rc < 0 ? rc : check_duration(h, "jitter", &opts[OPT_JITTER]);
}

static int sleep_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job,
                       void **state)
{
    *state = NULL;
    int rc = sleep_check(h, opts, job);
    if (rc < 0)
        return rc;
    struct sleeper *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->sleep_ns = (uint64_t)opts[OPT_SLEEP].i;
    s->jitter_ns = (uint64_t)opts[OPT_JITTER].i;
    s->rng = DLG_JOB_HAS(job, seed) ? job->seed : 0;
    *state = s;
    return 0;
}

static int sleep_step(void *state, dlg_step *out)
{
    struct sleeper *s = state;
    uint64_t want = s->sleep_ns + draw(&s->rng, s->jitter_ns);
    uint64_t deadline = now_ns() + want;
    for (;;) {
        /* An absolute deadline: an interrupted sleep resumes without drift. */
        uint64_t t = now_ns();
        if (t >= deadline) {
            uint64_t over = t - deadline;
            s->over_sum += over;
            if (over > s->over_max)
                s->over_max = over;
            break;
        }
        uint64_t wake = deadline - t > POLL_NS ? t + POLL_NS : deadline;
        struct timespec ts = {(time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull)};
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        if (rc != 0 && rc != EINTR)
            return s->h->error(s->h, DLG_EINTERNAL, "sleep: clock_nanosleep: %s", strerror(rc));
        if (now_ns() < deadline && s->h->stopping(s->h))
            return -DLG_ESTOP; /* the user asked to stop: this step is incomplete */
    }
    s->steps++;
    s->requested_sum += want;
    out->items = 1;
    return 0;
}

static int sleep_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    struct sleeper *s = state;
    api->add_int(f, "sleep_ns", (int64_t)s->sleep_ns);
    api->add_int(f, "jitter_ns", (int64_t)s->jitter_ns);
    if (s->steps > 0) {
        api->add_double(f, "requested_ns_mean", (double)s->requested_sum / (double)s->steps);
        api->add_double(f, "oversleep_ns_mean", (double)s->over_sum / (double)s->steps);
        api->add_int(f, "oversleep_ns_max", (int64_t)s->over_max);
    }
    s->steps = s->requested_sum = s->over_sum = s->over_max = 0;
    return 0;
}

static int sleep_begin_timed(void *state)
{
    struct sleeper *s = state;
    s->steps = s->requested_sum = s->over_sum = s->over_max = 0;
    return 0;
}

static void sleep_teardown(void *state) { free(state); }

static const dlg_workload_ops sleep_ops = {
    .version = 3,
    .check = sleep_check,
    .unit = "steps",
    .setup = sleep_setup,
    .step = sleep_step,
    .report = sleep_report,
    .teardown = sleep_teardown,
    .begin_timed = sleep_begin_timed,
};

const dlg_plugin_desc sleep_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_WORKLOAD,
    .name = "sleep",
    .version = "1.0",
    .summary = "sleeps a set time per step: checks the runner's timing accuracy",
    .options = sleep_options,
    .metrics = sleep_metrics,
    .ops = &sleep_ops,
};
