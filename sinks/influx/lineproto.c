#include "lineproto.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sinkfmt.h"

/* Which characters get a backslash, per element (FORMATS.md). */
static const char ESC_MEASUREMENT[] = ", ";
static const char ESC_KEY[] = ",= "; /* tag keys, tag values, field keys */
static const char ESC_STRING[] = "\"\\";

/* Appends s[0..n) escaping the characters in `special`.  CR and LF cannot
 * be escaped in line protocol and would split the line: they become a
 * space (escaped too when a space is special). */
static int add_escaped(dlg_sbuf *b, const char *s, size_t n, const char *special)
{
    if (sbuf_reserve(b, 3 * n) != 0) /* a byte escaped: 2; one not UTF-8: U+FFFD, 3 */
        return -DLG_ENOMEM;
    char *o = b->p + b->len;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if ((unsigned char)c >= 0x80) { /* line protocol is UTF-8: a stray byte becomes U+FFFD */
            size_t k = sink_utf8_len((const unsigned char *)s + i);
            if (k == 0 || i + k > n) {
                memcpy(o, "\xef\xbf\xbd", 3);
                o += 3;
            } else {
                memcpy(o, s + i, k);
                o += k;
                i += k - 1;
            }
            continue;
        }
        if (c == '\n' || c == '\r')
            c = ' ';
        if (strchr(special, c) && c != '\0')
            *o++ = '\\';
        *o++ = c;
    }
    b->len = (size_t)(o - b->p);
    b->p[b->len] = '\0';
    return 0;
}

/* Length of name s without trailing backslashes: a backslash before the
 * delimiter that follows a name would escape that delimiter, so InfluxDB
 * cannot parse such a line at all (it cannot be escaped either). */
static size_t name_len(const char *s, lp_stats *st)
{
    size_t n = strlen(s), full = n;
    while (n > 0 && s[n - 1] == '\\')
        n--;
    if (st && n != full)
        st->trimmed++;
    return n;
}

static bool key_ok(const char *k)
{
    return k && name_len(k, NULL) > 0 && k[0] != '_' && strcmp(k, "time") != 0;
}

/* A line starting with '#' is a comment: InfluxDB would skip the point
 * silently. */
static bool measurement_ok(const char *m)
{
    return m && name_len(m, NULL) > 0 && m[0] != '#';
}

/* Keys compare as written, trailing backslashes cut: 'a' and 'a\' are
 * one key on the line. */
static int cmp_key(const char *x, const char *y)
{
    size_t nx = name_len(x, NULL), ny = name_len(y, NULL);
    int c = memcmp(x, y, nx < ny ? nx : ny);
    return c ? c : (nx > ny) - (nx < ny);
}

/* Tags sort as written, so that two of one key are side by side for the
 * second to be dropped (InfluxDB refuses a line with a key twice); of
 * those the one not cut comes first and is kept. */
static int cmp_tag_key(const char *x, const char *y)
{
    int c = cmp_key(x, y);
    return c ? c : strcmp(x, y);
}

static int cmp_tag(const void *a, const void *b)
{
    const dlg_tag *x = *(const dlg_tag *const *)a, *y = *(const dlg_tag *const *)b;
    return cmp_tag_key(x->key, y->key);
}

static bool tags_sorted(const dlg_point *p)
{
    for (size_t i = 1; i < p->ntags; i++)
        if (cmp_tag_key(p->tags[i - 1].key, p->tags[i].key) >= 0)
            return false;
    return true;
}

static int add_tags(dlg_sbuf *b, const dlg_point *p, lp_stats *st)
{
    const dlg_tag *stack[64];
    const dlg_tag **order = stack;
    if (p->ntags > 64 && !(order = malloc(p->ntags * sizeof *order)))
        return -DLG_ENOMEM;
    for (size_t i = 0; i < p->ntags; i++)
        order[i] = &p->tags[i];
    if (!tags_sorted(p))
        qsort(order, p->ntags, sizeof *order, cmp_tag);
    int rc = 0;
    const char *prev = NULL;
    for (size_t i = 0; i < p->ntags && rc == 0; i++) {
        const dlg_tag *t = order[i];
        if (!t->value || name_len(t->value, NULL) == 0)
            continue; /* empty tag values are not allowed: omit the tag */
        if (!key_ok(t->key) || (prev && cmp_key(prev, t->key) == 0)) {
            st->dropped_tags++;
            continue;
        }
        prev = t->key;
        rc = sbuf_addc(b, ',');
        if (rc == 0)
            rc = add_escaped(b, t->key, name_len(t->key, st), ESC_KEY);
        if (rc == 0)
            rc = sbuf_addc(b, '=');
        if (rc == 0)
            rc = add_escaped(b, t->value, name_len(t->value, st), ESC_KEY);
    }
    if (order != stack)
        free(order);
    return rc;
}

/* Longest prefix of s of at most LP_MAX_STRING bytes that does not cut a
 * UTF-8 sequence. */
static size_t string_len(const char *s, lp_stats *st)
{
    size_t n = strlen(s);
    if (n <= LP_MAX_STRING)
        return n;
    st->truncated++;
    n = LP_MAX_STRING;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

static int add_value(dlg_sbuf *b, const dlg_field *f, unsigned flags, lp_stats *st)
{
    char num[32];
    switch (f->type) {
    case DLG_FIELD_DOUBLE:
        sink_fmt_double(f->v.d, num);
        return sbuf_adds(b, num);
    case DLG_FIELD_INT:
        return sbuf_printf(b, "%" PRId64 "i", f->v.i);
    case DLG_FIELD_UINT:
        if (flags & LP_UNSIGNED)
            return sbuf_printf(b, "%" PRIu64 "u", f->v.u);
        if (f->v.u <= (uint64_t)INT64_MAX)
            return sbuf_printf(b, "%" PRIu64 "i", f->v.u);
        sink_fmt_double((double)f->v.u, num);
        return sbuf_adds(b, num);
    case DLG_FIELD_STRING: {
        const char *s = f->v.s ? f->v.s : "";
        int rc = sbuf_addc(b, '"');
        if (rc == 0)
            rc = add_escaped(b, s, string_len(s, st), ESC_STRING);
        return rc ? rc : sbuf_addc(b, '"');
    }
    case DLG_FIELD_BOOL:
        return sbuf_adds(b, f->v.b ? "true" : "false");
    }
    return 0;
}

static bool field_ok(const dlg_field *f)
{
    if (!key_ok(f->key))
        return false;
    if (f->type == DLG_FIELD_DOUBLE)
        return isfinite(f->v.d);
    return f->type >= DLG_FIELD_DOUBLE && f->type <= DLG_FIELD_BOOL;
}

/* Whether field i's key, its trailing backslashes cut, is another
 * written field's: InfluxDB would keep the last of the two values. */
static bool field_dup(const dlg_point *p, size_t i)
{
    const char *k = p->fields[i].key;
    if (name_len(k, NULL) == strlen(k))
        return false; /* nothing cut: keys differ as given, or the plugin repeats one */
    for (size_t j = 0; j < p->nfields; j++)
        if (j != i && field_ok(&p->fields[j]) && cmp_key(k, p->fields[j].key) == 0 &&
            (j < i || name_len(p->fields[j].key, NULL) == strlen(p->fields[j].key)))
            return true;
    return false;
}

int lp_format_point(dlg_sbuf *b, const dlg_point *p, unsigned flags, lp_stats *stats)
{
    lp_stats scratch = {0};
    lp_stats *st = stats ? stats : &scratch;
    size_t start = b->len;
    if (!measurement_ok(p->measurement)) {
        st->dropped_points++;
        return 0;
    }
    int rc = add_escaped(b, p->measurement, name_len(p->measurement, st), ESC_MEASUREMENT);
    if (rc == 0)
        rc = add_tags(b, p, st);
    size_t written = 0;
    for (size_t i = 0; i < p->nfields && rc == 0; i++) {
        const dlg_field *f = &p->fields[i];
        if (!field_ok(f) || field_dup(p, i)) {
            st->dropped_fields++;
            continue;
        }
        rc = sbuf_addc(b, written ? ',' : ' ');
        if (rc == 0)
            rc = add_escaped(b, f->key, name_len(f->key, st), ESC_KEY);
        if (rc == 0)
            rc = sbuf_addc(b, '=');
        if (rc == 0)
            rc = add_value(b, f, flags, st);
        written++;
    }
    if (rc == 0 && written > 0)
        rc = sbuf_printf(b, " %" PRId64 "\n", p->time_ns);
    if (rc != 0 || written == 0) {
        sbuf_truncate(b, start);
        if (rc == 0)
            st->dropped_points++;
        return rc;
    }
    return 1;
}
