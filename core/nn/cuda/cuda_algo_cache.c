/* Convolution algorithm cache: in memory and in a small text file. */
#include "cuda_algo_cache.h"

#include <dlgauge/plugin.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dlg_algo_cache_init(dlg_algo_cache *c, const char *tag)
{
    memset(c, 0, sizeof *c);
    snprintf(c->tag, sizeof c->tag, "%s", tag && *tag ? tag : "-");
    /* the tag is one word in the file */
    for (char *p = c->tag; *p; p++)
        if (*p == ' ' || *p == '\t' || *p == '\n')
            *p = '_';
}

void dlg_algo_cache_free(dlg_algo_cache *c)
{
    free(c->e);
    c->e = NULL;
    c->n = c->cap = 0;
}

const dlg_algo_entry *dlg_algo_cache_get(const dlg_algo_cache *c, const char *key)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->e[i].key, key) == 0)
            return &c->e[i];
    return NULL;
}

int dlg_algo_cache_put(dlg_algo_cache *c, const char *key, int algo, int math, size_t ws)
{
    if (strlen(key) >= DLG_ALGO_KEY_MAX || strpbrk(key, " \t\n"))
        return -DLG_EINVAL;
    dlg_algo_entry *e = (dlg_algo_entry *)dlg_algo_cache_get(c, key);
    if (!e) {
        if (c->n == c->cap) {
            int cap = c->cap ? 2 * c->cap : 32;
            dlg_algo_entry *p = realloc(c->e, (size_t)cap * sizeof *p);
            if (!p)
                return -DLG_ENOMEM;
            c->e = p;
            c->cap = cap;
        }
        e = &c->e[c->n++];
        snprintf(e->key, sizeof e->key, "%s", key);
    }
    e->algo = algo;
    e->math = math;
    e->ws = ws;
    c->dirty = true;
    return 0;
}

/* how many algorithms the key's direction has; 0 for no known direction */
static int algo_count(const char *key)
{
    if (strncmp(key, "fwd:", 4) == 0)
        return DLG_ALGO_FWD_COUNT;
    if (strncmp(key, "bwdd:", 5) == 0)
        return DLG_ALGO_BWDD_COUNT;
    if (strncmp(key, "bwdf:", 5) == 0)
        return DLG_ALGO_BWDF_COUNT;
    return 0;
}

/* one "<key> <algo> <math> <ws>" line; a message in err if it is not one */
static int parse_entry(const char *line, dlg_algo_entry *e, char *err, size_t errlen)
{
    long long ws;
    char tail[2];
    if (sscanf(line, "%159s %d %d %lld %1s", e->key, &e->algo, &e->math, &ws, tail) != 4) {
        snprintf(err, errlen, "expected '<key> <algo> <math> <workspace bytes>'");
        return -DLG_ECORRUPT;
    }
    int n = algo_count(e->key);
    if (!n)
        snprintf(err, errlen, "key '%s' starts with no direction (fwd:, bwdd:, bwdf:)", e->key);
    else if (e->algo < 0 || e->algo >= n)
        snprintf(err, errlen, "algorithm %d: cuDNN has %d for this direction", e->algo, n);
    else if (e->math < 0 || e->math > DLG_ALGO_MATH_MAX)
        snprintf(err, errlen, "math type %d: cuDNN's are 0..%d", e->math, DLG_ALGO_MATH_MAX);
    else if (ws < 0)
        snprintf(err, errlen, "workspace %lld bytes", ws);
    else {
        e->ws = (size_t)ws;
        return 0;
    }
    return -DLG_ECORRUPT;
}

/* The entries after the first line into c: 0, or -DLG_ECORRUPT with err
 * naming the line.  Lines are read whole (getline): a line longer than a
 * buffer must not be read as two, the second named by a line number the
 * file lacks. */
static int load_entries(dlg_algo_cache *c, FILE *f, const char *path, char *err, size_t errlen)
{
    char *line = NULL, why[200];
    size_t cap = 0;
    int rc = 0;
    for (int lineno = 2; rc == 0 && getline(&line, &cap, f) >= 0; lineno++) {
        dlg_algo_entry e;
        if ((rc = parse_entry(line, &e, why, sizeof why)) < 0)
            snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
        else if ((rc = dlg_algo_cache_put(c, e.key, e.algo, e.math, e.ws)) < 0)
            snprintf(err, errlen, "%s:%d: cannot keep entry '%s'", path, lineno, e.key);
    }
    free(line);
    c->dirty = false;
    return rc;
}

int dlg_algo_cache_load(dlg_algo_cache *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0; /* first run: nothing cached yet */
    char *head = NULL, tag[128];
    size_t cap = 0;
    int rc = 0, ver = 0;
    if (getline(&head, &cap, f) < 0)
        rc = 0; /* empty: made ahead of the first run */
    else if (sscanf(head, "dlgauge-algo-cache %d %127s", &ver, tag) != 2 || ver != 1) {
        snprintf(err, errlen, "%s:1: not a dlgauge algorithm cache (version 1)", path);
        rc = -DLG_ECORRUPT;
    } else if (strcmp(tag, c->tag) == 0)
        rc = load_entries(c, f, path, err, errlen);
    /* else another GPU or cuDNN: search again, overwrite on save */
    free(head);
    fclose(f);
    return rc;
}

int dlg_algo_cache_save(const dlg_algo_cache *c, const char *path, char *err, size_t errlen)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -DLG_EIO;
    }
    fprintf(f, "dlgauge-algo-cache 1 %s\n", c->tag);
    for (int i = 0; i < c->n; i++)
        fprintf(f, "%s %d %d %zu\n", c->e[i].key, c->e[i].algo, c->e[i].math, c->e[i].ws);
    /* write then rename: a crash never leaves half a cache */
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        remove(tmp);
        return -DLG_EIO;
    }
    return 0;
}
