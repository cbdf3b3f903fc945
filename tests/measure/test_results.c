/* The dlgauge_result row from known counters: every derived field is the
 * figure docs/metrics.md defines, and every field written is declared in
 * the core metrics table with the type it is written with. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"
#include "results.h"

static const dlg_option wl_options[] = {
    {.name = "path", .type = DLG_OPT_STRING},
    {.name = "batch", .type = DLG_OPT_INT},
    {0},
};
static const dlg_metric wl_metrics[] = {
    {"loss", DLG_FIELD_DOUBLE, "", "mean loss"},
    {"epochs", DLG_FIELD_UINT, "", "epochs"},
    {NULL, 0, NULL, NULL},
};

typedef struct fixture {
    dlg_plan plan;
    dlg_run run;
    dlg_section sec;
    dlg_plugin_desc desc;
    dlg_job job;
    dlg_value wl[2];
    dlg_cell cell;
    dlg_cell_result res;
    dlg_wfield wf[2];
    dlg_point_buf pb;
} fixture;

/* A cell of 3 repetitions with round counters, so each figure is known. */
static fixture *make(void)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->run.plan = &f->plan;
    snprintf(f->run.run_id, sizeof f->run.run_id, "r1");
    snprintf(f->run.host, sizeof f->run.host, "h1");
    f->sec = (dlg_section){.name = "j", .file = "t.ini", .line = 3};
    f->desc = (dlg_plugin_desc){.name = "sleep", .options = wl_options, .metrics = wl_metrics};
    f->job = (dlg_job){.name = "j", .sec = &f->sec, .workload = &f->desc, .nwl = 2, .ncells = 1};
    f->wl[0] = (dlg_value){.text = "a b\\c", .set = true};
    f->cell = (dlg_cell){.job = &f->job, .wl = f->wl};
    f->cell.core[DLG_K_WORKLOAD] = (dlg_value){.text = "sleep", .set = true};
    f->cell.core[DLG_K_CPUS] = (dlg_value){.text = "2", .i = 2, .set = true};

    assert_int_equal(dlg_cell_result_init(&f->res), 0);
    dlg_cell_result *r = &f->res;
    const double thr[] = {100, 110, 120};
    dlg_summarize(thr, 3, &r->throughput);
    r->unit = "images";
    r->items = 3300;
    r->steps = 1000;
    r->reps = 3;
    r->warmup = 2;
    r->wall_s = 30.5;
    /* 999 steps of 5 ms and one of 9 ms: p99.9 is rank 999, a 5 ms step */
    for (int i = 0; i < 999; i++)
        dlg_hist_record(r->latency, 5000000);
    dlg_hist_record(r->latency, 9000000);
    r->wait_ns = 1500000000;
    r->busy_ns = 6000000000;
    r->cpu_user_s = 40;
    r->cpu_sys_s = 5.75;
    r->cpu_window_s = 30.5;      /* the rusage readings' window: the timed steps here */
    r->cpu_window_cpu_s = 45.75; /* the process's CPU time in it */
    r->cpus_used = 2;
    r->cpu_capacity = 2;
    snprintf(r->cpu_list, sizeof r->cpu_list, "0-1");
    r->rss_peak = 123456789;
    r->read_bytes = 4096;
    r->disk_read_bytes = 8192;
    r->storage_bytes = 1 << 20;
    r->storage_ios = 256;
    r->major_faults = 3;
    r->ctx_voluntary = 5;
    r->ctx_involuntary = 7;
    r->iowait_fraction = 0.125;
    snprintf(r->gpu_name, sizeof r->gpu_name, "Test GPU");
    r->gpu_samples = 300;
    r->gpu_seconds = 30;
    r->gpu_util_sum_s = 30 * 80.0;  /* 80% for 30 s */
    r->gpu_power_sum_s = 30 * 250.0; /* 250 W for 30 s */
    r->gpu_energy_j = 7260;
    r->gpu_mem_peak = 1ull << 30;
    r->start_realtime_ns = 1700000000123456789ll;
    f->wf[0] = (dlg_wfield){.key = "loss", .type = DLG_FIELD_DOUBLE, .sum = 3.0, .count = 2};
    f->wf[1] = (dlg_wfield){.key = "epochs", .type = DLG_FIELD_UINT, .sum = 7, .count = 2};
    r->wf = f->wf;
    r->nwf = 2;
    return f;
}

static void done(fixture *f)
{
    f->res.wf = NULL; /* the fixture's own */
    f->res.nwf = 0;
    dlg_cell_result_fini(&f->res);
    free(f);
}

static const dlg_field *field(const dlg_point_buf *pb, const char *key)
{
    for (size_t i = 0; i < pb->point.nfields; i++)
        if (strcmp(pb->point.fields[i].key, key) == 0)
            return &pb->point.fields[i];
    return NULL;
}

static double num(const dlg_point_buf *pb, const char *key)
{
    const dlg_field *f = field(pb, key);
    if (!f)
        fail_msg("no field %s", key);
    switch (f->type) {
    case DLG_FIELD_DOUBLE: return f->v.d;
    case DLG_FIELD_INT: return (double)f->v.i;
    case DLG_FIELD_UINT: return (double)f->v.u;
    default: fail_msg("field %s is not a number", key);
    }
    return NAN;
}

static const char *text(const dlg_point_buf *pb, const char *key)
{
    const dlg_field *f = field(pb, key);
    if (!f || f->type != DLG_FIELD_STRING)
        fail_msg("no string field %s", key);
    return f->v.s;
}

#define near(pb, key, want) \
    do { \
        double got_ = num(pb, key), want_ = (want); \
        if (!(fabs(got_ - want_) <= 1e-12 * fabs(want_))) \
            fail_msg("%s: got %.17g want %.17g", key, got_, want_); \
    } while (0)

/* What the fixture's counters must give. */
static const struct {
    const char *key;
    double want;
} known[] = {
    {"throughput", 110}, /* mean of 100, 110, 120 */
    {"throughput_stddev", 10},
    {"items", 3300},
    {"steps", 1000},
    {"repeats", 3},
    {"warmup_steps", 2},
    {"wall_s", 30.5},
    /* microseconds; percentiles are nearest rank, clamped to [min, max] */
    {"latency_min_us", 5000},
    {"latency_p50_us", 5000},
    {"latency_p90_us", 5000},
    {"latency_p99_us", 5000},
    {"latency_p999_us", 5000}, /* rank 999 of 1000, not the 9 ms step */
    {"latency_max_us", 9000},
    {"latency_mean_us", 5004},
    {"data_wait_fraction", 0.25}, /* 1.5 s of 6 s of steps */
    {"cpu_user_s", 40},
    {"cpu_sys_s", 5.75},
    {"cpu_user_share", 0.75}, /* 45.75 s / (30.5 s x 2) */
    {"cpus_used", 2},
    {"rss_peak_bytes", 123456789},
    {"read_bytes", 4096},
    {"disk_read_bytes", 8192},
    {"storage_read_bytes", 1 << 20},
    {"storage_ios", 256},
    {"major_faults", 3},
    {"ctx_switches_voluntary", 5},
    {"ctx_switches_involuntary", 7},
    {"host_iowait_fraction", 0.125},
    {"gpu_util", 80},
    {"power_avg_w", 250},
    {"energy_j", 7260},
    {"energy_per_item_j", 2.2}, /* 7260 J / 3300 items */
    {"gpu_mem_peak_bytes", 1 << 30},
    {"loss", 1.5},  /* mean over repetitions */
    {"epochs", 4},  /* 3.5 rounded */
};

static void test_known_row(void **st)
{
    fixture *f = make();
    dlg_result_point(&f->run, &f->cell, &f->res, &f->pb);
    const dlg_point_buf *pb = &f->pb;
    assert_string_equal(pb->point.measurement, "dlgauge_result");
    assert_true(pb->point.time_ns == 1700000000123456789ll);

    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        near(pb, known[i].key, known[i].want);
    near(pb, "throughput_ci95", 4.302652730 * 10 / sqrt(3)); /* t(0.975, 2) */
    double ss = 999 * 4000.0 * 4000.0 + 3996000.0 * 3996000.0; /* ns^2 about the mean */
    near(pb, "latency_stddev_us", sqrt(ss / 999) / 1e3);
    assert_string_equal(text(pb, "unit"), "images");
    assert_string_equal(text(pb, "cpu_list"), "0-1");
    assert_string_equal(text(pb, "gpu_name"), "Test GPU");
    assert_string_equal(text(pb, "start_time"), "2023-11-14T22:13:20.123456789Z");
    assert_string_equal(text(pb, "config"), "workload=sleep cpus=2 path=a\\ b\\\\c");
    assert_null(field(pb, "error"));                 /* empty: not written */
    assert_null(field(pb, "storage_config"));        /* no storage */
    done(f);
}

/* Under a CPU quota of 0.5 the cell has one thread (cpus_used 1) but half
 * a CPU's time: busy all of it is a share of 1, not 0.5. */
static void test_share_of_quota(void **st)
{
    fixture *f = make();
    f->res.cpus_used = 1;
    f->res.cpu_capacity = 0.5;
    f->res.cpu_user_s = 15;
    f->res.cpu_sys_s = 0.25;
    f->res.cpu_window_cpu_s = 15.25;
    dlg_result_point(&f->run, &f->cell, &f->res, &f->pb);
    near(&f->pb, "cpu_user_share", 1.0); /* 15.25 s / (30.5 s x 0.5) */
    done(f);
}

/* A cell of a few microseconds: the CPU time was read over a window of
 * 100 us (the readings around the steps), the steps took 2 us; busy all
 * of the window on one CPU is a share of 1, not 50. */
static void test_share_over_window(void **st)
{
    fixture *f = make();
    f->res.cpus_used = 1;
    f->res.cpu_capacity = 1;
    f->res.wall_s = 2e-6;
    f->res.cpu_user_s = 0.0001;
    f->res.cpu_sys_s = 0;
    f->res.cpu_window_s = 1e-4;
    f->res.cpu_window_cpu_s = 1e-4;
    dlg_result_point(&f->run, &f->cell, &f->res, &f->pb);
    near(&f->pb, "cpu_user_share", 1.0);
    done(f);
}

/* What cannot be computed is left out, never written as 0 or NaN. */
static void test_absent_fields(void **st)
{
    fixture *f = make();
    dlg_hist_reset(f->res.latency);
    f->res.busy_ns = 0;
    f->res.wall_s = 0;
    f->res.cpu_window_s = 0;
    f->res.items = 0;
    f->res.gpu_samples = 0;
    f->res.iowait_fraction = NAN;
    dlg_result_point(&f->run, &f->cell, &f->res, &f->pb);
    static const char *const gone[] = {"latency_min_us", "latency_p50_us", "latency_max_us",
                                       "latency_mean_us", "data_wait_fraction", "cpu_user_share",
                                       "host_iowait_fraction", "gpu_name", "gpu_util", "energy_j",
                                       "energy_per_item_j"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
        if (field(&f->pb, gone[i]))
            fail_msg("%s written without a value", gone[i]);
    done(f);
}

/* Each core field of the row is a documented one, of its documented type. */
static void test_fields_declared(void **st)
{
    fixture *f = make();
    snprintf(f->res.error, sizeof f->res.error, "why");
    dlg_result_point(&f->run, &f->cell, &f->res, &f->pb);
    for (size_t i = 0; i < f->pb.point.nfields; i++) {
        const dlg_field *fl = &f->pb.point.fields[i];
        const dlg_metric *m = dlg_core_metrics;
        while (m->name && strcmp(m->name, fl->key) != 0)
            m++;
        if (!m->name) {
            m = wl_metrics;
            while (m->name && strcmp(m->name, fl->key) != 0)
                m++;
        }
        if (!m->name)
            fail_msg("field %s is not in docs/metrics.md", fl->key);
        if (m->type != fl->type)
            fail_msg("field %s written as type %d, declared %d", fl->key, (int)fl->type, (int)m->type);
    }
    done(f);
}

static const char *tag_of(const dlg_wire_point *wp, const char *key)
{
    for (size_t i = 0; i < wp->point.ntags; i++)
        if (strcmp(wp->tags[i].key, key) == 0)
            return wp->tags[i].value;
    return NULL;
}

/* A reported field named like another job's swept key (lstm-ptb's dropout)
 * becomes that tag column, written as the swept values are: 0.1, so that one
 * value is one group on a dashboard. */
static void test_field_tag_text(void **st)
{
    const char *keys[] = {"dropout", "job", "run_id"}; /* sorted, as the plan keeps them */
    dlg_plan plan = {.tag_keys = keys, .ntag_keys = 3};
    static const double values[] = {0.1, 0.3, 0.7, 1e-4, 2.5, 1.0 / 3};
    static const char *const texts[] = {"0.1", "0.3", "0.7", "0.0001", "2.5", "0.3333333333333333"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        dlg_wire_point wp;
        assert_int_equal(dlg_wire_point_init(&wp, "dlgauge_result", 0), 0);
        dlg_wire_set_tag(&wp, "job", "j");
        dlg_field fl = {.key = "dropout", .type = DLG_FIELD_DOUBLE, .v.d = values[i]};
        dlg_wire_add_field(&wp, &fl);
        fl = (dlg_field){.key = "loss", .type = DLG_FIELD_DOUBLE, .v.d = 0.1};
        dlg_wire_add_field(&wp, &fl);
        dlg_result_tag_columns(&plan, &wp);
        assert_non_null(tag_of(&wp, "dropout"));
        assert_string_equal(tag_of(&wp, "dropout"), texts[i]);
        assert_null(dlg_wire_field(&wp, "dropout")); /* one column of that name */
        assert_non_null(dlg_wire_field(&wp, "loss"));
        dlg_wire_point_free(&wp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_row),
        cmocka_unit_test(test_share_of_quota), cmocka_unit_test(test_share_over_window),
        cmocka_unit_test(test_absent_fields),
        cmocka_unit_test(test_fields_declared),
        cmocka_unit_test(test_field_tag_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
