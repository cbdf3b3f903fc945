/* nn_bench MODEL [BATCH] [ITERS] [BACKEND] [THREADS] [train|infer] [profile]:
 * the kernel each convolution got and the best whole-step time of a
 * reference model (not a test; for speed work on the engine).  profile:
 * also the time per step of every layer (forward, backward) over the
 * steps after the first, the top 25, and the sums by type and kernel. */
#include <dlgauge/nn.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct row {
    const char *name, *type, *impl;
    double fwd, bwd; /* ms per step */
} row;

static int by_time(const void *a, const void *b)
{
    const row *x = a, *y = b;
    double d = (y->fwd + y->bwd) - (x->fwd + x->bwd);
    return d > 0 ? 1 : d < 0 ? -1 : 0;
}

/* the layers' time per step, the 25 slowest, then by type and kernel */
static void print_profile(const dlg_net *net, int steps)
{
    int n = dlg_net_layer_count(net);
    row *r = calloc((size_t)n, sizeof *r);
    dlg_layer_kind *k = calloc((size_t)n, sizeof *k);
    double total = 0;
    for (int i = 0; i < n; i++) {
        dlg_layer_info li;
        uint64_t f, b, calls;
        if (dlg_net_layer_info(net, i, &li) || dlg_net_layer_time(net, i, &f, &b, &calls))
            continue;
        r[i] = (row){li.name, li.type, dlg_net_layer_impl(net, i), 1e-6 * (double)f / steps,
                     1e-6 * (double)b / steps};
        total += r[i].fwd + r[i].bwd;
    }
    qsort(r, (size_t)n, sizeof *r, by_time);
    printf("layers: %.1f ms a step in all (mean of %d steps)\n%-28s %-8s %-34s %9s %9s\n", total,
           steps, "layer", "type", "kernel", "fwd ms", "bwd ms");
    for (int i = 0; i < n && i < 25; i++)
        printf("%-28s %-8s %-34s %9.2f %9.2f\n", r[i].name, r[i].type, r[i].impl, r[i].fwd,
               r[i].bwd);
    int nk = dlg_net_layer_kinds(net, k, n);
    printf("by type and kernel:\n");
    for (int i = 0; i < nk; i++) {
        double f = 1e-6 * (double)k[i].fwd_ns / steps, b = 1e-6 * (double)k[i].bwd_ns / steps;
        printf("%-8s %-34s %9.2f %9.2f  %5.1f%%  (%d layers)\n", k[i].type, k[i].impl, f, b,
               100 * (f + b) / total, k[i].layers);
    }
    free(r);
    free(k);
}

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "alexnet";
    int batch = argc > 2 ? atoi(argv[2]) : 16, iters = argc > 3 ? atoi(argv[3]) : 5;
    const char *backend = argc > 4 ? argv[4] : "cpu";
    int threads = argc > 5 ? atoi(argv[5]) : 0;
    int train = !(argc > 6 && strcmp(argv[6], "infer") == 0);
    bool profile = argc > 7 && strcmp(argv[7], "profile") == 0;
    dlg_net *net;
    if (dlg_net_create(&net, model) < 0)
        return 1;
    int loss = dlg_model_build(net, model, batch, 1000);
    dlg_plan_opts o = {
        .backend = backend, .threads = threads, .train = train, .seed = 1, .profile = profile};
    double t0 = now();
    if (loss < 0 || dlg_net_plan(net, &o) < 0) {
        fprintf(stderr, "nn_bench: %s\n", dlg_net_error(net));
        return 1;
    }
    double tplan = now() - t0;
    /* which kernel each convolution got (oneDNN's implementation or the
     * Winograd kernels) */
    printf("conv kernels:");
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        if (dlg_net_layer_info(net, i, &li) == 0 && !strcmp(li.type, "conv"))
            printf(" %s=%s", li.name, dlg_net_layer_impl(net, i));
    }
    printf("\n");
    float *lab = calloc((size_t)batch, sizeof(float));
    for (int i = 0; i < batch; i++)
        lab[i] = (float)(i % 1000);
    dlg_net_write(net, dlg_net_blob(net, "label"), DLG_DATA, lab, (size_t)batch);
    dlg_sgd sgd = {0.001f, 0.9f, 5e-4f};
    double best = 1e30;
    for (int it = 0; it < iters + 1; it++) {
        double t = now();
        int rc = dlg_net_forward(net);
        if (!rc && train)
            rc = dlg_net_backward(net);
        if (!rc && train)
            rc = dlg_net_sgd_step(net, &sgd);
        if (rc < 0) {
            fprintf(stderr, "nn_bench: %s\n", dlg_net_error(net));
            return 1;
        }
        t = now() - t;
        if (it > 0 && t < best) /* first step warms caches and pages */
            best = t;
        if (it == 0 && profile)
            dlg_net_layer_time_reset(net);
    }
    if (profile)
        print_profile(net, iters);
    float out[3];
    dlg_net_read(net, loss, DLG_DATA, out, 3);
    double gmacs = (double)dlg_net_macs_total(net) * batch * (train ? 3 : 1) / 1e9;
    printf("%s %s batch %d %s: plan %.2f s, best step %.3f s, %.1f images/s, %.1f GMAC/s, "
           "loss %.3f\n",
           model, backend, batch, train ? "train" : "infer", tplan, best, batch / best,
           gmacs / best, out[0]);
    free(lab);
    dlg_net_destroy(net);
    return 0;
}
