/* Fuzzes the report's instance catalog reader (core/report/catalog.c,
 * conf/instances/NAME.ini, `dlgauge report --catalog`): an instance it
 * accepts has the keys a recommendation needs and names its header's line;
 * anything else is one error naming the file (and a line of it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "fuzz_target.h"
#include "recommend.h"

/* Line (1-based) of data, after its leading blanks; NULL past the end. */
static const uint8_t *line_text(const uint8_t *data, size_t size, long line)
{
    const uint8_t *p = data, *end = data + size;
    for (long i = 1; i < line && p < end; i++) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    return p < end ? p : NULL;
}

static void check_instance(const rep_instance *in, const uint8_t *data, size_t size)
{
    FUZZ_CHECK(in->name && in->name[0] && in->gpu && in->provider && in->currency && in->catalog);
    FUZZ_CHECK(in->vcpus > 0 && isfinite(in->vcpus) && in->memory > 0 && in->price > 0 && isfinite(in->price));
    FUZZ_CHECK(in->gpus >= 0 && in->gpus <= 1024 && in->disk_bw_max >= 0 && in->disk_iops_max >= 0);
    const uint8_t *t = line_text(data, size, in->line);
    FUZZ_CHECK(in->line >= 1 && t && *t == '[');
    for (size_t d = 0; d < in->ndisks; d++)
        FUZZ_CHECK(in->disks[d][0] && !strpbrk(in->disks[d], ", "));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char path[512], err[1024] = "";
    if (fuzz_write_file(path, sizeof path, "catalog.ini", data, size) != 0)
        return 0;
    rep_catalog c = {0};
    if (rep_catalog_load(&c, path, err, sizeof err) != 0) {
        long line = fuzz_err_line(err, path);
        FUZZ_CHECK(line == 0 || (line >= 1 && line <= fuzz_count_lines(data, size)));
        FUZZ_CHECK(!strchr(err, '\n'));
    } else {
        for (size_t i = 0; i < c.n; i++)
            check_instance(&c.v[i], data, size);
    }
    rep_catalog_free(&c);
    fuzz_remove_file(path);
    return 0;
}
