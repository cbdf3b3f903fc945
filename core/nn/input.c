/* The input path: pinned host memory and asynchronous input writes (see
 * input.h for the design, nn.h for the API). */
#include "input.h"
#include "net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the staging bookkeeping of one blob (pure) ---- */
void dlg_in_ring_init(dlg_in_ring *r) { *r = (dlg_in_ring){.last = -1, .pending = -1}; }

int dlg_in_ring_write(dlg_in_ring *r, bool *after_read)
{
    int k = r->last < 0 ? 0 : 1 - r->last;
    if (r->pending >= 0)
        r->replaced++;
    /* the slot a step read last may still be read on the device (its
     * copy into the blob): the new copy waits for that */
    *after_read = r->read[k];
    r->read[k] = false;
    r->last = r->pending = k;
    r->writes++;
    return k;
}

int dlg_in_ring_take(dlg_in_ring *r)
{
    int k = r->pending;
    if (k < 0)
        return -1;
    r->pending = -1;
    r->read[k] = true;
    r->taken++;
    return k;
}

bool dlg_in_ring_drop(dlg_in_ring *r)
{
    if (r->pending < 0)
        return false;
    r->pending = -1;
    r->replaced++;
    return true;
}

/* ---- the net's asynchronous inputs ---- */
typedef struct in_blob {
    int blob;
    size_t bytes;
    void *stage[2]; /* device staging (bk->alloc) */
    void *slot[2];  /* their ready/read marks (bk->in_slot_open) */
    dlg_in_ring ring;
} in_blob;

struct dlg_input {
    in_blob *b;
    int n, cap;
    /* in_take's arguments, as many as blobs, allocated with them */
    void **slotv, **dstv, **stagev;
    size_t *bytesv;
    bool took; /* the last step took asynchronous inputs */
};

static int grow(struct dlg_input *in)
{
    int cap = in->cap ? 2 * in->cap : 4;
    in_blob *b = realloc(in->b, (size_t)cap * sizeof *b);
    if (b)
        in->b = b;
    void **v[3] = {NULL, NULL, NULL};
    if (b && (v[0] = realloc(in->slotv, (size_t)cap * sizeof(void *))))
        in->slotv = v[0];
    if (v[0] && (v[1] = realloc(in->dstv, (size_t)cap * sizeof(void *))))
        in->dstv = v[1];
    if (v[1] && (v[2] = realloc(in->stagev, (size_t)cap * sizeof(void *))))
        in->stagev = v[2];
    size_t *s = v[2] ? realloc(in->bytesv, (size_t)cap * sizeof *s) : NULL;
    if (!s)
        return -DLG_ENOMEM;
    in->bytesv = s;
    in->cap = cap;
    return 0;
}

/* The blob's staging, created on its first asynchronous write (the
 * warm-up step): two device buffers and their marks. */
static int find_or_add(dlg_net *net, int blob, in_blob **out)
{
    if (!net->input && !(net->input = calloc(1, sizeof *net->input)))
        return -DLG_ENOMEM;
    struct dlg_input *in = net->input;
    for (int i = 0; i < in->n; i++)
        if (in->b[i].blob == blob) {
            *out = &in->b[i];
            return 0;
        }
    int rc = in->n == in->cap ? grow(in) : 0;
    if (rc < 0)
        return rc;
    in_blob *b = &in->b[in->n];
    *b = (in_blob){.blob = blob, .bytes = (size_t)net->blobs[blob].t.count * sizeof(float)};
    dlg_in_ring_init(&b->ring);
    in->n++; /* counted at once: dlg_input_free releases what was made */
    for (int k = 0; k < 2; k++) {
        if (!(b->stage[k] = net->bk->alloc(net->ctx, b->bytes)))
            return -DLG_ENOMEM;
        if ((rc = net->bk->in_slot_open(net->ctx, &b->slot[k])) < 0)
            return rc;
    }
    *out = b;
    return 0;
}

int dlg_net_write_async(dlg_net *net, int blob, const float *src, size_t count)
{
    void *mem;
    int rc = dlg_net_host_io(net, blob, DLG_DATA, count, &mem);
    if (rc)
        return rc;
    const dlg_blob *b = &net->blobs[blob];
    if (!b->is_input && !b->is_label)
        return dlg_net_complain(net, DLG_EINVAL,
                                "nn: dlg_net_write_async: blob '%s' is not an input or label "
                                "blob (use dlg_net_write)",
                                b->name);
    if (!net->bk->in_copy || b->t.layout)
        return dlg_net_write(net, blob, DLG_DATA, src, count);
    if ((rc = dlg_net_ready_bound(net)) != 0)
        return rc;
    in_blob *ib = NULL;
    if ((rc = find_or_add(net, blob, &ib)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: no staging for blob '%s'", net->bk->name,
                            b->name);
    bool after_read;
    int k = dlg_in_ring_write(&ib->ring, &after_read);
    if ((rc = net->bk->in_copy(net->ctx, ib->slot[k], ib->stage[k], src, ib->bytes,
                               after_read)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: asynchronous write of blob '%s' failed",
                            net->bk->name, b->name);
    return 0;
}

int dlg_input_take(dlg_net *net, bool *took, char *err, size_t errlen)
{
    *took = false;
    struct dlg_input *in = net->input;
    if (!in)
        return 0;
    int m = 0;
    for (int i = 0; i < in->n; i++) {
        in_blob *b = &in->b[i];
        int k = dlg_in_ring_take(&b->ring);
        if (k < 0)
            continue;
        in->slotv[m] = b->slot[k];
        in->dstv[m] = net->blobs[b->blob].t.data;
        in->stagev[m] = b->stage[k];
        in->bytesv[m] = b->bytes;
        m++;
    }
    in->took = m > 0;
    if (!m)
        return 0;
    int rc = net->bk->in_take(net->ctx, in->slotv, in->dstv, in->stagev, in->bytesv, m);
    if (rc < 0) {
        in->took = false;
        snprintf(err, errlen, "nn: backend %s: taking in the asynchronous inputs failed",
                 net->bk->name);
        return rc;
    }
    *took = true;
    return 0;
}

void dlg_input_mark(dlg_net *net)
{
    if (net->bk->in_mark && net->bk->in_mark(net->ctx) < 0)
        net->input->took = false; /* no tail to measure: the stall alone counts */
}

void dlg_input_drop(dlg_net *net, int blob)
{
    struct dlg_input *in = net->input;
    for (int i = 0; in && i < in->n; i++)
        if (in->b[i].blob == blob)
            dlg_in_ring_drop(&in->b[i].ring);
}

void dlg_input_free(dlg_net *net)
{
    struct dlg_input *in = net->input;
    if (!in)
        return;
    if (net->bk->in_wait) /* no copy may still write a staging buffer */
        net->bk->in_wait(net->ctx);
    for (int i = 0; i < in->n; i++)
        for (int k = 0; k < 2; k++) {
            if (in->b[i].slot[k])
                net->bk->in_slot_close(net->ctx, in->b[i].slot[k]);
            if (in->b[i].stage[k])
                net->bk->free(net->ctx, in->b[i].stage[k]);
        }
    free(in->b);
    free(in->slotv);
    free(in->dstv);
    free(in->stagev);
    free(in->bytesv);
    free(in);
    net->input = NULL;
}

int dlg_net_write_wait(dlg_net *net)
{
    int rc = dlg_net_ready_bound(net);
    if (rc || !net->input || !net->bk->in_wait)
        return rc;
    if ((rc = net->bk->in_wait(net->ctx)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: waiting for the input copies failed",
                            net->bk->name);
    return 0;
}

int dlg_net_input_stall(dlg_net *net, uint64_t *ns)
{
    *ns = 0;
    int rc = dlg_net_ready_bound(net);
    if (rc)
        return rc;
    if (!net->bk->in_stall || !net->input || !net->input->took)
        return -DLG_ENOTSUP;
    if ((rc = net->bk->in_stall(net->ctx, ns)) < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: reading the input wait failed",
                            net->bk->name);
    return 0;
}

/* ---- host memory ---- */
void *dlg_net_host_alloc(dlg_net *net, size_t bytes)
{
    if (dlg_net_ready_bound(net))
        return NULL;
    if (net->bk->host_alloc)
        return net->bk->host_alloc(net->ctx, bytes);
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? (bytes + 63) / 64 * 64 : 64) ? NULL : p;
}

void dlg_net_host_free(dlg_net *net, void *p)
{
    if (!p)
        return;
    if (net->bk && net->bk->host_free)
        net->bk->host_free(net->ctx, p);
    else
        free(p);
}
