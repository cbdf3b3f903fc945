/* Option tables as data: validation of tables, parsing of values, and the
 * "did you mean" suggestion used by every unknown-name error. */
#ifndef DLG_OPTIONS_H
#define DLG_OPTIONS_H

#include <dlgauge/plugin.h>

size_t dlg_opt_count(const dlg_option *table);
const dlg_option *dlg_opt_find(const dlg_option *table, const char *name, size_t *index);
const char *dlg_opt_type_name(dlg_opt_type t);

/* Parses text as option o's type into v (v->text = text, not copied) and
 * checks bounds and choices.  Returns 0 or -1 with the reason in why[]. */
int dlg_opt_parse(const dlg_option *o, const char *text, dlg_value *v, char *why, size_t whylen);

/* A plugin's table must be well formed: unique non-empty names, known
 * types, enum choices present, defaults and bounds that parse and agree. */
int dlg_opt_table_check(const dlg_option *table, char *why, size_t whylen);

/* Fills vals[i] from each option's default (unset when it has none). */
int dlg_opt_defaults(const dlg_option *table, dlg_value *vals, char *why, size_t whylen);

/* The candidate closest to word by edit distance, if close enough; else NULL. */
const char *dlg_suggest(const char *word, const char *const *cands, size_t n);
/* Same over an option table's names. */
const char *dlg_opt_suggest(const dlg_option *table, const char *word);

/* Appends " (did you mean 'x'?)" to buf when there is a suggestion. */
void dlg_append_suggestion(char *buf, size_t len, const char *suggestion);

#endif
