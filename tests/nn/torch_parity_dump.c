/* torch_parity_dump: a reference model with known weights and inputs, and
 * what the engine computes from them, as files that torch_parity.py loads
 * into the PyTorch model of the same architecture.
 *
 *   torch_parity_dump [-b BACKEND] [-x SCALE] [-s STEPS -l LR -m MOM -w WD [-e]]
 *                     MODEL CROP BATCH CLASSES DIR
 *
 * Every value comes from one splitmix64 stream (fixed seed), drawn in this
 * order: the parameters, the images, the labels.  Parameters are drawn so
 * that every one of them matters to the output: weights He-uniform
 * (U(+-sqrt(6/fan_in)): activations keep their scale through the depth),
 * biases and batch norm's beta and running mean U(-0.2, 0.2), gamma
 * U(0.5, 1.5), running variance U(0.5, 2).  Images U(+-sqrt(3) SCALE), so
 * of standard deviation SCALE (default 1).
 *
 * Files in DIR, float32 in host order:
 *   params.txt   a line per parameter blob, in the net's layer order and
 *                each layer's parameter order: layer name, index, role
 *                (weight, bias; batchnorm: gamma, beta, mean, var), shape
 *                (AxBx...), count
 *   params.f32   their values, concatenated in that order
 *   input.f32    the images, BATCH x 3 x CROP x CROP
 *   labels.f32   the labels, BATCH values in 0 .. CLASSES-1
 * Without -s (inference plan):
 *   logits.f32   the main classifier's output (the last fc), BATCH x CLASSES
 *   loss.txt     the main loss (mean cross-entropy)
 * With -s STEPS (a training plan; -e: in test mode, dropout off and batch
 * norm on its running statistics, as PyTorch's eval(), for the nets with
 * dropout, whose masks PyTorch cannot draw the same):
 *   stepN.f32    the parameters after step N (N = 1 .. STEPS) of
 *                dlg_net_train_step (Caffe's SGD and rules: biases lr 2x,
 *                no decay on biases or batch norm), in params.f32's order
 *   loss.txt     each step's main loss (before its update), a line each */
#include <dlgauge/nn.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dlgauge/splitmix.h>

typedef struct opts {
    const char *model, *backend, *dir;
    int crop, batch, classes, steps;
    bool eval; /* training in test mode (-e) */
    float scale;
    dlg_sgd sgd;
} opts;

/* uniform in [lo, hi), from the top 24 bits (exact in a float) */
static void fill_uniform(uint64_t *s, float *v, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        v[i] = lo + (hi - lo) * ((float)(dlg_splitmix_next(s) >> 40) * 0x1p-24f);
}

static size_t shape_count(const dlg_shape *s)
{
    size_t n = 1;
    for (int d = 0; d < s->ndim; d++)
        n *= (size_t)s->d[d];
    return n;
}

/* What parameter `index` of a layer of this type is; NULL: a layer this
 * tool does not know how to fill. */
static const char *param_role(const char *type, int index)
{
    static const char *const bn[] = {"gamma", "beta", "mean", "var"};
    if (!strcmp(type, "batchnorm"))
        return index < 4 ? bn[index] : NULL;
    if (!strcmp(type, "conv") || !strcmp(type, "fc"))
        return index == 0 ? "weight" : index == 1 ? "bias" : NULL;
    return NULL;
}

static void fill_param(uint64_t *s, const char *role, const dlg_shape *sh, float *v, size_t n)
{
    if (!strcmp(role, "weight")) {
        float a = sqrtf(6.0f * (float)sh->d[0] / (float)n); /* fan_in = n / outputs */
        fill_uniform(s, v, n, -a, a);
    } else if (!strcmp(role, "gamma")) {
        fill_uniform(s, v, n, 0.5f, 1.5f);
    } else if (!strcmp(role, "var")) {
        fill_uniform(s, v, n, 0.5f, 2.0f);
    } else {
        fill_uniform(s, v, n, -0.2f, 0.2f);
    }
}

static FILE *open_out(const char *dir, const char *name, const char *mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, mode);
    if (!f)
        perror(path);
    return f;
}

static int write_f32(const char *dir, const char *name, const float *v, size_t n)
{
    FILE *f = open_out(dir, name, "wb");
    if (!f)
        return -1;
    int rc = fwrite(v, sizeof *v, n, f) == n ? 0 : -1;
    if (fclose(f) != 0 || rc < 0) {
        fprintf(stderr, "torch_parity_dump: writing %s/%s failed\n", dir, name);
        return -1;
    }
    return 0;
}

/* Calls fn(net, blob, layer name, index, type, ctx) for every parameter
 * blob in the order params.txt documents; stops at the first nonzero. */
typedef int (*param_fn)(dlg_net *net, int blob, const char *layer, int index, const char *type,
                        void *ctx);
static int each_param(dlg_net *net, param_fn fn, void *ctx)
{
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        if (dlg_net_layer_info(net, i, &li) < 0)
            return -1;
        for (int k = 0;; k++) {
            int b = dlg_net_param(net, li.name, k);
            if (b < 0)
                break;
            int rc = fn(net, b, li.name, k, li.type, ctx);
            if (rc)
                return rc;
        }
    }
    return 0;
}

typedef struct set_ctx {
    uint64_t *rng;
    FILE *txt, *bin;
    float *buf;
    size_t cap;
} set_ctx;

static int grow(float **buf, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    float *p = realloc(*buf, n * sizeof *p);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

/* one parameter: drawn, written into the net, recorded in both files */
static int set_param(dlg_net *net, int blob, const char *layer, int index, const char *type,
                     void *ctx)
{
    set_ctx *c = ctx;
    const char *role = param_role(type, index);
    if (!role) {
        fprintf(stderr, "torch_parity_dump: %s (%s): no role for parameter %d\n", layer, type,
                index);
        return -1;
    }
    dlg_shape sh;
    dlg_net_shape(net, blob, &sh);
    size_t n = shape_count(&sh);
    if (grow(&c->buf, &c->cap, n) < 0)
        return -1;
    fill_param(c->rng, role, &sh, c->buf, n);
    if (dlg_net_write(net, blob, DLG_DATA, c->buf, n) < 0) {
        fprintf(stderr, "torch_parity_dump: %s: %s\n", layer, dlg_net_error(net));
        return -1;
    }
    fprintf(c->txt, "%s\t%d\t%s\t", layer, index, role);
    for (int d = 0; d < sh.ndim; d++)
        fprintf(c->txt, d ? "x%lld" : "%lld", (long long)sh.d[d]);
    fprintf(c->txt, "\t%zu\n", n);
    return fwrite(c->buf, sizeof(float), n, c->bin) == n ? 0 : -1;
}

static int set_params(dlg_net *net, uint64_t *rng, const char *dir)
{
    set_ctx c = {rng, open_out(dir, "params.txt", "w"), open_out(dir, "params.f32", "wb"), NULL, 0};
    int rc = c.txt && c.bin ? each_param(net, set_param, &c) : -1;
    if (c.txt && fclose(c.txt) != 0)
        rc = -1;
    if (c.bin && fclose(c.bin) != 0)
        rc = -1;
    free(c.buf);
    return rc;
}

typedef struct dump_ctx {
    FILE *bin;
    float *buf;
    size_t cap;
} dump_ctx;

static int dump_param(dlg_net *net, int blob, const char *layer, int index, const char *type,
                      void *ctx)
{
    dump_ctx *c = ctx;
    dlg_shape sh;
    dlg_net_shape(net, blob, &sh);
    size_t n = shape_count(&sh);
    if (grow(&c->buf, &c->cap, n) < 0 || dlg_net_read(net, blob, DLG_DATA, c->buf, n) < 0)
        return -1;
    return fwrite(c->buf, sizeof(float), n, c->bin) == n ? 0 : -1;
}

static int dump_params(dlg_net *net, const char *dir, const char *name)
{
    dump_ctx c = {open_out(dir, name, "wb"), NULL, 0};
    int rc = c.bin ? each_param(net, dump_param, &c) : -1;
    if (c.bin && fclose(c.bin) != 0)
        rc = -1;
    free(c.buf);
    return rc;
}

/* The images and labels: drawn after the parameters, written to the net
 * and to input.f32, labels.f32. */
static int set_inputs(dlg_net *net, uint64_t *rng, const opts *o)
{
    size_t nx = (size_t)o->batch * 3 * (size_t)o->crop * (size_t)o->crop, ny = (size_t)o->batch;
    float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
    int rc = -1;
    if (!x || !y)
        goto out;
    float a = sqrtf(3.0f) * o->scale;
    fill_uniform(rng, x, nx, -a, a);
    for (size_t i = 0; i < ny; i++)
        y[i] = (float)(dlg_splitmix_next(rng) % (uint64_t)o->classes);
    if (dlg_net_write(net, dlg_net_blob(net, "data"), DLG_DATA, x, nx) < 0 ||
        dlg_net_write(net, dlg_net_blob(net, "label"), DLG_DATA, y, ny) < 0) {
        fprintf(stderr, "torch_parity_dump: input: %s\n", dlg_net_error(net));
        goto out;
    }
    if (write_f32(o->dir, "input.f32", x, nx) == 0 && write_f32(o->dir, "labels.f32", y, ny) == 0)
        rc = 0;
out:
    free(x);
    free(y);
    return rc;
}

/* The main classifier's output: the last fc layer's (the auxiliary heads
 * of googlenet-aux and inception-v3-aux come before it). */
static int main_logits(const dlg_net *net)
{
    int blob = -1;
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        if (dlg_net_layer_info(net, i, &li) == 0 && !strcmp(li.type, "fc"))
            blob = dlg_net_blob(net, li.name);
    }
    return blob;
}

static int write_loss(FILE *f, dlg_net *net, int loss)
{
    float v[3]; /* loss, top-1, top-5 */
    if (dlg_net_read(net, loss, DLG_DATA, v, 3) < 0)
        return -1;
    fprintf(f, "%.9g\n", v[0]);
    return 0;
}

static int infer(dlg_net *net, int loss, int logits, const opts *o)
{
    dlg_shape sh;
    dlg_net_shape(net, logits, &sh);
    size_t n = shape_count(&sh);
    float *v = malloc(n * sizeof *v);
    FILE *f = open_out(o->dir, "loss.txt", "w");
    int rc = -1;
    if (v && f && dlg_net_forward(net) == 0 && dlg_net_read(net, logits, DLG_DATA, v, n) == 0 &&
        write_loss(f, net, loss) == 0)
        rc = write_f32(o->dir, "logits.f32", v, n);
    if (f && fclose(f) != 0)
        rc = -1;
    free(v);
    return rc;
}

/* STEPS training steps, the parameters written after each (stepN.f32) */
static int train(dlg_net *net, int loss, const opts *o)
{
    FILE *f = open_out(o->dir, "loss.txt", "w");
    int rc = f ? 0 : -1;
    for (int s = 1; s <= o->steps && rc == 0; s++) {
        char name[32];
        snprintf(name, sizeof name, "step%d.f32", s);
        rc = dlg_net_train_step(net, &o->sgd) == 0 && write_loss(f, net, loss) == 0
                 ? dump_params(net, o->dir, name)
                 : -1;
    }
    if (f && fclose(f) != 0)
        rc = -1;
    return rc;
}

/* Built and planned: an inference plan, or a training plan (in test mode
 * with -e). */
static int build(dlg_net *net, const opts *o, int *loss, int *logits)
{
    dlg_plan_opts po = {.backend = o->backend, .threads = 1, .train = o->steps > 0, .seed = 1};
    *loss = dlg_model_build_crop(net, o->model, o->batch, o->classes, o->crop);
    *logits = main_logits(net);
    if (*loss < 0 || *logits < 0 || dlg_net_keep(net, *logits) < 0 || dlg_net_plan(net, &po) < 0)
        return -1;
    return po.train && o->eval ? dlg_net_set_train(net, false) : 0;
}

static int run(const opts *o)
{
    dlg_net *net;
    if (dlg_net_create(&net, o->model) < 0)
        return -1;
    uint64_t rng = 20240611;
    int loss, logits, rc = build(net, o, &loss, &logits);
    if (rc == 0)
        rc = set_params(net, &rng, o->dir);
    if (rc == 0)
        rc = set_inputs(net, &rng, o);
    if (rc == 0)
        rc = o->steps > 0 ? train(net, loss, o) : infer(net, loss, logits, o);
    if (rc < 0 && *dlg_net_error(net))
        fprintf(stderr, "torch_parity_dump: %s: %s\n", o->model, dlg_net_error(net));
    dlg_net_destroy(net);
    return rc;
}

static int usage(void)
{
    fprintf(stderr, "usage: torch_parity_dump [-b BACKEND] [-x SCALE] [-s STEPS -l LR -m MOM -w WD [-e]] "
                    "MODEL CROP BATCH CLASSES DIR\n");
    return 2;
}

int main(int argc, char **argv)
{
    opts o = {.backend = "cpu", .scale = 1.0f, .sgd = {0.01f, 0.9f, 5e-4f}};
    int c;
    while ((c = getopt(argc, argv, "b:x:s:l:m:w:e")) != -1) {
        switch (c) {
        case 'b': o.backend = optarg; break;
        case 'x': o.scale = strtof(optarg, NULL); break;
        case 's': o.steps = atoi(optarg); break;
        case 'l': o.sgd.lr = strtof(optarg, NULL); break;
        case 'm': o.sgd.momentum = strtof(optarg, NULL); break;
        case 'w': o.sgd.weight_decay = strtof(optarg, NULL); break;
        case 'e': o.eval = true; break;
        default: return usage();
        }
    }
    if (argc - optind != 5)
        return usage();
    o.model = argv[optind];
    o.crop = atoi(argv[optind + 1]);
    o.batch = atoi(argv[optind + 2]);
    o.classes = atoi(argv[optind + 3]);
    o.dir = argv[optind + 4];
    if (o.crop <= 0 || o.batch <= 0 || o.classes <= 0 || !(o.scale > 0))
        return usage();
    return run(&o) < 0 ? 1 : 0;
}
