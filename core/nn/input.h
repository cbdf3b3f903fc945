/* The input path (input.c): pinned host memory and asynchronous input
 * writes (dlg_net_host_alloc, dlg_net_write_async and friends in nn.h).
 *
 * Each blob written asynchronously gets two device staging buffers, used
 * alternately.  dlg_net_write_async copies host -> staging on the
 * backend's copy stream and marks the staging ready; the next step first
 * takes every pending staging on the compute stream (waits for its ready
 * mark, then copies staging -> blob) and marks it read.  A later copy
 * into the same staging waits for that read mark, so batch k+1's copy runs
 * while step k computes and never overwrites what a step still reads.
 *
 * dlg_in_ring is that bookkeeping for one blob, pure host state (tested
 * without a device): which staging a write goes to, whether its copy must
 * first wait for a step's read, which staging the next step takes. */
#ifndef DLG_NN_INPUT_H
#define DLG_NN_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dlg_in_ring {
    int last;      /* staging written last; -1: none yet */
    int pending;   /* written and not yet taken by a step; -1: none */
    bool read[2];  /* taken by a step since it was last written */
    uint64_t writes, taken, replaced; /* counts (replaced: overwritten before a step took it) */
} dlg_in_ring;

void dlg_in_ring_init(dlg_in_ring *r);
/* The staging a new write copies into: the one not written last.
 * *after_read: a step has read it since its last write, so the copy must
 * wait for that read (on the device).  A write not yet taken is replaced
 * (the newest write wins). */
int dlg_in_ring_write(dlg_in_ring *r, bool *after_read);
/* The staging the next step takes (copies into the blob), or -1 if no
 * write is pending; it is then no longer pending. */
int dlg_in_ring_take(dlg_in_ring *r);
/* Forget a pending write (a synchronous dlg_net_write of the blob came
 * after it: the last write wins).  Returns true if one was pending. */
bool dlg_in_ring_drop(dlg_in_ring *r);

struct dlg_net;
/* Before each step (step.c) and dlg_net_forward (run.c): take every
 * pending write into its blob on the compute stream.  *took: whether any
 * was pending.  Errors come back in err, not sticky. */
int dlg_input_take(struct dlg_net *net, bool *took, char *err, size_t errlen);
/* After a step that took inputs: marks the end of its work (the device's
 * idle time from there to the step timer's end counts as data wait). */
void dlg_input_mark(struct dlg_net *net);
/* dlg_net_write of a blob: drops its pending asynchronous write. */
void dlg_input_drop(struct dlg_net *net, int blob);
/* Staging and device state, before the backend closes (plan.c). */
void dlg_input_free(struct dlg_net *net);

#endif
