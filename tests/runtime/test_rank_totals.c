/* A repetition's figures for the whole job from its ranks' own
 * (rank_totals.h), without MPI: the ranks' vectors as the allreduce hands
 * them over.  Process counters summed, a machine's once per node, a GPU's
 * once however many ranks share it, memory and CPUs per node (the largest
 * node's: a node's CPUs counted once however many of its ranks share
 * them), RAPL lost where a node's part is missing, the input wait the
 * rank's that waited most; alone, its own. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rank_totals.h"

#define GIB (1024.0 * 1024 * 1024)

static dlg_rank_figs on(int node, int gpu)
{
    return (dlg_rank_figs){.node = node, .gpu = gpu, .iowait_fraction = -1, .cpus_used = 1, .cpu_capacity = 1};
}

/* NVML stats of `seconds` at util % and 250 W (the counter: 250 J/s) */
static void sampled(dlg_rank_figs *f, double util, double seconds, double mem)
{
    f->gpu_samples = seconds * 10;
    f->gpu_util = util;
    f->gpu_power_w = 250;
    f->gpu_energy_j = 250 * seconds;
    f->gpu_mem_peak = mem;
    f->gpu_seconds = seconds;
}

static void rapl(dlg_rank_figs *f, double pkg_j, double dram_j, double s)
{
    f->rapl_have = 1;
    f->rapl_pkg_j = pkg_j;
    f->rapl_s = s;
    if (dram_j >= 0) {
        f->rapl_have_dram = 1;
        f->rapl_dram_j = dram_j;
    }
}

/* Two ranks on one GPU sample the same board: its energy once, from the
 * lower rank, and gpus = 1. */
static void test_one_gpu_two_ranks(void **unused)
{
    (void)unused;
    dlg_rank_figs r[2] = {on(0, 0), on(0, 0)};
    sampled(&r[0], 80, 2.0, 1 * GIB);
    sampled(&r[1], 80, 2.2, 3 * GIB);
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 2, NULL, 0, &t);
    assert_int_equal(t.gpus, 1);
    assert_true(t.gpu_energy_j == 500);
    assert_true(t.gpu_seconds == 2.0);
    assert_true(t.gpu_util_sum_s / t.gpu_seconds == 80);
    assert_int_equal(t.gpu_samples, 20);
    assert_true(t.gpu_mem_peak == (uint64_t)(1 * GIB)); /* rank 0's board, as it read it */
    assert_int_equal(t.nodes, 1);
}

/* One GPU each: energy summed (the job's), utilisation and power the
 * mean per GPU, weighted by each one's seconds; memory the highest. */
static void test_two_gpus(void **unused)
{
    (void)unused;
    dlg_rank_figs r[2] = {on(0, 0), on(0, 1)};
    sampled(&r[0], 80, 2.0, 1 * GIB);
    sampled(&r[1], 70, 2.0, 3 * GIB);
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 2, NULL, 0, &t);
    assert_int_equal(t.gpus, 2);
    assert_true(t.gpu_energy_j == 1000);
    assert_true(t.gpu_util_sum_s / t.gpu_seconds == 75);
    assert_true(t.gpu_power_sum_s / t.gpu_seconds == 250);
    assert_true(t.gpu_mem_peak == (uint64_t)(3 * GIB));
    assert_int_equal(t.gpu_samples, 40);
}

/* A rank without NVML (gpu -1) or whose sampler read nothing adds no GPU;
 * a GPU whose lower rank read nothing is the next rank's. */
static void test_missing_nvml(void **unused)
{
    (void)unused;
    dlg_rank_figs r[3] = {on(0, -1), on(0, 1), on(0, 1)};
    sampled(&r[0], 80, 2.0, 1 * GIB); /* no GPU index: not counted */
    sampled(&r[2], 70, 3.0, 2 * GIB); /* rank 1 on the same GPU had no samples */
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 3, NULL, 0, &t);
    assert_int_equal(t.gpus, 1);
    assert_true(t.gpu_energy_j == 750);
    assert_true(t.gpu_util_sum_s / t.gpu_seconds == 70);
    dlg_rank_figs none[2] = {on(0, -1), on(0, -1)};
    dlg_rank_figs_total(none, 2, NULL, 0, &t);
    assert_int_equal(t.gpus, 0);
    assert_int_equal(t.gpu_samples, 0);
}

/* Two nodes of two ranks: the process's counters summed over all four,
 * the machine's read once per node (its lowest rank), memory and CPUs the
 * node's ranks summed, the largest node's; a GPU 0 on each node is two. */
static void test_two_nodes(void **unused)
{
    (void)unused;
    dlg_rank_figs r[4] = {on(0, 0), on(0, 0), on(1, 0), on(1, 0)};
    for (int i = 0; i < 4; i++) {
        r[i].cpu_user_s = i + 1;
        r[i].cpu_sys_s = 0.5;
        r[i].cpu_window_cpu_s = i + 1.5;
        r[i].cpu_window_cap_s = 2; /* 1 s x 2 CPUs */
        r[i].read_bytes = 100 * (i + 1);
        r[i].storage_bytes = 1000;
        r[i].storage_ios = 10;
        r[i].storage_write_bytes = 7;
        r[i].storage_write_ios = 1;
        r[i].major_faults = 3;
        r[i].ctx_voluntary = 5;
        r[i].ctx_involuntary = 2;
        r[i].cpus_used = 2;
        r[i].cpu_capacity = 2;
        /* each rank of a node reads the same machine */
        r[i].disk_read_bytes = i < 2 ? 4096 : 8192;
        r[i].iowait_fraction = i < 2 ? 0.1 : 0.3;
        sampled(&r[i], 80, 1, GIB);
    }
    r[0].rss_peak = 100e6, r[1].rss_peak = 200e6; /* node 0: 300 MB */
    r[2].rss_peak = 250e6, r[3].rss_peak = 100e6; /* node 1: 350 MB */
    r[3].cpus_used = 4, r[3].cpu_capacity = 3.5;  /* node 1: 6 vCPUs, 5.5 of capacity */
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    assert_int_equal(t.nodes, 2);
    assert_true(t.cpu_user_s == 10 && t.cpu_sys_s == 2);
    assert_true(t.cpu_window_cpu_s == 12 && t.cpu_window_cap_s == 8);
    assert_true(t.read_bytes == 1000 && t.storage_bytes == 4000 && t.storage_ios == 40);
    assert_true(t.storage_write_bytes == 28 && t.storage_write_ios == 4);
    assert_true(t.major_faults == 12 && t.ctx_voluntary == 20 && t.ctx_involuntary == 8);
    assert_true(t.disk_read_bytes == 4096 + 8192);
    assert_true(fabs(t.iowait_fraction - 0.2) < 1e-12);
    assert_true(t.rss_peak == 350000000);
    assert_int_equal(t.cpus_used, 6);
    assert_true(t.cpu_capacity == 5.5);
    assert_int_equal(t.gpus, 2);
    assert_true(t.gpu_energy_j == 500);
    /* a node that could not read /proc/stat is left out of the mean */
    r[2].iowait_fraction = -1;
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    assert_true(fabs(t.iowait_fraction - 0.1) < 1e-12);
    r[0].iowait_fraction = -1;
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    assert_true(t.iowait_fraction < 0);
}

/* RAPL counts whole packages: once per node, from its lowest rank. */
static void test_rapl_per_node(void **unused)
{
    (void)unused;
    dlg_rank_figs r[4] = {on(0, -1), on(0, -1), on(1, -1), on(1, -1)};
    for (int i = 0; i < 4; i++)
        rapl(&r[i], i < 2 ? 100 : 50, i < 2 ? 10 : 5, i < 2 ? 2 : 4);
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    const dlg_cpu_energy *e = &t.cpu_energy;
    assert_true(e->have && e->have_dram && !e->pkg_lost && !e->dram_lost);
    assert_true(e->pkg_j == 150 && e->dram_j == 15);
    assert_true(e->seconds == 3); /* the nodes' mean window */

    /* node 1's reading lost part of its window: the sum would understate */
    r[2].rapl_pkg_lost = 1;
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    assert_true(e->have && e->pkg_lost && !e->dram_lost);
    r[2].rapl_pkg_lost = 0;
    r[2].rapl_dram_lost = 1;
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    assert_true(!e->pkg_lost && e->dram_lost);
    r[2].rapl_dram_lost = 0;

    /* node 1's lowest rank has no counters (rank 3's do not stand in): a
     * node's packages missing from the sum */
    r[2] = on(1, -1);
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    assert_true(e->have && e->pkg_lost && e->dram_lost);
    assert_true(e->pkg_j == 100);

    /* node 1 has packages but no DRAM zones (AMD): DRAM incomplete only */
    rapl(&r[2], 50, -1, 4);
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    assert_true(e->have && !e->pkg_lost && e->have_dram && e->dram_lost);
    assert_true(e->pkg_j == 150);

    /* no node has counters: none, and nothing lost */
    for (int i = 0; i < 4; i++)
        r[i] = on(i / 2, -1);
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    assert_true(!e->have && !e->have_dram && !e->pkg_lost && !e->dram_lost);
}

/* Alone, the rank's own figures. */
static void test_alone(void **unused)
{
    (void)unused;
    dlg_rank_figs r = on(0, 0);
    r.cpu_user_s = 1.25, r.cpu_window_cpu_s = 1.5, r.cpu_window_cap_s = 4;
    r.disk_read_bytes = 512, r.iowait_fraction = 0.25, r.rss_peak = 1e6;
    r.cpus_used = 4, r.cpu_capacity = 2.5;
    rapl(&r, 30, 3, 1.5);
    r.rapl_dram_lost = 1;
    sampled(&r, 60, 1.5, GIB);
    dlg_rep_figs t;
    dlg_rank_figs_total(&r, 1, NULL, 0, &t);
    assert_true(t.cpu_user_s == 1.25 && t.cpu_window_cpu_s == 1.5 && t.cpu_window_cap_s == 4);
    assert_true(t.disk_read_bytes == 512 && t.iowait_fraction == 0.25 && t.rss_peak == 1000000);
    assert_true(t.cpus_used == 4 && t.cpu_capacity == 2.5);
    assert_true(t.cpu_energy.have && t.cpu_energy.pkg_j == 30 && t.cpu_energy.seconds == 1.5);
    assert_true(!t.cpu_energy.pkg_lost && t.cpu_energy.dram_lost);
    assert_true(t.gpus == 1 && t.gpu_energy_j == 375 && t.gpu_seconds == 1.5);
    assert_int_equal(t.nodes, 1);
}

/* Repetitions add up in the cell: counters summed, peaks kept, the CPUs,
 * nodes and iowait share the latest, a lost counter stays lost. */
static void test_repetitions_add(void **unused)
{
    (void)unused;
    dlg_cell_result res;
    assert_int_equal(dlg_cell_result_init(&res), 0);
    dlg_rank_figs r[2] = {on(0, 0), on(0, 1)};
    sampled(&r[0], 80, 1, GIB);
    sampled(&r[1], 70, 1, 2 * GIB);
    r[0].cpu_user_s = r[1].cpu_user_s = 1;
    r[0].cpu_window_cap_s = r[1].cpu_window_cap_s = 1;
    r[0].rss_peak = 5e6, r[1].rss_peak = 6e6;
    r[0].iowait_fraction = 0.5;
    rapl(&r[0], 10, -1, 1);
    r[0].rapl_pkg_lost = 1;
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 2, NULL, 0, &t);
    dlg_rep_figs_add(&res, &t);
    r[0].rss_peak = 1e6; /* a later reading lower: the peak stays */
    r[0].iowait_fraction = -1;
    r[0].rapl_pkg_lost = 0;
    r[1].gpu = -1; /* its NVML went away: the other GPU only */
    dlg_rank_figs_total(r, 2, NULL, 0, &t);
    dlg_rep_figs_add(&res, &t);
    assert_true(res.cpu_user_s == 4 && res.cpu_window_cap_s == 4);
    assert_true(res.rss_peak == 11000000);
    assert_true(res.iowait_fraction == 0.5);
    assert_true(res.cpu_energy.have && res.cpu_energy.pkg_lost && res.cpu_energy.pkg_j == 20);
    assert_int_equal(res.gpus, 2);
    assert_true(res.gpu_energy_j == 750);
    assert_true(res.gpu_util_sum_s / res.gpu_seconds == (80 + 70 + 80) / 3.0);
    assert_true(res.gpu_mem_peak == (uint64_t)(2 * GIB));
    assert_int_equal(res.cpus_used, 2);
    assert_int_equal(res.nodes, 1);
    dlg_cell_result_fini(&res);
}

/* The CPU masks as the allreduce carries them: rank i's ids in
 * masks[i * chunks ..], 52 a chunk.  ids end at -1. */
#define CHUNKS 3
static void mask_of(double *masks, size_t rank, const int *ids)
{
    for (size_t c = 0; c < CHUNKS; c++)
        masks[rank * CHUNKS + c] = 0;
    for (; *ids >= 0; ids++)
        masks[rank * CHUNKS + (size_t)*ids / 52] += (double)(UINT64_C(1) << (*ids % 52));
}

/* A set round-trips through its chunks: ids on both sides of a chunk's
 * edge, the highest id deciding how many there are. */
static void test_mask_pack(void **unused)
{
    (void)unused;
    dlg_cpuset s;
    assert_int_equal(dlg_cpuset_init(&s, 0), 0);
    assert_int_equal(dlg_cpu_mask_chunks(&s), 0);
    int ids[] = {0, 51, 52, 103, 104, -1};
    for (int *p = ids; *p >= 0; p++)
        assert_int_equal(dlg_cpuset_add(&s, *p), 0);
    assert_int_equal(dlg_cpu_mask_chunks(&s), 3);
    double got[CHUNKS], want[CHUNKS];
    dlg_cpu_mask_pack(&s, got, CHUNKS);
    mask_of(want, 0, ids);
    for (size_t c = 0; c < CHUNKS; c++)
        assert_true(got[c] == want[c]);
    assert_true(got[0] == (double)((UINT64_C(1) << 51) | 1));
    dlg_cpuset_fini(&s);
}

/* cpus_used on one node: two ranks that mpirun did not bind (the same 2
 * CPUs each) used 2, not 4 (dlgauge report would pick a machine twice as
 * big); disjoint sets add up, across a chunk's edge too; partly
 * overlapping ones count the shared CPU once. */
static void test_shared_cpus(void **unused)
{
    (void)unused;
    dlg_rank_figs r[2] = {on(0, -1), on(0, -1)};
    r[0].cpus_used = r[1].cpus_used = 2;
    r[0].cpu_capacity = r[1].cpu_capacity = 2;
    r[0].cpu_window_cap_s = r[1].cpu_window_cap_s = 2; /* 1 s x 2 CPUs each */
    double m[2 * CHUNKS];
    mask_of(m, 0, (int[]){0, 1, -1});
    mask_of(m, 1, (int[]){0, 1, -1});
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 2, m, CHUNKS, &t);
    assert_int_equal(t.cpus_used, 2);
    assert_true(t.cpu_capacity == 2);
    assert_true(t.cpu_window_cap_s == 2); /* the 2 CPUs for 1 s: busy ranks read 100%, not 50% */
    mask_of(m, 1, (int[]){2, 3, -1});
    dlg_rank_figs_total(r, 2, m, CHUNKS, &t);
    assert_int_equal(t.cpus_used, 4);
    assert_true(t.cpu_capacity == 4);
    assert_true(t.cpu_window_cap_s == 4);
    mask_of(m, 0, (int[]){50, 51, -1});
    mask_of(m, 1, (int[]){52, 53, -1});
    dlg_rank_figs_total(r, 2, m, CHUNKS, &t);
    assert_int_equal(t.cpus_used, 4);
    mask_of(m, 1, (int[]){51, 52, -1});
    dlg_rank_figs_total(r, 2, m, CHUNKS, &t);
    assert_int_equal(t.cpus_used, 3);
    /* a rank whose set is not known (an empty mask) adds its granted vCPUs */
    mask_of(m, 1, (int[]){-1});
    dlg_rank_figs_total(r, 2, m, CHUNKS, &t);
    assert_int_equal(t.cpus_used, 4);
}

/* Two nodes: the largest node's distinct CPUs.  Under a CPU quota a rank
 * is granted fewer vCPUs than its set has (dlg_cpus_granted): the node's
 * figure is then the ranks' granted vCPUs, where fewer than the union. */
static void test_nodes_cpu_sets(void **unused)
{
    (void)unused;
    dlg_rank_figs r[4] = {on(0, -1), on(0, -1), on(1, -1), on(1, -1)};
    double m[4 * CHUNKS];
    int eight[] = {0, 1, 2, 3, 4, 5, 6, 7, -1};
    for (int i = 0; i < 2; i++) { /* node 0: both unbound on 8 CPUs */
        r[i].cpus_used = r[i].cpu_capacity = 8;
        mask_of(m, (size_t)i, eight);
    }
    r[2].cpus_used = r[2].cpu_capacity = 4; /* node 1: 4 + 2 of its own */
    mask_of(m, 2, (int[]){0, 1, 2, 3, -1});
    r[3].cpus_used = r[3].cpu_capacity = 2;
    mask_of(m, 3, (int[]){4, 5, -1});
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 4, m, CHUNKS, &t);
    assert_int_equal(t.nodes, 2);
    assert_int_equal(t.cpus_used, 8);
    assert_true(t.cpu_capacity == 8);
    /* node 0's ranks under cpu_quota = 1.5: 1 vCPU granted each, 1.5 of
     * capacity: 2 (3.0) of its 8 CPUs; node 1's 6 the largest */
    for (int i = 0; i < 2; i++)
        r[i].cpus_used = 1, r[i].cpu_capacity = 1.5;
    dlg_rank_figs_total(r, 4, m, CHUNKS, &t);
    assert_int_equal(t.cpus_used, 6);
    assert_true(t.cpu_capacity == 6);
    /* an explicit cpus = 4 with cpu_quota = 2 on both, the same 4 CPUs */
    for (int i = 0; i < 2; i++) {
        r[i].cpus_used = 4, r[i].cpu_capacity = 2;
        mask_of(m, (size_t)i, (int[]){0, 1, 2, 3, -1});
    }
    r[3].cpus_used = r[3].cpu_capacity = 1;
    mask_of(m, 3, (int[]){3, -1}); /* node 1: 4 distinct */
    dlg_rank_figs_total(r, 4, m, CHUNKS, &t);
    assert_int_equal(t.cpus_used, 4);
}

/* data_wait_fraction: the rank that waited the largest share of its
 * steps (rank 3 starved; rank 0 only waited in its allreduce); summed
 * over the repetitions. */
static void test_data_wait_max(void **unused)
{
    (void)unused;
    dlg_rank_figs r[4] = {on(0, -1), on(0, -1), on(1, -1), on(1, -1)};
    for (int i = 0; i < 4; i++)
        r[i].wait_ns = 1e6, r[i].busy_ns = 100e6;
    r[3].wait_ns = 60e6, r[3].busy_ns = 120e6;
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    assert_true(t.wait_ns == 60000000 && t.busy_ns == 120000000);
    dlg_cell_result res;
    assert_int_equal(dlg_cell_result_init(&res), 0);
    dlg_rep_figs_add(&res, &t);
    r[3].wait_ns = 1e6;
    r[1].wait_ns = 20e6; /* the next repetition: rank 1 */
    dlg_rank_figs_total(r, 4, NULL, 0, &t);
    dlg_rep_figs_add(&res, &t);
    assert_true(res.wait_ns == 80000000 && res.busy_ns == 220000000);
    dlg_cell_result_fini(&res);
}

/* What a disk must hold: the largest of the ranks' files read (they read
 * one data set), kept over repetitions as the running count it is; a rank
 * that lost count makes the cell's unknown. */
static void test_files_largest(void **unused)
{
    (void)unused;
    dlg_rank_figs r[3] = {on(0, -1), on(0, -1), on(1, -1)};
    r[0].files_bytes = 300, r[1].files_bytes = 700, r[2].files_bytes = 500;
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 3, NULL, 0, &t);
    assert_true(t.files_bytes == 700 && !t.files_lost);
    dlg_cell_result res;
    assert_int_equal(dlg_cell_result_init(&res), 0);
    dlg_rep_figs_add(&res, &t);
    r[2].files_bytes = 900; /* rank 2 opened more in the next repetition */
    dlg_rank_figs_total(r, 3, NULL, 0, &t);
    dlg_rep_figs_add(&res, &t);
    assert_true(res.files_bytes == 900 && !res.files_lost);
    r[0].files_lost = 1;
    dlg_rank_figs_total(r, 3, NULL, 0, &t);
    dlg_rep_figs_add(&res, &t);
    assert_true(res.files_lost);
    dlg_cell_result_fini(&res);
}

/* The scheduler's shares for the job: the run delay of every rank's
 * threads, steal over every rank's ticks; other processes per node, the
 * ranks' own time taken out of the CPUs' busy time once. */
static void test_sched_shares(void **unused)
{
    (void)unused;
    dlg_rank_figs r[2] = {on(0, -1), on(0, -1)};
    for (int i = 0; i < 2; i++) {
        r[i].sch_have_wait = r[i].sch_have_steal = r[i].sch_have_other = 1;
        r[i].sch_oncpu_ns = 900e6;
        r[i].sch_ticks = 200, r[i].sch_ncpus = 2;
        /* both unbound on CPUs 0-1 for 1 s: 200 ticks, 150 of them busy,
         * 60 of that each rank's own: 30 ticks of another process */
        r[i].sch_busy = 150, r[i].sch_own = 60, r[i].sch_span = 200;
    }
    r[1].sch_delay_ns = 100e6, r[1].sch_oncpu_ns = 400e6; /* rank 1 queued */
    r[1].sch_steal = 20;
    double m[2 * CHUNKS];
    mask_of(m, 0, (int[]){0, 1, -1});
    mask_of(m, 1, (int[]){0, 1, -1});
    dlg_rep_figs t;
    dlg_rank_figs_total(r, 2, m, CHUNKS, &t);
    assert_true(fabs(dlg_sched_wait_share(&t.sched) - 0.1 / 1.4) < 1e-12);
    assert_true(fabs(dlg_sched_steal_share(&t.sched) - 20.0 / 400) < 1e-12);
    assert_true(fabs(dlg_sched_other_share(&t.sched) - 30.0 / 200) < 1e-12);
    /* disjoint sets (each rank read its own 2 CPUs): summed */
    mask_of(m, 1, (int[]){2, 3, -1});
    r[1].sch_busy = 70, r[1].sch_own = 60;
    dlg_rank_figs_total(r, 2, m, CHUNKS, &t);
    assert_true(fabs(dlg_sched_other_share(&t.sched) - (150 + 70 - 120) / 400.0) < 1e-12);
    /* partly overlapping: a rank's sum over its CPUs cannot be split */
    mask_of(m, 1, (int[]){1, 2, -1});
    dlg_rank_figs_total(r, 2, m, CHUNKS, &t);
    assert_true(dlg_sched_other_share(&t.sched) < 0);
    assert_true(dlg_sched_wait_share(&t.sched) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_gpu_two_ranks), cmocka_unit_test(test_two_gpus),
        cmocka_unit_test(test_missing_nvml),      cmocka_unit_test(test_two_nodes),
        cmocka_unit_test(test_rapl_per_node),     cmocka_unit_test(test_alone),
        cmocka_unit_test(test_repetitions_add),   cmocka_unit_test(test_mask_pack),
        cmocka_unit_test(test_shared_cpus),       cmocka_unit_test(test_nodes_cpu_sets),
        cmocka_unit_test(test_data_wait_max),     cmocka_unit_test(test_sched_shares),
        cmocka_unit_test(test_files_largest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
