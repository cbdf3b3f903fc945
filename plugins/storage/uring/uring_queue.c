#define _GNU_SOURCE
#include "uring_queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define URING_SQE_MAX (1u << 30) /* one SQE reads at most this; the rest is resubmitted */

int uq_init(uring_queue *q, const dlg_host *h, const char *path, int fd, uint32_t depth, uint32_t batch,
            bool fixed)
{
    memset(q, 0, sizeof *q);
    q->h = h;
    q->path = path;
    q->fd = fd;
    q->depth = depth;
    q->batch = batch;
    q->submit = io_uring_submit;
    q->slots = calloc(depth, sizeof *q->slots);
    q->free_slots = calloc(depth, sizeof *q->free_slots);
    if (!q->slots || !q->free_slots) {
        free(q->slots);
        free(q->free_slots);
        return h->error(h, DLG_ENOMEM, "%s: out of memory", path);
    }
    for (uint32_t i = 0; i < depth; i++)
        q->free_slots[i] = depth - 1 - i;
    q->nfree = depth;
    /* CQ twice the SQ: completions can never overflow with depth in flight. */
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = 2 * depth;
    int rc = io_uring_queue_init_params(depth, &q->ring, &p);
    if (rc < 0) {
        free(q->slots);
        free(q->free_slots);
    }
    /* uring may be a throttle's inner, where type = posix would drop the
     * emulated disk: name both ways out */
    if (rc == -ENOSYS || rc == -EPERM || rc == -EACCES)
        return h->error(h, DLG_ENOTSUP,
                        "%s: io_uring is unavailable here (io_uring_setup: %s; the kernel or a "
                        "seccomp policy refuses it); use type = posix; under a throttle, inner = posix",
                        path, strerror(-rc));
    if (rc < 0)
        return h->error(h, rc == -ENOMEM ? DLG_ENOMEM : DLG_EIO, "%s: io_uring_setup with depth %u: %s%s", path,
                        depth, strerror(-rc), rc == -ENOMEM ? " (try a smaller depth or raise ulimit -l)" : "");
    q->fixed = fixed && io_uring_register_files(&q->ring, &fd, 1) == 0;
    return 0;
}

/* Reads the kernel holds: only for these can a completion come.  The
 * others in flight are still in the submission queue, or (once submitting
 * failed) will never be taken. */
static uint32_t held(const uring_queue *q)
{
    return q->inflight - (q->failed ? q->unsent : io_uring_sq_ready(&q->ring));
}

void uq_fini(uring_queue *q)
{
    /* Waits out the reads the kernel holds (one CQE each; short reads are
     * not resubmitted): it tears a ring down asynchronously, and a read under
     * way then still lands in a buffer the caller frees after close.  Reads
     * still queued never run. */
    for (uint32_t wait = held(q); wait > 0;) {
        struct io_uring_cqe *cqe;
        int rc = io_uring_wait_cqe(&q->ring, &cqe);
        if (rc == -EINTR || rc == -EAGAIN)
            continue;
        if (rc < 0)
            break;
        io_uring_cqe_seen(&q->ring, cqe);
        wait--;
    }
    io_uring_queue_exit(&q->ring);
    free(q->slots);
    free(q->free_slots);
    q->slots = NULL;
    q->free_slots = NULL;
}

/* Hands the queued SQEs to the kernel.  It may take fewer than queued
 * (short of memory): submit the rest.  Busy (-EAGAIN, -EBUSY) while it
 * holds reads of ours: retried after their next completion.  Otherwise the
 * queued reads never reach it: the queue fails, and reap() returns them as
 * failed reads rather than wait for completions that cannot come. */
static int flush(uring_queue *q)
{
    while (!q->failed && io_uring_sq_ready(&q->ring) > 0) {
        int rc = q->submit(&q->ring);
        if (rc > 0 || rc == -EINTR)
            continue;
        if ((rc == 0 || rc == -EAGAIN || rc == -EBUSY) && held(q) > 0)
            return 0;
        q->unsent = io_uring_sq_ready(&q->ring);
        q->failed = rc < 0 ? -rc : EAGAIN;
        return q->h->error(q->h, DLG_EIO, "%s: io_uring_submit: %s; %u reads were never submitted and fail",
                           q->path, strerror(q->failed), q->unsent);
    }
    return q->failed ? -DLG_EIO : 0;
}

/* Queues (the rest of) slot idx's read.  0, or -code when the submission
 * queue is full, which uq_submit's check rules out. */
static int queue_read(uring_queue *q, uint32_t idx)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);
    if (!sqe)
        return q->h->error(q->h, DLG_EINTERNAL, "%s: io_uring submission queue full", q->path);
    uring_slot *s = &q->slots[idx];
    size_t left = s->len - s->done;
    unsigned len = left > URING_SQE_MAX ? URING_SQE_MAX : (unsigned)left;
    char *dst = s->buf + s->done;
    int fd = q->fixed ? 0 : q->fd;
    if (q->reg && dst >= q->reg && len <= q->reg_len && (size_t)(dst - q->reg) <= q->reg_len - len)
        io_uring_prep_read_fixed(sqe, fd, dst, len, s->off + s->done, 0);
    else
        io_uring_prep_read(sqe, fd, dst, len, s->off + s->done);
    if (q->fixed)
        sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, idx);
    return 0;
}

int uq_submit(uring_queue *q, const dlg_io *ios, size_t n)
{
    if (q->failed)
        return q->h->error(q->h, DLG_EIO, "%s: io_uring_submit failed before (%s); no more reads on this file",
                           q->path, strerror(q->failed));
    if (n > q->nfree || n > io_uring_sq_space_left(&q->ring))
        return q->h->error(q->h, DLG_EINVAL, "%s: %zu more reads would exceed depth %u (%u in flight); reap first",
                           q->path, n, q->depth, q->inflight);
    for (size_t i = 0; i < n; i++) {
        uint32_t idx = q->free_slots[--q->nfree];
        q->slots[idx] = (uring_slot){ios[i].buf, ios[i].len, ios[i].off, ios[i].user, 0, true};
        q->inflight++;
        if (q->failed) { /* an earlier batch failed: this read never goes */
            q->unsent++;
            continue;
        }
        (void)queue_read(q, idx); /* the space check above leaves room */
        if ((i + 1) % q->batch == 0 || i + 1 == n)
            (void)flush(q);
    }
    return (int)n;
}

static void complete(uring_queue *q, uint32_t idx, dlg_io_done *out, int64_t result)
{
    out->user = q->slots[idx].user;
    out->result = result;
    q->slots[idx].busy = false;
    q->free_slots[q->nfree++] = idx;
    q->inflight--;
}

/* Handles one CQE; returns 1 if it completed a read into *out, 0 if the
 * remainder was queued again. */
static int handle_cqe(uring_queue *q, struct io_uring_cqe *cqe, dlg_io_done *out)
{
    uint32_t idx = (uint32_t)io_uring_cqe_get_data64(cqe);
    int res = cqe->res;
    io_uring_cqe_seen(&q->ring, cqe);
    uring_slot *s = &q->slots[idx];
    if (res > 0)
        s->done += (size_t)res;
    /* interrupted, or short: read the rest */
    bool again = res == -EINTR || res == -EAGAIN || (res > 0 && s->done < s->len);
    int rc = !again ? 0 : q->failed ? -DLG_EIO : queue_read(q, idx);
    if (again && rc == 0)
        return 0;
    if (rc == 0 && res < 0)
        rc = q->h->error(q->h, DLG_EIO, "%s: read of %zu bytes at offset %llu: %s", q->path, s->len,
                         (unsigned long long)s->off, strerror(-res));
    complete(q, idx, out, rc < 0 ? rc : (int64_t)s->done);
    return 1;
}

/* Once submitting failed and the kernel holds none of ours, the reads
 * still in flight are those it never took: they fail.  Returns how many. */
static size_t fail_unsent(uring_queue *q, dlg_io_done *done, size_t max)
{
    size_t k = 0;
    for (uint32_t i = 0; i < q->depth && k < max; i++)
        if (q->slots[i].busy) {
            complete(q, i, &done[k++], -DLG_EIO);
            q->unsent--;
        }
    return k;
}

int uq_reap(uring_queue *q, dlg_io_done *done, size_t max, size_t min_done)
{
    if (min_done > max)
        min_done = max;
    if (min_done > q->inflight)
        min_done = q->inflight; /* never wait for reads that were not submitted */
    size_t count = 0;
    for (;;) {
        struct io_uring_cqe *cqe;
        while (count < max && io_uring_peek_cqe(&q->ring, &cqe) == 0)
            count += (size_t)handle_cqe(q, cqe, &done[count]);
        (void)flush(q); /* resubmitted rests, and what a busy kernel left queued */
        if (q->failed && held(q) == 0)
            count += fail_unsent(q, done + count, max - count);
        if (count >= min_done)
            return (int)count;
        /* held(q) > 0 here: a completion is coming */
        int rc = io_uring_wait_cqe(&q->ring, &cqe);
        if (rc < 0 && rc != -EINTR && rc != -EAGAIN)
            return q->h->error(q->h, DLG_EIO, "%s: io_uring_wait_cqe: %s", q->path, strerror(-rc));
    }
}

int uq_register(uring_queue *q, void *buf, size_t len, bool allowed)
{
    if (q->inflight)
        return q->h->error(q->h, DLG_EINVAL, "%s: register a buffer before any read is in flight", q->path);
    if (q->reg)
        io_uring_unregister_buffers(&q->ring);
    q->reg = NULL;
    struct iovec iov = {buf, len};
    if (!allowed || !buf || !len || io_uring_register_buffers(&q->ring, &iov, 1) != 0)
        return -DLG_ENOTSUP;
    q->reg = buf;
    q->reg_len = len;
    return 0;
}
