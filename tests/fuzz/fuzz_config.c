/* Fuzzes the INI configuration loader (core/runtime/config.c) and --set.
 * The input is up to three parts split at 0x1E bytes (ASCII's record
 * separator; NUL bytes stay in the files): main.ini, inc.ini
 * (what "include = inc.ini" reads) and a --set assignment.  Any input gives
 * a configuration whose entries name a file and a line that exist, or one
 * error that names the file and such a line. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_file.h"
#include "fuzz_target.h"

typedef struct part {
    const uint8_t *p;
    size_t n;
} part;

static part next_part(const uint8_t **data, size_t *size)
{
    part r = {*data, *size};
    const uint8_t *z = memchr(*data, 0x1e, *size);
    if (z) {
        r.n = (size_t)(z - *data);
        *size -= r.n + 1;
        *data = z + 1;
    } else {
        *size = 0;
    }
    return r;
}

/* 1 <= line <= the lines of the file called name (main or inc). */
static void check_line(const char *file, long line, const char *main_path, const char *inc_path,
                       const part *m, const part *inc)
{
    if (strcmp(file, main_path) == 0)
        FUZZ_CHECK(line >= 1 && line <= fuzz_count_lines(m->p, m->n));
    else if (strcmp(file, inc_path) == 0)
        FUZZ_CHECK(line >= 1 && line <= fuzz_count_lines(inc->p, inc->n));
    else
        FUZZ_CHECK(0);
}

/* "FILE:LINE: why" or "FILE: why", FILE being main or inc. */
static void check_error(const char *err, const char *main_path, const char *inc_path, const part *m,
                        const part *inc)
{
    const char *colon = strchr(err, ':');
    FUZZ_CHECK(colon && colon[1] != '\0');
    char file[600];
    size_t n = (size_t)(colon - err);
    FUZZ_CHECK(n < sizeof file);
    memcpy(file, err, n);
    file[n] = '\0';
    FUZZ_CHECK(strcmp(file, main_path) == 0 || strcmp(file, inc_path) == 0);
    char *end;
    long line = strtol(colon + 1, &end, 10);
    if (end != colon + 1 && *end == ':')
        check_line(file, line, main_path, inc_path, m, inc);
}

static bool unsafe(const uint8_t *data, size_t size)
{
    /* absolute and ../ includes or ${VAR} paths could reach any file (or a FIFO) */
    return memchr(data, '/', size) || memmem(data, size, "${", 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536 || unsafe(data, size))
        return 0;
    part m = next_part(&data, &size), inc = next_part(&data, &size), set = next_part(&data, &size);
    char main_path[512], inc_path[512];
    if (fuzz_write_file(main_path, sizeof main_path, "main.ini", m.p, m.n) != 0 ||
        fuzz_write_file(inc_path, sizeof inc_path, "inc.ini", inc.p, inc.n) != 0)
        return 0;
    dlg_config c;
    char err[2048] = "";
    if (dlg_config_load(&c, main_path, err, sizeof err) != 0) {
        check_error(err, main_path, inc_path, &m, &inc);
    } else {
        for (size_t i = 0; i < c.n; i++)
            for (size_t k = 0; k < c.sections[i].n; k++) {
                const dlg_entry *e = &c.sections[i].entries[k];
                FUZZ_CHECK(e->key[0] && e->value[0]);
                check_line(e->file, e->line, main_path, inc_path, &m, &inc);
            }
        char *assignment = strndup((const char *)set.p, set.n);
        if (assignment && dlg_config_set(&c, assignment, err, sizeof err) != 0)
            FUZZ_CHECK(strncmp(err, "--set ", 6) == 0);
        free(assignment);
    }
    dlg_config_free(&c);
    fuzz_remove_file(inc_path);
    fuzz_remove_file(main_path);
    return 0;
}
