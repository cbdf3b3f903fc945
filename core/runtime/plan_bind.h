/* Binding one [job] section (plan_bind.c), for the plan's build (plan.c). */
#ifndef DLG_PLAN_BIND_H
#define DLG_PLAN_BIND_H

#include "plan.h"

/* Appends job s to p: its workload found (from `plugin` where given), its
 * keys checked against the core's and the workload's, every value parsed
 * (s's own, else global's) and sweep lists made axes.  The run's cells
 * stay within DLG_PLAN_MAX_CELLS.  0, or -1 with err[] filled. */
int dlg_plan_add_job(dlg_plan *p, const dlg_section *s, const dlg_section *global, char *err, size_t errlen);

#endif
