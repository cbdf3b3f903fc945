#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct unit {
    const char *suffix;
    double scale;
} unit;

/* Longest suffixes first so "MiB" is not read as "M" + junk. */
static const unit size_units[] = {
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0}, {"PiB", 1125899906842624.0},
    {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15},
    {"k", 1024.0}, {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0},
    {"T", 1099511627776.0}, {"P", 1125899906842624.0},
    {"B", 1.0}, {"", 1.0},
};

/* Biggest first: a compound duration ("1h30m") must name its units in this order.
 * Both micro signs (U+00B5, U+03BC) are accepted beside "us". */
static const unit duration_units[] = {
    {"d", 86400e9}, {"h", 3600e9}, {"m", 60e9}, {"s", 1e9}, {"ms", 1e6},
    {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"\xce\xbcs", 1e3}, {"ns", 1.0},
};

static const char *skip_space(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

static bool only_space(const char *s) { return *skip_space(s) == '\0'; }

int dlg_parse_int(const char *s, int64_t *out, char *why, size_t whylen)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || !only_space(end)) {
        snprintf(why, whylen, "'%s' is not an integer", s);
        return -1;
    }
    if (errno == ERANGE) {
        snprintf(why, whylen, "'%s' is out of the 64-bit range", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* strtod also reads hex ("0x10"), "inf" and "nan": a value in a config file
 * must be a plain decimal number, as dlg_parse_int already requires. */
static double decimal(const char *s, char **end)
{
    const char *p = skip_space(s);
    if (*p == '+' || *p == '-')
        p++;
    bool digits = isdigit((unsigned char)p[0]) || (p[0] == '.' && isdigit((unsigned char)p[1]));
    if (!digits || (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))) {
        *end = (char *)s;
        return 0;
    }
    errno = 0;
    return strtod(s, end);
}

int dlg_parse_double(const char *s, double *out, char *why, size_t whylen)
{
    char *end;
    double v = decimal(s, &end);
    if (end == s || !only_space(end) || !isfinite(v)) {
        snprintf(why, whylen, "'%s' is not a finite number", s);
        return -1;
    }
    if (errno == ERANGE) { /* 1e-400 would silently become 0 */
        snprintf(why, whylen, "'%s' is out of the range of a double", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* What a size or duration may look like, for messages. */
static const char size_hint[] = "a number with an optional unit K M G T P or KiB MiB GiB TiB PiB (binary), "
                                "kB MB GB TB PB (decimal), B (bare: bytes)";
static const char duration_hint[] = "a number with an optional unit ns us ms s m h d, or units "
                                    "combined like 1h30m (bare: seconds)";

static int parse_scaled(const char *s, const unit *units, size_t nunits, const char *what, const char *hint,
                        double *out, char *why, size_t whylen)
{
    s = skip_space(s);
    char *end;
    double v = decimal(s, &end);
    if (end == s || isnan(v) || isinf(v) || errno == ERANGE) {
        snprintf(why, whylen, "'%s' is not a %s (%s)", s, what, hint);
        return -1;
    }
    const char *suf = skip_space(end);
    size_t len = strlen(suf);
    while (len && isspace((unsigned char)suf[len - 1]))
        len--;
    for (size_t i = 0; i < nunits; i++) {
        if (strlen(units[i].suffix) == len && strncmp(units[i].suffix, suf, len) == 0) {
            *out = v * units[i].scale;
            return 0;
        }
    }
    snprintf(why, whylen, "unknown %s unit '%.*s' in '%s' (%s)", what, (int)len, suf, s, hint);
    return -1;
}

int dlg_parse_size(const char *s, int64_t *out, char *why, size_t whylen)
{
    double v;
    if (parse_scaled(s, size_units, sizeof size_units / sizeof *size_units, "size", size_hint, &v, why,
                     whylen) != 0)
        return -1;
    if (v < 0 || v >= 9.2e18) {
        snprintf(why, whylen, "size '%s' is out of range", s);
        return -1;
    }
    *out = (int64_t)llround(v);
    return 0;
}

/* The unit word at p: letters and the bytes of a micro sign, up to the next
 * number, space or end. */
static size_t unit_word(const char *p)
{
    size_t n = 0;
    while (p[n] && !isspace((unsigned char)p[n]) && !isdigit((unsigned char)p[n]) && p[n] != '.' &&
           p[n] != '+' && p[n] != '-')
        n++;
    return n;
}

static int duration_unit(const char *w, size_t n)
{
    for (size_t i = 0; i < sizeof duration_units / sizeof *duration_units; i++)
        if (strlen(duration_units[i].suffix) == n && strncmp(duration_units[i].suffix, w, n) == 0)
            return (int)i;
    return -1;
}

/* One number with an optional unit, or several with units from the biggest
 * down ("1h30m", "2m 30.5s"), as Go's time.ParseDuration and systemd read them. */
static int parse_duration_terms(const char *s, double *out, char *why, size_t whylen)
{
    const char *p = skip_space(s);
    double total = 0;
    int terms = 0, last = -1;
    while (*p) {
        char *end;
        double v = decimal(p, &end);
        if (end == p || !isfinite(v) || errno == ERANGE) {
            if (terms == 0)
                snprintf(why, whylen, "'%s' is not a duration (%s)", skip_space(s), duration_hint);
            else
                snprintf(why, whylen, "'%s' after '%.*s' in '%s' is not a number with a unit (%s)", p,
                         (int)(p - skip_space(s)), skip_space(s), skip_space(s), duration_hint);
            return -1;
        }
        const char *w = skip_space(end);
        size_t wl = unit_word(w);
        const char *next = skip_space(w + wl);
        if (wl == 0 && terms == 0 && !*next) {
            *out = v * 1e9; /* a bare number is seconds */
            return 0;
        }
        int u = wl ? duration_unit(w, wl) : -1;
        if (u < 0) {
            if (wl)
                snprintf(why, whylen, "unknown duration unit '%.*s' in '%s' (%s)", (int)wl, w, skip_space(s),
                         duration_hint);
            else
                snprintf(why, whylen, "'%.*s' in '%s' needs a unit: only a lone number means seconds (%s)",
                         (int)(w - p), p, skip_space(s), duration_hint);
            return -1;
        }
        if (u <= last) {
            snprintf(why, whylen, "'%s': combine duration units from the biggest down, each once (e.g. 1h30m)",
                     skip_space(s));
            return -1;
        }
        if (terms && v < 0) {
            snprintf(why, whylen, "'%s': only the whole duration may have a sign", skip_space(s));
            return -1;
        }
        total += v * duration_units[u].scale;
        last = u;
        terms++;
        p = next;
    }
    if (terms == 0) {
        snprintf(why, whylen, "'%s' is not a duration (%s)", skip_space(s), duration_hint);
        return -1;
    }
    *out = total;
    return 0;
}

int dlg_parse_duration(const char *s, int64_t *out_ns, char *why, size_t whylen)
{
    double v;
    if (parse_duration_terms(s, &v, why, whylen) != 0)
        return -1;
    if (v < 0 || v >= 9.2e18) {
        snprintf(why, whylen, "duration '%s' is out of range", s);
        return -1;
    }
    *out_ns = (int64_t)llround(v);
    return 0;
}

int dlg_parse_bool(const char *s, bool *out, char *why, size_t whylen)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    snprintf(why, whylen, "'%s' is not a boolean (true/false, yes/no, on/off, 1/0)", s);
    return -1;
}

void dlg_format_size(int64_t bytes, char *buf, size_t len)
{
    static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    size_t i = 0;
    while (v >= 1024.0 && i + 1 < sizeof names / sizeof *names && fmod(v, 1024.0) == 0) {
        v /= 1024.0;
        i++;
    }
    snprintf(buf, len, "%.0f%s", v, names[i]);
}

void dlg_format_latency_us(double us, char *buf, size_t len)
{
    if (!(us >= 0))
        snprintf(buf, len, "-");
    else if (us < 0.99995)
        snprintf(buf, len, "%.4g ns", us * 1e3);
    else if (us < 999.95)
        snprintf(buf, len, "%.4g us", us);
    else if (us < 999950)
        snprintf(buf, len, "%.4g ms", us / 1e3);
    else
        snprintf(buf, len, "%.4g s", us / 1e6);
}

void dlg_format_rate(double v, const char *what, char *buf, size_t len)
{
    if (isnan(v)) {
        snprintf(buf, len, "-");
        return;
    }
    if (what && strcmp(what, "bytes") == 0) {
        bool giga = fabs(v) >= 999.95e6;
        snprintf(buf, len, "%.4g %s", v / (giga ? 1e9 : 1e6), giga ? "GB/s" : "MB/s");
        return;
    }
    /* from: where rounding to 4 digits would reach the next prefix */
    static const struct {
        double from, scale;
        const char *prefix;
    } si[] = {{999.95e9, 1e12, "T "}, {999.95e6, 1e9, "G "}, {999.95e3, 1e6, "M "}, {1e4, 1e3, "k "}, {0, 1, ""}};
    size_t i = 0;
    while (si[i].from > 0 && fabs(v) < si[i].from)
        i++;
    snprintf(buf, len, "%.4g %s%s/s", v / si[i].scale, si[i].prefix, what && *what ? what : "items");
}

void dlg_format_duration(int64_t ns, char *buf, size_t len)
{
    if (ns % 1000000000 == 0)
        snprintf(buf, len, "%llds", (long long)(ns / 1000000000));
    else if (ns % 1000000 == 0)
        snprintf(buf, len, "%lldms", (long long)(ns / 1000000));
    else if (ns % 1000 == 0)
        snprintf(buf, len, "%lldus", (long long)(ns / 1000));
    else
        snprintf(buf, len, "%lldns", (long long)ns);
}
