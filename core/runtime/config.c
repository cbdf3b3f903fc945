#include "config.h"

#include "options.h"

#include <errno.h>
#include <ini.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INCLUDE_DEPTH 16

typedef struct parse_state {
    dlg_config *cfg;
    const char *file;
    FILE *fp;
    int line;           /* line the reader last returned */
    int fail_line;      /* line of our own first error */
    size_t current_idx; /* index, since sections may be reallocated */
    bool have_current;
    int depth;
    char *err;
    size_t errlen;
    bool failed;
} parse_state;

const char *dlg_section_kind_name(dlg_section_kind k)
{
    switch (k) {
    case DLG_SEC_GLOBAL: return "global";
    case DLG_SEC_JOB: return "job";
    case DLG_SEC_STORAGE: return "storage";
    case DLG_SEC_SINK: return "sink";
    }
    return "?";
}

void dlg_entry_where(const dlg_entry *e, char *buf, size_t len)
{
    if (e->line > 0)
        snprintf(buf, len, "%s:%d: ", e->file, e->line);
    else
        snprintf(buf, len, "%s: ", e->file);
}

static int fail(parse_state *ps, const char *fmt, const char *a, const char *b)
{
    if (!ps->failed) {
        char msg[512];
        snprintf(msg, sizeof msg, fmt, a, b);
        snprintf(ps->err, ps->errlen, "%s:%d: %s", ps->file, ps->line, msg);
        ps->failed = true;
        ps->fail_line = ps->line;
    }
    return 0; /* tells inih to record an error */
}

static dlg_section *add_section(dlg_config *c, dlg_section_kind kind, const char *name,
                                const char *file, int line)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        dlg_section *s = realloc(c->sections, cap * sizeof *s);
        if (!s)
            return NULL;
        c->sections = s;
        c->cap = cap;
    }
    dlg_section *s = &c->sections[c->n];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->name = strdup(name);
    s->file = strdup(file);
    s->line = line;
    if (!s->name || !s->file) {
        free(s->name);
        free(s->file);
        return NULL;
    }
    c->n++;
    return s;
}

dlg_section *dlg_config_find(const dlg_config *c, dlg_section_kind kind, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->sections[i].kind == kind && strcmp(c->sections[i].name, name) == 0)
            return &c->sections[i];
    return NULL;
}

const dlg_entry *dlg_section_get(const dlg_section *s, const char *key)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (strcmp(s->entries[i].key, key) == 0)
            return &s->entries[i];
    return NULL;
}

/* Sets key in s; a later file or --set overrides, the same file twice is an error. */
static int put_entry(dlg_section *s, const char *key, const char *value, const char *file,
                     int line, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->n; i++) {
        dlg_entry *e = &s->entries[i];
        if (strcmp(e->key, key) != 0)
            continue;
        if (line > 0 && strcmp(e->file, file) == 0) {
            snprintf(err, errlen, "%s:%d: key '%s' is set twice in this section (first at line %d)",
                     file, line, key, e->line);
            return -1;
        }
        char *v = strdup(value), *f = strdup(file);
        if (!v || !f) {
            free(v);
            free(f);
            snprintf(err, errlen, "%s:%d: out of memory", file, line);
            return -1;
        }
        free(e->value);
        free(e->file);
        e->value = v;
        e->file = f;
        e->line = line;
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        dlg_entry *en = realloc(s->entries, cap * sizeof *en);
        if (!en) {
            snprintf(err, errlen, "%s:%d: out of memory", file, line);
            return -1;
        }
        s->entries = en;
        s->cap = cap;
    }
    dlg_entry *e = &s->entries[s->n];
    e->key = strdup(key);
    e->value = strdup(value);
    e->file = strdup(file);
    e->line = line;
    if (!e->key || !e->value || !e->file) {
        free(e->key);
        free(e->value);
        free(e->file);
        snprintf(err, errlen, "%s:%d: out of memory", file, line);
        return -1;
    }
    s->n++;
    return 0;
}

/* "${NAME}" and "${NAME:-default}" from the environment. */
static int expand_env(const char *in, char *out, size_t outlen, char *why, size_t whylen)
{
    size_t o = 0;
    for (const char *p = in; *p;) {
        if (p[0] == '$' && p[1] == '{') {
            const char *close = strchr(p + 2, '}');
            if (!close) {
                snprintf(why, whylen, "unterminated '${' in '%s'", in);
                return -1;
            }
            char name[128];
            size_t n = (size_t)(close - (p + 2));
            if (n == 0 || n >= sizeof name) {
                snprintf(why, whylen, "bad variable reference in '%s'", in);
                return -1;
            }
            memcpy(name, p + 2, n);
            name[n] = '\0';
            const char *def = NULL;
            char *dash = strstr(name, ":-");
            if (dash) {
                *dash = '\0';
                def = dash + 2;
            }
            const char *val = getenv(name);
            if (!val || (dash && !*val))
                val = def;
            if (!val) {
                snprintf(why, whylen, "environment variable '%s' is not set (write ${%s:-default})",
                         name, name);
                return -1;
            }
            size_t vl = strlen(val);
            if (o + vl >= outlen) {
                snprintf(why, whylen, "value too long after expanding '%s'", in);
                return -1;
            }
            memcpy(out + o, val, vl);
            o += vl;
            p = close + 1;
        } else {
            if (o + 1 >= outlen) {
                snprintf(why, whylen, "value too long: '%s'", in);
                return -1;
            }
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    return 0;
}

static int load_file(dlg_config *c, const char *path, parse_state *parent, char *err, size_t errlen);

static int parse_header(parse_state *ps, const char *header)
{
    static const char *const kinds[] = {"global", "job", "storage", "sink"};
    char word[64] = "";
    const char *sp = strchr(header, ' ');
    size_t wl = sp ? (size_t)(sp - header) : strlen(header);
    if (wl >= sizeof word)
        wl = sizeof word - 1;
    memcpy(word, header, wl);
    word[wl] = '\0';
    const char *name = sp ? sp + 1 : "";
    while (*name == ' ')
        name++;
    int kind = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(word, kinds[i]) == 0)
            kind = i;
    if (kind < 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "unknown section [%s]: expected [global], [job NAME], "
                 "[storage NAME] or [sink NAME]", header);
        dlg_append_suggestion(msg, sizeof msg, dlg_suggest(word, kinds, 4));
        return fail(ps, "%s%s", msg, "");
    }
    if (kind == DLG_SEC_GLOBAL && *name)
        return fail(ps, "[global] takes no name (found '%s')%s", name, "");
    if (kind != DLG_SEC_GLOBAL && !*name)
        return fail(ps, "[%s] needs a name, e.g. [%s NAME]", word, word);
    for (const char *p = name; *p; p++)
        if (*p == ' ' || *p == '.' || *p == ',' || *p == '=')
            return fail(ps, "section name '%s' may not contain spaces, dots, commas or '='%s", name, "");
    dlg_section *s = dlg_config_find(ps->cfg, (dlg_section_kind)kind, name);
    if (!s)
        s = add_section(ps->cfg, (dlg_section_kind)kind, name, ps->file, ps->line);
    if (!s)
        return fail(ps, "out of memory%s%s", "", "");
    ps->current_idx = (size_t)(s - ps->cfg->sections);
    ps->have_current = true;
    return 1;
}

static int on_entry(void *user, const char *section, const char *key, const char *value)
{
    parse_state *ps = user;
    if (ps->failed)
        return 0;
    (void)section;
    char expanded[4096], why[512];
    if (expand_env(value, expanded, sizeof expanded, why, sizeof why) != 0)
        return fail(ps, "%s%s", why, "");
    /* include is a directive, not a key: it may come before any header */
    if (strcmp(key, "include") == 0) {
        char dir[PATH_MAX], inc[PATH_MAX * 2];
        snprintf(dir, sizeof dir, "%s", ps->file);
        if (expanded[0] == '/')
            snprintf(inc, sizeof inc, "%s", expanded);
        else
            snprintf(inc, sizeof inc, "%s/%s", dirname(dir), expanded);
        if (load_file(ps->cfg, inc, ps, ps->err, ps->errlen) != 0) {
            ps->failed = true;
            ps->fail_line = ps->line;
            return 0;
        }
        return 1;
    }
    if (!ps->have_current)
        return fail(ps, "'%s' appears before any section header%s", key, "");
    if (!*expanded)
        return fail(ps, "key '%s' has an empty value%s", key, "");
    char perr[512];
    if (put_entry(&ps->cfg->sections[ps->current_idx], key, expanded, ps->file, ps->line, perr,
                  sizeof perr) != 0) {
        snprintf(ps->err, ps->errlen, "%s", perr);
        ps->failed = true;
        ps->fail_line = ps->line;
        return 0;
    }
    return 1;
}

static char *reader(char *buf, int size, void *stream)
{
    parse_state *ps = stream;
    if (!fgets(buf, size, ps->fp))
        return NULL;
    ps->line++;
    size_t n = strlen(buf);
    if (n == (size_t)size - 1 && buf[n - 1] != '\n') {
        int ch = fgetc(ps->fp);
        if (ch != '\n' && ch != EOF) {
            char max[16];
            snprintf(max, sizeof max, "%d", size - 1);
            while ((ch = fgetc(ps->fp)) != EOF && ch != '\n')
                ;
            fail(ps, "line is longer than %s characters%s", max, "");
            buf[0] = '\0';
            return buf;
        }
    }
    /* inih reads an indented line as the continuation of the previous
     * value; dlgauge has no multi-line values, so indentation is just layout */
    size_t lead = strspn(buf, " \t");
    memmove(buf, buf + lead, n - lead + 1);
    /* Headers are handled here rather than in the entry callback so that
     * empty sections exist too and carry their exact line number. */
    const char *t = buf;
    const char *close = *t == '[' ? strchr(t, ']') : NULL;
    if (close && !ps->failed) {
        char header[256];
        size_t hl = (size_t)(close - t - 1);
        if (hl >= sizeof header)
            hl = sizeof header - 1;
        memcpy(header, t + 1, hl);
        header[hl] = '\0';
        while (hl && header[hl - 1] == ' ')
            header[--hl] = '\0';
        const char *h = header;
        while (*h == ' ')
            h++;
        parse_header(ps, h);
    }
    return buf;
}

/* Lines up to 4095 bytes (a sweep over a dozen disk profiles is longer
 * than inih's default 199).  Debian's libinih reads these settings at run
 * time; a heap buffer, since its stack buffer keeps the compiled size. */
#ifdef DLG_HAVE_INIH_RUNTIME_LIMITS
enum { LINE_BUFFER = 4096 };
#else
enum { LINE_BUFFER = INI_MAX_LINE };
#endif

static void widen_ini_lines(void)
{
#ifdef DLG_HAVE_INIH_RUNTIME_LIMITS
    ini_use_stack = false;
    ini_initial_alloc = LINE_BUFFER;
    ini_max_line = LINE_BUFFER;
#endif
}

int dlg_config_line_max(void)
{
    return LINE_BUFFER - 1;
}

static int load_file(dlg_config *c, const char *path, parse_state *parent, char *err, size_t errlen)
{
    int depth = parent ? parent->depth + 1 : 0;
    if (depth > MAX_INCLUDE_DEPTH) {
        snprintf(err, errlen, "%s:%d: includes nest deeper than %d (a cycle?)", parent->file,
                 parent->line, MAX_INCLUDE_DEPTH);
        return -1;
    }
    FILE *fp = fopen(path, "r");
    if (!fp) {
        if (parent)
            snprintf(err, errlen, "%s:%d: cannot open include file '%s': %s", parent->file,
                     parent->line, path, strerror(errno));
        else
            snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    parse_state ps = {.cfg = c, .file = path, .fp = fp, .depth = depth, .err = err, .errlen = errlen};
    if (parent && parent->have_current) {
        /* keys before the first header of an included file extend the includer's section */
        ps.current_idx = parent->current_idx;
        ps.have_current = true;
    }
    widen_ini_lines();
    int rc = ini_parse_stream(reader, &ps, on_entry, &ps);
    fclose(fp);
    /* inih reports its own syntax errors only at the end: the first wins */
    if (ps.failed && !(rc > 0 && rc < ps.fail_line))
        return -1;
    if (rc != 0) {
        if (rc > 0)
            snprintf(err, errlen, "%s:%d: syntax error: expected 'key = value', '[section]' or a comment",
                     path, rc);
        else
            snprintf(err, errlen, "%s: cannot parse (error %d)", path, rc);
        return -1;
    }
    return 0;
}

int dlg_config_load(dlg_config *c, const char *path, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->path = strdup(path);
    if (!c->path || !add_section(c, DLG_SEC_GLOBAL, "", path, 0)) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    return load_file(c, path, NULL, err, errlen);
}

static dlg_section *resolve_set_target(dlg_config *c, const char *sec, char *err, size_t errlen,
                                       const char *assignment)
{
    static const char *const kinds[] = {"global", "job", "storage", "sink"};
    if (strcmp(sec, "global") == 0)
        return dlg_config_find(c, DLG_SEC_GLOBAL, "");
    const char *colon = strchr(sec, ':');
    if (colon) {
        for (int k = 1; k < 4; k++) {
            if (strlen(kinds[k]) == (size_t)(colon - sec) && !strncmp(sec, kinds[k], (size_t)(colon - sec))) {
                dlg_section *s = dlg_config_find(c, (dlg_section_kind)k, colon + 1);
                if (!s)
                    snprintf(err, errlen, "--set %s: there is no [%s %s]", assignment, kinds[k], colon + 1);
                return s;
            }
        }
        snprintf(err, errlen, "--set %s: unknown section kind in '%s'", assignment, sec);
        return NULL;
    }
    dlg_section *found = NULL;
    int count = 0;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->sections[i].name, sec) == 0) {
            found = &c->sections[i];
            count++;
        }
    if (count == 1)
        return found;
    if (count > 1)
        snprintf(err, errlen, "--set %s: '%s' names several sections; write job:%s, storage:%s or sink:%s",
                 assignment, sec, sec, sec, sec);
    else {
        const char *names[256];
        size_t n = 0;
        for (size_t i = 0; i < c->n && n < 256; i++)
            if (c->sections[i].name[0])
                names[n++] = c->sections[i].name;
        snprintf(err, errlen, "--set %s: no section is called '%s'", assignment, sec);
        dlg_append_suggestion(err, errlen, dlg_suggest(sec, names, n));
    }
    return NULL;
}

int dlg_config_set(dlg_config *c, const char *assignment, char *err, size_t errlen)
{
    const char *eq = strchr(assignment, '=');
    char lhs[256];
    if (!eq || (size_t)(eq - assignment) >= sizeof lhs) {
        snprintf(err, errlen, "--set %s: expected SECTION.key=value", assignment);
        return -1;
    }
    memcpy(lhs, assignment, (size_t)(eq - assignment));
    lhs[eq - assignment] = '\0';
    char *dot = strrchr(lhs, '.');
    if (!dot || dot == lhs || !dot[1] || !eq[1]) {
        snprintf(err, errlen, "--set %s: expected SECTION.key=value (e.g. job.batch=32)", assignment);
        return -1;
    }
    *dot = '\0';
    const char *key = dot + 1;
    if (strcmp(lhs, "job") == 0) {
        int jobs = 0;
        for (size_t i = 0; i < c->n; i++) {
            if (c->sections[i].kind != DLG_SEC_JOB)
                continue;
            jobs++;
            if (put_entry(&c->sections[i], key, eq + 1, "--set", 0, err, errlen) != 0)
                return -1;
        }
        if (!jobs && !dlg_config_find(c, DLG_SEC_JOB, "job")) {
            snprintf(err, errlen, "--set %s: the configuration has no [job] sections", assignment);
            return -1;
        }
        return 0;
    }
    dlg_section *s = resolve_set_target(c, lhs, err, errlen, assignment);
    if (!s)
        return -1;
    return put_entry(s, key, eq + 1, "--set", 0, err, errlen);
}

void dlg_config_free(dlg_config *c)
{
    for (size_t i = 0; i < c->n; i++) {
        dlg_section *s = &c->sections[i];
        for (size_t j = 0; j < s->n; j++) {
            free(s->entries[j].key);
            free(s->entries[j].value);
            free(s->entries[j].file);
        }
        free(s->entries);
        free(s->name);
        free(s->file);
    }
    free(c->sections);
    free(c->path);
    memset(c, 0, sizeof *c);
}
