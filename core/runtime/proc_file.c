/* Reading /proc and /sys without allocating (proc_file.h). */
#include "proc_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* read(2) across signals: bytes read, 0 at the end, -1 on an error. */
static ssize_t read_some(int fd, char *buf, size_t len)
{
    ssize_t n;
    do
        n = read(fd, buf, len);
    while (n < 0 && errno == EINTR);
    return n;
}

int dlg_file_line(const char *path, char *out, size_t len)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t have = 0;
    ssize_t n = 1;
    while (have + 1 < len && !memchr(out, '\n', have) && (n = read_some(fd, out + have, len - 1 - have)) > 0)
        have += (size_t)n;
    int saved = errno;
    close(fd);
    out[n < 0 ? 0 : have] = '\0'; /* a failed read gives no half line */
    out[strcspn(out, "\n")] = '\0';
    errno = saved;
    return n < 0 ? -1 : 0;
}

/* line is "key: value", with spaces or tabs before the colon (cpuinfo's
 * "cpu MHz\t\t: 2596"): its value into out.  "cpu" is not "cpu MHz". */
static bool key_value(const char *line, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    if (strncmp(line, key, kl) != 0)
        return false;
    const char *v = line + kl;
    v += strspn(v, " \t");
    if (*v != ':')
        return false;
    v++;
    v += strspn(v, " \t");
    snprintf(out, len, "%s", v);
    return true;
}

int dlg_file_lines(const char *path, bool (*each)(const char *line, void *ctx), void *ctx)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[16384];
    size_t have = 0;
    ssize_t n = 1;
    bool more = true, skip = false; /* skip: the rest of a line cut at the buffer */
    while (more) {
        if (n > 0 && have + 1 < sizeof buf) { /* more of the file behind what is left */
            n = read_some(fd, buf + have, sizeof buf - 1 - have);
            have += n > 0 ? (size_t)n : 0;
        }
        if (have == 0)
            break;
        char *nl = memchr(buf, '\n', have);
        if (!nl && n > 0 && have + 1 < sizeof buf)
            continue; /* the line goes on */
        size_t line = nl ? (size_t)(nl - buf) : have;
        buf[line] = '\0';
        if (!skip)
            more = each(buf, ctx);
        skip = !nl && n > 0; /* cut at the buffer: its rest is no line */
        size_t used = nl ? line + 1 : have;
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return n < 0 ? -1 : 0;
}

typedef struct key_find {
    const char *key;
    char *out;
    size_t len;
    bool found;
} key_find;

static bool find_key(const char *line, void *ctx)
{
    key_find *k = ctx;
    k->found = key_value(line, k->key, k->out, k->len);
    return !k->found;
}

int dlg_proc_value(const char *path, const char *key, char *out, size_t len)
{
    key_find k = {key, out, len, false};
    return dlg_file_lines(path, find_key, &k) == 0 && k.found ? 0 : -1;
}
