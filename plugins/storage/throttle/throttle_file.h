/* The throttle backend's instance and file state, shared by throttle.c
 * (sync ops) and throttle_async.c (submit/reap). */
#ifndef DLG_THROTTLE_FILE_H
#define DLG_THROTTLE_FILE_H

#include "throttle_cache.h"
#include "throttle_count.h"
#include "throttle_shaper.h"
#include "throttle_shm.h"

typedef struct thr_inst {
    const dlg_host *h;
    const dlg_storage_ops *inner_ops;
    void *inner_inst; /* owned by the host */
    char *inner_name;
    thr_shaper *shaper; /* own, or the node's disk that every rank shares */
    thr_shaper own;
    thr_shm shm;        /* shm.seg != NULL: shaper is in it */
    _Atomic bool slow_said; /* thr_warn_slow spoke */
    bool model_cache;       /* page_cache = model */
    _Atomic bool cache_said; /* a file's cache could not be modelled: said once */
} thr_inst;

enum thr_slot_state { THR_SLOT_FREE, THR_SLOT_INFLIGHT, THR_SLOT_DONE };

/* One async read: its emulated completion time and, once the inner
 * backend finished it, its result. */
typedef struct thr_slot {
    uint64_t user;
    thr_cache_cost cost; /* looked at before the inner backend took it */
    uint64_t deadline;
    int64_t result;
    int state;
} thr_slot;

/* A buffer lent by fetch() when the inner backend cannot lend its own. */
typedef struct thr_fbuf {
    void *p;
    size_t cap;
    bool busy;
} thr_fbuf;

typedef struct thr_file {
    dlg_file base;
    const dlg_host *h;
    thr_inst *ti;
    dlg_file *inner;
    char *path; /* for messages the inner backend does not give */
    uint32_t inner_caps;
    uint64_t size; /* last seen, for reads: a read past EOF is charged what it got */
    thr_run run;   /* this file's contiguous stream, for iops_merge */
    /* async */
    thr_slot *slots;
    size_t nslots;
    size_t inflight; /* submitted to the inner backend, not yet reaped there */
    size_t pending;  /* submitted by the caller, not yet returned by reap */
    dlg_io *scratch; /* inner submit batch */
    dlg_io_done *scratch_done;
    size_t scratch_cap;
    /* emulated fetch */
    thr_fbuf *fbufs;
    size_t nfbufs;
    thr_cache cache; /* page_cache = model, on a file opened to read (cache.live) */
} thr_file;

int thr_submit(dlg_file *f, const dlg_io *ios, size_t n);
int thr_reap(dlg_file *f, dlg_io_done *done, size_t max, size_t min_done);
/* The inner backend's queue depth when it reads asynchronously; else 0
 * (reads done at submit time: no limit). */
uint32_t thr_depth(dlg_file *f);
/* Hands the read buffer to an asynchronous inner backend to register. */
int thr_register(dlg_file *f, void *buf, size_t len);
void thr_async_free(thr_file *tf);

/* Bytes a read of n at off really transfers (the disk is not charged for
 * what lies past the end of the file).  A read past the size last seen
 * asks the inner backend again: the file may have grown since (a log, a
 * shard being written), and its new bytes cost disk time like any. */
static inline size_t thr_charge(thr_file *tf, uint64_t off, size_t n)
{
    uint64_t now;
    if (tf->size != UINT64_MAX && (off >= tf->size || tf->size - off < n) &&
        tf->inner->ops->size(tf->inner, &now) == 0)
        tf->size = now;
    return off >= tf->size ? 0 : tf->size - off < n ? (size_t)(tf->size - off) : n;
}

/* Says once per instance that an I/O's transfer alone takes over
 * THR_SLOW_S (bandwidth = 1 is 1 B/s: a 64 KiB read took 18 hours without
 * a word).  The create cannot know the job's block; the first such I/O
 * is slow anyway, so one log line costs it nothing. */
#define THR_SLOW_S 10.0
void thr_warn_slow(thr_file *tf, size_t n, bool write, double bandwidth);

/* The completion deadline of an I/O of n bytes at off (a write if write:
 * it is charged to the write limits where the disk has its own). */
static inline uint64_t thr_reserve(thr_file *tf, uint64_t off, size_t n, bool write)
{
    const thr_limits *lim = &tf->ti->shaper->lim;
    double bw = write && lim->write_own_bw ? lim->write_bandwidth : lim->bandwidth;
    if (bw > 0 && (double)n > THR_SLOW_S * bw)
        thr_warn_slow(tf, n, write, bw);
    return thr_shaper_reserve(tf->ti->shaper, n, thr_io_units(lim, &tf->run, off, n), write);
}

/* What a read of n at off costs the disk, looked at before the inner
 * backend reads (its read fills the page cache).  Nothing for one that
 * transfers nothing (at or past the end of the file: the kernel answers
 * it without the disk); with page_cache = model what the page cache does
 * not serve (thr_cache_account); else all of it, as a miss. */
static inline thr_cache_cost thr_look_read(thr_file *tf, uint64_t off, size_t n)
{
    size_t bytes = thr_charge(tf, off, n);
    if (bytes && tf->cache.live)
        return thr_cache_account(&tf->cache, off, bytes);
    return (thr_cache_cost){bytes, 0};
}

/* The completion deadline of a read of that cost (0 = done already). */
uint64_t thr_reserve_cost(thr_file *tf, uint64_t off, thr_cache_cost cost);
/* Tells the host a read of that cost is done (host->disk_charged): at
 * completion, as the host counts the read, so that a window of timed
 * steps holds both or neither. */
void thr_count_cost(thr_file *tf, thr_cache_cost cost);

#endif
