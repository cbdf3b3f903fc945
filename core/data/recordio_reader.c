/* RecordIO reader: reassembles split records (re-inserting the magic),
 * validates every header and reports corruption by byte offset, and
 * resynchronises from arbitrary offsets the way dmlc's RecordIOSplitter
 * does (aligned magic followed by cflag 0 or 1). */
#include "recordio.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_WINDOW (256 * 1024)
#define GROW_STEP (4u << 20) /* payload memory grows with data actually read */

struct dlg_rec_reader {
    dlg_source src;
    uint64_t pos;      /* next record header */
    uint8_t *win;      /* read-ahead window over [win_off, win_off + win_len) */
    size_t win_cap, win_len;
    uint64_t win_off;
    uint8_t *rec;      /* reassembled payload */
    size_t rec_cap;
};

int dlg_rec_reader_open(dlg_rec_reader **out, const dlg_source *src, size_t window,
                        dlg_data_err *err)
{
    dlg_rec_reader *r = calloc(1, sizeof *r);
    if (!r)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", src->name);
    r->src = *src;
    r->win_cap = window ? (window + 7) & ~(size_t)7 : DEFAULT_WINDOW;
    r->win = malloc(r->win_cap);
    if (!r->win) {
        free(r);
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", src->name);
    }
    *out = r;
    return 0;
}

void dlg_rec_reader_close(dlg_rec_reader *r)
{
    if (!r)
        return;
    free(r->win);
    free(r->rec);
    free(r);
}

uint64_t dlg_rec_reader_tell(const dlg_rec_reader *r) { return r->pos; }

int dlg_rec_reader_seek(dlg_rec_reader *r, uint64_t off, dlg_data_err *err)
{
    if (off % 4 != 0)
        return dlg_data_fail(err, DLG_EINVAL,
                             "%s: byte %llu is not a record start (not a multiple of 4)",
                             r->src.name, (unsigned long long)off);
    r->pos = off;
    return 0;
}

/* Copies up to n bytes at off into dst through the window; returns bytes
 * copied (short only at end of file) or -code. */
static int64_t get(dlg_rec_reader *r, uint64_t off, void *dst, size_t n, dlg_data_err *err)
{
    size_t done = 0;
    while (done < n) {
        uint64_t at = off + done;
        if (at >= r->win_off && at < r->win_off + r->win_len) {
            size_t k = (size_t)(r->win_off + r->win_len - at);
            if (k > n - done)
                k = n - done;
            memcpy((uint8_t *)dst + done, r->win + (at - r->win_off), k);
            done += k;
            continue;
        }
        if (n - done >= r->win_cap) { /* big payload: read straight into place */
            int64_t got = dlg_source_read(&r->src, (uint8_t *)dst + done, n - done, at, err);
            if (got < 0)
                return got;
            return (int64_t)(done + (size_t)got);
        }
        int64_t got = dlg_source_read(&r->src, r->win, r->win_cap, at, err);
        if (got < 0)
            return got;
        r->win_off = at;
        r->win_len = (size_t)got;
        if (got == 0)
            break;
    }
    return (int64_t)done;
}

static int reserve(dlg_rec_reader *r, size_t need, dlg_data_err *err)
{
    if (need <= r->rec_cap)
        return 0;
    size_t cap = r->rec_cap ? r->rec_cap : 4096;
    while (cap < need)
        cap *= 2;
    uint8_t *p = realloc(r->rec, cap);
    if (!p)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory for a %zu-byte record",
                             r->src.name, need);
    r->rec = p;
    r->rec_cap = cap;
    return 0;
}

/* Reads one part's payload (plus padding) into r->rec at `size`. */
static int read_part(dlg_rec_reader *r, uint64_t hdr_off, uint32_t len, size_t size,
                     dlg_data_err *err)
{
    uint64_t padded = ((uint64_t)len + 3) & ~(uint64_t)3;
    uint64_t data_off = hdr_off + DLG_REC_HEADER_SIZE;
    if (r->src.size != DLG_SIZE_UNKNOWN && data_off + padded > r->src.size)
        goto past_end;
    for (uint64_t done = 0; done < padded;) {
        size_t k = padded - done > GROW_STEP ? GROW_STEP : (size_t)(padded - done);
        int rc = reserve(r, size + done + k, err);
        if (rc < 0)
            return rc;
        int64_t got = get(r, data_off + done, r->rec + size + done, k, err);
        if (got < 0)
            return (int)got;
        if ((size_t)got < k)
            goto past_end;
        done += k;
    }
    return 0;
past_end:
    return dlg_data_fail(err, DLG_ECORRUPT,
                         "%s: record part at byte %llu: length %u (padded %llu) runs past "
                         "the end of the file",
                         r->src.name, (unsigned long long)hdr_off, len,
                         (unsigned long long)padded);
}

int dlg_rec_next(dlg_rec_reader *r, dlg_rec *rec, dlg_data_err *err)
{
    uint64_t off = r->pos, start = r->pos;
    size_t size = 0;
    uint32_t parts = 0;
    for (;;) {
        uint32_t head[2];
        int64_t got = get(r, off, head, sizeof head, err);
        if (got < 0)
            return (int)got;
        if (got == 0 && parts == 0)
            return 0; /* clean end */
        if (got == 0)
            return dlg_data_fail(err, DLG_ECORRUPT,
                                 "%s: file ends at byte %llu inside the multi-part record "
                                 "starting at byte %llu",
                                 r->src.name, (unsigned long long)off, (unsigned long long)start);
        if (got < (int64_t)sizeof head)
            return dlg_data_fail(err, DLG_ECORRUPT,
                                 "%s: truncated record header at byte %llu (%lld of 8 bytes)",
                                 r->src.name, (unsigned long long)off, (long long)got);
        if (head[0] != DLG_REC_MAGIC)
            return dlg_data_fail(err, DLG_ECORRUPT,
                                 "%s: bad magic 0x%08x at byte %llu (expected 0x%08x)",
                                 r->src.name, head[0], (unsigned long long)off, DLG_REC_MAGIC);
        uint32_t cflag = dlg_rec_cflag(head[1]), len = dlg_rec_len(head[1]);
        bool first = parts == 0;
        if (cflag > 3) /* here, not as the multi-part record it would start */
            return dlg_data_fail(err, DLG_ECORRUPT, "%s: bad cflag %u at byte %llu (RecordIO's are 0..3)",
                                 r->src.name, cflag, (unsigned long long)off);
        if (first && (cflag == 2 || cflag == 3))
            return dlg_data_fail(err, DLG_ECORRUPT,
                                 "%s: bad cflag sequence: part with cflag %u at byte %llu "
                                 "without a first part (cflag 1) before it",
                                 r->src.name, cflag, (unsigned long long)off);
        if (!first && (cflag == 0 || cflag == 1))
            return dlg_data_fail(err, DLG_ECORRUPT,
                                 "%s: bad cflag sequence: cflag %u at byte %llu inside the "
                                 "multi-part record starting at byte %llu",
                                 r->src.name, cflag, (unsigned long long)off,
                                 (unsigned long long)start);
        if ((uint64_t)size + len > DLG_REC_MAX_LEN)
            return dlg_data_fail(err, DLG_ECORRUPT,
                                 "%s: multi-part record starting at byte %llu exceeds 2^29 "
                                 "bytes at byte %llu",
                                 r->src.name, (unsigned long long)start,
                                 (unsigned long long)off);
        int rc = read_part(r, off, len, size, err);
        if (rc < 0)
            return rc;
        size += len;
        off += DLG_REC_HEADER_SIZE + (((uint64_t)len + 3) & ~(uint64_t)3);
        parts++;
        if (cflag == 0 || cflag == 3)
            break;
        /* The writer dropped a magic here: put it back. */
        rc = reserve(r, size + 4, err);
        if (rc < 0)
            return rc;
        const uint32_t magic = DLG_REC_MAGIC;
        memcpy(r->rec + size, &magic, 4);
        size += 4;
    }
    r->pos = off;
    rec->data = r->rec ? r->rec : (const uint8_t *)"";
    rec->len = size;
    rec->offset = start;
    rec->end = off;
    rec->parts = parts;
    return 1;
}

int dlg_rec_reader_sync(dlg_rec_reader *r, uint64_t off, uint64_t *found, dlg_data_err *err)
{
    for (uint64_t p = (off + 3) & ~(uint64_t)3;; p += 4) {
        uint32_t head[2];
        int64_t got = get(r, p, head, sizeof head, err);
        if (got < 0)
            return (int)got;
        if (got < (int64_t)sizeof head)
            return 0;
        uint32_t cflag = dlg_rec_cflag(head[1]);
        if (head[0] == DLG_REC_MAGIC && (cflag == 0 || cflag == 1)) {
            r->pos = p;
            *found = p;
            return 1;
        }
    }
}
