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

/* the layers' time per step, the 25 slowest, then by type and kernel */
static void print_profile(const dlg_net *net, int steps)
{
    int n = dlg_net_layer_count(net), *order = calloc((size_t)n, sizeof *order);
    dlg_layer_kind *k = calloc((size_t)n, sizeof *k);
    double total = 0;
    uint64_t f, b, calls;
    for (int i = 0; i < n; i++)
        if (dlg_net_layer_time(net, i, &f, &b, &calls) == 0)
            total += 1e-6 * (double)(f + b) / steps;
    printf("layers: %.1f ms a step in all (mean of %d steps)\n%-28s %-8s %-34s %9s %9s\n", total,
           steps, "layer", "type", "kernel", "fwd ms", "bwd ms");
    int nl = dlg_net_layers_by_time(net, order, 25);
    for (int i = 0; i < nl; i++) {
        dlg_layer_info li;
        dlg_net_layer_info(net, order[i], &li);
        dlg_net_layer_time(net, order[i], &f, &b, &calls);
        printf("%-28s %-8s %-34s %9.2f %9.2f\n", li.name, li.type, dlg_net_layer_impl(net, order[i]),
               1e-6 * (double)f / steps, 1e-6 * (double)b / steps);
    }
    int nk = dlg_net_layer_kinds(net, k, n);
    printf("by type and kernel:\n");
    for (int i = 0; i < nk; i++) {
        double fk = 1e-6 * (double)k[i].fwd_ns / steps, bk = 1e-6 * (double)k[i].bwd_ns / steps;
        printf("%-8s %-34s %9.2f %9.2f  %5.1f%%  (%d layers)\n", k[i].type, k[i].impl, fk, bk,
               100 * (fk + bk) / total, k[i].layers);
    }
    free(order);
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
