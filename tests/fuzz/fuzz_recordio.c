/* Fuzzes the RecordIO reader (input = a .rec file) and the writer/reader
 * pair (input = a payload that must round-trip), plus im2rec unpacking. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "memout_fuzz.h"
#include "recordio.h"

/* A source that hands out at most 3 bytes per call (readers must loop). */
static int64_t dribble(void *ctx, void *buf, size_t n, uint64_t off)
{
    const dlg_mem_file *m = ctx;
    if (off >= m->len)
        return 0;
    size_t k = m->len - (size_t)off;
    k = k < n ? k : n;
    k = k < 3 ? k : 3;
    memcpy(buf, (const uint8_t *)m->data + off, k);
    return (int64_t)k;
}

static void read_file(const uint8_t *data, size_t size, bool size_known)
{
    dlg_source src;
    dlg_mem_file mf;
    dlg_source_mem(&src, &mf, data, size, "fuzz.rec");
    if (!size_known) {
        src.size = DLG_SIZE_UNKNOWN;
        src.pread = dribble;
    }
    dlg_rec_reader *r;
    dlg_data_err err;
    size_t window = size ? 8 + data[0] % 64 : 0;
    if (dlg_rec_reader_open(&r, &src, window, &err) < 0)
        return;
    dlg_rec rec;
    int rc, n = 0;
    uint64_t last = 0;
    while ((rc = dlg_rec_next(r, &rec, &err)) == 1 && n++ < 10000) {
        FUZZ_CHECK(rec.offset == last && rec.end > rec.offset && rec.end <= size);
        FUZZ_CHECK(rec.len <= rec.end - rec.offset);
        last = rec.end;
        dlg_im2rec_view v;
        if (dlg_im2rec_unpack(rec.data, rec.len, "fuzz.rec", rec.offset, &v, &err) == 0) {
            FUZZ_CHECK(v.image + v.image_len == rec.data + rec.len);
            for (size_t i = 0; i < dlg_im2rec_nlabels(&v) && i < 8; i++)
                (void)dlg_im2rec_label(&v, i);
        }
    }
    FUZZ_CHECK(rc <= 1);
    if (rc < 0)
        FUZZ_CHECK(err.msg[0] != '\0' && err.code > 0);
    /* Random access at an arbitrary aligned offset (as a bad .idx would give). */
    if (size > 1 && dlg_rec_reader_seek(r, (uint64_t)data[1] * 4 % size, &err) == 0 &&
        dlg_rec_next(r, &rec, &err) == 1)
        FUZZ_CHECK(rec.end <= size && rec.offset == (uint64_t)data[1] * 4 % size);
    uint64_t found;
    if (size && dlg_rec_reader_sync(r, data[size - 1] * (uint64_t)size / 256, &found, &err) == 1) {
        FUZZ_CHECK(found % 4 == 0 && found + 8 <= size);
        (void)dlg_rec_next(r, &rec, &err);
    }
    dlg_rec_reader_close(r);
}

static void round_trip(const uint8_t *data, size_t size)
{
    memout m;
    dlg_output o;
    memout_init(&m, &o, "rt.rec");
    dlg_rec_writer *w;
    dlg_data_err err;
    FUZZ_CHECK(dlg_rec_writer_open(&w, &o, 0, &err) == 0);
    FUZZ_CHECK(dlg_rec_write(w, data, size, NULL, &err) == 0);
    FUZZ_CHECK(dlg_rec_write(w, "tail", 4, NULL, &err) == 0);
    FUZZ_CHECK(dlg_rec_writer_close(w, &err) == 0);
    FUZZ_CHECK(m.len % 4 == 0);
    dlg_source src;
    dlg_mem_file mf;
    dlg_source_mem(&src, &mf, m.buf, m.len, "rt.rec");
    dlg_rec_reader *r;
    FUZZ_CHECK(dlg_rec_reader_open(&r, &src, 16, &err) == 0);
    dlg_rec rec;
    FUZZ_CHECK(dlg_rec_next(r, &rec, &err) == 1);
    FUZZ_CHECK(rec.len == size && (size == 0 || memcmp(rec.data, data, size) == 0));
    FUZZ_CHECK(dlg_rec_next(r, &rec, &err) == 1 && rec.len == 4);
    FUZZ_CHECK(dlg_rec_next(r, &rec, &err) == 0);
    /* Resync from just inside the first record must skip to "tail". */
    uint64_t found;
    FUZZ_CHECK(dlg_rec_reader_sync(r, 1, &found, &err) == 1 && found == rec.offset);
    dlg_rec_reader_close(r);
    free(m.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_file(data, size, true);
    read_file(data, size, false);
    round_trip(data, size);
    return 0;
}
