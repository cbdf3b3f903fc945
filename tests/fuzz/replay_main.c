/* Replays fuzz inputs through a target's LLVMFuzzerTestOneInput in the
 * normal build: every file in each directory given on the command line
 * (seed corpus and saved crashes, kept as regression tests).  A missing
 * directory is skipped; no input at all is a failure. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_target.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (!buf)
        return -1;
    /* An exact-size copy so ASan catches reads past the input. */
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            char path[4096];
            struct stat st;
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            if (run_file(path) != 0) {
                fprintf(stderr, "%s: cannot read\n", path);
                closedir(d);
                return 1;
            }
            files++;
        }
        closedir(d);
    }
    printf("replayed %d inputs\n", files);
    return files > 0 ? 0 : 1;
}
