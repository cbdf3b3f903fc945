/* The disk an instance attaches, and how large (reco_volume.c): each of
 * its disks alone, priced volumes sized to the data and the knees' rates,
 * rates bought where the catalog sells them; the cheapest per item wins. */
#ifndef DLG_RECO_VOLUME_H
#define DLG_RECO_VOLUME_H

#include <stdbool.h>

#include "recommend.h"

/* What rep_choose_disk sizes volumes with: the data they must hold, and the
 * profiles with one more slot, where a volume of another size stands
 * under a name of its own ("aws-gp3 (20GiB)"), so that the knee's
 * profile is still the one measured. */
typedef struct rep_volumes {
    const rep_model *m;
    const bool *selected;
    const rep_disks *disks;
    double data; /* bytes; 0: not known */
    rep_disk *slots; /* disks->n + 1 */
    rep_disks view;
    char name[192];
    const char *names[1];
    rep_fit *tmp;  /* m->n fits */
    rep_fit *base; /* m->n fits: a smaller volume's, which a larger one must beat */
    const double *weights; /* rep_choose_disk's, for rep_fits_key */
    bool one_unit;
} rep_volumes;

/* Zeroed, then its buffers for model m and the profiles disks (kept by
 * pointer); 0, or -DLG_ENOMEM (rep_volumes_free still frees). */
int rep_volumes_init(rep_volumes *z, const rep_model *m, const bool *selected, const rep_disks *disks);
void rep_volumes_free(rep_volumes *z);

/* Where a counted group of ch's instance asks for storage: the disk to
 * attach (ch->disk, disk_bytes, disk_iops, disk_bw, disk_hour), sized
 * where the catalog prices it by the GiB, and ch->fits with it alone
 * (ch->meets with it); an instance none of whose disks holds the data
 * does not meet, and says so. */
void rep_choose_disk(rep_choice *ch, rep_volumes *z, const double *weights, bool one_unit);

#endif
