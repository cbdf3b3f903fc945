/* The comm plugin's workloads and what they share: buffers of a pattern
 * whose sums are exact, their check, and the per-op clock. */
#ifndef DLG_COMM_H
#define DLG_COMM_H

#include <dlgauge/plugin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const dlg_plugin_desc allreduce_desc; /* out-of-place sums, ops_per_step a step */
extern const dlg_plugin_desc p2p_desc;       /* ring sendrecvs, ops_per_step a step */

/* The options both workloads take, in this order. */
enum { COMM_OPT_BYTES, COMM_OPT_TYPE, COMM_OPT_DEVICE, COMM_OPT_OPS };
#define COMM_MAX_OPS 10000 /* ops_per_step's bound */
#define COMM_STR_(x) #x
#define COMM_STR(x) COMM_STR_(x)
#define COMM_OPTIONS                                                                                          \
    {"bytes", DLG_OPT_SIZE, "32MiB", NULL, NULL, NULL,                                                         \
     "bytes each rank sends per op: a whole number of elements, at most 1GiB (each rank holds two buffers of " \
     "it)", 0},                                                                                                \
    {"type", DLG_OPT_ENUM, "float32", NULL, NULL, "float32|float64|int64",                                    \
     "element type of the buffers", 0},                                                                        \
    {"device", DLG_OPT_STRING, "cpu", NULL, NULL, NULL,                                                        \
     "cpu: the buffers in host memory, the host's collectives (MPI); cuda:N: in GPU N's memory, NCCL's "      \
     "collectives (filled and checked through host copies, untimed); cuda: each rank on GPU (local rank mod " \
     "the GPUs), the local rank as MPI finds it (from an older dlgauge, the launcher's: Open MPI, MPICH, "   \
     "Slurm, torchrun), as nccl-tests and PyTorch place ranks",                                              \
     0},                                                                                                       \
    {"ops_per_step", DLG_OPT_INT, "1", "1", COMM_STR(COMM_MAX_OPS), NULL,                                      \
     "ops each step runs back to back on the same buffers, timed together (the host clock, or on a GPU an "  \
     "event before the first op and one after the last) and divided by it, as nccl-tests times its loop of " \
     "`iters` ops (20 by default); at 1 each op's time holds a GPU launch and the host's wait for it, and "   \
     "the ranks' skew from the runner's work between steps; raise it (e.g. 20) for small messages and "      \
     "launch-bound GPU ops, where those are a large share of an op's time",                                  \
     0},                                                                                                       \
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}

/* The fields both report (p2p's busbw_factor is 1). */
#define COMM_METRICS(factor_help)                                                                             \
    {"algbw_bytes_per_s", DLG_FIELD_DOUBLE, "bytes/s",                                                        \
     "bytes / op_time_us: a rank's message over the time of one op (nccl-tests' algbw)"},                     \
    {"busbw_bytes_per_s", DLG_FIELD_DOUBLE, "bytes/s", "algbw_bytes_per_s x busbw_factor (nccl-tests' busbw)"}, \
    {"busbw_factor", DLG_FIELD_DOUBLE, "", factor_help},                                                      \
    {"op_time_us", DLG_FIELD_DOUBLE, "us",                                                                    \
     "mean time of one op: a step's time / ops_per_step, over the timed steps, averaged over the ranks (as "  \
     "nccl-tests: a loop of ops timed together and divided); the host clock around the step's ops, or on a " \
     "GPU the device's own clock (an event on its stream before the first op, one after the last, the host " \
     "waiting once); with ops_per_step = 1 it holds one op's launch and wait, which nccl-tests' loop spreads " \
     "over its ops: the same for large messages, more for small ones"},                                       \
    {"op_median_us", DLG_FIELD_DOUBLE, "us",                                                                  \
     "median over the timed steps of a step's time / ops_per_step, averaged over the ranks"},                 \
    {"message_bytes", DLG_FIELD_INT, "bytes", "bytes each rank sends per op"},                                \
    {"device", DLG_FIELD_STRING, "", "where rank 0's buffers lived: cpu, or cuda:N"},                        \
    {NULL, 0, NULL, NULL}

/* device = cpu | cuda | cuda:N (comm_devsel.c) */
#define COMM_DEV_CPU (-1)
#define COMM_DEV_ANY (-2)    /* "cuda": the rank's local rank mod the GPUs */
#define COMM_MAX_GPUS 8      /* core/nn's DLG_CUDA_MAX_DEVICES */
/* text -> *index (COMM_DEV_CPU, COMM_DEV_ANY or N); -DLG_EINVAL with the
 * line in err. */
int comm_device_parse(const char *text, int *index, char *err, size_t errlen);
/* This process's rank on its node: the host's (comm_info's local_rank),
 * or from a host older than that the launcher's variables, else rank
 * (one node); *from names where it came from.  h may be NULL. */
int comm_local_rank(const dlg_host *h, int rank, const char **from);

/* The pattern's period: element i of rank r's send is (i + r) % it. */
#define COMM_PERIOD 61

/* Step times kept for the median: the last COMM_SAMPLES timed steps. */
#define COMM_SAMPLES 65536

/* The timed steps, each of per_step ops. */
typedef struct comm_clock {
    uint64_t sum_ns, steps;
    int per_step;
    uint64_t samples[COMM_SAMPLES];
} comm_clock;

/* One rank's buffers and what is known of them. */
typedef struct comm_bufs {
    void *send, *recv;
    size_t count;       /* elements per buffer */
    size_t elem;        /* bytes per element */
    dlg_comm_type type;
    const char *type_name;
    int rank, size;
    int64_t *agree;     /* [4 * size]: one check's verdict per rank */
    int64_t sums[COMM_PERIOD]; /* see comm_buf.c's sum_at */
} comm_bufs;

/* What an op's receive buffer must hold. */
typedef enum comm_expect { COMM_SUM, COMM_FROM_LEFT } comm_expect;

/* The options' one check (check() and setup() alike): 0, or -code after
 * one line starting with the option's name.  *count, *type out. */
int comm_check_options(const dlg_host *h, const dlg_value *opts, const char *who, size_t *count,
                       dlg_comm_type *type);
/* ops_per_step, checked by comm_check_options. */
int comm_ops_per_step(const dlg_value *opts);
/* Whether device is a GPU's (comm_dev.c) rather than the host's (cpu). */
bool comm_on_device(const dlg_value *opts);
/* Setup's part: allocates and first-touches both buffers, fills send with
 * the rank's pattern and recv with a value no op leaves.  On failure b is
 * freed.  It calls no collective: a rank that fails here (out of memory)
 * is the host's to tell the others of, as the runner does after setup. */
int comm_bufs_init(const dlg_host *h, const dlg_value *opts, const char *who, comm_bufs *b);
void comm_bufs_free(comm_bufs *b);
/* Sets recv to the value no op leaves (before an op the check follows). */
void comm_bufs_poison(comm_bufs *b);
/* Compares every element of recv with what `e` says it holds, then agrees
 * with the other ranks: 0 where all match, else -DLG_EINTERNAL after one
 * line naming the first failing rank, element, got and want; `when`
 * says which op ("after the warm-up"). */
int comm_bufs_check(const dlg_host *h, comm_bufs *b, comm_expect e, const char *who, const char *when);

/* A rank's buffers in GPU memory and NCCL's ops on them (comm_dev.c,
 * through nn.h's dlg_dev_*).  Every call returns 0 or -code after one
 * error line naming the device. */
typedef struct comm_dev comm_dev;
/* Setup's part: the device `device` names for b's rank (a bare "cuda":
 * GPU local rank mod the GPUs, as core/nn chooses), its two buffers, send uploaded from b->send and recv
 * from b->recv (poisoned); across ranks NCCL loaded (a probe), so a rank
 * without it fails here, where the runner tells the others, rather than
 * leave them waiting in the first step's join.  Nothing collective. */
int comm_dev_open(const dlg_host *h, const char *device, const comm_bufs *b, const char *who, comm_dev **out);
void comm_dev_close(comm_dev *d);
const char *comm_dev_name(const comm_dev *d); /* "cuda:1" */
/* The ranks' communicator, once (collective: the first step or
 * begin_timed, every rank together). */
int comm_dev_join(comm_dev *d);
/* n ops of kind e back to back, timed together on the device's clock
 * (an event before the first, one after the last; the host waits). */
int comm_dev_ops(comm_dev *d, comm_expect e, int n, uint64_t *ns);
/* recv poisoned on the device (from b's host copy, poisoned here). */
int comm_dev_poison(comm_dev *d, comm_bufs *b);
/* The device's recv into b->recv, waited for (for comm_bufs_check). */
int comm_dev_fetch(comm_dev *d, comm_bufs *b);

/* What sets allreduce and p2p apart: the op, what its recv holds, and
 * busbw's factor for n ranks. */
typedef struct comm_kind {
    const char *name;
    comm_expect expect;
    int (*op)(const dlg_host *h, comm_bufs *b);
    double (*busbw_factor)(int ranks);
} comm_kind;

/* The workload ops both use (comm_wl.c); setup and check take the kind. */
typedef struct comm_wl comm_wl;
int comm_wl_check(const comm_kind *k, const dlg_host *h, const dlg_value *opts);
int comm_wl_setup(const comm_kind *k, const dlg_host *h, const dlg_value *opts, void **state);
int comm_wl_step(void *state, dlg_step *out);
int comm_wl_begin_timed(void *state);
int comm_wl_report(void *state, const dlg_report_api *api, dlg_fields *f);
void comm_wl_teardown(void *state);

void comm_clock_reset(comm_clock *c, int per_step);
/* A timed step of per_step ops that took ns. */
void comm_clock_add(comm_clock *c, uint64_t ns);
/* The op times (a step's / per_step) averaged over ranks (an allreduce:
 * every rank calls it): mean and median in seconds. */
int comm_clock_agree(const dlg_host *h, comm_clock *c, int size, double *mean_s, double *median_s);
/* The fields of one repetition; factor is busbw's. */
void comm_report_fields(const dlg_report_api *api, dlg_fields *f, const comm_bufs *b, double factor,
                        double mean_s, double median_s);

#endif
