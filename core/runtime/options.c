#include "options.h"

#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t dlg_opt_count(const dlg_option *table)
{
    size_t n = 0;
    while (table && table[n].name)
        n++;
    return n;
}

const dlg_option *dlg_opt_find(const dlg_option *table, const char *name, size_t *index)
{
    for (size_t i = 0; table && table[i].name; i++) {
        if (strcmp(table[i].name, name) == 0) {
            if (index)
                *index = i;
            return &table[i];
        }
    }
    return NULL;
}

const char *dlg_opt_type_name(dlg_opt_type t)
{
    switch (t) {
    case DLG_OPT_STRING: return "string";
    case DLG_OPT_INT: return "int";
    case DLG_OPT_SIZE: return "size";
    case DLG_OPT_DURATION: return "duration";
    case DLG_OPT_DOUBLE: return "double";
    case DLG_OPT_BOOL: return "bool";
    case DLG_OPT_ENUM: return "enum";
    }
    return "?";
}

/* Index of s among "a|b|c", or -1. */
static int enum_index(const char *choices, const char *s)
{
    size_t len = strlen(s);
    int idx = 0;
    for (const char *c = choices; c && *c; idx++) {
        const char *bar = strchr(c, '|');
        size_t n = bar ? (size_t)(bar - c) : strlen(c);
        if (n == len && strncmp(c, s, n) == 0)
            return idx;
        if (!bar)
            break;
        c = bar + 1;
    }
    return -1;
}

/* Appends "did you mean" with the choice nearest to s. */
static void suggest_choice(const char *choices, const char *s, char *why, size_t whylen)
{
    char copy[512];
    const char *cands[64];
    size_t n = 0;
    snprintf(copy, sizeof copy, "%s", choices ? choices : "");
    char *save = NULL;
    for (char *tok = strtok_r(copy, "|", &save); tok && n < 64; tok = strtok_r(NULL, "|", &save))
        cands[n++] = tok;
    dlg_append_suggestion(why, whylen, dlg_suggest(s, cands, n));
}

/* Numeric value of an option for bound checks. */
static int numeric(const dlg_option *o, const char *text, double *out, char *why, size_t whylen)
{
    int64_t i;
    switch (o->type) {
    case DLG_OPT_INT:
        if (dlg_parse_int(text, &i, why, whylen) != 0)
            return -1;
        *out = (double)i;
        return 0;
    case DLG_OPT_SIZE:
        if (dlg_parse_size(text, &i, why, whylen) != 0)
            return -1;
        *out = (double)i;
        return 0;
    case DLG_OPT_DURATION:
        if (dlg_parse_duration(text, &i, why, whylen) != 0)
            return -1;
        *out = (double)i;
        return 0;
    case DLG_OPT_DOUBLE:
        return dlg_parse_double(text, out, why, whylen);
    default:
        *out = 0;
        return 0;
    }
}

static bool has_range(const dlg_option *o)
{
    return o->type == DLG_OPT_INT || o->type == DLG_OPT_SIZE || o->type == DLG_OPT_DURATION ||
           o->type == DLG_OPT_DOUBLE;
}

static int check_bounds(const dlg_option *o, double v, const char *text, char *why, size_t whylen)
{
    double b;
    char tmp[64];
    if (o->min && numeric(o, o->min, &b, tmp, sizeof tmp) == 0 && v < b) {
        snprintf(why, whylen, "%s is below the minimum %s", text, o->min);
        return -1;
    }
    if (o->max && numeric(o, o->max, &b, tmp, sizeof tmp) == 0 && v > b) {
        snprintf(why, whylen, "%s is above the maximum %s", text, o->max);
        return -1;
    }
    return 0;
}

/* d as an int64, clamped: converting a double outside int64's range
 * (an unbounded option set to 1e300) is undefined behaviour in C. */
static int64_t saturate_i64(double d)
{
    if (d >= 0x1p63)
        return INT64_MAX;
    if (d < -0x1p63)
        return INT64_MIN;
    return (int64_t)d;
}

int dlg_opt_parse(const dlg_option *o, const char *text, dlg_value *v, char *why, size_t whylen)
{
    memset(v, 0, sizeof *v);
    v->text = text;
    v->set = true;
    switch (o->type) {
    case DLG_OPT_STRING:
        return 0;
    case DLG_OPT_BOOL: {
        bool b;
        if (dlg_parse_bool(text, &b, why, whylen) != 0)
            return -1;
        v->i = b;
        v->d = b;
        return 0;
    }
    case DLG_OPT_ENUM: {
        int idx = enum_index(o->choices, text);
        if (idx < 0) {
            snprintf(why, whylen, "'%s' is not one of %s", text, o->choices ? o->choices : "");
            suggest_choice(o->choices, text, why, whylen);
            return -1;
        }
        v->i = idx;
        v->d = idx;
        return 0;
    }
    case DLG_OPT_INT:
    case DLG_OPT_SIZE:
    case DLG_OPT_DURATION:
    case DLG_OPT_DOUBLE: {
        double d;
        if (numeric(o, text, &d, why, whylen) != 0 || check_bounds(o, d, text, why, whylen) != 0)
            return -1;
        if (o->type == DLG_OPT_DOUBLE) {
            v->d = d;
            v->i = saturate_i64(d);
        } else {
            /* re-parse to keep full 64-bit integer precision */
            int64_t i = 0;
            if (o->type == DLG_OPT_INT)
                dlg_parse_int(text, &i, why, whylen);
            else if (o->type == DLG_OPT_SIZE)
                dlg_parse_size(text, &i, why, whylen);
            else
                dlg_parse_duration(text, &i, why, whylen);
            v->i = i;
            v->d = o->type == DLG_OPT_DURATION ? (double)i / 1e9 : (double)i;
        }
        return 0;
    }
    }
    snprintf(why, whylen, "option has unknown type %d", (int)o->type);
    return -1;
}

int dlg_opt_table_check(const dlg_option *table, char *why, size_t whylen)
{
    for (size_t i = 0; table && table[i].name; i++) {
        const dlg_option *o = &table[i];
        char sub[256];
        if (!o->name[0]) {
            snprintf(why, whylen, "option #%zu has an empty name", i);
            return -1;
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(table[j].name, o->name) == 0) {
                snprintf(why, whylen, "option '%s' is declared twice", o->name);
                return -1;
            }
        }
        if (o->type < DLG_OPT_STRING || o->type > DLG_OPT_ENUM) {
            snprintf(why, whylen, "option '%s' has unknown type %d", o->name, (int)o->type);
            return -1;
        }
        if (o->type == DLG_OPT_ENUM && (!o->choices || !o->choices[0])) {
            snprintf(why, whylen, "enum option '%s' has no choices", o->name);
            return -1;
        }
        if (!has_range(o) && (o->min || o->max)) {
            snprintf(why, whylen, "option '%s' of type %s cannot have bounds", o->name,
                     dlg_opt_type_name(o->type));
            return -1;
        }
        double lo = 0, hi = 0;
        if ((o->min && numeric(o, o->min, &lo, sub, sizeof sub) != 0) ||
            (o->max && numeric(o, o->max, &hi, sub, sizeof sub) != 0)) {
            snprintf(why, whylen, "option '%s' has a bad bound: %s", o->name, sub);
            return -1;
        }
        if (o->min && o->max && lo > hi) {
            snprintf(why, whylen, "option '%s' has min %s above max %s", o->name, o->min, o->max);
            return -1;
        }
        dlg_value v;
        if (o->def && dlg_opt_parse(o, o->def, &v, sub, sizeof sub) != 0) {
            snprintf(why, whylen, "option '%s' has a bad default: %s", o->name, sub);
            return -1;
        }
    }
    return 0;
}

int dlg_opt_defaults(const dlg_option *table, dlg_value *vals, char *why, size_t whylen)
{
    for (size_t i = 0; table && table[i].name; i++) {
        memset(&vals[i], 0, sizeof vals[i]);
        if (table[i].def && dlg_opt_parse(&table[i], table[i].def, &vals[i], why, whylen) != 0)
            return -1;
    }
    return 0;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t sub = prev + (a[i - 1] != b[j - 1]);
            size_t best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
            row[j] = sub < best ? sub : best;
            prev = cur;
        }
    }
    return row[lb];
}

const char *dlg_suggest(const char *word, const char *const *cands, size_t n)
{
    /* names are case-sensitive: "PROCESS" is far from "process" by edit
     * distance, yet it is the one meant */
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(word, cands[i]) == 0)
            return cands[i];
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, cands[i]);
        if (d < best_d) {
            best_d = d;
            best = cands[i];
        }
    }
    size_t limit = strlen(word) / 3 > 2 ? strlen(word) / 3 : 2;
    return best_d <= limit ? best : NULL;
}

const char *dlg_opt_suggest(const dlg_option *table, const char *word)
{
    const char *names[256];
    size_t n = 0;
    for (size_t i = 0; table && table[i].name && n < 256; i++)
        names[n++] = table[i].name;
    return dlg_suggest(word, names, n);
}

void dlg_append_suggestion(char *buf, size_t len, const char *suggestion)
{
    if (!suggestion)
        return;
    size_t used = strlen(buf);
    if (used < len)
        snprintf(buf + used, len - used, " (did you mean '%s'?)", suggestion);
}
