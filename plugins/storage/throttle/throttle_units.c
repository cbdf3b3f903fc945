#define _GNU_SOURCE
#include "throttle_units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct unit {
    const char *suffix;
    double mul;
} unit;

/* plugin.h: K/M/G/T and KiB.. are binary, kB/MB.. are SI. */
static const unit size_units[] = {
    {"", 1},          {"B", 1},        {"K", 0x1p10},   {"k", 0x1p10},   {"M", 0x1p20},
    {"G", 0x1p30},    {"T", 0x1p40},   {"KiB", 0x1p10}, {"MiB", 0x1p20}, {"GiB", 0x1p30},
    {"TiB", 0x1p40},  {"kB", 1e3},     {"KB", 1e3},     {"MB", 1e6},     {"GB", 1e9},
    {"TB", 1e12},     {NULL, 0},
};

static const unit time_units[] = {
    {"", 1e9},  {"s", 1e9},  {"ns", 1},     {"us", 1e3},    {"ms", 1e6},
    {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}, {NULL, 0},
};

static int scaled(const char *text, const unit *units, double *out)
{
    char *end;
    double x = strtod(text, &end);
    if (end == text || !isfinite(x) || x < 0)
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    size_t len = strlen(end);
    while (len && isspace((unsigned char)end[len - 1]))
        len--;
    for (const unit *u = units; u->suffix; u++)
        if (strlen(u->suffix) == len && strncmp(u->suffix, end, len) == 0) {
            *out = x * u->mul;
            return 0;
        }
    return -1;
}

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

static int parse_raw(const dlg_option *o, const char *text, dlg_value *v)
{
    char *end;
    double x;
    switch (o->type) {
    case DLG_OPT_STRING:
        return 0;
    case DLG_OPT_INT:
        v->i = strtoll(text, &end, 0);
        v->d = (double)v->i;
        return end == text || *end ? -1 : 0;
    case DLG_OPT_DOUBLE:
        v->d = strtod(text, &end);
        return end == text || *end || !isfinite(v->d) ? -1 : 0;
    case DLG_OPT_SIZE:
        if (scaled(text, size_units, &x) != 0 || x > 9.2e18)
            return -1;
        v->i = (int64_t)llround(x);
        v->d = x;
        return 0;
    case DLG_OPT_DURATION:
        if (scaled(text, time_units, &x) != 0 || x > 9.2e18)
            return -1;
        v->i = (int64_t)llround(x);
        v->d = x / 1e9;
        return 0;
    case DLG_OPT_BOOL:
        if (!strcasecmp(text, "true") || !strcasecmp(text, "yes") || !strcasecmp(text, "on") ||
            !strcmp(text, "1"))
            v->i = 1;
        else if (!strcasecmp(text, "false") || !strcasecmp(text, "no") ||
                 !strcasecmp(text, "off") || !strcmp(text, "0"))
            v->i = 0;
        else
            return -1;
        return 0;
    case DLG_OPT_ENUM:
        return parse_enum(o->choices, text, &v->i);
    }
    return -1;
}

static const char *kind_hint(const dlg_option *o)
{
    switch (o->type) {
    case DLG_OPT_INT: return "an integer";
    case DLG_OPT_DOUBLE: return "a number";
    case DLG_OPT_SIZE: return "a size such as 4KiB, 150MB or 1.5G";
    case DLG_OPT_DURATION: return "a duration such as 500us, 2ms or 1s";
    case DLG_OPT_BOOL: return "true or false";
    case DLG_OPT_ENUM: return o->choices;
    default: return "text";
    }
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
        if (parse_raw(o, bound[k], &b) != 0)
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
    if (parse_raw(o, text, v) != 0) {
        snprintf(why, whylen, "%s = '%s' is not %s", o->name, text, kind_hint(o));
        return -1;
    }
    return thr_check_range(o, v, why, whylen);
}
