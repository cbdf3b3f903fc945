// fake_nccl.cc — NCCL's C API (nccl.h) on the host, for the fake GPU: a
// library of its own that tests name in DLGAUGE_NCCL_LIB, so the cuda
// module's collectives (core/nn/cuda/cuda_coll.c) run in CI between the
// threads of one process and between processes (mpirun ranks).
//
// ncclGetUniqueId writes a fresh POSIX shared-memory name into the id; each
// rank's ncclCommInitRank maps that segment (the first to arrive creates
// it, O_EXCL) and waits until every rank joined; the last rank to join
// unlinks the name.  The segment holds a process-shared mutex and
// condition, each rank's descriptor of its current collective and a slot
// of kSlot bytes per rank.  Collectives are queued on the caller's fake
// stream (fakegpu_submit_blocking in fake_runtime.cc, found with dlsym:
// this library does not link the runtime) and run in stream order; a
// rank's piece then waits for the other ranks' under the mutex.
//   allreduce: per chunk of kSlot bytes every rank copies its part into its
//   slot; after a barrier each sums the slots in rank order (the same bits
//   on every rank) into its output; a barrier frees the slots.
//   send/recv: the sender copies a chunk into its slot and counts it
//   posted; the receiver copies it out and counts it taken.
// Fake device memory is host memory, so the copies are plain.  A rank
// whose collective disagrees with another's (kind, count, type, op) or
// that waits longer than FAKE_NCCL_TIMEOUT_S (default 60) breaks the
// communicator: every rank's collective then fails with the reason on
// stderr and ncclCommGetAsyncError reports it, so nothing hangs silently.
// Within one process a rank's pieces run only on the thread that issued
// them (fake_runtime.cc), as each rank's on its own GPU: a rank thread
// syncs its stream for its collectives to run.
//
// This file: the collectives (allreduce, send/recv, groups) and their
// queueing; fake_nccl_comm.cc: ids, segments, init and destroy.
#include "fake_nccl.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

using namespace fake_nccl;

namespace {

// The ncclSend/ncclRecv calls between ncclGroupStart and ncclGroupEnd of
// this thread (NCCL's groups are per thread too).
struct p2p_call {
    ncclComm_t comm;
    bool send;
    void *buf;
    size_t count;
    ncclDataType_t type;
    int peer;
    cudaStream_t stream;
};
struct group_state {
    int depth;
    std::vector<p2p_call> calls;
};
thread_local group_state t_group;

size_t type_bytes(ncclDataType_t t)
{
    switch (t) {
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
        return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
        return 8;
    default:
        return 0; // not modelled
    }
}

template <class T> T combine(T a, T b, int op)
{
    switch (op) {
    case ncclProd:
        return a * b;
    case ncclMax:
        return a > b ? a : b;
    case ncclMin:
        return a < b ? a : b;
    default:
        return a + b;
    }
}

// out[i] = slot_0[i] (op) slot_1[i] (op) ... in rank order, n elements
template <class T>
void reduce_slots(void *out, const unsigned char *slots, int nranks, size_t n, int op)
{
    T *o = (T *)out;
    for (size_t i = 0; i < n; i++) {
        T acc;
        memcpy(&acc, slots + i * sizeof(T), sizeof(T));
        for (int r = 1; r < nranks; r++) {
            T v;
            memcpy(&v, slots + (size_t)r * kSlot + i * sizeof(T), sizeof(T));
            acc = combine(acc, v, op);
        }
        o[i] = acc;
    }
}

void reduce_into(void *out, const unsigned char *slots, int nranks, size_t n, ncclDataType_t t,
                 int op)
{
    switch (t) {
    case ncclInt32:
        return reduce_slots<int32_t>(out, slots, nranks, n, op);
    case ncclUint32:
        return reduce_slots<uint32_t>(out, slots, nranks, n, op);
    case ncclFloat32:
        return reduce_slots<float>(out, slots, nranks, n, op);
    case ncclInt64:
        return reduce_slots<int64_t>(out, slots, nranks, n, op);
    case ncclUint64:
        return reduce_slots<uint64_t>(out, slots, nranks, n, op);
    default:
        return reduce_slots<double>(out, slots, nranks, n, op);
    }
}

// The communicator fails for every rank (mu held): the first reason wins.
void break_comm(ncclComm_t c, ncclResult_t r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void break_comm(ncclComm_t c, ncclResult_t r, const char *fmt, ...)
{
    if (!c->h->broken) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->h->why, sizeof c->h->why, fmt, ap);
        va_end(ap);
        c->h->broken = r;
    }
    pthread_cond_broadcast(&c->h->cv);
}

// Waits on the segment's condition until *until (mu held); false with the
// communicator broken when it broke or the wait timed out.
bool wait_once(ncclComm_t c, const timespec &until, const char *what)
{
    if (c->h->broken)
        return false;
    if (pthread_cond_timedwait(&c->h->cv, &c->h->mu, &until) == ETIMEDOUT) {
        break_comm(c, ncclSystemError, "rank %d of %d waited %d s for the other ranks in %s",
                   c->rank, c->nranks, c->timeout_s, what);
        return false;
    }
    return !c->h->broken;
}

// Every rank arrives before any leaves (mu held).
bool barrier(ncclComm_t c, const char *what)
{
    segment *h = c->h;
    if (h->broken)
        return false;
    uint64_t gen = h->gen;
    if (++h->arrived == c->nranks) {
        h->arrived = 0;
        h->gen++;
        pthread_cond_broadcast(&h->cv);
        return true;
    }
    timespec until = deadline(c->timeout_s);
    while (h->gen == gen)
        if (!wait_once(c, until, what))
            return false;
    return true;
}

// The piece's end (mu held, released here): a broken communicator's
// reason once per rank, and the result for ncclCommGetAsyncError.
void finish(ncclComm_t c, bool ok)
{
    int code = c->h->broken ? c->h->broken : ncclInternalError;
    char why[sizeof c->h->why];
    memcpy(why, c->h->why, sizeof why);
    pthread_mutex_unlock(&c->h->mu);
    int expected = ncclSuccess;
    if (!ok && c->async.compare_exchange_strong(expected, code))
        say("rank %d of %d: %s", c->rank, c->nranks, why);
}

bool same_desc(const coll_desc &a, const coll_desc &b)
{
    return a.kind == b.kind && a.type == b.type && a.op == b.op && a.count == b.count;
}

// The allreduce of one rank, on its stream (see the file's comment).
void run_allreduce(ncclComm_t c, const void *send, void *recv, size_t count, ncclDataType_t t,
                   int op)
{
    segment *h = c->h;
    size_t es = type_bytes(t), per = kSlot / es;
    unsigned char *mine = c->slots + (size_t)c->rank * kSlot;
    pthread_mutex_lock(&h->mu);
    uint64_t seq = ++c->seq; // as it runs (named in a mismatch; a graph replays a piece)
    h->d[c->rank] = coll_desc{K_ALLREDUCE, (int)t, op, count, seq};
    bool ok = barrier(c, "ncclAllReduce");
    for (int r = 0; ok && r < c->nranks; r++)
        if (!same_desc(h->d[r], h->d[c->rank])) {
            const coll_desc &a = h->d[r], &b = h->d[c->rank];
            break_comm(c, ncclInvalidUsage,
                       "collective %llu differs between ranks: rank %d: kind %d, %llu elements "
                       "of type %d, op %d; rank %d: kind %d, %llu elements of type %d, op %d",
                       (unsigned long long)seq, r, a.kind, (unsigned long long)a.count, a.type,
                       a.op, c->rank, b.kind, (unsigned long long)b.count, b.type, b.op);
            ok = false;
        }
    for (size_t off = 0; ok && off < count; off += per) {
        size_t n = count - off < per ? count - off : per;
        memcpy(mine, (const unsigned char *)send + off * es, n * es);
        ok = barrier(c, "ncclAllReduce");
        if (ok)
            reduce_into((unsigned char *)recv + off * es, c->slots, c->nranks, n, t, op);
        ok = ok && barrier(c, "ncclAllReduce");
    }
    finish(c, ok);
}

// One send and one receive of a group, either NULL (count < 0: none), on
// one rank's stream.  Progress alternates between them, so a ring (or a
// send to oneself) moves.
struct p2p_op {
    const void *sbuf;
    int to;
    void *rbuf;
    int from;
    size_t scount, rcount;
    ncclDataType_t stype, rtype;
    bool has_send, has_recv;
};

bool recv_step(ncclComm_t c, const p2p_op &o, uint64_t *done, uint64_t chunks)
{
    segment *h = c->h;
    send_state &s = h->s[o.from];
    if (!s.active || s.to != c->rank || s.id <= c->got[o.from] || s.posted <= s.taken)
        return false;
    if (s.type != (int)o.rtype || s.count != o.rcount) {
        break_comm(c, ncclInvalidUsage,
                   "rank %d sends %llu elements of type %d to rank %d, which receives %llu of "
                   "type %d",
                   o.from, (unsigned long long)s.count, s.type, c->rank,
                   (unsigned long long)o.rcount, (int)o.rtype);
        return false;
    }
    size_t es = type_bytes(o.rtype), per = kSlot / es, off = (size_t)*done * per;
    size_t n = o.rcount - off < per ? o.rcount - off : per;
    if (o.rcount)
        memcpy((unsigned char *)o.rbuf + off * es, c->slots + (size_t)o.from * kSlot, n * es);
    s.taken++;
    if (++*done == chunks)
        c->got[o.from] = s.id;
    pthread_cond_broadcast(&h->cv);
    return true;
}

bool send_step(ncclComm_t c, const p2p_op &o, uint64_t chunks)
{
    segment *h = c->h;
    send_state &s = h->s[c->rank];
    if (s.posted >= chunks || s.posted != s.taken)
        return false;
    size_t es = type_bytes(o.stype), per = kSlot / es, off = (size_t)s.posted * per;
    size_t n = o.scount - off < per ? o.scount - off : per;
    if (o.scount)
        memcpy(c->slots + (size_t)c->rank * kSlot, (const unsigned char *)o.sbuf + off * es,
               n * es);
    s.posted++;
    pthread_cond_broadcast(&h->cv);
    return true;
}

uint64_t chunks_of(size_t count, ncclDataType_t t)
{
    size_t per = kSlot / type_bytes(t);
    return count ? (count + per - 1) / per : 1; // an empty message still meets its peer
}

void run_p2p(ncclComm_t c, const p2p_op &o)
{
    segment *h = c->h;
    uint64_t schunks = o.has_send ? chunks_of(o.scount, o.stype) : 0;
    uint64_t rchunks = o.has_recv ? chunks_of(o.rcount, o.rtype) : 0, rdone = 0;
    pthread_mutex_lock(&h->mu);
    send_state &s = h->s[c->rank];
    if (o.has_send) // the id as it runs: a graph replays one piece many times
        s = send_state{o.to, (int)o.stype, o.scount, ++c->send_id, 0, 0, 1};
    pthread_cond_broadcast(&h->cv);
    timespec until = deadline(c->timeout_s);
    bool ok = !h->broken;
    while (ok && ((o.has_send && s.taken < schunks) || rdone < rchunks)) {
        bool moved = o.has_send && send_step(c, o, schunks);
        moved = (rdone < rchunks && recv_step(c, o, &rdone, rchunks)) || moved;
        if (h->broken)
            ok = false;
        else if (!moved)
            ok = wait_once(c, until, o.has_send ? "ncclSend" : "ncclRecv");
    }
    if (o.has_send)
        s.active = 0;
    finish(c, ok);
}

// The runtimes' fakegpu_submit_blocking: the executable's, then each
// loaded library's (the cuda module's; cuda-probe.so has a runtime of its
// own, which does not know the module's streams).
int add_submit(dl_phdr_info *info, size_t, void *arg)
{
    auto *list = (std::vector<submit_fn> *)arg;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0;
    void *dl = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!dl)
        return 0;
    void *sym = dlsym(dl, "fakegpu_submit_blocking");
    submit_fn f;
    memcpy(&f, &sym, sizeof f);
    bool seen = false;
    for (submit_fn g : *list)
        seen = seen || g == f;
    if (sym && !seen)
        list->push_back(f);
    dlclose(dl);
    return 0;
}

ncclResult_t enqueue(ncclComm_t c, cudaStream_t stream, std::function<void()> fn)
{
    if (c->submit.empty()) {
        void *sym = dlsym(RTLD_DEFAULT, "fakegpu_submit_blocking");
        if (sym) {
            submit_fn f;
            memcpy(&f, &sym, sizeof f);
            c->submit.push_back(f);
        }
        dl_iterate_phdr(add_submit, &c->submit);
    }
    for (submit_fn f : c->submit) {
        std::function<void()> op = fn;
        cudaError_t e = f(stream, &op);
        if (e != cudaErrorInvalidResourceHandle)
            return e == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
    }
    say("no fake GPU runtime knows stream %p", (void *)stream);
    return ncclUnhandledCudaError;
}

ncclResult_t check_comm(ncclComm_t comm)
{
    if (!comm)
        return ncclInvalidArgument;
    return (ncclResult_t)comm->async.load();
}

// Queues one rank's part of a group: its (at most one) send and recv.
ncclResult_t launch_p2p(const std::vector<p2p_call> &calls, ncclComm_t comm)
{
    p2p_op o{};
    cudaStream_t stream = nullptr;
    int sends = 0, recvs = 0;
    for (const p2p_call &k : calls) {
        if (k.comm != comm)
            continue;
        stream = k.stream;
        if (k.send) {
            o.sbuf = k.buf;
            o.to = k.peer;
            o.scount = k.count;
            o.stype = k.type;
            o.has_send = true;
            sends++;
        } else {
            o.rbuf = k.buf;
            o.from = k.peer;
            o.rcount = k.count;
            o.rtype = k.type;
            o.has_recv = true;
            recvs++;
        }
    }
    if (sends > 1 || recvs > 1) {
        say("a group of the fake holds at most one send and one receive per communicator");
        return ncclInvalidUsage;
    }
    return enqueue(comm, stream, [comm, o]() { run_p2p(comm, o); });
}

ncclResult_t p2p(bool send, void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                 cudaStream_t stream)
{
    ncclResult_t r = check_comm(comm);
    if (r != ncclSuccess)
        return r;
    if (peer < 0 || peer >= comm->nranks || !type_bytes(t) || (count && !buf))
        return ncclInvalidArgument;
    t_group.calls.push_back(p2p_call{comm, send, buf, count, t, peer, stream});
    if (t_group.depth > 0)
        return ncclSuccess;
    std::vector<p2p_call> calls;
    calls.swap(t_group.calls);
    return launch_p2p(calls, comm);
}

} // namespace

extern "C" {

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream)
{
    ncclResult_t r = check_comm(comm);
    if (r != ncclSuccess)
        return r;
    if (!type_bytes(datatype) || (int)op < 0 || op >= ncclAvg ||
        (count && (!sendbuff || !recvbuff)))
        return ncclInvalidArgument;
    return enqueue(comm, stream, [=]() {
        run_allreduce(comm, sendbuff, recvbuff, count, datatype, (int)op);
    });
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream)
{
    return p2p(true, const_cast<void *>(sendbuff), count, datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream)
{
    return p2p(false, recvbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclGroupStart()
{
    t_group.depth++;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd()
{
    if (t_group.depth <= 0)
        return ncclInvalidUsage;
    if (--t_group.depth > 0)
        return ncclSuccess;
    std::vector<p2p_call> calls;
    calls.swap(t_group.calls);
    ncclResult_t r = ncclSuccess;
    std::vector<ncclComm_t> done;
    for (const p2p_call &k : calls) {
        bool seen = false;
        for (ncclComm_t c : done)
            seen = seen || c == k.comm;
        if (seen)
            continue;
        done.push_back(k.comm);
        ncclResult_t e = launch_p2p(calls, k.comm);
        if (r == ncclSuccess)
            r = e;
    }
    return r;
}

} // extern "C"
