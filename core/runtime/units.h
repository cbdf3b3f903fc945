/* Parsing of the value syntaxes that INI files and option tables use. */
#ifndef DLG_UNITS_H
#define DLG_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Each returns 0, or -1 with a short reason in why[] (e.g. "unknown unit 'Q'"). */
int dlg_parse_int(const char *s, int64_t *out, char *why, size_t whylen);
int dlg_parse_double(const char *s, double *out, char *why, size_t whylen);
/* Bytes.  K/M/G/T/P (any case for k) and KiB/MiB/... are powers of 1024 (as fio
 * and memory limits use them); kB/KB/MB/GB/TB/PB are powers of 1000 (disk
 * vendors' figures).  B or no suffix: bytes.  Fractions allowed: 1.5G. */
int dlg_parse_size(const char *s, int64_t *out, char *why, size_t whylen);
/* Nanoseconds: ns us ms s m h d; a bare number is seconds. */
int dlg_parse_duration(const char *s, int64_t *out_ns, char *why, size_t whylen);
int dlg_parse_bool(const char *s, bool *out, char *why, size_t whylen);

/* Human-readable forms, for help text and logs. */
void dlg_format_size(int64_t bytes, char *buf, size_t len);
void dlg_format_duration(int64_t ns, char *buf, size_t len);
/* For people, not for parsing back: 4 significant digits in ns, us, ms or s
 * ("30 ns", "150.2 us", "18.02 ms", "1.215 s"); "-" for a negative or NaN value. */
void dlg_format_latency_us(double us, char *buf, size_t len);
/* A throughput for people, 4 significant digits: bytes as MB/s or GB/s
 * (10^6, 10^9), any other unit with k, M, G or T from 10^4 up
 * ("811.8 images/s", "12.81 k tokens/s", "166.7 G flops/s"); "-" for NaN. */
void dlg_format_rate(double v, const char *what, char *buf, size_t len);

#endif
