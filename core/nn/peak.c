/* Peak FP32 FLOP/s = cores x clock x FLOPs/cycle (see peak.h). */
#define _GNU_SOURCE
#include "peak.h"

#include "tune.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The tuning record's key of the measured clock (GHz). */
#define TUNE_CLOCK "clock_ghz"

bool dlg_cpuinfo_field(const char *text, const char *key, char *out, size_t n)
{
    size_t kl = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, key, kl) != 0)
            continue;
        const char *c = l + kl, *e = strchr(l, '\n');
        while (*c == ' ' || *c == '\t')
            c++;
        if (*c != ':')
            continue;
        c++;
        while (*c == ' ' || *c == '\t')
            c++;
        size_t len = e ? (size_t)(e - c) : strlen(c);
        len = len < n - 1 ? len : n - 1;
        memcpy(out, c, len);
        out[len] = '\0';
        return true;
    }
    return false;
}

static bool has_flag(const char *flags, const char *f)
{
    size_t fl = strlen(f);
    for (const char *p = flags; (p = strstr(p, f)) != NULL; p += fl)
        if ((p == flags || p[-1] == ' ') && (p[fl] == ' ' || p[fl] == '\0'))
            return true;
    return false;
}

/* Highest "cpu MHz" over all CPUs (they differ under frequency scaling). */
static double max_mhz(const char *text)
{
    double best = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        if (strncmp(l, "cpu MHz", 7) == 0) {
            const char *c = strchr(l, ':');
            double v = c ? strtod(c + 1, NULL) : 0;
            best = v > best ? v : best;
        }
    return best;
}

/* FLOPs per cycle per core: SIMD lanes x 2 (FMA) x FMA units. */
static int flops_per_cycle(const char *flags, bool amd, int family, int model, const char **isa,
                           const char **why)
{
    if (has_flag(flags, "avx512f")) {
        *isa = "avx512";
        if (amd && family == 25) { /* Zen 4 runs AVX-512 on two 256-bit FMA pipes */
            *why = "AVX-512 on Zen 4's two 256-bit FMA pipes";
            return 32;
        }
        if (amd && family == 26) { /* Zen 5: 512-bit pipes, but not in the mobile parts */
            bool mobile = (model >= 0x20 && model < 0x30) || (model >= 0x60 && model < 0x70);
            *why = mobile ? "AVX-512 on mobile Zen 5's two 256-bit FMA pipes (Strix/Krackan Point)"
                          : "AVX-512 on Zen 5's two 512-bit FMA pipes";
            return mobile ? 32 : 64;
        }
        *why = amd ? "AVX-512 FMA on an AMD CPU after Zen 5, 2 units assumed"
                   : "AVX-512 FMA, 2 units assumed (1-unit Xeons reach half)";
        return 64;
    }
    if (has_flag(flags, "avx2") && has_flag(flags, "fma")) {
        *isa = "avx2+fma";
        if (amd && family == 23 && model < 0x30) { /* Zen 1/+ (Zen 2 is family 23 from model 0x30) */
            *why = "AVX2 FMA on Zen 1's 128-bit pipes";
            return 16;
        }
        *why = "AVX2 FMA on 2 units";
        return 32;
    }
    if (has_flag(flags, "avx")) {
        *isa = "avx";
        *why = "AVX: one 8-wide add and one 8-wide multiply per cycle";
        return 16;
    }
    if (has_flag(flags, "sse2")) {
        *isa = "sse2";
        *why = "SSE2: one 4-wide add and one 4-wide multiply per cycle";
        return 8;
    }
    *isa = "unknown";
    *why = "no known SIMD flags";
    return 0;
}

/* The bf16 rate (cpu-bf16, oneDNN's bf16 kernels) from the fp32 one:
 * AMX tiles where the CPU has them (oneDNN 2.6 uses them), else
 * AVX512_BF16's dot products (two bf16 multiply-adds per 32-bit lane:
 * twice the FMA rate), else bf16 emulated with fp32 FMAs. */
static int bf16_flops_per_cycle(const char *flags, int fp32, int amd_family, const char **isa, const char **why)
{
    if (has_flag(flags, "amx_bf16")) {
        *isa = "amx-bf16";
        *why = "AMX-BF16 tiles: 1024 bf16 FLOP/cycle";
        return 1024;
    }
    if (has_flag(flags, "avx512_bf16") && fp32 > 0) {
        *isa = "avx512-bf16";
        *why = amd_family == 25   ? "AVX512_BF16 dot products on Zen 4's two 256-bit pipes: 2x the FMA rate"
               : amd_family == 26 ? "AVX512_BF16 dot products on Zen 5's FMA pipes: 2x the FMA rate"
                                  : "AVX512_BF16 dot products, 2 units assumed: 2x the FMA rate";
        return 2 * fp32;
    }
    if (fp32 > 0)
        *why = "bf16 emulated with fp32 FMAs (no AVX512_BF16)";
    return fp32;
}

/* Sets the clock, the peak and the one-line derivation. */
static void set_clock(dlg_peak *p, double ghz, const char *clock_src)
{
    p->ghz = ghz;
    p->flops = (double)p->cores * p->ghz * 1e9 * p->flops_per_cycle;
    if (p->flops <= 0)
        snprintf(p->source, sizeof p->source, "unknown: %s, clock %s",
                 p->flops_per_cycle ? p->isa : p->fpc_why, p->ghz > 0 ? "known" : "not found");
    else
        snprintf(p->source, sizeof p->source, "%d cores x %.3f GHz (%s) x %d FLOP/cycle (%s)",
                 p->cores, p->ghz, clock_src, p->flops_per_cycle, p->fpc_why);
}

void dlg_peak_from_text(dlg_peak *p, const char *cpuinfo, const char *max_khz, int cores)
{
    dlg_peak_from_text_prec(p, cpuinfo, max_khz, cores, false);
}

void dlg_peak_from_text_prec(dlg_peak *p, const char *cpuinfo, const char *max_khz, int cores, bool bf16)
{
    char flags[4096] = "", vendor[64] = "", fam[16] = "", model[16] = "";
    memset(p, 0, sizeof *p);
    p->cores = cores > 0 ? cores : 1;
    cpuinfo = cpuinfo ? cpuinfo : "";
    dlg_cpuinfo_field(cpuinfo, "flags", flags, sizeof flags);
    dlg_cpuinfo_field(cpuinfo, "vendor_id", vendor, sizeof vendor);
    dlg_cpuinfo_field(cpuinfo, "cpu family", fam, sizeof fam);
    dlg_cpuinfo_field(cpuinfo, "model", model, sizeof model);
    bool amd = strcmp(vendor, "AuthenticAMD") == 0;
    p->flops_per_cycle = flops_per_cycle(flags, amd, atoi(fam), atoi(model), &p->isa, &p->fpc_why);
    if (bf16)
        p->flops_per_cycle =
            bf16_flops_per_cycle(flags, p->flops_per_cycle, amd ? atoi(fam) : 0, &p->isa, &p->fpc_why);
    double khz = max_khz && *max_khz ? strtod(max_khz, NULL) : 0;
    const char *clock_src = "cpufreq cpuinfo_max_freq";
    if (khz <= 0) {
        khz = max_mhz(cpuinfo) * 1e3;
        clock_src = "/proc/cpuinfo cpu MHz";
    }
    set_clock(p, khz / 1e6, clock_src);
}

/* Whole small text file into buf (NUL-terminated); false if unreadable. */
static bool slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
    return got > 0;
}

#if defined(__x86_64__) || defined(__i386__)
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The clock the core really runs at, turbo included (a VM's cpuinfo shows
 * the nominal one): a chain of dependent integer adds retires one add per
 * cycle on every x86 core since the P6, so adds / seconds = Hz.  The adds
 * add a register, not an immediate: newer cores (Golden Cove and later)
 * fold a chain of immediate adds at rename, measured here at 8 per cycle
 * (20.8 "GHz" on a 4.0 GHz core).  Best of several short windows, so a
 * preemption in one does not count. */
static double measured_ghz(int tries)
{
    enum { ADDS_PER_ITER = 32, ITERS = 100000 };
    double best = 0;
    for (int t = 0; t < tries; t++) {
        unsigned long x = 0, one = 1;
        double t0 = now_s();
        for (int i = 0; i < ITERS; i++)
            __asm__ volatile(".rept 32\n\tadd %1, %0\n\t.endr" : "+r"(x) : "r"(one));
        double dt = now_s() - t0;
        double ghz = dt > 0 ? (double)ITERS * ADDS_PER_ITER / dt / 1e9 : 0;
        best = ghz > best ? ghz : best;
    }
    return best;
}
#else
static double measured_ghz(int tries)
{
    (void)tries;
    return 0;
}
#endif

/* A measurement beside the nominal figure: trusted unless absurd (an
 * emulator, a core stolen for the whole window). */
static bool plausible(const dlg_peak *p, double ghz) { return ghz > 0.5 * p->ghz && ghz > 0.2 && ghz < 10; }

/* The clock the host's tuning record holds (0: none, or not plausible). */
static double recorded_ghz(const dlg_peak *p, const char *path)
{
    char val[DLG_TUNE_VAL_MAX], *end;
    if (!dlg_tune_get(path, TUNE_CLOCK, val, sizeof val))
        return 0;
    double ghz = strtod(val, &end);
    if (*end == '\0' && plausible(p, ghz))
        return ghz;
    fprintf(stderr, "dlgauge: tuning record %s: %s '%s' is no clock of this CPU; measured again\n", path,
            TUNE_CLOCK, val);
    return 0;
}

/* The measured clock in place of the nominal one: once per host, kept in
 * its tuning record (tune.h) so that every cell and run divides by the
 * same peak, however loaded the machine is when it asks; measured over
 * more windows then, since it stands for every later run. */
static void set_measured_clock(dlg_peak *p)
{
    enum { TRIES_KEPT = 31, TRIES_ONCE = 7 };
    char path[DLG_TUNE_PATH_MAX], src[DLG_TUNE_PATH_MAX + 96];
    if (!dlg_tune_path(path, sizeof path)) {
        double ghz = measured_ghz(TRIES_ONCE);
        if (plausible(p, ghz))
            set_clock(p, ghz, "measured now: dependent integer adds, best of 7 windows; no tuning record");
        return;
    }
    int lock = dlg_tune_lock(path); /* ranks starting together measure once */
    double ghz = recorded_ghz(p, path);
    if (ghz > 0) {
        snprintf(src, sizeof src, "measured once on this host by dependent integer adds: tuning record %s", path);
    } else {
        ghz = measured_ghz(TRIES_KEPT);
        char val[32];
        snprintf(val, sizeof val, "%.4f", ghz);
        bool kept = plausible(p, ghz) && dlg_tune_put(path, TUNE_CLOCK, val) == 0;
        snprintf(src, sizeof src, "measured now: dependent integer adds, best of 31 windows; %s tuning record %s",
                 kept ? "stored in" : "not stored in", path);
    }
    dlg_tune_unlock(lock);
    if (plausible(p, ghz))
        set_clock(p, ghz, src);
}

void dlg_peak_detect(dlg_peak *p, int cores) { dlg_peak_detect_prec(p, cores, false); }

void dlg_peak_detect_prec(dlg_peak *p, int cores, bool bf16)
{
    /* The first processor's block holds the flags; later blocks only
     * add their clocks, so a generous prefix of the file is enough. */
    size_t n = 1 << 20;
    char *info = malloc(n), khz[64] = "";
    if (info && !slurp("/proc/cpuinfo", info, n))
        info[0] = '\0';
    if (!slurp("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", khz, sizeof khz))
        khz[0] = '\0';
    dlg_peak_from_text_prec(p, info ? info : "", khz, cores, bf16);
    free(info);
    if (p->flops_per_cycle > 0)
        set_measured_clock(p);
}

void dlg_peak_report(const dlg_peak *p, double flops_per_item, uint64_t timed_items, uint64_t timed_ns,
                     const dlg_report_api *api, dlg_fields *f)
{
    api->add_double(f, "flops_per_item", flops_per_item);
    if (timed_ns > 0) {
        double g = flops_per_item * (double)timed_items / (double)timed_ns; /* FLOP/ns = GFLOP/s */
        api->add_double(f, "gflops", g);
        if (p->flops > 0)
            api->add_double(f, "pct_peak", 100.0 * g * 1e9 / p->flops);
    }
    if (p->flops > 0)
        api->add_double(f, "peak_gflops", p->flops / 1e9);
    api->add_string(f, "peak_source", p->source);
}
