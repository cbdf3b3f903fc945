/* The lexical rules dlgauge adds to inih: comments after a value, quoted
 * values, and a UTF-8 byte order mark. */
#ifndef DLG_CONFIG_LINE_H
#define DLG_CONFIG_LINE_H

#include <stddef.h>

/* Removes a UTF-8 byte order mark from the start of line (editors on
 * Windows write one). */
void dlg_ini_strip_bom(char *line);

/* Cuts line at a ';' or '#' that starts it or follows a blank, outside
 * double quotes: "a = 1 # x" and "a = 1 ; x" are both "a = 1 ". */
void dlg_ini_strip_comment(char *line);

/* A value written in double quotes as a whole ("a ; b") loses them; one
 * that opens a quote it does not close there is an error (-1, why[]).
 * Quotes inside an unquoted value are kept. */
int dlg_ini_unquote(char *value, char *why, size_t whylen);

#endif
