/* Ranks that mpirun did not bind share one CPU set; each takes its own
 * slice of it (affinity.h, cpu_share.h): which ranks share (same node,
 * same set), the slices' CPUs (successive, wrapping past the last whole
 * one), and the warning where they cannot be disjoint.  CPU ids past this
 * machine's (no sysfs topology) are ordered by id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "affinity.h"
#include "cpu_share.h"

#include <string.h>

/* rows of (node, one mask chunk): ranks 0, 1 and 4 on node 0 with CPUs
 * 0-1, rank 2 on node 0 with CPU 2, rank 3 on node 1 with CPUs 0-1, rank
 * 5's set not known */
static const double rows[] = {0, 3, 0, 3, 0, 4, 1, 3, 0, 3, 0, 0};

static void share_found(void **st)
{
    (void)st;
    static const dlg_cpu_share want[] = {{0, 3}, {1, 3}, {0, 1}, {0, 1}, {2, 3}, {0, 1}};
    for (size_t me = 0; me < 6; me++) {
        dlg_cpu_share s = dlg_cpu_share_find(rows, 6, 1, me);
        assert_int_equal(s.index, want[me].index);
        assert_int_equal(s.count, want[me].count);
    }
}

/* slot share.index of `cpus` out of CPUs 4000-4007, as a list */
static void slice(const char *cpus, int index, int count, const char *want)
{
    dlg_cpuset allowed, out;
    char why[256], list[64];
    assert_int_equal(dlg_cpuset_init(&allowed, 0), 0);
    assert_int_equal(dlg_cpuset_init(&out, 0), 0);
    assert_int_equal(dlg_cpuset_parse_list("4000-4007", &allowed), 8);
    int n = dlg_cpus_slice(cpus, &allowed, (dlg_cpu_share){index, count}, &out, why, sizeof why);
    if (n < 0)
        fail_msg("cpus = %s, slot %d of %d: %s", cpus, index, count, why);
    dlg_cpuset_format(&out, list, sizeof list);
    if (strcmp(list, want) != 0)
        fail_msg("cpus = %s, slot %d of %d: %s, expected %s", cpus, index, count, list, want);
    assert_int_equal(n, dlg_cpuset_count(&out));
    dlg_cpuset_fini(&allowed);
    dlg_cpuset_fini(&out);
}

static void slices_taken(void **st)
{
    (void)st;
    slice("2", 0, 1, "4000-4001"); /* alone: the first */
    slice("2", 0, 4, "4000-4001");
    slice("2", 1, 4, "4002-4003");
    slice("2", 3, 4, "4006-4007");
    slice("2", 4, 5, "4000-4001"); /* a fifth wraps to the first */
    slice("3", 1, 2, "4003-4005");
    slice("0", 1, 3, "4002-4003"); /* cpus = 0: an even part, 8 / 3 */
    slice("0", 0, 1, "4000-4007");
    slice("0", 9, 10, "4001");     /* 10 ranks on 8 CPUs: one each, wrapped */
    slice("4001-4002", 1, 2, "4001-4002"); /* a range as given */
}

static void overlap_said(void **st)
{
    (void)st;
    char warn[512] = "";
    assert_false(dlg_cpus_slices_overlap("1", 2, (dlg_cpu_share){0, 2}, warn, sizeof warn));
    assert_false(dlg_cpus_slices_overlap("2", 2, (dlg_cpu_share){0, 1}, warn, sizeof warn));
    assert_false(dlg_cpus_slices_overlap("0", 8, (dlg_cpu_share){0, 3}, warn, sizeof warn));
    assert_false(dlg_cpus_slices_overlap("9", 8, (dlg_cpu_share){0, 2}, warn, sizeof warn)); /* its own error */
    assert_true(dlg_cpus_slices_overlap("1", 2, (dlg_cpu_share){0, 3}, warn, sizeof warn));
    assert_string_equal(warn, "3 ranks on this node share its 2 CPUs (mpirun did not bind them): 3 x 1 CPU do not "
                              "fit, so ranks share CPUs and each one's figures are not those of 1 CPU of its own; "
                              "bind the ranks (mpirun --bind-to core) or run fewer, or lower cpus");
    assert_true(dlg_cpus_slices_overlap("0", 2, (dlg_cpu_share){1, 3}, warn, sizeof warn));
    assert_true(dlg_cpus_slices_overlap("0-1", 8, (dlg_cpu_share){0, 2}, warn, sizeof warn));
    assert_string_equal(warn, "the 2 ranks on this node that mpirun did not bind all run on cpus = 0-1, the same CPUs");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(share_found),
        cmocka_unit_test(slices_taken),
        cmocka_unit_test(overlap_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
