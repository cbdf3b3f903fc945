#define _GNU_SOURCE
#include "csv_rotate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *csv_rotated_path(const char *path, int n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) /* no extension, or a dot file: append */
        dot = base + strlen(base);
    char *out = NULL;
    if (asprintf(&out, "%.*s.%d%s", (int)(dot - path), path, n, dot) < 0)
        return NULL;
    return out;
}
