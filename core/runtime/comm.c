/* The run's ranks: who started this process, and the calls that work
 * alone (a NULL comm) as well as under MPI (comm_engine.h). */
#include "comm.h"

#include "comm_engine.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What launchers put in each rank's environment: Open MPI's mpirun (and
 * prterun), a PMIx server (Open MPI 5, srun --mpi=pmix), and PMI-1/2
 * (MPICH's hydra, srun --mpi=pmi2).  Not SLURM_PROCID: a batch script
 * has it too, as one process outside any MPI job. */
static const char *const launcher_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", NULL};

bool dlg_comm_launched(char *var, size_t len)
{
    for (const char *const *v = launcher_vars; *v; v++) {
        const char *val = getenv(*v);
        if (val && *val) {
            snprintf(var, len, "%s=%s", *v, val);
            return true;
        }
    }
    return false;
}

/* The rank variables of launcher_vars' launchers, in the same order. */
static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", NULL};

int dlg_comm_launched_rank(void)
{
    for (const char *const *v = rank_vars; *v; v++) {
        const char *val = getenv(*v);
        if (val && *val) {
            int r = atoi(val);
            return r > 0 ? r : 0;
        }
    }
    return 0;
}

int dlg_comm_open(dlg_comm **out, char *why, size_t len)
{
    char var[128];
    *out = NULL;
    if (!dlg_comm_launched(var, sizeof var))
        return 0;
    return dlg_engine_open(out, var, why, len);
}

void dlg_comm_close(dlg_comm *c)
{
    if (c)
        dlg_engine_close(c);
}

_Noreturn void dlg_comm_abort(dlg_comm *c, int code)
{
    fflush(stdout);
    fflush(stderr);
    if (c)
        dlg_engine_abort(c, code);
    _exit(code);
}

/* What the first ABI 1.1 hosts filled: a caller that left struct_size 0
 * (or less) predates the rule that it says its size, and gets that. */
#define RANK_INFO_FIRST offsetof(dlg_rank_info, local_rank)

void dlg_comm_info(const dlg_comm *c, dlg_rank_info *out)
{
    dlg_rank_info all;
    if (c)
        dlg_engine_info(c, &all);
    else
        all = (dlg_rank_info){sizeof all, 0, 1, "self", "", .local_rank = 0, .local_size = 1,
                              .node_key = (uint64_t)getpid()}; /* alone: nothing is shared */
    size_t n = out->struct_size < RANK_INFO_FIRST ? RANK_INFO_FIRST : out->struct_size;
    if (n > sizeof all)
        n = sizeof all;
    all.struct_size = (uint32_t)n;
    memcpy(out, &all, n); /* never past the caller's struct */
}

void dlg_comm_node(const dlg_comm *c, int *node, int *nodes)
{
    if (c) {
        dlg_engine_node(c, node, nodes);
        return;
    }
    *node = 0;
    *nodes = 1;
}

int dlg_comm_rank(const dlg_comm *c)
{
    dlg_rank_info ri = {.struct_size = sizeof ri};
    dlg_comm_info(c, &ri);
    return ri.rank;
}

int dlg_comm_size(const dlg_comm *c)
{
    dlg_rank_info ri = {.struct_size = sizeof ri};
    dlg_comm_info(c, &ri);
    return ri.size;
}

void dlg_comm_library(char *buf, size_t len) { dlg_engine_library(buf, len); }

const char *dlg_comm_type_name(dlg_comm_type t)
{
    return t == DLG_COMM_F32 ? "f32" : t == DLG_COMM_F64 ? "f64" : t == DLG_COMM_I64 ? "i64" : "(unknown type)";
}

size_t dlg_comm_type_size(dlg_comm_type t)
{
    return t == DLG_COMM_F32 ? 4 : t == DLG_COMM_F64 || t == DLG_COMM_I64 ? 8 : 0;
}

/* A rank the call names: one of the run's, else why. */
static int rank_ok(const dlg_comm *c, int r, const char *what, char *why, size_t len)
{
    int size = dlg_comm_size(c);
    if (r >= 0 && r < size)
        return 0;
    snprintf(why, len, "%s rank %d is not one of the run's %d rank%s", what, r, size, size == 1 ? "" : "s");
    return -DLG_EINTERNAL;
}

int dlg_comm_allreduce(dlg_comm *c, dlg_comm_chan ch, const void *send, void *recv, size_t count, dlg_comm_type t,
                       dlg_comm_op op, char *why, size_t len)
{
    return dlg_comm_allreduce_until(c, ch, send, recv, count, t, op, NULL, why, len);
}

int dlg_comm_allreduce_until(dlg_comm *c, dlg_comm_chan ch, const void *send, void *recv, size_t count,
                             dlg_comm_type t, dlg_comm_op op, const dlg_comm_until *u, char *why, size_t len)
{
    if (!dlg_comm_type_size(t)) {
        snprintf(why, len, "element type %d is not one of dlg_comm_type's", (int)t);
        return -DLG_EINTERNAL;
    }
    if (c)
        return dlg_engine_allreduce(c, ch, send, recv, count, t, op, u, why, len);
    /* alone: the sum, maximum or minimum of one value is that value */
    if (send != recv && count)
        memmove(recv, send, count * dlg_comm_type_size(t));
    return 0;
}

int dlg_comm_bcast(dlg_comm *c, dlg_comm_chan ch, void *buf, size_t bytes, int root, char *why, size_t len)
{
    return dlg_comm_bcast_until(c, ch, buf, bytes, root, NULL, why, len);
}

int dlg_comm_bcast_until(dlg_comm *c, dlg_comm_chan ch, void *buf, size_t bytes, int root, const dlg_comm_until *u,
                         char *why, size_t len)
{
    int rc = rank_ok(c, root, "root", why, len);
    if (rc != 0)
        return rc;
    return c ? dlg_engine_bcast(c, ch, buf, bytes, root, u, why, len) : 0;
}

int dlg_comm_sendrecv(dlg_comm *c, const void *sbuf, int to, void *rbuf, int from, size_t bytes, char *why,
                      size_t len)
{
    int rc;
    if ((rc = rank_ok(c, to, "destination", why, len)) != 0 || (rc = rank_ok(c, from, "source", why, len)) != 0)
        return rc;
    int me = dlg_comm_rank(c);
    if (to == me && from == me) { /* a ring of one: a copy */
        if (sbuf != rbuf && bytes)
            memmove(rbuf, sbuf, bytes);
        return 0;
    }
    return dlg_engine_sendrecv(c, sbuf, to, rbuf, from, bytes, why, len);
}

int dlg_comm_barrier(dlg_comm *c, char *why, size_t len) { return c ? dlg_engine_barrier(c, why, len) : 0; }
