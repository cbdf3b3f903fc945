/* LD_PRELOAD for exhaust.sh: no memory for any result point (the point's
 * arena cannot be allocated), as under a tight ulimit -v; other points,
 * the host inventory's, are made as usual. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "metrics.h"
#include "point_wire.h"

typedef int (*init_fn)(dlg_wire_point *, const char *, int64_t);

int dlg_wire_point_init(dlg_wire_point *wp, const char *measurement, int64_t time_ns)
{
    if (strcmp(measurement, DLG_MEASUREMENT_RESULT) == 0) {
        memset(wp, 0, sizeof *wp); /* what the real one leaves when malloc fails */
        return -1;
    }
    init_fn real = (init_fn)dlsym(RTLD_NEXT, "dlg_wire_point_init");
    return real ? real(wp, measurement, time_ns) : -1;
}
