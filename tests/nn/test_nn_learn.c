/* Learning: a small conv net trained with SGD on a generated 10-class
 * problem must get its loss far below ln(10) (chance) within a few hundred
 * steps, on every backend this build has. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn_testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 16, C = 2, S = 8, K = 10, STEPS = 300 };

static void train_on(const char *backend)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "learn"), 0);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_MSRA, 0}, (dlg_filler){DLG_FILL_CONSTANT, 0});
    int x = dlg_input(net, "x", B, C, S, S), y = dlg_labels(net, "y", B);
    int h = dlg_conv(net, "conv1", x, 8, 3, 1, 1, 1);
    h = dlg_batchnorm(net, "bn1", h, 1e-5f);
    h = dlg_relu(net, "relu1", h);
    h = dlg_max_pool(net, "pool1", h, 3, 2, 0);
    h = dlg_dropout(net, "drop", h, 0.1f);
    h = dlg_fc(net, "fc", h, K);
    int loss = dlg_softmax_loss(net, "loss", h, y);
    dlg_plan_opts o = {.backend = backend, .threads = 1, .train = true, .seed = 1};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));

    /* class k: a fixed random prototype image plus noise */
    float proto[K][C * S * S], img[B * C * S * S], lab[B], out[3];
    for (int k = 0; k < K; k++)
        tu_fill(proto[k], C * S * S, FILL_GAUSS, 1000 + (uint64_t)k);
    float *noise = malloc(sizeof(float) * B * C * S * S);
    dlg_sgd sgd = {0.02f, 0.9f, 5e-4f};
    double first = 0, last = 0;
    for (int step = 0; step < STEPS; step++) {
        tu_fill(noise, B * C * S * S, FILL_GAUSS, 5000 + (uint64_t)step);
        for (int i = 0; i < B; i++) {
            int k = (step * B + i * 7) % K;
            lab[i] = (float)k;
            for (int j = 0; j < C * S * S; j++)
                img[i * C * S * S + j] = proto[k][j] + 0.7f * noise[i * C * S * S + j];
        }
        assert_int_equal(dlg_net_write(net, x, DLG_DATA, img, B * C * S * S), 0);
        assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, B), 0);
        assert_int_equal(dlg_net_forward(net), 0);
        assert_int_equal(dlg_net_backward(net), 0);
        assert_int_equal(dlg_net_sgd_step(net, &sgd), 0);
        assert_int_equal(dlg_net_read(net, loss, DLG_DATA, out, 3), 0);
        if (step < 10)
            first += out[0] / 10;
        if (step >= STEPS - 20)
            last += out[0] / 20;
    }
    /* inference mode on fresh samples: top-1 near perfect */
    assert_int_equal(dlg_net_set_train(net, false), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, loss, DLG_DATA, out, 3), 0);
    printf("  %s: loss %.3f -> %.3f, test top-1 %.2f top-5 %.2f\n", backend, first, last, out[1],
           out[2]);
    assert_true(first > 1.5);
    assert_true(last < 0.3 * log(10.0));
    assert_true(out[1] >= 0.9f);
    assert_true(out[2] >= out[1]);
    free(noise);
    dlg_net_destroy(net);
}

static void test_learn_ref(void **st) { train_on("ref"); }

#ifdef DLG_NN_HAVE_DNNL
static void test_learn_cpu(void **st) { train_on("cpu"); }
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_learn_ref),
#ifdef DLG_NN_HAVE_DNNL
        cmocka_unit_test(test_learn_cpu),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
