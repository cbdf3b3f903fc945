/* Every output of report and compare as valid UTF-8: results carry text
 * as the machine gave it (a Latin-1 host name, an error message with a
 * path's raw bytes, a cell cut mid-character by a fixed buffer), which a
 * browser, a Markdown renderer or a terminal would otherwise garble or
 * refuse. */
#define _GNU_SOURCE
#include "utf8_out.h"
#include "mem_out.h"

#include <stdbool.h>
#include <stdlib.h>

/* U+FFFD REPLACEMENT CHARACTER */
static const char replacement[] = "\xef\xbf\xbd";

/* The length of the valid UTF-8 sequence at s (of n bytes left), or 0
 * with *bad the bytes of its invalid start to replace by one U+FFFD: the
 * maximal subpart of an ill-formed sequence (Unicode, chapter 3), so that
 * a cut character is one replacement and the byte after it is kept. */
static size_t seq_len(const unsigned char *s, size_t n, size_t *bad)
{
    unsigned char c = s[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        need = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        need = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80; /* no overlong form */
        hi = c == 0xed ? 0x9f : 0xbf; /* no surrogate */
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf; /* nothing past U+10FFFF */
    } else {
        *bad = 1;
        return 0;
    }
    size_t i = 1;
    for (; i < need && i < n; i++) {
        unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xbf;
        if (s[i] < l || s[i] > h)
            break;
    }
    if (i == need)
        return need;
    *bad = i;
    return 0;
}

void rep_utf8_write(FILE *f, const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t start = 0, i = 0; /* s[start..i) is valid and not yet written */
    while (i < n) {
        size_t bad = 0, len = seq_len(s + i, n - i, &bad);
        if (len) {
            i += len;
            continue;
        }
        fwrite(s + start, 1, i - start, f);
        fputs(replacement, f);
        i += bad;
        start = i;
    }
    fwrite(s + start, 1, i - start, f);
}

bool rep_utf8_valid(const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0, bad, len; i < n; i += len)
        if ((len = seq_len(s + i, n - i, &bad)) == 0)
            return false;
    return true;
}

int rep_utf8_render(FILE *f, rep_render_fn fn, const void *ctx)
{
    rep_mem_out m;
    FILE *mem = rep_mem_open(&m);
    if (!mem) /* out of memory: as written, rather than nothing */
        return fn(f, ctx);
    int lost = fn(mem, ctx);
    if (rep_mem_close(mem, &m) != 0) /* the same, written straight to f */
        return fn(f, ctx);
    rep_utf8_write(f, m.buf, m.len);
    free(m.buf);
    return lost;
}

size_t rep_utf8_columns(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80; /* continuation bytes add none */
    return n;
}
