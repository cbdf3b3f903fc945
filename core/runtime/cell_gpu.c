/* The GPU a cell's stats come from (cell_gpu.h). */
#include "cell_gpu.h"

#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int dlg_gpu_of_device(const char *device, int local_rank, int ngpus)
{
    if (!device || ngpus <= 0)
        return -1;
    if (strcmp(device, "auto") == 0 || strcmp(device, "cuda") == 0)
        return (local_rank > 0 ? local_rank : 0) % ngpus;
    if (strncmp(device, "cuda:", 5) != 0 || device[5] < '0' || device[5] > '9')
        return -1;
    char *end;
    errno = 0;
    long n = strtol(device + 5, &end, 10);
    return *end || errno || n >= ngpus ? -1 : (int)n;
}

int dlg_cell_gpu(const dlg_cell *cell, const dlg_comm *comm, dlg_nvml *nv)
{
    size_t idx;
    if (!nv || !dlg_opt_find(cell->job->workload->options, "device", &idx) || !cell->wl[idx].set)
        return -1;
    dlg_rank_info ri = {.struct_size = sizeof ri};
    dlg_comm_info(comm, &ri);
    return dlg_gpu_of_device(cell->wl[idx].text, ri.local_rank, dlg_nvml_count(nv));
}
