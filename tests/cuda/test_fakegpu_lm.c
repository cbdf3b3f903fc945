/* The lstm-ptb workload (plugins/workloads/mxnet/lm.c) on cuda:0 through
 * the mock host, on the CPU stand-in GPU (fakegpu's cuda.so): host waits
 * per training step, counted by the fake runtime, and its figures against
 * ref.  The one wait a step keeps is dlg_net_timer_end's: the runner's
 * step time on the device clock (it also means the step's pinned inputs
 * may be refilled and its loss, copied behind it, has landed).  Before,
 * every step also read hT/cT and wrote h0/c0 through the host, wrote ids
 * and targets synchronously and read the loss back (16 waits a step at 2
 * layers), and ran backward, clipping and SGD outside the captured graph. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fakegpu_waits.h"

#include "workload_run.h"

/* train lstm-ptb for `steps` steps; the host waits it took */
static uint64_t run(const char *device, const char *graphs, int steps, wr_result *r)
{
    const char *o[] = {"data=synthetic:3000", "vocab=40", "hidden=8", "layers=2", "batch=3",
                       "bptt=5", "dropout=0", "lr=1", device, graphs, "deterministic=true",
                       NULL};
    uint64_t w0 = fakegpu_waits_now();
    wr_run("mxnet.so", "lstm-ptb", o, steps, r);
    if (r->setup_rc || r->step_rc)
        fail_msg("lstm-ptb %s %s: %s", device, graphs, r->error);
    assert_int_equal(r->steps_done, steps);
    return fakegpu_waits_now() - w0;
}

/* Host waits per step, and the captured whole step training as ref does
 * (graphs on against eager: test_fakegpu_step). */
static void test_lm_waits_and_ref(void **st)
{
    (void)st;
    wr_result a, g, ref;
    /* the same setup, report and teardown: the difference is 3 replayed steps */
    uint64_t wa = run("device=cuda:0", "graphs=true", 4, &a);
    uint64_t wg = run("device=cuda:0", "graphs=true", 7, &g);
    double per_step = (double)(wg - wa) / 3.0;
    printf("  lstm-ptb on cuda:0 (fakegpu): %llu host waits for 4 steps, %llu for 7: %.2f a "
           "step\n",
           (unsigned long long)wa, (unsigned long long)wg, per_step);
    assert_true(wg >= wa);
    assert_true(per_step == 1.0); /* dlg_net_timer_end only */
    run("device=cpu", "backend=ref", 7, &ref);
    static const char *const keys[] = {"loss", "last_loss", "grad_norm", "clipped_pct"};
    for (int i = 0; i < 4; i++) {
        double vg = wr_double(&g, keys[i]), vr = wr_double(&ref, keys[i]);
        printf("  %-11s cuda:0 %.9g ref %.9g\n", keys[i], vg, vr);
        assert_true(fabs(vg - vr) <= 1e-4 * fabs(vr) + 1e-6);
    }
    assert_true(wr_double(&ref, "clipped_pct") > 0); /* clipping took part */
    assert_int_equal(wr_int(&g, "loss_tokens"), wr_int(&ref, "loss_tokens"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lm_waits_and_ref),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
