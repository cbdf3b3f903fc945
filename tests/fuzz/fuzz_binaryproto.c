/* Fuzzes the Caffe BlobProto reader (mean_file): what it accepts has as
 * many values as its shape says and, as a 1 x C x H x W mean image,
 * re-encodes to bytes that read back to the same values; the file reader
 * agrees with the decoder. */
#include <stdlib.h>
#include <string.h>

#include "binaryproto.h"
#include "fuzz_file.h"
#include "fuzz_target.h"

static void round_trip(const dlg_blobproto *a)
{
    if (a->num != 1 || a->channels > 1 << 20 || a->height > 1 << 20 || a->width > 1 << 20)
        return;
    int c = (int)a->channels, h = (int)a->height, w = (int)a->width;
    size_t n = dlg_blobproto_size(c, h, w);
    uint8_t *buf = malloc(n);
    FUZZ_CHECK(buf && dlg_blobproto_encode(c, h, w, a->data, buf, n) == n);
    dlg_blobproto b;
    dlg_data_err err;
    FUZZ_CHECK(dlg_blobproto_decode(&b, buf, n, "re", &err) == 0);
    FUZZ_CHECK(b.count == a->count && b.channels == c && b.height == h && b.width == w);
    FUZZ_CHECK(!b.count || memcmp(a->data, b.data, b.count * sizeof *b.data) == 0);
    dlg_blobproto_free(&b);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dlg_blobproto a;
    dlg_data_err err;
    int rc = dlg_blobproto_decode(&a, data, size, "fuzz", &err);
    if (rc < 0) {
        FUZZ_CHECK(strncmp(err.msg, "fuzz: ", 6) == 0 && !strchr(err.msg, '\n') && !a.data);
    } else {
        FUZZ_CHECK(a.num >= 0 && a.channels >= 0 && a.height >= 0 && a.width >= 0);
        FUZZ_CHECK((uint64_t)a.num * (uint64_t)a.channels * (uint64_t)a.height * (uint64_t)a.width ==
                   a.count);
        volatile float last = a.count ? a.data[a.count - 1] : 0;
        (void)last;
        round_trip(&a);
        dlg_blobproto_free(&a);
    }
    if (size > 65536)
        return 0;
    char path[512];
    if (fuzz_write_file(path, sizeof path, "mean.binaryproto", data, size) != 0)
        return 0;
    dlg_blobproto f;
    int frc = dlg_blobproto_read(&f, path, &err);
    FUZZ_CHECK(frc == rc || (size == 0 && frc < 0)); /* an empty file is refused by name */
    if (frc < 0)
        FUZZ_CHECK(strncmp(err.msg, path, strlen(path)) == 0 && !strchr(err.msg, '\n'));
    dlg_blobproto_free(&f);
    fuzz_remove_file(path);
    return 0;
}
