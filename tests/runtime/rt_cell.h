/* Runs the first cell of a configuration in-process, as `dlgauge run`
 * would with isolation = none: for tests of the runner's result. */
#ifndef RT_CELL_H
#define RT_CELL_H

#include "plan.h"
#include "results.h"
#include "runner.h"

typedef struct rt_cell {
    dlg_config cfg;
    dlg_registry reg;
    dlg_plan plan;
    dlg_cell cell;
    dlg_cell_result res;
    dlg_point_buf row; /* the cell's result row */
    char err[4096];
} rt_cell;

/* Loads ini (a file), plans it with the build's plugins and runs job 0's
 * first cell into c->res and c->row; fails the test where that cannot. */
void rt_cell_run(rt_cell *c, const char *ini);
void rt_cell_done(rt_cell *c);

/* The row's unsigned field key; fails the test without it. */
uint64_t rt_cell_uint(const rt_cell *c, const char *key);
double rt_cell_double(const rt_cell *c, const char *key);
/* The row's field key, or NULL. */
const dlg_field *rt_cell_field(const rt_cell *c, const char *key);

#endif
