#include "affinity.h"

#include "cgroup.h"
#include "topology.h"

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

void dlg_cpuset_format(const cpu_set_t *set, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && o < len; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        o += (size_t)snprintf(buf + o, len - o, e > c ? "%s%d-%d" : "%s%d", o ? "," : "", c, e);
        c = e;
    }
}

int dlg_cpus_check_limits(const char *cpus, int n, const dlg_cgroup_limits *env, char *why, size_t whylen)
{
    int count, first, last;
    if (dlg_cpus_parse(cpus, &count, &first, &last, why, whylen) != 0)
        return -1;
    /* cpus = 0 is "all this process may use", quota included */
    if (count == 0 || env->cpu_quota <= 0 || n <= env->cpu_quota + 1e-6)
        return 0;
    int fit = (int)(env->cpu_quota + 1e-6);
    char hint[64] = "cpus = 0 (all it may use)";
    if (fit > 0)
        snprintf(hint, sizeof hint, "cpus = %d or fewer, or cpus = 0 (all it may use)", fit);
    snprintf(why, whylen,
             "cpus = %s, but this process's own cgroup allows only %.2f CPUs of time (%s): the cell would not "
             "have %d vCPUs; use %s",
             cpus, env->cpu_quota, env->cpu_where, n, hint);
    return -1;
}

/* More OpenMP threads than CPU time makes every barrier wait for a
 * thread that CFS throttled, so a quota caps cpus = 0's pool; rounding
 * down leaves at most a fraction of a CPU unused instead. */
int dlg_cpus_granted(int count, int available, double cell_quota, double env_quota)
{
    if (count > 0)
        return count;
    double q = cell_quota > 0 && (env_quota <= 0 || cell_quota < env_quota) ? cell_quota : env_quota;
    if (q <= 0 || available <= q + 1e-6)
        return available;
    int fit = (int)(q + 1e-6);
    return fit > 0 ? fit : 1;
}

int dlg_pin_cpus(const char *cpus, const dlg_cgroup_limits *env, cpu_set_t *saved, char *list, size_t listlen,
                 char *why, size_t whylen)
{
    if (sched_getaffinity(0, sizeof *saved, saved) != 0) {
        snprintf(why, whylen, "sched_getaffinity: %s", strerror(errno));
        return -1;
    }
    cpu_set_t want;
    int n = dlg_cpus_choose(cpus, saved, &want, why, whylen);
    if (n < 0 || dlg_cpus_check_limits(cpus, n, env, why, whylen) != 0)
        return -1;
    if (sched_setaffinity(0, sizeof want, &want) != 0) {
        snprintf(why, whylen, "sched_setaffinity: %s", strerror(errno));
        return -1;
    }
    dlg_cpuset_format(&want, list, listlen);
    return n;
}

void dlg_unpin_cpus(const cpu_set_t *saved) { sched_setaffinity(0, sizeof *saved, saved); }
