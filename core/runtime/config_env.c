#include "config_env.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct expander {
    char *out;
    size_t len, cap;
    const char *whole; /* the value as written, for messages */
    char *why;
    size_t whylen;
} expander;

static int put(expander *x, const char *s, size_t n)
{
    if (x->len + n >= x->cap) {
        size_t cap = x->cap;
        while (x->len + n >= cap)
            cap *= 2;
        char *out = realloc(x->out, cap);
        if (!out) {
            snprintf(x->why, x->whylen, "out of memory expanding '%s'", x->whole);
            return -1;
        }
        x->out = out;
        x->cap = cap;
    }
    memcpy(x->out + x->len, s, n);
    x->len += n;
    x->out[x->len] = '\0';
    return 0;
}

static bool name_start(char c) { return isalpha((unsigned char)c) || c == '_'; }

/* The '}' closing the reference at p ("${"), references in its default skipped. */
static const char *closing_brace(const char *p, const char *end)
{
    int depth = 0;
    for (const char *q = p; q < end; q++) {
        if (q[0] == '$' && q + 1 < end && (q[1] == '$' || q[1] == '{')) {
            depth += q[1] == '{';
            q++;
        } else if (*q == '}' && --depth == 0) {
            return q;
        }
    }
    return NULL;
}

static int expand(expander *x, const char *p, const char *end);

/* One reference "${...}" from p to close (the '}'). */
static int reference(expander *x, const char *p, const char *close)
{
    const char *name = p + 2, *after = name;
    if (name_start(*after))
        while (after < close && (isalnum((unsigned char)*after) || *after == '_'))
            after++;
    size_t n = (size_t)(after - name);
    bool has_default = close - after >= 2 && after[0] == ':' && after[1] == '-';
    char var[128];
    if (n == 0 || n >= sizeof var || (!has_default && after != close)) {
        snprintf(x->why, x->whylen, "'%.*s' in '%s' is not a variable reference: write ${NAME} or "
                 "${NAME:-default} (NAME: letters, digits, _), or $$ for a literal $",
                 (int)(close + 1 - p), p, x->whole);
        return -1;
    }
    memcpy(var, name, n);
    var[n] = '\0';
    const char *val = getenv(var);
    if (val && (*val || !has_default))
        return put(x, val, strlen(val));
    if (has_default)
        return expand(x, after + 2, close);
    snprintf(x->why, x->whylen, "environment variable '%s' is not set (write ${%s:-default})", var, var);
    return -1;
}

static int expand(expander *x, const char *p, const char *end)
{
    while (p < end) {
        const char *dollar = memchr(p, '$', (size_t)(end - p));
        if (!dollar)
            return put(x, p, (size_t)(end - p));
        if (put(x, p, (size_t)(dollar - p)) != 0)
            return -1;
        p = dollar;
        char next = p + 1 < end ? p[1] : '\0';
        if (next == '$') {
            if (put(x, "$", 1) != 0)
                return -1;
            p += 2;
        } else if (name_start(next)) {
            /* a shell would expand $HOME: passing it on literally would surprise */
            size_t n = 1;
            while (p + n < end && (isalnum((unsigned char)p[n]) || p[n] == '_'))
                n++;
            snprintf(x->why, x->whylen, "'%.*s' in '%s' is not expanded: write ${%.*s}, or $$ for a literal $",
                     (int)n, p, x->whole, (int)n - 1, p + 1);
            return -1;
        } else if (next == '{') {
            const char *close = closing_brace(p, end);
            if (!close) {
                snprintf(x->why, x->whylen, "unterminated '${' in '%s'", x->whole);
                return -1;
            }
            if (reference(x, p, close) != 0)
                return -1;
            p = close + 1;
        } else {
            if (put(x, "$", 1) != 0)
                return -1;
            p++;
        }
    }
    return 0;
}

char *dlg_expand_env(const char *in, char *why, size_t whylen)
{
    expander x = {.out = malloc(256), .cap = 256, .whole = in, .why = why, .whylen = whylen};
    if (!x.out) {
        snprintf(why, whylen, "out of memory expanding '%s'", in);
        return NULL;
    }
    x.out[0] = '\0';
    if (expand(&x, in, in + strlen(in)) != 0) {
        free(x.out);
        return NULL;
    }
    return x.out;
}
