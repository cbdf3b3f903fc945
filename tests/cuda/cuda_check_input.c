/* cuda_check's input-path case and the asynchronous-input benchmark
 * (cuda_check_input.h).
 *
 * Case "input": the graphs case's small net (conv, batch norm, ReLU, max
 * pooling, fc, softmax loss) trained STEPS steps from one seed on new
 * inputs every step, twice with CUDA graphs on: once with dlg_net_write
 * before each step, once fed as the caffe workload feeds it -- batch 0
 * written with dlg_net_write_async from pinned memory (dlg_net_host_alloc)
 * before step 0; after launching step k, dlg_net_write_wait, then batch
 * k+1 into the other pinned buffer and dlg_net_write_async, so its copy
 * overlaps step k.  Same algorithms (the first run's algo_cache file),
 * deterministic ones: losses and parameters must agree bitwise (half
 * backends: relative 1e-4, their bias gradients use atomics).  The async
 * run must have replayed graphs (the wait and the staging copy precede
 * the replay on the stream) and give a data wait per step
 * (dlg_net_input_stall) no longer than the step.  A third run feeds it
 * the same way without waiting for the device between steps (the loss read
 * only after the last): its parameters must agree too. */
#include "cuda_check_input.h"
#include "cuda_check_net.h"

#include <dlgauge/nn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEPS 8
#define NB 8
#define NX (NB * 3 * 16 * 16)

typedef struct run {
    float loss[STEPS];
    float *params;
    size_t nparams;
    uint64_t dev_ns[STEPS], wait_ns[STEPS];
    int waits; /* steps with a data wait figure */
    dlg_step_stats st;
} run;

/* batch s: a pure function of s */
static void make_batch(int s, float *xs, float *ys)
{
    uint64_t rng = 12345 + 7919ull * (uint64_t)s;
    for (size_t i = 0; i < NX; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        xs[i] = (float)((double)(rng >> 11) / 9007199254740992.0 * 4.0 - 2.0);
    }
    for (int i = 0; i < NB; i++)
        ys[i] = (float)((s * 3 + i) % 10);
}

/* The next batch into pinned buffer s & 1, written asynchronously. */
static int write_async(dlg_net *n, int x, int y, float *const *xs, float *const *ys, int s)
{
    make_batch(s, xs[s & 1], ys[s & 1]);
    int rc = dlg_net_write_async(n, x, xs[s & 1], NX);
    return rc ? rc : dlg_net_write_async(n, y, ys[s & 1], NB);
}

/* per_step: time each step, take its data wait and read its loss (each
 * waits for the device); else only the last step's loss is read, so the
 * host runs ahead of the device as a training loop does, and a copy that
 * overwrites a staging buffer before the step reading it has run shows. */
static int steps(dlg_net *n, int x, int y, int loss, bool async, bool per_step, run *r)
{
    static const dlg_sgd sgd = {0.05f, 0.9f, 5e-4f};
    float *xs[2] = {NULL, NULL}, *ys[2] = {NULL, NULL}, res[3] = {0, 0, 0};
    int rc = 0;
    for (int i = 0; i < 2 && !rc; i++) {
        xs[i] = async ? dlg_net_host_alloc(n, NX * sizeof(float)) : malloc(NX * sizeof(float));
        ys[i] = async ? dlg_net_host_alloc(n, NB * sizeof(float)) : malloc(NB * sizeof(float));
        rc = xs[i] && ys[i] ? 0 : -1;
    }
    if (!rc && async)
        rc = write_async(n, x, y, xs, ys, 0);
    for (int s = 0; s < STEPS && !rc; s++) {
        if (per_step)
            rc = dlg_net_timer_begin(n);
        if (!rc && !async) {
            make_batch(s, xs[0], ys[0]);
            rc = dlg_net_write(n, x, DLG_DATA, xs[0], NX);
            if (!rc)
                rc = dlg_net_write(n, y, DLG_DATA, ys[0], NB);
        }
        if (!rc)
            rc = dlg_net_train_step(n, &sgd);
        if (!rc && async) { /* the caffe workload's order */
            rc = dlg_net_write_wait(n);
            if (!rc)
                rc = write_async(n, x, y, xs, ys, s + 1);
        }
        if (!rc && per_step)
            rc = dlg_net_timer_end(n, &r->dev_ns[s]);
        if (!rc && per_step && async && dlg_net_input_stall(n, &r->wait_ns[s]) == 0)
            r->waits++;
        if (!rc && (per_step || s == STEPS - 1))
            rc = dlg_net_read(n, loss, DLG_DATA, res, 3);
        r->loss[s] = res[0];
    }
    if (async)
        dlg_net_write_wait(n);
    for (int i = 0; i < 2; i++) {
        if (async) {
            dlg_net_host_free(n, xs[i]);
            dlg_net_host_free(n, ys[i]);
        } else {
            free(xs[i]);
            free(ys[i]);
        }
    }
    return rc;
}

static int train(const char *backend, bool async, bool per_step, const char *cache, run *r)
{
    dlg_net *n;
    int x, y;
    dlg_net_create(&n, "input");
    int loss = cc_small_net(n, NB, false, &x, &y);
    dlg_plan_opts o = {.backend = backend, .train = true, .seed = 5, .algo_cache = cache,
                       .deterministic = true, .graphs = DLG_GRAPHS_ON};
    int rc = loss < 0 || dlg_net_plan(n, &o) < 0 ? -1 : steps(n, x, y, loss, async, per_step, r);
    if (!rc && !(r->params = cc_read_params(n, &r->nparams)))
        rc = -1;
    if (rc)
        printf("  %-16s FAIL %s run: %s\n", "input", async ? "async" : "sync", dlg_net_error(n));
    dlg_net_step_stats(n, &r->st);
    dlg_net_destroy(n); /* writes the algorithm cache */
    return rc ? 1 : 0;
}

int check_input_async(const char *backend)
{
    char cache[96];
    snprintf(cache, sizeof cache, "/tmp/dlg_cuda_check_input_%d.cache", (int)getpid());
    unlink(cache);
    run a = {0}, b = {0}, c = {0};
    int fails = train(backend, false, true, cache, &a);
    if (!fails)
        fails = train(backend, true, true, cache, &b);
    if (!fails)
        fails = train(backend, true, false, cache, &c);
    unlink(cache);
    double tol = strstr(backend, "bf16") || strstr(backend, "fp16") ? 1e-4 : 0, dl = 0, dp = 0;
    uint64_t wait = 0;
    if (fails)
        goto out;
    for (int s = 0; s < STEPS; s++) {
        if ((dl = fmax(dl, cc_rel_diff(&b.loss[s], &a.loss[s], 1))) > tol) {
            printf("    step %d loss sync %.9g async %.9g\n", s, a.loss[s], b.loss[s]);
            fails++;
        }
        if (b.wait_ns[s] > b.dev_ns[s]) {
            printf("    step %d: data wait %llu ns > step %llu ns\n", s,
                   (unsigned long long)b.wait_ns[s], (unsigned long long)b.dev_ns[s]);
            fails++;
        }
        wait += b.wait_ns[s];
    }
    if (a.nparams != b.nparams || (dp = cc_rel_diff(b.params, a.params, a.nparams)) > tol) {
        printf("    params differ: rel %.3g > %.0g\n", dp, tol);
        fails++;
    }
    /* the host ahead of the device: the same steps */
    double dc = a.nparams == c.nparams ? cc_rel_diff(c.params, a.params, a.nparams) : INFINITY;
    dc = fmax(dc, cc_rel_diff(&c.loss[STEPS - 1], &a.loss[STEPS - 1], 1));
    if (dc > tol) {
        printf("    unsynchronised async run: loss/params rel %.3g > %.0g\n", dc, tol);
        fails++;
    }
    dp = fmax(dp, dc);
    if (b.st.replayed == 0 || b.waits != STEPS) {
        printf("    async run: %llu replays, %d of %d steps with a data wait figure\n",
               (unsigned long long)b.st.replayed, b.waits, STEPS);
        fails++;
    }
out:
    printf("  %-16s %s  loss/param rel diff %.1e/%.1e (tol %.0e), %llu replays, data wait "
           "%.3f ms in %d steps\n",
           "input", fails ? "FAIL" : "ok  ", dl, dp, tol, (unsigned long long)b.st.replayed,
           (double)wait / 1e6, STEPS);
    free(a.params);
    free(b.params);
    free(c.params);
    return fails;
}

/* ---- bench MODEL MODE BACKEND BATCH WARMUP ITERS input=async ---- */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int bench_input_async(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    const char *model = argv[0], *backend = argv[2];
    bool train = strcmp(argv[1], "train") == 0, graphs = true;
    int batch = atoi(argv[3]), warm = argc > 4 ? atoi(argv[4]) : 5,
        iters = argc > 5 ? atoi(argv[5]) : 20;
    for (int i = 6; i < argc; i++)
        if (strcmp(argv[i], "graphs=off") == 0)
            graphs = false;
    dlg_net *n;
    dlg_net_create(&n, model);
    int loss = dlg_model_build(n, model, batch, 1000);
    dlg_plan_opts o = {.backend = backend, .train = train, .seed = 1,
                       .graphs = graphs ? DLG_GRAPHS_AUTO : DLG_GRAPHS_OFF};
    if (loss < 0 || dlg_net_plan(n, &o) < 0) {
        printf("bench %s %s %s %d FAIL %s\n", model, argv[1], backend, batch, dlg_net_error(n));
        dlg_net_destroy(n);
        return 1;
    }
    int x = dlg_net_blob(n, "data"), y = dlg_net_blob(n, "label");
    size_t nx = cc_count(n, x);
    /* two pinned batches, as the loader's ring would hold them, written
     * alternately right after each step's launch */
    float *xs[2], *ys[2];
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        xs[i] = dlg_net_host_alloc(n, nx * sizeof(float));
        ys[i] = dlg_net_host_alloc(n, (size_t)batch * sizeof(float));
        if (!xs[i] || !ys[i])
            rc = -1;
        for (size_t k = 0; !rc && k < nx; k++)
            xs[i][k] = (float)((double)((k * 2654435761u + (size_t)i) % 1000) / 250.0 - 2.0);
        for (int k = 0; !rc && k < batch; k++)
            ys[i][k] = (float)((k * 37 + i) % 1000);
    }
    if (!rc)
        rc = dlg_net_write_async(n, x, xs[0], nx) | dlg_net_write_async(n, y, ys[0], (size_t)batch);
    float out[3];
    static const dlg_sgd sgd = {0.01f, 0.9f, 5e-4f};
    uint64_t wait = 0, dev_ns = 0, w;
    double t0 = 0;
    bool events = false;
    for (int i = 0; i < warm + iters && !rc; i++) {
        if (i == warm) { /* the timed steps: CUDA events around them all */
            dlg_net_read(n, loss, DLG_DATA, out, 3);
            events = dlg_net_timer_begin(n) == 0;
            t0 = now_s();
        }
        rc = train ? dlg_net_train_step(n, &sgd) : dlg_net_infer_step(n);
        /* this step's wait for its copy (waits for the step to start) */
        if (!rc && i >= warm && dlg_net_input_stall(n, &w) == 0)
            wait += w;
        if (!rc)
            rc = dlg_net_write_wait(n);
        int k = (i + 1) & 1;
        if (!rc)
            rc = dlg_net_write_async(n, x, xs[k], nx) |
                 dlg_net_write_async(n, y, ys[k], (size_t)batch);
    }
    if (!rc && events)
        rc = dlg_net_timer_end(n, &dev_ns);
    rc |= dlg_net_read(n, loss, DLG_DATA, out, 3);
    double dt = events && dev_ns ? (double)dev_ns / 1e9 : now_s() - t0;
    dlg_step_stats st = {0};
    dlg_net_step_stats(n, &st);
    dlg_net_write_wait(n);
    for (int i = 0; i < 2; i++) {
        dlg_net_host_free(n, xs[i]);
        dlg_net_host_free(n, ys[i]);
    }
    if (rc || !isfinite(out[0])) {
        printf("bench %s %s %s %d FAIL %s (loss %g)\n", model, argv[1], backend, batch,
               dlg_net_error(n), out[0]);
        dlg_net_destroy(n);
        return 1;
    }
    printf("bench %s %s %s %d %.1f %.3f macs=%lld step_macs=%lld loss=%.3f graphs=%s replays=%llu "
           "timing=%s input=async data_wait_ms=%.3f\n",
           model, argv[1], backend, batch, (double)batch * iters / dt, 1e3 * dt / iters,
           (long long)dlg_net_macs_total(n), (long long)dlg_net_step_macs(n), out[0],
           graphs ? "on" : "off",
           (unsigned long long)st.replayed, events && dev_ns ? "events" : "host",
           (double)wait / 1e6 / iters);
    dlg_net_destroy(n);
    return 0;
}
