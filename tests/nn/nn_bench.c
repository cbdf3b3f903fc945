/* nn_bench MODEL [BATCH] [ITERS] [BACKEND] [THREADS] [train|infer]:
 * the kernel each convolution got and the best whole-step time of a
 * reference model (not a test; for speed work on the engine). */
#include <dlgauge/nn.h>

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

int main(int argc, char **argv)
{
    const char *model = argc > 1 ? argv[1] : "alexnet";
    int batch = argc > 2 ? atoi(argv[2]) : 16, iters = argc > 3 ? atoi(argv[3]) : 5;
    const char *backend = argc > 4 ? argv[4] : "cpu";
    int threads = argc > 5 ? atoi(argv[5]) : 0;
    int train = !(argc > 6 && strcmp(argv[6], "infer") == 0);
    dlg_net *net;
    if (dlg_net_create(&net, model) < 0)
        return 1;
    int loss = dlg_model_build(net, model, batch, 1000);
    dlg_plan_opts o = {.backend = backend, .threads = threads, .train = train, .seed = 1};
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
    }
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
