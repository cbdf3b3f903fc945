/* tinycnn: a team's own model as a dlgauge workload.  A small CNN on
 * 32x32 images of 10 classes, trained with SGD on the engine's cpu backend.
 * The data is made once in setup: each class is a bright square at its own
 * place on noise, so the loss visibly falls from ln(10) = 2.30. */
#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <math.h>
#include <stdlib.h>

enum { O_BATCH, O_LR, O_BACKEND, O_COUNT };

static const dlg_option tiny_options[] = {
    [O_BATCH] = {"batch", DLG_OPT_INT, "32", "1", "4096", NULL, "images per step", 0},
    [O_LR] = {"lr", DLG_OPT_DOUBLE, "0.05", "0", "10", NULL, "SGD learning rate", 0},
    [O_BACKEND] = {"backend", DLG_OPT_ENUM, "cpu", NULL, NULL, "cpu|ref", "engine backend", 0},
    [O_COUNT] = {0}};

static const dlg_metric tiny_metrics[] = {
    {"loss", DLG_FIELD_DOUBLE, "", "softmax cross-entropy of the last batch"},
    {"top1", DLG_FIELD_DOUBLE, "", "top-1 accuracy of the last batch"},
    {"params", DLG_FIELD_INT, "", "parameters of the model"},
    {NULL, 0, NULL, NULL}};

typedef struct tiny {
    const dlg_host *h;
    dlg_net *net;
    int loss;
    int batch;
    dlg_sgd sgd;
    float out[3]; /* loss, top-1, top-5 */
} tiny;

/* The model: two conv/relu/pool stages and a classifier. */
static int build(dlg_net *net, int n)
{
    int x = dlg_input(net, "data", n, 3, 32, 32), y = dlg_labels(net, "label", n);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_MSRA, 0}, (dlg_filler){DLG_FILL_CONSTANT, 0});
    x = dlg_relu(net, "relu1", dlg_conv(net, "conv1", x, 16, 3, 1, 1, 1));
    x = dlg_max_pool(net, "pool1", x, 2, 2, 0);
    x = dlg_relu(net, "relu2", dlg_conv(net, "conv2", x, 32, 3, 1, 1, 1));
    x = dlg_max_pool(net, "pool2", x, 2, 2, 0);
    x = dlg_fc(net, "fc", x, 10);
    return dlg_softmax_loss(net, "loss", x, y);
}

/* Class c: a 6x6 square of +2 at a place of its own, on noise. */
static int make_data(tiny *t, uint64_t seed)
{
    size_t per = 3 * 32 * 32, n = (size_t)t->batch;
    float *img = malloc(n * per * sizeof(float)), *lab = malloc(n * sizeof(float));
    int rc = 0;
    if (!img || !lab) {
        rc = t->h->error(t->h, DLG_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        int c = (int)(i % 10), r0 = 4 + 12 * (c / 5), c0 = 2 + 6 * (c % 5);
        lab[i] = (float)c;
        for (size_t p = 0; p < per; p++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int row = (int)(p / 32 % 32), col = (int)(p % 32);
            bool on = row >= r0 && row < r0 + 6 && col >= c0 && col < c0 + 6;
            img[i * per + p] = (float)((double)(seed >> 40) / 16777216.0 - 0.5) + (on ? 2.0f : 0);
        }
    }
    if (dlg_net_write(t->net, dlg_net_blob(t->net, "data"), DLG_DATA, img, n * per) < 0 ||
        dlg_net_write(t->net, dlg_net_blob(t->net, "label"), DLG_DATA, lab, n) < 0)
        rc = t->h->error(t->h, DLG_EINTERNAL, "%s", dlg_net_error(t->net));
out:
    free(img);
    free(lab);
    return rc;
}

static void tiny_teardown(void *state)
{
    tiny *t = state;
    if (t) {
        dlg_net_destroy(t->net);
        free(t);
    }
}

static int tiny_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *job, void **state)
{
    *state = NULL;
    tiny *t = calloc(1, sizeof *t);
    if (!t || dlg_net_create(&t->net, "tinycnn") < 0) {
        free(t);
        return h->error(h, DLG_ENOMEM, "out of memory");
    }
    t->h = h;
    t->batch = (int)o[O_BATCH].i;
    t->sgd = (dlg_sgd){(float)o[O_LR].d, 0.9f, 5e-4f};
    t->loss = build(t->net, t->batch);
    dlg_plan_opts po = {.backend = o[O_BACKEND].i ? "ref" : "cpu",
                        .threads = job->cpus,
                        .train = true,
                        .seed = job->seed};
    int rc = t->loss < 0 ? t->loss : dlg_net_plan(t->net, &po);
    if (rc < 0)
        rc = h->error(h, -rc, "%s", dlg_net_error(t->net));
    if (!rc)
        rc = make_data(t, job->seed);
    if (rc < 0) {
        tiny_teardown(t);
        return rc;
    }
    *state = t;
    return 0;
}

static int tiny_step(void *state, dlg_step *out)
{
    tiny *t = state;
    int rc = dlg_net_forward(t->net);
    if (!rc)
        rc = dlg_net_backward(t->net);
    if (!rc)
        rc = dlg_net_sgd_step(t->net, &t->sgd);
    if (!rc)
        rc = dlg_net_read(t->net, t->loss, DLG_DATA, t->out, 3);
    if (rc < 0)
        return t->h->error(t->h, -rc, "%s", dlg_net_error(t->net));
    out->items = (uint64_t)t->batch;
    return 0;
}

static int tiny_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    tiny *t = state;
    api->add_double(f, "loss", t->out[0]);
    api->add_double(f, "top1", t->out[1]);
    api->add_int(f, "params", dlg_net_param_total(t->net));
    return 0;
}

/* designated: members a later ABI adds stay NULL without a warning */
static const dlg_workload_ops tiny_ops = {.version = 1,
                                          .unit = "images",
                                          .setup = tiny_setup,
                                          .step = tiny_step,
                                          .report = tiny_report,
                                          .teardown = tiny_teardown};

static const dlg_plugin_desc tiny_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "tinycnn",
                                          "1.0", "a small CNN defined out of tree with the builder API",
                                          tiny_options, tiny_metrics, &tiny_ops};

DLG_PLUGIN("tinycnn", &tiny_desc)
