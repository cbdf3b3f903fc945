/* The peer of runner-overhead.sh: the least any timing harness must do per
 * step (two clock reads around an indirect call), with no histogram, no
 * progress, no accounting.  Usage: bare_loop PLUGIN.so WORKLOAD STEPS */
#define _GNU_SOURCE
#include <dlgauge/plugin.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    void *dl = dlopen(argv[1], RTLD_NOW);
    dlg_plugin_entry_fn entry = dl ? (dlg_plugin_entry_fn)dlsym(dl, DLG_PLUGIN_ENTRY_SYMBOL) : NULL;
    if (!entry)
        return 2;
    const dlg_workload_ops *ops = NULL;
    for (const dlg_plugin_desc *const *d = entry()->items; *d; d++)
        if (strcmp((*d)->name, argv[2]) == 0)
            ops = (*d)->ops;
    if (!ops)
        return 2;
    long steps = atol(argv[3]);
    void *state = NULL;
    dlg_job_info job = {.struct_size = sizeof job, .job = "bare", .cpus = 1, .seed = 1};
    if (ops->setup(NULL, NULL, &job, &state) != 0)
        return 1;
    uint64_t sink = 0, start = now_ns();
    for (long i = 0; i < steps; i++) {
        dlg_step s = {0};
        uint64_t t0 = now_ns();
        ops->step(state, &s);
        sink += now_ns() - t0 + s.items;
    }
    double ns = (double)(now_ns() - start) / (double)steps;
    ops->teardown(state);
    printf("%.1f %llu\n", ns, (unsigned long long)(sink & 1));
    return 0;
}
