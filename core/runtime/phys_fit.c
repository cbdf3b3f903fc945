#include "phys_fit.h"

#include <stdio.h>
#include <unistd.h>

void dlg_bytes_txt(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        u++;
    }
    snprintf(buf, len, "%.1f %s", bytes, units[u]);
}

bool dlg_phys_fits(double need, char need_txt[DLG_BYTES_TXT], char phys_txt[DLG_BYTES_TXT])
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double phys = (double)pages * (double)page;
    if (pages <= 0 || page <= 0 || need <= phys)
        return true;
    dlg_bytes_txt(need_txt, DLG_BYTES_TXT, need);
    dlg_bytes_txt(phys_txt, DLG_BYTES_TXT, phys);
    return false;
}
