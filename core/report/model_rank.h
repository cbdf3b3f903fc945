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
 * but left out (cache-bound, partial, its limit on a not enforced): the
 * knee is not the smallest value measured. */
bool rep_knee_below_unranked(const rep_group *g, size_t a);
/* Why a cell is left out: cut short, run without a limit its axes name
 * (memory_enforced = false), or measured the cache. */
typedef enum { REP_LEFT_PARTIAL, REP_LEFT_UNENFORCED, REP_LEFT_CACHE } rep_left_out;
/* Why the ok cell c, not ranked beside the best, is left out. */
rep_left_out rep_cell_left_out(const rep_group *g, const rep_cell *c);
/* ... and why the first such value below axis a's knee was (one ranked
 * but run without a's limit: REP_LEFT_UNENFORCED). */
rep_left_out rep_knee_below_why(const rep_group *g, size_t a);
/* "" or a sentence or two for the group's text: which cells were left out
 * of the best and the knees and why (partial, cache-bound), or that every
 * cell measured the cache (the best and knees are then cache figures). */
void rep_group_rank_note(const rep_group *g, char *buf, size_t len);

#endif
