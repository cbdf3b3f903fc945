#define _GNU_SOURCE
#include "throttle_profile.h"

#include <errno.h>
#include <stdbool.h>
#include <ini.h>
#include <stdio.h>
#include <string.h>

#include "throttle_units.h"

typedef struct load_ctx {
    thr_profile *p;
    FILE *f;
    int line;      /* lines read so far: the handler's line */
    int why_line;  /* line of the first problem the handler found */
    char why[256];
    int read_err;  /* errno of a failed read (a directory: EISDIR), else 0 */
} load_ctx;

static int fail(load_ctx *c, const char *msg)
{
    if (!c->why[0]) {
        snprintf(c->why, sizeof c->why, "%s", msg);
        c->why_line = c->line;
    }
    return 0; /* inih: stop treating this line as good; it returns the line */
}

/* One whole line per call, so that the handler's line number is the
 * file's.  inih's buffer holds num - 1 characters: the rest of a longer
 * line is skipped rather than read as a line of its own (a long URL in a
 * comment would otherwise be a syntax error on the wrong line, or the tail
 * of a comment a key).  Only a comment may be that long. */
static char *read_line(char *str, int num, void *stream)
{
    load_ctx *c = stream;
    size_t n = 0, cap = (size_t)num - 1, got = 0;
    bool nul = false;
    int ch;
    while ((ch = getc(c->f)) != EOF && ch != '\n') {
        got++;
        nul |= ch == '\0';
        if (n < cap)
            str[n++] = (char)ch;
    }
    if (ch == EOF && ferror(c->f))
        c->read_err = errno ? errno : EIO;
    if (ch == EOF && got == 0)
        return NULL;
    str[n] = '\0';
    c->line++;
    const char *t = str + strspn(str, " \t");
    if (nul)
        fail(c, "a NUL byte in the line (not a text file?)");
    else if (got > cap && *t != ';' && *t != '#') {
        char msg[64];
        snprintf(msg, sizeof msg, "line is longer than %zu characters", cap);
        fail(c, msg);
    }
    /* inih reads an indented line as the continuation of the previous
     * value (an indented "bandwidth = 1GB" became part of the name);
     * profiles have no multi-line values, so indentation is layout */
    memmove(str, t, strlen(t) + 1);
    return str;
}

static const char *const info_keys[] = {"name", "vendor", "source", "date", "description", NULL};

int thr_profile_key(thr_profile *p, const char *section, const char *name, const char *value,
                    char *why, size_t whylen)
{
    if (section[0] && strcmp(section, "disk") != 0) {
        snprintf(why, whylen, "section [%s] is not allowed (keys go at the top or in [disk])",
                 section);
        return -1;
    }
    for (const char *const *k = info_keys; *k; k++)
        if (strcmp(*k, name) == 0)
            return 0;
    for (int i = THR_CAPACITY; i < THR_OPT_COUNT; i++) {
        if (strcmp(thr_options[i].name, name) != 0)
            continue;
        if (p->v[i].text) { /* as a job's INI: which of the two was meant? */
            snprintf(why, whylen, "key '%s' is set twice in this profile (was '%s')", name, p->text[i]);
            return -1;
        }
        if (strlen(value) >= THR_TEXT_MAX) {
            snprintf(why, whylen, "%s: value is too long", name);
            return -1;
        }
        snprintf(p->text[i], THR_TEXT_MAX, "%s", value);
        return thr_parse_value(&thr_options[i], p->text[i], &p->v[i], why, whylen);
    }
    snprintf(why, whylen, "unknown key '%s'%s", name,
             !strcmp(name, "inner") || !strcmp(name, "profile")
                 ? " (inner and profile belong in the [storage] section)"
                 : "");
    return -1;
}

int thr_profile_override(thr_profile *p, const char *name, const char *value, char *why, size_t whylen)
{
    for (int i = THR_CAPACITY; i < THR_OPT_COUNT; i++)
        if (strcmp(thr_options[i].name, name) == 0) {
            memset(&p->v[i], 0, sizeof p->v[i]);
            p->text[i][0] = '\0';
        }
    return thr_profile_key(p, "", name, value, why, whylen);
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    load_ctx *c = user;
    char msg[256];
    if (thr_profile_key(c->p, section, name, value, msg, sizeof msg) != 0)
        return fail(c, msg);
    return 1;
}

int thr_profile_load(const dlg_host *h, const char *path, thr_profile *p)
{
    memset(p, 0, sizeof *p);
    load_ctx c = {.p = p};
    c.f = fopen(path, "r");
    if (!c.f)
        return h->error(h, DLG_EINVAL, "profile %s: cannot open: %s", path, strerror(errno));
    int line = ini_parse_stream(read_line, &c, on_key, &c);
    fclose(c.f);
    if (line == -2)
        return h->error(h, DLG_ENOMEM, "profile %s: out of memory", path);
    if (c.read_err) /* a directory reads as an empty profile: no limits at all */
        return h->error(h, DLG_EINVAL, "profile %s: cannot read: %s", path, strerror(c.read_err));
    if (line == 0 && !c.why[0])
        return 0;
    /* inih returns the first bad line of any kind: ours, or a syntax error
     * (0 when only the reader found one). */
    if (c.why[0] && (line <= 0 || c.why_line <= line))
        return h->error(h, DLG_EINVAL, "profile %s:%d: %s", path, c.why_line, c.why);
    return h->error(h, DLG_EINVAL, "profile %s:%d: syntax error (expected key = value)", path, line);
}
