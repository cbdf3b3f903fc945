/* Fuzzes the results readers of `dlgauge report` (core/report: CSV via
 * libcsv, JSON Lines via json-c, the row checks).  Any file gives rows that
 * name a line of it that holds such a row, or one error naming the file. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "fuzz_target.h"
#include "rows.h"

/* The text of line (1-based) of data, its length in *len; NULL past the end. */
static const uint8_t *line_at(const uint8_t *data, size_t size, long line, size_t *len)
{
    const uint8_t *p = data, *end = data + size;
    for (long i = 1; i < line && p < end; i++) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    if (p >= end)
        return NULL;
    const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
    *len = (size_t)((nl ? nl : end) - p);
    return p;
}

/* A row's line exists; a JSON row's starts with '{'; a CSV row's is not
 * blank (checked where no quoted cell can span lines). */
static void check_row(const rep_row *r, const uint8_t *data, size_t size, bool jsonl)
{
    size_t len = 0;
    const uint8_t *t = line_at(data, size, r->line, &len);
    FUZZ_CHECK(r->line >= 1 && t);
    size_t lead = 0;
    while (lead < len && (t[lead] == ' ' || t[lead] == '\t' || t[lead] == '\r')) /* JSON's blanks */
        lead++;
    if (jsonl)
        FUZZ_CHECK(lead < len && t[lead] == '{');
    else if (!memchr(data, '"', size) && !memchr(data, '\r', size))
        FUZZ_CHECK(lead < len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char path[512];
    if (fuzz_write_file(path, sizeof path, "results", data, size) != 0)
        return 0;
    rep_rows rs = {0};
    char err[1024] = "";
    size_t lead = 0;
    while (lead < size && strchr(" \t\r\n\v\f", data[lead]) && data[lead])
        lead++;
    bool jsonl = lead < size && data[lead] == '{';
    if (rep_read_file(&rs, path, err, sizeof err) != 0) {
        FUZZ_CHECK(strncmp(err, path, strlen(path)) == 0);
    } else {
        for (size_t i = 0; i < rs.n; i++)
            check_row(&rs.v[i], data, size, jsonl);
        err[0] = '\0';
        if (rep_rows_validate(&rs, err, sizeof err) != 0)
            FUZZ_CHECK(err[0] != '\0');
    }
    for (size_t i = 0; i < rs.nwarnings; i++)
        FUZZ_CHECK(strncmp(rs.warnings[i], path, strlen(path)) == 0);
    rep_rows_free(&rs);
    fuzz_remove_file(path);
    return 0;
}
