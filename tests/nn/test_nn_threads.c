/* The cpu backend's OpenMP team is the plan's threads, from the plan on:
 * oneDNN (OpenMP runtime) splits a primitive's work by
 * omp_get_max_threads() when it is made, so a net planned with threads = 1
 * under a larger default (OMP_NUM_THREADS=4 here, as libgomp's default is
 * every CPU of an unpinned process) must start no OpenMP thread when it
 * runs: an in-process cell with cpus = 1 once ran 2 threads on its 1 CPU.
 * The process's threads are counted in /proc/self/task. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"
#include "omp_team.h"

#include <dirent.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ids/y: valid ids; h0/c0: N(0, 1) */
static void lm_inputs(dlg_net *net, int n, int vocab)
{
    float *v = malloc((size_t)n * sizeof *v);
    assert_non_null(v);
    for (int i = 0; i < n; i++)
        v[i] = (float)((i * 5 + 1) % vocab);
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "ids"), DLG_DATA, v, (size_t)n), 0);
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "y"), DLG_DATA, v, (size_t)n), 0);
    free(v);
    assert_int_equal(tu_fill_blob(net, dlg_net_blob(net, "h0"), FILL_GAUSS, 3), 0);
    assert_int_equal(tu_fill_blob(net, dlg_net_blob(net, "c0"), FILL_GAUSS, 4), 0);
}

/* lstm-ptb's model (tu_lstm_lm's layers), planned on cpu with `threads`,
 * two training steps; the process's new threads meanwhile. */
static int lm_new_threads(int threads, int *team_at_plan)
{
    int before = task_count();
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "lm"), 0);
    tu_lstm_lm_layers(net, 10, 4, 200, 32, false);
    dlg_plan_opts po = {.backend = "cpu", .threads = threads, .train = true, .seed = 5};
    assert_int_equal(dlg_net_plan(net, &po), 0);
    *team_at_plan = omp_get_max_threads();
    lm_inputs(net, 10 * 4, 200);
    dlg_sgd sgd = {.lr = 0.01f};
    for (int i = 0; i < 2; i++)
        assert_int_equal(dlg_net_train_step(net, &sgd), 0);
    int after = task_count();
    dlg_net_destroy(net);
    return after - before;
}

/* A small conv net (oneDNN's convolution, pooling, inner product). */
static int conv_new_threads(int threads, int *team_at_plan)
{
    int before = task_count();
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "cnn"), 0);
    int x = dlg_input(net, "data", 4, 8, 16, 16);
    int y = dlg_labels(net, "y", 4);
    int c = dlg_relu(net, "relu", dlg_conv(net, "conv", x, 16, 3, 1, 1, 1));
    int p = dlg_max_pool(net, "pool", c, 2, 2, 0);
    dlg_softmax_loss(net, "loss", dlg_fc(net, "fc", p, 10), y);
    assert_int_equal(dlg_net_status(net), 0);
    dlg_plan_opts po = {.backend = "cpu", .threads = threads, .train = true, .seed = 1};
    assert_int_equal(dlg_net_plan(net, &po), 0);
    *team_at_plan = omp_get_max_threads();
    assert_int_equal(tu_fill_blob(net, x, FILL_GAUSS, 2), 0);
    float labels[4] = {1, 3, 5, 7};
    assert_int_equal(dlg_net_write(net, y, DLG_DATA, labels, 4), 0);
    dlg_sgd sgd = {.lr = 0.01f};
    for (int i = 0; i < 2; i++)
        assert_int_equal(dlg_net_train_step(net, &sgd), 0);
    int after = task_count();
    dlg_net_destroy(net);
    return after - before;
}

/* First in the process: no OpenMP pool exists yet, so one would show. */
static void test_one_thread_starts_none(void **st)
{
    (void)st;
    int team = 0;
    assert_int_equal(lm_new_threads(1, &team), 0);
    assert_int_equal(team, 1);
    assert_int_equal(conv_new_threads(1, &team), 0);
    assert_int_equal(team, 1);
}

/* The count sees OpenMP's threads: threads = 3 starts 2 workers (a pool
 * that stays), whichever of the nets runs first. */
static void test_three_threads_start_two(void **st)
{
    (void)st;
    int team = 0;
    int lm = lm_new_threads(3, &team);
    assert_int_equal(team, 3);
    int cnn = conv_new_threads(3, &team);
    assert_int_equal(team, 3);
    assert_int_equal(lm + cnn, 2);
}

int main(int argc, char **argv)
{
    if (with_default_team(argv) != 0)
        return 1;
    (void)argc;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread_starts_none),
        cmocka_unit_test(test_three_threads_start_two),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
