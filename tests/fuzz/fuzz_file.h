/* For parsers that take a path: the input goes to a private file (one
 * folder per process) that the target reads back. */
#ifndef DLG_FUZZ_FILE_H
#define DLG_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process's folder: on tmpfs where there is one (/dev/shm), as every
 * input is a file written, read, maybe synced and removed: on a disk that
 * is most of a target's time (the tuning record's 2000 runs: 3.7 -> 0.9 s) */
static inline void fuzz_dir(char *dir, size_t len)
{
    snprintf(dir, len, "%s/dlg-fuzz-%ld", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
             (long)getpid());
}

/* dir/name, written with data; 0, or -1 when it cannot be written. */
static inline int fuzz_write_file(char *path, size_t len, const char *name, const uint8_t *data,
                                  size_t size)
{
    char dir[64];
    fuzz_dir(dir, sizeof dir);
    (void)mkdir(dir, 0700);
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t put = size ? fwrite(data, 1, size, f) : 0;
    return fclose(f) == 0 && put == size ? 0 : -1;
}

/* Removes what fuzz_write_file made (the folder once it is empty). */
static inline void fuzz_remove_file(const char *path)
{
    char dir[64];
    unlink(path);
    fuzz_dir(dir, sizeof dir);
    (void)rmdir(dir);
}

/* Lines a text of size bytes has (a last line without '\n' counts). */
static inline long fuzz_count_lines(const uint8_t *data, size_t size)
{
    long n = 0;
    for (size_t i = 0; i < size; i++)
        n += data[i] == '\n';
    return n + (size && data[size - 1] != '\n');
}

/* For an error "PATH:LINE: ...": LINE; 0 for "PATH: ..."; -1 for an
 * error that does not start with PATH. */
static inline long fuzz_err_line(const char *err, const char *path)
{
    size_t n = strlen(path);
    if (strncmp(err, path, n) != 0 || err[n] != ':')
        return -1;
    if (err[n + 1] < '0' || err[n + 1] > '9')
        return 0;
    char *end;
    long line = strtol(err + n + 1, &end, 10);
    return *end == ':' ? line : -1;
}

#endif
