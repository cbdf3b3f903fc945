/* What a job's workload is told about a cell, and where its messages
 * belong: shared by the plan's check (plan_workloads.c) and the runner's
 * setup (runner.c), so that the two see the same job info and name the
 * same line. */
#include "plan.h"

#include <stdio.h>
#include <string.h>

size_t dlg_msg_key_len(const char *msg)
{
    size_t n = strspn(msg, "abcdefghijklmnopqrstuvwxyz0123456789_");
    if (n == 0)
        return 0;
    const char *q = msg + n;
    return strncmp(q, " = ", 3) == 0 || strncmp(q, " '", 2) == 0 || strncmp(q, ": ", 2) == 0 ? n : 0;
}

/* The entry of the workload option, or else the core job key (storage),
 * that msg starts with (NULL: none, or the table's default, which the
 * job's section stands for). */
static const dlg_entry *key_entry(const dlg_job *j, const char *msg)
{
    size_t n = dlg_msg_key_len(msg);
    for (size_t k = 0; n && k < j->nwl; k++) {
        const char *name = j->workload->options[k].name;
        if (strlen(name) == n && strncmp(name, msg, n) == 0)
            return j->wl_src[k];
    }
    for (size_t k = 0; n && k < DLG_K_COUNT; k++) {
        const char *name = dlg_core_job_options[k].name;
        if (strlen(name) == n && strncmp(name, msg, n) == 0)
            return j->core_src[k];
    }
    return NULL;
}

const char *dlg_job_msg_where(const dlg_job *j, const char *ctx, const char *error, char *where, size_t len)
{
    size_t clen = strlen(ctx);
    const char *msg = strncmp(error, ctx, clen) == 0 && strncmp(error + clen, ": ", 2) == 0 ? error + clen + 2 : error;
    dlg_plan_where(key_entry(j, msg), j->sec, where, len);
    return msg;
}

dlg_job_info dlg_cell_job_info(const dlg_plan *p, const dlg_cell *c, int cpus, int rep)
{
    const char *storage = c->core[DLG_K_STORAGE].text;
    const dlg_instance_spec *st = storage ? dlg_plan_storage(p, storage) : NULL;
    const dlg_storage_ops *sops = st ? st->desc->ops : NULL;
    dlg_job_info info = {
        .struct_size = sizeof info,
        .job = c->job->name,
        .cpus = cpus,
        .seed = (uint64_t)c->core[DLG_K_SEED].i + (uint64_t)rep,
        .repetition = rep,
        .memory_limit = c->core[DLG_K_MEMORY].set ? (uint64_t)c->core[DLG_K_MEMORY].i : 0,
        .storage_caps = sops ? sops->caps : 0,
        .storage = c->core[DLG_K_STORAGE].set ? storage : NULL,
    };
    return info;
}
