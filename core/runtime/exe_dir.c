#define _GNU_SOURCE
#include "exe_dir.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

int dlg_exe_dir(char *dir, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash || (size_t)(slash - exe) >= len)
        return -1;
    *slash = '\0';
    memcpy(dir, exe, (size_t)(slash - exe) + 1);
    return 0;
}
