#define _GNU_SOURCE
#include "dio.h"

#include <dlgauge/iobuf.h>
#include <dlgauge/plugin.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>

static bool pow2(uint64_t x) { return x && (x & (x - 1)) == 0; }

uint32_t stg_dio_align(int fd, const char **how)
{
#ifdef STATX_DIOALIGN
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) &&
        sx.stx_dio_offset_align) {
        uint32_t a = sx.stx_dio_offset_align > sx.stx_dio_mem_align ? sx.stx_dio_offset_align
                                                                     : sx.stx_dio_mem_align;
        if (pow2(a)) {
            *how = "statx";
            return a;
        }
    }
#endif
    struct stat st;
    int ssz = 0;
    if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && ioctl(fd, BLKSSZGET, &ssz) == 0 &&
        pow2((uint64_t)ssz)) {
        *how = "BLKSSZGET";
        return (uint32_t)ssz;
    }
    /* The filesystem block size is a safe over-estimate of the sector size. */
    struct statfs sf;
    if (fstatfs(fd, &sf) == 0 && sf.f_bsize > 0 && sf.f_bsize <= 65536 && pow2((uint64_t)sf.f_bsize)) {
        *how = "fstatfs";
        return (uint32_t)sf.f_bsize;
    }
    *how = "default";
    return 4096;
}

void stg_bounce_init(stg_bounce *b, uint32_t align, size_t max)
{
    memset(b, 0, sizeof *b);
    b->align = align;
    /* a whole number of blocks: an unaligned max (bounce_max = 100kB) made
     * every read larger than it reallocate the buffer */
    max &= ~((size_t)align - 1);
    b->max = max < 2u * align ? 2u * align : max;
}

void stg_bounce_free(stg_bounce *b)
{
    dlg_iobuf_free(b->buf, b->cap);
    b->buf = NULL;
    b->cap = 0;
}

static int bounce_reserve(stg_bounce *b, size_t want)
{
    if (want <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : b->align;
    while (cap < want && cap < b->max)
        cap *= 2;
    if (cap > b->max)
        cap = b->max;
    void *p = dlg_iobuf_alloc(cap, b->align); /* huge pages from 64 KiB (iobuf.h) */
    if (!p)
        return -DLG_ENOMEM;
    dlg_iobuf_free(b->buf, b->cap);
    b->buf = p;
    b->cap = cap;
    return 0;
}

int64_t stg_bounce_read(stg_bounce *b, stg_aligned_read_fn fn, void *ctx, void *buf, size_t n,
                        uint64_t off)
{
    const uint64_t mask = b->align - 1u;
    size_t done = 0;
    while (done < n) {
        uint64_t cur = off + done;
        uint64_t lo = cur & ~mask;
        size_t head = (size_t)(cur - lo);
        size_t span = (size_t)(((cur + (n - done) + mask) & ~mask) - lo);
        if (bounce_reserve(b, span < b->max ? span : b->max) != 0)
            return -DLG_ENOMEM;
        if (span > b->cap)
            span = b->cap;
        int64_t got = fn(ctx, b->buf, span, lo);
        if (got < 0)
            return got;
        if ((size_t)got <= head)
            break; /* EOF before the wanted slice */
        size_t avail = (size_t)got - head;
        size_t want = n - done;
        size_t take = avail < want ? avail : want;
        memcpy((char *)buf + done, (char *)b->buf + head, take);
        done += take;
        if ((size_t)got < span)
            break; /* EOF inside this chunk */
    }
    return (int64_t)done;
}
