/* Result fields the model does not pool, per cell, from the rows pooled
 * into it (model.c): dlgauge compare's step latencies. */
#ifndef DLG_REPORT_MODEL_ROWS_H
#define DLG_REPORT_MODEL_ROWS_H

#include "model.h"
#include "rows.h"

/* For every cell of every group of m (built from rs): the mean of the
 * numeric field over the cell's measured rows, each measurement once (as
 * its throughput pools them), weighted by their timed `steps`; NaN where
 * no such row has the field.  (*out)[gi][ci]; free with
 * rep_model_cell_field_free.  0, or -1 out of memory. */
int rep_model_cell_field(const rep_model *m, const rep_rows *rs, const char *field, double ***out);
void rep_model_cell_field_free(const rep_model *m, double **v);

#endif
