/* The host inventory: what machine produced a run's results.  Written once
 * per run as a dlgauge_host point (tags run_id, host); every result row
 * carries the same run_id and host, which is the reference. */
#ifndef DLG_INVENTORY_H
#define DLG_INVENTORY_H

#include "point_wire.h"

#define DLG_MEASUREMENT_HOST "dlgauge_host"

/* Fills wp with the inventory fields (cpu_model, cpus_online, numa_nodes,
 * threads_per_core, isa, mem_total_bytes, kernel, disks, glibc, ...). */
int dlg_inventory_point(dlg_wire_point *wp, const char *run_id, const char *host, int64_t time_ns);
/* What the point says of the machine (tags and fields, not its time), as
 * 16 hex digits: a resumed run writes the inventory again only when this
 * differs (another host, a new kernel), each point then true of its rows. */
void dlg_inventory_id(const dlg_wire_point *wp, char *out, size_t len);

/* Writes the run's inventory point wp, of id, to the sinks that lack it
 * (all, unless the journal says otherwise: a resumed run) and journals
 * which took it: `inventory` once all have it, else `inventory_sent` for
 * each that took it, so that --resume gives it to the others alone and
 * no sink gets it twice (its time is journaled first: --resume sends the
 * point at that time, through write_again, which a sink that took it
 * unrecorded skips).  Returns how many sinks failed (each said once);
 * a journal that cannot be written is said by the first cell. */
struct dlg_sinkset;
struct dlg_journal;
int dlg_inventory_send(struct dlg_sinkset *ss, struct dlg_journal *jn, const dlg_wire_point *wp, const char *id);


/* A block device that is a disk: loop, ram and zram devices are memory
 * or files, not storage, and are never listed. */
typedef struct dlg_disk {
    char name[256];
    const char *kind; /* "nvme", "rotational" or "ssd" (also a virtual disk) */
    double gib;
    char model[128];
} dlg_disk;

/* The disks of SYS_ROOT/block ("/sys"), sorted by name, in *out (the
 * caller frees it): their count, or -1 if there is no memory. */
int dlg_disks_read(const char *sys_root, dlg_disk **out);

/* A mounted filesystem as the path shows it: of a folder mounted on more
 * than once, only the top mount, whose type, source and sizes are seen. */
typedef struct dlg_mount {
    char *dir, *type, *source;
} dlg_mount;

/* The visible mounts of a mounts table (MOUNTS: "/proc/self/mounts"), in
 * its order, in *out (free with dlg_mounts_free): their count, or -1 if
 * the table cannot be read or there is no memory. */
int dlg_mounts_read(const char *mounts, dlg_mount **out);
void dlg_mounts_free(dlg_mount *m, int n);

#endif
