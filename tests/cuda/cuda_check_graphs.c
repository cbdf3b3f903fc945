/* cuda_check's CUDA-graph case: a small net (conv, batch norm, ReLU, max
 * pooling, dropout, fc, softmax loss) trained STEPS steps eagerly (graphs = false),
 * then the same net from the same seed on the same inputs with graphs
 * (2 eager warm-up steps, a capture, replays, a re-capture when lr drops
 * at step LR_STEP).  Inputs and labels change every step (dlg_net_write).
 *
 * Losses and all parameters must agree bitwise: both runs use the same
 * convolution algorithms (the eager run's algo_cache file, read by the
 * graph run) and deterministic ones, and a replay launches exactly the
 * kernels the eager step did, so any difference is a replay bug (a stale
 * argument, a missed input copy, a dropout mask drawn again from the
 * captured step instead of the device step counter), not rounding.  The half-precision
 * backends reduce conv bias gradients with atomics (order varies), so
 * there the bound is a relative 1e-4 instead.  The graph run must have
 * captured and replayed (dlg_net_step_stats), and its device timer must
 * give plausible step times: non-zero, no longer than the host saw. */
#include "cuda_check_graphs.h"
#include "cuda_check_net.h"

#include <dlgauge/nn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEPS 8
#define LR_STEP 5
#define NB 8

typedef struct run {
    float loss[STEPS];
    float *params; /* every param, concatenated */
    size_t nparams;
    uint64_t dev_ns[STEPS], host_ns[STEPS];
    dlg_step_stats st;
} run;

static uint64_t host_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int train(const char *backend, dlg_graphs graphs, const char *cache, run *r)
{
    dlg_net *n;
    int x, y, fails = 0;
    dlg_net_create(&n, "graphs");
    int loss = cc_small_net(n, NB, true, &x, &y);
    dlg_plan_opts o = {.backend = backend, .train = true, .seed = 5, .algo_cache = cache,
                       .deterministic = true, .graphs = graphs};
    if (loss < 0 || dlg_net_plan(n, &o) < 0) {
        printf("  %-16s FAIL plan: %s\n", "graphs", dlg_net_error(n));
        dlg_net_destroy(n);
        return 1;
    }
    float xs[NB * 3 * 16 * 16], ys[NB];
    uint64_t rng = 12345;
    dlg_sgd sgd = {0.05f, 0.9f, 5e-4f};
    for (int s = 0; s < STEPS && !fails; s++) {
        for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            xs[i] = (float)((double)(rng >> 11) / 9007199254740992.0 * 4.0 - 2.0);
        }
        for (int i = 0; i < NB; i++)
            ys[i] = (float)((s * 3 + i) % 10);
        if (s == LR_STEP)
            sgd.lr *= 0.1f; /* a step schedule: one re-capture */
        uint64_t t0 = host_ns();
        int rc = dlg_net_timer_begin(n);
        if (!rc)
            rc = dlg_net_write(n, x, DLG_DATA, xs, sizeof xs / sizeof xs[0]);
        if (!rc)
            rc = dlg_net_write(n, y, DLG_DATA, ys, NB);
        if (!rc)
            rc = dlg_net_train_step(n, &sgd);
        if (!rc)
            rc = dlg_net_timer_end(n, &r->dev_ns[s]);
        r->host_ns[s] = host_ns() - t0;
        float res[3] = {0, 0, 0};
        if (!rc)
            rc = dlg_net_read(n, loss, DLG_DATA, res, 3);
        if (rc < 0) {
            printf("  %-16s FAIL step %d: %s\n", "graphs", s, dlg_net_error(n));
            fails++;
        }
        r->loss[s] = res[0];
    }
    if (!fails && !(r->params = cc_read_params(n, &r->nparams))) {
        printf("  %-16s FAIL reading params: %s\n", "graphs", dlg_net_error(n));
        fails++;
    }
    dlg_net_step_stats(n, &r->st);
    dlg_net_destroy(n); /* writes the algorithm cache */
    return fails;
}

int check_graphs(const char *backend)
{
    char cache[96];
    snprintf(cache, sizeof cache, "/tmp/dlg_cuda_check_graphs_%d.cache", (int)getpid());
    unlink(cache);
    run e = {0}, g = {0};
    int fails = train(backend, DLG_GRAPHS_OFF, cache, &e);
    if (!fails)
        fails = train(backend, DLG_GRAPHS_ON, cache, &g);
    unlink(cache);
    double tol = strstr(backend, "bf16") || strstr(backend, "fp16") ? 1e-4 : 0, dl = 0, dp = 0;
    if (fails)
        goto out;
    for (int s = 0; s < STEPS; s++)
        if ((dl = fmax(dl, cc_rel_diff(&g.loss[s], &e.loss[s], 1))) > tol) {
            printf("    step %d loss eager %.9g graphs %.9g\n", s, e.loss[s], g.loss[s]);
            fails++;
        }
    if (e.nparams != g.nparams || (dp = cc_rel_diff(g.params, e.params, e.nparams)) > tol) {
        printf("    params differ: rel %.3g > %.0g\n", dp, tol);
        fails++;
    }
    /* eager: 8 eager steps; graphs: 2 eager, a capture, replays, a re-capture at LR_STEP */
    if (e.st.eager != STEPS || e.st.captured || e.st.replayed) {
        printf("    graphs = false ran %llu eager, %llu captured, %llu replayed\n",
               (unsigned long long)e.st.eager, (unsigned long long)e.st.captured,
               (unsigned long long)e.st.replayed);
        fails++;
    }
    if (g.st.eager != 2 || g.st.captured != 2 || g.st.replayed != STEPS - 4) {
        printf("    graphs = true ran %llu eager, %llu captured, %llu replayed (want 2, 2, %d)\n",
               (unsigned long long)g.st.eager, (unsigned long long)g.st.captured,
               (unsigned long long)g.st.replayed, STEPS - 4);
        fails++;
    }
    for (int s = 0; s < STEPS; s++)
        if (g.dev_ns[s] == 0 || g.dev_ns[s] > g.host_ns[s] + 1000000) {
            printf("    step %d: device time %llu ns, host %llu ns\n", s,
                   (unsigned long long)g.dev_ns[s], (unsigned long long)g.host_ns[s]);
            fails++;
        }
out:
    printf("  %-16s %s  loss/param rel diff %.1e/%.1e (tol %.0e), %llu replays, replay %.3f ms "
           "(eager %.3f ms)\n",
           "graphs", fails ? "FAIL" : "ok  ", dl, dp, tol, (unsigned long long)g.st.replayed,
           g.dev_ns[STEPS - 1] / 1e6, e.dev_ns[STEPS - 1] / 1e6);
    free(e.params);
    free(g.params);
    return fails;
}
