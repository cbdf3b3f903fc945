/* The comm plugin's workloads and what they share: buffers of a pattern
 * whose sums are exact, their check, and the per-op clock. */
#ifndef DLG_COMM_H
#define DLG_COMM_H

#include <dlgauge/plugin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const dlg_plugin_desc allreduce_desc; /* out-of-place sum, every step */
extern const dlg_plugin_desc p2p_desc;       /* ring sendrecv, every step */

/* The options both workloads take, in this order. */
enum { COMM_OPT_BYTES, COMM_OPT_TYPE };
#define COMM_OPTIONS                                                                                          \
    {"bytes", DLG_OPT_SIZE, "32MiB", NULL, NULL, NULL,                                                         \
     "bytes each rank sends per op: a whole number of elements, at most 1GiB (each rank holds two buffers of " \
     "it)", 0},                                                                                                \
    {"type", DLG_OPT_ENUM, "float32", NULL, NULL, "float32|float64|int64",                                    \
     "element type of the buffers", 0},                                                                        \
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}

/* The fields both report (p2p's busbw_factor is 1). */
#define COMM_METRICS(factor_help)                                                                             \
    {"algbw_bytes_per_s", DLG_FIELD_DOUBLE, "bytes/s",                                                        \
     "bytes / op_time_us: a rank's message over the time of one op (nccl-tests' algbw)"},                     \
    {"busbw_bytes_per_s", DLG_FIELD_DOUBLE, "bytes/s", "algbw_bytes_per_s x busbw_factor (nccl-tests' busbw)"}, \
    {"busbw_factor", DLG_FIELD_DOUBLE, "", factor_help},                                                      \
    {"op_time_us", DLG_FIELD_DOUBLE, "us",                                                                    \
     "mean time of one op over the timed steps, averaged over the ranks (as nccl-tests)"},                    \
    {"op_median_us", DLG_FIELD_DOUBLE, "us", "median time of one op over the timed steps, averaged over the ranks"}, \
    {"message_bytes", DLG_FIELD_INT, "bytes", "bytes each rank sends per op"},                                \
    {NULL, 0, NULL, NULL}

/* The pattern's period: element i of rank r's send is (i + r) % it. */
#define COMM_PERIOD 61

/* Op times kept for the median: the last COMM_SAMPLES timed ops. */
#define COMM_SAMPLES 65536

typedef struct comm_clock {
    uint64_t sum_ns, ops;
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

void comm_clock_reset(comm_clock *c);
void comm_clock_add(comm_clock *c, uint64_t ns);
/* The op times averaged over ranks (an allreduce: every rank calls it):
 * mean and median in seconds. */
int comm_clock_agree(const dlg_host *h, comm_clock *c, int size, double *mean_s, double *median_s);
/* The fields of one repetition; factor is busbw's. */
void comm_report_fields(const dlg_report_api *api, dlg_fields *f, const comm_bufs *b, double factor,
                        double mean_s, double median_s);

#endif
