/* The read queue of one io_uring: slots for the reads in flight, batched
 * submission, and reaping that resubmits the rest of short reads.
 *
 * Every read submit() accepts comes back from reap() exactly once.  When
 * io_uring_submit fails for good, the reads it left in the submission queue
 * never reach the kernel: reap() returns them as failed reads (-DLG_EIO,
 * after one error naming the file) instead of waiting for completions that
 * cannot come, and the queue takes no new reads. */
#ifndef DLG_URING_QUEUE_H
#define DLG_URING_QUEUE_H

#include <dlgauge/plugin.h>

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct uring_slot {
    char *buf;
    size_t len;
    uint64_t off;
    uint64_t user;
    size_t done;
    bool busy;
} uring_slot;

typedef struct uring_queue {
    struct io_uring ring;
    const dlg_host *h;
    const char *path; /* for messages; the file's */
    int fd;
    bool fixed;       /* fd is the ring's fixed file 0 */
    uint32_t depth;
    uint32_t batch;
    uint32_t inflight; /* slots in use: queued or held by the kernel */
    uint32_t nfree;
    uint32_t *free_slots;
    uring_slot *slots;
    char *reg;         /* the registered buffer (fixed buffer 0), or NULL */
    size_t reg_len;
    int failed;        /* errno of the submit that failed for good; 0 */
    uint32_t unsent;   /* once failed: reads in flight the kernel never took */
    /* io_uring_submit; tests put a failing one here */
    int (*submit)(struct io_uring *ring);
} uring_queue;

/* Sets up a ring of `depth` entries over fd (registered as a fixed file
 * when `fixed` and the kernel allows).  0, or -code after reporting. */
int uq_init(uring_queue *q, const dlg_host *h, const char *path, int fd, uint32_t depth, uint32_t batch,
            bool fixed);
/* Waits out the reads the kernel holds (it may still write into their
 * buffers), then frees the ring. */
void uq_fini(uring_queue *q);

/* Queues n reads, handing them to the kernel submit_batch at a time.
 * Returns n, or -code (after reporting) when it took none. */
int uq_submit(uring_queue *q, const dlg_io *ios, size_t n);
/* Up to max completions, waiting for at least min_done (never for more
 * than are in flight).  Returns the count or -code. */
int uq_reap(uring_queue *q, dlg_io_done *done, size_t max, size_t min_done);

/* Registers buf as fixed buffer 0 (none in flight).  0 or -code. */
int uq_register(uring_queue *q, void *buf, size_t len, bool allowed);

#endif
