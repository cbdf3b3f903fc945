#define _GNU_SOURCE
#include "throttle_units.h"

#include <stdio.h>
#include <string.h>

#include "units.h"

static int parse_enum(const char *choices, const char *text, int64_t *idx)
{
    size_t len = strlen(text);
    int64_t i = 0;
    for (const char *c = choices; c && *c; i++) {
        const char *bar = strchr(c, '|');
        size_t n = bar ? (size_t)(bar - c) : strlen(c);
        if (n == len && strncmp(c, text, n) == 0) {
            *idx = i;
            return 0;
        }
        c = bar ? bar + 1 : c + n;
    }
    return -1;
}

/* The core's parsers (core/runtime/units.c, compiled into the plugin), so
 * that a profile reads a value as a [storage] section does: decimal
 * integers only (iops = 010 is ten, not octal eight), no hex, compound
 * durations (1m30s), m = minutes.  why gets the parser's reason. */
static int parse_raw(const dlg_option *o, const char *text, dlg_value *v, char *why, size_t whylen)
{
    bool b;
    switch (o->type) {
    case DLG_OPT_STRING:
        return 0;
    case DLG_OPT_INT:
        if (dlg_parse_int(text, &v->i, why, whylen) != 0)
            return -1;
        v->d = (double)v->i;
        return 0;
    case DLG_OPT_DOUBLE:
        return dlg_parse_double(text, &v->d, why, whylen);
    case DLG_OPT_SIZE:
        if (dlg_parse_size(text, &v->i, why, whylen) != 0)
            return -1;
        v->d = (double)v->i;
        return 0;
    case DLG_OPT_DURATION:
        if (dlg_parse_duration(text, &v->i, why, whylen) != 0)
            return -1;
        v->d = (double)v->i / 1e9;
        return 0;
    case DLG_OPT_BOOL:
        if (dlg_parse_bool(text, &b, why, whylen) != 0)
            return -1;
        v->i = b;
        v->d = b;
        return 0;
    case DLG_OPT_ENUM:
        if (parse_enum(o->choices, text, &v->i) == 0) {
            v->d = (double)v->i;
            return 0;
        }
        snprintf(why, whylen, "'%s' is not one of %s", text, o->choices ? o->choices : "");
        return -1;
    }
    snprintf(why, whylen, "option has unknown type %d", (int)o->type);
    return -1;
}

int thr_check_range(const dlg_option *o, const dlg_value *v, char *why, size_t whylen)
{
    if (!v->set || o->type == DLG_OPT_STRING || o->type == DLG_OPT_ENUM || o->type == DLG_OPT_BOOL)
        return 0;
    const char *bound[2] = {o->min, o->max};
    for (int k = 0; k < 2; k++) {
        if (!bound[k])
            continue;
        dlg_value b = {0};
        char ignored[160];
        if (parse_raw(o, bound[k], &b, ignored, sizeof ignored) != 0)
            continue;
        bool is_d = o->type == DLG_OPT_DOUBLE;
        double x = is_d ? v->d : (double)v->i, lim = is_d ? b.d : (double)b.i;
        if (k == 0 ? x < lim : x > lim) {
            snprintf(why, whylen, "%s = %s is out of range [%s, %s]", o->name,
                     v->text ? v->text : "?", o->min ? o->min : "-inf", o->max ? o->max : "inf");
            return -1;
        }
    }
    return 0;
}

int thr_parse_value(const dlg_option *o, const char *text, dlg_value *v, char *why, size_t whylen)
{
    memset(v, 0, sizeof *v);
    v->text = text;
    v->set = true;
    char sub[240];
    if (parse_raw(o, text, v, sub, sizeof sub) != 0) {
        snprintf(why, whylen, "%s: %s", o->name, sub);
        return -1;
    }
    return thr_check_range(o, v, why, whylen);
}
