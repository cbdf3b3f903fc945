/* Fuzzes the RecordIO reader (input = a .rec file) and the writer/reader
 * pair (input = a payload that must round-trip), plus im2rec unpacking. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "memout_fuzz.h"
#include "recordio.h"

static void read_file(const uint8_t *data, size_t size, bool size_known)
{
    dlg_source src;
    dlg_mem_file mf;
    dlg_source_mem(&src, &mf, data, size, "fuzz.rec");
    if (!size_known)
        src.size = DLG_SIZE_UNKNOWN;
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
