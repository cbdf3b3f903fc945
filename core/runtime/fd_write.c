#include "fd_write.h"

#include <errno.h>
#include <unistd.h>

int dlg_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}
