/* InfluxDB line protocol formatter (rules: shared/FORMATS.md).
 *
 * Kept apart from the sink so tests and benchmarks link it directly
 * (static library dlg_lineproto). */
#ifndef DLG_LINEPROTO_H
#define DLG_LINEPROTO_H

#include <stddef.h>

#include <dlgauge/plugin.h>

#include "sbuf.h"

enum lp_flags {
    /* Write DLG_FIELD_UINT as `123u` (InfluxDB 2.x).  Without it unsigned
     * values are written as integers (`123i`), or as floats above INT64_MAX,
     * which InfluxDB 1.x accepts. */
    LP_UNSIGNED = 1u << 0
};

/* What the formatter had to leave out or change, for the caller's log. */
typedef struct lp_stats {
    size_t dropped_fields; /* NaN/Inf floats and fields with invalid keys */
    size_t dropped_tags;   /* invalid keys, duplicate keys */
    size_t dropped_points; /* points left without any field */
    size_t truncated;      /* string values cut to LP_MAX_STRING bytes */
    size_t trimmed;        /* names and tag values that lost trailing backslashes */
} lp_stats;

/* InfluxDB refuses longer string field values. */
#define LP_MAX_STRING 65535

/* Appends one line, '\n' included, for point p to b.  Tags are written
 * sorted by key (a sorted copy is made if p's are not), empty tag values
 * are omitted, non-finite floats are dropped, keys that InfluxDB refuses
 * (empty, "time", or starting with '_') are dropped, trailing backslashes of
 * names and tag values (which would escape the next delimiter) are cut, a
 * point whose measurement is empty or starts with '#' (a comment) is
 * dropped, and CR/LF, which line protocol cannot escape, become spaces.  Returns 1 when a line was
 * appended, 0 when the point had no field left (nothing appended), or
 * -DLG_ENOMEM.  stats may be NULL; it is added to, not reset. */
int lp_format_point(dlg_sbuf *b, const dlg_point *p, unsigned flags, lp_stats *stats);

#endif
