/* The reference models against the published architectures, exactly:
 * learnable parameters, forward multiply-adds per image (the count behind
 * flops_per_item, gflops and pct_peak), per-layer output shapes (Caffe's
 * ceil-mode pooling in the Caffe nets, floor mode in torchvision's), layer
 * order around the dropouts, and the prototxt fillers.
 *
 * Where the numbers come from (computed once with torch 1.13 /
 * torchvision 0.14; this test does not need torch):
 *  - resnet50, vgg16, inception_v3 (aux_logits True / False): the
 *    torchvision models, sum(p.numel() for p in m.parameters()), and
 *    multiply-adds summed by forward hooks over Conv2d (out elements x
 *    in/groups x kh x kw) and Linear (in x out) at 224 (299 for
 *    Inception-v3); the aux head's are counted in train mode.
 *  - BVLC AlexNet and GoogLeNet: the bvlc_alexnet / bvlc_googlenet
 *    train_val prototxts rebuilt layer by layer in PyTorch (grouped conv2/4/5,
 *    MaxPool2d(ceil_mode=True) as Caffe's pooling, biases everywhere), the
 *    same counts.  AlexNet's 60,965,224 is the figure BVLC publishes;
 *    GoogLeNet's main network has 6,998,552, its two auxiliary heads
 *    (loss1 after inception_4a, loss2 after 4d; AvgPool2d(5, 3,
 *    ceil_mode=True), 1x1 conv 128, fc 1024, fc 1000) 3,188,840 and
 *    3,190,888 parameters, 4,169,728 and 4,202,496 multiply-adds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dlg_net *build(const char *model, int crop)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, model), 0);
    if (dlg_model_build_crop(net, model, 1, 1000, crop) < 0)
        fail_msg("%s: %s", model, *dlg_net_error(net) ? dlg_net_error(net) : "unknown model");
    return net;
}

static const struct {
    const char *model;
    int64_t params, macs;
} sizes[] = {
    {"alexnet", 60965224, 724406816},
    {"googlenet", 6998552, 1582671872},
    {"googlenet-aux", 13378280, 1591044096},
    {"resnet50", 25557032, 4089184256},
    {"vgg16", 138357544, 15470264320},
    {"inception-v3", 23834568, 5713216096},
    {"inception-v3-aux", 27161264, 5718899296},
};

static void test_sizes(void **st)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        dlg_net *net = build(sizes[i].model, 0);
        long long p = (long long)dlg_net_param_total(net), m = (long long)dlg_net_macs_total(net);
        printf("  %-16s %11lld params (reference %11lld), %11lld MACs (reference %11lld)\n",
               sizes[i].model, p, (long long)sizes[i].params, m, (long long)sizes[i].macs);
        assert_int_equal(p, sizes[i].params);
        assert_int_equal(m, sizes[i].macs);
        dlg_net_destroy(net);
    }
}

/* A step's multiply-adds as planned: the forward's in inference; in
 * training forward, weight and data gradients of every layer but conv1's
 * data gradient (the images take none), unless input gradients are asked
 * for.  AlexNet at crop 67: conv1 is 96 x 15 x 15 outputs of 3 x 11 x 11. */
static void test_step_macs(void **st)
{
    const int64_t conv1 = 96 * 15 * 15 * 363;
    for (int mode = 0; mode < 3; mode++) {
        dlg_net *net = build("alexnet", 67);
        int64_t fwd = dlg_net_macs_total(net);
        assert_int_equal(dlg_net_step_macs(net), -DLG_EINVAL); /* not planned yet */
        dlg_plan_opts po = {.backend = "ref", .threads = 1, .train = mode > 0, .seed = 1,
                            .input_grads = mode == 2};
        assert_int_equal(dlg_net_plan(net, &po), 0);
        int64_t want = mode == 0 ? fwd : mode == 1 ? 3 * fwd - conv1 : 3 * fwd;
        printf("  %s: %lld multiply-adds a step (forward %lld)\n",
               mode == 0 ? "infer" : mode == 1 ? "train" : "train, input gradients",
               (long long)dlg_net_step_macs(net), (long long)fwd);
        assert_int_equal(dlg_net_step_macs(net), want);
        dlg_net_destroy(net);
    }
}

/* Output shapes (C, H, W at batch 1) of the reference implementations. */
static const struct {
    const char *model, *blob;
    int c, h, w;
} shapes[] = {
    {"alexnet", "conv1", 96, 55, 55},
    {"alexnet", "pool1", 96, 27, 27}, /* ceil((55 - 3) / 2) + 1 */
    {"alexnet", "conv2", 256, 27, 27},
    {"alexnet", "pool2", 256, 13, 13},
    {"alexnet", "conv5", 256, 13, 13},
    {"alexnet", "pool5", 256, 6, 6},
    {"alexnet", "fc6", 4096, 1, 1},
    {"alexnet", "fc8", 1000, 1, 1},
    {"googlenet", "conv1/7x7_s2", 64, 112, 112},
    {"googlenet", "pool1/3x3_s2", 64, 56, 56}, /* ceil mode: floor would give 55 */
    {"googlenet", "conv2/3x3", 192, 56, 56},
    {"googlenet", "pool2/3x3_s2", 192, 28, 28},
    {"googlenet", "inception_3a/output", 256, 28, 28},
    {"googlenet", "inception_3b/output", 480, 28, 28},
    {"googlenet", "pool3/3x3_s2", 480, 14, 14},
    {"googlenet", "inception_4a/output", 512, 14, 14},
    {"googlenet", "inception_4d/output", 528, 14, 14},
    {"googlenet", "inception_4e/output", 832, 14, 14},
    {"googlenet", "pool4/3x3_s2", 832, 7, 7},
    {"googlenet", "inception_5b/output", 1024, 7, 7},
    {"googlenet", "pool5/7x7_s1", 1024, 1, 1},
    {"googlenet-aux", "loss1/ave_pool", 512, 4, 4}, /* ceil((14 - 5) / 3) + 1 */
    {"googlenet-aux", "loss1/conv", 128, 4, 4},
    {"googlenet-aux", "loss1/fc", 1024, 1, 1},
    {"googlenet-aux", "loss1/classifier", 1000, 1, 1},
    {"googlenet-aux", "loss2/ave_pool", 528, 4, 4},
    {"googlenet-aux", "loss2/classifier", 1000, 1, 1},
    {"resnet50", "conv1", 64, 112, 112},
    {"resnet50", "pool1", 64, 56, 56},
    {"resnet50", "res2c_relu", 256, 56, 56},
    {"resnet50", "res3a_branch2b", 128, 28, 28}, /* v1.5: the 3x3 strides */
    {"resnet50", "res3d_relu", 512, 28, 28},
    {"resnet50", "res4f_relu", 1024, 14, 14},
    {"resnet50", "res5c_relu", 2048, 7, 7},
    {"resnet50", "pool5", 2048, 1, 1},
    {"vgg16", "conv1_2", 64, 224, 224},
    {"vgg16", "pool1", 64, 112, 112},
    {"vgg16", "pool2", 128, 56, 56},
    {"vgg16", "pool3", 256, 28, 28},
    {"vgg16", "pool4", 512, 14, 14},
    {"vgg16", "pool5", 512, 7, 7},
    {"vgg16", "fc6", 4096, 1, 1},
};

static void test_shapes(void **st)
{
    dlg_net *net = NULL;
    const char *built = "";
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        if (strcmp(built, shapes[i].model) != 0) {
            if (net)
                dlg_net_destroy(net);
            net = build(built = shapes[i].model, 0);
        }
        int b = dlg_net_blob(net, shapes[i].blob);
        if (b < 0)
            fail_msg("%s: no blob '%s'", shapes[i].model, shapes[i].blob);
        dlg_shape s;
        assert_int_equal(dlg_net_shape(net, b, &s), 0);
        if (s.d[1] != shapes[i].c || s.d[2] != shapes[i].h || s.d[3] != shapes[i].w)
            fail_msg("%s %s: %lldx%lldx%lld, reference %dx%dx%d", shapes[i].model,
                     shapes[i].blob, (long long)s.d[1], (long long)s.d[2], (long long)s.d[3],
                     shapes[i].c, shapes[i].h, shapes[i].w);
    }
    dlg_net_destroy(net);
}

/* The layer types ending each model, from its last layer back: where the
 * dropouts sit (after the ReLUs of fc6/fc7; GoogLeNet's and Inception's
 * after the global pooling, before the classifier). */
static void tail(const char *model, int n, const char *const *want)
{
    dlg_net *net = build(model, 0);
    int count = dlg_net_layer_count(net);
    for (int i = 0; i < n; i++) {
        dlg_layer_info li;
        assert_int_equal(dlg_net_layer_info(net, count - n + i, &li), 0);
        if (strcmp(li.type, want[i]) != 0)
            fail_msg("%s: layer %s is a %s, want %s", model, li.name, li.type, want[i]);
    }
    dlg_net_destroy(net);
}

static void test_head_layers(void **st)
{
    static const char *const fc_head[] = {"fc",      "relu", "dropout", "fc",
                                          "relu",    "dropout", "fc",   "softmax_loss"};
    static const char *const pool_head[] = {"pool", "dropout", "fc", "softmax_loss"};
    static const char *const resnet[] = {"relu", "pool", "fc", "softmax_loss"};
    tail("alexnet", 8, fc_head);
    tail("vgg16", 8, fc_head);
    tail("googlenet", 4, pool_head);
    tail("googlenet-aux", 4, pool_head);
    tail("inception-v3", 4, pool_head);
    tail("resnet50", 4, resnet); /* no dropout in ResNet */
}

/* Mean, standard deviation, min and max of a planned net's parameter. */
static void param_stats(dlg_net *net, const char *layer, int index, double *st)
{
    int b = dlg_net_param(net, layer, index);
    if (b < 0)
        fail_msg("no parameter %d of '%s'", index, layer);
    dlg_shape s;
    assert_int_equal(dlg_net_shape(net, b, &s), 0);
    size_t n = 1;
    for (int d = 0; d < s.ndim; d++)
        n *= (size_t)s.d[d];
    float *v = malloc(n * sizeof *v);
    assert_non_null(v);
    assert_int_equal(dlg_net_read(net, b, DLG_DATA, v, n), 0);
    double sum = 0, sq = 0, lo = v[0], hi = v[0];
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
        sq += (double)v[i] * v[i];
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    st[0] = sum / (double)n;
    st[1] = sqrt(fmax(sq / (double)n - st[0] * st[0], 0));
    st[2] = lo;
    st[3] = hi;
    free(v);
}

static void expect_constant(dlg_net *net, const char *layer, int index, double value)
{
    double st[4];
    param_stats(net, layer, index, st);
    if (fabs(st[2] - value) > 1e-7 || fabs(st[3] - value) > 1e-7)
        fail_msg("%s param %d: in [%g, %g], want the constant %g", layer, index, st[2], st[3],
                 value);
}

/* Zero-mean weights of standard deviation sd, within 5% (the smallest
 * layer checked has tens of thousands of weights). */
static void expect_sd(dlg_net *net, const char *layer, double sd)
{
    double st[4];
    param_stats(net, layer, 0, st);
    if (fabs(st[1] / sd - 1) > 0.05 || fabs(st[0]) > 0.1 * sd)
        fail_msg("%s weights: mean %g sd %g, want 0 and %g", layer, st[0], st[1], sd);
}

static dlg_net *planned(const char *model, int crop)
{
    dlg_net *net = build(model, crop);
    dlg_plan_opts po = {.backend = "ref", .seed = 7};
    if (dlg_net_plan(net, &po) < 0)
        fail_msg("%s: %s", model, dlg_net_error(net));
    return net;
}

/* bvlc_alexnet/train_val.prototxt: gaussian 0.01 (fc6/fc7 0.005); biases
 * 0 (conv1, conv3, fc8) or 0.1.  Crop 67 keeps fc6 small; the fillers do
 * not depend on it. */
static void test_fillers_alexnet(void **st)
{
    dlg_net *net = planned("alexnet", 67);
    static const char *const layers[] = {"conv1", "conv2", "conv3", "conv4",
                                         "conv5", "fc6",   "fc7",   "fc8"};
    static const double bias[] = {0, 0.1, 0, 0.1, 0.1, 0.1, 0.1, 0};
    static const double sd[] = {0.01, 0.01, 0.01, 0.01, 0.01, 0.005, 0.005, 0.01};
    for (int i = 0; i < 8; i++) {
        expect_constant(net, layers[i], 1, bias[i]);
        expect_sd(net, layers[i], sd[i]);
    }
    dlg_net_destroy(net);
}

/* bvlc_googlenet/train_val.prototxt: xavier everywhere; convolution
 * biases 0.2, the classifier's 0 (loss3/classifier: bias_filler constant
 * 0).  Caffe's xavier is U(+-sqrt(3 / fan_in)): sd 1/sqrt(fan_in). */
static void test_fillers_googlenet(void **st)
{
    dlg_net *net = planned("googlenet", 0);
    expect_constant(net, "conv1/7x7_s2", 1, 0.2);
    expect_constant(net, "inception_4e/5x5", 1, 0.2);
    expect_constant(net, "inception_5b/pool_proj", 1, 0.2);
    expect_constant(net, "loss3/classifier", 1, 0);
    expect_sd(net, "conv1/7x7_s2", 1 / sqrt(3 * 7 * 7));
    expect_sd(net, "loss3/classifier", 1 / sqrt(1024));
    dlg_net_destroy(net);
    net = planned("googlenet-aux", 0); /* loss1/conv, loss1/fc 0.2; loss1/classifier 0 */
    expect_constant(net, "loss1/conv", 1, 0.2);
    expect_constant(net, "loss2/fc", 1, 0.2);
    expect_constant(net, "loss1/classifier", 1, 0);
    expect_constant(net, "loss2/classifier", 1, 0);
    expect_constant(net, "inception_4b/1x1", 1, 0.2);
    expect_sd(net, "loss1/fc", 1 / sqrt(2048));
    dlg_net_destroy(net);
}

/* ResNet: msra (He) N(0, 2 / fan_in) convolutions without bias, batch norm
 * gamma 1 beta 0; the classifier gaussian 0.01, bias 0. */
static void test_fillers_resnet50(void **st)
{
    dlg_net *net = planned("resnet50", 64);
    expect_sd(net, "conv1", sqrt(2.0 / (3 * 7 * 7)));
    expect_sd(net, "res4a_branch2b", sqrt(2.0 / (256 * 3 * 3)));
    assert_true(dlg_net_param(net, "conv1", 1) < 0); /* no bias before batch norm */
    expect_constant(net, "bn_conv1", 0, 1);
    expect_constant(net, "bn_conv1", 1, 0);
    expect_sd(net, "fc1000", 0.01);
    expect_constant(net, "fc1000", 1, 0);
    dlg_net_destroy(net);
}

/* Shapes at a crop of `model`, as torchvision gives them. */
static void expect_shape(dlg_net *net, const char *blob, int c, int h, int w)
{
    dlg_shape s;
    int b = dlg_net_blob(net, blob);
    if (b < 0)
        fail_msg("no blob '%s'", blob);
    assert_int_equal(dlg_net_shape(net, b, &s), 0);
    if (s.d[1] != c || s.d[2] != h || s.d[3] != w)
        fail_msg("%s: %lldx%lldx%lld, torchvision %dx%dx%d", blob, (long long)s.d[1],
                 (long long)s.d[2], (long long)s.d[3], c, h, w);
}

/* The error building `model` at `crop` gives; "" if it builds. */
static const char *crop_error(const char *model, int crop, char *buf, size_t n)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, model), 0);
    int rc = dlg_model_build_crop(net, model, 1, 10, crop);
    snprintf(buf, n, "%s", rc < 0 || dlg_net_status(net) < 0 ? dlg_net_error(net) : "");
    dlg_net_destroy(net);
    return buf;
}

/* The grid after each of torchvision's Inception-v3 reductions at a crop
 * (its formula, floor((H + 2p - k) / s) + 1 for every conv and pool):
 *   Conv2d_1a 3/2 -> a = (crop - 3) / 2 + 1; Conv2d_2a 3/1 -> a - 2
 *   (2b keeps it); maxpool1 3/2 -> m1 = (a - 2 - 3) / 2 + 1;
 *   Conv2d_4a 3/1 -> m1 - 2; maxpool2 3/2 -> m2 = (m1 - 2 - 3) / 2 + 1
 *   (Mixed_5b-5d keep it); Mixed_6a 3/2 -> g6 = (m2 - 3) / 2 + 1 (6b-6e
 *   keep it); Mixed_7a 3/2 -> g7 = (g6 - 3) / 2 + 1; aux: avg 5/3 then a
 *   5x5 conv -> (g6 - 5) / 3 + 1 - 4.
 *          a    m1  m2  g6  g7  aux
 *   101:   50   23  10   4   1   -
 *   299:  149   73  35  17   8   1
 *   301:  150   73  35  17   8   1   (ceil mode: maxpool1 74)
 *   320:  159   78  37  18   8   1   (ceil mode: maxpool2 38)
 *   331:  165   81  39  19   9   -
 *   395:  197   97  47  23  11   3 */
static const struct {
    int crop, m1, m2, g6, g7;
} inception_grids[] = {{101, 23, 10, 4, 1}, {299, 73, 35, 17, 8}, {301, 73, 35, 17, 8},
                       {320, 78, 37, 18, 8}, {331, 81, 39, 19, 9}};

/* Inception-v3 pools in floor mode, as torchvision: every crop from 75
 * builds its grids (301 used to be refused, its maxpool1 giving 74 in
 * Caffe's ceil mode; 320 the same at maxpool2).  The aux head ends in
 * torchvision's adaptive average pool: at 395 its classifier still takes
 * 768 features; below 299 its 5x5 conv does not fit, named in the error. */
static void test_inception_crops(void **st)
{
    char err[512];
    for (size_t i = 0; i < sizeof inception_grids / sizeof inception_grids[0]; i++) {
        dlg_net *net = build("inception-v3", inception_grids[i].crop);
        expect_shape(net, "maxpool1", 64, inception_grids[i].m1, inception_grids[i].m1);
        expect_shape(net, "maxpool2", 192, inception_grids[i].m2, inception_grids[i].m2);
        expect_shape(net, "Mixed_5d.concat", 288, inception_grids[i].m2, inception_grids[i].m2);
        expect_shape(net, "Mixed_6e.concat", 768, inception_grids[i].g6, inception_grids[i].g6);
        expect_shape(net, "Mixed_7c.concat", 2048, inception_grids[i].g7, inception_grids[i].g7);
        dlg_net_destroy(net);
    }
    assert_string_equal(crop_error("inception-v3", 75, err, sizeof err), "");
    printf("  74: %s\n", crop_error("inception-v3", 74, err, sizeof err));
    assert_non_null(strstr(err, "Mixed_7a"));
    assert_string_equal(crop_error("inception-v3-aux", 301, err, sizeof err), "");
    dlg_net *net = build("inception-v3-aux", 320);
    expect_shape(net, "AuxLogits.conv1.relu", 768, 1, 1);
    dlg_net_destroy(net);
    printf("  aux 298: %s\n", crop_error("inception-v3-aux", 298, err, sizeof err));
    assert_non_null(strstr(err, "AuxLogits.conv1"));
    net = build("inception-v3-aux", 395);
    expect_shape(net, "AuxLogits.conv1.relu", 768, 3, 3);
    dlg_layer_info li = {0};
    for (int i = 0; i < dlg_net_layer_count(net) && !(li.name && !strcmp(li.name, "aux/logits")); i++)
        assert_int_equal(dlg_net_layer_info(net, i, &li), 0);
    assert_string_equal(li.name, "aux/logits");
    assert_int_equal(li.params, 768 * 1000 + 1000);
    dlg_net_destroy(net);
}

/* ResNet-50 v1.5's stem pool is torchvision's (3/2 pad 1, floor) at every
 * crop: at 225 conv1 gives 113, pooled to 57 (Caffe's pad 0 gave 56, and
 * a smaller grid, fewer FLOPs, from there on). */
static void test_resnet50_odd_crop(void **st)
{
    dlg_net *net = build("resnet50", 225);
    expect_shape(net, "conv1", 64, 113, 113);
    expect_shape(net, "pool1", 64, 57, 57);
    expect_shape(net, "res3d_relu", 512, 29, 29);
    expect_shape(net, "res5c_relu", 2048, 8, 8);
    dlg_net_destroy(net);
    net = build("resnet50", 224);
    expect_shape(net, "pool1", 64, 56, 56);
    dlg_net_destroy(net);
}

/* The stem pool's windows, not only its grid, are torchvision's on an even
 * grid too: at crop 32 conv1 gives 16x16 and pool1 output (i, j) is the max
 * of conv1 rows and columns 2i-1 .. 2i+1 (pad 1).  Caffe's pad-0 pool gave
 * the same 8x8 grid from windows 2i .. 2i+2. */
static void test_resnet50_stem_windows(void **st)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "resnet50"), 0);
    assert_true(dlg_model_build_crop(net, "resnet50", 1, 2, 32) >= 0);
    int c = dlg_net_blob(net, "conv1_relu"), p = dlg_net_blob(net, "pool1");
    dlg_plan_opts o = {.backend = "ref", .seed = 5, .keep_all = true};
    if (dlg_net_plan(net, &o) < 0)
        fail_msg("%s", dlg_net_error(net));
    float in[3 * 32 * 32], x[64 * 16 * 16], y[64 * 8 * 8];
    for (int i = 0; i < 3 * 32 * 32; i++)
        in[i] = (float)sin(i * 0.37);
    assert_int_equal(dlg_net_write(net, dlg_net_blob(net, "data"), DLG_DATA, in, 3 * 32 * 32), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, c, DLG_DATA, x, 64 * 16 * 16), 0);
    assert_int_equal(dlg_net_read(net, p, DLG_DATA, y, 64 * 8 * 8), 0);
    for (int ch = 0; ch < 64; ch++)
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++) {
                float m = -INFINITY;
                for (int h = 2 * i - 1; h <= 2 * i + 1; h++)
                    for (int w = 2 * j - 1; w <= 2 * j + 1; w++)
                        if (h >= 0 && w >= 0 && h < 16 && w < 16)
                            m = fmaxf(m, x[(ch * 16 + h) * 16 + w]);
                if (y[(ch * 8 + i) * 8 + j] != m)
                    fail_msg("pool1[%d][%d][%d] = %g, torchvision's window gives %g", ch, i, j,
                             y[(ch * 8 + i) * 8 + j], m);
            }
    dlg_net_destroy(net);
}

/* A model owns its rounding: GoogLeNet built on a net left in floor mode
 * is still Caffe's (pool1 56x56; floor mode gives 55x55). */
static void test_caffe_model_keeps_ceil(void **st)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "googlenet"), 0);
    dlg_net_set_pool_rounding(net, DLG_POOL_FLOOR);
    assert_true(dlg_model_build(net, "googlenet", 1, 10) >= 0);
    expect_shape(net, "pool1/3x3_s2", 64, 56, 56);
    dlg_net_destroy(net);
}

static void test_unknown(void **st)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "x"), 0);
    assert_int_equal(dlg_model_build(net, "lenet", 1, 10), -DLG_EINVAL);
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_step_macs),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_head_layers),
        cmocka_unit_test(test_fillers_alexnet),
        cmocka_unit_test(test_fillers_googlenet),
        cmocka_unit_test(test_fillers_resnet50),
        cmocka_unit_test(test_inception_crops),
        cmocka_unit_test(test_resnet50_odd_crop),
        cmocka_unit_test(test_resnet50_stem_windows),
        cmocka_unit_test(test_caffe_model_keeps_ceil),
        cmocka_unit_test(test_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
