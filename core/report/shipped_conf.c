/* The shipped conf/ found from the executable, as its plugins are
 * (beside the executable: exe_dir.h): no path of the machine that built it is
 * compiled in, so an installed or copied dlgauge reads its own files,
 * never a checkout that happens to be where it was built. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exe_dir.h"
#include "shipped_conf.h"

#ifndef DLG_CONF_FROM_BIN
#define DLG_CONF_FROM_BIN "../share/dlgauge/conf" /* GNUInstallDirs' defaults */
#endif

int rep_shipped_conf(char *dir, size_t len)
{
    char exe[PATH_MAX];
    if (dlg_exe_dir(exe, sizeof exe) != 0)
        return -1;
    char cand[PATH_MAX + sizeof DLG_CONF_FROM_BIN + 1], real[PATH_MAX];
    snprintf(cand, sizeof cand, "%s/%s", exe, DLG_CONF_FROM_BIN);
    const char *path = realpath(cand, real) ? real : cand;
    if (strlen(path) >= len)
        return -1;
    memcpy(dir, path, strlen(path) + 1);
    return 0;
}
