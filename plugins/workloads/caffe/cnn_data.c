/* Batches for the caffe workloads (see cnn_data.h). */
#include "cnn_data.h"

#include <stdlib.h>
#include <string.h>

#include <dlgauge/splitmix.h>

#include "loader.h"

struct cnn_data {
    const dlg_host *h;
    int batch, classes;
    dlg_loader *loader; /* NULL for data = synthetic */
    dlg_batch *held;
    float *images; /* synthetic: one batch made in setup */
    int32_t *labels;
    size_t bytes;
};

/* Normalised-image-like values in [-2, 2) and uniform labels. */
static int make_synthetic(cnn_data *d, size_t count, uint64_t seed)
{
    d->images = malloc(count * sizeof(float));
    d->labels = malloc((size_t)d->batch * sizeof(int32_t));
    if (!d->images || !d->labels)
        return d->h->error(d->h, DLG_ENOMEM, "data = synthetic: out of memory for one batch");
    uint64_t s = seed ^ 0x5eedda7aull;
    for (size_t i = 0; i < count; i++)
        d->images[i] = (float)(dlg_splitmix_unit(&s) * 4.0 - 2.0);
    for (int i = 0; i < d->batch; i++)
        d->labels[i] = (int32_t)(dlg_splitmix_next(&s) % (uint64_t)d->classes);
    d->bytes = count * sizeof(float) + (size_t)d->batch * sizeof(int32_t);
    return 0;
}

/* The dataset's class count must be the net's: a mismatch either crashes
 * the loss (labels >= classes) or silently trains a different problem. */
static int check_classes(cnn_data *d, const char *spec)
{
    dlg_loader_stats st;
    dlg_loader_stats_get(d->loader, &st);
    if (st.nclasses > 0 && st.nclasses != d->classes)
        return d->h->error(d->h, DLG_EINVAL,
                           "classes = %d but data = %s has %d classes (labels 0..%d): set "
                           "classes = %d",
                           d->classes, spec, st.nclasses, st.nclasses - 1, st.nclasses);
    return 0;
}

int cnn_data_check(const dlg_host *h, const cnn_data_cfg *cfg, dlg_loader_config *lc)
{
    const dlg_value *v = cfg->loader_opts;
    dlg_loader_config_defaults(lc);
    int rc = dlg_loader_storage_check(h, v[DLG_LOPT_DATA].text, cfg->job);
    if (rc < 0)
        return rc;
    /* synthetic data is not normalised, but a bad mean/std is still an error */
    rc = dlg_loader_config_from_opts(lc, v, cfg->job, cfg->train, h);
    if (rc < 0 || strcmp(v[DLG_LOPT_DATA].text, "synthetic") == 0)
        return rc;
    if (lc->layout != DLG_LAYOUT_NCHW || lc->dtype != DLG_LOADER_FP32)
        return h->error(h, DLG_EINVAL, "layout = %s, input_dtype = %s: the caffe workloads take "
                        "nchw fp32 batches", v[DLG_LOPT_LAYOUT].text, v[DLG_LOPT_INPUT_DTYPE].text);
    if (!lc->decode)
        return h->error(h, DLG_EINVAL, "decode = false: a network needs decoded images");
    return 0;
}

int cnn_data_input_size(const dlg_host *h, const dlg_value *v, int *size)
{
    *size = (int)v[DLG_LOPT_CROP].i;
    if (*size != 0)
        return 0;
    dlg_loader_config lc;
    dlg_loader_config_defaults(&lc);
    int rc = dlg_loader_config_from_opts(&lc, v, NULL, true, h);
    return rc < 0 ? rc : dlg_loader_input_size(&lc, h, size);
}

static int open_loader(cnn_data *d, const cnn_data_cfg *cfg, const dlg_loader_config *lc_checked)
{
    const dlg_host *h = d->h;
    dlg_loader_config lc = *lc_checked;
    int rc;
    lc.batch = d->batch;
    lc.alloc = cfg->alloc;
    lc.part = cfg->part;
    lc.parts = cfg->parts;
    lc.classes = d->classes;
    if ((rc = dlg_loader_open(&d->loader, &lc, h)) < 0) {
        d->loader = NULL;
        return rc;
    }
    dlg_loader_stats st;
    dlg_loader_stats_get(d->loader, &st);
    lc.crop = st.crop; /* crop = 0: the records' size */
    if (cfg->input_size > 0 && st.crop != cfg->input_size)
        return h->error(h, DLG_EINVAL, "%s: the first record is now %dx%d, was %dx%d when the net "
                        "was sized (crop = 0): was the dataset rewritten meanwhile?", lc.data,
                        st.crop, st.crop, cfg->input_size, cfg->input_size);
    d->bytes = (size_t)lc.prefetch * dlg_loader_batch_bytes(&lc);
    return check_classes(d, lc.data);
}

int cnn_data_open(cnn_data **out, const dlg_host *h, const cnn_data_cfg *cfg)
{
    *out = NULL;
    cnn_data *d = calloc(1, sizeof *d);
    if (!d)
        return h->error(h, DLG_ENOMEM, "out of memory");
    d->h = h;
    d->batch = cfg->batch;
    d->classes = cfg->classes;
    const dlg_value *v = cfg->loader_opts;
    int crop = (int)v[DLG_LOPT_CROP].i, rc;
    dlg_loader_config lc;
    if ((rc = cnn_data_check(h, cfg, &lc)) < 0) {
        cnn_data_close(d);
        return rc;
    }
    if (strcmp(v[DLG_LOPT_DATA].text, "synthetic") == 0)
        rc = make_synthetic(d, (size_t)cfg->batch * 3 * (size_t)crop * (size_t)crop,
                            (cfg->job ? cfg->job->seed : 0) +
                                0x9e3779b97f4a7c15ull * (uint64_t)cfg->part); /* a rank's own */
    else
        rc = open_loader(d, cfg, &lc);
    if (rc < 0) {
        cnn_data_close(d);
        return rc;
    }
    *out = d;
    return 0;
}

bool cnn_data_is_static(const cnn_data *d) { return d->loader == NULL; }
size_t cnn_data_bytes(const cnn_data *d) { return d->bytes; }

int cnn_data_next(cnn_data *d, const float **images, const int32_t **labels, uint64_t *wait_ns,
                  uint64_t *bytes_read)
{
    *wait_ns = *bytes_read = 0;
    if (!d->loader) {
        *images = d->images;
        *labels = d->labels;
        return 0;
    }
    int rc = dlg_loader_next(d->loader, &d->held);
    if (rc < 0) {
        d->held = NULL;
        return rc;
    }
    /* labels were checked against classes by the loader (lc.classes), record by record */
    *images = d->held->data;
    *labels = d->held->labels;
    *wait_ns = d->held->wait_ns;
    *bytes_read = d->held->bytes_read;
    return 0;
}

void cnn_data_release(cnn_data *d)
{
    if (d->loader && d->held)
        dlg_loader_release(d->loader, d->held);
    d->held = NULL;
}

const char *cnn_data_source(const cnn_data *d)
{
    if (!d->loader)
        return "synthetic";
    dlg_loader_stats st;
    dlg_loader_stats_get(d->loader, &st);
    return st.source ? st.source : "loader";
}

void cnn_data_close(cnn_data *d)
{
    if (!d)
        return;
    cnn_data_release(d);
    if (d->loader)
        dlg_loader_close(d->loader);
    free(d->images);
    free(d->labels);
    free(d);
}
