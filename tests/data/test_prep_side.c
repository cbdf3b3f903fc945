/* preprocess's resize of a thin image: a side past the 65500 pixels a JPEG
 * can hold is one error naming the file, before any resample. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "jpeg.h"
#include "prep.h"

static void test_long_side(void **st)
{
    (void)st;
    enum { W = 2, H = 40000 }; /* resize 4: 4 x 80000 */
    uint8_t *rgb = malloc((size_t)W * H * 3);
    for (size_t i = 0; i < (size_t)W * H * 3; i++)
        rgb[i] = (uint8_t)i;
    dlg_jpeg *j;
    assert_int_equal(dlg_jpeg_new(&j, NULL), 0);
    const uint8_t *jpg;
    size_t len;
    assert_int_equal(dlg_jpeg_encode(j, rgb, W, H, 90, &jpg, &len, NULL), 0);

    prep_params p = {.resize = 4, .quality = 90};
    prep_worker *w;
    assert_int_equal(prep_worker_new(&w, &p, NULL), 0);
    prep_item it = {.rel = "c/thin.jpg", .path = "/data/c/thin.jpg"};
    const uint8_t *out;
    size_t out_len;
    dlg_data_err err = {0};
    assert_int_equal(prep_worker_run(w, &it, jpg, len, &out, &out_len, &err), -DLG_EINVAL);
    assert_string_equal(err.msg, "/data/c/thin.jpg: resizing 2x40000 to 4x80000: a JPEG side is at "
                                 "most 65500 pixels (a smaller resize, or width and height, would fit)");
    /* a resize that fits still works */
    p.resize = 2;
    prep_worker_free(w);
    assert_int_equal(prep_worker_new(&w, &p, NULL), 0);
    assert_int_equal(prep_worker_run(w, &it, jpg, len, &out, &out_len, &err), 0);
    dlg_jpeg_info info;
    assert_int_equal(dlg_jpeg_header(j, out, out_len, "out", &info, NULL), 0);
    assert_int_equal(info.width, 2);
    assert_int_equal(info.height, 40000);
    prep_worker_free(w);
    dlg_jpeg_free(j);
    free(rgb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_long_side)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
