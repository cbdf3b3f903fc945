/* The recommendation's storage checks (reco_storage.c), used by
 * recommend.c's per-instance fit. */
#ifndef DLG_RECO_STORAGE_H
#define DLG_RECO_STORAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "recommend.h"

/* How an instance stands against a disk profile: no disk as fast, one as
 * fast but held below it by the instance's block-storage caps, or one that
 * reaches it. Ordered: a better fit compares greater. */
typedef enum { REP_DISK_SHORT, REP_DISK_CAPPED, REP_DISK_REACHES } rep_disk_fit;

/* Can the instance supply storage value v of the axis?  The best of its
 * disks. */
rep_disk_fit rep_storage_fit(const rep_instance *in, const rep_axis *ax, size_t v, const rep_disks *disks);

/* Fails f (meets false, why) when no disk of the instance carries the I/O
 * the credited cell measured, ncopies times; swept: the group swept storage
 * (its knee was judged already). */
void rep_check_io(rep_fit *f, const rep_cell *cell, const rep_instance *in, double ncopies, bool swept,
                  const rep_disks *disks, const char *tag);

/* ": the instance caps block storage at X < want's Y", appended to a why */
void rep_cap_reason(const rep_instance *in, const rep_disk *want, char *buf, size_t len);

/* The knee's profile has limits a cap would bound, the instance has no
 * known cap, and only a network disk meets the knee. */
bool rep_cap_matters(const rep_instance *in, const rep_axis *ax, size_t v, const rep_disks *disks);

#endif
