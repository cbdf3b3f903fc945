/* Number and time formatting shared by the sinks. */
#ifndef DLG_SINKFMT_H
#define DLG_SINKFMT_H

#include <stddef.h>
#include <stdint.h>

/* Shortest "%.Ng" text that reads back as exactly the same double (0.1, not
 * 0.10000000000000001).  Finite values only.  out needs 32 bytes. */
void sink_fmt_double(double v, char out[32]);

/* RFC 3339 UTC with nanoseconds: 2024-01-02T03:04:05.123456789Z.
 * out needs 40 bytes. */
void sink_fmt_rfc3339(int64_t time_ns, char out[40]);

/* Length of the well-formed UTF-8 sequence at s (Unicode 3-7: no overlong
 * forms, surrogates or code points past U+10FFFF), 0 when there is none:
 * the sinks write U+FFFD for such a byte (JSON and line protocol are
 * UTF-8; strict readers refuse, InfluxDB 1.x has failed on them). */
size_t sink_utf8_len(const unsigned char *s);

#endif
