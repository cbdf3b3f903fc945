/* The steps of rep_model_build (model.c) that live in the model's other
 * files, and the lookup those files need from model.c. */
#ifndef DLG_REPORT_MODEL_BUILD_H
#define DLG_REPORT_MODEL_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mem_out.h"
#include "model.h"

/* model_pool.c: pools each cell of g over its own rows (cell_of: row i's
 * cell, -1 = another group's row).  0, or -1 out of memory. */
int rep_group_pool_cells(rep_group *g, const rep_rows *rs, const long *cell_of);

/* model_rank.c: g's best cell (has_best, best), its cells classified. */
void rep_group_pick_best(rep_group *g);
/* model_rank.c: the knee of axis a (g->knees[a]) on the slice through the
 * best cell: the smallest value reaching target x best (coord: scratch of
 * naxes entries). */
void rep_group_find_knee(rep_group *g, size_t a, double target, size_t *coord);

/* model.c: row r's cell: its group in *gi and the cell's index, or -1
 * (coord: scratch of the most axes a group has). */
long rep_model_cell_of_row(const rep_model *m, const rep_row *r, size_t *gi, size_t *coord);

/* model_split.c: whether key is swept (an axis) among the rows of the
 * identity of the row asked about. */
typedef bool (*rep_swept_fn)(const void *ctx, const char *key);
/* model_split.c: row r's settings (rep_group.settings) in *out, malloc'd,
 * each value by its meaning as kinds reads it (settings_kind.h); NULL
 * where it has no `config`.  0, or -1 out of memory. */
int rep_row_settings(const rep_row *r, const struct rep_kinds *kinds, rep_swept_fn swept, const void *ctx,
                     char **out);
/* model_split.c: rows that recorded no settings (set[i] NULL) take
 * those of the other rows of their identity (bid[i], of nbase) where
 * these all ran one on one host; else they stay NULL.  0, or -1. */
int rep_adopt_settings(size_t nbase, const rep_rows *rs, const long *bid, char **set, const char **host);
/* model_split.c: labels the groups of each identity split by settings
 * (rep_group.split) and adds one warning per identity.  0, or -1. */
int rep_model_label_splits(rep_model *m);
/* model_split.c: one warning for each group whose measured rows came
 * from builds of several git revisions (`git_rev`), pooled as repeats
 * (gid: row i's group).  0, or -1 out of memory. */
int rep_model_warn_revisions(rep_model *m, const rep_rows *rs, const long *gid);

/* model_split.c: closes f, which writes to *line (rep_mem_open), and
 * adds the line to the model's warnings.  0, or -1 (line freed). */
int rep_model_push_warning(rep_model *m, FILE *f, rep_mem_out *line);

/* model_enforced.c: the REP_UNENF_* bits of the limits row r names and
 * says no cgroup applied (`memory_enforced = false`). */
unsigned rep_row_unenforced(const rep_row *r);
/* model_enforced.c: the REP_UNENF_* bits of the limits g has an axis of. */
unsigned rep_group_limit_bits(const rep_group *g);
/* model_enforced.c: one warning per group and limit whose measured rows
 * say it was not applied, naming the rows (gid: row i's group).  0, or -1
 * out of memory. */
int rep_model_warn_unenforced(rep_model *m, const rep_rows *rs, const long *gid);

#endif
