/* Instance catalogs (conf/instances/NAME.ini) and the recommendation: the
 * cheapest instance whose resources meet every knee of the selected groups. */
#ifndef DLG_REPORT_RECOMMEND_H
#define DLG_REPORT_RECOMMEND_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* What a disk of an instance costs a month ([disk NAME] of the same
 * catalog).  Priced by size (per_gib > 0): month + per_gib x the volume's
 * GiB, the volume as large as the data it must hold and as fast as the
 * work needs, within [size_min, size_max]; else month is the volume its
 * conf/disks profile describes.  Instance store: 0 (in the instance's
 * price); NaN: the catalog has no price. */
typedef struct rep_disk_price {
    double month;
    double per_gib;
    double size_min, size_max; /* bytes */
    /* Rates bought above the profile's, with a price per GiB (gp3): IOPS
     * up to iops_max at per_iops a month each above the profile's iops, at
     * most iops_per_gib a GiB; bandwidth (bytes/s) up to bw_max at
     * per_mibps a month per MiB/s above the profile's, at most bw_per_iops
     * bytes/s per IOPS.  0: not bought, no bound. */
    double iops_max, per_iops, iops_per_gib;
    /* IOPS it may be bought down to, below the profile's (io2, whose
     * month prices the profile's IOPS: it is then per_iops less each); 0:
     * the profile's */
    double iops_min;
    /* Cheaper tiers: each IOPS above tier_from[k] costs tier_price[k] a
     * month instead (io2: 0.0455 past 32,000, 0.03185 past 64,000);
     * tier_from increasing, ntiers 0: per_iops throughout */
#define REP_IOPS_TIERS 4
    double tier_from[REP_IOPS_TIERS], tier_price[REP_IOPS_TIERS];
    int ntiers;
    double bw_max, per_mibps, bw_per_iops;
    bool verified; /* read from the provider's own page (instance store: the instance's price_verified) */
} rep_disk_price;

typedef struct rep_instance {
    char *name, *provider, *region, *currency, *source, *retrieved, *catalog;
    char *gpu;
    int gpus;
    double gpu_memory; /* bytes per GPU (gpu_memory); 0: not given, not judged */
    double vcpus, memory; /* memory in bytes */
    char **disks;         /* disk profile names that can be attached */
    bool *local;          /* per disk: instance store (local_disks), not behind the caps below */
    size_t ndisks;
    double local_size; /* bytes its instance store holds (local_disk_size); 0: its profile's capacity */
    /* The instance's own block-storage caps (AWS EBS-optimized baseline,
     * GCP per-VM limits): bytes/s and IOPS over all its network disks;
     * 0 = no cap known. */
    double disk_bw_max, disk_iops_max;
    double price; /* per hour, in currency */
    bool price_verified;
    rep_disk_price *disk_price; /* per disk (rep_catalog_load fills it) */
    int line; /* of its [instance NAME] header in the catalog */
} rep_instance;

typedef struct rep_catalog {
    rep_instance *v;
    size_t n;
} rep_catalog;

/* What a cost is quoted per: a million items, or for bytes a TB (10^12,
 * decimal like the MB/s and GB/s the throughput reads in): a price per
 * million bytes is a figure nobody buys storage or traffic by. */
double rep_cost_quantum(const char *unit);
/* "million images" ("M images" when abbrev), or "TB" for bytes; into buf. */
const char *rep_cost_label(const char *unit, bool abbrev, char *buf, size_t len);
/* A group counting bytes (stream, io): priced per TB, its energy per GB. */
bool rep_unit_is_bytes(const char *unit);

int rep_catalog_load(rep_catalog *c, const char *path, char *err, size_t errlen);
void rep_catalog_free(rep_catalog *c);

/* What an instance is judged by for one group. */
typedef struct rep_fit {
    bool meets;
    char why[240];     /* the first knee it misses */
    bool cap_unknown;  /* a storage knee with a profile, judged without the instance's block-storage cap */
    bool io_unknown;   /* storage not swept, I/O measured: the instance lists no disk, or one with no profile */
    double thr;        /* expected items/s for the whole instance; NaN = not measured */
    bool estimated;    /* no measured cell matches the instance: the smallest knee throughput */
    char est_at[96];   /* the combination not measured ("cpus=1 memory=2G"), where estimated */
    bool extrapolated; /* cpus not swept, and the instance has fewer per copy than the cell ran with */
    /* A per-GPU group on several GPUs whose runs were also measured at
     * more ranks (scaling.h): thr = the 1-rank cell x GPUs x scale_eff, the
     * efficiency measured at scale_ranks (the most ranks up to the GPUs);
     * scale_ranks 0 and scale_upper: none measured up to its GPUs, the
     * plain upper bound.  Both unset where no group measured other ranks. */
    long scale_ranks;
    double scale_eff;
    bool scale_upper;
    /* scale_upper as the runs were measured at 2..GPUs ranks only across
     * several nodes (an instance is one machine): the most such ranks, and
     * their nodes; 0: not so. */
    long span_ranks, span_nodes;
    double cost;        /* price per rep_cost_quantum of the group's unit; INFINITY when thr is not measured */
    double energy_item; /* J/item measured at the matching cell, NaN if not measured */
    bool energy_cpu;    /* energy_item is the CPU packages' (RAPL), that cell had no GPU energy */
    bool asks_disk; /* the group asks something of storage: a storage knee, or I/O its cell measured */
} rep_fit;

typedef struct rep_choice {
    const rep_instance *inst;
    rep_fit *fits; /* one per group of the model (unselected: meets = true, thr = 0) */
    bool meets;
    /* One unit across the selected groups: the sum of their costs per
     * quantum (a million images of each, a TB of each).  Several units: the geometric mean
     * of each group's cost relative to the lowest any instance offers it
     * (1 = the cheapest for every group), as summing $/M images and $/M
     * bytes would weigh the groups by the choice of unit. */
    double score;
    /* The disk to attach, where a selected group asks for one: of the
     * instance's disks with which it meets every knee, the one with the
     * lowest cost per item (its price added; one the catalog does not
     * price only where no priced one meets, and then the one that
     * sustains least); fits are the instance's with that disk alone.
     * NULL: none asked, or none meets (fits: with all its disks). */
    const char *disk;
    /* the volume to make of it, sized to the data and the work where the
     * catalog prices it by the GiB; 0: the profile's own, as priced */
    double disk_bytes;
    /* the rates bought for it above its profile's (gp3): IOPS and bytes/s;
     * 0: none bought */
    double disk_iops, disk_bw;
    /* its price an hour (the month's / REP_HOURS_PER_MONTH), added to the
     * instance's in every cost; NaN: the catalog has none (0 instance store) */
    double disk_hour;
    bool disk_verified;
    /* some selected group's figure is estimated, extrapolated or one GPU's
     * times its GPUs with no scaling measured: it loses a tie */
    bool assumed;
    /* its GPU is not the model the counted groups were measured on
     * (gpu_name): ranked as if it performed like that one */
    bool other_gpu;
} rep_choice;

/* f's figure is one GPU's cell times the instance's GPUs, no scaling
 * measured (the data-parallel upper bound). */
/* Whether an axis sizes an instance (cpus, memory, storage): only these
 * knees move which instance meets. */
bool rep_axis_sizes_instance(const rep_axis *ax);
bool rep_fit_upper_bound(const rep_fit *f, const rep_group *g, const rep_instance *in);

/* The hours a cloud's monthly price is for (AWS's and GCP's 730). */
#define REP_HOURS_PER_MONTH 730.0

/* What the choice costs an hour: the instance, and its disk where priced. */
static inline double rep_choice_hourly(const rep_choice *ch)
{
    return ch->inst->price + (ch->disk_hour > 0 ? ch->disk_hour : 0);
}

/* Whether every price in that was read from the provider's own page. */
static inline bool rep_choice_price_verified(const rep_choice *ch)
{
    return ch->inst->price_verified && (!(ch->disk_hour > 0) || ch->disk_verified);
}

/* The disk to attach as the report names it: "aws-gp3", or with the
 * volume sized "aws-gp3 of 20GiB", with rates bought "aws-gp3 of 20GiB
 * with 6000 IOPS and 400MiB/s"; "" for none. */
void rep_choice_disk_text(const rep_choice *ch, char *buf, size_t len);

typedef struct rep_reco {
    rep_choice *v; /* every instance, meeting ones first by score, then the rest */
    size_t n, nmeet;
    size_t ngroups; /* fits per choice: the model's groups */
    const char *currency;
    const char *unit; /* the selected groups' one unit ("images"), or NULL: several, score is relative */
    bool weighted;    /* --weight: score is the cost of the mix, sum of weight x cost, whatever the units */
    bool data_unknown; /* no row says what the work read (storage_files_bytes): volumes sized without it */
    const char *measured_gpu; /* the gpu_name of the counted groups' best cells (the first); NULL: none */
} rep_reco;

/* The GPU model in a name: its first word that is not the vendor's,
 * a series' or a size ("NVIDIA A100-SXM4-40GB" and "NVIDIA A100 40GB":
 * "A100"); "" where none. */
void rep_gpu_model(const char *name, char *buf, size_t len);
/* The catalog's GPU name is of the same model as the measured one. */
bool rep_gpu_same(const char *catalog_gpu, const char *measured);

/* selected[g] chooses the groups (NULL: all that have a best cell; a
 * group measured at several ranks is never priced itself: its efficiency
 * scales its 1-rank group's cells);
 * weights[g], when given, is how much of each group's work the mix holds,
 * in its cost quanta (millions of items, TB).  An instance's GPU must
 * contain gpu_filter (case-insensitive) when given. */
int rep_recommend(rep_reco *out, const rep_model *m, const bool *selected, const double *weights,
                  const rep_catalog *cat, const rep_disks *disks, const char *gpu_filter, char *err, size_t errlen);
void rep_reco_free(rep_reco *r);
/* "" or one note naming the instances that meet every knee, a storage knee
 * (or the I/O of a group that did not sweep storage) among them, with no
 * block-storage cap known: their disks count at the profiles' own limits,
 * which the instance may not reach; those whose disks could not be
 * judged against that I/O at all (no profile); and that volumes were
 * sized without knowing the data (rows without storage_files_bytes). */
void rep_reco_caps_note(const rep_reco *r, char *buf, size_t len);

#endif
