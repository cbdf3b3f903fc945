/* RecordIO writer: splits payloads at aligned magic occurrences exactly as
 * dmlc-core's RecordIOWriter::WriteRecord does (cflag 1, 2..., 3; the magic
 * bytes themselves are dropped; padding only after the last part). */
#include "recordio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WBUF_SIZE (64 * 1024)

struct dlg_rec_writer {
    dlg_output out;
    uint64_t off;    /* logical position after buffered bytes */
    uint64_t splits;
    size_t used;
    uint8_t buf[WBUF_SIZE];
};

int dlg_rec_writer_open(dlg_rec_writer **out, const dlg_output *o, uint64_t start_off,
                        dlg_data_err *err)
{
    if (start_off % 4 != 0)
        return dlg_data_fail(err, DLG_EINVAL,
                             "%s: cannot append RecordIO at byte %llu: not a multiple of 4 "
                             "(the file is not a .rec)",
                             o->name, (unsigned long long)start_off);
    dlg_rec_writer *w = malloc(sizeof *w);
    if (!w)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", o->name);
    w->out = *o;
    w->off = start_off;
    w->splits = 0;
    w->used = 0;
    *out = w;
    return 0;
}

int dlg_rec_writer_open_fd(dlg_rec_writer **out, int fd, const char *name, dlg_data_err *err)
{
    off_t end = lseek(fd, 0, SEEK_END);
    if (end < 0)
        return dlg_data_fail(err, DLG_EIO, "%s: seek to end: %s", name, strerror(errno));
    dlg_output o;
    dlg_output_fd(&o, fd, name);
    return dlg_rec_writer_open(out, &o, (uint64_t)end, err);
}

/* Writes n bytes that start at byte `at` of the file; a failure names the
 * file, the byte and, when the output set errno (a full disk), why. */
static int write_out(dlg_rec_writer *w, const void *p, size_t n, uint64_t at, dlg_data_err *err)
{
    errno = 0;
    int64_t r = w->out.write(w->out.ctx, p, n);
    if (r >= 0)
        return 0;
    int e = errno;
    return dlg_data_fail(err, (int)-r, "%s: write at byte %llu failed%s%s", w->out.name,
                         (unsigned long long)at, e ? ": " : "", e ? strerror(e) : "");
}

int dlg_rec_writer_flush(dlg_rec_writer *w, dlg_data_err *err)
{
    if (w->used == 0)
        return 0;
    size_t n = w->used;
    w->used = 0;
    return write_out(w, w->buf, n, w->off - n, err);
}

static int emit(dlg_rec_writer *w, const void *p, size_t n, dlg_data_err *err)
{
    if (w->used + n > WBUF_SIZE) {
        int rc = dlg_rec_writer_flush(w, err);
        if (rc < 0)
            return rc;
    }
    if (n >= WBUF_SIZE) { /* large payload: skip the copy */
        int rc = write_out(w, p, n, w->off, err);
        if (rc < 0)
            return rc;
    } else {
        memcpy(w->buf + w->used, p, n);
        w->used += n;
    }
    w->off += n;
    return 0;
}

static int emit_part(dlg_rec_writer *w, uint32_t cflag, const uint8_t *p, size_t n,
                     dlg_data_err *err)
{
    uint32_t head[2] = {DLG_REC_MAGIC, dlg_rec_lrec(cflag, (uint32_t)n)};
    int rc = emit(w, head, sizeof head, err);
    if (rc == 0 && n > 0)
        rc = emit(w, p, n, err);
    return rc;
}

int dlg_rec_write(dlg_rec_writer *w, const void *payload, size_t len, uint64_t *rec_off,
                  dlg_data_err *err)
{
    if (len > DLG_REC_MAX_LEN)
        return dlg_data_fail(err, DLG_EINVAL,
                             "%s: record of %zu bytes is too large for RecordIO (limit 2^29-1)",
                             w->out.name, len);
    static const uint32_t magic = DLG_REC_MAGIC;
    const uint8_t *p = payload;
    size_t lower = len & ~(size_t)3, start = 0;
    if (rec_off)
        *rec_off = w->off;
    for (size_t i = 0; i < lower; i += 4) {
        if (memcmp(p + i, &magic, 4) != 0)
            continue;
        int rc = emit_part(w, start == 0 ? 1 : 2, p + start, i - start, err);
        if (rc < 0)
            return rc;
        start = i + 4;
        w->splits++;
    }
    int rc = emit_part(w, start != 0 ? 3 : 0, p + start, len - start, err);
    if (rc < 0)
        return rc;
    static const uint8_t zero[4];
    size_t pad = (4 - len % 4) % 4;
    return pad ? emit(w, zero, pad, err) : 0;
}

uint64_t dlg_rec_writer_offset(const dlg_rec_writer *w) { return w->off; }

uint64_t dlg_rec_writer_splits(const dlg_rec_writer *w) { return w->splits; }

int dlg_rec_writer_close(dlg_rec_writer *w, dlg_data_err *err)
{
    if (!w)
        return 0;
    int rc = dlg_rec_writer_flush(w, err);
    free(w);
    return rc;
}
