/* Benchmark driver for scripts/bench/ (not a test):
 *   pipe_bench decode LIST REPS   per-core JPEG decode rate, full and 1/2
 *   pipe_bench loader SPEC THREADS BATCHES BATCH CROP [auto|full]
 *                                 loader images/s (train augmentation;
 *                                 full: jpeg_scale = full, no DCT scaling)
 *   pipe_bench aug SPEC ITEMS [key=value...]
 *                                 one worker's decode + augment time per
 *                                 image, the options as a job gives them
 *                                 (transform = torchvision|caffe|mxnet...)
 * Prints one "key value" per line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jpeg.h"
#include "listfile.h"
#include "pipe_util.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int bench_decode(const char *list, int reps)
{
    dlg_source src;
    dlg_filelist fl;
    if (dlg_source_open_path(&src, list, NULL) < 0 || dlg_filelist_load(&fl, &src, NULL) < 0)
        return fprintf(stderr, "cannot read %s\n", list), 1;
    dlg_source_close_fd(&src);
    char root[512], path[1024];
    snprintf(root, sizeof root, "%s", list);
    *strrchr(root, '/') = 0;
    size_t n = fl.n, *len = calloc(n, sizeof *len);
    uint8_t **img = calloc(n, sizeof *img), *rgb = malloc(4096 * 4096 * 3);
    double pixels = 0;
    dlg_jpeg *j;
    dlg_jpeg_new(&j, NULL);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", root, fl.entries[i].path);
        img[i] = pu_slurp(path, &len[i]);
        dlg_jpeg_info info;
        dlg_jpeg_header(j, img[i], len[i], path, &info, NULL);
        pixels += (double)info.width * info.height;
    }
    const dlg_jpeg_scale scales[2] = {{1, 1}, {1, 2}};
    for (int s = 0; s < 2; s++) {
        int w, h;
        for (size_t i = 0; i < n; i++) /* warm-up */
            dlg_jpeg_decode(j, img[i], len[i], "x", scales[s], rgb, 4096 * 4096 * 3, &w, &h, NULL);
        double t0 = now();
        for (int r = 0; r < reps; r++)
            for (size_t i = 0; i < n; i++)
                if (dlg_jpeg_decode(j, img[i], len[i], "x", scales[s], rgb, 4096 * 4096 * 3, &w, &h, NULL) < 0)
                    return fprintf(stderr, "decode failed\n"), 1;
        double dt = now() - t0;
        printf("%s_images_per_s %.1f\n%s_mpix_per_s %.2f\n", s ? "half" : "full", n * reps / dt,
               s ? "half" : "full", pixels * reps / dt / 1e6);
    }
    dlg_jpeg_free(j);
    for (size_t i = 0; i < n; i++)
        free(img[i]);
    free(img);
    free(len);
    free(rgb);
    dlg_filelist_free(&fl);
    return 0;
}

static int bench_loader(const char *spec, int threads, int batches, int batch, int crop, bool full)
{
    mock_host m;
    mock_host_init(&m);
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    cfg.data = spec;
    cfg.threads = threads;
    cfg.batch = batch;
    cfg.crop = crop;
    cfg.prefetch = 4;
    cfg.jpeg_full = full;
    dlg_loader *l;
    if (dlg_loader_open(&l, &cfg, &m.host) < 0)
        return fprintf(stderr, "%s\n", m.last_error), 1;
    dlg_batch *b;
    for (int i = 0; i < 2; i++) { /* warm-up: buffers grow to size */
        if (dlg_loader_next(l, &b) < 0)
            return fprintf(stderr, "%s\n", m.last_error), 1;
        dlg_loader_release(l, b);
    }
    double t0 = now();
    for (int i = 0; i < batches; i++) {
        if (dlg_loader_next(l, &b) < 0)
            return fprintf(stderr, "%s\n", m.last_error), 1;
        dlg_loader_release(l, b);
    }
    double dt = now() - t0;
    printf("images_per_s %.1f\n", (double)batches * batch / dt);
    dlg_loader_close(l);
    mock_host_fini(&m);
    return 0;
}

static const dlg_option aug_table[] = {DLG_LOADER_OPTIONS,
                                       {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}};

/* Batches of 16 from one worker thread; the loader's own decode_ns (decode,
 * augment, normalise: not the reads) per image, after a warm-up batch. */
static int bench_aug(const char *spec, int items, int nover, char **over)
{
    mock_host m;
    mock_host_init(&m);
    char data[1024];
    snprintf(data, sizeof data, "data=%s", spec);
    const char *ov[64] = {data, "threads=1"};
    for (int i = 0; i < nover && i < 60; i++)
        ov[i + 2] = over[i];
    dlg_value v[DLG_LOPT_COUNT];
    dlg_loader_config cfg;
    dlg_loader_config_defaults(&cfg);
    if (mock_options(aug_table, v, ov) != 0 ||
        dlg_loader_config_from_opts(&cfg, v, NULL, true, &m.host) != 0)
        return fprintf(stderr, "options: %s\n", m.last_error), 1;
    cfg.batch = 16;
    dlg_loader *l;
    if (dlg_loader_open(&l, &cfg, &m.host) < 0)
        return fprintf(stderr, "%s\n", m.last_error), 1;
    dlg_batch *b;
    uint64_t ns = 0;
    int n = 0;
    for (int k = 0; n < items; k++) {
        if (dlg_loader_next(l, &b) < 0) {
            fprintf(stderr, "%s\n", m.last_error);
            dlg_loader_close(l);
            mock_host_fini(&m);
            return 1;
        }
        if (k > 0) {
            ns += b->decode_ns;
            n += b->n;
        }
        dlg_loader_release(l, b);
    }
    printf("us_per_image %.1f\nimages %d\n", ns / 1e3 / n, n);
    dlg_loader_close(l);
    mock_host_fini(&m);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "aug"))
        return bench_aug(argv[2], atoi(argv[3]), argc - 4, argv + 4);
    if (argc == 4 && !strcmp(argv[1], "decode"))
        return bench_decode(argv[2], atoi(argv[3]));
    if ((argc == 7 || (argc == 8 && (!strcmp(argv[7], "auto") || !strcmp(argv[7], "full")))) &&
        !strcmp(argv[1], "loader"))
        return bench_loader(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]),
                            argc == 8 && !strcmp(argv[7], "full"));
    fprintf(stderr, "usage: pipe_bench decode LIST REPS | loader SPEC THREADS BATCHES BATCH CROP [auto|full] | "
                    "aug SPEC ITEMS [key=value...]\n");
    return 2;
}
