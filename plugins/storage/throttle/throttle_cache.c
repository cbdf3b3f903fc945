#define _GNU_SOURCE
#include "throttle_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Pages whose residency a chunk's first read takes at once. */
#define CHUNK_PAGES 16384u
/* The most pages ahead of a read looked at for evictions. */
#define WINDOW_MAX 4096u
/* A whole window is looked at again after a read that missed, one that
 * went back, or after this share of a window of progress; in between only
 * the pages new to it (a 4 KiB reader would else look at 4096 pages, some
 * 100 us, for each of its reads). */
#define RESCAN_SHARE 8u

static bool bit(const uint64_t *b, uint64_t i) { return b[i / 64] >> (i % 64) & 1; }
static void set_bit(uint64_t *b, uint64_t i) { b[i / 64] |= UINT64_C(1) << (i % 64); }
static void clear_bit(uint64_t *b, uint64_t i) { b[i / 64] &= ~(UINT64_C(1) << (i % 64)); }

/* The device's readahead (read_ahead_kb of its bdi), 128 KiB where it
 * does not say: the kernel's default. */
static uint64_t readahead_bytes(dev_t dev)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/class/bdi/%u:%u/read_ahead_kb", major(dev), minor(dev));
    FILE *f = fopen(path, "r");
    unsigned long kb = 0;
    if (f) {
        if (fscanf(f, "%lu", &kb) != 1)
            kb = 0;
        fclose(f);
    }
    return (kb ? kb : 128) * 1024;
}

int thr_cache_open(thr_cache *c, const char *path, bool *blind, char *why, size_t len)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->live = true;
    *blind = false;
    c->page = (size_t)sysconf(_SC_PAGESIZE);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, len, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *blind = st.st_uid != geteuid() && geteuid() != 0 && access(path, W_OK) != 0;
    /* a sync readahead window, then the async one after it (16 MiB at
     * most: a device reading ahead 8 MiB) */
    c->window = 2 * readahead_bytes(st.st_dev) / c->page;
    c->window = c->window < WINDOW_MAX ? c->window : WINDOW_MAX;
    c->mapped = (uint64_t)st.st_size;
    uint64_t pages = (c->mapped + c->page - 1) / c->page, chunks = (pages + CHUNK_PAGES - 1) / CHUNK_PAGES;
    if (c->mapped > 0) {
        c->map = mmap(NULL, c->mapped, PROT_READ, MAP_SHARED, fd, 0);
        if (c->map == MAP_FAILED) {
            snprintf(why, len, "%s: mmap for mincore: %s", path, strerror(errno));
            c->map = NULL;
        }
    }
    close(fd); /* the mapping keeps the file */
    c->charged = calloc(pages / 64 + 1, sizeof *c->charged);
    c->seen = calloc(chunks / 64 + 1, sizeof *c->seen);
    c->vec = malloc(CHUNK_PAGES);
    if ((c->mapped > 0 && !c->map) || !c->charged || !c->seen || !c->vec) {
        if (c->map)
            snprintf(why, len, "%s: no memory for its page bits", path);
        thr_cache_close(c);
        return -1;
    }
    return 0;
}

/* The chunk's pages resident at its first read: cached before this
 * file's reads (cache = warm), so free. */
static void first_look(thr_cache *c, uint64_t chunk)
{
    uint64_t p0 = chunk * CHUNK_PAGES, pages = (c->mapped + c->page - 1) / c->page;
    uint64_t n = pages - p0 < CHUNK_PAGES ? pages - p0 : CHUNK_PAGES;
    if (mincore((char *)c->map + p0 * c->page, n * c->page, c->vec) == 0)
        for (uint64_t i = 0; i < n; i++)
            if (c->vec[i] & 1)
                set_bit(c->charged, p0 + i);
    set_bit(c->seen, chunk);
}

/* Residency of pages [p, p + n) of one chunk into c->vec (its first
 * look taken first); false when mincore cannot tell. */
static bool residency(thr_cache *c, uint64_t p, uint64_t n)
{
    if (!bit(c->seen, p / CHUNK_PAGES))
        first_look(c, p / CHUNK_PAGES);
    return mincore((char *)c->map + p * c->page, n * c->page, c->vec) == 0;
}

typedef struct tally {
    uint64_t miss, ahead; /* pages */
} tally;

/* Pages [p, p + n) of one chunk, read: those that missed and those
 * readahead brought, added to the tally at arg. */
static void account_pages(thr_cache *c, uint64_t p, uint64_t n, void *arg)
{
    tally *t = arg;
    if (!residency(c, p, n)) {
        t->miss += n; /* cannot tell: charged as misses */
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (bit(c->charged, p + i) && (c->vec[i] & 1))
            continue; /* a hit */
        if (c->vec[i] & 1)
            t->ahead++;
        else
            t->miss++;
        set_bit(c->charged, p + i); /* a miss is resident once read; readahead now paid */
    }
}

/* Pages [p, p + n) of one chunk, ahead of a read: those evicted are
 * uncharged, so that readahead bringing them back is paid for. */
static void look_ahead(thr_cache *c, uint64_t p, uint64_t n, void *arg)
{
    (void)arg;
    if (residency(c, p, n))
        for (uint64_t i = 0; i < n; i++)
            if (!(c->vec[i] & 1))
                clear_bit(c->charged, p + i);
}

/* Calls fn on pages [p, last) a chunk at a time. */
static void by_chunk(thr_cache *c, uint64_t p, uint64_t last, void (*fn)(thr_cache *, uint64_t, uint64_t, void *),
                     void *arg)
{
    while (p < last) {
        uint64_t chunk_end = (p / CHUNK_PAGES + 1) * CHUNK_PAGES, upto = last < chunk_end ? last : chunk_end;
        fn(c, p, upto - p, arg);
        p = upto;
    }
}

thr_cache_cost thr_cache_account(thr_cache *c, uint64_t off, size_t n)
{
    thr_cache_cost cost = {0, 0};
    if (n == 0)
        return cost;
    uint64_t end = off + n, in = end < c->mapped ? end : c->mapped;
    uint64_t beyond = end <= c->mapped ? 0 : off >= c->mapped ? n : end - c->mapped; /* grown since open */
    uint64_t pages = (c->mapped + c->page - 1) / c->page, first = off / c->page;
    uint64_t last = off < in ? (in - 1) / c->page + 1 : first;
    uint64_t ahead_end = last + c->window < pages ? last + c->window : pages;
    tally t = {0, 0};
    pthread_mutex_lock(&c->mu);
    by_chunk(c, first, last, account_pages, &t);
    /* readahead runs where reads miss or consume its pages: a pass the
     * cache serves whole starts none, and looks no further */
    if (t.miss || t.ahead) {
        bool whole = t.miss || last < c->scan_from || last >= c->scan_from + c->window / RESCAN_SHARE;
        uint64_t from = whole || c->scan_to < last ? last : c->scan_to;
        by_chunk(c, from, ahead_end, look_ahead, NULL);
        if (whole)
            c->scan_from = last;
        c->scan_to = ahead_end > c->scan_to || whole ? ahead_end : c->scan_to;
    }
    pthread_mutex_unlock(&c->mu);
    uint64_t miss = t.miss, ahead = t.ahead;
    /* whole pages, never more than the read's bytes: misses first */
    uint64_t left = n, m = miss * c->page + beyond, a = ahead * c->page;
    cost.miss = (size_t)(m < left ? m : left);
    left -= cost.miss;
    cost.ahead = (size_t)(a < left ? a : left);
    return cost;
}

void thr_cache_close(thr_cache *c)
{
    if (c->map)
        munmap(c->map, c->mapped);
    free(c->charged);
    free(c->seen);
    free(c->vec);
    if (c->live)
        pthread_mutex_destroy(&c->mu);
    memset(c, 0, sizeof *c);
}
