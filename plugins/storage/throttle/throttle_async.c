/* throttle's submit/reap: each read gets its emulated completion deadline
 * when it is submitted, and reap() hands a completion back only once both
 * the inner backend has finished it and its deadline has passed.  Inner
 * backends without DLG_CAP_ASYNC do the read at submit time. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "throttle_file.h"

static bool inner_async(const thr_file *tf)
{
    const dlg_storage_ops *o = tf->inner->ops;
    return (tf->inner_caps & DLG_CAP_ASYNC) && o->submit && o->reap;
}

/* Room for `more` new slots and for a batch of that many: grows only when
 * the caller goes deeper than before. */
static int reserve_room(thr_file *tf, size_t more)
{
    size_t want = tf->pending + more;
    if (want > tf->nslots) {
        thr_slot *s = realloc(tf->slots, want * sizeof *s);
        if (!s)
            return -1;
        memset(s + tf->nslots, 0, (want - tf->nslots) * sizeof *s);
        tf->slots = s;
        tf->nslots = want;
    }
    if (tf->nslots > tf->scratch_cap) {
        dlg_io *io = realloc(tf->scratch, tf->nslots * sizeof *io);
        if (io)
            tf->scratch = io;
        dlg_io_done *d = realloc(tf->scratch_done, tf->nslots * sizeof *d);
        if (d)
            tf->scratch_done = d;
        if (!io || !d)
            return -1;
        tf->scratch_cap = tf->nslots;
    }
    return 0;
}

uint32_t thr_depth(dlg_file *f)
{
    thr_file *tf = (thr_file *)f;
    const dlg_storage_ops *o = tf->inner->ops;
    return inner_async(tf) && o->version >= 2 && o->depth ? o->depth(tf->inner) : 0;
}

int thr_register(dlg_file *f, void *buf, size_t len)
{
    thr_file *tf = (thr_file *)f;
    const dlg_storage_ops *o = tf->inner->ops;
    return inner_async(tf) && o->version >= 2 && o->register_buffer ? o->register_buffer(tf->inner, buf, len)
                                                                     : -DLG_ENOTSUP;
}

/* The first free slot at or after `from`, claimed for `user` (reserve_room
 * made room). */
static size_t claim_slot(thr_file *tf, size_t from, uint64_t user)
{
    while (tf->slots[from].state != THR_SLOT_FREE)
        from++;
    tf->slots[from] = (thr_slot){.user = user, .state = THR_SLOT_INFLIGHT};
    return from;
}

/* When a read of that cost completes: its deadline, or now for one the
 * page cache serves (the order reap hands completions back in). */
static uint64_t done_at(thr_file *tf, uint64_t off, thr_cache_cost cost)
{
    uint64_t d = thr_reserve_cost(tf, off, cost);
    return d ? d : thr_now_ns();
}

/* An inner backend without submit: each read done now, completed at its
 * deadline. */
static int submit_sync(thr_file *tf, const dlg_io *ios, size_t n)
{
    size_t next = 0;
    for (size_t i = 0; i < n; i++) {
        thr_slot *s = &tf->slots[next = claim_slot(tf, next, ios[i].user)];
        s->cost = thr_look_read(tf, ios[i].off, ios[i].len);
        s->deadline = done_at(tf, ios[i].off, s->cost);
        s->result = tf->inner->ops->read(tf->inner, ios[i].buf, ios[i].len, ios[i].off);
        s->state = THR_SLOT_DONE;
    }
    tf->pending += n;
    return (int)n;
}

/* The disk is charged only for what the inner backend took: reads it
 * refused never reach the emulated disk either, and charged, their time
 * fell on the reads after them.  What each costs is looked at before the
 * submit all the same: an inner read may fill the page cache before the
 * submit returns (io_uring's own workers), and page_cache = model would
 * then take the miss for a hit.  (A refused read's pages stay marked
 * paid: charged again if still not cached when read, free if readahead
 * brought them meanwhile.) */
static int submit_async(thr_file *tf, const dlg_io *ios, size_t n)
{
    size_t next = 0;
    for (size_t i = 0; i < n; i++) {
        next = claim_slot(tf, next, ios[i].user);
        tf->slots[next].cost = thr_look_read(tf, ios[i].off, ios[i].len);
        tf->scratch[i] = ios[i];
        tf->scratch[i].user = next;
    }
    int rc = tf->inner->ops->submit(tf->inner, tf->scratch, n);
    size_t took = rc < 0 ? 0 : (size_t)rc < n ? (size_t)rc : n;
    for (size_t i = 0; i < n; i++) {
        thr_slot *s = &tf->slots[tf->scratch[i].user];
        if (i < took)
            s->deadline = done_at(tf, ios[i].off, s->cost);
        else
            s->state = THR_SLOT_FREE;
    }
    tf->inflight += took;
    tf->pending += took;
    return rc < 0 ? rc : (int)took;
}

int thr_submit(dlg_file *f, const dlg_io *ios, size_t n)
{
    thr_file *tf = (thr_file *)f;
    if (reserve_room(tf, n) != 0)
        return tf->h->error(tf->h, DLG_ENOMEM, "%s: submit: out of memory for %zu reads", tf->path, n);
    return inner_async(tf) ? submit_async(tf, ios, n) : submit_sync(tf, ios, n);
}

/* Collects what the inner backend finished (waiting for at least min). */
static int harvest(thr_file *tf, size_t min)
{
    if (tf->inflight == 0)
        return 0;
    size_t max = tf->inflight < tf->scratch_cap ? tf->inflight : tf->scratch_cap;
    int k = tf->inner->ops->reap(tf->inner, tf->scratch_done, max, min);
    if (k < 0)
        return k;
    for (int i = 0; i < k; i++) {
        thr_slot *s = &tf->slots[tf->scratch_done[i].user];
        s->result = tf->scratch_done[i].result;
        s->state = THR_SLOT_DONE;
    }
    tf->inflight -= (size_t)k;
    return 0;
}

/* Ready slots (their indices in .user) by completion time. */
static int by_deadline(const void *a, const void *b, void *slots)
{
    const thr_slot *s = slots;
    uint64_t da = s[((const dlg_io_done *)a)->user].deadline, db = s[((const dlg_io_done *)b)->user].deadline;
    return da < db ? -1 : da > db;
}

/* Moves finished reads whose deadline has passed to done[], the earliest
 * done first; returns the earliest deadline still held back (UINT64_MAX if
 * none).  In slot order, a caller that takes fewer than are ready (io: one
 * a step, the queue kept full) got the page cache's hits, refilled into the
 * lowest slot, step after step, and a miss behind them never: its disk
 * time never counted. */
static uint64_t emit_ready(thr_file *tf, dlg_io_done *done, size_t max, size_t *count)
{
    uint64_t now = thr_now_ns(), earliest = UINT64_MAX;
    dlg_io_done *ready = tf->scratch_done; /* free between harvests */
    bool sortable = tf->scratch_cap >= tf->nslots;
    size_t nready = 0;
    for (size_t i = 0; i < tf->nslots; i++) {
        thr_slot *s = &tf->slots[i];
        if (s->state != THR_SLOT_DONE)
            continue;
        if (s->deadline > now) {
            earliest = s->deadline < earliest ? s->deadline : earliest;
        } else if (sortable) {
            ready[nready++].user = i;
        } else if (*count < max) { /* out of memory for the order: slot order */
            thr_count_cost(tf, s->cost);
            done[(*count)++] = (dlg_io_done){s->user, s->result};
            s->state = THR_SLOT_FREE;
            tf->pending--;
        } else {
            earliest = s->deadline < earliest ? s->deadline : earliest;
        }
    }
    if (nready > max - *count)
        qsort_r(ready, nready, sizeof *ready, by_deadline, tf->slots);
    for (size_t k = 0; k < nready; k++) {
        thr_slot *s = &tf->slots[ready[k].user];
        if (*count == max) {
            earliest = s->deadline < earliest ? s->deadline : earliest;
            continue;
        }
        thr_count_cost(tf, s->cost);
        done[(*count)++] = (dlg_io_done){s->user, s->result};
        s->state = THR_SLOT_FREE;
        tf->pending--;
    }
    return earliest;
}

int thr_reap(dlg_file *f, dlg_io_done *done, size_t max, size_t min_done)
{
    thr_file *tf = (thr_file *)f;
    if (min_done > max)
        min_done = max;
    if (min_done > tf->pending)
        min_done = tf->pending;
    size_t count = 0;
    for (;;) {
        int rc = harvest(tf, 0);
        if (rc < 0)
            return rc;
        uint64_t earliest = emit_ready(tf, done, max, &count);
        if (count >= min_done || count == max)
            return (int)count;
        if (earliest != UINT64_MAX)
            rc = thr_sleep_until(tf->ti->shaper, tf->h, earliest);
        else if (tf->inflight > 0)
            rc = harvest(tf, 1);
        else
            return (int)count;
        if (rc < 0)
            return rc;
    }
}

void thr_async_free(thr_file *tf)
{
    free(tf->slots);
    free(tf->scratch);
    free(tf->scratch_done);
    tf->slots = NULL;
    tf->scratch = NULL;
    tf->scratch_done = NULL;
    tf->nslots = tf->scratch_cap = 0;
}
