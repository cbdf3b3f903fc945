/* preprocess output: the names a pass writes and what may stand there
 * before (prep_target.c), and what prep.h's output functions leave out.
 * An output replaces only what has preprocess's format: a RecordIO file
 * and its .idx, an LMDB folder of data.mdb and lock.mdb, a BlobProto mean
 * (whoever wrote it: a format check, not proof), never the input, a user's
 * other file or folder, and nothing is deleted before its replacement is
 * in place. */
#ifndef DLG_TOOLS_PREP_OUTPUT_H
#define DLG_TOOLS_PREP_OUTPUT_H

#include "prep.h"

/* The names of an output (all malloc'd; idx and idx_part NULL for LMDB). */
typedef struct prep_names {
    char *path;     /* the .rec file or the LMDB folder */
    char *part;     /* a pass is written here, then renamed over path */
    char *old;      /* where the replaced .idx (RecordIO) or LMDB folder waits
                       while the new one is renamed into place */
    char *idx;      /* the .idx beside the .rec, as im2rec names it */
    char *idx_part; /* the pass's .idx */
} prep_names;

/* 0, or -DLG_ENOMEM (n is then freed). */
int prep_names_make(prep_names *n, prep_format fmt, const char *path);
void prep_names_free(prep_names *n);

/* Every name of the output (fmt, path) either does not exist or holds what
 * preprocess may replace there (a RecordIO file, an .idx, an LMDB folder
 * holding only data.mdb and lock.mdb; each may be empty), and none is the
 * input (same file or folder); else -DLG_EINVAL with one line starting
 * "output = ".  The workload's check and its setup call it, before any
 * work; input may be NULL. */
int prep_output_check_targets(prep_format fmt, const char *path, const char *input, dlg_data_err *err);

/* The same for the names that a commit replaces (path, idx, old), checked
 * again at commit: what the pass took long to write must not land on what
 * someone put there meanwhile. */
int prep_names_check_replace(const prep_names *n, prep_format fmt, dlg_data_err *err);

/* mean_output (mean) is not the input, not one of the output's names
 * (fmt, path) nor in its LMDB folders, and what exists there is a BlobProto
 * (a mean image, whoever wrote it) or empty; else -DLG_EINVAL with one line
 * starting "mean_output = ".  With prep_output_check_targets, before any
 * work. */
int prep_mean_check_target(const char *mean, prep_format fmt, const char *path, const char *input,
                           dlg_data_err *err);
/* The last part of that, checked again before the mean replaces mean: a
 * directory, a link or a file other than a BlobProto or an empty one is
 * refused. */
int prep_mean_check_file(const char *mean, dlg_data_err *err);

/* Removes an LMDB folder that holds only data.mdb and lock.mdb (checked
 * first: nothing is removed otherwise); 0 when it is gone or never was. */
int prep_lmdb_dir_remove(const char *spec_path, const char *dir, dlg_data_err *err);

/* Bytes of the passes renamed into place (of prep_output_bytes, which
 * counts the open pass's too). */
uint64_t prep_output_committed_bytes(const prep_output *o);

#endif
