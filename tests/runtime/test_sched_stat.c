/* cpu_wait_share, cpu_steal_share and cpu_other_share: the readings of a
 * fake /proc (threads that persist, start and end in the window; steal
 * and busy ticks over the cell's CPUs only; kernels without a steal
 * column; the process's own CPU time), threads matched in one merge, then
 * a real cell pinned to one CPU that busy processes share with it. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "rt_cell.h"
#include "rt_util.h"
#include "sched_stat.h"

/* A fake /proc under d/root: the threads' schedstat lines and stat. */
static void take(rt_dir *d, const char *root, const char *tasks[][2], const char *stat, const dlg_cpuset *cpus,
                 dlg_sched_snap *s)
{
    char path[512], name[128];
    for (size_t i = 0; tasks[i][0]; i++) {
        snprintf(name, sizeof name, "%s/self/task/%s/schedstat", root, tasks[i][0]);
        rt_write(d, name, tasks[i][1], path, sizeof path);
    }
    snprintf(name, sizeof name, "%s/stat", root);
    rt_write(d, name, stat, path, sizeof path);
    snprintf(path, sizeof path, "%s/%s", d->path, root);
    dlg_sched_snap_take(s, path, cpus);
}

static const char *const stat0 =
    "cpu  400 0 100 1000 0 0 0 40 0 0\n"
    "cpu0 100 0 25 250 0 0 0 0 0 0\n"
    "cpu1 100 0 25 250 0 0 0 10 0 0\n"
    "cpu2 100 0 25 250 0 0 0 0 0 0\n"
    "cpu3 100 0 25 250 0 0 0 30 0 0\n"
    "intr 1 2 3\n";
/* cpu1: +100 ticks, 20 of them stolen; cpu3: +100, 60 stolen; cpu0 and
 * cpu2 (not the cell's): +100, 100 stolen, which must not count */
static const char *const stat1 =
    "cpu  800 0 100 1000 0 0 0 320 0 0\n"
    "cpu0 100 0 25 250 0 0 0 100 0 0\n"
    "cpu1 180 0 25 250 0 0 0 30 0 0\n"
    "cpu2 100 0 25 250 0 0 0 100 0 0\n"
    "cpu3 140 0 25 250 0 0 0 90 0 0\n"
    "intr 1 2 3\n";

/* The fake cell's CPUs: 1 and 3. */
static void cell_cpus(dlg_cpuset *cpus)
{
    assert_int_equal(dlg_cpuset_init(cpus, 0), 0);
    assert_int_equal(dlg_cpuset_add(cpus, 1), 0);
    assert_int_equal(dlg_cpuset_add(cpus, 3), 0);
}

static void test_fake_proc(void **state)
{
    rt_dir *d = *state;
    dlg_cpuset cpus;
    cell_cpus(&cpus);
    assert_int_equal(dlg_cpuset_add(&cpus, 400), 0); /* not the "cpu  400 ..." all-CPUs line */
    /* 10 persists; 12 ends in the window; 11 starts in it; 13's id is
     * reused by a new thread (its counters went back) */
    const char *t0[][2] = {{"10", "1000 500 7\n"}, {"12", "9000 9000 1\n"}, {"13", "5000 5000 1\n"}, {NULL, NULL}};
    const char *t1[][2] = {{"10", "4000 1500 9\n"}, {"11", "600 400 2\n"}, {"13", "100 300 1\n"}, {NULL, NULL}};
    dlg_sched_snap a, b;
    take(d, "p1", t0, stat0, &cpus, &a);
    take(d, "p2", t1, stat1, &cpus, &b);
    assert_true(a.have_threads && b.have_threads && a.have_steal && b.have_steal);
    dlg_sched_totals t = {0};
    dlg_sched_add(&t, &a, &b);
    assert_int_equal(t.oncpu_ns, 3000 + 600 + 100);
    assert_int_equal(t.delay_ns, 1000 + 400 + 300);
    assert_true(dlg_sched_wait_share(&t) > 1700.0 / 5400 - 1e-12 && dlg_sched_wait_share(&t) < 1700.0 / 5400 + 1e-12);
    assert_int_equal(t.ticks, 200);
    assert_int_equal(t.steal, 80);
    assert_true(dlg_sched_steal_share(&t) == 0.4);
    assert_false(t.have_other); /* no self/stat: the process's own time unknown */
    assert_true(dlg_sched_other_share(&t) < 0);
    /* a second window adds up */
    dlg_sched_add(&t, &a, &b);
    assert_true(dlg_sched_steal_share(&t) == 0.4);
    dlg_sched_snap_free(&a);
    dlg_sched_snap_free(&b);

    /* no tick passed: no steal share; no thread ran: no wait share */
    dlg_sched_totals none = {0};
    take(d, "p3", t0, stat0, &cpus, &a);
    take(d, "p4", t0, stat0, &cpus, &b);
    dlg_sched_add(&none, &a, &b);
    assert_true(dlg_sched_steal_share(&none) < 0);
    assert_true(dlg_sched_wait_share(&none) < 0);
    dlg_sched_snap_free(&a);
    dlg_sched_snap_free(&b);

    /* a kernel without the steal column (before 2.6.11), no schedstat */
    const char *no_tasks[][2] = {{NULL, NULL}};
    take(d, "p5", no_tasks, "cpu  1 2 3 4 5 6 7\ncpu1 1 2 3 4 5 6 7\ncpu3 1 2 3 4 5 6 7\n", &cpus, &a);
    take(d, "p6", no_tasks, "cpu  9 2 3 4 5 6 7\ncpu1 9 2 3 4 5 6 7\ncpu3 1 2 3 4 5 6 7\n", &cpus, &b);
    assert_false(a.have_steal || a.have_threads);
    dlg_sched_totals old = {0};
    dlg_sched_add(&old, &a, &b);
    assert_true(dlg_sched_steal_share(&old) < 0 && dlg_sched_wait_share(&old) < 0);
    dlg_sched_snap_free(&a);
    dlg_sched_snap_free(&b);
    dlg_cpuset_fini(&cpus);
}

/* The CPUs' busy ticks less the process's own CPU time, over the cell's
 * CPUs (1 and 3) only. */
static const char *const busy0 =
    "cpu  900 10 200 3000 5 2 3 0 7 0\n"
    "cpu0 500 0 50 1500 0 0 0 0 0 0\n"
    "cpu1 100 10 50 1000 5 2 3 0 7 0\n"
    "cpu3 200 0 100 500 0 0 0 0 0 0\n";
/* cpu1: +100 ticks: user 60 (50 of them guest, already in user), system
 * 10, irq 1, softirq 1 busy; idle 20, iowait 5, steal 3 not.  cpu3: +100,
 * user 30.  cpu0 (not the cell's) fully busy, which must not count. */
static const char *const busy1 =
    "cpu  1160 10 260 3090 10 3 4 3 57 0\n"
    "cpu0 600 0 50 1500 0 0 0 0 0 0\n"
    "cpu1 160 10 60 1020 10 3 4 3 57 0\n"
    "cpu3 230 0 100 570 0 0 0 0 0 0\n";

static void take_with_self(rt_dir *d, const char *root, const char *stat, const char *self, const dlg_cpuset *cpus,
                           dlg_sched_snap *s)
{
    char path[512], name[128];
    snprintf(name, sizeof name, "%s/self/stat", root);
    rt_write(d, name, self, path, sizeof path);
    const char *tasks[][2] = {{"10", "1000 500 7\n"}, {NULL, NULL}};
    take(d, root, tasks, stat, cpus, s);
}

static void test_other_share(void **state)
{
    rt_dir *d = *state;
    dlg_cpuset cpus;
    cell_cpus(&cpus);
    /* a name with ") " in it; utime stime cutime cstime 40 10 0 0, then
     * 62 16 2 0: 30 ticks of its own */
    dlg_sched_snap a, b;
    take_with_self(d, "o1", busy0, "4242 (x) y (z) R 1 2 3 4 5 6 7 8 9 10 40 10 0 0 20 0 3 0 99\n", &cpus, &a);
    take_with_self(d, "o2", busy1, "4242 (x) y (z) R 1 2 3 4 5 6 7 8 9 10 62 16 2 0 20 0 3 0 99\n", &cpus, &b);
    assert_true(a.have_busy && a.have_own && b.have_busy && b.have_own);
    assert_int_equal(a.ncpus, 2);
    dlg_sched_totals t = {0};
    dlg_sched_add(&t, &a, &b);
    assert_int_equal(t.busy, 102);
    assert_int_equal(t.own, 30);
    assert_int_equal(t.span, 200);
    /* (102 - 30) / 200 */
    assert_true(dlg_sched_other_share(&t) > 0.36 - 1e-12 && dlg_sched_other_share(&t) < 0.36 + 1e-12);
    /* the same process reading again over another window adds up */
    dlg_sched_add(&t, &a, &b);
    assert_true(dlg_sched_other_share(&t) > 0.36 - 1e-12 && dlg_sched_other_share(&t) < 0.36 + 1e-12);
    dlg_sched_snap_free(&a);
    dlg_sched_snap_free(&b);

    /* an unreadable self/stat (cut short): not measured */
    take_with_self(d, "o3", busy0, "4242 (x) R 1 2\n", &cpus, &a);
    take_with_self(d, "o4", busy1, "4242 (x) R 1 2 3 4 5 6 7 8 9 10 62 16 2 0 20 0 3 0 99\n", &cpus, &b);
    assert_false(a.have_own);
    dlg_sched_totals none = {0};
    dlg_sched_add(&none, &a, &b);
    assert_true(dlg_sched_other_share(&none) < 0);
    dlg_sched_snap_free(&a);
    dlg_sched_snap_free(&b);
    dlg_cpuset_fini(&cpus);

    /* under 50 ticks per CPU: a tick's cut at each end is too much */
    dlg_sched_totals s = {.have_other = true, .ncpus = 2, .busy = 60, .own = 10, .span = 99};
    assert_true(dlg_sched_other_share(&s) < 0);
    s.span = 100;
    assert_true(dlg_sched_other_share(&s) == 0.5);
    /* its own threads on CPUs outside the set: never below 0 */
    s.own = 80;
    assert_true(dlg_sched_other_share(&s) == 0);
}

/* A reading's threads are in tid order whatever the directory's, and two
 * readings of many threads match in one pass: persisting, ended and new
 * threads each count as they should. */
static void test_many_threads(void **state)
{
    rt_dir *d = *state;
    const char *tasks[41][2];
    char names[40][16];
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "%d", 1000 + (i * 17) % 40); /* not in order */
        tasks[i][0] = names[i];
        tasks[i][1] = "5 5 1\n";
    }
    tasks[40][0] = tasks[40][1] = NULL;
    dlg_sched_snap s;
    take(d, "m1", tasks, "cpu0 1 2 3 4 5 6 7 8\n", NULL, &s);
    assert_int_equal(s.nthreads, 40);
    for (size_t i = 0; i < s.nthreads; i++)
        assert_int_equal(s.threads[i].tid, 1000 + (pid_t)i);
    dlg_sched_snap_free(&s);

    /* a: tids 0, 2, 4, ...; b: 3n/2 of them on, every third of a's ended,
     * the odd ones new: 200000 threads a side */
    enum { N = 200000 };
    dlg_sched_snap a = {.have_threads = true, .nthreads = N}, b = {.have_threads = true};
    a.threads = calloc(N, sizeof *a.threads);
    b.threads = calloc(N, sizeof *b.threads);
    assert_non_null(a.threads);
    assert_non_null(b.threads);
    uint64_t oncpu = 0;
    for (size_t i = 0; i < N; i++)
        a.threads[i] = (dlg_sched_thread){.tid = (pid_t)(2 * i), .oncpu_ns = 10, .delay_ns = 1};
    for (pid_t tid = 0; b.nthreads < N; tid++) {
        bool was = tid % 2 == 0 && (size_t)tid / 2 < N;
        if (was && tid % 3 == 0)
            continue; /* ended */
        b.threads[b.nthreads++] = (dlg_sched_thread){.tid = tid, .oncpu_ns = 15, .delay_ns = 3};
        oncpu += was ? 5 : 15;
    }
    dlg_sched_totals t = {0};
    dlg_sched_add(&t, &a, &b);
    assert_int_equal(t.oncpu_ns, oncpu);
    free(a.threads);
    free(b.threads);
}

/* A cell of busy steps, pinned to one CPU, with `hogs` busy processes on
 * that CPU: its cpu_wait_share, and its cpu_other_share into *other. */
static double wait_share(rt_dir *d, int hogs, double *other)
{
    char ini[512], text[512];
    /* 60 ticks: cpu_other_share needs 50 */
    snprintf(text, sizeof text,
             "[job w]\nplugin = %s/testwl.so\nworkload = count\ncpus = 1\nwarmup = 0\nduration = 600ms\n",
             DLG_TEST_PLUGIN_DIR);
    rt_write(d, "wait.ini", text, ini, sizeof ini);
    pid_t pids[8];
    for (int i = 0; i < hogs; i++) {
        if ((pids[i] = fork()) == 0) {
            alarm(20); /* never outlives a test that failed before its kill */
            for (volatile unsigned long n = 0;; n++) {
            }
        }
        assert_true(pids[i] > 0);
    }
    rt_cell c;
    rt_cell_run(&c, ini);
    for (int i = 0; i < hogs; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
    assert_string_equal(c.res.status, "ok");
    double share = rt_cell_double(&c, "cpu_wait_share");
    double steal = rt_cell_double(&c, "cpu_steal_share"); /* 60 ticks passed on the CPU */
    assert_true(steal >= 0 && steal <= 1);
    *other = rt_cell_double(&c, "cpu_other_share");
    assert_true(*other >= 0 && *other <= 1);
    rt_cell_done(&c);
    return share;
}

static void test_contended_cell(void **state)
{
    /* the test's own CPU, which the cell and the busy processes inherit */
    dlg_cpuset saved, one;
    assert_int_equal(dlg_cpuset_init(&saved, 0), 0);
    assert_int_equal(dlg_cpuset_init(&one, 0), 0);
    assert_int_equal(dlg_cpuset_get_affinity(&saved), 0);
    int cpu = 0;
    while (!dlg_cpuset_has(&saved, cpu))
        cpu++;
    assert_int_equal(dlg_cpuset_add(&one, cpu), 0);
    assert_int_equal(dlg_cpuset_set_affinity(&one), 0);
    double other_alone, other_shared;
    double alone = wait_share(*state, 0, &other_alone), shared = wait_share(*state, 3, &other_shared);
    dlg_cpuset_set_affinity(&saved);
    print_message("cpu_wait_share on CPU %d: alone %.3f, with 3 busy processes %.3f; cpu_other_share %.3f, %.3f\n",
                  cpu, alone, shared, other_alone, other_shared);
    /* 3 busy processes pinned beside it: it gets at most about 1/4 of the
     * CPU, so it waits about 3/4 of its runnable time or more (whatever
     * else the machine runs there only adds to it) */
    assert_true(shared > 0.65);
    /* The cell's steps are always runnable, so the time it waited is the
     * time others ran on its CPU: schedstat's run delay and /proc/stat's
     * ticks, two independent counters, agree in both runs (0.022 apart at most
     * here, idle or under ctest -j4).  This holds however loaded the
     * machine is; comparing the run alone with the shared one did not:
     * under ctest -j4 on 2 cores the run alone already waited 0.79 of
     * its time, and the scheduler moved other tests' work off the CPU
     * the 3 busy processes took, so the shared run waited little more */
    assert_true(fabs(alone - other_alone) < 0.1);
    assert_true(fabs(shared - other_shared) < 0.1);
    dlg_cpuset_fini(&saved);
    dlg_cpuset_fini(&one);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fake_proc, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_other_share, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_many_threads, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(test_contended_cell, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
