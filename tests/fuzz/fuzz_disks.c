/* Fuzzes the report's disk profile reader (core/report/disks.c,
 * conf/disks/NAME.ini, `dlgauge report --disk`): a profile it accepts
 * gives limits that are finite numbers >= 0 (0: none); anything else is one
 * error naming the file (and a line of it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "fuzz_target.h"
#include "model.h"

static int limit(double v) { return v >= 0 && isfinite(v); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char path[512], err[1024] = "";
    if (fuzz_write_file(path, sizeof path, "disk.ini", data, size) != 0)
        return 0;
    rep_disks d = {0};
    if (rep_disks_load(&d, path, NULL, err, sizeof err) != 0) {
        long line = fuzz_err_line(err, path);
        FUZZ_CHECK(line == 0 || (line >= 1 && line <= fuzz_count_lines(data, size)));
        FUZZ_CHECK(!strchr(err, '\n') && d.n == 0);
    } else {
        FUZZ_CHECK(d.n == 1 && d.v[0].name[0]);
        const rep_disk *k = &d.v[0];
        FUZZ_CHECK(limit(k->bandwidth) && limit(k->iops) && limit(k->write_bandwidth) && limit(k->write_iops));
        FUZZ_CHECK(limit(k->iops_unit) && limit(k->iops_merge) && limit(k->latency));
        FUZZ_CHECK(rep_disks_find(&d, k->name) == k);
    }
    rep_disks_free(&d);
    fuzz_remove_file(path);
    return 0;
}
