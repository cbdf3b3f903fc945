/* Data-parallel training across ranks: the trained parameters' gradients
 * summed over the ranks through the workload's callback (an allreduce)
 * between backward and the clip/update of a train step; and a hash of the
 * weights, to check that the ranks still agree.
 *
 * The sum stays in the gradients: the update divides by the ranks instead
 * (dlg_net_reduced_sgd: lr / N and weight decay x N give Caffe's SGD of the
 * mean gradient, bit for bit when N is a power of two) and so does the
 * clip's norm (clip.c's grad_factor), so no pass over the gradients scales
 * them.  A large gradient (DLG_NN_REDUCE_INPLACE floats or more, e.g.
 * AlexNet's fc6) is summed where it lies, in calls of at most a bucket: no
 * pass at all.  The small ones are seen as one virtual array (trained blobs
 * in blob order, each dlg_tensor_elems floats, a blocked layout's zero
 * padding included) cut into buckets of the buffer allocated when the
 * callback is set, each packed, summed and unpacked, so that a net of many
 * small tensors (ResNet's batch norms) makes few calls.  A step allocates
 * nothing.  Host-memory backends only (cpu, ref): the gradients are read
 * and written in place.  (Packing AlexNet's 61 M floats and unpacking them
 * scaled cost ~45 ms a step on one thread, a fifth of its batch-8 step.)
 * Device memory (cuda) sums with the backend's collectives instead:
 * dev_reduce.c. */
#include "net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 4096
/* From here a gradient is reduced in place (an eighth of a bucket: the
 * packed rest stays a few calls). */
#define DLG_NN_REDUCE_INPLACE (DLG_NN_REDUCE_BUCKET / 8)

static bool in_place(const dlg_blob *b)
{
    return dlg_tensor_elems(&b->t) >= (int64_t)DLG_NN_REDUCE_INPLACE;
}

/* Floats of the trained gradients that are packed (not in place). */
static int64_t packed_floats(const dlg_net *net)
{
    int64_t n = 0;
    for (int b = 0; b < net->nblobs; b++)
        if (dlg_blob_trained(&net->blobs[b]) && !in_place(&net->blobs[b]))
            n += dlg_tensor_elems(&net->blobs[b].t);
    return n;
}

static void free_host_reduce(dlg_net *net)
{
    free(net->reduce_buf);
    net->reduce_buf = NULL;
    net->reduce_cap = 0;
    net->reduce_fn = NULL;
    net->reduce_ctx = NULL;
    net->reduce_ranks = 0;
}

void dlg_net_free_reduce(dlg_net *net)
{
    free_host_reduce(net);
    dlg_net_clear_dev_reduce(net);
    /* the ctx closes with the memory, its communicator and graphs too */
    net->comm_ranks = net->comm_rank = 0;
    net->trained = net->dev_eager = false;
}

int dlg_net_set_grad_reduce(dlg_net *net, dlg_grad_reduce_fn fn, void *ctx, int ranks)
{
    if (net->err)
        return net->err;
    if (!fn) {
        free_host_reduce(net);
        return 0;
    }
    if (!net->planned || !net->train)
        return dlg_net_complain(net, DLG_EINVAL,
                                "nn: net '%s': a gradient reduce needs a net planned for training",
                                net->name);
    if (ranks < 1)
        return dlg_net_complain(net, DLG_EINVAL, "nn: net '%s': a gradient reduce over %d ranks",
                                net->name, ranks);
    if (!dlg_bk_host_memory(net->bk))
        return dlg_net_complain(net, DLG_ENOTSUP,
                                "nn: net '%s': backend %s keeps its gradients in device memory: "
                                "its ranks sum them there with dlg_net_set_device_reduce (NCCL), "
                                "not through a host callback",
                                net->name, net->bk->name);
    int64_t total = packed_floats(net);
    size_t cap = total < (int64_t)DLG_NN_REDUCE_BUCKET ? (size_t)total : DLG_NN_REDUCE_BUCKET;
    if (cap == 0)
        cap = 1;
    if (cap != net->reduce_cap) {
        float *buf = NULL;
        if (posix_memalign((void **)&buf, 64, cap * sizeof(float)) != 0)
            return dlg_net_complain(net, DLG_ENOMEM, "nn: out of memory for the gradient bucket");
        memset(buf, 0, cap * sizeof(float)); /* touched now, not in the first step */
        free(net->reduce_buf);
        net->reduce_buf = buf;
        net->reduce_cap = cap;
    }
    net->reduce_fn = fn;
    net->reduce_ctx = ctx;
    net->reduce_ranks = ranks;
    return 0;
}

/* Copies floats [off, off + len) of the packed gradients' virtual array
 * into buf (pack) or back from buf (unpack). */
static void move_range(dlg_net *net, int64_t off, int64_t len, float *buf, bool pack)
{
    int64_t at = 0; /* the current blob's start in the virtual array */
    for (int b = 0; b < net->nblobs && len > 0; b++) {
        const dlg_blob *bl = &net->blobs[b];
        if (!dlg_blob_trained(bl) || in_place(bl))
            continue;
        int64_t n = dlg_tensor_elems(&bl->t);
        if (off >= at + n) {
            at += n;
            continue;
        }
        int64_t from = off - at, k = n - from < len ? n - from : len;
        float *g = (float *)bl->t.diff + from;
        memcpy(pack ? buf : g, pack ? g : buf, (size_t)k * sizeof(float));
        buf += k;
        off += k;
        len -= k;
        at += n;
    }
}

/* The failed call's message in err (the callback said why on its own). */
static void reduce_failed(const dlg_net *net, const char *what, int64_t off, int64_t len,
                          int64_t total, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "nn: net '%s': summing the gradients across %d ranks failed (%s, floats %lld..%lld "
             "of %lld)",
             net->name, net->reduce_ranks, what, (long long)off, (long long)(off + len),
             (long long)total);
}

/* A large gradient summed where it lies, a bucket at a time. */
static int reduce_in_place(dlg_net *net, const dlg_blob *bl, char *err, size_t errlen)
{
    int64_t n = dlg_tensor_elems(&bl->t), cap = (int64_t)DLG_NN_REDUCE_BUCKET;
    float *g = bl->t.diff;
    for (int64_t off = 0; off < n; off += cap) {
        int64_t len = n - off < cap ? n - off : cap;
        int rc = net->reduce_fn(net->reduce_ctx, g + off, (size_t)len);
        if (rc < 0) {
            reduce_failed(net, bl->name, off, len, n, err, errlen);
            return rc;
        }
    }
    return 0;
}

int dlg_net_run_reduce(dlg_net *net, char *err, size_t errlen)
{
    if (!net->reduce_fn)
        return 0;
    for (int b = 0; b < net->nblobs; b++) {
        const dlg_blob *bl = &net->blobs[b];
        int rc = dlg_blob_trained(bl) && in_place(bl) ? reduce_in_place(net, bl, err, errlen) : 0;
        if (rc < 0)
            return rc;
    }
    int64_t total = packed_floats(net), cap = (int64_t)net->reduce_cap;
    for (int64_t off = 0; off < total; off += cap) {
        int64_t len = total - off < cap ? total - off : cap;
        move_range(net, off, len, net->reduce_buf, true);
        int rc = net->reduce_fn(net->reduce_ctx, net->reduce_buf, (size_t)len);
        if (rc < 0) {
            reduce_failed(net, "the packed gradients", off, len, total, err, errlen);
            return rc;
        }
        move_range(net, off, len, net->reduce_buf, false);
    }
    net->grad_sum = net->reduce_ranks;
    return 0;
}

dlg_sgd dlg_net_reduced_sgd(const dlg_net *net, const dlg_sgd *sgd)
{
    dlg_sgd s = *sgd;
    if (net->grad_sum > 1) { /* lr (S/N + wd w) = (lr/N) (S + (N wd) w) */
        s.lr /= (float)net->grad_sum;
        s.weight_decay *= (float)net->grad_sum;
    }
    return s;
}

/* Four 64-bit multiply-xor lanes over the 32-bit words, so the hash of a
 * large net is not one long dependency chain. */
typedef struct hash4 {
    uint64_t h[4];
} hash4;

static void hash_words(hash4 *s, const uint32_t *w, int64_t n)
{
    const uint64_t p = 0x100000001b3ull;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; k++)
            s->h[k] = (s->h[k] ^ w[i + k]) * p;
    for (; i < n; i++)
        s->h[0] = (s->h[0] ^ w[i]) * p;
}

static int hash_chunked(dlg_net *net, hash4 *s, const float *src, int64_t n)
{
    uint32_t buf[CHUNK];
    for (int64_t off = 0; off < n; off += CHUNK) {
        int64_t k = n - off < CHUNK ? n - off : CHUNK;
        int rc = net->bk->download(net->ctx, buf, src + off, (size_t)k * sizeof(float));
        if (rc < 0)
            return rc;
        hash_words(s, buf, k);
    }
    return 0;
}

int dlg_net_param_hash(dlg_net *net, uint64_t *hash)
{
    *hash = 0;
    int rc = dlg_net_ready_bound(net);
    if (rc)
        return rc;
    if (net->bk->sync && (rc = net->bk->sync(net->ctx)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: sync failed", net->bk->name);
    hash4 s = {{0xcbf29ce484222325ull, 1, 2, 3}};
    for (int b = 0; b < net->nblobs; b++) {
        const dlg_blob *bl = &net->blobs[b];
        if (!dlg_blob_trained(bl))
            continue;
        int64_t n = dlg_tensor_elems(&bl->t);
        if (dlg_bk_host_memory(net->bk))
            hash_words(&s, bl->t.data, n);
        else if ((rc = hash_chunked(net, &s, bl->t.data, n)) < 0)
            return dlg_net_fail(net, -rc, "nn: reading the weights of '%s' failed", bl->name);
    }
    uint64_t h = 0;
    for (int k = 0; k < 4; k++)
        h = (h ^ s.h[k]) * 0x9e3779b97f4a7c15ull + (uint64_t)k;
    *hash = h >> 2;
    return 0;
}
