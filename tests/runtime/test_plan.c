/* Plan building against the build's real plugins (diag, csv, json, influx,
 * posix, mmap...): sweep expansion, defaults from [global], and every
 * configuration mistake reported as one line starting with file:line. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "affinity.h"
#include "host.h"
#include "plan.h"
#include "rt_util.h"

#define END NULL

typedef struct fixture {
    dlg_config cfg;
    dlg_registry reg;
    dlg_plan plan;
    char path[512];
    char err[4096];
} fixture;

/* Loads text and builds its plan; returns the build status (-1 on a config error too). */
static int build(void **state, fixture *f, const char *text, const char *only_job)
{
    memset(f, 0, sizeof *f);
    rt_write(*state, "plan.ini", text, f->path, sizeof f->path);
    if (dlg_config_load(&f->cfg, f->path, f->err, sizeof f->err) != 0)
        fail_msg("config did not load: %s", f->err);
    assert_int_equal(dlg_registry_init(&f->reg, NULL), 0);
    dlg_registry_scan(&f->reg);
    return dlg_plan_build(&f->plan, &f->cfg, &f->reg, only_job, f->err, sizeof f->err);
}

static void done(fixture *f)
{
    dlg_plan_free(&f->plan);
    dlg_registry_free(&f->reg);
    dlg_config_free(&f->cfg);
}

static const dlg_job *job_named(const dlg_plan *p, const char *name)
{
    for (size_t i = 0; i < p->njobs; i++)
        if (strcmp(p->jobs[i].name, name) == 0)
            return &p->jobs[i];
    fail_msg("no job %s in the plan", name);
    return NULL;
}

static size_t wl_index(const dlg_job *j, const char *opt)
{
    for (size_t i = 0; i < j->nwl; i++)
        if (strcmp(j->workload->options[i].name, opt) == 0)
            return i;
    fail_msg("workload %s has no option %s", j->workload->name, opt);
    return 0;
}

static bool has_string(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return true;
    return false;
}

static void sweep_cells(void **state)
{
    fixture f;
    int rc = build(state, &f,
                   "[job mem]\n"
                   "workload = stream\n"
                   "kernel = copy, triad\n"     /* written first, still the inner axis */
                   "array_size = 64KiB, 128KiB\n"
                   "cpus = 0, 1\n"
                   "repeat = 3\n"
                   "[job nap]\n"
                   "workload = sleep\n"
                   "sleep = 1ms, 2ms,3ms\n",
                   NULL);
    if (rc != 0)
        fail_msg("%s", f.err);
    assert_int_equal(f.plan.njobs, 2);
    assert_int_equal(f.plan.total_cells, 8 + 3); /* repeat does not multiply cells */
    const dlg_job *mem = job_named(&f.plan, "mem");
    assert_int_equal(mem->ncells, 8);
    assert_int_equal(mem->naxes, 3);
    /* core keys first (table order), then the workload's options (table order) */
    assert_string_equal(mem->axes[0].key, "cpus");
    assert_string_equal(mem->axes[1].key, "array_size");
    assert_string_equal(mem->axes[2].key, "kernel");
    size_t ia = wl_index(mem, "array_size"), ik = wl_index(mem, "kernel");
    static const struct {
        int cpus;
        int64_t bytes;
        const char *kernel;
        int kidx;
    } want[8] = {{0, 65536, "copy", 0},  {0, 65536, "triad", 3},  {0, 131072, "copy", 0}, {0, 131072, "triad", 3},
                 {1, 65536, "copy", 0},  {1, 65536, "triad", 3},  {1, 131072, "copy", 0}, {1, 131072, "triad", 3}};
    for (size_t k = 0; k < 8; k++) {
        dlg_cell c;
        assert_int_equal(dlg_plan_cell(&f.plan, mem, k, &c, f.err, sizeof f.err), 0);
        assert_int_equal(c.index, k);
        assert_int_equal(c.core[DLG_K_CPUS].i, want[k].cpus);
        assert_int_equal(c.core[DLG_K_REPEAT].i, 3);
        assert_int_equal(c.wl[ia].i, want[k].bytes);
        assert_int_equal(c.wl[ik].i, want[k].kidx);
        assert_int_equal(c.ntags, 3);
        assert_string_equal(c.tags[0].key, "cpus");
        assert_string_equal(c.tags[0].value, want[k].cpus ? "1" : "0");
        assert_string_equal(c.tags[1].key, "array_size");
        assert_string_equal(c.tags[1].value, want[k].bytes == 65536 ? "64KiB" : "128KiB");
        assert_string_equal(c.tags[2].key, "kernel");
        assert_string_equal(c.tags[2].value, want[k].kernel);
        dlg_cell_free(&c);
    }
    const dlg_job *nap = job_named(&f.plan, "nap");
    assert_int_equal(nap->ncells, 3);
    size_t is = wl_index(nap, "sleep");
    for (size_t k = 0; k < 3; k++) {
        dlg_cell c;
        assert_int_equal(dlg_plan_cell(&f.plan, nap, k, &c, f.err, sizeof f.err), 0);
        assert_int_equal(c.wl[is].i, (int64_t)(k + 1) * 1000000);
        assert_int_equal(c.ntags, 1);
        assert_string_equal(c.tags[0].key, "sleep");
        dlg_cell_free(&c);
    }
    /* the result schema: core tags + every swept key + stream's threads (a
     * metric named like its option: a tag, swept or not), sorted; core +
     * workload fields */
    static const char *const tags[] = {"array_size", "cpus", "host", "job", "kernel", "run_id", "sleep", "status",
                                       "threads", "workload"};
    assert_int_equal(f.plan.ntag_keys, 10);
    for (size_t i = 0; i < 10; i++)
        assert_string_equal(f.plan.tag_keys[i], tags[i]);
    const char *fields[256];
    assert_true(f.plan.nfields < 256);
    for (size_t i = 0; i < f.plan.nfields; i++) {
        assert_false(has_string(fields, i, f.plan.fields[i].name)); /* no duplicates */
        fields[i] = f.plan.fields[i].name;
    }
    assert_string_equal(fields[0], "throughput");
    assert_true(has_string(fields, f.plan.nfields, "latency_p99_us"));
    assert_true(has_string(fields, f.plan.nfields, "triad_bytes_per_s"));
    assert_true(has_string(fields, f.plan.nfields, "sleep_ns"));
    done(&f);
}

static void global_defaults(void **state)
{
    fixture f;
    int rc = build(state, &f,
                   "[global]\n"
                   "run_id = nightly-7\n"
                   "iterations = 7\n"
                   "sleep = 5ms\n"      /* an option of one job's workload only */
                   "[job a]\nworkload = sleep\n"
                   "[job b]\nworkload = sleep\niterations = 2\nsleep = 1ms\n"
                   "[job c]\nworkload = stream\n",
                   NULL);
    if (rc != 0)
        fail_msg("%s", f.err);
    assert_string_equal(f.plan.run_id, "nightly-7");
    dlg_cell c;
    const dlg_job *a = job_named(&f.plan, "a"), *b = job_named(&f.plan, "b"), *cj = job_named(&f.plan, "c");
    assert_int_equal(dlg_plan_cell(&f.plan, a, 0, &c, f.err, sizeof f.err), 0);
    assert_int_equal(c.core[DLG_K_ITERATIONS].i, 7);
    assert_int_equal(c.wl[wl_index(a, "sleep")].i, 5000000);
    assert_int_equal(c.core[DLG_K_WARMUP].i, 3); /* the table's default */
    assert_string_equal(c.core[DLG_K_STORAGE].text, "posix");
    assert_int_equal(c.ntags, 0);
    dlg_cell_free(&c);
    assert_int_equal(dlg_plan_cell(&f.plan, b, 0, &c, f.err, sizeof f.err), 0);
    assert_int_equal(c.core[DLG_K_ITERATIONS].i, 2);
    assert_int_equal(c.wl[wl_index(b, "sleep")].i, 1000000);
    dlg_cell_free(&c);
    assert_int_equal(dlg_plan_cell(&f.plan, cj, 0, &c, f.err, sizeof f.err), 0);
    assert_int_equal(c.core[DLG_K_ITERATIONS].i, 7);
    dlg_cell_free(&c);
    /* where a value came from */
    assert_non_null(a->core_src[DLG_K_ITERATIONS]);
    assert_int_equal(a->core_src[DLG_K_ITERATIONS]->line, 3);
    assert_null(a->core_src[DLG_K_WARMUP]);
    done(&f);
}

static void storages_and_sinks(void **state)
{
    fixture f;
    char text[1024];
    const char *dir = ((rt_dir *)*state)->path;
    snprintf(text, sizeof text,
             "[global]\nsinks = lp, table\n"
             "[sink table]\ntype = csv\npath = %s/r.csv\n"
             "[sink lp]\ntype = influx\npath = %s/r.lp\n"
             "[sink unused]\ntype = json\npath = %s/r.json\n"
             "[storage slow]\ntype = posix\n"
             "[job a]\nworkload = sleep\nstorage = slow, mmap\n",
             dir, dir, dir);
    if (build(state, &f, text, NULL) != 0)
        fail_msg("%s", f.err);
    assert_int_equal(f.plan.nsinks, 2); /* [global] sinks picks and orders them */
    assert_string_equal(f.plan.sinks[0].name, "lp");
    assert_string_equal(f.plan.sinks[0].desc->name, "influx");
    assert_string_equal(f.plan.sinks[1].name, "table");
    assert_string_equal(f.plan.sinks[1].desc->name, "csv");
    const dlg_instance_spec *slow = dlg_plan_storage(&f.plan, "slow"), *mm = dlg_plan_storage(&f.plan, "mmap");
    assert_non_null(slow);
    assert_string_equal(slow->desc->name, "posix");
    assert_non_null(slow->sec);
    assert_non_null(mm);
    assert_null(mm->sec); /* a bare type with its defaults */
    assert_null(dlg_plan_storage(&f.plan, "posix"));
    assert_int_equal(job_named(&f.plan, "a")->ncells, 2);
    done(&f);
    /* without [global] sinks: every [sink], in file order */
    snprintf(text, sizeof text, "[sink x]\ntype = json\npath = %s/x.json\n[sink csv]\npath = %s/y.csv\n"
             "[job a]\nworkload = sleep\n", dir, dir);
    if (build(state, &f, text, NULL) != 0)
        fail_msg("%s", f.err);
    assert_int_equal(f.plan.nsinks, 2);
    assert_string_equal(f.plan.sinks[0].name, "x");
    assert_string_equal(f.plan.sinks[1].desc->name, "csv");
    done(&f);
}

/* text, the line the error must name (0: the file only), substrings */
typedef struct bad_case {
    const char *text;
    int line;
    const char *msg[4];
} bad_case;

static const bad_case bad_cases[] = {
    {"[job a]\nworkload = sleep\niteratons = 3\n", 3,
     {"[job a] unknown key 'iteratons' for workload sleep", "(did you mean 'iterations'?)"}},
    {"[job a]\nworkload = sleep\nslep = 3ms\n", 3, {"unknown key 'slep'", "(did you mean 'sleep'?)"}},
    {"[job a]\nworkload = sleep\nbatch = 3\n", 3, {"unknown key 'batch' for workload sleep"}},
    {"[job a]\nworkload = sleep\nsleep = 5 parsecs\n", 3, {"[job a] sleep: unknown duration unit 'parsecs'"}},
    {"[job a]\nworkload = sleep\nsleep = 1ms, 2xs\n", 3, {"[job a] sleep: unknown duration unit 'xs'"}},
    {"[job a]\nworkload = sleep\nsleep = 1ms,,2ms\n", 3, {"empty element in the list '1ms,,2ms'"}},
    {"[job a]\nworkload = sleep\ncpus = 5000\n", 3, {"[job a] cpus: 5000 is above the maximum 4096"}},
    {"[job a]\nworkload = sleep\n\nwarmup = -1\n", 4, {"[job a] warmup: -1 is below the minimum 0"}},
    {"[job a]\nworkload = stream\nkernel = trid\n", 3, {"'trid' is not one of copy|scale|add|triad|all",
                                                          "(did you mean 'triad'?)"}},
    {"[job a]\nworkload = stream\nthreads = 2, 2000\n", 3, {"threads: 2000 is above the maximum 1024"}},
    {"[job a]\nworkload = slep\n", 2,
     {"[job a] workload: unknown workload 'slep'", "(did you mean 'sleep'?)", "available:", " stream"}},
    {"[job a]\niterations = 3\n", 1, {"[job a] has no 'workload' key"}},
    {"[job a]\nworkload = sleep\n[storage s]\ntype = nvme\n", 4,
     {"[storage s] type: unknown storage 'nvme'", "available:", " posix"}},
    {"[job a]\nworkload = sleep\nstorage = s\n[storage s]\nbackend = posix\n", 4,
     {"[storage s] no 'type' key, so the section's name is the type: unknown storage 's'", "available:"}},
    {"[job a]\nworkload = sleep\nstorage = psoix\n", 3,
     {"[job a] storage: unknown storage 'psoix'", "(did you mean 'posix'?)"}},
    {"[job a]\nworkload = sleep\n[sink out]\ntype = cvs\npath = x\n", 4,
     {"[sink out] type: unknown sink 'cvs'", "(did you mean 'csv'?)"}},
    {"[job a]\nworkload = sleep\n[sink csv]\npath = x.csv\npth = y\n", 5,
     {"[sink csv] unknown key 'pth' for sink csv", "(did you mean 'path'?)"}},
    {"[job a]\nworkload = sleep\n[sink csv]\n", 3, {"[sink csv] sink csv needs 'path'"}},
    {"[job a]\nworkload = sleep\n[sink lp]\ntype = influx\npath = x\nbatch = 0\n", 6,
     {"[sink lp] batch: 0 is below the minimum 1"}},
    {"[global]\nrepeat = 2\nbtach = 4\n[job a]\nworkload = sleep\n", 3,
     {"[global] unknown key 'btach'", "not a global key, a core job key, or an option of any job's workload"}},
    {"[global]\nsleeep = 4ms\n[job a]\nworkload = sleep\n", 2, {"[global] unknown key 'sleeep'", "(did you mean 'sleep'?)"}},
    {"[global]\nsinks = nope\n[job a]\nworkload = sleep\n", 2, {"[global] sinks: there is no [sink nope] section"}},
    /* a longer run_id was cut to 63 bytes in results and the journal */
    {"[global]\nrun_id = nightly-resnet50-sweep-on-the-large-memory-instance-shape-2026-12-01T21h\n[job a]\n"
     "workload = sleep\n", 2, {"[global] run_id: 72 bytes long; at most 63"}},
    /* a sink listed twice got every result twice (duplicate rows in one file) */
    {"[global]\nsinks = out, x, out\n[sink out]\ntype = csv\npath = r.csv\n[sink x]\ntype = csv\npath = s.csv\n"
     "[job a]\nworkload = sleep\n", 2, {"[global] sinks: 'out' is listed twice in 'out, x, out'"}},
    /* a list where a job would sweep: not "unknown size unit 'MB, 2MB'" */
    {"[job a]\nworkload = sleep\nstorage = s\n[storage s]\ntype = throttle\nbandwidth = 1MB, 2MB\n", 6,
     {"[storage s] bandwidth: '1MB, 2MB' is a list, but a storage's options take one value (to sweep, give each "
      "value a [storage] section and list them in the job's storage key)"}},
    {"[job a]\nworkload = sleep\n[sink lp]\ntype = influx\npath = x\nbatch = 1, 2\n", 6,
     {"[sink lp] batch: '1, 2' is a list, but a sink's options take one value"}},
    /* two sinks on one file: every row twice, or csv and json lines mixed */
    {"[sink csv]\npath = r.csv\n[sink c2]\ntype = csv\npath = ./r.csv\n[job a]\nworkload = sleep\n", 5,
     {"[sink c2] path: ./r.csv is the file [sink csv] writes too (path = r.csv at ", ":2)", "give each its own"}},
    {"[global]\nsinks = j, out\n[sink out]\ntype = csv\npath = r.x\n[sink j]\ntype = json\npath = r.x\n"
     "[job a]\nworkload = sleep\n", 5, {"[sink out] path: r.x is the file [sink j] writes too (path = r.x at ", ":8)"}},
    {"[sink lp]\ntype = influx\npath = d//r.lp\n[sink csv]\npath = d/r.lp\n[job a]\nworkload = sleep\n", 5,
     {"[sink csv] path: d/r.lp is the file [sink lp] writes too"}},
    {"[global]\nsinks = out,\n[sink out]\ntype = csv\npath = r.csv\n[job a]\nworkload = sleep\n", 2,
     {"[global] sinks: empty element in the list 'out,'"}},
    {"[global]\nrepeat = 0\n[job a]\nworkload = sleep\n", 2, {"[global] repeat: 0 is below the minimum 1 (in [job a])"}},
    {"[global]\n", 0, {"no [job NAME] sections: nothing to run"}},
    /* isolation = none cannot enforce limits: an error, not silently ignored */
    {"[job a]\nworkload = sleep\ntimeout = 1s\nisolation = none\nmemory = 1GiB\n", 4,
     {"[job a] isolation = none cannot enforce memory, timeout: "}},
    {"[global]\ncpu_quota = 0, 1.5\n[job a]\nworkload = sleep\nisolation = none\n", 5,
     {"[job a] isolation = none cannot enforce cpu_quota: "}},
};

static void plan_errors(void **state)
{
    for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
        fixture f;
        const bad_case *b = &bad_cases[i];
        if (build(state, &f, b->text, NULL) == 0)
            fail_msg("case %zu built a plan:\n%s", i, b->text);
        rt_assert_error_at(f.err, f.path, b->line, b->msg[0] ? b->msg[0] : "", b->msg[1] ? b->msg[1] : "",
                           b->msg[2] ? b->msg[2] : "", b->msg[3] ? b->msg[3] : "", END);
        done(&f);
    }
}

/* "key = 1, 2, ..., n" and a newline, appended to buf. */
static void put_sweep(char *buf, size_t len, const char *key, int n)
{
    size_t at = strlen(buf);
    at += (size_t)snprintf(buf + at, len - at, "%s = ", key);
    for (int v = 1; v <= n; v++)
        at += (size_t)snprintf(buf + at, len - at, "%d%s", v, v < n ? ", " : "\n");
}

/* Eight axes of 512 values are 2^72 cells: the count wrapped around to 0
 * and the job planned as no cells at all; past DLG_PLAN_MAX_CELLS the
 * plan is refused at the axis that crosses it, and so is a run whose jobs
 * add up to more. */
static void too_many_cells(void **state)
{
    static const char *const keys[] = {"warmup", "iterations", "duration", "min_steps",
                                       "repeat", "seed",       "timeout",  "sleep"};
    enum { LEN = 8 * 4096 };
    char *text = calloc(1, LEN);
    assert_non_null(text);
    strcat(text, "[job wide]\nworkload = sleep\n");
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        put_sweep(text, LEN, keys[k], 512);
    fixture f;
    if (build(state, &f, text, NULL) == 0)
        fail_msg("planned %zu cells", f.plan.total_cells);
    /* 512 x 512, then duration's 512 pass a million (line 5) */
    rt_assert_error_at(f.err, f.path, 5, "[job wide] duration: 512 values times the 262144 cells of the axes "
                       "before make more than 1000000 cells", END);
    done(&f);

    text[0] = '\0';
    for (int j = 0; j < 2; j++) {
        snprintf(text + strlen(text), LEN - strlen(text), "[job j%d]\nworkload = sleep\n", j);
        put_sweep(text, LEN, "seed", 100);
        put_sweep(text, LEN, "warmup", 100);
        put_sweep(text, LEN, "min_steps", 100);
    }
    if (build(state, &f, text, NULL) == 0)
        fail_msg("planned %zu cells", f.plan.total_cells);
    rt_assert_error_at(f.err, f.path, 6, "[job j1]: its 1000000 cells and the 1000000 of the jobs before make "
                       "more than 1000000 cells", "--job", END);
    done(&f);
    free(text);
}

static void set_and_only_job(void **state)
{
    fixture f;
    /* a bad value from --set names its origin */
    memset(&f, 0, sizeof f);
    rt_write(*state, "s.ini", "[job train]\nworkload = sleep\n[job eval]\nworkload = sleep\n", f.path, sizeof f.path);
    assert_int_equal(dlg_config_load(&f.cfg, f.path, f.err, sizeof f.err), 0);
    assert_int_equal(dlg_config_set(&f.cfg, "job.sleep=2 fortnights", f.err, sizeof f.err), 0);
    assert_int_equal(dlg_registry_init(&f.reg, NULL), 0);
    dlg_registry_scan(&f.reg);
    assert_int_not_equal(dlg_plan_build(&f.plan, &f.cfg, &f.reg, NULL, f.err, sizeof f.err), 0);
    rt_assert_error_at(f.err, "--set", 0, "[job train] sleep: unknown duration unit 'fortnights'", END);
    done(&f);
    /* --job picks one job; a typo gets a suggestion */
    assert_int_equal(build(state, &f, "[job train]\nworkload = sleep\n[job eval]\nworkload = stream\n", "eval"), 0);
    assert_int_equal(f.plan.njobs, 1);
    assert_string_equal(f.plan.jobs[0].name, "eval");
    done(&f);
    assert_int_not_equal(build(state, &f, "[job train]\nworkload = sleep\n", "trian"), 0);
    rt_assert_error_at(f.err, f.path, 0, "no [job trian]", "(did you mean 'train'?)", END);
    done(&f);
}

/* --job repeated: every named job, in file order; any unknown name fails */
static void several_jobs(void **state)
{
    fixture f;
    static const char text[] = "[job a]\nworkload = sleep\n[job b]\nworkload = stream\n[job c]\nworkload = noop\n";
    const char *ca[] = {"c", "a", "c"}, *bad[] = {"a", "d"};
    assert_int_equal(build(state, &f, text, NULL), 0);
    dlg_plan_free(&f.plan);
    assert_int_equal(dlg_plan_build_jobs(&f.plan, &f.cfg, &f.reg, ca, 3, f.err, sizeof f.err), 0);
    assert_int_equal(f.plan.njobs, 2);
    assert_string_equal(f.plan.jobs[0].name, "a");
    assert_string_equal(f.plan.jobs[1].name, "c");
    dlg_plan_free(&f.plan);
    assert_int_not_equal(dlg_plan_build_jobs(&f.plan, &f.cfg, &f.reg, bad, 2, f.err, sizeof f.err), 0);
    rt_assert_error_at(f.err, f.path, 0, "no [job d]", END);
    done(&f);
    /* isolation = none with no limit, or limits of 0 ("none"), is fine */
    assert_int_equal(build(state, &f, "[job a]\nworkload = sleep\nisolation = none\ntimeout = 0\n", NULL), 0);
    done(&f);
}

/* Builds text's plan and checks it against this machine; its warnings land in warn[]. */
static int check_inputs(void **state, fixture *f, const char *text, char *warn, size_t wlen)
{
    if (build(state, f, text, NULL) != 0)
        fail_msg("no plan: %s", f->err);
    memset(warn, 0, wlen);
    FILE *w = fmemopen(warn, wlen, "w");
    assert_non_null(w);
    int rc = dlg_plan_check_inputs(&f->plan, w, f->err, sizeof f->err);
    fclose(w);
    return rc;
}

/* data: the kind must be one the workload declares, and a path must exist
 * or be written by an earlier job; each mistake names the data line. */
static void data_inputs(void **state)
{
    const char *dir = ((rt_dir *)*state)->path;
    char have[512], text[2048], warn[1024], want[1024];
    rt_write(*state, "have.rec", "x", have, sizeof have);
    fixture f;
    snprintf(text, sizeof text, "[job a]\nworkload = io-pipeline\ndata = recordo:%s\n", have);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 3, "[job a] data: unknown kind 'recordo' in 'recordo:", "recordio:FILE",
                       "(did you mean 'recordio'?)", END);
    done(&f);
    snprintf(text, sizeof text, "[job a]\nworkload = io-pipeline\n\ndata = recordio:%s/none.rec\n", dir);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 4, "[job a] data: ", "/none.rec: No such file or directory", END);
    done(&f);
    /* from [global], the error names that line; io reads raw:PATH only */
    snprintf(text, sizeof text, "[global]\ndata = raw:%s/gone.bin\n[job a]\nworkload = io\n", dir);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 2, "[job a] data: ", "/gone.bin: No such file", END);
    done(&f);
    assert_int_not_equal(check_inputs(state, &f, "[job a]\nworkload = io\ndata = raw:\n", warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 3, "[job a] data: 'raw:' names no path (raw:FILE)", END);
    done(&f);
    snprintf(text, sizeof text, "[job a]\nworkload = io\ndata = recordio:%s\n", have);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 3, "unknown kind 'recordio'", "use workload = io-pipeline", END);
    done(&f);
    /* what exists, synthetic data and the default are fine */
    snprintf(text, sizeof text,
             "[job a]\nworkload = io-pipeline\ndata = recordio:%s\n[job b]\nworkload = io-pipeline\n"
             "data = synthetic:64\n[job c]\nworkload = io-pipeline\n[job d]\nworkload = io\ndata = raw:%s\n",
             have, have);
    if (check_inputs(state, &f, text, warn, sizeof warn) != 0)
        fail_msg("%s", f.err);
    assert_string_equal(warn, "");
    done(&f);
    /* written by an earlier job of the run (preprocess, then its reader) */
    rt_write(*state, "x.lst", "0\t0\ta.jpg\n", have, sizeof have);
    static const char conv[] = "[job conv]\nworkload = preprocess\ninput = %s/x.lst\noutput = recordio:%s/new.rec\n";
    static const char read[] = "[job read]\nworkload = io-pipeline\ndata = recordio:%s/new.rec\n";
    char c[512], r[512];
    snprintf(c, sizeof c, conv, dir, dir);
    snprintf(r, sizeof r, read, dir);
    snprintf(text, sizeof text, "%s%s", c, r);
    if (check_inputs(state, &f, text, warn, sizeof warn) != 0)
        fail_msg("%s", f.err);
    done(&f);
    snprintf(text, sizeof text, "%s%s", r, c); /* read first: nothing has written it yet */
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    snprintf(want, sizeof want, "(job conv writes it, at %s:7, but runs after this one)", f.path);
    rt_assert_error_at(f.err, f.path, 3, "[job read] data: ", "/new.rec: No such file or directory", want, END);
    done(&f);
    snprintf(r, sizeof r, read, "/nowhere");
    snprintf(text, sizeof text, "%s%s", c, r);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 7, "[job read] data: /nowhere/new.rec: No such file or directory (and no "
                       "earlier job of this run writes it as its output)", END);
    done(&f);
}

/* A storage's path option (the throttle's profile) names its own line
 * when the file is missing, before the storage is created. */
static void storage_profile_input(void **state)
{
    const char *dir = ((rt_dir *)*state)->path;
    char text[1024], warn[256], have[512];
    fixture f;
    snprintf(text, sizeof text, "[job a]\nworkload = sleep\nstorage = slow\n[storage slow]\ntype = throttle\n"
             "bandwidth = 1MiB\nprofile = %s/none.ini\n", dir);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 7, "[storage slow] profile: ", "/none.ini: No such file or directory", END);
    done(&f);
    rt_write(*state, "disk.ini", "bandwidth = 1MiB\n", have, sizeof have);
    snprintf(text, sizeof text, "[job a]\nworkload = sleep\nstorage = slow\n[storage slow]\ntype = throttle\n"
             "profile = %s\n", have);
    if (check_inputs(state, &f, text, warn, sizeof warn) != 0)
        fail_msg("%s", f.err);
    done(&f);
}

/* A job read through a plugin backend that names no local files (farstore)
 * leaves its paths to it; swept with posix too, a path missing here fails
 * the posix cells, so the plan says so as for posix alone. */
static void plugin_storage_inputs(void **state)
{
    const char *dir = ((rt_dir *)*state)->path;
    char text[2048], warn[256];
    static const char fmt[] = "[job a]\nworkload = io\ndata = raw:%s/none.bin\nstorage = %s\n"
                              "[storage remote]\ntype = far\nplugin = %s/farstore.so\n";
    fixture f;
    snprintf(text, sizeof text, fmt, dir, "remote", DLG_TEST_PLUGIN_DIR);
    if (check_inputs(state, &f, text, warn, sizeof warn) != 0)
        fail_msg("%s", f.err);
    done(&f);
    static const char *const sweeps[] = {"posix, remote", "remote, mmap"};
    for (size_t i = 0; i < sizeof sweeps / sizeof *sweeps; i++) {
        snprintf(text, sizeof text, fmt, dir, sweeps[i], DLG_TEST_PLUGIN_DIR);
        assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
        rt_assert_error_at(f.err, f.path, 3, "[job a] data: ", "/none.bin: No such file or directory", END);
        done(&f);
    }
    /* a throttle is as local as what it wraps: over the plugin, left to it;
     * over posix (its default inner), checked here */
    static const char tfmt[] = "[job a]\nworkload = io\ndata = raw:%s/none.bin\nstorage = slow\n"
                               "[storage slow]\ntype = throttle\nbandwidth = 1MiB\n%s"
                               "[storage remote]\ntype = far\nplugin = %s/farstore.so\n";
    snprintf(text, sizeof text, tfmt, dir, "inner = remote\n", DLG_TEST_PLUGIN_DIR);
    if (check_inputs(state, &f, text, warn, sizeof warn) != 0)
        fail_msg("%s", f.err);
    done(&f);
    snprintf(text, sizeof text, tfmt, dir, "", DLG_TEST_PLUGIN_DIR);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 3, "[job a] data: ", "/none.bin: No such file or directory", END);
    done(&f);
}

/* A storage's create() message about one of its keys (the throttle's
 * "inner = x: ...") is said at that key's line, not at its section's;
 * any other (a bad profile file's) at the section's. */
static void storage_create_at_key(void **state)
{
    char prof[512], text[1024];
    rt_write(*state, "disk.ini", "no_such_key = 1\n", prof, sizeof prof);
    static const char *const fmt[] = {
        "[job a]\nworkload = sleep\nstorage = slow\n[storage slow]\ntype = throttle\nbandwidth = 1MiB\n"
        "inner = nosuch\n%s",
        "[job a]\nworkload = sleep\nstorage = slow\n[storage slow]\ntype = throttle\nprofile = %s\n",
    };
    static const char *const said[] = {"[storage slow] throttle: inner = nosuch: no [storage nosuch] section",
                                       "[storage slow] throttle: "};
    for (int i = 0; i < 2; i++) {
        fixture f;
        snprintf(text, sizeof text, fmt[i], i ? prof : "");
        if (build(state, &f, text, NULL) != 0)
            fail_msg("%s", f.err);
        dlg_services svc;
        dlg_services_init(&svc, &f.plan, NULL, 0);
        assert_true(dlg_services_storage_check(&svc, "slow") < 0);
        rt_assert_error_at(dlg_services_error(&svc), f.path, i ? 4 : 7, said[i], i ? "no_such_key" : "", END);
        dlg_services_fini(&svc);
        done(&f);
    }
}

/* Checks that conv writes out (a preprocess output) and read then reads
 * data (an io-pipeline data value): 0, or -1 with the error in f->err. */
static int written_then_read(void **state, fixture *f, const char *out, const char *data)
{
    char text[4096], warn[256], list[512];
    rt_write(*state, "in/x.lst", "0\t0\ta.jpg\n", list, sizeof list);
    snprintf(text, sizeof text, "[job conv]\nworkload = preprocess\ninput = %s\noutput = %s\n"
             "[job read]\nworkload = io-pipeline\ndata = %s\n", list, out, data);
    return check_inputs(state, f, text, warn, sizeof warn);
}

/* An earlier job's output is the same file as a later job's data however
 * each is written: ./x, x//y, a trailing slash, absolute and relative (the
 * check used to compare the text: a false "no earlier job writes it"). */
static void output_matches_data(void **state)
{
    const char *dir = ((rt_dir *)*state)->path;
    char out[1024], data[1024], cwd[4096];
    static const char *const same[][2] = {
        {"recordio:./new.rec", "recordio:new.rec"},
        {"recordio:sub//new.rec", "recordio:./sub/new.rec"},
        {"lmdb:sub/db/", "lmdb:sub/db"},
        {"recordio:%s/sub/./new.rec", "recordio:sub/new.rec"},  /* absolute, then relative */
        {"lmdb:gone/../db", "lmdb:gone/../db/"},
    };
    fixture f;
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        snprintf(out, sizeof out, same[i][0], dir);
        snprintf(data, sizeof data, "%s", same[i][1]);
        if (written_then_read(state, &f, out, data) != 0)
            fail_msg("output = %s, data = %s: %s", out, data, f.err);
        done(&f);
    }
    /* the same path written as another kind than it is read as */
    assert_int_not_equal(written_then_read(state, &f, "lmdb:./db", "recordio:db/"), 0);
    char want[1024];
    snprintf(want, sizeof want, "(job conv writes it as lmdb, at %s:4, not as recordio)", f.path);
    rt_assert_error_at(f.err, f.path, 7, "[job read] data: db/: No such file or directory ", want, END);
    done(&f);
    assert_int_not_equal(written_then_read(state, &f, "recordio:a/new.rec", "recordio:b/new.rec"), 0);
    rt_assert_error_at(f.err, f.path, 7, "no earlier job of this run writes it", END);
    done(&f);
    assert_int_equal(chdir(cwd), 0);
}

/* preprocess's input must exist, as data paths must: the error names the
 * input line (it used to pass the plan and fail in the cell's setup). */
static void prep_input(void **state)
{
    const char *dir = ((rt_dir *)*state)->path;
    char text[2048], warn[256], have[512];
    fixture f;
    snprintf(text, sizeof text, "[job conv]\nworkload = preprocess\noutput = recordio:%s/o.rec\n"
             "input = %s/none.lst\n", dir, dir);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 4, "[job conv] input: ", "/none.lst: No such file or directory", END);
    done(&f);
    snprintf(text, sizeof text, "[global]\ninput = %s/none\n[job conv]\nworkload = preprocess\n"
             "output = recordio:%s/o.rec\n", dir, dir);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 2, "[job conv] input: ", "/none: No such file or directory", END);
    done(&f);
    /* root, the folder the list's paths are relative to, is read too */
    rt_write(*state, "x.lst", "0\t0\ta.jpg\n", have, sizeof have);
    snprintf(text, sizeof text, "[job conv]\nworkload = preprocess\ninput = %s\noutput = recordio:%s/o.rec\n"
             "root = %s/imgs\n", have, dir, dir);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 5, "[job conv] root: ", "/imgs: No such file or directory", END);
    done(&f);
    /* a folder or a list that exists */
    rt_write(*state, "tree/cat/a.jpg", "x", have, sizeof have);
    snprintf(text, sizeof text, "[job conv]\nworkload = preprocess\ninput = %s/tree/\noutput = recordio:%s/o.rec\n",
             dir, dir);
    if (check_inputs(state, &f, text, warn, sizeof warn) != 0)
        fail_msg("%s", f.err);
    done(&f);
}

/* A path that exists as the wrong kind (a folder where the help's ARG says
 * FILE, a file where it says DIR) stops the run at its line, naming what was
 * expected: recordio:DIR passed the plan and failed every cell.  Where the
 * ARG says either (PATH, LIST_OR_DIR, "DIR or LIST") both kinds pass. */
static void path_kinds(void **state)
{
    const char *dir = ((rt_dir *)*state)->path;
    char text[4096], warn[256], file[512], folder[1024];
    rt_write(*state, "d/x.lst", "0\t0\ta.jpg\n", file, sizeof file);
    snprintf(folder, sizeof folder, "%s/d", dir);
    static const struct {
        const char *ini, *said;
        int line;
    } bad[] = {
        {"[job a]\nworkload = io-pipeline\ndata = recordio:%s\n", "Is a directory (a file expected: recordio:FILE)", 3},
        {"[job a]\nworkload = io\n\ndata = raw:%s\n", "Is a directory (a file expected: raw:FILE)", 4},
        {"[job a]\nworkload = lstm-ptb\ndata = text:%s\n", "Is a directory (a file expected: text:FILE)", 3},
        {"[job a]\nworkload = alexnet\nmean_file = %s\n", "Is a directory (a file expected: mean_file = FILE)", 3},
    };
    fixture f;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(text, sizeof text, bad[i].ini, folder);
        assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
        rt_assert_error_at(f.err, f.path, bad[i].line, "[job a] ", "/d: ", bad[i].said, END);
        done(&f);
    }
    /* the reverse: preprocess's root is a folder */
    snprintf(text, sizeof text, "[job conv]\nworkload = preprocess\ninput = %s\noutput = recordio:%s/o.rec\n"
             "root = %s\n", file, dir, file);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 5, "[job conv] root: ", "/d/x.lst: Not a directory (a directory expected: "
                       "root = DIR)", END);
    done(&f);
    /* either kind: lmdb (a folder or a one-file LMDB), files, preprocess's
     * input; root and raw as they should be */
    snprintf(text, sizeof text,
             "[job a]\nworkload = io-pipeline\ndata = lmdb:%s\n[job b]\nworkload = io-pipeline\ndata = lmdb:%s\n"
             "[job c]\nworkload = io-pipeline\ndata = files:%s\n[job d]\nworkload = io-pipeline\ndata = files:%s\n"
             "[job e]\nworkload = preprocess\ninput = %s\nroot = %s\noutput = recordio:%s/o.rec\n"
             "[job f]\nworkload = io\ndata = raw:%s\n",
             folder, file, folder, file, file, folder, dir, file);
    if (check_inputs(state, &f, text, warn, sizeof warn) != 0)
        fail_msg("%s", f.err);
    done(&f);
}

/* Caffe's mean_file is a path the job reads (DLG_OPT_PATH_IN): missing, it
 * stops the run at its line before any cell (it used to pass the plan and
 * fail every cell), unless an earlier job writes it as its mean_output. */
static void mean_file_inputs(void **state)
{
    const char *dir = ((rt_dir *)*state)->path;
    char text[4096], warn[256], want[1024], list[512], conv[1024], read[1024];
    fixture f;
    snprintf(text, sizeof text, "[job a]\nworkload = alexnet\nbatch = 1\n\nmean_file = %s/none.binaryproto\n",
             dir);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 5, "[job a] mean_file: ", "/none.binaryproto: No such file or directory",
                       END);
    assert_null(strchr(f.err, '\n'));
    done(&f);
    /* from [global], for every loader workload (io-pipeline too) */
    snprintf(text, sizeof text, "[global]\nmean_file = %s/gone\n[job a]\nworkload = io-pipeline\n", dir);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 2, "[job a] mean_file: ", "/gone: No such file or directory", END);
    done(&f);
    /* preprocess writes it (mean_output) in an earlier job: accepted */
    rt_write(*state, "in/x.lst", "0\t0\ta.jpg\n", list, sizeof list);
    snprintf(conv, sizeof conv, "[job conv]\nworkload = preprocess\ninput = %s\noutput = lmdb:%s/db\n"
             "resize_width = 8\nresize_height = 8\nmean_output = %s/m.binaryproto\n", list, dir, dir);
    snprintf(read, sizeof read, "[job read]\nworkload = alexnet\ndata = lmdb:%s/db\nmean_file = %s/./m.binaryproto\n",
             dir, dir);
    snprintf(text, sizeof text, "%s%s", conv, read);
    if (check_inputs(state, &f, text, warn, sizeof warn) != 0)
        fail_msg("%s", f.err);
    done(&f);
    /* ...but not by a later one */
    snprintf(text, sizeof text, "%s%s", read, conv);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    snprintf(want, sizeof want, "(job conv writes it, at %s:8, but runs after this one)", f.path);
    rt_assert_error_at(f.err, f.path, 3, "[job read] data: ", want, END);
    done(&f);
    snprintf(read, sizeof read, "[job read]\nworkload = alexnet\nmean_file = %s/m.binaryproto\n", dir);
    snprintf(text, sizeof text, "%s%s", read, conv);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    snprintf(want, sizeof want, "(job conv writes it, at %s:10, but runs after this one)", f.path);
    rt_assert_error_at(f.err, f.path, 3, "[job read] mean_file: ", "/m.binaryproto: No such file or directory",
                       want, END);
    assert_null(strchr(f.err, '\n'));
    done(&f);
}

/* A plugin built before the path flags (none set) keeps the name rule:
 * `data` with declared forms and `input` are checked, `output` satisfies
 * them; any other option (a mean_file of its own) is its own to check. */
static void unflagged_plugin(void **state)
{
    const char *dir = ((rt_dir *)*state)->path;
    char text[4096], warn[256], list[512];
    rt_write(*state, "in/x.lst", "0\t0\ta.jpg\n", list, sizeof list);
    snprintf(text, sizeof text, "[job conv]\nworkload = preprocess\ninput = %s\noutput = recordio:%s/o.rec\n"
             "[job read]\nworkload = io-pipeline\ndata = recordio:%s/o.rec\nmean_file = %s/none\n"
             "[job miss]\nworkload = io-pipeline\ndata = recordio:%s/none.rec\n", list, dir, dir, dir, dir);
    fixture f;
    if (build(state, &f, text, NULL) != 0)
        fail_msg("no plan: %s", f.err);
    dlg_plugin_desc desc[2];
    dlg_option opts[2][64];
    for (size_t j = 0; j < 2; j++) { /* preprocess, io-pipeline, as a plugin without the flags would have them */
        desc[j] = *f.plan.jobs[j].workload;
        size_t n = 0;
        for (; desc[j].options[n].name; n++) {
            assert_true(n + 1 < 64);
            opts[j][n] = desc[j].options[n];
            opts[j][n].flags &= ~(uint32_t)(DLG_OPT_PATH_IN | DLG_OPT_PATH_OUT);
        }
        opts[j][n] = desc[j].options[n];
        desc[j].options = opts[j];
    }
    f.plan.jobs[0].workload = &desc[0];
    f.plan.jobs[1].workload = &desc[1];
    f.plan.jobs[2].workload = &desc[1];
    FILE *w = fmemopen(warn, sizeof warn, "w");
    assert_non_null(w);
    assert_int_not_equal(dlg_plan_check_inputs(&f.plan, w, f.err, sizeof f.err), 0);
    fclose(w);
    rt_assert_error_at(f.err, f.path, 11, "[job miss] data: ", "/none.rec: No such file or directory (and no "
                       "earlier job of this run writes it as its output)", END);
    done(&f);
}

/* cpus: a value this machine cannot give is an error at its line; a sweep
 * that partly fits runs, with one warning per line naming the cells lost. */
static void cpus_inputs(void **state)
{
    int n = dlg_cpus_available();
    char text[1024], warn[1024], want[256];
    fixture f;
    snprintf(text, sizeof text, "[job a]\nworkload = sleep\ncpus = %d\n", n + 1);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    snprintf(want, sizeof want, "[job a] cpus = %d, but only %d CPUs are available to this process", n + 1, n);
    rt_assert_error_at(f.err, f.path, 3, want, END);
    done(&f);
    snprintf(text, sizeof text, "[job a]\nworkload = sleep\ncpus = 0-%d\n", n);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    rt_assert_error_at(f.err, f.path, 3, "[job a] cpus = 0-", "is not available to this process", END);
    done(&f);
    snprintf(text, sizeof text, "[job a]\nworkload = sleep\ncpus = %d, %d\n", n + 1, n + 2);
    assert_int_not_equal(check_inputs(state, &f, text, warn, sizeof warn), 0);
    snprintf(want, sizeof want, "(no value fits: %d, %d)", n + 1, n + 2);
    rt_assert_error_at(f.err, f.path, 3, want, END);
    done(&f);
    /* 1 fits anywhere: [global]'s sweep is said once for both jobs */
    snprintf(text, sizeof text, "[global]\ncpus = 1, %d\n[job a]\nworkload = sleep\n[job b]\nworkload = sleep\n"
             "sleep = 1ms, 2ms\n", n + 1);
    if (check_inputs(state, &f, text, warn, sizeof warn) != 0)
        fail_msg("%s", f.err);
    snprintf(want, sizeof want, "dlgauge: %s:2: [global] warning: cpus = %d, but only %d CPUs are available to "
             "this process: the 3 cells with cpus = %d will fail\n", f.path, n + 1, n, n + 1);
    assert_string_equal(warn, want);
    done(&f);
    assert_int_equal(check_inputs(state, &f, "[job a]\nworkload = sleep\ncpus = 1, 0\n", warn, sizeof warn), 0);
    assert_string_equal(warn, "");
    done(&f);
}

/* A workload loaded from a file given in the job, and its required option. */
static void plugin_key(void **state)
{
    fixture f;
    char text[1024];
    snprintf(text, sizeof text, "[job a]\nplugin = %s/testwl.so\nworkload = needs\n", DLG_TEST_PLUGIN_DIR);
    assert_int_not_equal(build(state, &f, text, NULL), 0);
    rt_assert_error_at(f.err, f.path, 1, "[job a] workload needs needs 'size'", END);
    done(&f);
    snprintf(text, sizeof text, "[job a]\nplugin = %s/testwl.so\nworkload = needs\nsize = 1KiB, 2KiB\n",
             DLG_TEST_PLUGIN_DIR);
    if (build(state, &f, text, NULL) != 0)
        fail_msg("%s", f.err);
    assert_int_equal(f.plan.total_cells, 2);
    assert_non_null(strstr(f.plan.jobs[0].workload_path, "testwl.so"));
    done(&f);
    /* the plugin file only: a built-in workload is not found through it */
    snprintf(text, sizeof text, "[job a]\nplugin = %s/testwl.so\nworkload = sleep\n", DLG_TEST_PLUGIN_DIR);
    assert_int_not_equal(build(state, &f, text, NULL), 0);
    rt_assert_error_at(f.err, f.path, 3, "unknown workload 'sleep'", "available: needs", END);
    done(&f);
    snprintf(text, sizeof text, "[job a]\nworkload = x\nplugin = %s/abi_major2.so\n", DLG_TEST_PLUGIN_DIR);
    assert_int_not_equal(build(state, &f, text, NULL), 0);
    rt_assert_error_at(f.err, f.path, 3, "[job a] plugin: ", "abi_major2.so: built for plugin ABI 2.3", END);
    done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sweep_cells, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(global_defaults, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(storages_and_sinks, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(plan_errors, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(too_many_cells, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(set_and_only_job, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(several_jobs, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(plugin_key, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(data_inputs, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(output_matches_data, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(storage_profile_input, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(plugin_storage_inputs, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(storage_create_at_key, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(prep_input, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(path_kinds, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(mean_file_inputs, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(unflagged_plugin, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(cpus_inputs, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
