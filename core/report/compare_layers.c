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
#include "layer_profile.h"

enum { KINDS = 16, SHOWN = 4 };

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
    rep_layer_kind b[KINDS], n[KINDS];
    size_t nb = cc->base && cc->new ? rep_layer_kinds(cc->base->row, b, KINDS) : 0;
    size_t nn = nb ? rep_layer_kinds(cc->new->row, n, KINDS) : 0;
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
