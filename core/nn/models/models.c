/* The Caffe-era reference CNNs as builder code: BVLC AlexNet and
 * GoogLeNet (googlenet-aux: with its two auxiliary classifiers), ResNet-50
 * v1.5 and VGG16, each ending in a softmax loss.  The Caffe nets pool in
 * Caffe's ceil mode, ResNet-50 v1.5 (torchvision's) in floor mode.
 * Inputs are named "data" and "label". */
#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <stdio.h>
#include <string.h>

/* buf = a + b; names longer than the buffer are cut (and then clash,
 * which the builder reports) */
static const char *join(char *buf, size_t n, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    la = la < n - 1 ? la : n - 1;
    lb = lb < n - 1 - la ? lb : n - 1 - la;
    memcpy(buf, a, la);
    memcpy(buf + la, b, lb);
    buf[la + lb] = '\0';
    return buf;
}

static dlg_filler gauss(float sd) { return (dlg_filler){DLG_FILL_GAUSSIAN, sd}; }
static dlg_filler constant(float v) { return (dlg_filler){DLG_FILL_CONSTANT, v}; }

static int conv_relu(dlg_net *net, const char *name, int x, int out, int k, int s, int p, int g)
{
    char r[96];
    join(r, sizeof r, name, "/relu");
    return dlg_relu(net, r, dlg_conv(net, name, x, out, k, s, p, g));
}

static int fc_relu_drop(dlg_net *net, const char *name, int x, int out, float drop)
{
    char r[96], d[96];
    join(r, sizeof r, name, "/relu");
    join(d, sizeof d, name, "/drop");
    return dlg_dropout(net, d, dlg_relu(net, r, dlg_fc(net, name, x, out)), drop);
}

/* BVLC AlexNet (bvlc_alexnet train_val): 227 crop, LRN after conv1/2,
 * two groups in conv2/4/5, fillers as the prototxt. */
static int alexnet(dlg_net *net, int n, int classes, int crop)
{
    int x = dlg_input(net, "data", n, 3, crop, crop), y = dlg_labels(net, "label", n);
    dlg_net_set_pool_rounding(net, DLG_POOL_CEIL); /* Caffe's, whatever the net had */
    dlg_net_set_fillers(net, gauss(0.01f), constant(0));
    x = conv_relu(net, "conv1", x, 96, 11, 4, 0, 1);
    x = dlg_lrn(net, "norm1", x, 5, 1e-4f, 0.75f, 1.0f);
    x = dlg_max_pool(net, "pool1", x, 3, 2, 0);
    dlg_net_set_fillers(net, gauss(0.01f), constant(0.1f));
    x = conv_relu(net, "conv2", x, 256, 5, 1, 2, 2);
    x = dlg_lrn(net, "norm2", x, 5, 1e-4f, 0.75f, 1.0f);
    x = dlg_max_pool(net, "pool2", x, 3, 2, 0);
    dlg_net_set_fillers(net, gauss(0.01f), constant(0));
    x = conv_relu(net, "conv3", x, 384, 3, 1, 1, 1);
    dlg_net_set_fillers(net, gauss(0.01f), constant(0.1f));
    x = conv_relu(net, "conv4", x, 384, 3, 1, 1, 2);
    x = conv_relu(net, "conv5", x, 256, 3, 1, 1, 2);
    x = dlg_max_pool(net, "pool5", x, 3, 2, 0);
    dlg_net_set_fillers(net, gauss(0.005f), constant(0.1f));
    x = fc_relu_drop(net, "fc6", x, 4096, 0.5f);
    x = fc_relu_drop(net, "fc7", x, 4096, 0.5f);
    dlg_net_set_fillers(net, gauss(0.01f), constant(0));
    x = dlg_fc(net, "fc8", x, classes);
    return dlg_softmax_loss(net, "loss", x, y);
}

/* One GoogLeNet inception module: 1x1, 1x1->3x3, 1x1->5x5, pool->1x1. */
static int inception(dlg_net *net, const char *m, int x, int c1, int r3, int c3, int r5, int c5,
                     int pp)
{
    char a[96], b[96];
    int br[4];
    join(a, sizeof a, m, "/1x1");
    br[0] = conv_relu(net, a, x, c1, 1, 1, 0, 1);
    join(a, sizeof a, m, "/3x3_reduce");
    join(b, sizeof b, m, "/3x3");
    br[1] = conv_relu(net, b, conv_relu(net, a, x, r3, 1, 1, 0, 1), c3, 3, 1, 1, 1);
    join(a, sizeof a, m, "/5x5_reduce");
    join(b, sizeof b, m, "/5x5");
    br[2] = conv_relu(net, b, conv_relu(net, a, x, r5, 1, 1, 0, 1), c5, 5, 1, 2, 1);
    join(a, sizeof a, m, "/pool");
    join(b, sizeof b, m, "/pool_proj");
    br[3] = conv_relu(net, b, dlg_max_pool(net, a, x, 3, 1, 1), pp, 1, 1, 0, 1);
    join(a, sizeof a, m, "/output");
    return dlg_concat(net, a, 4, br);
}

/* One of BVLC GoogLeNet's auxiliary classifiers (loss1 after
 * inception_4a, loss2 after 4d): average pool 5/3, 1x1 conv 128, fc 1024,
 * dropout 0.7, classifier, its loss weighted 0.3 as train_val has it. */
static int googlenet_aux(dlg_net *net, const char *m, int x, int y, int classes)
{
    char a[96];
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_XAVIER, 0}, constant(0.2f));
    x = dlg_avg_pool(net, join(a, sizeof a, m, "/ave_pool"), x, 5, 3, 0);
    x = conv_relu(net, join(a, sizeof a, m, "/conv"), x, 128, 1, 1, 0, 1);
    x = fc_relu_drop(net, join(a, sizeof a, m, "/fc"), x, 1024, 0.7f);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_XAVIER, 0}, constant(0));
    x = dlg_fc(net, join(a, sizeof a, m, "/classifier"), x, classes);
    int loss = dlg_softmax_loss_weighted(net, join(a, sizeof a, m, "/loss"), x, y, 0.3f);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_XAVIER, 0}, constant(0.2f));
    return loss;
}

/* BVLC GoogLeNet with its LRNs: the main classifier, plus with aux the two
 * auxiliary heads train_val trains with (published sizes leave them out). */
static int googlenet_net(dlg_net *net, int n, int classes, int crop, bool aux)
{
    int x = dlg_input(net, "data", n, 3, crop, crop), y = dlg_labels(net, "label", n);
    dlg_net_set_pool_rounding(net, DLG_POOL_CEIL);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_XAVIER, 0}, constant(0.2f));
    x = conv_relu(net, "conv1/7x7_s2", x, 64, 7, 2, 3, 1);
    x = dlg_max_pool(net, "pool1/3x3_s2", x, 3, 2, 0);
    x = dlg_lrn(net, "pool1/norm1", x, 5, 1e-4f, 0.75f, 1.0f);
    x = conv_relu(net, "conv2/3x3_reduce", x, 64, 1, 1, 0, 1);
    x = conv_relu(net, "conv2/3x3", x, 192, 3, 1, 1, 1);
    x = dlg_lrn(net, "conv2/norm2", x, 5, 1e-4f, 0.75f, 1.0f);
    x = dlg_max_pool(net, "pool2/3x3_s2", x, 3, 2, 0);
    x = inception(net, "inception_3a", x, 64, 96, 128, 16, 32, 32);
    x = inception(net, "inception_3b", x, 128, 128, 192, 32, 96, 64);
    x = dlg_max_pool(net, "pool3/3x3_s2", x, 3, 2, 0);
    x = inception(net, "inception_4a", x, 192, 96, 208, 16, 48, 64);
    if (aux)
        googlenet_aux(net, "loss1", x, y, classes);
    x = inception(net, "inception_4b", x, 160, 112, 224, 24, 64, 64);
    x = inception(net, "inception_4c", x, 128, 128, 256, 24, 64, 64);
    x = inception(net, "inception_4d", x, 112, 144, 288, 32, 64, 64);
    if (aux)
        googlenet_aux(net, "loss2", x, y, classes);
    x = inception(net, "inception_4e", x, 256, 160, 320, 32, 128, 128);
    x = dlg_max_pool(net, "pool4/3x3_s2", x, 3, 2, 0);
    x = inception(net, "inception_5a", x, 256, 160, 320, 32, 128, 128);
    x = inception(net, "inception_5b", x, 384, 192, 384, 48, 128, 128);
    x = dlg_avg_pool(net, "pool5/7x7_s1", x, 7, 1, 0);
    x = dlg_dropout(net, "pool5/drop_7x7_s1", x, 0.4f);
    /* the prototxt's classifiers start from bias 0, its convolutions 0.2 */
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_XAVIER, 0}, constant(0));
    x = dlg_fc(net, "loss3/classifier", x, classes);
    return dlg_softmax_loss(net, "loss3/loss3", x, y);
}

static int googlenet(dlg_net *net, int n, int classes, int crop)
{
    return googlenet_net(net, n, classes, crop, false);
}

static int googlenet_with_aux(dlg_net *net, int n, int classes, int crop)
{
    return googlenet_net(net, n, classes, crop, true);
}

static int conv_bn(dlg_net *net, const char *name, int x, int out, int k, int s, int p, bool relu)
{
    char b[96], r[96];
    dlg_conv_spec cs = {out, k, k, s, s, p, p, 1, 1, 1, true};
    join(b, sizeof b, "bn_", name);
    join(r, sizeof r, name, "_relu");
    x = dlg_batchnorm(net, b, dlg_conv_ex(net, name, x, &cs), 1e-5f);
    return relu ? dlg_relu(net, r, x) : x;
}

/* ResNet v1.5 bottleneck: the stride sits on the 3x3 convolution. */
static int bottleneck(dlg_net *net, const char *blk, int x, int width, int stride, bool project)
{
    char a[96], b[96], c[96], p[96], s[96], r[96];
    char pre[32];
    join(pre, sizeof pre, "res", blk);
    join(a, sizeof a, pre, "_branch2a");
    join(b, sizeof b, pre, "_branch2b");
    join(c, sizeof c, pre, "_branch2c");
    join(p, sizeof p, pre, "_branch1");
    join(s, sizeof s, pre, "");
    join(r, sizeof r, pre, "_relu");
    int h = conv_bn(net, a, x, width, 1, 1, 0, true);
    h = conv_bn(net, b, h, width, 3, stride, 1, true);
    h = conv_bn(net, c, h, 4 * width, 1, 1, 0, false);
    int sc = project ? conv_bn(net, p, x, 4 * width, 1, stride, 0, false) : x;
    return dlg_relu(net, r, dlg_add(net, s, h, sc));
}

static int resnet50(dlg_net *net, int n, int classes, int crop)
{
    static const int blocks[4] = {3, 4, 6, 3};
    int x = dlg_input(net, "data", n, 3, crop, crop), y = dlg_labels(net, "label", n);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_MSRA, 0}, constant(0));
    x = conv_bn(net, "conv1", x, 64, 7, 2, 3, true);
    /* torchvision's stem pool, 3/2 pad 1 in floor mode: 112 -> 56 at 224,
     * 113 -> 57 at 225 (its only pool but the global one) */
    dlg_net_set_pool_rounding(net, DLG_POOL_FLOOR);
    x = dlg_max_pool(net, "pool1", x, 3, 2, 1);
    for (int st = 0; st < 4; st++)
        for (int i = 0; i < blocks[st]; i++) {
            char blk[16];
            snprintf(blk, sizeof blk, "%d%c", st + 2, 'a' + i);
            x = bottleneck(net, blk, x, 64 << st, i == 0 && st > 0 ? 2 : 1, i == 0);
        }
    x = dlg_global_avg_pool(net, "pool5", x);
    dlg_net_set_fillers(net, gauss(0.01f), constant(0));
    x = dlg_fc(net, "fc1000", x, classes);
    return dlg_softmax_loss(net, "prob", x, y);
}

static int vgg16(dlg_net *net, int n, int classes, int crop)
{
    static const int cfg[5][2] = {{2, 64}, {2, 128}, {3, 256}, {3, 512}, {3, 512}};
    int x = dlg_input(net, "data", n, 3, crop, crop), y = dlg_labels(net, "label", n);
    dlg_net_set_pool_rounding(net, DLG_POOL_CEIL);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_XAVIER, 0}, constant(0));
    for (int st = 0; st < 5; st++) {
        for (int i = 0; i < cfg[st][0]; i++) {
            char name[32];
            snprintf(name, sizeof name, "conv%d_%d", st + 1, i + 1);
            x = conv_relu(net, name, x, cfg[st][1], 3, 1, 1, 1);
        }
        char pool[16];
        snprintf(pool, sizeof pool, "pool%d", st + 1);
        x = dlg_max_pool(net, pool, x, 2, 2, 0);
    }
    dlg_net_set_fillers(net, gauss(0.005f), constant(0.1f));
    x = fc_relu_drop(net, "fc6", x, 4096, 0.5f);
    x = fc_relu_drop(net, "fc7", x, 4096, 0.5f);
    dlg_net_set_fillers(net, gauss(0.01f), constant(0));
    x = dlg_fc(net, "fc8", x, classes);
    return dlg_softmax_loss(net, "loss", x, y);
}

int dlg_model_alexnet(dlg_net *net, int n, int classes) { return alexnet(net, n, classes, 227); }
int dlg_model_googlenet(dlg_net *net, int n, int classes) { return googlenet(net, n, classes, 224); }
int dlg_model_resnet50(dlg_net *net, int n, int classes) { return resnet50(net, n, classes, 224); }
int dlg_model_vgg16(dlg_net *net, int n, int classes) { return vgg16(net, n, classes, 224); }

static int inception_v3(dlg_net *net, int n, int classes, int crop)
{
    return dlg_model_inception_v3(net, n, classes, crop, false);
}

static int inception_v3_aux(dlg_net *net, int n, int classes, int crop)
{
    return dlg_model_inception_v3(net, n, classes, crop, true);
}

static const struct {
    const char *name;
    int (*build)(dlg_net *, int, int, int);
    int crop;
} models[] = {{"alexnet", alexnet, 227},
              {"googlenet", googlenet, 224},
              {"googlenet-aux", googlenet_with_aux, 224},
              {"resnet50", resnet50, 224},
              {"vgg16", vgg16, 224},
              {"inception-v3", inception_v3, 299}, /* inception_v3.c */
              {"inception-v3-aux", inception_v3_aux, 299}};

int dlg_model_build_crop(dlg_net *net, const char *model, int n, int classes, int crop)
{
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (strcmp(model, models[i].name) == 0)
            return models[i].build(net, n, classes, crop > 0 ? crop : models[i].crop);
    return -DLG_EINVAL;
}

int dlg_model_build(dlg_net *net, const char *model, int n, int classes)
{
    return dlg_model_build_crop(net, model, n, classes, 0);
}
