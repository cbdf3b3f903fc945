/* Device buffers and collectives outside a net (dlg_dev_*, nn.h): a
 * backend opened by name with its default options, the memory a caller
 * allocates on it (tracked, freed by dlg_dev_close), and the backend's
 * collectives (cuda: NCCL, cuda_coll.c) on its compute stream.  For the
 * allreduce and p2p workloads on a GPU.
 *
 * The communicator id is made on rank 0 (coll_id) and reaches the others
 * through the caller's bcast (the host's MPI); a rank 0 that cannot make
 * one sends zeros, so the others fail at once with a line rather than wait
 * in the library for it.  dlg_dev_coll_probe loads the library earlier,
 * in a caller's setup, so a rank without it is refused before any join.
 * A host-memory backend (cpu, ref) has no device
 * collectives: on one rank its allreduce and sendrecv are plain copies,
 * with more it refuses (the host's MPI collectives do that job).
 *
 * Errors are sticky as dlg_net's: once a call fails every later one returns
 * its code and dlg_dev_error its line.  Refusals that change nothing (a
 * timer on a backend without a device timeline, collectives across ranks on
 * the host) are not sticky: they only set the line. */
#include "net.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dlg_dev {
    const dlg_backend *b;
    void *ctx;   /* may be NULL when open succeeded (ref has no state) */
    bool opened; /* close() owed */
    void **bufs; /* dlg_dev_alloc's, freed at close */
    size_t nbufs, cap;
    int ranks, rank; /* the communicator joined (0: none) */
    bool host_copy;  /* collectives are copies: a host backend on one rank */
    int err;         /* sticky: 0 or -DLG_E* */
    char msg[320];
};

static void set_line(dlg_dev *d, const char *fmt, va_list ap)
{
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
}

/* A sticky failure: the first one's code and line stay. */
__attribute__((format(printf, 3, 4))) static int fail(dlg_dev *d, int code, const char *fmt, ...)
{
    if (d->err)
        return d->err;
    va_list ap;
    va_start(ap, fmt);
    set_line(d, fmt, ap);
    va_end(ap);
    d->err = -code;
    return d->err;
}

/* A refusal: the line, no sticky state (a failure's line is kept). */
__attribute__((format(printf, 3, 4))) static int refuse(dlg_dev *d, int code, const char *fmt,
                                                        ...)
{
    if (d->err)
        return d->err;
    va_list ap;
    va_start(ap, fmt);
    set_line(d, fmt, ap);
    va_end(ap);
    return -code;
}

static size_t type_size(dlg_dev_type t)
{
    switch (t) {
    case DLG_DEV_F32:
        return 4;
    case DLG_DEV_F64:
    case DLG_DEV_I64:
        return 8;
    default:
        return 0;
    }
}

int dlg_dev_open(const char *backend, dlg_dev **out, char *err, size_t errlen)
{
    *out = NULL;
    char why[256] = "";
    const dlg_backend *b = backend ? dlg_backend_lookup(backend, why, sizeof why) : NULL;
    if (!b) {
        snprintf(err, errlen, "dlg_dev_open: %s", why[0] ? why : "no backend named");
        return -DLG_ENOTSUP;
    }
    dlg_dev *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "dlg_dev_open %s: out of memory", backend);
        return -DLG_ENOMEM;
    }
    d->b = b;
    dlg_backend_opts o = {0};
    char line[256] = "";
    int rc = b->open(&o, &d->ctx, line, sizeof line);
    d->opened = rc == 0;
    if (!rc && b->bind)
        rc = b->bind(d->ctx);
    if (rc < 0) {
        snprintf(err, errlen, "dlg_dev_open %s: %s", backend, line[0] ? line : "open failed");
        dlg_dev_close(d);
        return rc;
    }
    *out = d;
    return 0;
}

void dlg_dev_close(dlg_dev *d)
{
    if (!d)
        return;
    if (d->opened) {
        for (size_t i = 0; i < d->nbufs; i++)
            d->b->free(d->ctx, d->bufs[i]);
        d->b->close(d->ctx); /* the communicator with it */
    }
    free(d->bufs);
    free(d);
}

const char *dlg_dev_error(const dlg_dev *d) { return d ? d->msg : "no device"; }

void *dlg_dev_alloc(dlg_dev *d, size_t bytes)
{
    if (d->err)
        return NULL;
    if (d->nbufs == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 8;
        void **n = realloc(d->bufs, cap * sizeof *n);
        if (!n) {
            fail(d, DLG_ENOMEM, "dlg_dev_alloc on %s: out of host memory", d->b->name);
            return NULL;
        }
        d->bufs = n;
        d->cap = cap;
    }
    if (d->b->bind && d->b->bind(d->ctx) < 0) {
        fail(d, DLG_ENOTSUP, "dlg_dev_alloc on %s: cannot bind this thread", d->b->name);
        return NULL;
    }
    void *p = d->b->alloc(d->ctx, bytes);
    if (!p) {
        fail(d, DLG_ENOMEM, "dlg_dev_alloc on %s: %zu bytes: out of memory", d->b->name, bytes);
        return NULL;
    }
    d->bufs[d->nbufs++] = p;
    return p;
}

int dlg_dev_upload(dlg_dev *d, void *dst, const void *host, size_t bytes)
{
    if (d->err)
        return d->err;
    int rc = d->b->upload(d->ctx, dst, host, bytes);
    return rc < 0 ? fail(d, -rc, "dlg_dev_upload on %s: %zu bytes failed", d->b->name, bytes) : 0;
}

int dlg_dev_download(dlg_dev *d, void *host, const void *src, size_t bytes)
{
    if (d->err)
        return d->err;
    int rc = d->b->download(d->ctx, host, src, bytes);
    return rc < 0 ? fail(d, -rc, "dlg_dev_download on %s: %zu bytes failed", d->b->name, bytes)
                  : 0;
}

/* The line of a collective that failed on the device: each coll call
 * reports an earlier failure first, and a count of 0 does only that. */
static int coll_failure(dlg_dev *d, int rc, const char *what)
{
    char line[256] = "";
    if (d->ranks && !d->host_copy)
        d->b->coll_allreduce(d->ctx, NULL, NULL, 0, DLG_DEV_F32, line, sizeof line);
    return fail(d, -rc, "%s on %s: %s", what, d->b->name,
                line[0] ? line : "the device reported an error");
}

int dlg_dev_sync(dlg_dev *d)
{
    if (d->err)
        return d->err;
    int rc = d->b->sync(d->ctx);
    return rc < 0 ? coll_failure(d, rc, "dlg_dev_sync") : 0;
}

static bool has_coll(const dlg_backend *b)
{
    return b->coll_id && b->coll_open && b->coll_allreduce && b->coll_sendrecv;
}

int dlg_bk_coll_id(const dlg_backend *b, void *ctx, void *id, size_t *len, char *err,
                   size_t errlen)
{
    size_t room = *len;
    err[0] = '\0';
    int rc = b->coll_id(ctx, id, len, err, errlen);
    if (rc == 0 && id && *len > room) {
        snprintf(err, errlen, "backend %s: a communicator id of %zu bytes (at most %zu)", b->name,
                 *len, room);
        rc = -DLG_EINTERNAL;
    }
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "no communicator id");
    return rc;
}

/* Rank 0's id to every rank (one rank: no broadcast); zeros when rank 0
 * has none, so the others fail at once. */
static int share_id(dlg_dev *d, int ranks, int rank, dlg_id_bcast_fn bcast, void *ctx,
                    unsigned char id[DLG_COLL_ID_BYTES])
{
    char line[256] = "";
    int made = 0;
    memset(id, 0, DLG_COLL_ID_BYTES);
    if (rank == 0) {
        size_t len = DLG_COLL_ID_BYTES;
        if ((made = dlg_bk_coll_id(d->b, d->ctx, id, &len, line, sizeof line)) < 0)
            memset(id, 0, DLG_COLL_ID_BYTES);
    }
    int rc = ranks > 1 ? bcast(ctx, id, DLG_COLL_ID_BYTES) : 0;
    if (made < 0)
        return fail(d, -made, "dlg_dev_coll_open on %s: %s", d->b->name, line);
    if (rc < 0)
        return fail(d, -rc, "dlg_dev_coll_open on %s: the id's broadcast failed", d->b->name);
    for (int i = 0; i < DLG_COLL_ID_BYTES; i++)
        if (id[i])
            return 0;
    return fail(d, DLG_ENOTSUP,
                "dlg_dev_coll_open on %s: rank 0 could not create the communicator (its error "
                "says why)",
                d->b->name);
}

/* A device backend with collectives, bound to this thread (who: the
 * caller's name for the line). */
static int coll_ready(dlg_dev *d, const char *who)
{
    if (!has_coll(d->b))
        return refuse(d, DLG_ENOTSUP, "%s: backend %s has no collectives (built without NCCL's header)", who,
                      d->b->name);
    if (d->b->bind && d->b->bind(d->ctx) < 0)
        return fail(d, DLG_ENOTSUP, "%s on %s: cannot bind this thread", who, d->b->name);
    return 0;
}

/* A backend that keeps its memory on the host has nothing to load (and
 * dlg_dev_coll_open refuses it across ranks). */
int dlg_dev_coll_probe(dlg_dev *d)
{
    if (d->err)
        return d->err;
    if (dlg_bk_host_memory(d->b))
        return 0;
    int rc = coll_ready(d, "dlg_dev_coll_probe");
    if (rc)
        return rc;
    char line[256];
    size_t len = 0;
    rc = dlg_bk_coll_id(d->b, d->ctx, NULL, &len, line, sizeof line);
    return rc < 0 ? fail(d, -rc, "dlg_dev_coll_probe on %s: %s", d->b->name, line) : 0;
}

int dlg_dev_coll_open(dlg_dev *d, int ranks, int rank, dlg_id_bcast_fn bcast, void *ctx)
{
    if (d->err)
        return d->err;
    if (ranks < 1 || rank < 0 || rank >= ranks || (ranks > 1 && !bcast))
        return fail(d, DLG_EINVAL, "dlg_dev_coll_open on %s: rank %d of %d%s", d->b->name, rank,
                    ranks, ranks > 1 && !bcast ? " without a broadcast" : "");
    if (d->ranks)
        return fail(d, DLG_EINVAL, "dlg_dev_coll_open on %s: already joined as rank %d of %d",
                    d->b->name, d->rank, d->ranks);
    bool host = dlg_bk_host_memory(d->b);
    if (host && ranks > 1)
        return refuse(d, DLG_ENOTSUP,
                      "dlg_dev_coll_open: backend %s keeps its memory on the host: across %d "
                      "ranks use the host's MPI collectives",
                      d->b->name, ranks);
    if (host) {
        d->host_copy = true;
    } else {
        int rc = coll_ready(d, "dlg_dev_coll_open");
        if (rc)
            return rc;
        unsigned char id[DLG_COLL_ID_BYTES];
        rc = share_id(d, ranks, rank, bcast, ctx, id);
        if (rc)
            return rc;
        char line[256] = "";
        rc = d->b->coll_open(d->ctx, ranks, rank, id, sizeof id, line, sizeof line);
        if (rc < 0)
            return fail(d, -rc, "dlg_dev_coll_open on %s: %s", d->b->name, line);
    }
    d->ranks = ranks;
    d->rank = rank;
    return 0;
}

/* The checks common to both collectives; *bytes: count elements of t. */
static int coll_args(dlg_dev *d, const char *what, size_t count, dlg_dev_type t, size_t *bytes)
{
    if (d->err)
        return d->err;
    if (!d->ranks)
        return fail(d, DLG_EINVAL, "%s on %s before dlg_dev_coll_open", what, d->b->name);
    size_t es = type_size(t);
    if (!es || count > SIZE_MAX / es)
        return fail(d, DLG_EINVAL, "%s on %s: %zu elements of type %d", what, d->b->name, count,
                    (int)t);
    *bytes = count * es;
    return 0;
}

int dlg_dev_allreduce(dlg_dev *d, const void *send, void *recv, size_t count, dlg_dev_type t)
{
    size_t bytes = 0;
    int rc = coll_args(d, "dlg_dev_allreduce", count, t, &bytes);
    if (rc)
        return rc;
    if (d->host_copy) { /* one rank: the sum is its own data */
        if (send != recv && bytes)
            memmove(recv, send, bytes);
        return 0;
    }
    char line[256] = "";
    rc = d->b->coll_allreduce(d->ctx, send, recv, count, (int)t, line, sizeof line);
    return rc < 0 ? fail(d, -rc, "dlg_dev_allreduce on %s: %s", d->b->name, line) : 0;
}

int dlg_dev_sendrecv(dlg_dev *d, const void *send, int to, void *recv, int from, size_t count,
                     dlg_dev_type t)
{
    size_t bytes = 0;
    int rc = coll_args(d, "dlg_dev_sendrecv", count, t, &bytes);
    if (rc)
        return rc;
    if (to < 0 || to >= d->ranks || from < 0 || from >= d->ranks)
        return fail(d, DLG_EINVAL, "dlg_dev_sendrecv on %s: rank %d of %d sends to %d, receives "
                    "from %d",
                    d->b->name, d->rank, d->ranks, to, from);
    if (d->host_copy) { /* one rank: it sends to itself */
        if (send != recv && bytes)
            memmove(recv, send, bytes);
        return 0;
    }
    char line[256] = "";
    rc = d->b->coll_sendrecv(d->ctx, send, to, recv, from, count, (int)t, line, sizeof line);
    return rc < 0 ? fail(d, -rc, "dlg_dev_sendrecv on %s: %s", d->b->name, line) : 0;
}

/* A device timeline to time on, else the (not sticky) refusal. */
static int timeline(dlg_dev *d, const char *what)
{
    if (d->err)
        return d->err;
    if (!d->b->timer_begin || !d->b->timer_end)
        return refuse(d, DLG_ENOTSUP,
                      "%s: backend %s has no device timeline (time with a host clock)", what,
                      d->b->name);
    return 0;
}

int dlg_dev_timer_begin(dlg_dev *d)
{
    int rc = timeline(d, "dlg_dev_timer_begin");
    if (rc == 0 && (rc = d->b->timer_begin(d->ctx)) < 0)
        return fail(d, -rc, "dlg_dev_timer_begin on %s failed", d->b->name);
    return rc;
}

int dlg_dev_timer_end(dlg_dev *d, uint64_t *elapsed_ns)
{
    int rc = timeline(d, "dlg_dev_timer_end");
    if (rc == 0 && (rc = d->b->timer_end(d->ctx, elapsed_ns)) < 0)
        return coll_failure(d, rc, "dlg_dev_timer_end");
    return rc;
}
