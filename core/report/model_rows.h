/* Result fields the model does not pool, per cell, from the rows pooled
 * into it (model_pool.c): dlgauge compare's step latencies. */
#ifndef DLG_REPORT_MODEL_ROWS_H
#define DLG_REPORT_MODEL_ROWS_H

#include "model.h"
#include "rows.h"

/* How a cell's runs' figures pool: a mean, or a maximum (the largest of
 * the runs' maxima, which their mean would understate). */
typedef enum rep_pool { REP_POOL_MEAN, REP_POOL_MAX } rep_pool;

/* For every cell of every group of m (built from rs): the numeric field
 * over the cell's measured rows, each measurement once (as its throughput
 * pools them), pooled as how says: their mean weighted by their timed
 * `steps`, or the largest; NaN where no such row has the field.
 * (*out)[gi][ci]; free with rep_model_cell_field_free.  0, or -1 out of
 * memory. */
int rep_model_cell_field(const rep_model *m, const rep_rows *rs, const char *field, rep_pool how, double ***out);
void rep_model_cell_field_free(const rep_model *m, double **v);

#endif
