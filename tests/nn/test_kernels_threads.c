/* The conv kernel workload (kernels.so) runs its oneDNN convolution with
 * the job's cpus as the OpenMP team: the primitive, made in setup, splits
 * its work by the team size of that moment, so setup sets it, not only
 * each step.  Under OMP_NUM_THREADS=4 (libgomp's default team; the test
 * starts itself again with it) a job of 2 cpus (workload_run.c's) must
 * start 1 OpenMP thread, not 3.  Threads counted in /proc/self/task. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workload_run.h"
#include "omp_team.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_direct_conv_team_is_cpus(void **st)
{
    (void)st;
    int before = task_count();
    const char *ov[] = {"n=2", "c=16", "k=32", "h=28", "w=28", "algo=direct", "pass=fwd", NULL};
    wr_result r;
    wr_run("kernels.so", "conv", ov, 3, &r);
    if (r.setup_rc || r.step_rc)
        fail_msg("setup %d step %d: %s", r.setup_rc, r.step_rc, r.error);
    assert_int_equal(r.steps_done, 3);
    /* OpenMP's pool stays after the run: the team of 2 is this thread and one more */
    assert_int_equal(task_count() - before, 1);
}

int main(int argc, char **argv)
{
    if (with_default_team(argv) != 0)
        return 1;
    (void)argc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_direct_conv_team_is_cpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
