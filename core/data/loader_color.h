/* MXNet's colour jitter (brightness, contrast, saturation) and PCA
 * lighting noise (pca_noise), as its default augmenter applies them after
 * the crop (src/io/image_aug_default.cc, MXNet 1.3 and later 1.x).  MXNet
 * holds the image as OpenCV's BGR bytes; these functions take dlgauge's
 * RGB bytes and give the bytes MXNet's would after its swap to RGB.
 *
 * The jitter's three steps are OpenCV calls on 8-bit images, and each
 * result is whole bytes again (round half to even, clamped to 0..255):
 *   brightness  convertTo(alpha = a):            v * a
 *   contrast    convertTo(alpha = a, beta = (1 - a) * m), m the mean of
 *               the image's grey (cv::mean, in double, then float)
 *   saturation  addWeighted(img, a, grey, 1 - a): v * a + grey * (1 - a)
 * in float.  The grey is cvtColor(RGB2GRAY) on MXNet's BGR bytes -- its
 * 0.299 weight lands on blue, 0.114 on red -- in OpenCV 4's 8-bit fixed
 * point: (9798 B + 19235 G + 3735 R + 2^14) >> 15.  OpenCV computes the
 * multiply-adds fused on CPUs with AVX2 and FMA (its dispatched v_fma /
 * v_muladd) and unfused on its SSE2 baseline, so the loops are built both
 * ways and the CPU picks, as in loader_hls.c. */
#ifndef DLG_LOADER_COLOR_H
#define DLG_LOADER_COLOR_H

#include <stdint.h>

#include "loader_affine.h"

/* The jitter steps, in place on img: 0 brightness, 1 contrast, 2
 * saturation, each with its factor alpha[step] (1 + U(-v, v) in MXNet;
 * exactly 1 leaves the bytes as they are), in the given order. */
enum { DLG_MX_BRIGHTNESS = 0, DLG_MX_CONTRAST = 1, DLG_MX_SATURATION = 2 };
void dlg_mx_color_jitter(const dlg_rgb8 *img, const float alpha[3], const int order[3]);

/* The grey MXNet's contrast and saturation see for an RGB pixel. */
int dlg_mx_gray(const uint8_t rgb[3]);

/* The i-th of the 6 orders of the three steps (i in 0..5). */
void dlg_mx_color_order(int i, int order[3]);

/* pca_noise: the per-channel offsets (R, G, B) for the normals a[3]
 * (a_r, a_g, a_b: N(0, pca_noise) draws): off_c = sum_i a_i l_i e_ci with
 * AlexNet's ImageNet eigenvalues l and eigenvectors e, in float. */
void dlg_mx_pca_offsets(const float a[3], float off[3]);

/* Adds off to n RGB pixels of floats holding whole bytes, as MXNet's byte
 * loop does: (int)(v + off_c) (truncated toward 0), clamped to 0..255. */
void dlg_mx_pca_apply(float *rgb, int n, const float off[3]);

/* What the jitter's loops run with (for benchmarks). */
const char *dlg_mx_color_isa(void);

#endif
