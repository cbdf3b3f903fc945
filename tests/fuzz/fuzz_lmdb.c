/* Fuzzes the LMDB dataset reader (input = a data.mdb file, written as a
 * single-file LMDB).  liblmdb trusts its pages: a corrupt one makes it
 * assert (abort) or fault, which no error path can turn into a line.  So
 * whatever dlg_lmdb_open's structural check (lmdb_check.c) lets through,
 * liblmdb must read without a fault: every record in key order, exactly
 * as many as the meta page counts (unless a value is refused with an
 * error), and seeks to positions the input picks. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_file.h"
#include "fuzz_target.h"
#include "lmdb_dataset.h"

/* An error is one line that names the database. */
static void check_error(const dlg_data_err *err, const char *path)
{
    FUZZ_CHECK(err->code > 0 && strstr(err->msg, path) != NULL && strchr(err->msg, '\n') == NULL);
}

/* Every record in order: 0 when they were count, or the first error's. */
static int read_all(dlg_lmdb_cursor *c, uint64_t count, const char *path)
{
    dlg_lmdb_record rec;
    dlg_data_err err;
    uint64_t i = 0;
    int rc;
    while ((rc = dlg_lmdb_next(c, &rec, &err)) == 1) {
        FUZZ_CHECK(rec.index == i && i < count && rec.datum != NULL);
        i++;
    }
    if (rc < 0)
        check_error(&err, path);
    else
        FUZZ_CHECK(i == count); /* the check counted the leaves' records */
    return rc;
}

static void seek_to(dlg_lmdb_cursor *c, uint64_t index, uint64_t count, const char *path)
{
    dlg_lmdb_record rec;
    dlg_data_err err;
    int rc = dlg_lmdb_seek(c, index, &rec, &err);
    if (rc == 0)
        FUZZ_CHECK(index < count && rec.index == index);
    else
        check_error(&err, path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128], lock[160];
    if (fuzz_write_file(path, sizeof path, "data.mdb", data, size) != 0)
        return 0;
    snprintf(lock, sizeof lock, "%s-lock", path); /* liblmdb's, beside a single-file LMDB */
    dlg_lmdb *db;
    dlg_data_err err;
    if (dlg_lmdb_open(&db, path, &err) == 0) {
        uint64_t count = dlg_lmdb_count(db);
        FUZZ_CHECK(count > 0);
        dlg_lmdb_cursor *c;
        if (dlg_lmdb_cursor_open(db, &c, &err) == 0) {
            if (read_all(c, count, path) == 0) {
                /* positions from the input's last bytes: forward, back, repeated */
                for (size_t k = 1; k <= 4 && k <= size; k++)
                    seek_to(c, data[size - k] * count / 200, count, path);
                seek_to(c, count - 1, count, path);
            }
            dlg_lmdb_cursor_close(c);
        } else {
            check_error(&err, path);
        }
        dlg_lmdb_close(db);
    } else {
        check_error(&err, path);
    }
    unlink(lock);
    fuzz_remove_file(path);
    return 0;
}
