/* Reading a configuration file into the INI model: inih over our own line
 * reader, section headers, entries (quotes, ${ENV}), and includes, each
 * file once. */
#include "config.h"

#include "config_add.h"
#include "config_env.h"
#include "config_line.h"
#include "config_open.h"
#include "options.h"

#include <ctype.h>
#include <ini.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_INCLUDE_DEPTH 16

/* Every file read so far, so that an include cycle or a second include of
 * one file is named as such (both would set keys twice). */
typedef struct seen_file {
    dev_t dev;
    ino_t ino;
    char *where; /* "file:line" of the include, "" for the main file */
} seen_file;

typedef struct load_ctx {
    seen_file *v;
    size_t n, cap;
} load_ctx;

typedef struct parse_state {
    dlg_config *cfg;
    const char *file;
    FILE *fp;
    struct parse_state *parent; /* the includer, NULL for the main file */
    load_ctx *ctx;
    dev_t dev;
    ino_t ino;
    int line;           /* line the reader last returned */
    int fail_line;      /* line of our own first error */
    size_t current_idx; /* index, since sections may be reallocated */
    bool have_current;
    int opened_at;      /* line of this file's header that opened the current section, 0: none */
    int depth;
    char *err;
    size_t errlen;
    bool failed;
} parse_state;

static int fail(parse_state *ps, const char *fmt, const char *a, const char *b)
{
    if (!ps->failed) {
        char msg[1024];
        snprintf(msg, sizeof msg, fmt, a, b);
        snprintf(ps->err, ps->errlen, "%s:%d: %s", ps->file, ps->line, msg);
        ps->failed = true;
        ps->fail_line = ps->line;
    }
    return 0; /* tells inih to record an error */
}

/* "[job a] key" (or just "key" before any header), for messages about an entry. */
static void entry_label(const parse_state *ps, const char *key, char *buf, size_t len)
{
    const dlg_section *s = ps->have_current ? &ps->cfg->sections[ps->current_idx] : NULL;
    if (!s)
        snprintf(buf, len, "%s", key);
    else if (s->kind == DLG_SEC_GLOBAL)
        snprintf(buf, len, "[global] %s", key);
    else
        snprintf(buf, len, "[%s %s] %s", dlg_section_kind_name(s->kind), s->name, key);
}

static int load_file(dlg_config *c, const char *path, parse_state *parent, load_ctx *ctx, char *err,
                     size_t errlen);

static int parse_header(parse_state *ps, const char *header)
{
    static const char *const kinds[] = {"global", "job", "storage", "sink"};
    char word[64] = "";
    size_t wl = strcspn(header, " \t");
    const char *name = header + wl;
    if (wl >= sizeof word)
        wl = sizeof word - 1;
    memcpy(word, header, wl);
    word[wl] = '\0';
    while (*name == ' ' || *name == '\t')
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
        if (isspace((unsigned char)*p) || *p == '.' || *p == ',' || *p == '=')
            return fail(ps, "section name '%s' may not contain spaces, dots, commas or '='%s", name, "");
    dlg_section *s = dlg_config_find(ps->cfg, (dlg_section_kind)kind, name);
    if (!s)
        s = dlg_config_add_section(ps->cfg, (dlg_section_kind)kind, name, ps->file, ps->line);
    if (!s)
        return fail(ps, "out of memory%s%s", "", "");
    ps->current_idx = (size_t)(s - ps->cfg->sections);
    ps->have_current = true;
    ps->opened_at = ps->line;
    return 1;
}

/* "include = FILE": relative to the including file's directory. */
static int include(parse_state *ps, const char *name)
{
    if (!*name)
        return fail(ps, "include needs a file name%s%s", "", "");
    char dir[PATH_MAX], inc[PATH_MAX * 2];
    snprintf(dir, sizeof dir, "%s", ps->file);
    if (name[0] == '/')
        snprintf(inc, sizeof inc, "%s", name);
    else
        snprintf(inc, sizeof inc, "%s/%s", dirname(dir), name);
    if (load_file(ps->cfg, inc, ps, ps->ctx, ps->err, ps->errlen) != 0) {
        ps->failed = true;
        ps->fail_line = ps->line;
        return 0;
    }
    return 1;
}

/* A key this file set already under an earlier header of the same section
 * ([job a] twice, copied and not renamed): say that, naming both headers,
 * rather than just that the key is set twice.  1: fine, 0: failed. */
static int check_reopened(parse_state *ps, const char *key)
{
    const dlg_section *s = &ps->cfg->sections[ps->current_idx];
    const dlg_entry *e = dlg_section_get(s, key);
    if (!e || e->line <= 0 || strcmp(e->file, ps->file) != 0 || e->line >= ps->opened_at)
        return 1;
    char sec[320], lines[96], msg[512];
    if (s->kind == DLG_SEC_GLOBAL)
        snprintf(sec, sizeof sec, "[global]");
    else
        snprintf(sec, sizeof sec, "[%s %s]", dlg_section_kind_name(s->kind), s->name);
    if (s->line > 0 && strcmp(s->file, ps->file) == 0)
        snprintf(lines, sizeof lines, "lines %d and %d", s->line, ps->opened_at);
    else /* first opened by another file, or [global], which always exists */
        snprintf(lines, sizeof lines, "again at line %d", ps->opened_at);
    snprintf(msg, sizeof msg, "%s appears twice in this file (%s), and both set '%s' (first at line %d): give "
             "each section once, or rename one", sec, lines, key, e->line);
    return fail(ps, "%s%s", msg, "");
}

/* One expanded entry of the current section. */
static int store(parse_state *ps, const char *key, const char *value)
{
    if (!*key)
        return fail(ps, "a key name is missing before the '='%s%s", "", "");
    if (!ps->have_current)
        return fail(ps, "'%s' appears before any section header%s", key, "");
    if (!*value) {
        char label[320];
        entry_label(ps, key, label, sizeof label);
        return fail(ps, "%s: an empty value%s", label, " (give one, or leave the key out)");
    }
    if (!check_reopened(ps, key))
        return 0;
    char perr[512];
    if (dlg_section_put(&ps->cfg->sections[ps->current_idx], key, value, ps->file, ps->line, perr, sizeof perr) != 0) {
        snprintf(ps->err, ps->errlen, "%s", perr);
        ps->failed = true;
        ps->fail_line = ps->line;
        return 0;
    }
    return 1;
}

/* A path starting with ~/ (the whole value, after a "kind:" prefix, or a
 * sweep element), as a shell would have expanded it. */
static bool home_path(const char *v)
{
    for (const char *p = v;; p++) {
        p += strspn(p, " \t");
        if (p[0] == '~' && (p[1] == '/' || p[1] == '\0' || p[1] == ',' || p[1] == ' '))
            return true;
        if (!(p = strpbrk(p, ":,")))
            return false;
    }
}

static int on_entry(void *user, const char *section, const char *key, const char *value)
{
    parse_state *ps = user;
    if (ps->failed)
        return 0;
    (void)section;
    char raw[4096], why[1024], label[512];
    entry_label(ps, key, label, sizeof label);
    snprintf(raw, sizeof raw, "%s", value);
    char *expanded = NULL;
    if (dlg_ini_unquote(raw, why, sizeof why) != 0 || !(expanded = dlg_expand_env(raw, why, sizeof why)))
        return fail(ps, "%s: %s", label, why);
    if (home_path(raw)) {
        free(expanded);
        return fail(ps, "%s: %s", label, "'~' is not expanded in a value (a folder named '~' would be made): "
                    "write ${HOME}/...");
    }
    /* include is a directive, not a key: it may come before any header */
    int rc = strcmp(key, "include") == 0 ? include(ps, expanded) : store(ps, key, expanded);
    free(expanded);
    return rc;
}

/* "[kind name]" at the start of buf (after the reader's clean-up): only
 * blanks may follow the ']', else "[job a] b" would silently be [job a]. */
static void header_line(parse_state *ps, const char *t)
{
    const char *close = strchr(t, ']');
    if (!close || ps->failed)
        return; /* inih reports the missing ']' */
    char header[256]; /* 255 characters: the message below says so */
    size_t hl = (size_t)(close - t - 1);
    if (hl >= sizeof header) { /* cut, two long names would be one section */
        fail(ps, "section header longer than %s characters%s", "255", "");
        return;
    }
    memcpy(header, t + 1, hl);
    header[hl] = '\0';
    while (hl && isspace((unsigned char)header[hl - 1]))
        header[--hl] = '\0';
    const char *h = header;
    while (isspace((unsigned char)*h))
        h++;
    const char *rest = close + 1;
    while (isspace((unsigned char)*rest))
        rest++;
    if (*rest) {
        fail(ps, "unexpected text '%s' after the section header [%s]", rest, h);
        return;
    }
    parse_header(ps, h);
}

/* One whole line into buf (at most size - 1 characters, without its '\n'),
 * or NULL at the end of the file.  *got: the line's length, or size when it
 * is longer (reading stops there: a binary file such as a dataset included
 * by mistake, or /dev/zero, has no end of line to read to); *nul: whether
 * it holds a NUL byte (fgets and strlen would cut the line there and read
 * its tail as the next line, with every later line number off by one). */
static char *get_line(FILE *fp, char *buf, int size, size_t *got, bool *nul)
{
    size_t n = 0, cap = (size_t)size - 1;
    int ch;
    *got = 0;
    *nul = false;
    while ((ch = getc(fp)) != EOF && ch != '\n') {
        ++*got;
        *nul |= ch == '\0';
        if (n == cap)
            break;
        buf[n++] = (char)ch;
    }
    if (ch == EOF && *got == 0)
        return NULL;
    buf[n] = '\0';
    return buf;
}

static char *reader(char *buf, int size, void *stream)
{
    parse_state *ps = stream;
    size_t got;
    bool nul;
    /* the first error ends the file: reading on would only cost time */
    if (ps->failed || !get_line(ps->fp, buf, size, &got, &nul))
        return NULL;
    ps->line++;
    if (nul || got > (size_t)size - 1) {
        char max[16];
        snprintf(max, sizeof max, "%d", size - 1);
        if (nul)
            fail(ps, "a NUL byte in the line: configuration files are UTF-8 text (is it UTF-16?)%s%s", "", "");
        else
            fail(ps, "line is longer than %s characters%s", max, "");
        buf[0] = '\0';
        return buf;
    }
    if (ps->line == 1)
        dlg_ini_strip_bom(buf);
    /* inih reads an indented line as the continuation of the previous
     * value; dlgauge has no multi-line values, so indentation is just layout */
    size_t lead = strspn(buf, " \t");
    memmove(buf, buf + lead, strlen(buf + lead) + 1);
    dlg_ini_strip_comment(buf);
    size_t n_left = strlen(buf);
    while (n_left && isspace((unsigned char)buf[n_left - 1]))
        buf[--n_left] = '\0';
    /* Headers are handled here rather than in the entry callback so that
     * empty sections exist too and carry their exact line number. */
    if (buf[0] == '[')
        header_line(ps, buf);
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

/* inih over the reader, which strips comments itself (keeping ';' and '#'
 * inside quotes).  inih's switch is process-wide and other parsers (disk
 * profiles, catalogs) rely on its default: it is restored. */
static int parse_stream(parse_state *ps)
{
    widen_ini_lines();
#ifdef DLG_HAVE_INIH_RUNTIME_LIMITS
    bool inline_comments = ini_allow_inline_comments;
    ini_allow_inline_comments = false;
#endif
    int rc = ini_parse_stream(reader, ps, on_entry, ps);
#ifdef DLG_HAVE_INIH_RUNTIME_LIMITS
    ini_allow_inline_comments = inline_comments;
#endif
    return rc;
}

int dlg_config_line_max(void)
{
    return LINE_BUFFER - 1;
}

/* "a.ini -> b.ini -> a.ini": the includes from the main file down to ps, then again. */
static void include_chain(const parse_state *ps, const char *again, char *buf, size_t len)
{
    const parse_state *chain[MAX_INCLUDE_DEPTH + 2];
    size_t n = 0;
    for (const parse_state *p = ps; p && n < sizeof chain / sizeof *chain; p = p->parent)
        chain[n++] = p;
    buf[0] = '\0';
    for (size_t i = n; i-- > 0;)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s -> ", chain[i]->file);
    snprintf(buf + strlen(buf), len - strlen(buf), "%s", again);
}

/* Refuses a file the includer is already inside (a cycle) or one included
 * before (its keys would be set twice); else remembers it. */
static int check_once(load_ctx *ctx, const parse_state *parent, const char *path, const struct stat *st,
                      char *err, size_t errlen)
{
    for (const parse_state *p = parent; p; p = p->parent) {
        if (p->dev == st->st_dev && p->ino == st->st_ino) {
            char chain[2048];
            include_chain(parent, path, chain, sizeof chain);
            snprintf(err, errlen, "%s:%d: include cycle: %s", parent->file, parent->line, chain);
            return -1;
        }
    }
    for (size_t i = 0; i < ctx->n; i++) {
        if (ctx->v[i].dev == st->st_dev && ctx->v[i].ino == st->st_ino) {
            snprintf(err, errlen, "%s:%d: '%s' is already included (at %s): include each file once",
                     parent->file, parent->line, path, ctx->v[i].where);
            return -1;
        }
    }
    seen_file *grown = dlg_room_for_one(ctx->v, ctx->n, &ctx->cap, sizeof *grown);
    if (!grown)
        goto oom;
    ctx->v = grown;
    char where[PATH_MAX + 32] = "";
    if (parent)
        snprintf(where, sizeof where, "%s:%d", parent->file, parent->line);
    ctx->v[ctx->n] = (seen_file){st->st_dev, st->st_ino, strdup(where)};
    if (!ctx->v[ctx->n].where)
        goto oom;
    ctx->n++;
    return 0;
oom:
    snprintf(err, errlen, "%s: out of memory", path);
    return -1;
}

/* Opens path as the main file (parent NULL) or an include; what is not a
 * file (a directory, a FIFO) is refused by name (config_open.c). */
static FILE *open_config(load_ctx *ctx, const parse_state *parent, const char *path, struct stat *st,
                         char *err, size_t errlen)
{
    char at[PATH_MAX + 64] = "";
    if (parent)
        snprintf(at, sizeof at, "%s:%d: cannot open include file '%s'", parent->file, parent->line, path);
    else
        snprintf(at, sizeof at, "%s: cannot open", path);
    FILE *fp = dlg_config_fopen(path, at, st, err, errlen);
    if (!fp)
        return NULL;
    if (check_once(ctx, parent, path, st, err, errlen) != 0) {
        fclose(fp);
        return NULL;
    }
    return fp;
}

static int load_file(dlg_config *c, const char *path, parse_state *parent, load_ctx *ctx, char *err,
                     size_t errlen)
{
    int depth = parent ? parent->depth + 1 : 0;
    if (depth > MAX_INCLUDE_DEPTH) {
        snprintf(err, errlen, "%s:%d: includes nest deeper than %d", parent->file, parent->line,
                 MAX_INCLUDE_DEPTH);
        return -1;
    }
    struct stat st;
    FILE *fp = open_config(ctx, parent, path, &st, err, errlen);
    if (!fp)
        return -1;
    parse_state ps = {.cfg = c, .file = path, .fp = fp, .parent = parent, .ctx = ctx, .dev = st.st_dev,
                      .ino = st.st_ino, .depth = depth, .err = err, .errlen = errlen};
    if (parent && parent->have_current) {
        /* keys before the first header of an included file extend the includer's section */
        ps.current_idx = parent->current_idx;
        ps.have_current = true;
    }
    int rc = parse_stream(&ps);
    fclose(fp);
    /* inih reports its own syntax errors only at the end: the first wins */
    if (ps.failed && !(rc > 0 && rc < ps.fail_line))
        return -1;
    if (rc != 0) {
        if (rc > 0)
            snprintf(err, errlen, "%s:%d: syntax error: expected 'key = value', '[section]' or a comment",
                     path, rc);
        else if (rc == -2) /* inih's line buffer */
            snprintf(err, errlen, "%s: out of memory", path);
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
    if (!c->path || !dlg_config_add_section(c, DLG_SEC_GLOBAL, "", path, 0)) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    load_ctx ctx = {0};
    int rc = load_file(c, path, NULL, &ctx, err, errlen);
    for (size_t i = 0; i < ctx.n; i++)
        free(ctx.v[i].where);
    free(ctx.v);
    return rc;
}
