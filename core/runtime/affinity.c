#include "affinity.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int dlg_cpus_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    return CPU_COUNT(&set);
}

int dlg_pin_cpus(int n, cpu_set_t *saved, char *why, size_t whylen)
{
    if (sched_getaffinity(0, sizeof *saved, saved) != 0) {
        snprintf(why, whylen, "sched_getaffinity: %s", strerror(errno));
        return -1;
    }
    int avail = CPU_COUNT(saved);
    if (n == 0)
        return avail;
    if (n > avail) {
        snprintf(why, whylen, "cpus = %d, but only %d CPUs are available to this process", n, avail);
        return -1;
    }
    cpu_set_t want;
    CPU_ZERO(&want);
    int taken = 0;
    for (int c = 0; c < CPU_SETSIZE && taken < n; c++)
        if (CPU_ISSET(c, saved)) {
            CPU_SET(c, &want);
            taken++;
        }
    if (sched_setaffinity(0, sizeof want, &want) != 0) {
        snprintf(why, whylen, "sched_setaffinity: %s", strerror(errno));
        return -1;
    }
    return n;
}

void dlg_unpin_cpus(const cpu_set_t *saved) { sched_setaffinity(0, sizeof *saved, saved); }
