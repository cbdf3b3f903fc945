#include "config_line.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void dlg_ini_strip_bom(char *line)
{
    if ((unsigned char)line[0] == 0xEF && (unsigned char)line[1] == 0xBB && (unsigned char)line[2] == 0xBF)
        memmove(line, line + 3, strlen(line + 3) + 1);
}

void dlg_ini_strip_comment(char *line)
{
    bool quoted = false;
    for (char *p = line; *p; p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (!quoted && (*p == ';' || *p == '#') && (p == line || isspace((unsigned char)p[-1]))) {
            *p = '\0';
            return;
        }
    }
}

int dlg_ini_unquote(char *value, char *why, size_t whylen)
{
    if (value[0] != '"')
        return 0;
    size_t n = strlen(value);
    const char *inner = strchr(value + 1, '"');
    if (n < 2 || inner != value + n - 1) {
        snprintf(why, whylen, "unbalanced quotes in '%s': quote the whole value (\"...\") or none of it", value);
        return -1;
    }
    memmove(value, value + 1, n - 2);
    value[n - 2] = '\0';
    return 0;
}
