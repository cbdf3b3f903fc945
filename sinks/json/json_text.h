/* JSON Lines text of points.
 *
 * Hand-written rather than json-c: the sink only ever writes one fixed
 * object shape, and json-c would build a heap tree per point, write NaN as
 * the invalid token `NaN`, escape '/' and print doubles with its own
 * precision rules.  The escaper below is the whole of RFC 8259 section 7
 * that a writer needs; the tests parse the output back with json-c. */
#ifndef DLG_JSON_TEXT_H
#define DLG_JSON_TEXT_H

#include <dlgauge/plugin.h>

#include "sbuf.h"

/* Appends s as a JSON string: quotes, \" \\ \b \f \n \r \t, other control
 * characters as \u00XX; UTF-8 passes through, each byte that is not part
 * of well-formed UTF-8 becomes U+FFFD. */
int json_add_string(dlg_sbuf *b, const char *s);

/* Appends {"measurement":..,"time":"RFC 3339","time_ns":..,"tags":{..},
 * "fields":{..}} and '\n'.  NaN and +/-Inf fields are written as null. */
int json_add_point(dlg_sbuf *b, const dlg_point *p);

#endif
