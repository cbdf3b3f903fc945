/* Structural check of an LMDB's main B-tree before liblmdb reads it (see
 * lmdb_check.h for why).  The on-disk layout is liblmdb's (data format
 * version 1, 64-bit, little-endian; mdb.c keeps the structs private):
 *   page:  u64 pgno, u16 pad, u16 flags, u16 lower, u16 upper, u16 ptrs[]
 *   node:  u16 lo, u16 hi, u16 flags, u16 ksize, key, then the value (leaf)
 *          or nothing (branch: lo | hi << 16 | flags << 32 is the child)
 *   meta:  page header, then MDB_meta; dbs[1] is the main database. */
#include "lmdb_check.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGEHDR 16u
#define P_BRANCH 0x01u
#define P_LEAF 0x02u
#define P_META 0x08u
#define P_KIND 0x67u /* branch, leaf, overflow, meta, leaf2, subpage bits */
#define F_BIGDATA 0x01u
#define NODEHDR 8u
#define DB_ORDER_FLAGS 0x7eu /* REVERSEKEY DUPSORT INTEGERKEY DUPFIXED INTEGERDUP REVERSEDUP */
#define MAX_DEPTH 31u /* liblmdb's cursor stack holds 32 pages */
/* Offsets in the meta page: psize (free db's pad), then the main db. */
#define M_MAGIC 16u
#define M_VERSION 20u
#define M_PSIZE 40u
#define M_MAIN 88u
#define M_LAST 136u
#define M_TXNID 144u

typedef struct walk {
    int fd;
    const char *file;
    uint64_t size, npages;
    uint32_t psize;
    unsigned depth;
    uint8_t *bufs; /* one page per tree level */
    uint8_t *prev; /* the previous key (psize bytes) */
    size_t prev_len;
    uint64_t entries, index, visited;
    dlg_lmdb_key_fn fn;
    void *ctx;
    dlg_data_err *err;
} walk;

static uint16_t u16_at(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t u32_at(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t u64_at(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* The one error line: file, byte offset, what is wrong there. */
static int bad(const walk *w, uint64_t at, const char *fmt, ...) DLG_PRINTF(3, 4);
static int bad(const walk *w, uint64_t at, const char *fmt, ...)
{
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return dlg_data_fail(w->err, DLG_ECORRUPT, "%s: corrupt LMDB at byte %llu (page %llu): %s",
                         w->file, (unsigned long long)at,
                         (unsigned long long)(at / w->psize), what);
}

static int read_page(const walk *w, uint64_t pgno, uint8_t *buf)
{
    ssize_t got = pread(w->fd, buf, w->psize, (off_t)(pgno * w->psize));
    if (got == (ssize_t)w->psize)
        return 0;
    return dlg_data_fail(w->err, DLG_EIO, "%s: cannot read LMDB page %llu: %s", w->file,
                         (unsigned long long)pgno, got < 0 ? strerror(errno) : "short read");
}

/* The page's header against what its parent says it is; its key count. */
static int page_header(const walk *w, const uint8_t *pg, uint64_t pgno, bool leaf, unsigned *nkeys)
{
    uint64_t at = pgno * w->psize;
    uint16_t flags = u16_at(pg + 10), lower = u16_at(pg + 12), upper = u16_at(pg + 14);
    if (u64_at(pg) != pgno)
        return bad(w, at, "the page says it is page %llu", (unsigned long long)u64_at(pg));
    if ((flags & P_KIND) != (leaf ? P_LEAF : P_BRANCH))
        return bad(w, at + 10, "page flags 0x%x where a %s page belongs", flags,
                   leaf ? "leaf" : "branch");
    if (lower < PAGEHDR || (lower - PAGEHDR) % 2 || lower > upper || upper > w->psize)
        return bad(w, at + 12, "free-space bounds %u..%u do not fit a %u-byte page", lower,
                   upper, w->psize);
    *nkeys = (lower - PAGEHDR) / 2;
    /* liblmdb asserts a branch has two children; an empty leaf it reads past. */
    if (*nkeys < (leaf ? 1u : 2u))
        return bad(w, at + 12, "a %s page holding %u key(s)", leaf ? "leaf" : "branch", *nkeys);
    return 0;
}

/* Node i of page pg: its offset, checked to lie (header and key) in the page. */
static int node_at(const walk *w, const uint8_t *pg, uint64_t pgno, unsigned i, uint32_t *off)
{
    uint64_t at = pgno * w->psize;
    uint32_t o = u16_at(pg + PAGEHDR + 2 * i);
    if (o < u16_at(pg + 14) || o % 2 || o + NODEHDR > w->psize)
        return bad(w, at + PAGEHDR + 2 * i, "node %u at offset %u outside the page's nodes", i,
                   o);
    if (o + NODEHDR + u16_at(pg + o + 6) > w->psize)
        return bad(w, at + o + 6, "node %u's %u-byte key runs past the page", i,
                   u16_at(pg + o + 6));
    *off = o;
    return 0;
}

/* Keys must ascend strictly (liblmdb's default order: bytes, then length):
 * else a key lookup finds another record, and a page reached twice shows. */
static int key_order(walk *w, const uint8_t *key, size_t len, uint64_t at)
{
    if (w->index > 0) {
        size_t n = len < w->prev_len ? len : w->prev_len;
        int c = memcmp(key, w->prev, n);
        if (c < 0 || (c == 0 && len <= w->prev_len))
            return bad(w, at, "record %llu's key is not after the one before it",
                       (unsigned long long)w->index);
    }
    memcpy(w->prev, key, len);
    w->prev_len = len;
    return 0;
}

/* One leaf node: its value (in the page, or overflow pages in the file). */
static int leaf_node(walk *w, const uint8_t *pg, uint64_t pgno, uint32_t o)
{
    uint64_t at = pgno * w->psize + o;
    uint16_t flags = u16_at(pg + o + 4), ksize = u16_at(pg + o + 6);
    uint64_t dsize = u16_at(pg + o) | (uint64_t)u16_at(pg + o + 2) << 16;
    uint32_t end = o + NODEHDR + ksize;
    if (flags & ~F_BIGDATA) /* sub-database or duplicates: not key/value records */
        return bad(w, at + 4, "record %llu has node flags 0x%x (not a plain key/value record)",
                   (unsigned long long)w->index, flags);
    if (!(flags & F_BIGDATA) && end + dsize > w->psize)
        return bad(w, at, "record %llu's %llu-byte value runs past its page",
                   (unsigned long long)w->index, (unsigned long long)dsize);
    if (flags & F_BIGDATA) {
        if (end + 8 > w->psize)
            return bad(w, at, "record %llu's overflow page number runs past its page",
                       (unsigned long long)w->index);
        uint64_t ov = u64_at(pg + end);
        if (ov < 2 || ov >= w->npages || (w->size - ov * w->psize - PAGEHDR) < dsize)
            return bad(w, at + NODEHDR + ksize,
                       "record %llu's %llu-byte value on overflow page %llu is not inside the "
                       "%llu-byte file",
                       (unsigned long long)w->index, (unsigned long long)dsize,
                       (unsigned long long)ov, (unsigned long long)w->size);
    }
    int rc = key_order(w, pg + o + NODEHDR, ksize, at);
    if (rc == 0 && w->fn)
        rc = w->fn(w->ctx, w->index, pg + o + NODEHDR, ksize, w->err);
    w->index++;
    return rc;
}

/* Page pgno at tree level (1: the root), referred to from byte ref. */
static int walk_page(walk *w, uint64_t pgno, unsigned level, uint64_t ref)
{
    bool leaf = level == w->depth;
    if (pgno < 2 || pgno >= w->npages)
        return bad(w, ref, "refers to page %llu, not a data page of the %llu-page file",
                   (unsigned long long)pgno, (unsigned long long)w->npages);
    if (++w->visited > w->npages)
        return bad(w, ref, "the tree reaches more pages than the file has (a loop)");
    uint8_t *pg = w->bufs + (size_t)(level - 1) * w->psize;
    unsigned nkeys = 0;
    int rc = read_page(w, pgno, pg);
    if (rc == 0)
        rc = page_header(w, pg, pgno, leaf, &nkeys);
    for (unsigned i = 0; rc == 0 && i < nkeys; i++) {
        uint32_t o = 0;
        if ((rc = node_at(w, pg, pgno, i, &o)) != 0)
            break;
        if (leaf && w->index >= w->entries)
            return bad(w, pgno * w->psize + o, "more records than the %llu the meta page counts",
                       (unsigned long long)w->entries);
        if (leaf)
            rc = leaf_node(w, pg, pgno, o);
        else
            rc = walk_page(w,
                           u16_at(pg + o) | (uint64_t)u16_at(pg + o + 2) << 16 |
                               (uint64_t)u16_at(pg + o + 4) << 32,
                           level + 1, pgno * w->psize + o);
    }
    return rc;
}

bool dlg_lmdb_page_size_ok(uint32_t psize)
{
    return psize >= 512 && psize <= 65536 && !(psize & (psize - 1));
}

/* The meta page at off into m, if it is one liblmdb takes (mdb_env_read_header:
 * P_META, the magic, data format version 1). */
static bool meta_at(int fd, uint64_t off, uint8_t m[M_TXNID + 8])
{
    return pread(fd, m, M_TXNID + 8, (off_t)off) == (ssize_t)(M_TXNID + 8) && (u16_at(m + 10) & P_META) &&
           u32_at(m + M_MAGIC) == 0xBEEFC0DEu && u32_at(m + M_VERSION) == 1;
}

int dlg_lmdb_check_metas(int fd, const char *file, uint32_t *psize, uint64_t *last_pg, dlg_data_err *err)
{
    walk w = {.fd = fd, .file = file, .psize = 4096, .err = err}; /* 4096: for messages, as pick_meta */
    uint8_t m0[M_TXNID + 8], m1[M_TXNID + 8];
    if (!meta_at(fd, 0, m0))
        return 0;
    uint32_t p0 = u32_at(m0 + M_PSIZE);
    if (!dlg_lmdb_page_size_ok(p0))
        return bad(&w, M_PSIZE, "page size %u", p0);
    w.psize = p0;
    if (!meta_at(fd, p0, m1))
        return 0;
    /* the newer by transaction id, as liblmdb picks it; the first on a tie */
    const uint8_t *newer = u64_at(m1 + M_TXNID) > u64_at(m0 + M_TXNID) ? m1 : m0;
    if (u32_at(newer + M_PSIZE) != p0) /* only the second can differ */
        return bad(&w, p0 + M_PSIZE, "the newer meta page's page size %u is not the first meta page's %u",
                   u32_at(newer + M_PSIZE), p0);
    *psize = p0;
    *last_pg = u64_at(newer + M_LAST);
    return 1;
}

/* The meta page of snapshot txnid (liblmdb keeps two and alternates):
 * sets psize, npages, depth and entries from it; *root_ref is the byte
 * of its root page number. */
static int pick_meta(walk *w, uint64_t txnid, uint64_t *root, uint64_t *root_ref)
{
    uint8_t m[M_TXNID + 8];
    w->psize = 4096; /* for messages until the file's own is known */
    if (pread(w->fd, m, sizeof m, 0) != (ssize_t)sizeof m)
        return bad(w, 0, "cannot read the first meta page");
    uint32_t ps = u32_at(m + M_PSIZE);
    if (!dlg_lmdb_page_size_ok(ps))
        return bad(w, M_PSIZE, "page size %u", ps);
    w->psize = ps;
    w->npages = w->size / ps;
    for (uint64_t at = 0; at <= ps; at += ps) {
        if (at && pread(w->fd, m, sizeof m, (off_t)at) != (ssize_t)sizeof m)
            return bad(w, at, "cannot read the second meta page");
        if (u32_at(m + M_MAGIC) != 0xBEEFC0DEu || u64_at(m + M_TXNID) != txnid)
            continue;
        const uint8_t *db = m + M_MAIN;
        if (u16_at(db + 4) & DB_ORDER_FLAGS)
            return bad(w, at + M_MAIN + 4,
                       "main database flags 0x%x (sorted duplicates or another key order: not "
                       "a Caffe LMDB)",
                       u16_at(db + 4));
        w->depth = u16_at(db + 6);
        w->entries = u64_at(db + 32);
        *root = u64_at(db + 40);
        *root_ref = at + M_MAIN + 40;
        if (w->depth < 1 || w->depth > MAX_DEPTH)
            return bad(w, at + M_MAIN + 6, "main database depth %u", w->depth);
        return 0;
    }
    return bad(w, 0, "neither meta page is of transaction %llu, which liblmdb reads",
               (unsigned long long)txnid);
}

int dlg_lmdb_check(int fd, const char *file, uint64_t file_size, uint64_t txnid,
                   dlg_lmdb_key_fn fn, void *ctx, dlg_data_err *err)
{
    walk w = {.fd = fd, .file = file, .size = file_size, .fn = fn, .ctx = ctx, .err = err};
    uint64_t root = 0, root_ref = 0;
    int rc = pick_meta(&w, txnid, &root, &root_ref);
    if (rc < 0)
        return rc;
    w.bufs = malloc((size_t)w.depth * w.psize);
    w.prev = malloc(w.psize);
    if (!w.bufs || !w.prev)
        rc = dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", file);
    else
        rc = walk_page(&w, root, 1, root_ref);
    if (rc == 0 && w.index != w.entries)
        rc = dlg_data_fail(err, DLG_ECORRUPT,
                           "%s: corrupt LMDB: its tree holds %llu records, its meta page says %llu",
                           file, (unsigned long long)w.index, (unsigned long long)w.entries);
    free(w.bufs);
    free(w.prev);
    return rc;
}
