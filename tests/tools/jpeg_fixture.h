/* Test images: small photo-like JPEGs in class folders, made with
 * libjpeg-turbo directly (independent of the code under test). */
#ifndef DLG_TEST_JPEG_FIXTURE_H
#define DLG_TEST_JPEG_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

/* Writes root/<class c>/img_<i>.jpg for c < classes (named "c0", "c1"...),
 * i < per_class, sizes 40..119 px per side from seed.  Returns 0 or -1. */
int fx_make_images(const char *root, int classes, int per_class, uint64_t seed);

/* Encodes one w x h image (content from seed) into a malloc'd JPEG. */
int fx_jpeg(int w, int h, uint64_t seed, uint8_t **out, size_t *len);

/* Reads a whole file (malloc'd); NULL on error. */
uint8_t *fx_slurp(const char *path, size_t *len);
int fx_write(const char *path, const void *data, size_t len);

#endif
