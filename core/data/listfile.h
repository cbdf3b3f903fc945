/* Image lists for folder datasets:
 *  - convert_imageset's list file, "relative/path label" per line, split at
 *    the LAST space (paths may contain spaces);
 *  - im2rec's .lst, "index<TAB>label(s)<TAB>path", its first label the class;
 *  - an ImageNet-style folder scan: one sub-folder per class, class names
 *    sorted (byte order) give labels 0..n-1, images found recursively below
 *    each class folder, sorted by path. */
#ifndef DLG_LISTFILE_H
#define DLG_LISTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data_error.h"
#include "data_source.h"

typedef struct dlg_list_entry {
    const char *path; /* relative to the dataset root */
    int32_t label;
} dlg_list_entry;

typedef struct dlg_filelist {
    dlg_list_entry *entries; /* list order, or class then path order for a scan */
    size_t n;
    const char **classes;    /* scan: class folder names, index = label; parse: NULL */
    size_t nclasses;
    char *pool_;             /* storage */
    size_t *off_;
} dlg_filelist;

/* Parses convert_imageset list text.  Blank lines are skipped; a line
 * without a space, an empty path or a label that is not an int32 is an
 * error naming name:line. */
int dlg_filelist_parse(dlg_filelist *out, const char *text, size_t len, const char *name,
                       dlg_data_err *err);
/* Parses im2rec .lst text ("index<TAB>label[<TAB>label...]<TAB>path", as
 * dlg_lst_parse) into the same list: each line's first label, which must
 * be an integer in int32 range ("3" or im2rec's "3.000000"), is its class.
 * Errors name name:line. */
int dlg_filelist_parse_lst(dlg_filelist *out, const char *text, size_t len, const char *name,
                           dlg_data_err *err);
/* Whether path names an im2rec .lst (by its suffix, any case, as the
 * preprocess workload's input tells them apart). */
bool dlg_filelist_is_lst(const char *path);
/* A list file by src->name: im2rec's .lst when dlg_filelist_is_lst, else
 * convert_imageset's list. */
int dlg_filelist_load(dlg_filelist *out, const dlg_source *src, dlg_data_err *err);

/* Scans root/<class>/... for images (.jpg .jpeg .png .ppm .pgm .bmp .tif
 * .tiff .webp, any case); hidden entries are skipped.  No class folder or no
 * image at all is an error. */
int dlg_filelist_scan(dlg_filelist *out, const char *root, dlg_data_err *err);

void dlg_filelist_free(dlg_filelist *l);

#endif
