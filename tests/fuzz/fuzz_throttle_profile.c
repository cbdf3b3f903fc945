/* Fuzzes the throttle backend's disk profile parser (conf/disks/X.ini):
 * any file gives either a profile or one error naming the file and a line
 * that exists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "fuzz_host.h"
#include "fuzz_target.h"
#include "throttle_profile.h"

/* "profile PATH:LINE: why" with 1 <= LINE <= the file's lines */
static void check_error(const fuzz_host *f, const char *path, long lines)
{
    char want[600];
    snprintf(want, sizeof want, "profile %s:", path);
    size_t n = strlen(want);
    FUZZ_CHECK(f->errors == 1 && strncmp(f->msg, want, n) == 0);
    char *end;
    long line = strtol(f->msg + n, &end, 10);
    FUZZ_CHECK(end != f->msg + n && *end == ':');
    FUZZ_CHECK(line >= 1 && line <= lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0;
    char path[512];
    if (fuzz_write_file(path, sizeof path, "disk.ini", data, size) != 0)
        return 0;
    fuzz_host f;
    fuzz_host_init(&f);
    thr_profile *p = malloc(sizeof *p);
    if (p && thr_profile_load(&f.host, path, p) != 0)
        check_error(&f, path, fuzz_count_lines(data, size));
    else if (p)
        FUZZ_CHECK(f.errors == 0);
    free(p);
    fuzz_remove_file(path);
    return 0;
}
