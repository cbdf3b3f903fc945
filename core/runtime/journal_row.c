#define _GNU_SOURCE
#include "journal_row.h"

#include "fd_write.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* point_wire.c reads and writes frames on a descriptor: an anonymous
 * in-memory file gives it one (no file in /tmp, nothing left behind). */
static int mem_fd(void) { return memfd_create("dlgauge-row", MFD_CLOEXEC); }

char *dlg_journal_row_encode(const dlg_point *p)
{
    int fd = mem_fd();
    if (fd < 0)
        return NULL;
    char *hex = NULL;
    unsigned char *bin = NULL;
    struct stat st;
    int e = -dlg_wire_send(fd, p);
    if (e == 0 && (fstat(fd, &st) != 0 || !(bin = malloc((size_t)st.st_size + 1)) ||
                   !(hex = malloc(2 * (size_t)st.st_size + 1))))
        e = errno ? errno : ENOMEM;
    if (e == 0 && pread(fd, bin, (size_t)st.st_size, 0) != st.st_size)
        e = EIO;
    if (e == 0) {
        static const char digits[] = "0123456789abcdef";
        for (off_t i = 0; i < st.st_size; i++) {
            hex[2 * i] = digits[bin[i] >> 4];
            hex[2 * i + 1] = digits[bin[i] & 15];
        }
        hex[2 * st.st_size] = '\0';
    }
    free(bin);
    close(fd);
    if (e != 0) {
        free(hex);
        errno = e;
        return NULL;
    }
    return hex;
}

bool dlg_journal_row_is_hex(const char *s)
{
    size_t n = strspn(s, "0123456789abcdef");
    return n > 0 && s[n] == '\0' && n % 2 == 0;
}

static int nibble(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

int dlg_journal_row_decode(const char *hex, dlg_wire_point *out)
{
    memset(out, 0, sizeof *out);
    if (!dlg_journal_row_is_hex(hex))
        return -1;
    size_t n = strlen(hex) / 2;
    unsigned char *bin = malloc(n);
    int fd = bin ? mem_fd() : -1;
    for (size_t i = 0; bin && i < n; i++)
        bin[i] = (unsigned char)(nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]));
    int rc = fd >= 0 && dlg_write_all(fd, bin, n) == 0 && lseek(fd, 0, SEEK_SET) == 0 ? dlg_wire_recv(fd, out) : -1;
    free(bin);
    if (fd >= 0)
        close(fd);
    return rc == 1 ? 0 : -1;
}
