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

/* Length of the well-formed UTF-8 sequence at s (Unicode 3-7: no overlong
 * forms, surrogates or code points past U+10FFFF), 0 when there is none. */
size_t sink_utf8_len(const unsigned char *s)
{
    unsigned char lo = 0x80, hi = 0xbf;
    size_t n;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        n = 2;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        n = 3;
        lo = s[0] == 0xe0 ? 0xa0 : lo;
        hi = s[0] == 0xed ? 0x9f : hi;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        n = 4;
        lo = s[0] == 0xf0 ? 0x90 : lo;
        hi = s[0] == 0xf4 ? 0x8f : hi;
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}
