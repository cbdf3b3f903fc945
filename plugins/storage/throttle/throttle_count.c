#include "throttle_count.h"

#include <math.h>

double thr_io_units(const thr_limits *lim, thr_run *run, uint64_t off, size_t n)
{
    double u = lim->iops_unit;
    if (!(u > 0))
        return 1;
    bool big = run && lim->iops_merge > 0 && (double)n >= lim->iops_merge;
    double fill = big && run->open && off == run->end ? run->fill : 0;
    double units = ceil((fill + (double)n) / u) - ceil(fill / u);
    if (run) {
        run->open = big;
        run->end = off + n;
        run->fill = fmod(fill + (double)n, u);
    }
    return fill > 0 ? units : fmax(1, units);
}

double thr_stream_units(const thr_limits *lim, double count, double n, bool contiguous)
{
    double u = lim->iops_unit;
    if (!(u > 0) || !(count > 0))
        return count > 0 ? count : 0;
    if (contiguous && lim->iops_merge > 0 && n >= lim->iops_merge)
        return ceil(count * n / u); /* the units of each I/O telescope */
    return count * fmax(1, ceil(n / u));
}
