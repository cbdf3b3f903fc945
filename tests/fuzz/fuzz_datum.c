/* Fuzzes the Datum decoder: whatever it accepts must re-encode to bytes
 * that decode to the same values. */
#include <stdlib.h>
#include <string.h>

#include "datum.h"
#include "fuzz_target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dlg_datum a, b;
    dlg_data_err err;
    dlg_datum_init(&a);
    dlg_datum_init(&b);
    int rc = dlg_datum_decode(&a, data, size, "fuzz", &err);
    if (rc < 0) {
        FUZZ_CHECK(rc == -DLG_ECORRUPT && strncmp(err.msg, "fuzz: ", 6) == 0);
        dlg_datum_free(&a);
        return 0;
    }
    FUZZ_CHECK(!a.data_len || (a.data >= data && a.data + a.data_len <= data + size));
    size_t n = dlg_datum_encoded_size(&a);
    uint8_t *buf = malloc(n ? n : 1);
    FUZZ_CHECK(buf && dlg_datum_encode(&a, buf, n, &err) == (int64_t)n);
    FUZZ_CHECK(dlg_datum_decode(&b, buf, n, "re", &err) == 0);
    FUZZ_CHECK(a.has == b.has && a.channels == b.channels && a.height == b.height &&
               a.width == b.width && a.label == b.label && a.encoded == b.encoded);
    FUZZ_CHECK(a.data_len == b.data_len && (!a.data_len || !memcmp(a.data, b.data, a.data_len)));
    FUZZ_CHECK(a.n_float == b.n_float &&
               (!a.n_float || !memcmp(a.float_data, b.float_data, 4 * a.n_float)));
    free(buf);
    dlg_datum_free(&a);
    dlg_datum_free(&b);
    return 0;
}
