/* Fuzzes the convert_imageset list and im2rec .lst parsers. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "listfile.h"
#include "recordio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dlg_filelist l;
    dlg_data_err err;
    if (dlg_filelist_parse(&l, (const char *)data, size, "fuzz.txt", &err) == 0) {
        for (size_t i = 0; i < l.n; i++)
            FUZZ_CHECK(l.entries[i].path[0] != '\0' && !strchr(l.entries[i].path, '\n'));
        dlg_filelist_free(&l);
    } else {
        FUZZ_CHECK(l.entries == NULL && strncmp(err.msg, "fuzz.txt", 8) == 0);
    }
    dlg_lst lst;
    if (dlg_lst_parse(&lst, (const char *)data, size, "fuzz.lst", &err) == 0) {
        for (size_t i = 0; i < lst.n; i++) {
            FUZZ_CHECK(lst.items[i].nlabels >= 1 && lst.items[i].path[0] != '\0');
            volatile float f = lst.items[i].labels[lst.items[i].nlabels - 1];
            (void)f;
        }
        dlg_lst_free(&lst);
    } else {
        FUZZ_CHECK(lst.items == NULL && strncmp(err.msg, "fuzz.lst", 8) == 0);
    }
    return 0;
}
