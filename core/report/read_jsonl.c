/* JSONL results (json-c): one point per line as the json sink writes it:
 * {"measurement":..., "tags":{...}, "fields":{...}}.  dlgauge_result points
 * become rows, dlgauge_host points the run inventory; others are skipped. */
#define _GNU_SOURCE
#include <errno.h>
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

int rep_read_jsonl(rep_rows *rs, const char *path, const char *src, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -DLG_EIO;
    }
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;
    long line = 0;
    int rc = 0;
    json_tokener *tok = json_tokener_new();
    if (!tok)
        rc = -DLG_ENOMEM;
    while (!rc && (n = getline(&buf, &cap, f)) >= 0) {
        line++;
        size_t len = (size_t)n;
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
            len--;
        if (len == 0)
            continue;
        json_tokener_reset(tok);
        json_object *o = json_tokener_parse_ex(tok, buf, (int)len);
        enum json_tokener_error je = json_tokener_get_error(tok);
        if (!o || je != json_tokener_success || json_tokener_get_parse_end(tok) != len) {
            snprintf(err, errlen, "%s:%ld: byte %zu of the line: not a JSON object: %s", path, line,
                     json_tokener_get_parse_end(tok),
                     je == json_tokener_success ? "trailing characters" : json_tokener_error_desc(je));
            rc = -DLG_ECORRUPT;
        } else if (!json_object_is_type(o, json_type_object)) {
            snprintf(err, errlen, "%s:%ld: a line must be a JSON object", path, line);
            rc = -DLG_EINVAL;
        } else {
            rc = take_point(rs, src, line, o, err, errlen);
        }
        json_object_put(o);
        if (rc == -DLG_ENOMEM)
            snprintf(err, errlen, "%s:%ld: out of memory", path, line);
    }
    if (!rc && ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
        rc = -DLG_EIO;
    }
    if (tok)
        json_tokener_free(tok);
    free(buf);
    fclose(f);
    return rc;
}
