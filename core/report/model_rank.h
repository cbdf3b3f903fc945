/* Which cells the best and the knees are chosen among (model_rank.c): a
 * cache-bound STREAM cell measured the cache, not memory, and is left out
 * beside memory-bound ones; a cell whose figure is a repetition cut short
 * (partial) beside cells measured whole. */
#ifndef DLG_REPORT_MODEL_RANK_H
#define DLG_REPORT_MODEL_RANK_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* The ok cell c is among those its group's best and knees are chosen from. */
bool rep_cell_ranked(const rep_group *g, const rep_cell *c);
/* Ok cells of the group left out of its best and knees (cache-bound ones
 * beside cells that measured memory, partial ones beside whole ones). */
size_t rep_group_unranked(const rep_group *g);
/* On axis a's slice through the best, a value below the knee was measured
 * but left out (cache-bound, partial): the knee is not the smallest value
 * measured. */
bool rep_knee_below_unranked(const rep_group *g, size_t a);
/* ... and the first such value was left out for being cut short (partial). */
bool rep_knee_below_partial(const rep_group *g, size_t a);
/* "" or a sentence or two for the group's text: which cells were left out
 * of the best and the knees and why (partial, cache-bound), or that every
 * cell measured the cache (the best and knees are then cache figures). */
void rep_group_rank_note(const rep_group *g, char *buf, size_t len);

#endif
