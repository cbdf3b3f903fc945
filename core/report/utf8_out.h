/* The outputs of report and compare as valid UTF-8 (utf8_out.c). */
#ifndef DLG_REPORT_UTF8_OUT_H
#define DLG_REPORT_UTF8_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes text[0..n) to f with each ill-formed UTF-8 sequence (a Latin-1
 * byte, a cut character, an overlong form, a surrogate) as U+FFFD. */
void rep_utf8_write(FILE *f, const char *text, size_t n);
/* The terminal columns s takes: its characters (bytes that start one),
 * not its bytes, so that "résumé" pads as 6.  Wide (CJK) characters
 * count as one: a terminal's widths need its locale. */
size_t rep_utf8_columns(const char *s);
/* Whether text[0..n) is well-formed UTF-8. */
bool rep_utf8_valid(const char *text, size_t n);

/* Renders ctx to f: 0, or ENOMEM when part of it was left out for want
 * of memory (a table, a chart): the caller fails rather than pass off
 * what was written as whole. */
typedef int (*rep_render_fn)(FILE *f, const void *ctx);
/* fn's output to f, made valid UTF-8 (rendered in memory first); fn's
 * result. */
int rep_utf8_render(FILE *f, rep_render_fn fn, const void *ctx);

#endif
