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

int dlg_proc_value(const char *path, const char *key, char *out, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[16384];
    size_t have = 0;
    bool end = false, found = false;
    while (!found) {
        if (!end && have + 1 < sizeof buf) { /* more of the file behind what is left */
            ssize_t n = read_some(fd, buf + have, sizeof buf - 1 - have);
            end = n <= 0;
            have += n > 0 ? (size_t)n : 0;
        }
        if (have == 0)
            break;
        char *nl = memchr(buf, '\n', have);
        if (!nl && !end && have + 1 < sizeof buf)
            continue; /* the line goes on */
        size_t line = nl ? (size_t)(nl - buf) : have; /* a longer line is cut here */
        buf[line] = '\0';
        found = key_value(buf, key, out, len);
        size_t used = nl ? line + 1 : have;
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    close(fd);
    return found ? 0 : -1;
}
