/* Fuzzes the TurboJPEG wrapper (core/data/jpeg.c): the header check, the
 * EOI scan that decides whether a libjpeg warning is tolerated, and the
 * decode into an exactly sized buffer at the DCT scale the input picks. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "jpeg.h"

/* Decoding a huge (but legal) image only measures libjpeg's speed. */
#define FUZZ_MAX_DECODE_PIXELS (1u << 22)

static void decode(dlg_jpeg *j, const uint8_t *data, size_t size, const dlg_jpeg_info *info)
{
    static const dlg_jpeg_scale scales[] = {{1, 1}, {1, 2}, {1, 4}, {1, 8}, {3, 8}, {7, 8}};
    dlg_jpeg_scale s = scales[data[size - 1] % (sizeof scales / sizeof *scales)];
    int sw = dlg_jpeg_scaled(info->width, s), sh = dlg_jpeg_scaled(info->height, s);
    FUZZ_CHECK(sw >= 1 && sh >= 1 && sw <= info->width && sh <= info->height);
    if ((uint64_t)sw * (uint64_t)sh > FUZZ_MAX_DECODE_PIXELS)
        return;
    size_t cap = (size_t)sw * (size_t)sh * 3;
    uint8_t *rgb = malloc(cap);
    if (!rgb)
        return;
    dlg_data_err err;
    int w = 0, h = 0;
    if (dlg_jpeg_decode(j, data, size, "fuzz.jpg", s, rgb, cap, &w, &h, &err) == 0)
        FUZZ_CHECK(w == sw && h == sh);
    else
        FUZZ_CHECK(strncmp(err.msg, "fuzz.jpg: ", 10) == 0);
    /* one byte short must be refused, never written past */
    if (dlg_jpeg_decode(j, data, size, "fuzz.jpg", s, rgb, cap - 1, &w, &h, &err) == 0)
        FUZZ_CHECK(0);
    free(rgb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dlg_jpeg *j;
    dlg_data_err err;
    if (dlg_jpeg_new(&j, &err) != 0)
        return 0;
    (void)dlg_jpeg_has_eoi(data, size);
    dlg_jpeg_info info;
    if (dlg_jpeg_header(j, data, size, "fuzz.jpg", &info, &err) == 0) {
        FUZZ_CHECK(info.width > 0 && info.height > 0 &&
                   (uint64_t)info.width * (uint64_t)info.height <= DLG_JPEG_MAX_PIXELS);
        decode(j, data, size, &info);
    } else {
        FUZZ_CHECK(strncmp(err.msg, "fuzz.jpg: ", 10) == 0);
    }
    dlg_jpeg_free(j);
    return 0;
}
