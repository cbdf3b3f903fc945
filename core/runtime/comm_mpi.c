/* The comm engine on MPI: opened only under a launcher (comm.c), errors
 * come back as codes (MPI_ERRORS_RETURN) said with MPI_Error_string. */
#include "comm_engine.h"
#include "proc_file.h"

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct dlg_comm {
    MPI_Comm work, ctl; /* the workloads', the runner's: duplicates of the world */
    int rank, size;
    int local_rank, local_size; /* on this node (MPI_COMM_TYPE_SHARED), found once at open */
    int node, nodes;            /* this node's index (rank 0's is 0) and the nodes' count */
    uint64_t node_key;          /* dlg_rank_info's: the node's first local rank's */
    pthread_t owner; /* opened MPI: MPI_THREAD_FUNNELED lets it alone call */
    char library[256];
};

/* MPI counts are int: longer buffers go in pieces of this many elements */
#define CHUNK ((size_t)1 << 30)

/* "what: MPI's text for rc" into why; returns -1 */
static int mpi_fail(int rc, char *why, size_t len, const char *fmt, ...) DLG_PRINTF(4, 5);
static int mpi_fail(int rc, char *why, size_t len, const char *fmt, ...)
{
    char what[512], text[MPI_MAX_ERROR_STRING];
    int n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (MPI_Error_string(rc, text, &n) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", rc);
    snprintf(why, len, "%s: %s", what, text);
    return -1;
}

static MPI_Comm chan(const dlg_comm *c, dlg_comm_chan ch) { return ch == DLG_COMM_CTL ? c->ctl : c->work; }

void dlg_engine_library(char *buf, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    if (MPI_Get_library_version(v, &n) != MPI_SUCCESS) /* callable before MPI_Init */
        n = 0;
    v[n > 0 && n < (int)sizeof v ? n : 0] = '\0';
    v[strcspn(v, "\n")] = '\0'; /* its first line */
    for (size_t k = strlen(v); k > 0 && (v[k - 1] == ' ' || v[k - 1] == ','); k--)
        v[k - 1] = '\0';
    snprintf(buf, len, "%s", v);
}

/* The node key this rank would give its node's ranks: its pid (unique
 * among live processes) and its start time (unlike a reused pid's). */
static uint64_t own_key(void)
{
    unsigned long long start = 0; /* /proc/self/stat's 22nd field: start time in clock ticks */
    char line[1024];
    const char *p = dlg_file_line("/proc/self/stat", line, sizeof line) == 0 ? strrchr(line, ')') : NULL;
    if (!p || sscanf(p, ") %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                     &start) != 1)
        start = 0;
    return (uint64_t)getpid() << 32 ^ (uint64_t)start;
}

/* The nodes: their ranks of lowest local rank (a node's leaders), split
 * apart in world rank order, number the nodes from rank 0's; each leader
 * tells its node's other ranks. */
static int node_index(dlg_comm *c, MPI_Comm node)
{
    MPI_Comm leaders;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, c->local_rank == 0 ? 0 : MPI_UNDEFINED, c->rank, &leaders);
    if (rc != MPI_SUCCESS)
        return rc;
    int64_t v[3] = {0, 1, (int64_t)own_key()};
    if (leaders != MPI_COMM_NULL) {
        int i, n;
        MPI_Comm_rank(leaders, &i);
        MPI_Comm_size(leaders, &n);
        v[0] = i;
        v[1] = n;
        MPI_Comm_free(&leaders);
    }
    if ((rc = MPI_Bcast(v, 3, MPI_INT64_T, 0, node)) != MPI_SUCCESS)
        return rc;
    c->node = (int)v[0];
    c->nodes = (int)v[1];
    c->node_key = (uint64_t)v[2];
    return MPI_SUCCESS;
}

/* This rank's place among the ranks sharing its node's memory, their
 * number, and the node's index among the run's nodes: the splits are
 * collective, so they happen once here, where every rank is, and are
 * freed at once (nothing else uses them). */
static int node_place(dlg_comm *c)
{
    MPI_Comm node;
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_rank(node, &c->local_rank);
    MPI_Comm_size(node, &c->local_size);
    rc = node_index(c, node);
    int frc = MPI_Comm_free(&node);
    return rc != MPI_SUCCESS ? rc : frc;
}

/* After MPI_Init, a failure that may be this rank's alone (the others
 * wait in a collective, or in MPI_Finalize's fence, for it): no
 * MPI_Finalize, which would wait for them; the rank exits non-zero with
 * its line, and the launcher ends the others. */
static int fail_after_init(dlg_comm *c, int rc, char *why, size_t len, const char *launcher, const char *call)
{
    mpi_fail(rc, why, len, "%s: %s", launcher, call);
    free(c);
    return -1;
}

int dlg_engine_open(dlg_comm **out, const char *launcher, char *why, size_t len)
{
    /* before MPI_Init: a rank that cannot have it ends before any
     * collective, where no other rank can be left waiting for it */
    dlg_comm *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, len, "%s: out of memory", launcher);
        return -1;
    }
    int provided = 0;
    /* FUNNELED: the cell runs in dlgauge's own main thread (isolation =
     * none, the only one under several ranks), and the host's collectives
     * come from the thread that runs setup and step */
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) {
        free(c);
        return mpi_fail(rc, why, len, "%s: MPI_Init_thread", launcher);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_FUNNELED) { /* the library's, alike on every rank */
        snprintf(why, len, "%s: MPI_Init_thread gave thread level %d, less than MPI_THREAD_FUNNELED (%d)",
                 launcher, provided, MPI_THREAD_FUNNELED);
        free(c);
        MPI_Finalize();
        return -1;
    }
    c->owner = pthread_self();
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->work)) != MPI_SUCCESS ||
        (rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->ctl)) != MPI_SUCCESS)
        return fail_after_init(c, rc, why, len, launcher, "MPI_Comm_dup");
    if ((rc = node_place(c)) != MPI_SUCCESS)
        return fail_after_init(c, rc, why, len, launcher, "MPI_Comm_split_type (the ranks on this node)");
    dlg_engine_library(c->library, sizeof c->library);
    *out = c;
    return 0;
}

void dlg_engine_close(dlg_comm *c)
{
    MPI_Comm_free(&c->work);
    MPI_Comm_free(&c->ctl);
    free(c);
    MPI_Finalize();
}

_Noreturn void dlg_engine_abort(dlg_comm *c, int code)
{
    MPI_Abort(c->ctl, code);
    exit(code); /* MPI_Abort returns only where it could not abort */
}

void dlg_engine_node(const dlg_comm *c, int *node, int *nodes)
{
    *node = c->node;
    *nodes = c->nodes;
}

void dlg_engine_info(const dlg_comm *c, dlg_rank_info *out)
{
    *out = (dlg_rank_info){sizeof *out, c->rank, c->size, "mpi", c->library, c->local_rank, c->local_size,
                           c->node_key};
}

/* A collective from another thread (a workload's pool, a loader's
 * worker) is outside the thread level MPI was given: refused, not
 * undefined behaviour inside MPI. */
static int own_thread(const dlg_comm *c, char *why, size_t len)
{
    if (pthread_equal(pthread_self(), c->owner))
        return 0;
    snprintf(why, len, "called from a thread other than the one that opened MPI (MPI_THREAD_FUNNELED): call the "
             "collectives from the thread that runs setup and step");
    return -DLG_EINTERNAL;
}

static MPI_Datatype mpi_type(dlg_comm_type t)
{
    return t == DLG_COMM_F32 ? MPI_FLOAT : t == DLG_COMM_F64 ? MPI_DOUBLE : MPI_INT64_T;
}

static MPI_Op mpi_op(dlg_comm_op op) { return op == DLG_COMM_MAX ? MPI_MAX : op == DLG_COMM_MIN ? MPI_MIN : MPI_SUM; }

/* Tests of a request before a wait (comm.h's until) starts to sleep
 * between them: an agreement whose peers are there ends in microseconds. */
#define UNTIL_SPINS 1000
#define UNTIL_NAP_NS 1000000L

/* The nonblocking collective rq to its end, asking u's give_up between
 * naps; -DLG_ESTOP where it gives up (rq left in flight: the caller ends
 * the ranks). */
static int wait_until(MPI_Request *rq, const dlg_comm_until *u, const char *what, char *why, size_t len)
{
    for (unsigned k = 0;; k++) {
        int done = 0;
        int rc = MPI_Test(rq, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return mpi_fail(rc, why, len, "%s", what);
        if (done)
            return 0;
        if (k < UNTIL_SPINS)
            continue;
        if (u->give_up(u->ctx)) {
            snprintf(why, len, "%s: gave up waiting for the other ranks", what);
            return -DLG_ESTOP;
        }
        struct timespec nap = {0, UNTIL_NAP_NS};
        nanosleep(&nap, NULL);
    }
}

/* One piece of an allreduce: blocking, or as u waits. */
static int allreduce_piece(const void *s, void *r, int n, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                           const dlg_comm_until *u, char *why, size_t len)
{
    if (!u) {
        int rc = MPI_Allreduce(s, r, n, dt, op, comm);
        return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, why, len, "MPI_Allreduce");
    }
    MPI_Request rq;
    int rc = MPI_Iallreduce(s, r, n, dt, op, comm, &rq);
    return rc == MPI_SUCCESS ? wait_until(&rq, u, "MPI_Iallreduce", why, len) : mpi_fail(rc, why, len, "MPI_Iallreduce");
}

static int bcast_piece(void *buf, int n, int root, MPI_Comm comm, const dlg_comm_until *u, char *why, size_t len)
{
    if (!u) {
        int rc = MPI_Bcast(buf, n, MPI_BYTE, root, comm);
        return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, why, len, "MPI_Bcast");
    }
    MPI_Request rq;
    int rc = MPI_Ibcast(buf, n, MPI_BYTE, root, comm, &rq);
    return rc == MPI_SUCCESS ? wait_until(&rq, u, "MPI_Ibcast", why, len) : mpi_fail(rc, why, len, "MPI_Ibcast");
}

int dlg_engine_allreduce(dlg_comm *c, dlg_comm_chan ch, const void *send, void *recv, size_t count,
                         dlg_comm_type t, dlg_comm_op op, const dlg_comm_until *u, char *why, size_t len)
{
    if (own_thread(c, why, len) != 0)
        return -DLG_EINTERNAL;
    size_t esz = dlg_comm_type_size(t);
    for (size_t done = 0; done < count;) {
        size_t n = count - done < CHUNK ? count - done : CHUNK;
        char *r = (char *)recv + done * esz;
        const void *s = send == recv ? MPI_IN_PLACE : (const char *)send + done * esz;
        int rc = allreduce_piece(s, r, (int)n, mpi_type(t), mpi_op(op), chan(c, ch), u, why, len);
        if (rc != 0)
            return rc;
        done += n;
    }
    return 0;
}

int dlg_engine_bcast(dlg_comm *c, dlg_comm_chan ch, void *buf, size_t bytes, int root, const dlg_comm_until *u,
                     char *why, size_t len)
{
    if (own_thread(c, why, len) != 0)
        return -DLG_EINTERNAL;
    for (size_t done = 0; done < bytes;) {
        size_t n = bytes - done < CHUNK ? bytes - done : CHUNK;
        int rc = bcast_piece((char *)buf + done, (int)n, root, chan(c, ch), u, why, len);
        if (rc != 0)
            return rc;
        done += n;
    }
    return 0;
}

int dlg_engine_sendrecv(dlg_comm *c, const void *sbuf, int to, void *rbuf, int from, size_t bytes, char *why,
                        size_t len)
{
    if (own_thread(c, why, len) != 0)
        return -DLG_EINTERNAL;
    for (size_t done = 0; done < bytes;) {
        size_t n = bytes - done < CHUNK ? bytes - done : CHUNK;
        char *r = (char *)rbuf + done;
        int rc = sbuf == rbuf ? MPI_Sendrecv_replace(r, (int)n, MPI_BYTE, to, 0, from, 0, c->work, MPI_STATUS_IGNORE)
                              : MPI_Sendrecv((const char *)sbuf + done, (int)n, MPI_BYTE, to, 0, r, (int)n, MPI_BYTE,
                                             from, 0, c->work, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return mpi_fail(rc, why, len, sbuf == rbuf ? "MPI_Sendrecv_replace" : "MPI_Sendrecv");
        done += n;
    }
    return 0;
}

int dlg_engine_barrier(dlg_comm *c, char *why, size_t len)
{
    if (own_thread(c, why, len) != 0)
        return -DLG_EINTERNAL;
    int rc = MPI_Barrier(c->work);
    return rc == MPI_SUCCESS ? 0 : mpi_fail(rc, why, len, "MPI_Barrier");
}
