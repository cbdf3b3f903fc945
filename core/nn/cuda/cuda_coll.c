/* Collectives among ranks on the device: the backend's coll_* hooks
 * (backend.h) through NCCL.  NCCL is dlopened at the first coll_id or
 * coll_open, never at module load, so a run on one GPU needs no NCCL:
 * DLGAUGE_NCCL_LIB if set (the tests' fake NCCL), else libnccl.so.2.  The
 * library, its entry points and the communicator live in the ctx
 * (c->coll); close() destroys the communicator (aborts it after a failed
 * collective).  Collectives run on the ctx's compute stream after the work
 * so far, so a captured step may hold them.  Each call first reports a
 * failure of an earlier, asynchronous one (ncclCommGetAsyncError): a
 * count of 0 does only that. */
#include "cuda.h"

#if DLG_CUDA_HAVE_NCCL

#pragma GCC diagnostic push /* nccl.h declares ncclGroupStart() without void */
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(NCCL_UNIQUE_ID_BYTES <= DLG_COLL_ID_BYTES, "DLG_COLL_ID_BYTES holds an NCCL id");

typedef struct dlg_cuda_coll {
    void *dl;
    ncclResult_t (*get_unique_id)(ncclUniqueId *id);
    ncclResult_t (*comm_init_rank)(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
    ncclResult_t (*comm_destroy)(ncclComm_t comm);
    ncclResult_t (*comm_abort)(ncclComm_t comm);
    ncclResult_t (*all_reduce)(const void *send, void *recv, size_t count, ncclDataType_t t,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t s);
    ncclResult_t (*send)(const void *buf, size_t count, ncclDataType_t t, int peer,
                         ncclComm_t comm, cudaStream_t s);
    ncclResult_t (*recv)(void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                         cudaStream_t s);
    ncclResult_t (*group_start)(void);
    ncclResult_t (*group_end)(void);
    const char *(*error_string)(ncclResult_t r);
    ncclResult_t (*async_error)(ncclComm_t comm, ncclResult_t *r);
    ncclResult_t (*get_version)(int *version);
    ncclComm_t comm;
    int ranks, rank;
} dlg_cuda_coll;

/* The entry points dlsym fills in, by name. */
static const struct {
    const char *name;
    size_t off;
} nccl_syms[] = {
    {"ncclGetUniqueId", offsetof(dlg_cuda_coll, get_unique_id)},
    {"ncclCommInitRank", offsetof(dlg_cuda_coll, comm_init_rank)},
    {"ncclCommDestroy", offsetof(dlg_cuda_coll, comm_destroy)},
    {"ncclCommAbort", offsetof(dlg_cuda_coll, comm_abort)},
    {"ncclAllReduce", offsetof(dlg_cuda_coll, all_reduce)},
    {"ncclSend", offsetof(dlg_cuda_coll, send)},
    {"ncclRecv", offsetof(dlg_cuda_coll, recv)},
    {"ncclGroupStart", offsetof(dlg_cuda_coll, group_start)},
    {"ncclGroupEnd", offsetof(dlg_cuda_coll, group_end)},
    {"ncclGetErrorString", offsetof(dlg_cuda_coll, error_string)},
    {"ncclCommGetAsyncError", offsetof(dlg_cuda_coll, async_error)},
    {"ncclGetVersion", offsetof(dlg_cuda_coll, get_version)},
};

/* -DLG_E* for an NCCL result: the caller's misuse, or the library's or the
 * machine's failure. */
static int nccl_code(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess:
        return 0;
    case ncclInvalidArgument:
    case ncclInvalidUsage:
        return -DLG_EINVAL;
    case ncclInternalError:
        return -DLG_EINTERNAL;
    default:
        return -DLG_EIO;
    }
}

/* One line naming the call, the rank and NCCL's text. */
static int nccl_err(const dlg_cuda_coll *co, ncclResult_t r, const char *call, char *err,
                    size_t errlen)
{
    if (r == ncclSuccess)
        return 0;
    snprintf(err, errlen, "%s (rank %d of %d): %s", call, co->rank, co->ranks,
             co->error_string(r));
    return nccl_code(r);
}

/* c->coll with NCCL loaded, on the first call. */
static int coll_load(dlg_cuda_ctx *c, char *err, size_t errlen)
{
    if (c->coll)
        return 0;
    const char *lib = getenv("DLGAUGE_NCCL_LIB");
    if (!lib || !*lib)
        lib = "libnccl.so.2";
    /* NODELETE: NCCL's threads and handlers may outlive a dlclose */
    void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!dl) {
        snprintf(err, errlen, "collectives on cuda:%d need NCCL: dlopen %s: %s", c->device, lib,
                 dlerror());
        return -DLG_ENOTSUP;
    }
    dlg_cuda_coll *co = calloc(1, sizeof *co);
    if (!co) {
        dlclose(dl);
        return -DLG_ENOMEM;
    }
    co->dl = dl;
    for (size_t i = 0; i < sizeof nccl_syms / sizeof nccl_syms[0]; i++) {
        void *f = dlsym(dl, nccl_syms[i].name);
        if (!f) {
            snprintf(err, errlen, "collectives on cuda:%d need NCCL: %s has no %s", c->device,
                     lib, nccl_syms[i].name);
            dlclose(dl);
            free(co);
            return -DLG_ENOTSUP;
        }
        memcpy((char *)co + nccl_syms[i].off, &f, sizeof f);
    }
    c->coll = co;
    return 0;
}

void dlg_cuda_coll_close(dlg_cuda_ctx *c)
{
    dlg_cuda_coll *co = c->coll;
    if (!co)
        return;
    if (co->comm) {
        ncclResult_t a = ncclSuccess;
        /* after a failure a peer may never answer: abort does not wait */
        if (co->async_error(co->comm, &a) != ncclSuccess || a != ncclSuccess)
            co->comm_abort(co->comm);
        else
            co->comm_destroy(co->comm);
    }
    dlclose(co->dl);
    free(co);
    c->coll = NULL;
}

int dlg_cuda_coll_check(dlg_cuda_ctx *c, char *err, size_t errlen)
{
    dlg_cuda_coll *co = c->coll;
    if (!co || !co->comm)
        return 0;
    ncclResult_t a = ncclSuccess, r = co->async_error(co->comm, &a);
    if (r == ncclSuccess && a == ncclInProgress)
        return 0;
    if (r == ncclSuccess && a != ncclSuccess)
        return nccl_err(co, a, "a collective failed: ncclCommGetAsyncError", err, errlen);
    return nccl_err(co, r, "ncclCommGetAsyncError", err, errlen);
}

int dlg_cuda_coll_id(void *vctx, void *id, size_t *len, char *err, size_t errlen)
{
    dlg_cuda_ctx *c = vctx;
    int rc = coll_load(c, err, errlen);
    if (rc || !id) /* a probe: ncclGetUniqueId starts a bootstrap listener */
        return rc;
    ncclUniqueId u;
    rc = nccl_err(c->coll, c->coll->get_unique_id(&u), "ncclGetUniqueId", err, errlen);
    if (rc)
        return rc;
    memcpy(id, &u, sizeof u);
    *len = sizeof u;
    return 0;
}

int dlg_cuda_coll_open(void *vctx, int ranks, int rank, const void *id, size_t len, char *err,
                       size_t errlen)
{
    dlg_cuda_ctx *c = vctx;
    if (ranks < 1 || rank < 0 || rank >= ranks || !id || len < sizeof(ncclUniqueId)) {
        snprintf(err, errlen,
                 "collectives on cuda:%d: rank %d of %d with a %zu-byte id (NCCL's is %zu)",
                 c->device, rank, ranks, len, sizeof(ncclUniqueId));
        return -DLG_EINVAL;
    }
    if (c->coll && c->coll->comm) {
        snprintf(err, errlen, "collectives on cuda:%d: a communicator is already open (rank %d of %d)",
                 c->device, c->coll->rank, c->coll->ranks);
        return -DLG_EINVAL;
    }
    int rc = coll_load(c, err, errlen);
    if (rc)
        return rc;
    /* NCCL takes the device current at init */
    rc = dlg_cuda_err(cudaSetDevice(c->device), "cudaSetDevice", err, errlen);
    if (rc)
        return rc;
    dlg_cuda_coll *co = c->coll;
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    co->ranks = ranks;
    co->rank = rank;
    ncclComm_t comm = NULL;
    rc = nccl_err(co, co->comm_init_rank(&comm, ranks, u, rank), "ncclCommInitRank", err, errlen);
    if (rc)
        return rc;
    co->comm = comm;
    return 0;
}

static int nccl_type(int t, ncclDataType_t *out)
{
    switch (t) {
    case DLG_DEV_F32:
        *out = ncclFloat32;
        return 0;
    case DLG_DEV_F64:
        *out = ncclFloat64;
        return 0;
    case DLG_DEV_I64:
        *out = ncclInt64;
        return 0;
    default:
        return -DLG_EINVAL;
    }
}

/* The communicator, an earlier failure and the type, before a collective. */
static int coll_ready(dlg_cuda_ctx *c, int t, ncclDataType_t *nt, const char *what, char *err,
                      size_t errlen)
{
    if (!c->coll || !c->coll->comm) {
        snprintf(err, errlen, "%s on cuda:%d: no communicator (coll_open first)", what,
                 c->device);
        return -DLG_EINVAL;
    }
    int rc = dlg_cuda_coll_check(c, err, errlen);
    if (rc)
        return rc;
    if (nccl_type(t, nt) < 0) {
        snprintf(err, errlen, "%s on cuda:%d: unknown element type %d", what, c->device, t);
        return -DLG_EINVAL;
    }
    return 0;
}

int dlg_cuda_coll_allreduce(void *vctx, const void *send, void *recv, size_t count, int t,
                            char *err, size_t errlen)
{
    dlg_cuda_ctx *c = vctx;
    ncclDataType_t nt;
    int rc = coll_ready(c, t, &nt, "ncclAllReduce", err, errlen);
    if (rc || !count)
        return rc;
    dlg_cuda_coll *co = c->coll;
    return nccl_err(co, co->all_reduce(send, recv, count, nt, ncclSum, co->comm, c->stream),
                    "ncclAllReduce", err, errlen);
}

int dlg_cuda_coll_sendrecv(void *vctx, const void *send, int to, void *recv, int from,
                           size_t count, int t, char *err, size_t errlen)
{
    dlg_cuda_ctx *c = vctx;
    ncclDataType_t nt;
    int rc = coll_ready(c, t, &nt, "ncclSend/ncclRecv", err, errlen);
    if (rc)
        return rc;
    dlg_cuda_coll *co = c->coll;
    if (to < 0 || to >= co->ranks || from < 0 || from >= co->ranks) {
        snprintf(err, errlen, "ncclSend/ncclRecv (rank %d of %d): to rank %d, from rank %d",
                 co->rank, co->ranks, to, from);
        return -DLG_EINVAL;
    }
    rc = nccl_err(co, co->group_start(), "ncclGroupStart", err, errlen);
    if (rc)
        return rc;
    /* after ncclGroupStart, ncclGroupEnd always (it reports the group's errors) */
    int rs = nccl_err(co, co->send(send, count, nt, to, co->comm, c->stream), "ncclSend", err,
                      errlen);
    int rr = rs ? 0
                : nccl_err(co, co->recv(recv, count, nt, from, co->comm, c->stream), "ncclRecv",
                           err, errlen);
    char end[256];
    int re = nccl_err(co, co->group_end(), "ncclGroupEnd", end, sizeof end);
    if (rs || rr)
        return rs ? rs : rr;
    if (re)
        snprintf(err, errlen, "%s", end);
    return re;
}

int dlg_cuda_coll_allreduce_n(void *vctx, float *const *p, const int64_t *c, int n, char *err,
                              size_t errlen)
{
    dlg_cuda_ctx *ctx = vctx;
    ncclDataType_t nt;
    int rc = coll_ready(ctx, DLG_DEV_F32, &nt, "ncclAllReduce", err, errlen);
    if (rc || n <= 0)
        return rc;
    dlg_cuda_coll *co = ctx->coll;
    if ((rc = nccl_err(co, co->group_start(), "ncclGroupStart", err, errlen)))
        return rc;
    /* after ncclGroupStart, ncclGroupEnd always (it reports the group's errors) */
    for (int i = 0; i < n && !rc; i++)
        if (c[i] > 0)
            rc = nccl_err(co, co->all_reduce(p[i], p[i], (size_t)c[i], nt, ncclSum, co->comm,
                                             ctx->stream),
                          "ncclAllReduce", err, errlen);
    char end[256];
    int re = nccl_err(co, co->group_end(), "ncclGroupEnd", end, sizeof end);
    if (!rc && re)
        snprintf(err, errlen, "%s", end);
    return rc ? rc : re;
}

#else /* no nccl.h at build time: the backend has no collectives */

void dlg_cuda_coll_close(dlg_cuda_ctx *c) { (void)c; }
int dlg_cuda_coll_check(dlg_cuda_ctx *c, char *err, size_t errlen)
{
    (void)c;
    (void)err;
    (void)errlen;
    return 0;
}

#endif
