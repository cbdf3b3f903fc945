#!/usr/bin/env python3
"""OpenCV's side of augment-vs-opencv.sh: the OpenCV stages of MXNet's
default augmenter on the image aug_bench wrote, one thread, timed REPS times
each (medians), and dlgauge's outputs compared with OpenCV's byte for byte.

  augment_peer.py OUTDIR REPS    prints "key value" lines
  augment_peer.py --about        OpenCV's version and the ISA it runs with
"""
import re
import sys
import time

import cv2
import numpy as np

# cv::checkHardwareSupport ids (opencv2/core/cvdef.h); cv2 exports no names
CPU_IDS = {"sse4_1": 6, "avx": 10, "avx2": 11, "fma3": 12, "avx512_skx": 256}


def about():
    info = cv2.getBuildInformation()
    base = re.search(r"Baseline:\s*(.*)", info)
    disp = re.search(r"Dispatched code generation:\s*(.*)", info)
    have = [k for k, v in CPU_IDS.items() if cv2.checkHardwareSupport(v)]
    print(f"opencv {cv2.__version__}: baseline {base.group(1).strip() if base else '?'}, "
          f"dispatched {disp.group(1).strip() if disp else '?'}; this CPU: {' '.join(have) or 'none'}; "
          f"threads {cv2.getNumThreads()}")


def read_ppm(path):
    data = open(path, "rb").read()
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", data)
    w, h = int(m.group(1)), int(m.group(2))
    return np.frombuffer(data, np.uint8, w * h * 3, m.end()).reshape(h, w, 3)


def median_us(fn, reps, setup=None):
    """Median time of fn over REPS calls after a warm-up; setup (untimed)
    runs before each call."""
    ts = []
    for r in range(-1, reps):  # r = -1: warm-up (buffers, dispatch)
        if setup:
            setup()
        t0 = time.perf_counter()
        fn()
        if r >= 0:
            ts.append(time.perf_counter() - t0)
    return float(np.median(ts)) * 1e6


def diff(a, b):
    d = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return int(d.max()), int((d > 0).sum())


def colour(crop, spec, reps):
    """MXNet's colour jitter (image_aug_default.cc) on its BGR bytes: the
    OpenCV calls MXNet makes, in the order aug_bench used.  cv2 has no
    Mat::convertTo; contrast's convertTo(a, beta) is done as addWeighted(img,
    a, img, 0, beta), the same multiply-add per byte (v * a + (v * 0 + beta)),
    and brightness's (beta 0, a > 0) as convertScaleAbs.  MXNet jitters its
    image in place: each run starts from a fresh copy of the crop, made
    outside the timed call, as aug_bench does.  Returns the time and the
    result as RGB."""
    a = [np.float32(v) for v in spec[:3]]
    order = [int(v) for v in spec[3:6]]
    bgr = np.ascontiguousarray(crop[..., ::-1])
    res = bgr.copy()
    grey = np.empty(bgr.shape[:2], np.uint8)
    grey3 = np.empty_like(bgr)

    def fresh():
        np.copyto(res, bgr)

    def run():
        for k in order:
            if k == 0:
                cv2.convertScaleAbs(res, dst=res, alpha=float(a[0]), beta=0.0)
            elif k == 1:
                cv2.cvtColor(res, cv2.COLOR_RGB2GRAY, dst=grey)  # MXNet's RGB2GRAY on BGR
                beta = np.float32((np.float32(1) - a[1]) * np.float32(cv2.mean(grey)[0]))
                cv2.addWeighted(res, float(a[1]), res, 0.0, float(beta), dst=res)
            else:
                cv2.cvtColor(res, cv2.COLOR_RGB2GRAY, dst=grey)
                cv2.cvtColor(grey, cv2.COLOR_GRAY2BGR, dst=grey3)
                cv2.addWeighted(res, float(a[2]), grey3, float(np.float32(1) - a[2]), 0.0, dst=res)
    t = median_us(run, reps, fresh)
    fresh()
    run()
    return t, res[..., ::-1]


def interp(out, img, m, nw, nh, fill, reps):
    """inter_method 0..4: cv2.resize of full.ppm to in.ppm's size and
    cv2.warpAffine of in.ppm, each method timed and compared with
    dlgauge's resize_M.ppm and warp_M.ppm."""
    full = read_ppm(f"{out}/full.ppm")
    rs = np.empty_like(img)
    wp = np.empty((nh, nw, 3), np.uint8)
    for k in range(5):
        resize = lambda: cv2.resize(full, (img.shape[1], img.shape[0]), dst=rs, interpolation=k)
        warp = lambda: cv2.warpAffine(img, m, (nw, nh), dst=wp, flags=k,
                                      borderMode=cv2.BORDER_CONSTANT, borderValue=(fill,) * 3)
        print(f"resize_us_{k} {median_us(resize, reps):.1f}")
        print(f"warp_us_{k} {median_us(warp, reps):.1f}")
        print("resize_%d_diff %d %d" % ((k,) + diff(rs, read_ppm(f"{out}/resize_{k}.ppm"))))
        print("warp_%d_diff %d %d" % ((k,) + diff(wp, read_ppm(f"{out}/warp_{k}.ppm"))))


def half(out, img, reps):
    """INTER_AREA's exact 2 x 2 shrink: cv2.resize of half_src.ppm (twice
    in.ppm's size) to in.ppm's size, timed and compared with half.ppm."""
    src = read_ppm(f"{out}/half_src.ppm")
    dst = np.empty_like(img)
    shrink = lambda: cv2.resize(src, (img.shape[1], img.shape[0]), dst=dst,
                                interpolation=cv2.INTER_AREA)
    print(f"half_us {median_us(shrink, reps):.1f}")
    print("half_diff %d %d" % diff(dst, read_ppm(f"{out}/half.ppm")))


def main():
    cv2.setNumThreads(1)
    if sys.argv[1:] == ["--about"]:
        return about()
    out, reps = sys.argv[1], int(sys.argv[2])
    p = {l.split()[0]: l.split()[1:] for l in open(f"{out}/params.txt")}
    img = read_ppm(f"{out}/in.ppm")
    nw, nh = map(int, p["out"])
    fill = int(p["fill"][0])
    m = np.array([float(v) for v in p["matrix"]], np.float32).reshape(2, 3)  # MXNet's CV_32F
    warped = np.empty((nh, nw, 3), np.uint8)
    warp = lambda: cv2.warpAffine(img, m, (nw, nh), dst=warped, flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_CONSTANT, borderValue=(fill, fill, fill))
    print(f"warp_us {median_us(warp, reps):.1f}")
    cx, cy, c = map(int, p["crop"])
    crop = np.ascontiguousarray(img[cy:cy + c, cx:cx + c])
    hls, back = np.empty_like(crop), np.empty_like(crop)
    to_hls = lambda: cv2.cvtColor(crop, cv2.COLOR_RGB2HLS, dst=hls)
    to_rgb = lambda: cv2.cvtColor(hls, cv2.COLOR_HLS2RGB, dst=back)
    print(f"hls_us {median_us(to_hls, reps) + median_us(to_rgb, reps):.1f}")
    # MXNet's shift and clamp (a scalar loop over the bytes in MXNet; here a
    # lookup table): timed apart, not in hls_us
    shift = [int(v) for v in p["shift"]]
    lut = np.empty((256, 1, 3), np.uint8)
    for k, lim in enumerate((180, 255, 255)):
        lut[:, 0, k] = np.clip(np.arange(256) + shift[k], 0, lim)
    cv2.cvtColor(crop, cv2.COLOR_RGB2HLS, dst=hls)
    shifted = np.empty_like(hls)
    print(f"shift_us {median_us(lambda: cv2.LUT(hls, lut, dst=shifted), reps):.1f}")
    cv2.cvtColor(shifted, cv2.COLOR_HLS2RGB, dst=back)
    warp()
    color_us, color_out = colour(crop, p["color"], reps)
    print(f"color_us {color_us:.1f}")
    print("warp_diff %d %d" % diff(warped, read_ppm(f"{out}/warp.ppm")))
    print("color_diff %d %d" % diff(color_out, read_ppm(f"{out}/color.ppm")))
    print("hls_diff %d %d" % diff(back, read_ppm(f"{out}/hls.ppm")))
    interp(out, img, m, nw, nh, fill, reps)
    half(out, img, reps)


if __name__ == "__main__":
    main()
