#include "pipe_util.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <fcntl.h>
#include <unistd.h>

#include "jpeg.h"
#include "recordio.h"
#include "synth.h"

void pu_tmpdir(char *out, size_t cap, const char *tag)
{
    snprintf(out, cap, "%s/tmp-%s-XXXXXX", PIPE_TEST_DIR, tag);
    assert_non_null(mkdtemp(out));
}

static void write_all(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

uint8_t *pu_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    p[n] = 0; /* text files can be used as strings */
    fclose(f);
    *len = (size_t)n;
    return p;
}

void pu_write_jpeg(const char *path, const uint8_t *rgb, int w, int h)
{
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    const uint8_t *jpg;
    size_t len;
    assert_int_equal(dlg_jpeg_encode(j, rgb, w, h, 95, &jpg, &len, NULL), 0);
    write_all(path, jpg, len);
    dlg_jpeg_free(j);
}

void pu_make_images(pu_dataset *d, const char *tag, int n, int classes, int w, int h,
                    uint64_t seed)
{
    assert_true(n <= 64);
    memset(d, 0, sizeof *d);
    pu_tmpdir(d->dir, sizeof d->dir, tag);
    snprintf(d->list, sizeof d->list, "%s/list.txt", d->dir);
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    FILE *lf = fopen(d->list, "w");
    assert_non_null(lf);
    uint8_t *rgb = malloc((size_t)(w + 16) * (h + 16) * 3);
    /* a copy: GCC at -O1 (-Wrestrict) cannot tell d->dir from d->paths[i] */
    char dir[sizeof d->dir];
    memcpy(dir, d->dir, sizeof dir);
    for (int i = 0; i < n; i++) {
        int iw = w + (i * 7) % 13, ih = h + (i * 5) % 11;
        d->w[i] = iw;
        d->h[i] = ih;
        d->labels[i] = i % classes;
        dlg_synth_image_render(seed, (uint64_t)i, d->labels[i], iw, ih, rgb);
        const uint8_t *jpg;
        size_t len;
        assert_int_equal(dlg_jpeg_encode(j, rgb, iw, ih, 90, &jpg, &len, NULL), 0);
        snprintf(d->paths[i], sizeof d->paths[i], "%s/img%02d.jpg", dir, i);
        write_all(d->paths[i], jpg, len);
        fprintf(lf, "img%02d.jpg %d\n", i, d->labels[i]);
    }
    fclose(lf);
    free(rgb);
    dlg_jpeg_free(j);
    d->n = n;
}

void pu_make_rec(pu_dataset *d)
{
    char idx[600];
    snprintf(d->rec, sizeof d->rec, "%s/data.rec", d->dir);
    snprintf(idx, sizeof idx, "%s/data.idx", d->dir);
    FILE *rf = fopen(d->rec, "wb"), *xf = fopen(idx, "w");
    assert_non_null(rf);
    assert_non_null(xf);
    fclose(rf);
    int fd = open(d->rec, O_WRONLY);
    assert_true(fd >= 0);
    dlg_rec_writer *w;
    assert_int_equal(dlg_rec_writer_open_fd(&w, fd, d->rec, NULL), 0);
    for (int i = 0; i < d->n; i++) {
        size_t len;
        uint8_t *img = pu_slurp(d->paths[i], &len);
        size_t cap = dlg_im2rec_size(0, len);
        uint8_t *rec = malloc(cap);
        dlg_im2rec_header hd = {0, (float)d->labels[i], (uint64_t)i, 0};
        assert_int_equal(dlg_im2rec_pack(rec, cap, &hd, NULL, img, len, NULL), (int64_t)cap);
        uint64_t off;
        assert_int_equal(dlg_rec_write(w, rec, cap, &off, NULL), 0);
        fprintf(xf, "%d\t%llu\n", i, (unsigned long long)off);
        free(rec);
        free(img);
    }
    assert_int_equal(dlg_rec_writer_close(w, NULL), 0);
    close(fd);
    fclose(xf);
}

bool pu_add_storage(mock_host *m, const char *name)
{
    char so[64];
    snprintf(so, sizeof so, "%s.so", name);
    const dlg_plugin_desc *desc = mock_load_plugin(so, DLG_KIND_STORAGE, name);
    assert_non_null(desc);
    dlg_value *vals = calloc(64, sizeof *vals);
    assert_int_equal(mock_options(desc->options, vals, NULL), 0);
    const dlg_storage_ops *ops = desc->ops;
    void *inst = NULL;
    if (ops->create(&m->host, vals, &inst) < 0) {
        print_message("storage %s unavailable here: %s\n", name, m->last_error);
        free(vals);
        return false;
    }
    assert_int_equal(mock_add_storage(m, name, ops, inst), 0);
    m->storages[m->nstorages - 1].vals = vals; /* ours: freed in pu_storages_fini */
    return true;
}

void pu_storages_fini(mock_host *m)
{
    for (int i = m->nstorages - 1; i >= 0; i--) {
        mock_storage *s = &m->storages[i];
        if (!s->owned)
            s->ops->destroy(s->inst); /* vals are freed by mock_host_fini */
    }
    mock_host_fini(m);
}

void pu_center_window(int W, int H, int R, int crop, double *x, double *y, double *w, double *h)
{
    /* torchvision: the shorter side becomes R, the longer int(R * long / short) */
    int nw = W <= H ? R : (int)((long long)R * W / H);
    int nh = W <= H ? (int)((long long)R * H / W) : R;
    /* CenterCrop: int(round((n - crop) / 2.0)), Python rounds half to even */
    double top = (nh - crop) / 2.0, left = (nw - crop) / 2.0;
    double rt = floor(top), rl = floor(left);
    if (top - rt > 0.5 || (top - rt == 0.5 && fmod(rt, 2) != 0))
        rt += 1;
    if (left - rl > 0.5 || (left - rl == 0.5 && fmod(rl, 2) != 0))
        rl += 1;
    *x = rl * W / nw;
    *y = rt * H / nh;
    *w = (double)crop * W / nw;
    *h = (double)crop * H / nh;
}

/* PIL ImagingResample, BILINEAR: weights of input i for output j.  In
 * train torchvision crops first (PIL's crop makes a new image of the
 * window), so the resample sees only the window's pixels; in infer it
 * resizes the whole image, and only the image's edges bound the taps. */
static void ref_weights(bool train, double x0, double span, int n, int insize, int j, int *lo,
                        int *hi, double *wts)
{
    double scale = span / n, fs = scale < 1 ? 1 : scale;
    double center = x0 + (j + 0.5) * scale;
    int a = (int)floor(center - fs + 0.5), b = (int)floor(center + fs + 0.5);
    int amin = train ? (int)floor(x0) : 0, bmax = train ? (int)ceil(x0 + span) : insize;
    if (a < amin)
        a = amin;
    if (b > bmax)
        b = bmax;
    double total = 0;
    for (int i = a; i < b; i++) {
        double t = fabs((i - center + 0.5) / fs);
        wts[i - a] = t < 1 ? 1 - t : 0;
        total += wts[i - a];
    }
    for (int i = a; i < b; i++)
        wts[i - a] /= total;
    *lo = a;
    *hi = b;
}

void pu_reference(const dlg_loader_config *cfg, const uint8_t *jpeg, size_t len, double x, double y,
                  double w, double h, bool mirror, float *out)
{
    tjhandle tj = tjInitDecompress();
    int W, H, ss, cs;
    assert_int_equal(tjDecompressHeader3(tj, jpeg, (unsigned long)len, &W, &H, &ss, &cs), 0);
    uint8_t *rgb = malloc((size_t)W * H * 3);
    assert_int_equal(tjDecompress2(tj, jpeg, (unsigned long)len, rgb, W, W * 3, H, TJPF_RGB, 0), 0);
    tjDestroy(tj);
    int s = cfg->crop;
    double *horiz = malloc(sizeof(double) * (size_t)H * s * 3);
    double *wts = malloc(sizeof(double) * (size_t)(W + H + 8));
    for (int r = 0; r < H; r++) /* rows first */
        for (int j = 0; j < s; j++) {
            int lo, hi;
            ref_weights(cfg->train, x, w, s, W, j, &lo, &hi, wts);
            for (int c = 0; c < 3; c++) {
                double acc = 0;
                for (int i = lo; i < hi; i++)
                    acc += wts[i - lo] * rgb[((size_t)r * W + i) * 3 + c];
                horiz[((size_t)r * s + j) * 3 + c] = acc;
            }
        }
    for (int j = 0; j < s; j++) { /* then columns */
        int lo, hi;
        ref_weights(cfg->train, y, h, s, H, j, &lo, &hi, wts);
        for (int xo = 0; xo < s; xo++)
            for (int c = 0; c < 3; c++) { /* c: output channel, in cfg->order */
                int from = cfg->order == DLG_BGR ? 2 - c : c;
                double acc = 0;
                for (int i = lo; i < hi; i++)
                    acc += wts[i - lo] * horiz[((size_t)i * s + xo) * 3 + from];
                int dst_x = mirror ? s - 1 - xo : xo;
                out[((size_t)c * s + j) * s + dst_x] =
                    (float)((acc * cfg->pixel_range / 255.0 - cfg->mean[c]) / cfg->std[c]);
            }
    }
    free(wts);
    free(horiz);
    free(rgb);
}

float pu_at(const dlg_loader_config *cfg, const void *data, int i, int c, int y, int x)
{
    size_t s = (size_t)cfg->crop, img = 3 * s * s;
    size_t at = cfg->layout == DLG_LAYOUT_NCHW ? img * i + ((size_t)c * s + y) * s + x
                                               : img * i + ((size_t)y * s + x) * 3 + c;
    if (cfg->dtype == DLG_LOADER_FP32)
        return ((const float *)data)[at];
    uint16_t hbits = ((const uint16_t *)data)[at];
    int e = hbits >> 10 & 31, m = hbits & 1023;
    double v = e == 0 ? ldexp(m, -24) : ldexp(m + 1024, e - 25);
    return (float)(hbits & 0x8000 ? -v : v);
}

static const dlg_option loader_table[] = {{"batch", DLG_OPT_INT, "1", "1", NULL, NULL, "b", 0},
                                          DLG_LOADER_OPTIONS,
                                          {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}};

int pu_loader_config(mock_host *m, const char *const *over, bool train, dlg_loader_config *cfg)
{
    dlg_value v[64];
    if (mock_options(loader_table, v, over) != 0)
        fail_msg("options refused (unknown key?): %s", m->last_error);
    dlg_loader_config_defaults(cfg);
    int rc = dlg_loader_config_from_opts(cfg, v + 1, NULL, train, &m->host);
    cfg->batch = 1;
    return rc;
}

dlg_loader *pu_loader_open(mock_host *m, const char *const *over, bool train,
                           dlg_loader_config *cfg)
{
    if (pu_loader_config(m, over, train, cfg) != 0)
        fail_msg("config: %s", m->last_error);
    dlg_loader *l;
    if (dlg_loader_open(&l, cfg, &m->host) != 0)
        fail_msg("open: %s", m->last_error);
    return l;
}
