#include "affinity.h"

#include "cgroup.h"
#include "topology.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int dlg_cpus_available(void)
{
    dlg_cpuset set;
    int n = 1;
    if (dlg_cpuset_init(&set, 0) != 0)
        return n;
    if (dlg_cpuset_get_affinity(&set) == 0)
        n = dlg_cpuset_count(&set);
    dlg_cpuset_fini(&set);
    return n;
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

int dlg_pin_cpus(const char *cpus, const dlg_cgroup_limits *env, dlg_cpuset *saved, char *list, size_t listlen,
                 char *why, size_t whylen)
{
    if (dlg_cpuset_get_affinity(saved) != 0) {
        snprintf(why, whylen, "sched_getaffinity: %s", strerror(errno));
        return -1;
    }
    dlg_cpuset want;
    if (dlg_cpuset_init(&want, saved->nbits) != 0) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    int n = dlg_cpus_choose(cpus, saved, &want, why, whylen);
    if (n >= 0 && dlg_cpus_check_limits(cpus, n, env, why, whylen) != 0)
        n = -1;
    if (n >= 0 && dlg_cpuset_set_affinity(&want) != 0) {
        snprintf(why, whylen, "sched_setaffinity: %s", strerror(errno));
        n = -1;
    }
    if (n >= 0)
        dlg_cpuset_format(&want, list, listlen);
    dlg_cpuset_fini(&want);
    return n;
}

void dlg_unpin_cpus(const dlg_cpuset *saved) { dlg_cpuset_set_affinity(saved); }
