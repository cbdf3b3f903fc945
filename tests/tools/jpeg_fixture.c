#define _GNU_SOURCE
#include "jpeg_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <dlgauge/splitmix.h>

int fx_jpeg(int w, int h, uint64_t seed, uint8_t **out, size_t *len)
{
    uint8_t *rgb = malloc((size_t)w * h * 3);
    tjhandle tj = tjInitCompress();
    if (!rgb || !tj) {
        free(rgb);
        if (tj)
            tjDestroy(tj);
        return -1;
    }
    uint64_t s = seed;
    int a = (int)(dlg_splitmix_next(&s) % 200), b = (int)(dlg_splitmix_next(&s) % 200);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = rgb + ((size_t)y * w + x) * 3;
            p[0] = (uint8_t)(a + x * 50 / w);
            p[1] = (uint8_t)(b + y * 50 / h);
            p[2] = (uint8_t)(dlg_splitmix_next(&s) & 63);
        }
    unsigned char *jbuf = NULL;
    unsigned long jlen = 0;
    int rc = tjCompress2(tj, rgb, w, 0, h, TJPF_RGB, &jbuf, &jlen, TJSAMP_420, 90, 0);
    free(rgb);
    tjDestroy(tj);
    if (rc != 0)
        return -1;
    *out = malloc(jlen);
    if (*out)
        memcpy(*out, jbuf, jlen);
    tjFree(jbuf);
    *len = jlen;
    return *out ? 0 : -1;
}

int fx_write(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(data, 1, len, f);
    return fclose(f) == 0 && n == len ? 0 : -1;
}

uint8_t *fx_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

int fx_make_images(const char *root, int classes, int per_class, uint64_t seed)
{
    char path[1024];
    mkdir(root, 0755);
    uint64_t s = seed;
    for (int c = 0; c < classes; c++) {
        snprintf(path, sizeof path, "%s/c%d", root, c);
        mkdir(path, 0755);
        for (int i = 0; i < per_class; i++) {
            int w = 40 + (int)(dlg_splitmix_next(&s) % 80), h = 40 + (int)(dlg_splitmix_next(&s) % 80);
            uint8_t *j = NULL;
            size_t n = 0;
            if (fx_jpeg(w, h, dlg_splitmix_next(&s), &j, &n) != 0)
                return -1;
            snprintf(path, sizeof path, "%s/c%d/img_%d.jpg", root, c, i);
            int rc = fx_write(path, j, n);
            free(j);
            if (rc != 0)
                return -1;
        }
    }
    return 0;
}
