/* CPU package energy (RAPL through powercap) on a fake powercap tree:
 * which zones count, counters wrapping past max_energy_range_uj (exact to
 * the microjoule), the sampling thread around a measurement, unreadable
 * counters and no tree at all (no field, a reason), and the fields of a
 * cell's result row. */
#define _GNU_SOURCE
#include "cpu_energy.h"
#include "rt_cell.h"
#include "rt_util.h"
#include "ticker.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "assert_more.h"

/* dir/zone/file = value, replaced at once (as sysfs reads: never half
 * written, even while the sampling thread reads it). */
static void put(const rt_dir *d, const char *zone, const char *file, const char *value)
{
    char path[512], tmp[520], text[64];
    snprintf(text, sizeof text, "%s\n", value);
    snprintf(tmp, sizeof tmp, "%s/%s/.%s.tmp", d->path, zone, file);
    rt_write(d, tmp + strlen(d->path) + 1, text, path, sizeof path);
    snprintf(path, sizeof path, "%s/%s/%s", d->path, zone, file);
    assert_int_equal(rename(tmp, path), 0);
}

static void set_uj(const rt_dir *d, const char *zone, uint64_t uj)
{
    char v[32];
    snprintf(v, sizeof v, "%llu", (unsigned long long)uj);
    put(d, zone, "energy_uj", v);
}

static void zone(const rt_dir *d, const char *dir, const char *name, uint64_t range, uint64_t uj)
{
    char v[32];
    put(d, dir, "name", name);
    snprintf(v, sizeof v, "%llu", (unsigned long long)range);
    put(d, dir, "max_energy_range_uj", v);
    set_uj(d, dir, uj);
}

/* Two packages (package-0 with a dram subzone), as /sys/class/powercap
 * lists them (flat), and zones that must not count: core (inside the
 * package), psys (the platform: the package again) and the MMIO copy. */
static void two_packages(const rt_dir *d)
{
    zone(d, "intel-rapl:0", "package-0", 1000000, 900000);
    zone(d, "intel-rapl:0:0", "dram", 500000, 10);
    zone(d, "intel-rapl:0:1", "core", 1000000, 7);
    zone(d, "intel-rapl:1", "package-1", 262143328850ull, 5);
    zone(d, "intel-rapl:2", "psys", 262143328850ull, 11);
    zone(d, "intel-rapl-mmio:0", "package-0", 262143328850ull, 13);
}

static const dlg_rapl_zone *find(const dlg_rapl *r, const char *dir)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->z[i].dir, dir) == 0)
            return &r->z[i];
    fail_msg("zone %s not found", dir);
    return NULL;
}

static void zones_found(void **state)
{
    const rt_dir *d = *state;
    two_packages(d);
    dlg_rapl *r;
    char why[1024];
    assert_int_equal(dlg_rapl_open(&r, d->path, why, sizeof why), 0);
    assert_int_equal(r->n, 3);
    assert_string_equal(r->z[0].dir, "intel-rapl:0"); /* sorted */
    assert_string_equal(r->z[1].dir, "intel-rapl:0:0");
    assert_string_equal(r->z[2].dir, "intel-rapl:1");
    assert_false(r->z[0].dram);
    assert_true(r->z[1].dram);
    assert_string_equal(r->z[2].name, "package-1");
    assert_int_equal(r->z[1].range_uj, 500000);
    /* the smallest range, 0.5 J at 1 kW, is sampled at the 10 ms floor */
    assert_int_equal(dlg_rapl_period_ms(r), 10);
    free(r);
}

/* Each counter wraps once between two samples: what it advanced is
 * range - last + now, to the microjoule. */
static void wraps_exact(void **state)
{
    const rt_dir *d = *state;
    two_packages(d);
    dlg_rapl *r;
    char why[1024];
    assert_int_equal(dlg_rapl_open(&r, d->path, why, sizeof why), 0);
    set_uj(d, "intel-rapl:0", 999000);
    set_uj(d, "intel-rapl:0:0", 400000);
    set_uj(d, "intel-rapl:1", 1000005);
    dlg_rapl_sample(r);
    set_uj(d, "intel-rapl:0", 500);      /* wrapped: 1000 + 500 */
    set_uj(d, "intel-rapl:0:0", 20);     /* wrapped: 100000 + 20 */
    set_uj(d, "intel-rapl:1", 3000005);
    set_uj(d, "intel-rapl:0:1", 999999); /* core: not counted */
    dlg_rapl_sample(r);
    assert_int_equal(find(r, "intel-rapl:0")->total_uj, 99000 + 1500);
    assert_int_equal(find(r, "intel-rapl:0:0")->total_uj, 399990 + 100020);
    assert_int_equal(find(r, "intel-rapl:1")->total_uj, 3000000);
    dlg_cpu_energy acc = {0};
    dlg_rapl_end(r, &acc); /* no thread was started: samples once more */
    assert_true(acc.have);
    assert_true(acc.have_dram);
    assert_near(acc.pkg_j, 3.1005, 1e-12);
    assert_near(acc.dram_j, 0.50001, 1e-12);
    free(r);
}

/* begin/end around two repetitions, with the sampling thread running:
 * the second repetition's wrap and the first's energy add up; what moved
 * between the repetitions does not count. */
static void measured_per_repetition(void **state)
{
    const rt_dir *d = *state;
    two_packages(d);
    dlg_rapl *r;
    char why[1024];
    assert_int_equal(dlg_rapl_open(&r, d->path, why, sizeof why), 0);
    dlg_cpu_energy acc = {0};
    dlg_rapl_begin(r);
    set_uj(d, "intel-rapl:0", 950000);
    set_uj(d, "intel-rapl:1", 2000005);
    usleep(30000); /* a few ticks of the thread (10 ms) */
    dlg_rapl_end(r, &acc);
    set_uj(d, "intel-rapl:0", 990000); /* between repetitions: not counted */
    dlg_rapl_begin(r);
    set_uj(d, "intel-rapl:0", 100); /* one wrap: 10000 + 100 */
    dlg_rapl_end(r, &acc);
    assert_near(acc.pkg_j, (50000 + 2000000 + 10100) / 1e6, 1e-12);
    assert_near(acc.dram_j, 0, 0);
    assert_true(acc.seconds >= 0.025);
    free(r);
}

/* Waits (2 s at most) until the sampling thread has read uj from zone z:
 * a measurement's samples between begin and end are its own. */
static bool thread_saw(const dlg_rapl_zone *z, uint64_t uj)
{
    for (int i = 0; i < 400; i++) {
        if (__atomic_load_n(&z->last_uj, __ATOMIC_ACQUIRE) == uj)
            return true;
        usleep(5000);
    }
    return false;
}

/* A counter that wraps twice within one measurement is only counted by
 * the sampling thread: begin and end alone see 900000 -> 960000 (60 mJ),
 * where it advanced 50000 + 50100 + 959900 uJ.  (The repetition test above
 * passes without the thread.) */
static void wraps_twice_need_thread(void **state)
{
    const rt_dir *d = *state;
    two_packages(d);
    dlg_rapl *r;
    char why[1024];
    assert_int_equal(dlg_rapl_open(&r, d->path, why, sizeof why), 0);
    const dlg_rapl_zone *z = find(r, "intel-rapl:0");
    dlg_cpu_energy acc = {0};
    dlg_rapl_begin(r);
    set_uj(d, "intel-rapl:0", 950000);
    assert_true(thread_saw(z, 950000));
    set_uj(d, "intel-rapl:0", 100); /* wrapped */
    assert_true(thread_saw(z, 100));
    set_uj(d, "intel-rapl:0", 960000);
    dlg_rapl_end(r, &acc);
    assert_int_equal(z->total_uj, 50000 + 50100 + 959900);
    free(r);
}

/* A counter that cannot be read gives no energy and says which and why;
 * the zones are still listed (sysinfo shows them). */
static void unreadable_counter(void **state)
{
    const rt_dir *d = *state;
    two_packages(d);
    char path[512], why[1024];
    /* works as root too: a directory where the counter should be */
    snprintf(path, sizeof path, "%s/intel-rapl:1/energy_uj", d->path);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
    dlg_rapl *r;
    assert_int_equal(dlg_rapl_open(&r, d->path, why, sizeof why), -1);
    assert_non_null(r);
    assert_int_equal(r->n, 3);
    free(r);
    char want[700];
    snprintf(want, sizeof want, "%s: Is a directory", path);
    assert_string_equal(why, want);
    assert_int_equal(rmdir(path), 0);
    set_uj(d, "intel-rapl:1", 5);
    /* root-only counters (Linux >= 5.10): root reads a mode 000 file
     * anyway, so as root the check runs in a child as nobody */
    assert_int_equal(chmod(path, 0), 0);
    snprintf(want, sizeof want, "%s: Permission denied (root only since Linux 5.10)", path);
    if (geteuid() != 0) {
        assert_int_equal(dlg_rapl_open(&r, d->path, why, sizeof why), -1);
        free(r);
        assert_string_equal(why, want);
        return;
    }
    assert_int_equal(chmod(d->path, 0755), 0); /* mkdtemp's 0700 would stop nobody earlier */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        if (access(d->path, X_OK) != 0)
            _exit(77); /* $TMPDIR under a folder nobody cannot enter */
        int rc = dlg_rapl_open(&r, d->path, why, sizeof why);
        free(r);
        if (rc != -1 || strcmp(why, want) != 0) {
            fprintf(stderr, "as nobody: rc %d, why '%s'\n", rc, why);
            _exit(1);
        }
        _exit(0);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77) {
        fprintf(stderr, "note: %s is not reachable as nobody: the mode 000 case is skipped\n", d->path);
        return;
    }
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* two_packages() opened: every counter read once. */
static dlg_rapl *open_two_packages(const rt_dir *d)
{
    two_packages(d);
    dlg_rapl *r;
    char why[1024];
    if (dlg_rapl_open(&r, d->path, why, sizeof why) != 0)
        fail_msg("%s", why);
    return r;
}

/* The zone's counter cannot be read (a directory in its place) until
 * path, set here, is removed. */
static void unreadable(const rt_dir *d, const char *zone, char *path, size_t len)
{
    snprintf(path, len, "%s/%s/energy_uj", d->path, zone);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
}

/* A counter unreadable when a measurement begins must not count from the
 * previous measurement's last reading (the energy in between is not the
 * repetition's); a counter going back with no known range loses its
 * interval too.  Either way the repetition's energy of that kind is
 * marked lost (no field), the other kind's stays. */
static void unreadable_at_begin(void **state)
{
    const rt_dir *d = *state;
    dlg_rapl *r = open_two_packages(d);
    char path[512], why[1024];
    dlg_cpu_energy acc = {0};
    dlg_rapl_begin(r);
    set_uj(d, "intel-rapl:1", 1000005);
    dlg_rapl_end(r, &acc);
    assert_false(acc.pkg_lost);
    assert_near(acc.pkg_j, 1.0, 1e-12);
    /* between repetitions the package uses 7 J; then its counter cannot
     * be read as the next repetition begins */
    set_uj(d, "intel-rapl:1", 8000005);
    unreadable(d, "intel-rapl:1", path, sizeof path);
    dlg_rapl_begin(r);
    assert_int_equal(rmdir(path), 0);
    set_uj(d, "intel-rapl:1", 8000105);
    set_uj(d, "intel-rapl:0:0", 60);
    dlg_rapl_end(r, &acc);
    assert_int_equal(find(r, "intel-rapl:1")->total_uj, 0);
    assert_true(acc.pkg_lost);
    assert_false(acc.dram_lost);
    assert_near(acc.dram_j, 50e-6, 1e-12);
    free(r);

    /* no range known, the counter goes back: that interval is lost */
    zone(d, "intel-rapl:1", "package-1", 0, 500);
    assert_int_equal(dlg_rapl_open(&r, d->path, why, sizeof why), 0);
    dlg_cpu_energy acc2 = {0};
    dlg_rapl_begin(r);
    set_uj(d, "intel-rapl:1", 100);
    dlg_rapl_end(r, &acc2);
    assert_true(acc2.pkg_lost);
    free(r);
}

/* A counter unreadable as a repetition ends: nothing later covers the
 * energy since its last reading (all of it when no tick came), so that
 * kind is lost, not summed from what was read (0 J here); the other kind
 * stays. */
static void unreadable_at_end(void **state)
{
    const rt_dir *d = *state;
    dlg_rapl *r = open_two_packages(d);
    char path[512];
    dlg_cpu_energy acc = {0};
    dlg_rapl_begin(r);
    set_uj(d, "intel-rapl:0:0", 60);
    unreadable(d, "intel-rapl:1", path, sizeof path);
    dlg_rapl_end(r, &acc);
    assert_int_equal(rmdir(path), 0);
    assert_true(acc.pkg_lost);
    assert_false(acc.dram_lost);
    assert_near(acc.dram_j, 50e-6, 1e-12);
    free(r);
}

/* No powercap tree (a VM): no zones, why; the root follows the test hook. */
static void no_tree(void **state)
{
    const rt_dir *d = *state;
    char root[512], why[1024];
    snprintf(root, sizeof root, "%s/none", d->path);
    dlg_rapl *r;
    assert_int_equal(dlg_rapl_open(&r, root, why, sizeof why), -1);
    assert_null(r);
    assert_non_null(strstr(why, "/none: No such file or directory (no RAPL here"));
    /* a tree with no package zone (only psys) is none either */
    zone(d, "intel-rapl:0", "psys", 1000, 1);
    assert_int_equal(dlg_rapl_open(&r, d->path, why, sizeof why), -1);
    assert_null(r);
    assert_non_null(strstr(why, ": no package zone (intel-rapl:N named package-N)"));
    assert_int_equal(setenv("DLG_POWERCAP_ROOT", root, 1), 0);
    assert_string_equal(dlg_powercap_root(), root);
    assert_int_equal(unsetenv("DLG_POWERCAP_ROOT"), 0);
    assert_string_equal(dlg_powercap_root(), "/sys/class/powercap");
}

static const dlg_field *row_field(const rt_cell *c, const char *key)
{
    for (size_t i = 0; i < c->row.point.nfields; i++)
        if (strcmp(c->row.point.fields[i].key, key) == 0)
            return &c->row.point.fields[i];
    return NULL;
}

/* A cell's row: the fields with a tree (counters standing still: 0 J),
 * none without one, and the cell ok either way. */
static void cell_fields(void **state)
{
    const rt_dir *d = *state;
    char ini[512], root[512], text[512];
    snprintf(text, sizeof text, "[job w]\nplugin = %s/writewl.so\nworkload = write_blocks\npath = %s/out.bin\n"
             "warmup = 0\niterations = 3\nrepeat = 2\n", DLG_TEST_WRITEWL_DIR, d->path);
    rt_write(d, "e.ini", text, ini, sizeof ini);
    snprintf(root, sizeof root, "%s/pc", d->path);
    const char *keys[] = {"cpu_energy_j", "cpu_power_avg_w", "cpu_energy_per_item_j", "dram_energy_j"};
    for (int tree = 0; tree < 2; tree++) {
        if (tree) {
            zone(d, "pc/intel-rapl:0", "package-0", 1000000, 1);
            zone(d, "pc/intel-rapl:0:0", "dram", 1000000, 1);
        }
        assert_int_equal(setenv("DLG_POWERCAP_ROOT", root, 1), 0);
        rt_cell c;
        rt_cell_run(&c, ini);
        assert_int_equal(unsetenv("DLG_POWERCAP_ROOT"), 0);
        assert_string_equal(c.res.status, "ok");
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            const dlg_field *f = row_field(&c, keys[k]);
            if (!tree) {
                assert_null(f);
                continue;
            }
            if (!f)
                fail_msg("no %s in the row", keys[k]);
            assert_int_equal(f->type, DLG_FIELD_DOUBLE);
            assert_near(f->v.d, 0, 0);
        }
        rt_cell_done(&c);
    }
}

typedef struct ticks {
    int n;         /* calls so far (read after the thread is joined) */
    bool unmasked; /* a call ran with SIGTERM deliverable */
} ticks;

static void count_tick(void *arg)
{
    ticks *t = arg;
    sigset_t cur;
    pthread_sigmask(SIG_SETMASK, NULL, &cur);
    t->unmasked |= !sigismember(&cur, SIGTERM);
    t->n++;
}

/* The sampling thread ticks on its period, takes no signal (a stop request
 * must reach the cell's threads, to interrupt their blocking calls) and
 * does not run once stopped. */
static void ticker_ticks(void **state)
{
    (void)state;
    ticks t = {0, false};
    dlg_ticker *tk;
    assert_int_equal(dlg_ticker_start(&tk, 5, count_tick, &t), 0);
    usleep(60000);
    dlg_ticker_stop(tk);
    int n = t.n;
    assert_true(n >= 2);
    assert_false(t.unmasked);
    usleep(20000);
    assert_int_equal(t.n, n);
    dlg_ticker_stop(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(zones_found, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(wraps_exact, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(measured_per_repetition, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(wraps_twice_need_thread, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(unreadable_counter, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(unreadable_at_begin, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(unreadable_at_end, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(no_tree, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(cell_fields, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test(ticker_ticks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
