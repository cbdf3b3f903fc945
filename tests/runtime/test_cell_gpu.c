/* The GPU whose NVML stats a cell records (cell_gpu.c): the one the
 * workload takes, one per rank of the node for auto and a bare cuda. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cell_gpu.h"

static void test_auto_and_cuda_by_local_rank(void **state)
{
    (void)state;
    static const char *const anyone[] = {"auto", "cuda"};
    for (int a = 0; a < 2; a++)
        for (int ngpus = 1; ngpus <= 3; ngpus++)
            for (int lr = 0; lr < 4; lr++)
                assert_int_equal(dlg_gpu_of_device(anyone[a], lr, ngpus), lr % ngpus);
    /* rank 1 of its node on an 8-GPU machine, as under mpirun -np 8 */
    assert_int_equal(dlg_gpu_of_device("auto", 1, 8), 1);
    assert_int_equal(dlg_gpu_of_device("cuda", 7, 8), 7);
    assert_int_equal(dlg_gpu_of_device("auto", -1, 2), 0); /* no local rank said */
}

static void test_named_and_none(void **state)
{
    (void)state;
    /* cuda:N is N, whatever the rank, when NVML has it */
    assert_int_equal(dlg_gpu_of_device("cuda:1", 0, 2), 1);
    assert_int_equal(dlg_gpu_of_device("cuda:0", 3, 2), 0);
    assert_int_equal(dlg_gpu_of_device("cuda:2", 0, 2), -1);
    /* no GPU, the CPU, or what no workload accepts: no stats */
    assert_int_equal(dlg_gpu_of_device("auto", 0, 0), -1);
    assert_int_equal(dlg_gpu_of_device("cuda", 1, 0), -1);
    assert_int_equal(dlg_gpu_of_device("cpu", 0, 2), -1);
    assert_int_equal(dlg_gpu_of_device("cuda:1x", 0, 2), -1);
    assert_int_equal(dlg_gpu_of_device("cuda:", 0, 2), -1);
    assert_int_equal(dlg_gpu_of_device(NULL, 0, 2), -1);
    /* no driver: nothing asked of the cell */
    assert_int_equal(dlg_cell_gpu(NULL, NULL, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_and_cuda_by_local_rank),
        cmocka_unit_test(test_named_and_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
