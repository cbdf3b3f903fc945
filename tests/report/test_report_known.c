/* dlgauge report on a hand-built results file with known curves
 * (fixtures/known.csv: throughput = min(cpu curve, memory curve)):
 * knees, significance, bottlenecks, recommendation and cost per million
 * items must be exactly what the curves and the test catalog imply. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "assert_more.h"

#include <dlgauge/plugin.h>

#include "model_csv.h"
#include "reco_helpers.h"
#include "report.h"
#include "temp_file.h"

/* cmocka 1.1.5 has no assert_double_equal */

static char path_buf[4096];

static const char *fixture(const char *name)
{
    const char *src = getenv("DLG_SOURCE_DIR");
    snprintf(path_buf, sizeof path_buf, "%s/tests/report/fixtures/%s", src ? src : ".", name);
    return path_buf;
}

typedef struct world {
    rep_report r;
    char err[1024];
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    if (!w)
        return -1;
    w->r.target = 0.95;
    if (rep_read_file(&w->r.rows, fixture("known.csv"), w->err, sizeof w->err) != 0 ||
        rep_rows_validate(&w->r.rows, w->err, sizeof w->err) != 0 ||
        rep_model_build(&w->r.model, &w->r.rows, &w->r.disks, 0.95, w->err, sizeof w->err) != 0) {
        fprintf(stderr, "setup: %s\n", w->err);
        return -1;
    }
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    rep_reco_free(&w->r.reco);
    rep_catalog_free(&w->r.cat);
    rep_model_free(&w->r.model);
    rep_rows_free(&w->r.rows);
    free(w->r.selected);
    free(w);
    return 0;
}

static const rep_group *group(const rep_model *m, const char *mode)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->g[i].mode, mode) == 0)
            return &m->g[i];
    return NULL;
}

static const char *knee_value(const rep_group *g, const char *axis)
{
    long a = rep_group_axis(g, axis);
    assert_true(a >= 0);
    return g->axes[a].vals[g->knees[a].val];
}

static void test_groups_and_axes(void **state)
{
    world *w = *state;
    assert_int_equal(w->r.rows.n, 15);
    assert_int_equal(w->r.model.n, 2);
    const rep_group *g = group(&w->r.model, "train");
    assert_non_null(g);
    assert_string_equal(g->workload, "sim");
    assert_string_equal(g->unit, "images");
    assert_int_equal(g->naxes, 2);
    long c = rep_group_axis(g, "cpus"), m = rep_group_axis(g, "memory");
    assert_int_equal(g->axes[c].kind, REP_AX_CPUS);
    assert_int_equal(g->axes[m].kind, REP_AX_SIZE);
    /* ascending by count and by bytes, whatever the file order */
    const char *cv[] = {"1", "2", "4", "8", "16"}, *mv[] = {"8G", "16G", "32G"};
    assert_int_equal(g->axes[c].n, 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(g->axes[c].vals[i], cv[i]);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(g->axes[m].vals[i], mv[i]);
    assert_int_equal(g->ncells, 13);
    assert_true(g->has_best);
    assert_near(g->cells[g->best].thr, 400, 0);
}

/* A CPU job whose cells barely use their CPUs and wait on no input (a
 * sleep) is "waiting", not compute-bound; a busy one stays compute-bound. */
static void test_waiting_is_not_compute(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv("time,cpus,host,job,memory,mode,run_id,status,workload,throughput,throughput_ci95,"
                   "throughput_stddev,unit,items,repeats,wall_s,data_wait_fraction,cpu_user_share,version\n"
                   "2026-11-30T10:00:01Z,1,lab,idle,8G,idle,run1,ok,sleep,98,1,1,steps,300,3,3,0,0.01,0.1.0\n"
                   "2026-11-30T10:00:02Z,2,lab,idle,8G,idle,run1,ok,sleep,99,1,1,steps,300,3,3,0,0.95,0.1.0\n",
                   &rows, &m);
    const rep_group *g = group(&m, "idle");
    assert_int_equal(g->ncells, 2);
    for (size_t i = 0; i < g->ncells; i++) {
        const rep_cell *c = &g->cells[i];
        if (c->thr < 98.5) {
            assert_int_equal(c->bn, REP_BN_WAITING);
            assert_string_equal(rep_bn_name(c->bn), "waiting");
            assert_non_null(strstr(c->evidence, "CPUs 1% busy"));
        } else {
            assert_int_equal(c->bn, REP_BN_COMPUTE);
        }
    }
    rep_model_free(&m);
    rep_rows_free(&rows);
}

/* A compute-bound cell run with profile = true names its two heaviest
 * layer kinds (kernels with parentheses kept, the times dropped); one
 * without a profile names none. */
static void test_compute_names_layers(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv(
        "time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
        "unit,items,repeats,wall_s,cpu_user_share,layer_profile,version\n"
        "2026-12-06T10:00:01Z,1,lab,cnn,train,run1,ok,alexnet,39,1,1,images,300,3,3,0.97,"
        "\"conv winograd F(4x4,3x3) avx2: 31.6% (75.54+173.02 ms) | pool cpu_maxpool (fp32 nChw8c, "
        "avx2): 27.2% (63.51+150.41 ms) | lrn cpu: 5.5% (28.05+15.26 ms)\",0.1.0\n"
        "2026-12-06T10:00:02Z,2,lab,cnn,train,run1,ok,alexnet,70,1,1,images,300,3,3,0.97,,0.1.0\n",
        &rows, &m);
    const rep_group *g = group(&m, "train");
    assert_non_null(g);
    assert_int_equal(g->ncells, 2);
    for (size_t i = 0; i < g->ncells; i++) {
        const rep_cell *c = &g->cells[i];
        assert_int_equal(c->bn, REP_BN_COMPUTE);
        if (c->thr < 50)
            assert_string_equal(c->evidence,
                                "CPUs 97% busy; heaviest layers conv winograd F(4x4,3x3) avx2: "
                                "31.6%, pool cpu_maxpool (fp32 nChw8c, avx2): 27.2%");
        else
            assert_string_equal(c->evidence, "CPUs 97% busy");
    }
    rep_model_free(&m);
    rep_rows_free(&rows);
}

static void test_knees(void **state)
{
    world *w = *state;
    const rep_group *g = group(&w->r.model, "train");
    long c = rep_group_axis(g, "cpus"), m = rep_group_axis(g, "memory");
    /* cpus at 32G: 100 190 392 400 -> first >= 380 is 4 */
    assert_string_equal(knee_value(g, "cpus"), "4");
    assert_near(g->knees[c].ratio, 392.0 / 400.0, 1e-12);
    assert_int_equal(g->knees[c].npoints, 5); /* 1 2 4 8 and the oom at 16 */
    /* 8 below 400 > sqrt(2) x 2.484: significant; 190 is far below 380 */
    assert_true(g->knees[c].significant);
    assert_true(g->knees[c].below_clear);
    /* memory at 8 cpus: 300 398 400 -> 16G, within the CIs of the best */
    assert_string_equal(knee_value(g, "memory"), "16G");
    assert_near(g->knees[m].ratio, 398.0 / 400.0, 1e-12);
    assert_false(g->knees[m].significant);
    assert_true(g->knees[m].below_clear);
    const rep_group *inf = group(&w->r.model, "infer");
    assert_string_equal(knee_value(inf, "cpus"), "2");
    assert_int_equal(inf->knees[rep_group_axis(inf, "memory")].npoints, 1);
}

static void test_knee_moves_with_target(void **state)
{
    world *w = *state;
    rep_model m2;
    assert_int_equal(rep_model_build(&m2, &w->r.rows, &w->r.disks, 0.70, w->err, sizeof w->err), 0);
    const rep_group *g = group(&m2, "train");
    assert_string_equal(knee_value(g, "cpus"), "4");   /* 190 < 280 <= 392 */
    assert_string_equal(knee_value(g, "memory"), "8G"); /* 300 >= 280 */
    rep_model_free(&m2);
}

static void test_bottlenecks(void **state)
{
    world *w = *state;
    const rep_group *g = group(&w->r.model, "train");
    size_t ok = 0;
    for (size_t i = 0; i < g->ncells; i++) {
        const rep_cell *c = &g->cells[i];
        if (!c->ok) {
            assert_int_equal(c->bn, REP_BN_FAILED);
            assert_string_equal(c->status, "oom");
            continue;
        }
        ok++;
        /* fixture: AU 0.98 where throughput >= 392, else AU 0.6 with CPUs at 97% */
        if (c->thr >= 392) {
            assert_int_equal(c->bn, REP_BN_COMPUTE);
            assert_non_null(strstr(c->evidence, "AU 0.98"));
        } else {
            assert_int_equal(c->bn, REP_BN_DECODE);
            assert_non_null(strstr(c->evidence, "CPUs 97% busy"));
            assert_non_null(strstr(c->evidence, "data wait 0.40"));
        }
    }
    assert_int_equal(ok, 12);
}

static void test_recommendation(void **state)
{
    world *w = *state;
    rep_report *r = &w->r;
    assert_int_equal(rep_catalog_load(&r->cat, fixture("catalog.ini"), w->err, sizeof w->err), 0);
    assert_int_equal(r->cat.n, 5);
    r->selected = calloc(r->model.n, sizeof *r->selected);
    assert_non_null(r->selected);
    size_t gi = (size_t)(group(&r->model, "train") - r->model.g);
    r->selected[gi] = true;
    assert_int_equal(
        rep_recommend(&r->reco, &r->model, r->selected, NULL, &r->cat, &r->disks, NULL, w->err, sizeof w->err), 0);
    r->have_reco = true;
    assert_int_equal(r->reco.n, 5);
    assert_int_equal(r->reco.nmeet, 3);
    /* big: 2 GPUs x the (8 cpus, 32G) cell = 800/s at 2.6/h */
    const rep_choice *a = &r->reco.v[0], *b = &r->reco.v[1], *c = &r->reco.v[2];
    assert_string_equal(a->inst->name, "big");
    assert_near(a->fits[gi].thr, 800, 1e-9);
    assert_false(a->fits[gi].estimated);
    assert_near(a->fits[gi].cost, 2.6 * 1e6 / (800.0 * 3600), 1e-12);
    assert_near(a->fits[gi].energy_item, 0.5, 1e-12);
    /* runner-up small: its own resources are exactly the knees (4, 16G): 392/s */
    assert_string_equal(b->inst->name, "small");
    assert_near(b->fits[gi].thr, 392, 1e-9);
    assert_near(b->fits[gi].cost, 1.44 * 1e6 / (392.0 * 3600), 1e-12);
    assert_string_equal(c->inst->name, "mid");
    assert_near(c->fits[gi].cost, 1.5 * 1e6 / (400.0 * 3600), 1e-12);
    /* tiny is cheapest per item at its cell but misses the cpus knee; lowmem the memory one */
    for (size_t i = 3; i < 5; i++) {
        const rep_choice *x = &r->reco.v[i];
        assert_false(x->meets);
        if (strcmp(x->inst->name, "tiny") == 0)
            assert_non_null(strstr(x->fits[gi].why, "cpus >= 4"));
        else
            assert_non_null(strstr(x->fits[gi].why, "memory >= 16G"));
    }
    char line[768];
    rep_reco_text(r, line, sizeof line);
    assert_non_null(strstr(line, "recommended: big"));
    assert_non_null(strstr(line, "runner-up: small"));
    /* both groups: infer needs 2 cpus, which all three still have; costs add up */
    rep_reco_free(&r->reco);
    assert_int_equal(rep_recommend(&r->reco, &r->model, NULL, NULL, &r->cat, &r->disks, NULL, w->err, sizeof w->err), 0);
    size_t ig = (size_t)(group(&r->model, "infer") - r->model.g);
    assert_string_equal(r->reco.v[0].inst->name, "big");
    assert_near(r->reco.v[0].score, 2.6e6 / (800.0 * 3600) + 2.6e6 / (2000.0 * 3600), 1e-12);
    assert_near(r->reco.v[0].fits[ig].thr, 2000, 1e-9);
    /* a GPU filter that no instance's GPU matches: a typo, said with the
     * GPUs there are (it used to be an empty recommendation) */
    rep_reco_free(&r->reco);
    assert_int_equal(
        rep_recommend(&r->reco, &r->model, NULL, NULL, &r->cat, &r->disks, "H100", w->err, sizeof w->err),
        -DLG_EINVAL);
    assert_has(w->err, "--gpu H100: no instance in the catalog has such a GPU; its GPUs: ");
    assert_int_equal(r->reco.n, 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* Storage sections named freely: the report orders them by what each
 * throttle ran with (storage_config: its profile, then its own keys), over
 * a same-named profile found by name; a non-throttle stays unknown (last,
 * unlimited).  A text axis has no order, hence no knee. */
static void test_storage_profiles_from_rows(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlg-report-diskXXXXXX", fast[4200], slow[4200], csvp[4200], cfg[4400];
    assert_non_null(mkdtemp(dir));
    snprintf(fast, sizeof fast, "%s/fast-disk.ini", dir);
    snprintf(slow, sizeof slow, "%s/slow.ini", dir);
    snprintf(csvp, sizeof csvp, "%s/r.csv", dir);
    write_text(fast, "name = fast-disk\nbandwidth = 400MB\niops = 3000\n");
    write_text(slow, "name = slow\nbandwidth = 1GB\n"); /* found by name; the rows say otherwise */
    FILE *f = fopen(csvp, "w");
    assert_non_null(f);
    fputs("time,fmt,host,job,mode,run_id,status,storage,workload,throughput,throughput_ci95,"
          "throughput_stddev,unit,items,repeats,wall_s,storage_config,version\n", f);
    snprintf(cfg, sizeof cfg, "type=throttle profile=%s iops=5000 inner=posix", fast);
    const char *row = "2026-11-30T10:00:0%d%s,-,lab,io,-,run1,ok,%s,io-pipeline,%s,1,1,images,300,1,3,%s,0.1.0\n";
    fprintf(f, row, 1, "Z", "slow", "100", "type=throttle bandwidth=100MB");
    fprintf(f, row, 2, "Z", "fast", "190", cfg);
    fprintf(f, row, 3, "Z", "local", "200", "type=posix");
    fputs("2026-11-30T10:00:04Z,a,lab,fmts,-,run1,ok,-,sim2,50,1,1,images,300,1,3,,0.1.0\n"
          "2026-11-30T10:00:05Z,b,lab,fmts,-,run1,ok,-,sim2,80,1,1,images,300,1,3,,0.1.0\n", f);
    assert_int_equal(fclose(f), 0);

    rep_rows rows = {0};
    rep_disks disks = {0};
    rep_model m;
    char err[512];
    assert_int_equal(rep_read_file(&rows, csvp, err, sizeof err), 0);
    assert_int_equal(rep_rows_validate(&rows, err, sizeof err), 0);
    assert_int_equal(rep_disks_load_dir(&disks, dir, err, sizeof err), 0);
    assert_near(rep_disks_find(&disks, "slow")->bandwidth, 1e9, 0);
    assert_int_equal(rep_disks_from_rows(&disks, &rows, err, sizeof err), 0);
    const rep_disk *d = rep_disks_find(&disks, "fast");
    assert_non_null(d);
    assert_near(d->bandwidth, 400e6, 0); /* from the profile */
    assert_near(d->iops, 5000, 0);       /* the section's own key wins */
    assert_near(rep_disks_find(&disks, "slow")->bandwidth, 100e6, 0);
    assert_null(rep_disks_find(&disks, "local"));

    assert_int_equal(rep_model_build(&m, &rows, &disks, 0.95, err, sizeof err), 0);
    const rep_group *g = NULL, *g2 = NULL;
    for (size_t i = 0; i < m.n; i++) {
        if (strcmp(m.g[i].workload, "io-pipeline") == 0)
            g = &m.g[i];
        if (strcmp(m.g[i].workload, "sim2") == 0)
            g2 = &m.g[i];
    }
    assert_non_null(g);
    assert_non_null(g2);
    long a = rep_group_axis(g, "storage");
    const char *order[] = {"slow", "fast", "local"};
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(g->axes[a].vals[i], order[i]);
    assert_string_equal(knee_value(g, "storage"), "fast"); /* 190 >= 0.95 x 200 */
    assert_false(g->knees[a].unordered);
    long fa = rep_group_axis(g2, "fmt");
    assert_true(g2->knees[fa].unordered);
    assert_string_equal(knee_value(g2, "fmt"), "b"); /* no knee: the best stands */
    rep_report r = {.target = 0.95};
    char line[512];
    rep_knee_text(&r, g2, (size_t)fa, line, sizeof line);
    assert_non_null(strstr(line, "no knee"));
    rep_knee_text(&r, g, (size_t)a, line, sizeof line); /* one repetition each: no CI to judge by */
    assert_non_null(strstr(line, "storage = fast: 190 images/s, 95.0% of the best; measured once: no CIs"));

    rep_model_free(&m);
    rep_rows_free(&rows);
    rep_disks_free(&disks);
    unlink(fast);
    unlink(slow);
    unlink(csvp);
    rmdir(dir);
}

/* The best row first in the file (a sweep written from the top down):
 * probing the slice must not find the best cell at every value. */
static void test_knee_best_row_first(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv("time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,"
                   "throughput_stddev,unit,items,repeats,wall_s,version\n"
                   "2026-11-30T10:00:00Z,8,lab,down,train,run1,ok,sim,400,1,1,images,300,3,3,0.1.0\n"
                   "2026-11-30T10:00:01Z,4,lab,down,train,run1,ok,sim,390,1,1,images,300,3,3,0.1.0\n"
                   "2026-11-30T10:00:02Z,2,lab,down,train,run1,ok,sim,200,1,1,images,300,3,3,0.1.0\n"
                   "2026-11-30T10:00:03Z,1,lab,down,train,run1,ok,sim,100,1,1,images,300,3,3,0.1.0\n",
                   &rows, &m);
    const rep_group *g = group(&m, "train");
    long a = rep_group_axis(g, "cpus");
    assert_string_equal(knee_value(g, "cpus"), "4");
    assert_near(g->knees[a].ratio, 390.0 / 400.0, 1e-12);
    assert_int_equal(g->knees[a].npoints, 4);
    rep_model_free(&m);
    rep_rows_free(&rows);
}

/* The model of head + rows[0..n) in that order, or reversed. */
static void model_in_order(const char *head, const char *const *rows, size_t n, bool reversed, rep_rows *rs,
                           rep_model *m)
{
    char csv[2048];
    size_t len = (size_t)snprintf(csv, sizeof csv, "%s", head);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(csv + len, sizeof csv - len, "%s", rows[reversed ? n - 1 - i : i]);
    assert_true(len < sizeof csv);
    model_from_csv(csv, rs, m);
}

static const char *best_value(const rep_group *g, const char *axis)
{
    long a = rep_group_axis(g, axis);
    assert_true(a >= 0 && g->has_best);
    return g->axes[a].vals[g->cells[g->best].coord[a]];
}

/* A storage axis of one throttle (10 MB/s, ordered) and two disks of no
 * profile (ordered after it): the knee search visits those two by their
 * text, not as first seen.  best p 100, n 99 >= 95: knee n whichever row
 * came first (first seen, reversed rows made it p). */
static void storage_knee_in_order(bool reversed)
{
    static const char head[] = "time,job,mode,status,storage,workload,throughput,repeats,throughput_ci95,"
                               "throughput_stddev,unit,storage_config,version\n";
    static const char *const rows[] = {
        "2026-11-29T10:00:00Z,j,io,ok,t,sim,50,3,1,0.4,images,type=throttle bandwidth=10MB,0.1.0\n",
        "2026-11-29T10:00:01Z,j,io,ok,p,sim,100,3,1,0.4,images,type=posix,0.1.0\n",
        "2026-11-29T10:00:02Z,j,io,ok,n,sim,99,3,1,0.4,images,type=posix,0.1.0\n",
    };
    char csv[1024], path[32], err[512];
    size_t len = (size_t)snprintf(csv, sizeof csv, "%s", head);
    for (size_t i = 0; i < 3; i++)
        len += (size_t)snprintf(csv + len, sizeof csv - len, "%s", rows[reversed ? 2 - i : i]);
    temp_file(path, csv);
    rep_rows rs = {0};
    rep_disks disks = {0};
    rep_model m;
    assert_int_equal(rep_read_file(&rs, path, err, sizeof err), 0);
    unlink(path);
    assert_int_equal(rep_rows_validate(&rs, err, sizeof err), 0);
    assert_int_equal(rep_disks_from_rows(&disks, &rs, err, sizeof err), 0);
    assert_int_equal(rep_model_build(&m, &rs, &disks, 0.95, err, sizeof err), 0);
    const rep_group *g = group(&m, "io");
    assert_string_equal(best_value(g, "storage"), "p");
    assert_string_equal(knee_value(g, "storage"), "n");
    rep_model_free(&m);
    rep_disks_free(&disks);
    rep_rows_free(&rs);
}

/* An exact tie for the best: the cell of fewer cpus, then less memory,
 * then (axes of no order) the value first by its text, whatever order the
 * rows came in; the knees run through it (and visit values of no order by
 * their text).  The first of the tied cells
 * was the best: reversed rows made cpus = 16 the best and memory's knee
 * 2G (16 cpus at 1G reach 75%), and the recommendation followed. */
static void test_tied_best_any_row_order(void **state)
{
    (void)state;
    static const char head[] =
        "time,cpus,job,memory,mode,status,workload,throughput,repeats,throughput_ci95,throughput_stddev,unit,version\n";
    static const char *const rows[] = {
        "2026-11-29T10:00:00Z,8,j,1G,train,ok,sim,390,3,1,0.4,images,0.1.0\n",
        "2026-11-29T10:00:01Z,8,j,2G,train,ok,sim,400,3,1,0.4,images,0.1.0\n",
        "2026-11-29T10:00:02Z,16,j,1G,train,ok,sim,300,3,1,0.4,images,0.1.0\n",
        "2026-11-29T10:00:03Z,16,j,2G,train,ok,sim,400,3,1,0.4,images,0.1.0\n",
    };
    static const char text_head[] =
        "time,fmt,job,mode,status,workload,throughput,repeats,throughput_ci95,throughput_stddev,unit,version\n";
    static const char *const text_rows[] = {
        "2026-11-29T10:00:00Z,png,j,infer,ok,sim,100,3,1,0.4,images,0.1.0\n",
        "2026-11-29T10:00:01Z,jpeg,j,infer,ok,sim,100,3,1,0.4,images,0.1.0\n",
        "2026-11-29T10:00:02Z,raw,j,infer,ok,sim,50,3,1,0.4,images,0.1.0\n",
    };
    for (int reversed = 0; reversed < 2; reversed++) {
        rep_rows rs;
        rep_model m;
        model_in_order(head, rows, 4, reversed, &rs, &m);
        const rep_group *g = group(&m, "train");
        assert_string_equal(best_value(g, "cpus"), "8");
        assert_string_equal(best_value(g, "memory"), "2G");
        assert_string_equal(knee_value(g, "cpus"), "8");
        assert_string_equal(knee_value(g, "memory"), "1G");
        rep_model_free(&m);
        rep_rows_free(&rs);
        model_in_order(text_head, text_rows, 3, reversed, &rs, &m);
        g = group(&m, "infer");
        assert_string_equal(best_value(g, "fmt"), "jpeg");
        rep_model_free(&m);
        rep_rows_free(&rs);
        storage_knee_in_order(reversed);
    }
}

/* cpus = 0 means all: the report says how many that was. */
static void test_axis_text(void **state)
{
    (void)state;
    char *vals[] = {"0", "4"};
    double order[] = {16, 4};
    rep_axis cpus = {.key = "cpus", .kind = REP_AX_CPUS, .vals = vals, .order = order, .n = 2};
    rep_axis num = {.key = "batch", .kind = REP_AX_NUM, .vals = vals, .order = order, .n = 2};
    char buf[64];
    assert_string_equal(rep_axis_text(&cpus, 0, buf, sizeof buf), "0 (all 16)");
    assert_string_equal(rep_axis_text(&cpus, 1, buf, sizeof buf), "4");
    assert_string_equal(rep_axis_text(&num, 0, buf, sizeof buf), "0");
}

/* read_bytes sums the repetitions: three cold repetitions each reading
 * the dataset once are not thrashing; three reading it thrice are. */
static void test_rereads_per_repetition(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv("time,cache,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                   "unit,items,repeats,wall_s,read_bytes,dataset_bytes,data_wait_fraction,au,version\n"
                   "2026-11-30T10:00:01Z,cold,lab,p,-,run1,ok,io-pipeline,500,5,5,images,900,3,3,290000000,"
                   "100000000,0.5,0.5,0.1.0\n"
                   "2026-11-30T10:00:02Z,small,lab,p,-,run1,ok,io-pipeline,100,5,5,images,900,3,3,900000000,"
                   "100000000,0.9,0.1,0.1.0\n",
                   &rows, &m);
    assert_int_equal(m.n, 1);
    const rep_group *g = &m.g[0];
    long a = rep_group_axis(g, "cache");
    for (size_t i = 0; i < g->ncells; i++) {
        const rep_cell *c = &g->cells[i];
        if (strcmp(g->axes[a].vals[c->coord[a]], "cold") == 0) {
            assert_near(c->reread, 290.0 / 300.0, 1e-9);
            assert_int_not_equal(c->bn, REP_BN_MEMORY);
        } else {
            assert_near(c->reread, 3.0, 1e-9);
            assert_int_equal(c->bn, REP_BN_MEMORY);
            assert_non_null(strstr(c->evidence, "3.00x the dataset size per repetition"));
        }
    }
    rep_model_free(&m);
    rep_rows_free(&rows);
}

/* Two runs of one cell: J/item is all their energy over all their items
 * (the later run alone says 1.5), and a row that wrote only
 * energy_per_item_j counts with its items. */
static void test_energy_per_item_pooled(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv("time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                   "unit,items,repeats,wall_s,au,energy_j,energy_per_item_j,version\n"
                   "2026-11-30T10:00:01Z,2,lab,t,train,run1,ok,sim,100,0,0,images,200,1,2,0.9,100,,0.1.0\n"
                   "2026-11-30T10:00:02Z,2,lab,t,train,run2,ok,sim,100,0,0,images,200,1,2,0.9,300,,0.1.0\n"
                   "2026-11-30T10:00:03Z,4,lab,t,train,run1,ok,sim,200,0,0,images,400,1,2,0.9,,0.25,0.1.0\n"
                   "2026-11-30T10:00:04Z,4,lab,t,train,run2,ok,sim,200,0,0,images,100,1,0.5,0.9,,1.25,0.1.0\n"
                   "2026-11-30T10:00:05Z,8,lab,t,train,run1,ok,sim,300,0,0,images,600,1,2,0.9,,,0.1.0\n",
                   &rows, &m);
    assert_int_equal(m.n, 1);
    const rep_group *g = &m.g[0];
    long a = rep_group_axis(g, "cpus");
    assert_true(a >= 0);
    assert_int_equal(g->ncells, 3);
    for (size_t i = 0; i < g->ncells; i++) {
        const rep_cell *c = &g->cells[i];
        const char *cpus = g->axes[a].vals[c->coord[a]];
        if (strcmp(cpus, "2") == 0)
            assert_near(c->energy_item, 400.0 / 400.0, 1e-12);
        else if (strcmp(cpus, "4") == 0)
            assert_near(c->energy_item, (100.0 + 125.0) / 500.0, 1e-12);
        else
            assert_true(isnan(c->energy_item));
    }
    rep_model_free(&m);
    rep_rows_free(&rows);
}

/* One loader thread on two CPUs: the CPUs look half idle, the thread is
 * saturated; what fills its time names the limit. */
static void test_saturated_loader_threads(void **state)
{
    (void)state;
    rep_rows rows;
    rep_model m;
    model_from_csv("time,threads,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                   "unit,items,repeats,wall_s,cpu_user_share,data_wait_fraction,au,loader_busy,loader_read_s,"
                   "loader_decode_s,version\n"
                   "2026-11-30T10:00:01Z,1,lab,p,-,run1,ok,io-pipeline,400,5,5,images,900,1,3,0.46,0.85,0.15,0.99,"
                   "0.13,0.87,0.1.0\n"
                   "2026-11-30T10:00:02Z,2,lab,p,-,run1,ok,io-pipeline,500,5,5,images,900,1,3,0.40,0.85,0.15,0.97,"
                   "0.70,0.30,0.1.0\n",
                   &rows, &m);
    const rep_group *g = &m.g[0];
    long a = rep_group_axis(g, "threads");
    for (size_t i = 0; i < g->ncells; i++) {
        const rep_cell *c = &g->cells[i];
        bool one = strcmp(g->axes[a].vals[c->coord[a]], "1") == 0;
        assert_int_equal(c->bn, one ? REP_BN_DECODE : REP_BN_STORAGE);
        assert_non_null(strstr(c->evidence, one ? "loader threads 99% busy, 13% of it reading"
                                                : "loader threads 97% busy, 70% of it reading"));
    }
    rep_model_free(&m);
    rep_rows_free(&rows);
}

/* A CNN measured on the CPU backend gets a note in the recommendation;
 * the emulated-accelerator pipeline does not. */
static void test_reco_caveat_cpu_groups(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    model_from_csv("time,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,"
                   "items,repeats,wall_s,backend,version\n"
                   "2026-11-30T10:00:01Z,lab,r,train,run1,ok,resnet50,20,1,1,images,60,3,3,cpu,0.1.0\n"
                   "2026-11-30T10:00:02Z,lab,p,-,run1,ok,io-pipeline,800,1,1,images,900,3,3,,0.1.0\n",
                   &r.rows, &r.model);
    char note[768];
    rep_reco_caveat(&r, note, sizeof note);
    assert_non_null(strstr(note, "note: resnet50/train ran on this machine's CPUs"));
    assert_null(strstr(note, "io-pipeline/-"));
    bool only_pipe[2];
    for (size_t i = 0; i < r.model.n; i++)
        only_pipe[i] = strcmp(r.model.g[i].workload, "io-pipeline") == 0;
    assert_non_null(strstr(note, "or recommend from the input pipeline alone (--workload io-pipeline)"));
    r.selected = only_pipe;
    rep_reco_caveat(&r, note, sizeof note);
    assert_string_equal(note, "");
    rep_model_free(&r.model);
    rep_rows_free(&r.rows);

    /* no io-pipeline group: `--workload io-pipeline` would only fail */
    rep_report r2 = {.target = 0.95};
    model_from_csv("time,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,"
                   "items,repeats,wall_s,backend,version\n"
                   "2026-11-30T10:00:01Z,lab,r,train,run1,ok,resnet50,20,1,1,images,60,3,3,cpu,0.1.0\n",
                   &r2.rows, &r2.model);
    rep_reco_caveat(&r2, note, sizeof note);
    assert_non_null(strstr(note, "note: resnet50/train ran on this machine's CPUs"));
    assert_null(strstr(note, "io-pipeline"));
    const char *tail = "measure it with device = cuda:N on a GPU";
    assert_string_equal(note + strlen(note) - strlen(tail), tail);
    rep_model_free(&r2.model);
    rep_rows_free(&r2.rows);
}

/* The recommendation of r's model on the test catalog. */
static void recommend_on_test_catalog(rep_report *r)
{
    char err[512];
    assert_int_equal(rep_catalog_load(&r->cat, fixture("catalog.ini"), err, sizeof err), 0);
    assert_int_equal(rep_recommend(&r->reco, &r->model, NULL, NULL, &r->cat, &r->disks, NULL, err, sizeof err), 0);
    r->have_reco = true;
}

/* A host workload (no backend, au or gpu_name: preprocess) takes the whole
 * instance and is not multiplied by its GPUs; a group that fed an
 * accelerator (au) still is.  The footnote names the host group and the
 * order of the per-group values. */
static void test_host_workload_whole_instance(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    model_from_csv("time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                   "unit,items,repeats,wall_s,au,version\n"
                   "2026-11-30T10:00:01Z,4,lab,conv,-,run1,ok,preprocess,100,0,0,images,100,1,1,,0.1.0\n"
                   "2026-11-30T10:00:02Z,8,lab,conv,-,run1,ok,preprocess,200,0,0,images,200,1,1,,0.1.0\n"
                   "2026-11-30T10:00:03Z,16,lab,conv,-,run1,ok,preprocess,400,0,0,images,400,1,1,,0.1.0\n"
                   "2026-11-30T10:00:04Z,4,lab,feed,-,run1,ok,io-pipeline,300,0,0,images,300,1,1,0.95,0.1.0\n",
                   &r.rows, &r.model);
    size_t host = strcmp(r.model.g[0].workload, "preprocess") == 0 ? 0 : 1, feed = 1 - host;
    assert_false(r.model.g[host].per_gpu);
    assert_true(r.model.g[feed].per_gpu);
    recommend_on_test_catalog(&r);
    /* only big has 16 vCPUs: as a whole, not 8 per GPU */
    assert_int_equal(r.reco.nmeet, 1);
    const rep_choice *big = &r.reco.v[0];
    assert_string_equal(big->inst->name, "big");
    assert_near(big->fits[host].thr, 400, 1e-9);    /* once, not x2 GPUs */
    assert_near(big->fits[feed].thr, 2 * 300, 1e-9); /* per GPU */
    for (size_t i = 1; i < r.reco.n; i++) {
        const char *why = r.reco.v[i].fits[host].why;
        assert_non_null(strstr(why, "preprocess needs cpus >= 16"));
        assert_null(strstr(why, "per GPU"));
    }
    char note[2048];
    rep_reco_basis(&r, note, sizeof note);
    assert_non_null(strstr(note, "per-GPU resources times its GPUs"));
    assert_non_null(strstr(note, "; for preprocess, which fed no GPU, the best cell within the whole instance's resources"));
    char order[128];
    snprintf(order, sizeof order, "a value per group in the columns: %s / %s", r.model.g[0].workload,
             r.model.g[1].workload);
    assert_non_null(strstr(note, order));
    report_free(&r);
}

/* Reads text as a results file at a fresh path (returned in path). */
static int read_text(const char *text, char *path, size_t plen, rep_rows *rows, char *err, size_t errlen)
{
    assert_true(plen >= 32);
    temp_file(path, text);
    memset(rows, 0, sizeof *rows);
    err[0] = '\0';
    int rc = rep_read_file(rows, path, err, errlen);
    unlink(path);
    return rc;
}

#define CSV_HEAD "time,host,job,mode,run_id,status,workload,throughput,throughput_ci95,repeats,version\n"
#define CSV_ROW(t) "2026-11-30T10:00:0" #t "Z,lab,j,-,run1,ok,w,10" #t ",1,3,0.1.0\n"

/* The csv sink ends a line cut short by a crash and appends after it: the
 * short row is skipped with one warning, the rest read; a file with no row
 * of the header's width stays an error. */
static void test_csv_skips_cut_row(void **state)
{
    (void)state;
    rep_rows rows;
    char path[64], err[512], want[256];
    int rc = read_text(CSV_HEAD CSV_ROW(1) CSV_ROW(2) "2026-11-30T10:00:03Z,la\n" CSV_ROW(4), path, sizeof path,
                       &rows, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(rows.n, 3);
    assert_int_equal(rows.v[2].line, 5); /* records as lines: the header is 1 */
    assert_int_equal(rows.nwarnings, 1);
    snprintf(want, sizeof want, "%s: record 4: 2 columns, the header has 11 (a line cut short by a crash?); "
             "1 row skipped", path);
    assert_string_equal(rows.warnings[0], want);
    rep_rows_free(&rows);

    rc = read_text(CSV_HEAD "x,y\n" CSV_ROW(2) "1,2,3\n" "a\n", path, sizeof path, &rows, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_int_equal(rows.n, 1);
    assert_int_equal(rows.nwarnings, 1);
    assert_non_null(strstr(rows.warnings[0], ": record 2: 2 columns, the header has 11"));
    assert_non_null(strstr(rows.warnings[0], "; 3 rows skipped")); /* the first named, all counted */
    rep_rows_free(&rows);

    rc = read_text(CSV_HEAD "2026-11-30T10:00:03Z,la\n", path, sizeof path, &rows, err, sizeof err);
    assert_int_not_equal(rc, 0);
    snprintf(want, sizeof want, "%s: record 2 has 2 columns, the header has 11; no row matches the header", path);
    assert_string_equal(err, want);
    assert_int_equal(rows.nwarnings, 0);
    rep_rows_free(&rows);

    rc = read_text("time,host\n" CSV_ROW(1), path, sizeof path, &rows, err, sizeof err); /* header broken */
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err, "missing column 'throughput'"));
    rep_rows_free(&rows);
}

#define JSONL_ROW(t) "{\"measurement\":\"dlgauge_result\",\"tags\":{\"workload\":\"w\",\"status\":\"ok\",\"t\":\"" #t \
                     "\"},\"fields\":{\"throughput\":10" #t "}}\n"

/* A last line cut short by a crash is skipped with a warning; the same in
 * the middle, or a malformed line, is an error saying what was expected. */
static void test_jsonl_cut_last_line(void **state)
{
    (void)state;
    rep_rows rows;
    char path[64], err[512], want[256];
    int rc = read_text(JSONL_ROW(1) JSONL_ROW(2) "\n{\"measurement\":\"dlgauge_result\",\"tags\":{\"workload\":\"w",
                       path, sizeof path, &rows, err, sizeof err);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(rows.n, 2);
    assert_int_equal(rows.nwarnings, 1);
    snprintf(want, sizeof want, "%s: line 4: cut short (an interrupted write?), skipped", path);
    assert_string_equal(rows.warnings[0], want);
    rep_rows_free(&rows);

    /* cut short and nothing before it: no results, an error */
    rc = read_text("{\"measurement\":\"dlgauge_result\",\"tags\":{\n\n", path, sizeof path, &rows, err, sizeof err);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err, ": line 1: cut short (an interrupted write?)"));
    rep_rows_free(&rows);

    /* cut short in the middle: the file was appended to after the crash */
    rc = read_text(JSONL_ROW(1) "{\"measurement\":\"dlgauge_result\",\"tags\":{\"a\":1\n" JSONL_ROW(3), path,
                   sizeof path, &rows, err, sizeof err);
    assert_int_not_equal(rc, 0);
    snprintf(want, sizeof want, "%s: line 2, byte 46: the line ends before its object does", path);
    assert_string_equal(err, want);
    rep_rows_free(&rows);

    const struct {
        const char *line, *says;
    } bad[] = {
        {"{\"measurement\":\"dlgauge_result\" \"tags\":{}}",
         "line 1, byte 33: expected ',' or '}' after a value, found '\"'"},
        {"{\"measurement\" \"x\"}", "line 1, byte 16: expected ':' after a key, found '\"'"},
        {"{measurement:1}", "line 1, byte 2: expected a key in double quotes, found 'm'"},
        {"{\"tags\":}",
         "line 1, byte 9: expected a value (a string, number, object, array, true, false or null), found '}'"},
        {"{\"tags\":{}} x", "line 1, byte 13: expected the end of the line after the object, found 'x'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[256];
        snprintf(text, sizeof text, "%s\n%s", bad[i].line, JSONL_ROW(2));
        rc = read_text(text, path, sizeof path, &rows, err, sizeof err);
        assert_int_not_equal(rc, 0);
        snprintf(want, sizeof want, "%s: %s", path, bad[i].says);
        assert_string_equal(err, want);
        rep_rows_free(&rows);
    }
}

/* A larger cell measured slower than a smaller one (noise, or threads that
 * hurt): an instance that can supply the larger can run the smaller, so it
 * is credited with the best cell within its resources. */
static void test_expected_is_best_within_resources(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    model_from_csv("time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                   "unit,items,repeats,wall_s,au,version\n"
                   "2026-11-30T10:00:01Z,1,lab,feed,-,run1,ok,io-pipeline,300,0,0,images,300,1,1,0.95,0.1.0\n"
                   "2026-11-30T10:00:02Z,2,lab,feed,-,run1,ok,io-pipeline,200,0,0,images,200,1,1,0.95,0.1.0\n",
                   &r.rows, &r.model);
    recommend_on_test_catalog(&r);
    for (size_t i = 0; i < r.reco.n; i++) {
        const rep_choice *ch = &r.reco.v[i];
        assert_false(ch->fits[0].estimated);
        assert_near(ch->fits[0].thr, 300.0 * ch->inst->gpus, 1e-9); /* the cpus = 1 cell, never 200 */
    }
    report_free(&r);
}

/* A disk that counts I/Os per 256 KiB (AWS): 1 MiB reads at 250/s are
 * 1000 of its IOPS, its whole limit, though only 250 requests a second. */
static void test_iops_unit_charges_large_reads(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlg-report-unitXXXXXX", prof[4200], csvp[4200];
    assert_non_null(mkdtemp(dir));
    snprintf(prof, sizeof prof, "%s/gp.ini", dir);
    snprintf(csvp, sizeof csvp, "%s/r.csv", dir);
    write_text(prof, "name = gp\nbandwidth = 1GB\niops = 1000\niops_unit = 256KiB\n");
    FILE *f = fopen(csvp, "w");
    assert_non_null(f);
    fputs("time,host,job,mode,run_id,status,storage,workload,throughput,throughput_ci95,throughput_stddev,unit,"
          "items,repeats,wall_s,data_wait_fraction,au,storage_ios,storage_read_bytes,version\n"
          "2026-11-30T10:00:01Z,lab,io,-,run1,ok,gp,io-pipeline,100,1,1,images,1000,1,10,0.6,0.4,2500,2621440000,"
          "0.1.0\n",
          f);
    assert_int_equal(fclose(f), 0);
    rep_rows rows = {0};
    rep_disks disks = {0};
    rep_model m;
    char err[512];
    assert_int_equal(rep_read_file(&rows, csvp, err, sizeof err), 0);
    assert_int_equal(rep_rows_validate(&rows, err, sizeof err), 0);
    assert_int_equal(rep_disks_load_dir(&disks, dir, err, sizeof err), 0);
    assert_near(rep_disks_find(&disks, "gp")->iops_unit, 262144, 0);
    assert_int_equal(rep_model_build(&m, &rows, &disks, 0.95, err, sizeof err), 0);
    const rep_cell *c = &m.g[0].cells[0];
    assert_near(c->limit_share, 1.0, 1e-9); /* 2500 x 4 units / 10 s / 1000 IOPS */
    assert_int_equal(c->bn, REP_BN_STORAGE);
    rep_model_free(&m);
    rep_disks_free(&disks);
    rep_rows_free(&rows);
    unlink(prof);
    unlink(csvp);
    rmdir(dir);
}

static void test_shipped_catalogs_load(void **state)
{
    (void)state;
    const char *names[] = {"aws.ini", "gcp.ini", "alibaba.ini"};
    for (size_t i = 0; i < 3; i++) {
        rep_catalog c = {0};
        char err[512], p[4096];
        const char *src = getenv("DLG_SOURCE_DIR");
        snprintf(p, sizeof p, "%s/conf/instances/%s", src ? src : ".", names[i]);
        int rc = rep_catalog_load(&c, p, err, sizeof err);
        if (rc)
            fprintf(stderr, "%s\n", err);
        assert_int_equal(rc, 0);
        assert_true(c.n >= 5);
        for (size_t k = 0; k < c.n; k++) {
            assert_true(c.v[k].price > 0);
            assert_true(c.v[k].gpus >= 1);
            assert_true(strncmp(c.v[k].source, "https://", 8) == 0);
        }
        rep_catalog_free(&c);
    }
}

/* Loads a catalog of this body after a fixed 5-line [catalog] section;
 * the file is gone after, path names it in err. */
static int catalog_text(rep_catalog *c, const char *body, char *path, char *err, size_t errlen)
{
    strcpy(path, "/tmp/dlg-report-catXXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f, "[catalog]\nprovider = Test\ncurrency = USD\nsource = invented\nretrieved = 2026-12-01\n%s", body);
    assert_int_equal(fclose(f), 0);
    int rc = rep_catalog_load(c, path, err, errlen);
    unlink(path);
    return rc;
}

static void load_catalog(rep_report *r, const char *body)
{
    char path[32], err[512];
    if (catalog_text(&r->cat, body, path, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* X: 1 GPU, 8 vCPUs, 1.0/h; Y: 2 GPUs, 16 vCPUs, 1.9/h. */
#define XY_CATALOG                                                                                                     \
    "[instance X]\ngpus = 1\nvcpus = 8\nmemory = 32GiB\nprice_per_hour = 1.0\n"                                       \
    "[instance Y]\ngpus = 2\nvcpus = 16\nmemory = 64GiB\nprice_per_hour = 1.9\n"

/* An image pipeline fed a GPU (400 images/s per GPU) and a host memory
 * benchmark counting bytes (mem_thr mem_unit/s, once per instance).  Per
 * group:  pipeline  X 1.0e6/(400 x 3600) = 0.6944   Y 1.9e6/(800 x 3600) = 0.6597 (lowest)
 *         memory    X 1.0e6/(B x 3600) (lowest)     Y 1.9 x X's
 * relative cost: X = sqrt(0.6944/0.6597 x 1) = sqrt(1/0.95), Y = sqrt(1 x 1.9).
 * Summing $/M images with $/M bytes picked Y (the images dwarf the bytes);
 * reported in GB the sum picked X: the unit decided.  Now X either way. */
static void mixed_units_recommend(const char *mem_thr, const char *mem_unit)
{
    char csv[1024];
    snprintf(csv, sizeof csv,
             "time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,"
             "items,repeats,wall_s,au,version\n"
             "2026-12-01T10:00:01Z,8,lab,feed,-,run1,ok,io-pipeline,400,0,0,images,400,1,1,0.95,0.1.0\n"
             "2026-12-01T10:00:02Z,8,lab,mem,-,run1,ok,stream,%s,0,0,%s,100,1,1,,0.1.0\n",
             mem_thr, mem_unit);
    rep_report r = {.target = 0.95};
    char err[512];
    model_from_csv(csv, &r.rows, &r.model);
    load_catalog(&r, XY_CATALOG);
    assert_int_equal(rep_recommend(&r.reco, &r.model, NULL, NULL, &r.cat, &r.disks, NULL, err, sizeof err), 0);
    r.have_reco = true;
    assert_int_equal(r.reco.nmeet, 2);
    assert_null(r.reco.unit); /* images and bytes: no common unit */
    size_t feed = strcmp(r.model.g[0].workload, "io-pipeline") == 0 ? 0 : 1;
    const rep_choice *x = choice(&r.reco, "X"), *y = choice(&r.reco, "Y");
    assert_near(x->fits[feed].cost, 1.0e6 / (400.0 * 3600), 1e-12);
    assert_near(y->fits[feed].cost, 1.9e6 / (800.0 * 3600), 1e-12);
    assert_string_equal(r.reco.v[0].inst->name, "X");
    assert_near(x->score, sqrt(1 / 0.95), 1e-12);
    assert_near(y->score, sqrt(1.9), 1e-12);
    char line[768];
    rep_reco_text(&r, line, sizeof line);
    assert_non_null(strstr(line, "recommended: X (Test, 1 USD/h), 1.026x the lowest cost per item (geometric mean "
                                 "over 2 groups of different units); runner-up: Y (Test, 1.9 USD/h), 1.378x"));
    rep_table t;
    assert_int_equal(rep_table_reco(&t, &r), 0);
    assert_string_equal(t.cell[12], "relative cost");
    assert_string_equal(t.cell[t.ncols + 12], "1.026x");
    if (strcmp(mem_unit, "bytes") == 0) /* X: 1.0e12 / (1e10 x 3600) per TB */
        assert_non_null(strstr(t.cell[t.ncols + 9], "0.02778/TB"));
    rep_table_free(&t);
    report_free(&r);
}

/* A CPU-only cell (no GPU energy) has the CPU packages' J/item, pooled as
 * the GPU's is (all energy over all items; a row with only
 * cpu_energy_per_item_j counts with its items); a cell with both keeps the
 * GPU's.  The recommendation marks the CPU figure "cpu". */
static void test_cpu_energy_per_item(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    model_from_csv("time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                   "unit,items,repeats,wall_s,energy_j,cpu_energy_j,cpu_energy_per_item_j,version\n"
                   "2026-12-01T10:00:01Z,2,lab,p,-,run1,ok,preprocess,100,0,0,images,200,1,2,,100,,0.1.0\n"
                   "2026-12-01T10:00:02Z,2,lab,p,-,run2,ok,preprocess,100,0,0,images,200,1,2,,300,,0.1.0\n"
                   "2026-12-01T10:00:03Z,4,lab,p,-,run1,ok,preprocess,200,0,0,images,400,1,2,,,0.25,0.1.0\n"
                   "2026-12-01T10:00:04Z,4,lab,p,-,run2,ok,preprocess,200,0,0,images,100,1,0.5,,125,,0.1.0\n"
                   "2026-12-01T10:00:05Z,8,lab,p,-,run1,ok,preprocess,300,0,0,images,600,1,2,,,,0.1.0\n"
                   "2026-12-01T10:00:06Z,8,lab,g,-,run1,ok,sim,300,0,0,images,100,1,2,50,500,5,0.1.0\n",
                   &r.rows, &r.model);
    assert_int_equal(r.model.n, 2);
    for (size_t gi = 0; gi < r.model.n; gi++) {
        const rep_group *g = &r.model.g[gi];
        long a = rep_group_axis(g, "cpus");
        for (size_t i = 0; i < g->ncells; i++) {
            const rep_cell *c = &g->cells[i];
            const char *cpus = a >= 0 ? g->axes[a].vals[c->coord[a]] : "8";
            if (strcmp(g->job, "g") == 0) {
                assert_near(c->energy_item, 0.5, 1e-12); /* the GPU's */
                assert_false(c->energy_cpu);
            } else if (strcmp(cpus, "2") == 0) {
                assert_near(c->energy_item, 400.0 / 400.0, 1e-12);
                assert_true(c->energy_cpu);
            } else if (strcmp(cpus, "4") == 0) {
                assert_near(c->energy_item, (100.0 + 125.0) / 500.0, 1e-12);
                assert_true(c->energy_cpu);
            } else {
                assert_true(isnan(c->energy_item));
                assert_false(c->energy_cpu);
            }
        }
    }
    report_free(&r);

    /* the recommendation: X runs both groups at their 8-cpus cells */
    rep_report q = {.target = 0.95};
    char err[512];
    model_from_csv("time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                   "unit,items,repeats,wall_s,energy_j,cpu_energy_j,version\n"
                   "2026-12-01T10:00:01Z,8,lab,p,-,run1,ok,preprocess,300,0,0,images,100,1,2,,80,0.1.0\n"
                   "2026-12-01T10:00:02Z,8,lab,g,-,run1,ok,sim,300,0,0,images,100,1,2,50,500,0.1.0\n",
                   &q.rows, &q.model);
    load_catalog(&q, XY_CATALOG);
    assert_int_equal(rep_recommend(&q.reco, &q.model, NULL, NULL, &q.cat, &q.disks, NULL, err, sizeof err), 0);
    q.have_reco = true;
    rep_table t;
    assert_int_equal(rep_table_reco(&t, &q), 0);
    assert_string_equal(t.cell[10], "J/item");
    const char *x = t.cell[t.ncols + 10];
    assert_non_null(strstr(x, "0.8 cpu"));
    assert_non_null(strstr(x, "0.5"));
    assert_null(strstr(x, "0.5 cpu"));
    rep_table_free(&t);
    report_free(&q);
}

/* One group, cells on the GPU and off it (cpus 2 measured GPU energy, cpus 8
 * only the CPU packages'): an instance that runs the cpus-8 cell shows the
 * packages' figure, so it is marked "cpu" although the group has GPU
 * energy elsewhere (the mark was the group's: none at all). */
static void test_cpu_energy_mark_per_cell(void **state)
{
    (void)state;
    rep_report q = {.target = 0.95};
    char err[512];
    model_from_csv("time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                   "unit,items,repeats,wall_s,energy_j,cpu_energy_j,version\n"
                   "2026-12-01T10:00:01Z,2,lab,p,-,run1,ok,preprocess,100,0,0,images,100,1,2,50,,0.1.0\n"
                   "2026-12-01T10:00:02Z,8,lab,p,-,run1,ok,preprocess,300,0,0,images,100,1,2,,80,0.1.0\n",
                   &q.rows, &q.model);
    assert_int_equal(q.model.n, 1);
    load_catalog(&q, XY_CATALOG);
    assert_int_equal(rep_recommend(&q.reco, &q.model, NULL, NULL, &q.cat, &q.disks, NULL, err, sizeof err), 0);
    q.have_reco = true;
    const rep_choice *x = choice(&q.reco, "X");
    assert_near(x->fits[0].energy_item, 0.8, 1e-12);
    rep_table t;
    assert_int_equal(rep_table_reco(&t, &q), 0);
    assert_string_equal(t.cell[10], "J/item");
    for (size_t row = 1; row < t.nrows; row++)
        assert_string_equal(t.cell[row * t.ncols + 10], "0.8 cpu");
    rep_table_free(&t);
    report_free(&q);
}

static void test_mixed_units_not_summed(void **state)
{
    (void)state;
    mixed_units_recommend("10000000000", "bytes");
    mixed_units_recommend("10", "GB");
}

/* The model of this CSV, the X/Y catalog and its recommendation (weights
 * as --weight gives them, or NULL). */
static void xy_recommend(rep_report *r, const char *csv, double *weights)
{
    char err[512];
    model_from_csv(csv, &r->rows, &r->model);
    load_catalog(r, XY_CATALOG);
    r->weights = weights;
    assert_int_equal(rep_recommend(&r->reco, &r->model, NULL, weights, &r->cat, &r->disks, NULL, err, sizeof err), 0);
    r->have_reco = true;
}

/* A group counting bytes is priced per TB (10^12 bytes, as its throughput
 * reads GB/s), not per million bytes (0.00002778 USD: nobody reads that).
 * 10 GB/s on X at 1.0/h: 1.0 x 1e12 / (1e10 x 3600) = 0.02778 USD per TB;
 * Y runs it once at 1.9/h (a host workload): 0.05278. */
static void test_bytes_cost_per_tb(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    char line[768], note[2048];
    xy_recommend(&r,
                 "time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                 "unit,items,repeats,wall_s,cpu_energy_j,version\n"
                 "2026-12-01T10:00:01Z,8,lab,mem,-,run1,ok,stream,10000000000,0,0,bytes,1e10,1,1,30,0.1.0\n"
                 "2026-12-01T10:00:02Z,8,lab,mem2,-,run1,ok,stream,10000000000,0,0,bytes,1e10,1,1,,0.1.0\n",
                 NULL);
    const rep_choice *x = choice(&r.reco, "X");
    assert_near(x->fits[0].cost, 1.0e12 / (1e10 * 3600), 1e-12);
    assert_near(x->score, 2 * 1.0e12 / (1e10 * 3600), 1e-12);
    rep_reco_text(&r, line, sizeof line);
    assert_non_null(strstr(line, "recommended: X (Test, 1 USD/h), 0.05556 USD per TB of each group; runner-up: Y"));
    rep_table t;
    assert_int_equal(rep_table_reco(&t, &r), 0);
    assert_string_equal(t.cell[9], "cost per TB");
    assert_string_equal(t.cell[12], "sum per TB");
    assert_string_equal(t.cell[t.ncols + 9], "0.02778 / 0.02778 USD");
    assert_string_equal(t.cell[t.ncols + 10], "3/GB cpu / -"); /* 30 J over 10 GB: per GB, not 3e-09 */
    rep_table_free(&t);
    rep_reco_basis(&r, note, sizeof note);
    assert_non_null(strstr(note, "; sum per TB = the cost of a TB of each group"));
    report_free(&r);
}

/* --weight: 50 M images of the pipeline and 3 TB of the memory benchmark
 * (10 GB/s, once per instance).  The mix's price, by hand:
 *   X: 50 x 1.0e6/(400 x 3600) + 3 x 1.0e12/(1e10 x 3600) = 34.722 + 0.0833 = 34.806
 *   Y: 50 x 1.9e6/(800 x 3600) + 3 x 1.9e12/(1e10 x 3600) = 32.986 + 0.1583 = 33.144
 * Y: mostly images, where Y is the cheaper; unweighted, the geometric
 * mean of relative costs weighs both groups alike and picks X. */
static void test_weighted_mix(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    char line[768], note[2048];
    double w[2] = {50, 3};
    xy_recommend(&r,
                 "time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,"
                 "items,repeats,wall_s,au,version\n"
                 "2026-12-01T10:00:01Z,8,lab,feed,-,run1,ok,io-pipeline,400,0,0,images,400,1,1,0.95,0.1.0\n"
                 "2026-12-01T10:00:02Z,8,lab,mem,-,run1,ok,stream,10000000000,0,0,bytes,100,1,1,,0.1.0\n",
                 w);
    assert_true(r.reco.weighted);
    assert_string_equal(r.reco.v[0].inst->name, "Y");
    assert_near(r.reco.v[0].score, 50 * 1.9e6 / (800.0 * 3600) + 3 * 1.9e12 / (1e10 * 3600), 1e-9);
    assert_near(r.reco.v[1].score, 50 * 1.0e6 / (400.0 * 3600) + 3 * 1.0e12 / (1e10 * 3600), 1e-9);
    rep_reco_text(&r, line, sizeof line);
    assert_non_null(strstr(line, "recommended: Y (Test, 1.9 USD/h), 33.14 USD for the weighted mix (x2 upper bound: "
                                 "one GPU's cell x 2, scaling not measured); runner-up: X (Test, 1 USD/h), 34.81 USD "
                                 "for the weighted mix"));
    rep_table t;
    assert_int_equal(rep_table_reco(&t, &r), 0);
    assert_string_equal(t.cell[12], "mix cost");
    assert_string_equal(t.cell[t.ncols + 12], "33.14");
    assert_string_equal(t.cell[t.ncols + 9], "0.6597/M images / 0.05278/TB USD");
    rep_table_free(&t);
    rep_reco_basis(&r, note, sizeof note);
    assert_non_null(strstr(note, "; mix cost = the sum of weight x cost (--weight): 50 M images of io-pipeline + 3 TB "
                                 "of stream"));
    r.weights = NULL;
    report_free(&r);
}

/* One GPU at 1.1/h and five at 5.5/h cost the same per image; floating
 * point made the second 1 ulp cheaper and recommended the dearer machine.
 * A tie goes to the lower hourly price. */
static void test_tie_goes_to_lower_price(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    char err[512];
    model_from_csv("time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                   "unit,items,repeats,wall_s,au,version\n"
                   "2026-12-01T10:00:01Z,4,lab,feed,-,run1,ok,io-pipeline,250,0,0,images,250,1,1,0.95,0.1.0\n",
                   &r.rows, &r.model);
    load_catalog(&r, "[instance five]\ngpus = 5\nvcpus = 40\nmemory = 80GiB\nprice_per_hour = 5.5\n"
                     "[instance one]\ngpus = 1\nvcpus = 8\nmemory = 16GiB\nprice_per_hour = 1.1\n");
    assert_int_equal(rep_recommend(&r.reco, &r.model, NULL, NULL, &r.cat, &r.disks, NULL, err, sizeof err), 0);
    r.have_reco = true;
    assert_string_equal(r.reco.v[0].inst->name, "one");
    assert_string_equal(r.reco.v[1].inst->name, "five");
    assert_near(r.reco.v[0].score, 1.1e6 / (250.0 * 3600), 1e-12);
    assert_near(r.reco.v[1].score, 5.5e6 / (1250.0 * 3600), 1e-12);
    assert_non_null(r.reco.unit);
    assert_string_equal(r.reco.unit, "images");
    char line[768];
    rep_reco_text(&r, line, sizeof line);
    assert_non_null(strstr(line, "recommended: one (Test, 1.1 USD/h), 1.222 USD per million images; runner-up: five"));
    report_free(&r);
}

/* Cells of an image pipeline that fed a GPU (cpus 4: 380/s, 8: 400/s: knee
 * 4) and of a host preprocess (cpus 4: 100/s), on three instances. */
static void gpu_cases_recommend(rep_report *r, size_t *feed, size_t *prep)
{
    char err[512];
    model_from_csv("time,cpus,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,"
                   "unit,items,repeats,wall_s,au,version\n"
                   "2026-12-01T10:00:01Z,4,lab,feed,-,run1,ok,io-pipeline,380,0,0,images,380,1,1,0.95,0.1.0\n"
                   "2026-12-01T10:00:02Z,8,lab,feed,-,run1,ok,io-pipeline,400,0,0,images,400,1,1,0.95,0.1.0\n"
                   "2026-12-01T10:00:03Z,4,lab,prep,-,run1,ok,preprocess,100,0,0,images,100,1,1,,0.1.0\n",
                   &r->rows, &r->model);
    load_catalog(r, "[instance cpu-only]\ngpus = 0\nvcpus = 8\nmemory = 16GiB\nprice_per_hour = 0.3\n"
                    "[instance gpu]\ngpus = 1\nvcpus = 4\nmemory = 16GiB\nprice_per_hour = 1.44\n"
                    "[instance starved]\ngpus = 8\nvcpus = 16\nmemory = 256GiB\nprice_per_hour = 8\n");
    *feed = strcmp(r->model.g[0].workload, "io-pipeline") == 0 ? 0 : 1;
    *prep = 1 - *feed;
    assert_int_equal(rep_recommend(&r->reco, &r->model, NULL, NULL, &r->cat, &r->disks, NULL, err, sizeof err), 0);
    r->have_reco = true;
}

/* A group that fed a GPU cannot run on an instance without one (gpus = 0
 * was credited with one GPU's throughput and recommended as cheapest); a
 * host workload can. */
static void test_gpu_group_needs_a_gpu(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    size_t feed, prep;
    gpu_cases_recommend(&r, &feed, &prep);
    const rep_choice *cpu = choice(&r.reco, "cpu-only");
    assert_false(cpu->meets);
    assert_non_null(strstr(cpu->fits[feed].why, "io-pipeline needs a GPU, the instance has none"));
    assert_true(isnan(cpu->fits[feed].thr));
    assert_true(cpu->fits[prep].meets); /* preprocess runs on its 8 vCPUs */
    assert_near(cpu->fits[prep].thr, 100, 1e-9);
    assert_int_equal(r.reco.nmeet, 1);
    assert_string_equal(r.reco.v[0].inst->name, "gpu");
    assert_near(r.reco.v[0].fits[feed].thr, 380, 1e-9);
    assert_near(r.reco.v[0].score, 1.44e6 / (380.0 * 3600) + 1.44e6 / (100.0 * 3600), 1e-12);
    report_free(&r);
}

/* An instance below every measured cell (2 vCPUs per GPU, cells at 4 and
 * 8) is "not measured", not credited 8 x the knee's 380/s. */
static void test_below_every_cell_not_measured(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    size_t feed, prep;
    gpu_cases_recommend(&r, &feed, &prep);
    const rep_choice *st = choice(&r.reco, "starved");
    assert_false(st->meets);
    assert_non_null(strstr(st->fits[feed].why, "cpus >= 4 per GPU"));
    assert_false(st->fits[feed].estimated);
    assert_true(isnan(st->fits[feed].thr));
    assert_true(isinf(st->fits[feed].cost) && isinf(st->score));
    rep_table t;
    assert_int_equal(rep_table_reco(&t, &r), 0);
    size_t found = 0;
    for (size_t row = 1; row < t.nrows; row++)
        if (strncmp(t.cell[row * t.ncols + 1], "starved", 7) == 0) {
            found++;
            assert_string_equal(t.cell[row * t.ncols + 8], "not measured / 100 images/s");
            assert_string_equal(t.cell[row * t.ncols + 9], "- / 22.22 USD");
            assert_string_equal(t.cell[row * t.ncols + 12], "-");
        }
    assert_int_equal(found, 1);
    rep_table_free(&t);
    report_free(&r);
}

/* Neither cpus nor memory swept: the one cell ran on 8 CPUs and peaked at
 * 20 GiB resident.  4 vCPUs per GPU were never measured: the throughput is
 * marked an extrapolation; 16 GiB per GPU cannot hold the process: it does
 * not meet (both were silently credited the full 400/s before). */
static void test_unswept_resources(void **state)
{
    (void)state;
    rep_report r = {.target = 0.95};
    char err[512];
    model_from_csv("time,host,job,mode,run_id,status,workload,throughput,throughput_ci95,throughput_stddev,unit,"
                   "items,repeats,wall_s,au,cpus_used,rss_peak_bytes,version\n"
                   "2026-12-01T10:00:01Z,lab,feed,-,run1,ok,io-pipeline,400,0,0,images,400,1,1,0.95,8,21474836480,"
                   "0.1.0\n",
                   &r.rows, &r.model);
    load_catalog(&r, "[instance few-cpus]\ngpus = 1\nvcpus = 4\nmemory = 32GiB\nprice_per_hour = 1\n"
                     "[instance little-mem]\ngpus = 1\nvcpus = 16\nmemory = 16GiB\nprice_per_hour = 0.5\n"
                     "[instance two]\ngpus = 2\nvcpus = 16\nmemory = 64GiB\nprice_per_hour = 2.5\n");
    assert_int_equal(rep_recommend(&r.reco, &r.model, NULL, NULL, &r.cat, &r.disks, NULL, err, sizeof err), 0);
    r.have_reco = true;
    const rep_choice *few = choice(&r.reco, "few-cpus"), *mem = choice(&r.reco, "little-mem"),
                     *two = choice(&r.reco, "two");
    assert_false(mem->meets);
    assert_string_equal(mem->fits[0].why,
                        "io-pipeline needs memory >= 20 GiB per GPU (its peak RSS; memory not swept)");
    assert_true(few->meets);
    assert_true(few->fits[0].extrapolated);
    assert_true(two->meets);
    assert_false(two->fits[0].extrapolated); /* 8 vCPUs per GPU, as measured */
    assert_near(two->fits[0].thr, 800, 1e-9);
    assert_int_equal(r.reco.nmeet, 2);
    assert_string_equal(r.reco.v[0].inst->name, "few-cpus"); /* 1e6/(400 x 3600) = 0.694 < 2.5e6/(800 x 3600) */
    rep_table t;
    assert_int_equal(rep_table_reco(&t, &r), 0);
    assert_string_equal(t.cell[t.ncols + 8], "400 images/s (ext.)");
    rep_table_free(&t);
    char note[2048];
    rep_reco_basis(&r, note, sizeof note);
    assert_non_null(strstr(note, "ext. = cpus were not swept"));
    report_free(&r);
}

/* A key given twice in one section (or the section twice in a row) is an
 * error naming file, line and key, not the later value silently winning;
 * a missing key is named. */
static void test_catalog_errors(void **state)
{
    (void)state;
    const struct {
        const char *body, *says;
    } bad[] = {
        {"[instance a]\nvcpus = 4\nmemory = 16GiB\nprice_per_hour = 1\nprice_per_hour = 2\n",
         ":10: [instance a]: price_per_hour set twice"},
        {"[instance a]\nvcpus = 4\nmemory = 16GiB\nprice_per_hour = 1\n[instance a]\nvcpus = 8\n",
         ":11: [instance a]: vcpus set twice"},
        {"currency = EUR\n", ":6: [catalog]: currency set twice"},
        {"[instance a]\nvcpus = 4\nprice_per_hour = 1\n", ":6: [instance a] has no memory (an instance needs vcpus"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char path[32], err[512] = "";
        rep_catalog c = {0};
        assert_int_equal(catalog_text(&c, bad[i].body, path, err, sizeof err), -DLG_EINVAL);
        char want[256];
        snprintf(want, sizeof want, "%s%s", path, bad[i].says);
        if (strncmp(err, want, strlen(want)) != 0)
            fail_msg("got '%s', want '%s'", err, want);
        rep_catalog_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_groups_and_axes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_knees, setup, teardown),
        cmocka_unit_test_setup_teardown(test_knee_moves_with_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bottlenecks, setup, teardown),
        cmocka_unit_test(test_compute_names_layers),
        cmocka_unit_test(test_waiting_is_not_compute),
        cmocka_unit_test_setup_teardown(test_recommendation, setup, teardown),
        cmocka_unit_test(test_shipped_catalogs_load),
        cmocka_unit_test(test_storage_profiles_from_rows),
        cmocka_unit_test(test_knee_best_row_first),
        cmocka_unit_test(test_tied_best_any_row_order),
        cmocka_unit_test(test_axis_text),
        cmocka_unit_test(test_rereads_per_repetition),
        cmocka_unit_test(test_energy_per_item_pooled),
        cmocka_unit_test(test_cpu_energy_per_item),
        cmocka_unit_test(test_cpu_energy_mark_per_cell),
        cmocka_unit_test(test_saturated_loader_threads),
        cmocka_unit_test(test_reco_caveat_cpu_groups),
        cmocka_unit_test(test_host_workload_whole_instance),
        cmocka_unit_test(test_expected_is_best_within_resources),
        cmocka_unit_test(test_iops_unit_charges_large_reads),
        cmocka_unit_test(test_csv_skips_cut_row),
        cmocka_unit_test(test_jsonl_cut_last_line),
        cmocka_unit_test(test_mixed_units_not_summed),
        cmocka_unit_test(test_bytes_cost_per_tb),
        cmocka_unit_test(test_weighted_mix),
        cmocka_unit_test(test_tie_goes_to_lower_price),
        cmocka_unit_test(test_gpu_group_needs_a_gpu),
        cmocka_unit_test(test_below_every_cell_not_measured),
        cmocka_unit_test(test_unswept_resources),
        cmocka_unit_test(test_catalog_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
