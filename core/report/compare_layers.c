/* dlgauge compare's layer profiles: a matched cell whose rows on both
 * sides were run with profile = true (the layer_profile field) gets one
 * line of its layer kinds' time per step, base -> new, the largest change
 * first, so that a slowdown names the layers that took it (and a kernel
 * that changed shows as one kind leaving and another arriving). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"

enum { KINDS = 16, SHOWN = 4 };

typedef struct kind_ms {
    char key[96]; /* "conv winograd F(4x4,3x3) avx2" */
    double ms;    /* forward + backward, per step */
} kind_ms;

/* One layer_profile item, "KEY: SHARE% (F+B ms)", into k; false if it is
 * not one (a hand-edited field: skipped, not guessed). */
static bool parse_item(const char *p, size_t len, kind_ms *k)
{
    size_t open = len, colon = len;
    for (size_t i = 0; i + 1 < len; i++)
        if (p[i] == ' ' && p[i + 1] == '(')
            open = i; /* the last " (": a kernel's own parentheses come before it */
    for (size_t i = 0; i + 1 < open; i++)
        if (p[i] == ':' && p[i + 1] == ' ')
            colon = i;
    double f, b;
    char times[64];
    size_t tl = len - open;
    if (open == len || colon >= open || colon == 0 || tl >= sizeof times)
        return false;
    memcpy(times, p + open, tl);
    times[tl] = '\0';
    if (sscanf(times, " (%lf+%lf ms)", &f, &b) != 2 || !isfinite(f + b))
        return false;
    size_t kl = colon < sizeof k->key - 1 ? colon : sizeof k->key - 1;
    memcpy(k->key, p, kl);
    k->key[kl] = '\0';
    k->ms = f + b;
    return true;
}

/* A row's layer_profile, its items " | "-separated, into out (at most max). */
static size_t parse(const rep_row *r, kind_ms *out, size_t max)
{
    const char *p = r ? rep_str(r, "layer_profile") : NULL;
    size_t n = 0;
    while (p && *p && n < max) {
        const char *end = strstr(p, " | ");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        n += parse_item(p, len, &out[n]);
        p = end ? end + 3 : NULL;
    }
    return n;
}

typedef struct change {
    const char *key;
    double base, new; /* NaN: not among that side's kinds */
} change;

static double size_of(const change *c)
{
    return fabs((isnan(c->new) ? 0 : c->new) - (isnan(c->base) ? 0 : c->base));
}

static int larger_first(const void *a, const void *b)
{
    double x = size_of(a), y = size_of(b);
    return x < y ? 1 : x > y ? -1 : strcmp(((const change *)a)->key, ((const change *)b)->key);
}

static size_t ms_text(char *buf, size_t len, double ms)
{
    return (size_t)(isnan(ms) ? snprintf(buf, len, "-") : snprintf(buf, len, "%.4g ms", ms));
}

void rep_cmp_layers_text(const rep_cmp_cell *cc, char *buf, size_t len)
{
    kind_ms b[KINDS], n[KINDS];
    size_t nb = cc->base && cc->new ? parse(cc->base->row, b, KINDS) : 0;
    size_t nn = nb ? parse(cc->new->row, n, KINDS) : 0;
    if (len)
        buf[0] = '\0';
    if (!nb || !nn)
        return;
    change ch[2 * KINDS];
    size_t nc = 0;
    for (size_t i = 0; i < nb; i++)
        ch[nc++] = (change){b[i].key, b[i].ms, NAN};
    for (size_t j = 0; j < nn; j++) {
        size_t i = 0;
        while (i < nb && strcmp(ch[i].key, n[j].key) != 0)
            i++;
        if (i < nb)
            ch[i].new = n[j].ms;
        else
            ch[nc++] = (change){n[j].key, NAN, n[j].ms};
    }
    qsort(ch, nc, sizeof *ch, larger_first);
    size_t at = 0;
    for (size_t i = 0; i < nc && i < SHOWN && at < len; i++) {
        at += (size_t)snprintf(buf + at, len - at, "%s%s ", i ? ", " : "", ch[i].key);
        at += at < len ? ms_text(buf + at, len - at, ch[i].base) : 0;
        at += at < len ? (size_t)snprintf(buf + at, len - at, " -> ") : 0;
        at += at < len ? ms_text(buf + at, len - at, ch[i].new) : 0;
        if (at < len && !isnan(ch[i].base) && !isnan(ch[i].new) && ch[i].base > 0)
            at += (size_t)snprintf(buf + at, len - at, " (%+.1f%%)", 100 * (ch[i].new / ch[i].base - 1));
    }
    if (at < len && nc > SHOWN)
        snprintf(buf + at, len - at, " (+%zu more)", nc - SHOWN);
}
