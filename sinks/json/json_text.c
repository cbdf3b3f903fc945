#include "json_text.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "sinkfmt.h"

/* JSON text is UTF-8 (RFC 8259 8.1): strict readers (Python's json, jq,
 * pandas) refuse a line holding any other byte, so such a byte (a Latin-1
 * file name in an error message, say) becomes U+FFFD. */
static int add_utf8(dlg_sbuf *b, const char **s)
{
    size_t n = sink_utf8_len((const unsigned char *)*s);
    if (n == 0)
        return sbuf_adds(b, "\xef\xbf\xbd");
    int rc = sbuf_add(b, *s, n);
    *s += n - 1;
    return rc;
}

int json_add_string(dlg_sbuf *b, const char *s)
{
    int rc = sbuf_addc(b, '"');
    for (; rc == 0 && *s; s++) {
        unsigned char c = (unsigned char)*s;
        const char *esc = NULL;
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default: break;
        }
        if (esc)
            rc = sbuf_adds(b, esc);
        else if (c >= 0x80)
            rc = add_utf8(b, &s);
        else if (c < 0x20)
            rc = sbuf_printf(b, "\\u%04x", c);
        else
            rc = sbuf_addc(b, (char)c);
    }
    return rc ? rc : sbuf_addc(b, '"');
}

static int add_value(dlg_sbuf *b, const dlg_field *f)
{
    char num[40];
    switch (f->type) {
    case DLG_FIELD_DOUBLE:
        if (!isfinite(f->v.d))
            return sbuf_adds(b, "null"); /* JSON has no NaN or Infinity */
        sink_fmt_double(f->v.d, num);
        /* "2" would read back as an integer (and "-0" as 0): a float field
         * stays a float in every reader (pandas dtypes, schema inference) */
        if (!strpbrk(num, ".e"))
            strcat(num, ".0");
        return sbuf_adds(b, num);
    case DLG_FIELD_INT:
        return sbuf_printf(b, "%" PRId64, f->v.i);
    case DLG_FIELD_UINT:
        return sbuf_printf(b, "%" PRIu64, f->v.u);
    case DLG_FIELD_STRING:
        return json_add_string(b, f->v.s ? f->v.s : "");
    case DLG_FIELD_BOOL:
        return sbuf_adds(b, f->v.b ? "true" : "false");
    }
    return sbuf_adds(b, "null");
}

int json_add_point(dlg_sbuf *b, const dlg_point *p)
{
    char when[40];
    sink_fmt_rfc3339(p->time_ns, when);
    int rc = sbuf_adds(b, "{\"measurement\":");
    if (rc == 0)
        rc = json_add_string(b, p->measurement ? p->measurement : "");
    if (rc == 0)
        rc = sbuf_printf(b, ",\"time\":\"%s\",\"time_ns\":%" PRId64 ",\"tags\":{", when, p->time_ns);
    for (size_t i = 0; i < p->ntags && rc == 0; i++) {
        if (i > 0)
            rc = sbuf_addc(b, ',');
        if (rc == 0)
            rc = json_add_string(b, p->tags[i].key);
        if (rc == 0)
            rc = sbuf_addc(b, ':');
        if (rc == 0)
            rc = json_add_string(b, p->tags[i].value ? p->tags[i].value : "");
    }
    if (rc == 0)
        rc = sbuf_adds(b, "},\"fields\":{");
    for (size_t i = 0; i < p->nfields && rc == 0; i++) {
        if (i > 0)
            rc = sbuf_addc(b, ',');
        if (rc == 0)
            rc = json_add_string(b, p->fields[i].key);
        if (rc == 0)
            rc = sbuf_addc(b, ':');
        if (rc == 0)
            rc = add_value(b, &p->fields[i]);
    }
    return rc ? rc : sbuf_adds(b, "}}\n");
}
