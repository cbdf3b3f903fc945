/* How mkdata puts a dataset on disk: everything is written under a ".part"
 * name and renamed into place only once complete, so an interrupted or
 * failed run never leaves a dataset that looks whole, and a regenerated one
 * never keeps files of an earlier, different one. */
#ifndef DLG_SYNTH_OUT_H
#define DLG_SYNTH_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "data_error.h"

#define DLG_SYNTH_PART ".part"

/* mkdata writes this file into every split folder it makes (first, before
 * any image), saying what it made: "dlgauge mkdata images: classes C,
 * images N".  Only a folder holding it is mkdata's to replace. */
#define DLG_SYNTH_MARKER ".dlgauge-mkdata"

/* Writes dir/DLG_SYNTH_MARKER for a tree of `classes` classes and `images`
 * images; 0, or -DLG_EIO naming the file. */
int dlg_synth_marker_write(const char *dir, int classes, uint64_t images, dlg_data_err *err);

/* A folder tree mkdata images made: its marker, folders nDDDDDDDD for the
 * marker's classes (0 .. C-1) and in them only the files
 * nDDDDDDDD_Q.JPEG of its images (Q * C + class < N), some of which may be
 * missing (an interrupted run's).  0 when dir is such a tree, an empty
 * folder or does not exist; -DLG_EINVAL naming the first foreign entry
 * otherwise (a tree without the marker, as older mkdata made, included). */
int dlg_synth_tree_check(const char *dir, dlg_data_err *err);
/* Removes such a tree (checked first: all or nothing); 0 when it is gone. */
int dlg_synth_tree_remove(const char *dir, dlg_data_err *err);

/* A list file mkdata images wrote for this split (.txt, or .lst when lst):
 * 0 when path is exactly such a list (line I names image I of some class
 * count C, as mkdata writes it), is empty or does not exist; -DLG_EINVAL
 * naming the first other line (or a path that is not a regular file)
 * otherwise, so that a user's own list of that name is never replaced. */
int dlg_synth_list_check(const char *path, const char *split, bool lst, dlg_data_err *err);

/* rename(from, to) with one error line naming both. */
int dlg_synth_rename(const char *from, const char *to, dlg_data_err *err);

/* " (strerror(e))" for a failed write or close, or "" when e is 0 (an
 * output that does not set errno). */
const char *dlg_synth_reason(int e, char *buf, size_t cap);

#endif
