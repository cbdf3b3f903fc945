/* Fuzzes the .idx parser; accepted entries must satisfy its promises. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "recordio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint64_t sizes[] = {DLG_SIZE_UNKNOWN, 0, 64, 1u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        dlg_rec_idx idx;
        dlg_data_err err;
        int rc = dlg_rec_idx_parse(&idx, (const char *)data, size, "fuzz.idx", sizes[k],
                                   "fuzz.rec", &err);
        if (rc < 0) {
            FUZZ_CHECK(err.code > 0 && strncmp(err.msg, "fuzz.idx", 8) == 0);
            FUZZ_CHECK(idx.entries == NULL && idx.n == 0);
            continue;
        }
        for (size_t i = 0; i < idx.n; i++) {
            FUZZ_CHECK(idx.entries[i].offset % 4 == 0);
            FUZZ_CHECK(sizes[k] == DLG_SIZE_UNKNOWN || idx.entries[i].offset + 8 <= sizes[k]);
            FUZZ_CHECK(idx.entries[i].key[0] != '\0' && !strchr(idx.entries[i].key, '\t'));
        }
        dlg_rec_idx_free(&idx);
    }
    return 0;
}
