/* Line iteration for the small text formats (.idx, .lst, list files):
 * splits at '\n', drops a trailing '\r' and a leading UTF-8 BOM, counts
 * lines from 1.  Private to core/data. */
#ifndef DLG_DATA_TEXT_LINES_H
#define DLG_DATA_TEXT_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct text_lines {
    char *p, *end;
    size_t lineno;
} text_lines;

/* A UTF-8 byte order mark (Windows editors write one) is skipped: it would
 * otherwise become part of the first path or number. */
static inline void text_lines_init(text_lines *t, char *text, size_t len)
{
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
        text += 3;
        len -= 3;
    }
    t->p = text;
    t->end = text + len;
    t->lineno = 0;
}

/* Next line, NUL-terminated in place (the text must be writable); false at
 * the end.  *len excludes the terminator. */
static inline bool text_lines_next(text_lines *t, char **line, size_t *len)
{
    if (t->p >= t->end)
        return false;
    char *s = t->p, *nl = memchr(s, '\n', (size_t)(t->end - s));
    char *e = nl ? nl : t->end;
    t->p = nl ? nl + 1 : t->end;
    if (e > s && e[-1] == '\r')
        e--;
    *e = '\0';
    *line = s;
    *len = (size_t)(e - s);
    t->lineno++;
    return true;
}

static inline bool text_is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t')
            return false;
    return true;
}

#endif
