/* JSONL results (json-c): one point per line as the json sink writes it:
 * {"measurement":..., "tags":{...}, "fields":{...}}.  dlgauge_result points
 * become rows, dlgauge_host points the run inventory; others are skipped. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlgauge/plugin.h>
#include <json-c/json.h>

#include "rows.h"

static int put_field(rep_row *r, const char *key, json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_int:
    case json_type_double:
        /* json-c takes NaN, Infinity and 1e999, which are no JSON (the sink
         * writes null): text, as a CSV cell "nan" is, never a measurement */
        if (!isfinite(json_object_get_double(v)))
            return rep_row_put(r, false, key, json_object_to_json_string(v));
        return rep_row_put_num(r, key, json_object_get_double(v), json_object_to_json_string(v));
    case json_type_boolean:
        return rep_row_put_num(r, key, json_object_get_boolean(v) ? 1 : 0,
                               json_object_get_boolean(v) ? "true" : "false");
    case json_type_string:
        return rep_row_put(r, false, key, json_object_get_string(v));
    default:
        return 0; /* null, arrays, objects: not a dlgauge field */
    }
}

static const char *get_str(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

static double get_num(json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v))
        return 0;
    return json_object_get_double(v);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int add_host(rep_rows *rs, json_object *tags, json_object *fields)
{
    rep_host *nh = realloc(rs->hosts, (rs->nhosts + 1) * sizeof *nh);
    if (!nh)
        return -DLG_ENOMEM;
    rs->hosts = nh;
    rep_host *h = &nh[rs->nhosts++];
    memset(h, 0, sizeof *h);
    h->run_id = dup_or_null(get_str(tags, "run_id"));
    h->host = dup_or_null(get_str(tags, "host"));
    h->cpu_model = dup_or_null(fields ? get_str(fields, "cpu_model") : NULL);
    h->version = dup_or_null(fields ? get_str(fields, "version") : NULL);
    if (fields) {
        h->cpus_online = get_num(fields, "cpus_online");
        h->mem_total_bytes = get_num(fields, "mem_total_bytes");
    }
    return 0;
}

static int take_point(rep_rows *rs, const char *src, long line, json_object *o, char *err, size_t errlen)
{
    const char *m = get_str(o, "measurement");
    json_object *tags = NULL, *fields = NULL;
    json_object_object_get_ex(o, "tags", &tags);
    json_object_object_get_ex(o, "fields", &fields);
    if (!m || !tags || !json_object_is_type(tags, json_type_object)) {
        snprintf(err, errlen, "%s:%ld: not a dlgauge point: needs \"measurement\" and a \"tags\" object", src, line);
        return -DLG_EINVAL;
    }
    if (fields && !json_object_is_type(fields, json_type_object))
        fields = NULL;
    if (strcmp(m, "dlgauge_host") == 0)
        return add_host(rs, tags, fields);
    if (strcmp(m, "dlgauge_result") != 0)
        return 0;
    rep_row *r = rep_rows_add(rs, src, line);
    if (!r)
        return -DLG_ENOMEM;
    json_object_object_foreach(tags, tk, tv)
    {
        if (json_object_is_type(tv, json_type_string) && rep_row_put(r, true, tk, json_object_get_string(tv)) != 0)
            return -DLG_ENOMEM;
    }
    if (fields) {
        json_object_object_foreach(fields, fk, fv)
        {
            if (put_field(r, fk, fv) != 0)
                return -DLG_ENOMEM;
        }
    }
    return 0;
}

/* What the tokener wanted at the byte it stopped on, in plain words. */
static const char *expected(enum json_tokener_error je)
{
    switch (je) {
    case json_tokener_error_depth:
        return "objects nested too deep";
    case json_tokener_error_parse_eof:
        return "expected more JSON, not a NUL byte";
    case json_tokener_error_parse_unexpected:
        return "expected a value (a string, number, object, array, true, false or null)";
    case json_tokener_error_parse_null:
        return "expected 'null'";
    case json_tokener_error_parse_boolean:
        return "expected 'true' or 'false'";
    case json_tokener_error_parse_number:
        return "expected a number";
    case json_tokener_error_parse_array:
        return "expected ',' or ']' after a value in an array";
    case json_tokener_error_parse_object_key_name:
        return "expected a key in double quotes";
    case json_tokener_error_parse_object_key_sep:
        return "expected ':' after a key";
    case json_tokener_error_parse_object_value_sep:
        return "expected ',' or '}' after a value";
    case json_tokener_error_parse_string:
        return "expected a valid escape in a string (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)";
    case json_tokener_error_parse_comment:
        return "expected a comment after '/'";
    case json_tokener_error_parse_utf8_string:
        return "expected UTF-8 text in a string";
    case json_tokener_error_size:
        return "the line is too long";
    default:
        return "not valid JSON";
    }
}

/* ", found 'x'" for the byte at off of the line, or "" past its end. */
static void found(const char *line, size_t len, size_t off, char *buf, size_t blen)
{
    unsigned char c = off < len ? (unsigned char)line[off] : 0;
    if (off >= len)
        buf[0] = '\0';
    else if (c > ' ' && c < 0x7f)
        snprintf(buf, blen, ", found '%c'", c);
    else
        snprintf(buf, blen, ", found byte 0x%02x", c);
}

/* Only whitespace left in f (reads it). */
static bool at_end(FILE *f)
{
    int c;
    while ((c = fgetc(f)) != EOF && isspace(c))
        ;
    return c == EOF;
}

typedef struct jsonl_state {
    rep_rows *rs;
    const char *path, *src;
    FILE *f;
    json_tokener *tok;
    long line;   /* 1-based */
    long points; /* complete lines */
    char *err;
    size_t errlen;
} jsonl_state;

/* A line the tokener wants more of: cut short by a crash when it is the
 * last, so skipped with a warning (if anything came before it). */
static int take_incomplete(jsonl_state *s, size_t len)
{
    if (!at_end(s->f)) {
        snprintf(s->err, s->errlen, "%s: line %ld, byte %zu: the line ends before its object does", s->path,
                 s->line, len + 1);
        return -DLG_ECORRUPT;
    }
    if (s->points == 0) {
        snprintf(s->err, s->errlen, "%s: line %ld: cut short (an interrupted write?), and no line before it is "
                 "complete", s->path, s->line);
        return -DLG_ECORRUPT;
    }
    if (rep_rows_warn(s->rs, "%s: line %ld: cut short (an interrupted write?), skipped", s->path, s->line) != 0)
        return -DLG_ENOMEM;
    return 0;
}

/* One line without its end: a point, or an error saying where and why. */
static int take_line(jsonl_state *s, const char *buf, size_t len)
{
    json_tokener_reset(s->tok);
    json_object *o = json_tokener_parse_ex(s->tok, buf, (int)len);
    enum json_tokener_error je = json_tokener_get_error(s->tok);
    size_t end = json_tokener_get_parse_end(s->tok);
    char what[32];
    int rc;
    if (je == json_tokener_continue) {
        rc = take_incomplete(s, len);
    } else if (!o || je != json_tokener_success || end != len) {
        found(buf, len, end, what, sizeof what);
        snprintf(s->err, s->errlen, "%s: line %ld, byte %zu: %s%s", s->path, s->line, end + 1,
                 je == json_tokener_success ? "expected the end of the line after the object" : expected(je), what);
        rc = -DLG_ECORRUPT;
    } else if (!json_object_is_type(o, json_type_object)) {
        snprintf(s->err, s->errlen, "%s:%ld: a line must be a JSON object", s->path, s->line);
        rc = -DLG_EINVAL;
    } else {
        s->points++;
        rc = take_point(s->rs, s->src, s->line, o, s->err, s->errlen);
    }
    json_object_put(o);
    return rc;
}

int rep_read_jsonl(rep_rows *rs, const char *path, const char *src, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -DLG_EIO;
    }
    jsonl_state s = {.rs = rs, .path = path, .src = src, .f = f, .err = err, .errlen = errlen};
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    if (!(s.tok = json_tokener_new()))
        rc = -DLG_ENOMEM;
    while (!rc && (n = getline(&buf, &cap, f)) >= 0) {
        s.line++;
        size_t len = (size_t)n;
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
            len--;
        if (len == 0)
            continue;
        rc = take_line(&s, buf, len);
        if (rc == -DLG_ENOMEM)
            snprintf(err, errlen, "%s:%ld: out of memory", path, s.line);
    }
    if (!rc && ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
        rc = -DLG_EIO;
    }
    if (s.tok)
        json_tokener_free(s.tok);
    free(buf);
    fclose(f);
    return rc;
}
