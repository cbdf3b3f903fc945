/* Inception-v3 as torchvision builds it (Szegedy et al. 2015, "Rethinking
 * the Inception Architecture"): every convolution is bias-free and followed
 * by batch-norm (eps 1e-3) and ReLU; blocks A (5x5 and double 3x3), B and D
 * (grid reductions), C (factorised 1x7/7x1), E (split 1x3/3x1).  Layer
 * names follow torchvision's module names.  Every pool rounds down, as
 * torchvision's (PyTorch's floor mode), so any crop gives its grids.
 * Inputs "data" (299, or the crop given: 75 is the smallest, 299 with the
 * aux head) and "label". */
#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <stdio.h>

/* BasicConv2d: conv (kh x kw, stride, pads) -> batch-norm -> relu */
static int bconv(dlg_net *net, const char *blk, const char *name, int x, int out, int kh, int kw,
                 int s, int ph, int pw)
{
    char c[128], b[128], r[128];
    snprintf(c, sizeof c, "%s%s%s.conv", blk, *blk ? "." : "", name);
    snprintf(b, sizeof b, "%s%s%s.bn", blk, *blk ? "." : "", name);
    snprintf(r, sizeof r, "%s%s%s.relu", blk, *blk ? "." : "", name);
    dlg_conv_spec cs = {out, kh, kw, s, s, ph, pw, 1, 1, 1, true};
    return dlg_relu(net, r, dlg_batchnorm(net, b, dlg_conv_ex(net, c, x, &cs), 1e-3f));
}

static int sq(dlg_net *net, const char *blk, const char *name, int x, int out, int k, int s, int p)
{
    return bconv(net, blk, name, x, out, k, k, s, p, p);
}

static int cat(dlg_net *net, const char *blk, const char *what, int n, const int *xs)
{
    char name[128];
    snprintf(name, sizeof name, "%s.%s", blk, what);
    return dlg_concat(net, name, n, xs);
}

static int avg_branch(dlg_net *net, const char *blk, int x, int out)
{
    char p[128];
    snprintf(p, sizeof p, "%s.branch_pool.avg", blk);
    /* 3x3 stride 1 pad 1: the divisor is 9 everywhere, torchvision's
     * count_include_pad */
    return sq(net, blk, "branch_pool", dlg_avg_pool(net, p, x, 3, 1, 1), out, 1, 1, 0);
}

static int block_a(dlg_net *net, const char *blk, int x, int pool_features)
{
    int br[4];
    br[0] = sq(net, blk, "branch1x1", x, 64, 1, 1, 0);
    br[1] = sq(net, blk, "branch5x5_2", sq(net, blk, "branch5x5_1", x, 48, 1, 1, 0), 64, 5, 1, 2);
    int d = sq(net, blk, "branch3x3dbl_1", x, 64, 1, 1, 0);
    d = sq(net, blk, "branch3x3dbl_2", d, 96, 3, 1, 1);
    br[2] = sq(net, blk, "branch3x3dbl_3", d, 96, 3, 1, 1);
    br[3] = avg_branch(net, blk, x, pool_features);
    return cat(net, blk, "concat", 4, br);
}

static int max_branch(dlg_net *net, const char *blk, int x)
{
    char p[128];
    snprintf(p, sizeof p, "%s.branch_pool.max", blk);
    return dlg_max_pool(net, p, x, 3, 2, 0);
}

static int block_b(dlg_net *net, const char *blk, int x)
{
    int br[3];
    br[0] = sq(net, blk, "branch3x3", x, 384, 3, 2, 0);
    int d = sq(net, blk, "branch3x3dbl_1", x, 64, 1, 1, 0);
    d = sq(net, blk, "branch3x3dbl_2", d, 96, 3, 1, 1);
    br[1] = sq(net, blk, "branch3x3dbl_3", d, 96, 3, 2, 0);
    br[2] = max_branch(net, blk, x);
    return cat(net, blk, "concat", 3, br);
}

/* 1x7 then 7x1 (or the other way round) */
static int row(dlg_net *net, const char *blk, const char *name, int x, int out)
{
    return bconv(net, blk, name, x, out, 1, 7, 1, 0, 3);
}

static int col(dlg_net *net, const char *blk, const char *name, int x, int out)
{
    return bconv(net, blk, name, x, out, 7, 1, 1, 3, 0);
}

static int block_c(dlg_net *net, const char *blk, int x, int c7)
{
    int br[4];
    br[0] = sq(net, blk, "branch1x1", x, 192, 1, 1, 0);
    int b = sq(net, blk, "branch7x7_1", x, c7, 1, 1, 0);
    b = row(net, blk, "branch7x7_2", b, c7);
    br[1] = col(net, blk, "branch7x7_3", b, 192);
    int d = sq(net, blk, "branch7x7dbl_1", x, c7, 1, 1, 0);
    d = col(net, blk, "branch7x7dbl_2", d, c7);
    d = row(net, blk, "branch7x7dbl_3", d, c7);
    d = col(net, blk, "branch7x7dbl_4", d, c7);
    br[2] = row(net, blk, "branch7x7dbl_5", d, 192);
    br[3] = avg_branch(net, blk, x, 192);
    return cat(net, blk, "concat", 4, br);
}

static int block_d(dlg_net *net, const char *blk, int x)
{
    int br[3];
    br[0] = sq(net, blk, "branch3x3_2", sq(net, blk, "branch3x3_1", x, 192, 1, 1, 0), 320, 3, 2, 0);
    int b = sq(net, blk, "branch7x7x3_1", x, 192, 1, 1, 0);
    b = row(net, blk, "branch7x7x3_2", b, 192);
    b = col(net, blk, "branch7x7x3_3", b, 192);
    br[1] = sq(net, blk, "branch7x7x3_4", b, 192, 3, 2, 0);
    br[2] = max_branch(net, blk, x);
    return cat(net, blk, "concat", 3, br);
}

/* 1x3 and 3x1 side by side on the same input */
static int split13(dlg_net *net, const char *blk, const char *a, const char *b, const char *what,
                   int x)
{
    int two[2] = {bconv(net, blk, a, x, 384, 1, 3, 1, 0, 1), bconv(net, blk, b, x, 384, 3, 1, 1, 1, 0)};
    return cat(net, blk, what, 2, two);
}

static int block_e(dlg_net *net, const char *blk, int x)
{
    int br[4];
    br[0] = sq(net, blk, "branch1x1", x, 320, 1, 1, 0);
    br[1] = split13(net, blk, "branch3x3_2a", "branch3x3_2b", "branch3x3",
                    sq(net, blk, "branch3x3_1", x, 384, 1, 1, 0));
    int d = sq(net, blk, "branch3x3dbl_1", x, 448, 1, 1, 0);
    d = sq(net, blk, "branch3x3dbl_2", d, 384, 3, 1, 1);
    br[2] = split13(net, blk, "branch3x3dbl_3a", "branch3x3dbl_3b", "branch3x3dbl", d);
    br[3] = avg_branch(net, blk, x, 192);
    return cat(net, blk, "concat", 4, br);
}

/* InceptionAux: avgpool 5/3 -> 1x1 128 -> 5x5 768 -> fc, trained through
 * its own softmax loss weighted 0.4, as torchvision's reference training
 * script weights it (loss = main + 0.4 * aux). */
static int aux_head(dlg_net *net, int x, int y, int classes)
{
    x = dlg_avg_pool(net, "AuxLogits.avg", x, 5, 3, 0);
    x = sq(net, "AuxLogits", "conv0", x, 128, 1, 1, 0);
    x = sq(net, "AuxLogits", "conv1", x, 768, 5, 1, 0);
    /* torchvision's adaptive_avg_pool2d to 1x1: past 299 the 5x5 conv
     * leaves a larger grid, and the classifier still sees 768 features */
    x = dlg_global_avg_pool(net, "AuxLogits.pool", x);
    x = dlg_fc(net, "aux/logits", x, classes);
    return dlg_softmax_loss_weighted(net, "aux/loss", x, y, 0.4f);
}

int dlg_model_inception_v3(dlg_net *net, int n, int classes, int crop, bool aux)
{
    crop = crop > 0 ? crop : 299;
    dlg_net_set_pool_rounding(net, DLG_POOL_FLOOR);
    int x = dlg_input(net, "data", n, 3, crop, crop), y = dlg_labels(net, "label", n);
    /* torchvision draws conv weights from a truncated normal (sd 0.1);
     * He init keeps deep stacks trainable from scratch here */
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_MSRA, 0}, (dlg_filler){DLG_FILL_CONSTANT, 0});
    x = sq(net, "", "Conv2d_1a_3x3", x, 32, 3, 2, 0);
    x = sq(net, "", "Conv2d_2a_3x3", x, 32, 3, 1, 0);
    x = sq(net, "", "Conv2d_2b_3x3", x, 64, 3, 1, 1);
    x = dlg_max_pool(net, "maxpool1", x, 3, 2, 0);
    x = sq(net, "", "Conv2d_3b_1x1", x, 80, 1, 1, 0);
    x = sq(net, "", "Conv2d_4a_3x3", x, 192, 3, 1, 0);
    x = dlg_max_pool(net, "maxpool2", x, 3, 2, 0);
    x = block_a(net, "Mixed_5b", x, 32);
    x = block_a(net, "Mixed_5c", x, 64);
    x = block_a(net, "Mixed_5d", x, 64);
    x = block_b(net, "Mixed_6a", x);
    x = block_c(net, "Mixed_6b", x, 128);
    x = block_c(net, "Mixed_6c", x, 160);
    x = block_c(net, "Mixed_6d", x, 160);
    x = block_c(net, "Mixed_6e", x, 192);
    if (aux)
        aux_head(net, x, y, classes);
    x = block_d(net, "Mixed_7a", x);
    x = block_e(net, "Mixed_7b", x);
    x = block_e(net, "Mixed_7c", x);
    x = dlg_global_avg_pool(net, "avgpool", x);
    x = dlg_dropout(net, "dropout", x, 0.5f);
    dlg_net_set_fillers(net, (dlg_filler){DLG_FILL_GAUSSIAN, 0.01f},
                        (dlg_filler){DLG_FILL_CONSTANT, 0});
    x = dlg_fc(net, "fc", x, classes);
    return dlg_softmax_loss(net, "loss", x, y);
}
