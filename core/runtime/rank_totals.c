/* The job's figures from its ranks' (rank_totals.h).  Quadratic in the
 * ranks, once per repetition: a thousand ranks cost about a millisecond. */
#include "rank_totals.h"

#include <string.h>

_Static_assert(sizeof(dlg_rank_figs) == DLG_RANK_FIGS_DOUBLES * sizeof(double),
               "dlg_rank_figs is exchanged as a vector of doubles");

static uint64_t u64(double v) { return v > 0 ? (uint64_t)(v + 0.5) : 0; }

/* Whether rank i is the lowest of its node: the one whose readings of the
 * machine count. */
static bool node_first(const dlg_rank_figs *all, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (all[j].node == all[i].node)
            return false;
    return true;
}

/* Whether rank i's GPU stats count: it has some, and no lower rank has
 * stats of the same GPU (two ranks on one GPU sample the same board). */
static bool gpu_first(const dlg_rank_figs *all, size_t i)
{
    if (all[i].gpu < 0 || all[i].gpu_samples <= 0)
        return false;
    for (size_t j = 0; j < i; j++)
        if (all[j].node == all[i].node && all[j].gpu == all[i].gpu && all[j].gpu_samples > 0)
            return false;
    return true;
}

static void process_sums(const dlg_rank_figs *a, dlg_rep_figs *o)
{
    o->cpu_user_s += a->cpu_user_s;
    o->cpu_sys_s += a->cpu_sys_s;
    o->cpu_window_cpu_s += a->cpu_window_cpu_s;
    o->cpu_window_cap_s += a->cpu_window_cap_s;
    o->read_bytes += u64(a->read_bytes);
    o->storage_bytes += u64(a->storage_bytes);
    o->storage_ios += u64(a->storage_ios);
    o->storage_write_bytes += u64(a->storage_write_bytes);
    o->storage_write_ios += u64(a->storage_write_ios);
    o->major_faults += u64(a->major_faults);
    o->ctx_voluntary += u64(a->ctx_voluntary);
    o->ctx_involuntary += u64(a->ctx_involuntary);
}

static void gpu_sums(const dlg_rank_figs *a, dlg_rep_figs *o)
{
    o->gpus++;
    o->gpu_samples += (int)a->gpu_samples;
    o->gpu_util_sum_s += a->gpu_util * a->gpu_seconds;
    o->gpu_power_sum_s += a->gpu_power_w * a->gpu_seconds;
    o->gpu_seconds += a->gpu_seconds;
    o->gpu_energy_j += a->gpu_energy_j;
    if (u64(a->gpu_mem_peak) > o->gpu_mem_peak)
        o->gpu_mem_peak = u64(a->gpu_mem_peak);
}

/* What node i (its lowest rank) had to give: its ranks' sum; the
 * largest node's is kept. */
static void node_holdings(const dlg_rank_figs *all, size_t n, size_t i, dlg_rep_figs *o)
{
    double rss = 0, cpus = 0, cap = 0;
    for (size_t j = i; j < n; j++)
        if (all[j].node == all[i].node) {
            rss += all[j].rss_peak;
            cpus += all[j].cpus_used;
            cap += all[j].cpu_capacity;
        }
    if (u64(rss) > o->rss_peak)
        o->rss_peak = u64(rss);
    if (cpus > o->cpus_used) {
        o->cpus_used = (int)cpus;
        o->cpu_capacity = cap;
    }
}

/* The nodes' RAPL counters (one reading per node): summed where every
 * node has them whole, else marked lost. */
typedef struct rapl_nodes {
    int with, with_dram, nodes;
} rapl_nodes;

static void rapl_add(const dlg_rank_figs *a, dlg_cpu_energy *e, rapl_nodes *rn)
{
    rn->nodes++;
    if (!a->rapl_have)
        return;
    rn->with++;
    e->pkg_j += a->rapl_pkg_j;
    e->seconds += a->rapl_s;
    e->pkg_lost |= a->rapl_pkg_lost != 0;
    if (a->rapl_have_dram) {
        rn->with_dram++;
        e->dram_j += a->rapl_dram_j;
        e->dram_lost |= a->rapl_dram_lost != 0;
    }
}

static void rapl_close(dlg_cpu_energy *e, const rapl_nodes *rn)
{
    e->have = rn->with > 0;
    e->have_dram = rn->with_dram > 0;
    if (!e->have)
        return;
    e->pkg_lost |= rn->with < rn->nodes;         /* a node without counters */
    e->dram_lost |= e->have_dram && rn->with_dram < rn->nodes; /* or without DRAM zones */
    e->seconds /= rn->with; /* the nodes' mean window, for the mean power */
}

void dlg_rank_figs_total(const dlg_rank_figs *all, size_t n, dlg_rep_figs *out)
{
    memset(out, 0, sizeof *out);
    rapl_nodes rn = {0, 0, 0};
    double iowait = 0;
    int iowait_nodes = 0;
    for (size_t i = 0; i < n; i++) {
        const dlg_rank_figs *a = &all[i];
        process_sums(a, out);
        if (gpu_first(all, i))
            gpu_sums(a, out);
        if (!node_first(all, i))
            continue;
        out->nodes++;
        out->disk_read_bytes += u64(a->disk_read_bytes);
        if (a->iowait_fraction >= 0) {
            iowait += a->iowait_fraction;
            iowait_nodes++;
        }
        rapl_add(a, &out->cpu_energy, &rn);
        node_holdings(all, n, i, out);
    }
    out->iowait_fraction = iowait_nodes ? iowait / iowait_nodes : -1;
    rapl_close(&out->cpu_energy, &rn);
}

static void cpu_energy_add(dlg_cpu_energy *acc, const dlg_cpu_energy *e)
{
    if (!e->have)
        return;
    acc->have = true;
    acc->have_dram |= e->have_dram;
    acc->pkg_lost |= e->pkg_lost;
    acc->dram_lost |= e->dram_lost;
    acc->pkg_j += e->pkg_j;
    acc->dram_j += e->dram_j;
    acc->seconds += e->seconds;
}

void dlg_rep_figs_add(dlg_cell_result *res, const dlg_rep_figs *f)
{
    res->cpu_user_s += f->cpu_user_s;
    res->cpu_sys_s += f->cpu_sys_s;
    res->cpu_window_cpu_s += f->cpu_window_cpu_s;
    res->cpu_window_cap_s += f->cpu_window_cap_s;
    res->read_bytes += f->read_bytes;
    res->storage_bytes += f->storage_bytes;
    res->storage_ios += f->storage_ios;
    res->storage_write_bytes += f->storage_write_bytes;
    res->storage_write_ios += f->storage_write_ios;
    res->major_faults += f->major_faults;
    res->ctx_voluntary += f->ctx_voluntary;
    res->ctx_involuntary += f->ctx_involuntary;
    res->disk_read_bytes += f->disk_read_bytes;
    if (f->iowait_fraction >= 0)
        res->iowait_fraction = f->iowait_fraction;
    cpu_energy_add(&res->cpu_energy, &f->cpu_energy);
    if (f->rss_peak > res->rss_peak)
        res->rss_peak = f->rss_peak;
    res->cpus_used = f->cpus_used;
    res->cpu_capacity = f->cpu_capacity;
    res->nodes = f->nodes;
    if (f->gpu_samples > 0) {
        res->gpu_samples += f->gpu_samples;
        res->gpu_util_sum_s += f->gpu_util_sum_s;
        res->gpu_power_sum_s += f->gpu_power_sum_s;
        res->gpu_seconds += f->gpu_seconds;
        res->gpu_energy_j += f->gpu_energy_j;
        if (f->gpu_mem_peak > res->gpu_mem_peak)
            res->gpu_mem_peak = f->gpu_mem_peak;
        if (f->gpus > res->gpus)
            res->gpus = f->gpus;
    }
}
