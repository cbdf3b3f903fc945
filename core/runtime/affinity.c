#include "affinity.h"

#include "cgroup.h"
#include "topology.h"

#include <dlgauge/plugin.h>

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

/* The CPUs each of share.count ranks on one set of avail takes: cpus = N,
 * or an even part of them for cpus = 0; 0 for a range (as given). */
static int slice_size(const char *cpus, int avail, dlg_cpu_share share)
{
    int count, first, last;
    char why[64];
    if (share.count <= 1 || dlg_cpus_parse(cpus, &count, &first, &last, why, sizeof why) != 0 || first >= 0)
        return 0;
    if (count > 0)
        return count;
    return avail / share.count > 0 ? avail / share.count : 1;
}

int dlg_cpus_slice(const char *cpus, const dlg_cpuset *allowed, dlg_cpu_share share, dlg_cpuset *out, char *why,
                   size_t whylen)
{
    int avail = dlg_cpuset_count(allowed), per = slice_size(cpus, avail, share);
    if (per <= 0 || per > avail) /* alone, a range, or more than there are (its error) */
        return dlg_cpus_choose(cpus, allowed, out, why, whylen);
    int slot = share.index % (avail / per);
    char n[16];
    snprintf(n, sizeof n, "%d", per);
    dlg_cpuset left;
    if (dlg_cpuset_init(&left, allowed->nbits) != 0 || dlg_cpuset_copy(&left, allowed) != 0) {
        dlg_cpuset_fini(&left);
        snprintf(why, whylen, "out of memory");
        return -DLG_ENOMEM;
    }
    int got = -1;
    for (int k = 0; k <= slot; k++) {
        if ((got = dlg_cpus_choose(n, &left, out, why, whylen)) < 0)
            break;
        for (int c = 0; c < out->nbits; c++)
            if (dlg_cpuset_has(out, c))
                CPU_CLR_S((size_t)c, left.size, left.bits);
    }
    dlg_cpuset_fini(&left);
    return got;
}

bool dlg_cpus_slices_overlap(const char *cpus, int avail, dlg_cpu_share share, char *warn, size_t warnlen)
{
    if (share.count <= 1)
        return false;
    int per = slice_size(cpus, avail, share);
    if (per <= 0) {
        snprintf(warn, warnlen,
                 "the %d ranks on this node that mpirun did not bind all run on cpus = %s, the same CPUs", share.count,
                 cpus);
        return true;
    }
    if (per > avail || (long long)per * share.count <= avail)
        return false; /* too many for one rank is its own error */
    snprintf(warn, warnlen,
             "%d ranks on this node share its %d CPUs (mpirun did not bind them): %d x %d CPU%s do not fit, so ranks "
             "share CPUs and each one's figures are not those of %d CPU%s of its own; bind the ranks (mpirun "
             "--bind-to core) or run fewer, or lower cpus",
             share.count, avail, share.count, per, per == 1 ? "" : "s", per, per == 1 ? "" : "s");
    return true;
}

int dlg_pin_cpus(const char *cpus, const dlg_cgroup_limits *env, dlg_cpu_share share, dlg_cpuset *saved, char *list,
                 size_t listlen, char *why, size_t whylen)
{
    if (dlg_cpuset_get_affinity(saved) != 0) {
        snprintf(why, whylen, "sched_getaffinity: %s", strerror(errno));
        return errno == ENOMEM ? -DLG_ENOMEM : -1;
    }
    dlg_cpuset want;
    if (dlg_cpuset_init(&want, saved->nbits) != 0) {
        snprintf(why, whylen, "out of memory");
        return -DLG_ENOMEM;
    }
    int n = dlg_cpus_slice(cpus, saved, share, &want, why, whylen);
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
