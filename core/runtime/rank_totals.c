/* The job's figures from its ranks' (rank_totals.h).  Quadratic in the
 * ranks, and a node's CPU masks linear in its ranks x their chunks, once
 * per repetition: a thousand ranks cost about a millisecond. */
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
    o->read_bytes += u64(a->read_bytes);
    o->storage_bytes += u64(a->storage_bytes);
    o->storage_ios += u64(a->storage_ios);
    o->storage_write_bytes += u64(a->storage_write_bytes);
    o->storage_write_ios += u64(a->storage_write_ios);
    o->major_faults += u64(a->major_faults);
    o->ctx_voluntary += u64(a->ctx_voluntary);
    o->ctx_involuntary += u64(a->ctx_involuntary);
    o->disk_counted |= a->disk_counted > 0;
    o->disk_charged_bytes += u64(a->disk_charged_bytes);
    o->disk_charged_ios += a->disk_charged_ios;
    if (u64(a->files_bytes) > o->files_bytes)
        o->files_bytes = u64(a->files_bytes);
    o->files_lost |= a->files_lost > 0;
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

/* A node's CPU sets: the ranks' masks (rank_totals.h) of one node. */
typedef struct node_sets {
    int ranks;
    int distinct;             /* CPUs in the union of the known sets */
    int counted;              /* the known sets' sizes summed */
    bool unknown;             /* a rank's set was not known */
    bool same;                /* every known set is the lowest rank's */
    double unknown_cpus, unknown_cap; /* those ranks' granted vCPUs, capacity */
} node_sets;

static int popcount(uint64_t m)
{
    int k = 0;
    for (; m; m &= m - 1)
        k++;
    return k;
}

static uint64_t chunk(const double *masks, size_t chunks, size_t rank, size_t c)
{
    return u64(masks[rank * chunks + c]);
}

static bool set_known(const double *masks, size_t chunks, size_t rank)
{
    for (size_t c = 0; masks && c < chunks; c++)
        if (chunk(masks, chunks, rank, c))
            return true;
    return false;
}

/* Node i's (its lowest rank's) sets; linear in its ranks x chunks. */
static void node_sets_of(const dlg_rank_figs *all, size_t n, size_t i, const double *masks, size_t chunks,
                         node_sets *ns)
{
    *ns = (node_sets){.same = true};
    for (size_t j = i; j < n; j++)
        if (all[j].node == all[i].node) {
            ns->ranks++;
            if (!set_known(masks, chunks, j)) {
                ns->unknown = true;
                ns->unknown_cpus += all[j].cpus_used;
                ns->unknown_cap += all[j].cpu_capacity;
            }
        }
    for (size_t c = 0; masks && c < chunks; c++) {
        uint64_t acc = 0, first = chunk(masks, chunks, i, c);
        for (size_t j = i; j < n; j++)
            if (all[j].node == all[i].node) {
                uint64_t m = chunk(masks, chunks, j, c);
                acc |= m;
                ns->counted += popcount(m);
                ns->same &= m == first;
            }
        ns->distinct += popcount(acc);
    }
}

/* What node i had to give: its ranks' memory summed; its CPUs the
 * distinct ones of their sets, or their granted vCPUs summed where that
 * is less (quotas); the largest node's is kept.  cpu_user_share's
 * window x capacity is the node's, summed over nodes: ranks that share
 * CPUs count them once there too (else unbound ranks read half busy). */
static void node_holdings(const dlg_rank_figs *all, size_t n, size_t i, const node_sets *ns, dlg_rep_figs *o)
{
    double rss = 0, cpus = 0, cap = 0, cap_s = 0;
    for (size_t j = i; j < n; j++)
        if (all[j].node == all[i].node) {
            rss += all[j].rss_peak;
            cpus += all[j].cpus_used;
            cap += all[j].cpu_capacity;
            cap_s += all[j].cpu_window_cap_s;
        }
    double distinct = ns->distinct + ns->unknown_cpus, distinct_cap = ns->distinct + ns->unknown_cap;
    if (distinct < cpus)
        cpus = distinct;
    if (distinct_cap < cap) {
        cap_s *= distinct_cap / cap;
        cap = distinct_cap;
    }
    o->cpu_window_cap_s += cap_s;
    if (u64(rss) > o->rss_peak)
        o->rss_peak = u64(rss);
    if (cpus > o->cpus_used) {
        o->cpus_used = (int)cpus;
        o->cpu_capacity = cap;
    }
}

/* The job's threads' run delay, and the steal of each rank's CPUs. */
static void sched_sums(const dlg_rank_figs *a, dlg_sched_totals *t)
{
    if (a->sch_have_wait) {
        t->have_wait = true;
        t->oncpu_ns += u64(a->sch_oncpu_ns);
        t->delay_ns += u64(a->sch_delay_ns);
    }
    if (a->sch_have_steal) {
        t->have_steal = true;
        t->steal += u64(a->sch_steal);
        t->ticks += u64(a->sch_ticks);
    }
}

/* Other processes on node i's CPUs: their busy ticks less every rank's
 * own time (a rank's siblings are the job, not others).  Where the sets
 * are the same, the CPUs were read by each rank: once, the lowest's;
 * where disjoint, summed; partly overlapping sets cannot be told apart
 * from a rank's sum over its CPUs, and the node is left out. */
static void node_other(const dlg_rank_figs *all, size_t n, size_t i, const node_sets *ns, dlg_sched_totals *t)
{
    double busy = 0, own = 0, span = 0, ncpus = 0;
    for (size_t j = i; j < n; j++)
        if (all[j].node == all[i].node) {
            if (!all[j].sch_have_other)
                return;
            busy += all[j].sch_busy;
            own += all[j].sch_own;
            span += all[j].sch_span;
            ncpus += all[j].sch_ncpus;
        }
    if (ns->ranks > 1 && (ns->unknown || !(ns->same || ns->distinct == ns->counted)))
        return;
    if (ns->ranks > 1 && ns->same) {
        busy = all[i].sch_busy;
        span = all[i].sch_span;
        ncpus = all[i].sch_ncpus;
    }
    t->have_other = true;
    t->busy += u64(busy);
    t->own += u64(own);
    t->span += u64(span);
    t->ncpus += (int)ncpus;
}

/* The input wait of the rank that waited the largest share of its steps
 * (the lowest such): a starved rank holds the others up in their
 * collectives, where theirs shows as compute, not as input wait. */
static void data_wait(const dlg_rank_figs *a, dlg_rep_figs *o)
{
    if (a->busy_ns <= 0)
        return;
    if (o->busy_ns == 0 || a->wait_ns / a->busy_ns > (double)o->wait_ns / (double)o->busy_ns) {
        o->wait_ns = u64(a->wait_ns);
        o->busy_ns = u64(a->busy_ns);
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

size_t dlg_cpu_mask_chunks(const dlg_cpuset *s)
{
    for (int id = s->nbits - 1; id >= 0; id--)
        if (dlg_cpuset_has(s, id))
            return (size_t)id / DLG_CPU_MASK_BITS + 1;
    return 0;
}

void dlg_cpu_mask_pack(const dlg_cpuset *s, double *mask, size_t chunks)
{
    for (size_t c = 0; c < chunks; c++) {
        uint64_t bits = 0;
        for (int b = 0; b < DLG_CPU_MASK_BITS; b++)
            if (dlg_cpuset_has(s, (int)c * DLG_CPU_MASK_BITS + b))
                bits |= UINT64_C(1) << b;
        mask[c] = (double)bits;
    }
}

void dlg_rank_figs_total(const dlg_rank_figs *all, size_t n, const double *masks, size_t chunks,
                         dlg_rep_figs *out)
{
    memset(out, 0, sizeof *out);
    rapl_nodes rn = {0, 0, 0};
    double iowait = 0;
    int iowait_nodes = 0;
    for (size_t i = 0; i < n; i++) {
        const dlg_rank_figs *a = &all[i];
        process_sums(a, out);
        sched_sums(a, &out->sched);
        data_wait(a, out);
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
        node_sets ns;
        node_sets_of(all, n, i, masks, chunks, &ns);
        node_holdings(all, n, i, &ns, out);
        node_other(all, n, i, &ns, &out->sched);
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

static void sched_add(dlg_sched_totals *acc, const dlg_sched_totals *t)
{
    acc->have_wait |= t->have_wait;
    acc->oncpu_ns += t->oncpu_ns;
    acc->delay_ns += t->delay_ns;
    acc->have_steal |= t->have_steal;
    acc->steal += t->steal;
    acc->ticks += t->ticks;
    if (!t->have_other)
        return;
    acc->have_other = true;
    acc->busy += t->busy;
    acc->own += t->own;
    acc->span += t->span;
    acc->ncpus = t->ncpus;
}

void dlg_rep_figs_add(dlg_cell_result *res, const dlg_rep_figs *f)
{
    res->wait_ns += f->wait_ns;
    res->busy_ns += f->busy_ns;
    sched_add(&res->sched, &f->sched);
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
    res->disk_counted |= f->disk_counted;
    res->disk_charged_bytes += f->disk_charged_bytes;
    res->disk_charged_ios += f->disk_charged_ios;
    if (f->files_bytes > res->files_bytes) /* a running count: the last repetition's is the cell's */
        res->files_bytes = f->files_bytes;
    res->files_lost |= f->files_lost;
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
