/* inih fed one whole line per call (see ini_lines.h). */
#define _GNU_SOURCE
#include "ini_lines.h"

#include <errno.h>

#include <stdlib.h>
#include <string.h>

static void refuse(rep_ini *ini, const char *why)
{
    if (!ini->bad_line) {
        ini->bad_line = ini->line;
        snprintf(ini->bad, sizeof ini->bad, "%s", why);
    }
}

/* The section before a new header (or the end) had no keys. */
static void note_empty(rep_ini *ini)
{
    if (ini->section_line && !ini->keys_since && !ini->empty_line)
        ini->empty_line = ini->section_line;
}

static char *read_line(char *str, int num, void *stream)
{
    rep_ini *ini = stream;
    ssize_t n = getline(&ini->buf, &ini->cap, ini->f);
    ini->line++;
    if (n < 0) {
        if (!feof(ini->f)) /* not the end: getline ran out of memory, or the disk failed */
            refuse(ini, "cannot read the line (out of memory or an I/O error)");
        return NULL;
    }
    size_t len = (size_t)n - (n > 0 && ini->buf[n - 1] == '\n');
    ini->buf[len] = '\0';
    const char *t = ini->buf + strspn(ini->buf, " \t");
    str[0] = '\0';
    if (!ini->first_line && *t && *t != ';' && *t != '#')
        ini->first_line = ini->line;
    if (strlen(ini->buf) != len) {
        refuse(ini, "a NUL byte in the line (not a text file? UTF-16?)");
    } else if (len > (size_t)num - 1 && *t != ';' && *t != '#') {
        char why[64];
        snprintf(why, sizeof why, "line is longer than %d characters", num - 1);
        refuse(ini, why);
    } else if (len <= (size_t)num - 1) {
        /* no leading blanks: inih would take an indented "key = v" as the
         * continuation of the previous value (catalogs have none) */
        memcpy(str, t, len + 1 - (size_t)(t - ini->buf));
        if (*t == '[') {
            note_empty(ini);
            ini->section_line = ini->line;
            ini->keys_since = 0;
        } else if (*t && *t != ';' && *t != '#') {
            ini->keys_since++;
        }
    } /* a long comment: an empty line in its place keeps the numbering */
    return str;
}

int rep_ini_parse(rep_ini *ini, const char *path, ini_handler handler, void *user)
{
    memset(ini, 0, sizeof *ini);
    if (!(ini->f = fopen(path, "r"))) { /* fopen allocates its FILE: ENOMEM is no missing file */
        ini->open_errno = errno;
        return errno == ENOMEM ? -2 : -1;
    }
    int line = ini_parse_stream(read_line, ini, handler, user);
    note_empty(ini);
    fclose(ini->f);
    free(ini->buf);
    ini->f = NULL;
    ini->buf = NULL;
    if (line == -2)
        return -2;
    if (ini->bad_line && (line <= 0 || ini->bad_line <= line))
        return ini->bad_line;
    ini->bad[0] = '\0'; /* the handler's or a syntax error came first */
    return line;
}
