/* A configuration written into a test's folder and loaded, with the
 * build's plugins scanned: what a test of planning (jobs or sinks) starts
 * from. */
#ifndef RT_PLAN_H
#define RT_PLAN_H

#include "plan.h"
#include "rt_util.h"

typedef struct rt_plan {
    dlg_config cfg;
    dlg_registry reg;
    dlg_plan plan; /* for the test to build */
    char path[512]; /* the configuration's file */
} rt_plan;

/* Zeroes p, writes text as d/name (p->path) and loads it into p->cfg, and
 * scans the plugins into p->reg; fails the test if the config does not
 * load. */
void rt_plan_load(const rt_dir *d, const char *name, const char *text, rt_plan *p);

/* Frees p's plan, registry and config. */
void rt_plan_done(rt_plan *p);

#endif
