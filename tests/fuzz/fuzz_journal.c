/* Fuzzes the run journal's reader (core/runtime/journal.c), which
 * `dlgauge run --resume` reads back after a crash.  Resumed with the hash
 * of its own header, a journal gives one done entry per "done" line, or
 * one error naming the file; a resumed journal takes one more record and
 * resumes again with it. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "fuzz_target.h"
#include "journal.h"

/* The header's last word (the configuration hash it was made for), or "-". */
static void header_hash(const uint8_t *data, size_t size, char *hash, size_t len)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t n = nl ? (size_t)(nl - data) : size, w = n;
    while (w > 0 && data[w - 1] != ' ')
        w--;
    if (n - w == 0 || n - w >= len || memchr(data + w, '\0', n - w)) {
        snprintf(hash, len, "-");
        return;
    }
    memcpy(hash, data + w, n - w);
    hash[n - w] = '\0';
}

/* Whole lines after the first whose record kind (first word, up to a NUL)
 * is "done". */
static size_t count_done(const uint8_t *data, size_t size)
{
    size_t n = 0;
    const uint8_t *p = memchr(data, '\n', size), *end = data + size;
    for (p = p ? p + 1 : end; p < end;) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break; /* a torn last line is no record */
        n += nl - p >= 4 && memcmp(p, "done", 4) == 0 && (nl - p == 4 || p[4] == ' ' || p[4] == '\0');
        p = nl + 1;
    }
    return n;
}

/* The header's FORMAT, read as a long long (saturating), as a number past
 * INT_MAX must not read as format 1. */
static long long header_format(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t n = nl ? (size_t)(nl - data) : size;
    char *head = malloc(n + 1);
    FUZZ_CHECK(head);
    memcpy(head, data, n);
    head[n] = '\0';
    long long f = strtoll(head + strlen("dlgauge-journal"), NULL, 10);
    free(head);
    return f;
}

static size_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (size_t)st.st_size : (size_t)-1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    char path[512], hash[32], err[2048] = "";
    if (fuzz_write_file(path, sizeof path, "journal", data, size) != 0)
        return 0;
    header_hash(data, size, hash, sizeof hash);
    dlg_journal j;
    if (dlg_journal_resume(&j, path, hash, err, sizeof err) != 0) {
        FUZZ_CHECK(strncmp(err, path, strlen(path)) == 0 && !strchr(err, '\n') && j.fd < 0);
        dlg_journal_close(&j);
        fuzz_remove_file(path);
        return 0;
    }
    FUZZ_CHECK(size > 16 && memcmp(data, "dlgauge-journal", 15) == 0 && header_format(data, size) == 1);
    FUZZ_CHECK(j.ndone == count_done(data, size) && j.nfailed <= j.ndone);
    FUZZ_CHECK(j.end == file_size(path) && j.end <= size); /* a torn tail is cut */
    FUZZ_CHECK(!j.nunknown || (j.unknown_line >= 2 && j.unknown_kind[0]));
    char run_id[sizeof j.run_id];
    size_t ndone = j.ndone;
    memcpy(run_id, j.run_id, sizeof run_id);
    FUZZ_CHECK(dlg_journal_record(&j, "fuzz-job", 7, "ok", err, sizeof err) == 0);
    dlg_journal_close(&j);
    /* what a resumed run appends reads back with the rest */
    FUZZ_CHECK(dlg_journal_resume(&j, path, hash, err, sizeof err) == 0);
    FUZZ_CHECK(j.ndone == ndone + 1 && dlg_journal_is_done(&j, "fuzz-job", 7));
    FUZZ_CHECK(strcmp(j.run_id, run_id) == 0);
    dlg_journal_close(&j);
    fuzz_remove_file(path);
    return 0;
}
