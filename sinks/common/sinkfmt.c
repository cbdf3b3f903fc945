#include "sinkfmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void sink_fmt_double(double v, char out[32])
{
    /* 17 significant digits always round-trip; try fewer first so common
     * values stay readable. */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, 32, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

void sink_fmt_rfc3339(int64_t time_ns, char out[40])
{
    int64_t sec = time_ns / 1000000000;
    int64_t ns = time_ns % 1000000000;
    if (ns < 0) { /* floor division for times before 1970 */
        ns += 1000000000;
        sec -= 1;
    }
    time_t t = (time_t)sec;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(out, 40, "invalid-time");
        return;
    }
    char date[24];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 40, "%s.%09lldZ", date, (long long)ns);
}
