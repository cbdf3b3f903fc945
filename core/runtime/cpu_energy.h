/* CPU package energy during timed steps, from the powercap sysfs (RAPL):
 * per package zone intel-rapl:N ("package-N") and its DRAM subzone, read at
 * the start and end of each repetition's timed steps and in between often
 * enough that no counter wraps twice unseen.  Sources and choices are in
 * cpu_energy.c's header comment. */
#ifndef DLG_RUNTIME_CPU_ENERGY_H
#define DLG_RUNTIME_CPU_ENERGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DLG_RAPL_MAX_ZONES 32

typedef struct dlg_rapl_zone {
    char dir[64];      /* intel-rapl:0, intel-rapl:0:2 */
    char name[32];     /* package-0, dram */
    bool dram;         /* a DRAM subzone, else a package */
    uint64_t range_uj; /* max_energy_range_uj: the counter wraps past it (0: unknown) */
    uint64_t last_uj;  /* the last reading */
    uint64_t total_uj; /* advanced since dlg_rapl_begin */
    bool primed;       /* last_uj was read within this measurement */
    bool lost;         /* part of this measurement's energy is missing */
} dlg_rapl_zone;

typedef struct dlg_rapl {
    char root[448];
    dlg_rapl_zone z[DLG_RAPL_MAX_ZONES];
    size_t n;
    struct dlg_ticker *ticker; /* samples between begin and end */
    double t0;                 /* CLOCK_MONOTONIC seconds at begin */
} dlg_rapl;

/* What a cell's timed steps used, summed over its repetitions. */
typedef struct dlg_cpu_energy {
    bool have, have_dram;
    /* some repetition's counter missed part of its window (unreadable at
     * its start or its end, or back to a lower value with no range): a sum
     * would understate the energy, so no field is written */
    bool pkg_lost, dram_lost;
    double pkg_j, dram_j, seconds;
} dlg_cpu_energy;

/* The powercap root: $DLG_POWERCAP_ROOT (a test hook: a fake tree), else
 * /sys/class/powercap. */
const char *dlg_powercap_root(void);

/* Finds the package zones (and their DRAM subzones) under root (NULL: the
 * powercap root); *out is set (free()) when any is found, readable or not.
 * Returns 0 when every counter reads, else -1 with why ("<file>: <reason>"). */
int dlg_rapl_open(dlg_rapl **out, const char *root, char *why, size_t len);

/* Reads every counter and adds what it advanced since the last reading,
 * across one wrap at most.  A counter that cannot be read adds nothing. */
void dlg_rapl_sample(dlg_rapl *r);

/* Starts a measurement: counters read, totals zeroed, a thread sampling
 * every dlg_rapl_period_ms started.  end() stops the thread, samples a last
 * time and adds the measurement to *acc (have set). */
void dlg_rapl_begin(dlg_rapl *r);
void dlg_rapl_end(dlg_rapl *r, dlg_cpu_energy *acc);

/* Milliseconds between samples: a counter's range at 1 kW per zone, halved
 * (a package near 1 kW wraps a 2^32 uJ range in 4 s), within [10, 1000]. */
int dlg_rapl_period_ms(const dlg_rapl *r);

#endif
