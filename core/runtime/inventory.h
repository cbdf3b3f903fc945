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

#endif
