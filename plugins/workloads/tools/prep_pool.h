/* preprocess's workers: N threads read images through the job's storage
 * backend and transform them (prep_worker) into a ring of slots; the step
 * takes the slots back strictly in list order, cycling over the list
 * forever (item k is image k mod n). */
#ifndef DLG_TOOLS_PREP_POOL_H
#define DLG_TOOLS_PREP_POOL_H

#include "prep.h"

typedef struct prep_slot {
    uint64_t seq;        /* stream position: image seq % n */
    int rc;              /* 0, or -code (err.msg says why unless the host already did) */
    dlg_data_err err;
    uint8_t *data;       /* the bytes to store */
    size_t len;
    uint64_t file_bytes; /* bytes read from storage */
    char jpeg_warning[320]; /* stored despite this libjpeg warning; "" if none */
    /* owned by the pool */
    int state_;
    uint8_t *buf_;
    size_t cap_;
} prep_slot;

typedef struct prep_pool prep_pool;

/* Starts `threads` workers over `in` (which must outlive the pool). */
int prep_pool_start(prep_pool **out, const dlg_host *h, const prep_input *in, const prep_params *p,
                     int threads, dlg_data_err *err);
/* The next slot in order; *wait_ns gets how long it blocked. */
prep_slot *prep_pool_next(prep_pool *p, uint64_t *wait_ns);
void prep_pool_release(prep_pool *p, prep_slot *s);
/* mean (p->mean): adds the per-thread sums of the oldest pass not taken yet
 * to dst (3 x height x width) once its last slot was taken.  Workers wait
 * to start the pass after the next until then. */
void prep_pool_take_sum(prep_pool *p, uint64_t *dst);
/* Worker time so far, summed over the workers: in file reads (through the
 * storage backend, throttling included) and in decode/resize/encode. */
void prep_pool_times(prep_pool *p, uint64_t *read_ns, uint64_t *work_ns);
/* Stops and joins the workers, frees everything. */
void prep_pool_stop(prep_pool *p);

#endif
