/* One emulated disk for every rank of a run on one node: a node's ranks
 * read one volume, so they share its bandwidth, IOPS and queue, not each
 * get all of it.  The disks live in a shared-memory segment named by the
 * run's node key (dlg_rank_info); each disk is a shaper (throttle_shaper.h)
 * under a process-shared, robust mutex. */
#ifndef DLG_THROTTLE_SHM_H
#define DLG_THROTTLE_SHM_H

#include <stddef.h>
#include <stdint.h>

#include "throttle_shaper.h"

/* Disks one segment holds (throttle storages with the same limits a
 * rank has open at once), and the local ranks it tells apart. */
#define THR_SHM_DISKS 16
#define THR_SHM_RANKS 1024

typedef struct thr_shm {
    int fd; /* the segment, kept open to lock it (flock) for detach */
    int disk;
    int local_rank;
    struct thr_shm_seg *seg;
    char name[64];
} thr_shm;

/* Attaches local rank `local_rank` to the node's disk with these limits:
 * its k-th such throttle instance gets the disk that every other rank's
 * k-th has (ranks open their storages in the same order).  The first rank
 * in makes the segment and the disk.  0 and *out->..., or -1 with why. */
int thr_shm_attach(uint64_t node_key, int local_rank, const thr_limits *lim, thr_shm *out,
                   thr_shaper **shaper, char *why, size_t len);
/* The last rank out of the last disk removes the segment's name. */
void thr_shm_detach(thr_shm *m);

#endif
