/* LD_PRELOAD for lifecycle.sh: a `dlgauge __cell` process sleeps 1.5 s
 * before main(), i.e. before it can install its signal handlers, so that
 * a stop request sent then is the race a real Ctrl-C can hit. */
#include <stdio.h>
#include <string.h>
#include <time.h>

static int is_cell_process(void)
{
    char buf[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        if (strcmp(buf + i, "__cell") == 0)
            return 1;
    return 0;
}

__attribute__((constructor)) static void slow_start(void)
{
    struct timespec ts = {1, 500000000};
    if (is_cell_process())
        nanosleep(&ts, NULL);
}
