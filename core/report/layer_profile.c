/* Reading a row's layer_profile (layer_profile.h). */
#include "layer_profile.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* One item, "KEY: SHARE% (F+B ms)", into k.  Its times follow the last
 * " (" (a kernel's own parentheses come before it), its key ends at the
 * last ": " before them. */
static bool parse_item(const char *p, size_t len, rep_layer_kind *k)
{
    size_t open = len, colon = len;
    for (size_t i = 0; i + 1 < len; i++)
        if (p[i] == ' ' && p[i + 1] == '(')
            open = i;
    for (size_t i = 0; i + 1 < open; i++)
        if (p[i] == ':' && p[i + 1] == ' ')
            colon = i;
    char rest[64];
    size_t rl = len - colon;
    if (open == len || colon >= open || colon == 0 || rl >= sizeof rest)
        return false;
    memcpy(rest, p + colon, rl); /* ": SHARE% (F+B ms)" */
    rest[rl] = '\0';
    double share, f, b;
    if (sscanf(rest, ": %lf%% (%lf+%lf ms)", &share, &f, &b) != 3 || !isfinite(share + f + b))
        return false;
    size_t kl = colon < sizeof k->key - 1 ? colon : sizeof k->key - 1;
    memcpy(k->key, p, kl);
    k->key[kl] = '\0';
    k->share = share;
    k->ms = f + b;
    return true;
}

size_t rep_layer_kinds(const rep_row *r, rep_layer_kind *out, size_t max)
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
