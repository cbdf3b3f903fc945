/* preprocess input: the image list of one pass from a class-folder tree
 * (labels = sorted class names), an im2rec .lst or a convert_imageset list. */
#define _GNU_SOURCE
#include "prep.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "listfile.h"
#include "recordio.h"

/* Room for n items with `strbytes` of path text and nlabels floats. */
static int alloc_input(prep_input *in, size_t n, size_t strbytes, size_t nlabels, const char *what,
                       dlg_data_err *err)
{
    in->items = calloc(n ? n : 1, sizeof *in->items);
    in->strings_ = malloc(strbytes ? strbytes : 1);
    in->labels_ = calloc(nlabels ? nlabels : 1, sizeof *in->labels_);
    if (!in->items || !in->strings_ || !in->labels_)
        return dlg_data_fail(err, DLG_ENOMEM, "%s: out of memory", what);
    in->n = n;
    return 0;
}

/* Appends "root/rel" and "rel" to the string pool at *pos.  An absolute
 * rel stands as it is, as im2rec's os.path.join(root, rel) has it. */
static void put_paths(prep_input *in, prep_item *it, const char *root, const char *rel, size_t *pos)
{
    char *p = in->strings_ + *pos;
    size_t lr = strlen(root), ll = strlen(rel);
    if (rel[0] == '/') {
        memcpy(p, rel, ll + 1);
        it->path = it->rel = p;
        *pos += ll + 1;
        return;
    }
    memcpy(p, root, lr);
    p[lr] = '/';
    memcpy(p + lr + 1, rel, ll + 1);
    it->path = p;
    it->rel = p + lr + 1;
    *pos += lr + ll + 2;
}

static int from_filelist(prep_input *in, const dlg_filelist *l, const char *root, const char *what,
                         dlg_data_err *err)
{
    size_t bytes = 0, lr = strlen(root);
    for (size_t i = 0; i < l->n; i++)
        bytes += lr + strlen(l->entries[i].path) + 2;
    int rc = alloc_input(in, l->n, bytes, l->n, what, err);
    size_t pos = 0;
    for (size_t i = 0; rc == 0 && i < l->n; i++) {
        prep_item *it = &in->items[i];
        put_paths(in, it, root, l->entries[i].path, &pos);
        in->labels_[i] = (float)l->entries[i].label;
        it->labels = &in->labels_[i];
        it->nlabels = 1;
        it->int_label = true;
        it->label = l->entries[i].label;
        it->index = it->line = (int64_t)i;
    }
    return rc;
}

static int from_lst(prep_input *in, const dlg_lst *l, const char *root, const char *what,
                    dlg_data_err *err)
{
    size_t bytes = 0, nlab = 0, lr = strlen(root);
    for (size_t i = 0; i < l->n; i++) {
        bytes += lr + strlen(l->items[i].path) + 2;
        nlab += l->items[i].nlabels;
    }
    int rc = alloc_input(in, l->n, bytes, nlab, what, err);
    size_t pos = 0, lab = 0;
    for (size_t i = 0; rc == 0 && i < l->n; i++) {
        prep_item *it = &in->items[i];
        put_paths(in, it, root, l->items[i].path, &pos);
        memcpy(&in->labels_[lab], l->items[i].labels, l->items[i].nlabels * sizeof(float));
        it->labels = &in->labels_[lab];
        it->nlabels = (uint32_t)l->items[i].nlabels;
        it->index = l->items[i].index;
        it->line = (int64_t)i;
        lab += l->items[i].nlabels;
    }
    return rc;
}

static int load_list(prep_input *in, const char *spec, const char *root, dlg_data_err *err)
{
    dlg_source src;
    int rc = dlg_source_open_path(&src, spec, err);
    if (rc < 0)
        return rc;
    char *copy = strdup(spec);
    const char *base = root ? root : copy ? dirname(copy) : ".";
    if (dlg_filelist_is_lst(spec)) {
        dlg_lst l = {0};
        rc = dlg_lst_load(&l, &src, err);
        if (rc == 0)
            rc = from_lst(in, &l, base, spec, err);
        dlg_lst_free(&l);
    } else {
        dlg_filelist l = {0};
        rc = dlg_filelist_load(&l, &src, err);
        if (rc == 0)
            rc = from_filelist(in, &l, base, spec, err);
        dlg_filelist_free(&l);
    }
    free(copy);
    dlg_source_close_fd(&src);
    return rc;
}

int prep_input_load(prep_input *in, const char *spec, const char *root, dlg_data_err *err)
{
    memset(in, 0, sizeof *in);
    struct stat st;
    if (!spec || !*spec)
        return dlg_data_fail(err, DLG_EINVAL, "input names no folder or list");
    if (stat(spec, &st) != 0)
        return dlg_data_fail(err, DLG_EINVAL, "input = %s: no such folder or list file", spec);
    int rc;
    if (S_ISDIR(st.st_mode)) {
        dlg_filelist l = {0};
        rc = dlg_filelist_scan(&l, spec, err);
        if (rc == 0)
            rc = from_filelist(in, &l, root ? root : spec, spec, err);
        dlg_filelist_free(&l);
    } else {
        rc = load_list(in, spec, root, err);
    }
    if (rc == 0 && in->n == 0)
        rc = dlg_data_fail(err, DLG_EINVAL, "input = %s: no images listed", spec);
    if (rc < 0)
        prep_input_free(in);
    return rc;
}

void prep_input_free(prep_input *in)
{
    free(in->items);
    free(in->strings_);
    free(in->labels_);
    memset(in, 0, sizeof *in);
}
