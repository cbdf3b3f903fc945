/* Parses one option value of a disk profile with the core's parsers
 * (core/runtime/units.c, compiled in), so that a profile and a [storage]
 * section read the same text as the same value. */
#ifndef DLG_THROTTLE_UNITS_H
#define DLG_THROTTLE_UNITS_H

#include <dlgauge/plugin.h>

/* Fills v from text for option o and checks o's min/max.  On failure returns
 * -1 with a one-line reason in why. */
int thr_parse_value(const dlg_option *o, const char *text, dlg_value *v, char *why, size_t whylen);

/* Checks a value parsed elsewhere (the core, the mock host) against o's
 * bounds; same contract. */
int thr_check_range(const dlg_option *o, const dlg_value *v, char *why, size_t whylen);

#endif
