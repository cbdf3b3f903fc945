/* Blob operations that stay on the device: dlg_net_copy_blob and
 * dlg_net_zero_blob (an LSTM state carried or reset between truncated-BPTT
 * segments) and dlg_net_read_async / dlg_net_read_wait (a loss looked at
 * once its step has ended), so that a step's host side need not wait for
 * the device.  Backends without the hooks (backend.h: copy, read_async,
 * read_wait) do the same through host memory. */
#include "input.h"
#include "net.h"

#include <stdlib.h>
#include <string.h>

/* A blob's data memory for a whole-blob operation, with dlg_net_host_io's
 * checks (planned, stored, not shared). */
static int blob_data(dlg_net *net, int blob, void **mem)
{
    int rc = dlg_net_ready(net);
    if (rc)
        return rc;
    if (blob < 0 || blob >= net->nblobs)
        return dlg_net_complain(net, DLG_EINVAL, "nn: no blob with id %d", blob);
    return dlg_net_host_io(net, blob, DLG_DATA, (size_t)net->blobs[blob].t.count, mem);
}

/* dst is about to get new data: it replaces a pending asynchronous write
 * (the last write wins) and invalidates caches derived from it. */
static void written(dlg_net *net, int dst)
{
    dlg_input_drop(net, dst);
    net->blobs[dst].t.version++;
}

/* Blobs in a backend layout, or a backend without a device copy: through
 * a host buffer (dlg_net_read converts from, dlg_net_write to, the layout). */
static int copy_via_host(dlg_net *net, int src, int dst, size_t n)
{
    float *buf = malloc(n * sizeof *buf);
    if (!buf)
        return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory copying blob '%s'",
                            net->blobs[src].name);
    int rc = dlg_net_read(net, src, DLG_DATA, buf, n);
    if (!rc)
        rc = dlg_net_write(net, dst, DLG_DATA, buf, n);
    free(buf);
    return rc;
}

int dlg_net_copy_blob(dlg_net *net, int src, int dst)
{
    void *from, *to;
    int rc = blob_data(net, src, &from);
    if (!rc)
        rc = blob_data(net, dst, &to);
    if (rc)
        return rc;
    const dlg_tensor *s = &net->blobs[src].t, *d = &net->blobs[dst].t;
    if (s->count != d->count)
        return dlg_net_complain(net, DLG_EINVAL,
                                "nn: copying blob '%s' (%lld floats) into '%s' (%lld floats): "
                                "the sizes differ",
                                net->blobs[src].name, (long long)s->count, net->blobs[dst].name,
                                (long long)d->count);
    if (src == dst)
        return 0;
    size_t n = (size_t)s->count;
    bool in_place = net->bk->copy || dlg_bk_host_memory(net->bk);
    if (s->layout || d->layout || !in_place)
        return copy_via_host(net, src, dst, n);
    written(net, dst);
    /* host memory: upload is a plain copy between two of its buffers */
    rc = net->bk->copy ? net->bk->copy(net->ctx, to, from, n * sizeof(float))
                       : net->bk->upload(net->ctx, to, from, n * sizeof(float));
    if (rc < 0)
        return dlg_net_fail(net, -rc, "nn: copying blob '%s' into '%s' failed",
                            net->blobs[src].name, net->blobs[dst].name);
    return 0;
}

int dlg_net_zero_blob(dlg_net *net, int blob)
{
    void *mem;
    int rc = blob_data(net, blob, &mem);
    if (rc)
        return rc;
    const dlg_tensor *t = &net->blobs[blob].t;
    size_t n = (size_t)t->count;
    if (t->layout || !net->bk->zero) { /* stored bytes unknown here: write zeros */
        float *z = calloc(n ? n : 1, sizeof *z);
        if (!z)
            return dlg_net_fail(net, DLG_ENOMEM, "nn: out of memory zeroing blob '%s'",
                                net->blobs[blob].name);
        rc = dlg_net_write(net, blob, DLG_DATA, z, n);
        free(z);
        return rc;
    }
    written(net, blob);
    if ((rc = net->bk->zero(net->ctx, mem, n * sizeof(float))) < 0)
        return dlg_net_fail(net, -rc, "nn: zeroing blob '%s' failed", net->blobs[blob].name);
    return 0;
}

int dlg_net_read_async(dlg_net *net, int blob, float *dst, size_t count, uint64_t *ticket)
{
    *ticket = 0;
    void *mem;
    int rc = dlg_net_host_io(net, blob, DLG_DATA, count, &mem);
    if (rc)
        return rc;
    if (net->blobs[blob].t.layout || !net->bk->read_async || !net->bk->read_wait)
        return dlg_net_read(net, blob, DLG_DATA, dst, count);
    if ((rc = net->bk->read_async(net->ctx, dst, mem, count * sizeof(float), ticket)) < 0)
        return dlg_net_fail(net, -rc, "nn: reading blob '%s' failed", net->blobs[blob].name);
    net->read_ticket = *ticket;
    return 0;
}

int dlg_net_read_wait(dlg_net *net, uint64_t ticket)
{
    int rc = dlg_net_ready(net);
    if (rc || ticket == 0)
        return rc;
    if (ticket > net->read_ticket || !net->bk->read_wait)
        return dlg_net_complain(net, DLG_EINVAL, "nn: dlg_net_read_wait: no read with ticket %llu",
                                (unsigned long long)ticket);
    rc = net->bk->read_wait(net->ctx, ticket);
    if (rc == -DLG_EINVAL)
        return dlg_net_fail(net, DLG_EINVAL,
                            "%s: the values read are meaningless", DLG_NN_BAD_INPUT);
    if (rc < 0)
        return dlg_net_fail(net, -rc, "nn: backend %s: waiting for a read failed", net->bk->name);
    return 0;
}
