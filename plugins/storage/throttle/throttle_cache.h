/* page_cache = model: the emulated VM's page cache, seen through the
 * local one.  A read the page cache serves never reaches a cloud disk, so
 * it costs the emulated disk nothing; one it misses costs the pages the
 * disk must deliver.  With the job's `memory` set the cell's cgroup holds
 * the local page cache to the emulated machine's size, so the local cache
 * is a fair model of the VM's.  Before each read, mincore (on a mapping of
 * the file made for it) tells which of the request's pages are resident:
 *   - not resident: a miss, charged, and the read waits the disk's latency;
 *   - resident and charged before: a hit, free;
 *   - resident, never charged: the kernel's readahead after an earlier
 *     miss brought it, which the VM's kernel would also have asked its
 *     disk for: charged now (bandwidth and IOPS, no latency: readahead runs
 *     ahead of the reader);
 *   - resident when its 64 MiB chunk was first read (cache = warm, or
 *     cached before the run): free.
 * A bit per page says "charged".  A page seen evicted is uncharged again:
 * in the request (a miss), and in the window ahead of it that this read's
 * readahead may fill (twice the device's read_ahead_kb, at most 16 MiB),
 * looked at before a read that missed or took readahead's pages, so that
 * a pass over a file larger than the cache pays again for the pages
 * readahead brings back.
 * What the model does not see: readahead pages evicted unread (charged
 * never, though the disk read them), other processes' reads of the same
 * file (their pages are free here once resident), and a file the user
 * neither owns nor may write (mincore then shows nothing resident, and
 * every read is charged: the caller says so). */
#ifndef DLG_THROTTLE_CACHE_H
#define DLG_THROTTLE_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct thr_cache {
    pthread_mutex_t mu; /* a file's readers share it */
    bool live;          /* opened: mu made */
    void *map;          /* the file's first `mapped` bytes, for mincore only */
    uint64_t mapped;
    uint64_t *charged;  /* a bit per page */
    uint64_t *seen;     /* a bit per chunk: its residency at first read taken */
    unsigned char *vec; /* mincore's answer for one chunk */
    size_t page;
    uint64_t window;    /* pages ahead of a read its readahead may fill */
    uint64_t scan_from, scan_to; /* the window last looked at whole, and how far since */
} thr_cache;

/* Maps path for mincore.  0; or -1 with why (the caller charges every
 * read then).  *blind: mincore cannot see this file's cache (not owned or
 * writable by this user, Linux 5.2 and later). */
int thr_cache_open(thr_cache *c, const char *path, bool *blind, char *why, size_t len);
/* What a read costs the emulated disk: its bytes that missed (a demand
 * I/O, which waits the disk's latency) and those readahead brought (paid
 * as part of readahead's large I/Os).  Both 0: a hit. */
typedef struct thr_cache_cost {
    size_t miss, ahead;
} thr_cache_cost;

/* Of a read of n bytes at off; bytes past what was mapped at open count
 * as misses. */
thr_cache_cost thr_cache_account(thr_cache *c, uint64_t off, size_t n);
void thr_cache_close(thr_cache *c);

#endif
