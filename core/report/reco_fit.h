/* recommend.c's fit of an instance, which reco_volume.c weighs each of
 * its disks by. */
#ifndef DLG_RECO_FIT_H
#define DLG_RECO_FIT_H

#include <stdbool.h>

#include "recommend.h"

/* Every counted group's fit on instance in (the others meet, with no
 * figure); whether it meets every knee. */
bool rep_fit_all(rep_fit *fits, const rep_model *m, const bool *selected, const rep_instance *in,
                 const rep_disks *disks);
/* Each counted group's cost at hour (a price an hour) per its quantum. */
void rep_cost_fits(rep_fit *fits, const rep_model *m, const bool *selected, double hour);
/* What ranks one instance's fits against its other disks' (lower is
 * cheaper): the weighted or plain sum of the costs, or with several units
 * their product (as a log), which orders as the relative score does. */
double rep_fits_key(const rep_fit *fits, const rep_model *m, const bool *selected, const double *weights,
                    bool one_unit);

#endif
