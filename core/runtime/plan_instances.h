/* A plan's storages and sinks (plan_instances.c), for its build (plan.c). */
#ifndef DLG_PLAN_INSTANCES_H
#define DLG_PLAN_INSTANCES_H

#include "plan.h"

/* Every storage any of p's jobs may use, plus every [storage] section
 * (validated even when unused).  0, or -1 with err[] filled, or left as
 * it was where an allocation failed. */
int dlg_plan_storages(dlg_plan *p, char *err, size_t errlen);
/* The sinks [global] sinks names, in its order, else every [sink]
 * section.  0, or -1 as dlg_plan_storages. */
int dlg_plan_sinks(dlg_plan *p, const dlg_section *global, char *err, size_t errlen);

#endif
