/* Which device a rank's buffers live on: the `device` option read, and
 * for a bare "cuda" the rank's place on its node, as the host tells it
 * (or, from an older host, the launcher).  No device calls here
 * (comm_dev.c counts the GPUs). */
#include "comm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int comm_device_parse(const char *text, int *index, char *err, size_t errlen)
{
    const char *t = text ? text : "";
    *index = COMM_DEV_CPU;
    if (strcmp(t, "cpu") == 0)
        return 0;
    if (strcmp(t, "cuda") == 0) {
        *index = COMM_DEV_ANY;
        return 0;
    }
    if (strncmp(t, "cuda:", 5) == 0 && t[5] >= '0' && t[5] <= '9') {
        char *end;
        long v = strtol(t + 5, &end, 10);
        if (!*end && v < COMM_MAX_GPUS) {
            *index = (int)v;
            return 0;
        }
    }
    snprintf(err, errlen, "device = %s: expected cpu, cuda or cuda:N (N in 0..%d)", t, COMM_MAX_GPUS - 1);
    return -DLG_EINVAL;
}

/* A whole non-negative number, else -1. */
static int env_index(const char *name)
{
    const char *v = getenv(name);
    if (!v || *v < '0' || *v > '9')
        return -1;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    return *end || errno || n > 1 << 20 ? -1 : (int)n;
}

/* The launchers' node-local rank: Open MPI, MPICH/Hydra and Intel MPI,
 * Slurm's srun, torchrun.  The first one set wins. */
static const char *const local_rank_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                                              "LOCAL_RANK"};

int comm_local_rank(const dlg_host *h, int rank, const char **from)
{
    int local = dlg_host_local_rank(h);
    if (local >= 0) {
        *from = "the host: MPI's ranks on this node";
        return local;
    }
    for (size_t i = 0; i < sizeof local_rank_vars / sizeof *local_rank_vars; i++) {
        int v = env_index(local_rank_vars[i]);
        if (v >= 0) {
            *from = local_rank_vars[i];
            return v;
        }
    }
    *from = "the rank: no launcher said the local rank";
    return rank > 0 ? rank : 0;
}

bool comm_on_device(const dlg_value *opts)
{
    char err[160];
    int index;
    return comm_device_parse(opts[COMM_OPT_DEVICE].text, &index, err, sizeof err) == 0 && index != COMM_DEV_CPU;
}
