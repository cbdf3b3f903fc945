/* How mkdata puts a dataset on disk: everything is written under a ".part"
 * name and renamed into place only once complete, so an interrupted or
 * failed run never leaves a dataset that looks whole, and a regenerated one
 * never keeps files of an earlier, different one. */
#ifndef DLG_SYNTH_OUT_H
#define DLG_SYNTH_OUT_H

#include <stdbool.h>

#include "data_error.h"

#define DLG_SYNTH_PART ".part"

/* A folder tree mkdata images made: only folders nDDDDDDDD holding only
 * files nDDDDDDDD_N.JPEG.  0 when dir is such a tree or does not exist;
 * -DLG_EINVAL naming the first foreign entry otherwise. */
int dlg_synth_tree_check(const char *dir, dlg_data_err *err);
/* Removes such a tree (checked first); 0 when it is gone. */
int dlg_synth_tree_remove(const char *dir, dlg_data_err *err);

/* A list file mkdata images wrote for this split (.txt, or .lst when lst):
 * 0 when path is such a file or does not exist; -DLG_EINVAL naming the
 * first foreign line (or a path that is not a regular file) otherwise, so
 * that a user's own list of that name is never replaced. */
int dlg_synth_list_check(const char *path, const char *split, bool lst, dlg_data_err *err);

/* rename(from, to) with one error line naming both. */
int dlg_synth_rename(const char *from, const char *to, dlg_data_err *err);

/* " (strerror(e))" for a failed write or close, or "" when e is 0 (an
 * output that does not set errno). */
const char *dlg_synth_reason(int e, char *buf, size_t cap);

#endif
